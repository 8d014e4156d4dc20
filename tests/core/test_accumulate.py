"""The accumulator (cophe_core.scale.accumulate): batches and merges equal the one-shot evaluation of all rows,
scores decided as the functional API decides them, bounded state, pickling, and every refusal."""

from __future__ import annotations

import pickle
import re

import numpy as np
import pandas as pd
import pytest
import scipy.sparse as sp
from hypothesis import given, settings
from hypothesis import strategies as st

from cophe_core import InputError
from cophe_core.metrics import (
    evaluate,
    precision_recall_fscore_hierarchical,
    precision_recall_fscore_hierarchical_from_scores,
)
from cophe_core.ontology import icd9_ontology
from cophe_core.scale.accumulate import Accumulator
from cophe_core.scoring.labels import resolve_codes
from tests.conftest import examples

# busy families with several codes each, a procedure, a code that is not billable (428) and one unlisted
# but well-formed (401.7), which extends the ontology
LABELS = ["401.9", "401.1", "401.0", "428.0", "428.1", "428", "250.00", "250.01", "38.93", "V45.81", "401.7"]
NODE_FIELDS = ["gold", "predicted", "tp", "fp", "fn", "set_tp", "set_fp", "set_fn", "flat_tp", "flat_fp",
               "flat_fn", "docs_over", "docs_under", "shared_gold", "shared_predicted"]  # fmt: skip


def one_shot(y_true, y_pred, max_level: str | None = None):
    """The functional API's evaluation of all rows at once, the labels placed independently of the
    accumulator: a labels × nodes matrix from resolve_codes."""
    r = resolve_codes(LABELS, icd9_ontology())
    columns = sp.csr_matrix(
        (np.ones(len(LABELS)), (np.arange(len(LABELS)), r.nodes)), shape=(len(LABELS), r.ontology.n_nodes)
    )
    g, p = sp.csr_matrix(np.asarray(y_true, float)), sp.csr_matrix(np.asarray(y_pred, float))
    return evaluate(g @ columns, p @ columns, r.ontology, max_level=max_level)


def assert_same(acc_ev, ev, documents: bool = False) -> None:
    """Every figure the two share: the JSON, the node and macro tables, every per-node count."""
    assert acc_ev.to_dict() == ev.to_dict()
    pd.testing.assert_frame_equal(acc_ev.nodes, ev.nodes)
    pd.testing.assert_frame_equal(acc_ev.macro_table, ev.macro_table)
    for f in NODE_FIELDS:
        assert np.array_equal(getattr(acc_ev.node_counts, f), getattr(ev.node_counts, f)), f
    if documents:
        pd.testing.assert_frame_equal(acc_ev.documents, ev.documents)


def matrices(draw, n_docs: int, density: float) -> np.ndarray:
    seed = draw(st.integers(0, 2**32 - 1))
    return (np.random.default_rng(seed).random((n_docs, len(LABELS))) < density).astype(np.int64)


@st.composite
def batched(draw):
    """Gold and predicted 0/1 rows, cut into batches, each batch given to one of several workers, and the
    order the workers are merged in."""
    n = draw(st.integers(1, 40))
    density = draw(st.sampled_from([0.05, 0.2, 0.5]))
    y_true, y_pred = matrices(draw, n, density), matrices(draw, n, density)
    cuts = sorted(draw(st.lists(st.integers(1, max(n - 1, 1)), max_size=8, unique=True))) if n > 1 else []
    bounds = [0, *cuts, n]
    batches = list(zip(bounds[:-1], bounds[1:]))
    n_workers = draw(st.integers(1, 4))
    owner = draw(st.lists(st.integers(0, n_workers - 1), min_size=len(batches), max_size=len(batches)))
    order = draw(st.permutations(range(n_workers)))
    form = draw(st.sampled_from(["dense", "sparse", "bool", "list"]))
    chunk = draw(st.sampled_from([1, 3, 4096]))
    return y_true, y_pred, batches, owner, order, form, chunk


def as_form(a: np.ndarray, form: str):
    return {"dense": a, "sparse": sp.csr_matrix(a), "bool": a.astype(bool), "list": a.tolist()}[form]


@settings(max_examples=examples(50), deadline=None)
@given(case=batched())
def test_any_split_merged_in_any_order_equals_one_shot(case):
    y_true, y_pred, batches, owner, order, form, chunk = case
    workers = [Accumulator(LABELS, "icd9", keep_documents=True, chunk_rows=chunk) for _ in order]
    for (lo, hi), w in zip(batches, owner):
        workers[w].update(as_form(y_true[lo:hi], form), as_form(y_pred[lo:hi], form))
    total = workers[order[0]]
    for w in order[1:]:
        total.merge(workers[w])
    # the rows in the order the merged accumulator holds them: worker by worker, each its batches in turn
    rows = np.concatenate(
        [np.arange(lo, hi) for w in order for (lo, hi), o in zip(batches, owner) if o == w] or [[]]
    ).astype(int)
    ev = one_shot(y_true[rows], y_pred[rows])
    assert_same(total.compute(), ev, documents=True)
    # and the functional API's own numbers, micro by level
    got = total.compute()
    for measure in ("cophe", "set_based"):
        for level in ("e1", "e0", "overall"):
            s = got.score(measure, level)
            expected = precision_recall_fscore_hierarchical(
                y_true, y_pred, labels=LABELS, ontology="icd9", measure=measure, level=level
            )
            assert (s.precision, s.recall, s.f1) == pytest.approx(expected, abs=0, rel=1e-15)


def test_public_name():
    import cophe_core

    assert cophe_core.Accumulator is Accumulator and "Accumulator" in cophe_core.__all__


def test_hand_worked_batches():
    """Document 1: gold 401.9 and 428.0, predicted 401.1 and 428.0; document 2: gold 428.0, nothing
    predicted; one batch each. At e0: 401 TP 1, 428 TP 1 and FN 1, so P = 1, R = 2/3, F1 = 0.8; at e1
    (the codes): TP 1 (428.0), FP 1 (401.1), FN 2 (401.9, the second 428.0)."""
    acc = Accumulator(LABELS, "icd9")
    row = dict(zip(LABELS, range(len(LABELS))))
    a, b = np.zeros((1, len(LABELS))), np.zeros((1, len(LABELS)))
    a[0, [row["401.9"], row["428.0"]]] = 1
    b[0, [row["401.1"], row["428.0"]]] = 1
    acc.update(a, b)
    c = np.zeros((1, len(LABELS)))
    c[0, row["428.0"]] = 1
    acc.update(c, np.zeros_like(c))
    ev = acc.compute()
    assert (ev.score("cophe", "e0").tp, ev.score("cophe", "e0").fn) == (2, 1)
    assert ev.score("cophe", "e0").f1 == pytest.approx(0.8)
    assert (ev.score("cophe", "e1").tp, ev.score("cophe", "e1").fp, ev.score("cophe", "e1").fn) == (1, 1, 2)
    assert len(ev.docs) == 2


@settings(max_examples=examples(30), deadline=None)
@given(
    seed=st.integers(0, 2**32 - 1),
    n=st.integers(1, 25),
    rule=st.sampled_from([("threshold", 0.5), ("threshold", 0.3), ("top_k", 1), ("top_k", 3)]),
    size=st.integers(1, 7),
    dense=st.booleans(),
)
def test_scores_decided_as_the_functional_api(seed, n, rule, size, dense):
    rng = np.random.default_rng(seed)
    y_true = (rng.random((n, len(LABELS))) < 0.2).astype(int)
    y_score = np.round(rng.random((n, len(LABELS))), 1)  # rounded: ties, which top-k breaks by the code
    y_score[rng.random(y_score.shape) < 0.3] = 0
    acc = Accumulator(LABELS, "icd9", **{rule[0]: rule[1]})
    for lo in range(0, n, size):
        batch = y_score[lo : lo + size]  # dense scores take their own path under a threshold
        acc.update(y_true[lo : lo + size], batch if dense else sp.csr_matrix(batch))
    got = acc.compute()
    for level in ("e1", "e0", "overall"):
        s = got.score("cophe", level)
        expected = precision_recall_fscore_hierarchical_from_scores(
            y_true, y_score, labels=LABELS, ontology="icd9", level=level, **{rule[0]: rule[1]}
        )
        assert (s.precision, s.recall, s.f1) == pytest.approx(expected, abs=0, rel=1e-15)


def test_state_does_not_grow_with_batches():
    rng = np.random.default_rng(0)
    acc = Accumulator(LABELS, "icd9", chunk_rows=64)
    sizes = []
    for i in range(400):
        y = (rng.random((8, len(LABELS))) < 0.3).astype(int)
        acc.update(y, y)
        if i in (20, 399):
            sizes.append(len(pickle.dumps(acc)))
        assert acc._buffered < 64  # at most one chunk of rows waits
    assert sizes[1] <= sizes[0] * 1.01  # the counts, not the rows: 3,200 documents weigh what 168 did
    assert acc.compute().to_dict()["documents"] == 3200


def test_pickles_with_its_rows_counted_and_reset_forgets():
    rng = np.random.default_rng(1)
    y_true, y_pred = (rng.random((2, 30, len(LABELS))) < 0.3).astype(int)
    acc = Accumulator(LABELS, "icd9", keep_documents=True)
    acc.update(y_true, y_pred)
    back = pickle.loads(pickle.dumps(acc))
    assert not back._buffer  # the rows were counted before pickling: counts travel, not rows
    assert_same(back.compute(), one_shot(y_true, y_pred), documents=True)
    back.reset()
    assert back.compute().score("cophe").tp == 0 and back.compute().to_dict()["documents"] == 0


class FakeTensor:
    """What a torch tensor offers: ``detach``, ``cpu`` and ``__array__`` (torch is not imported)."""

    def __init__(self, a: np.ndarray):
        self.a = a
        self.calls: list[str] = []

    def detach(self):
        self.calls.append("detach")
        return self

    def cpu(self):
        self.calls.append("cpu")
        return self

    def __array__(self, dtype=None, copy=None):
        return self.a if dtype is None else self.a.astype(dtype)


def test_array_likes_and_a_tensor_without_torch():
    rng = np.random.default_rng(2)
    y_true, y_pred = (rng.random((2, 12, len(LABELS))) < 0.3).astype(np.float32)
    t = FakeTensor(y_pred)
    acc = Accumulator(LABELS, "icd9", max_level="e0")
    acc.update(FakeTensor(y_true), t)
    assert t.calls == ["detach", "cpu"]
    assert_same(acc.compute(), one_shot(y_true, y_pred, max_level="e0"))


@pytest.mark.parametrize(
    ("y", "words"),
    [
        (np.full((1, len(LABELS)), 0.5), "y_pred row 0, column 0: 0.5; it must hold 0/1 indicators"),
        (np.full((1, len(LABELS)), np.nan), "y_pred row 0, column 0: nan"),
        (np.ones((1, 3)), "y_pred has shape (1, 3); it needs one column per label (11)"),
        (np.ones((2, len(LABELS))), "y_true has 1 rows and y_pred 2"),
    ],
)
def test_bad_batches_are_refused_and_lose_nothing(y, words):
    acc = Accumulator(LABELS, "icd9")
    good = np.zeros((1, len(LABELS)))
    good[0, 0] = 1
    acc.update(good, good)
    with pytest.raises(InputError, match=re.escape(words)):
        acc.update(good, y)
    assert acc.compute().score("flat").tp == 1  # the batch before is kept, the bad one not added


def test_scores_out_of_range_and_labels_refused():
    acc = Accumulator(LABELS, "icd9", threshold=0.5)
    with pytest.raises(InputError, match=r"y_score row 0, column 1: 1.5; it must hold scores in \[0, 1\]"):
        acc.update(np.zeros((1, len(LABELS))), np.eye(1, len(LABELS), 1) * 1.5)
    y_score = np.full((3, len(LABELS)), 0.5)
    y_score[1, 4], y_score[2, 0] = np.nan, -0.25  # the first bad cell in reading order is named
    for y in (y_score, sp.csr_matrix(y_score)):
        with pytest.raises(
            InputError, match=r"y_score row 1, column 4: nan; it must hold scores in \[0, 1\]"
        ):
            acc.update(np.zeros((3, len(LABELS))), y)
    y_score[1, 4] = 1.0
    with pytest.raises(InputError, match=r"y_score row 2, column 0: -0.25"):
        acc.update(np.zeros((3, len(LABELS))), y_score)
    assert acc.compute().to_dict()["documents"] == 0  # every refused batch left out
    with pytest.raises(InputError, match="1 of the labels cannot be placed in icd9.*'XYZ'"):
        Accumulator(["401.9", "XYZ"], "icd9")
    with pytest.raises(InputError, match="labels must be distinct; repeated: '401.9'"):
        Accumulator(["401.9", "401.9"], "icd9")
    with pytest.raises(InputError, match="same code twice"):
        Accumulator(["4019", "401.9"], "icd9", system="diagnosis")
    with pytest.raises(ValueError, match="same labels"):
        Accumulator(LABELS, "icd9").merge(Accumulator(LABELS[:-1], "icd9"))


def test_bootstrap_when_documents_kept():
    rng = np.random.default_rng(3)
    y_true, y_pred = (rng.random((2, 40, len(LABELS))) < 0.3).astype(int)
    acc = Accumulator(LABELS, "icd9", keep_documents=True, chunk_rows=7)
    for lo in range(0, 40, 5):
        acc.update(y_true[lo : lo + 5], y_pred[lo : lo + 5])
    intervals = acc.compute().bootstrap(n_resamples=50, seed=0)
    assert len(intervals) > 0
    with pytest.raises(ValueError, match="per-document table was not kept"):
        no_docs = Accumulator(LABELS, "icd9")
        no_docs.update(y_true, y_pred)
        _ = no_docs.compute().documents
