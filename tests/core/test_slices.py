"""Slices as masks: hand-worked code and document slices, partitions that add up (and the one that need not),
frequency bins, gold-code counts, metadata, and slice scores against restricting by hand and a naive loop."""

from __future__ import annotations

import io
import re

import numpy as np
import pandas as pd
import pytest
import scipy.sparse as sp
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from cophe_core import InputError, evaluate, prf, read_labels, score_files
from cophe_core.breakdown.slices import (
    DOC_COLUMNS,
    MAX_EDGES,
    Slice,
    code_frequency,
    code_frequency_slices,
    codes_in_play,
    gold_count_slices,
    metadata_columns,
    metadata_slices,
    parse_edges,
    read_metadata,
    restrict,
    slice_scores,
    training_frequency,
)
from tests.conftest import SAMPLE, examples, long_csv
from tests.core.naive import naive_scores
from tests.core.test_properties import block_of

FAST = settings(
    max_examples=examples(20),
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture],
)
COUNTS = ["tp", "fp", "fn"]


def counts(ev, measure: str, level: str = "overall") -> tuple[int, int, int]:
    s = ev.score(measure, level)
    return int(s.tp), int(s.fp), int(s.fn)


def codes_slice(ev, codes: list[str], name: str = "some codes") -> Slice:
    mask = np.zeros(ev.ontology.n_nodes, dtype=bool)
    mask[[ev.ontology.codes[c] for c in codes]] = True
    return Slice("t", "Test", name, "codes", mask, int(mask.sum()))


def docs_slice(mask: np.ndarray, name: str = "some documents") -> Slice:
    return Slice(name, "Test", name, "documents", np.asarray(mask, dtype=bool), int(np.sum(mask)))


def table(ev) -> pd.DataFrame:
    return ev.levels_table.set_index(["measure", "level"])[COUNTS]


def partition(which: np.ndarray, kind: str) -> list[Slice]:
    return [
        Slice(str(i), "Random", str(i), kind, which == i, int((which == i).sum())) for i in np.unique(which)
    ]


# ------------------------------------------------------------------------------------ hand-worked code slice
@pytest.fixture(scope="module")
def hand():
    # d1: gold 401.9, 401.1, 428.0; predicted 401.9, 401.0, 428.1 (all at level e1, below categories 401, 428)
    gold = long_csv([("d1", "401.9"), ("d1", "401.1"), ("d1", "428.0")])
    pred = long_csv([("d1", "401.9"), ("d1", "401.0"), ("d1", "428.1")])
    return score_files(gold, {"A": pred}, ontology="icd9").evaluation("A", max_level="block")


def test_the_whole_by_hand(hand):
    assert counts(hand, "flat", "leaf") == (1, 2, 2)
    assert counts(hand, "cophe", "e1") == (1, 2, 2)
    assert counts(hand, "cophe", "e0") == (3, 0, 0)  # 401: x = 2, y = 2; 428: x = 1, y = 1
    assert counts(hand, "cophe", "block") == (3, 0, 0)
    assert counts(hand, "set_based", "e0") == (2, 0, 0)


def test_a_code_slice_by_hand(hand):
    # slice {401.9, 401.0}: gold keeps 401.9; predictions keep 401.9 and 401.0
    ev = restrict(hand, codes_slice(hand, ["401.9", "401.0"]))
    assert counts(ev, "flat", "leaf") == (1, 1, 0)  # 401.9 right, 401.0 extra; 401.1 and 428.x not counted
    assert counts(ev, "cophe", "e2") == (0, 0, 0)
    assert counts(ev, "cophe", "e1") == (1, 1, 0)
    assert counts(ev, "cophe", "e0") == (1, 1, 0)  # 401: x = 2, y = 1 (401.1 is outside the slice)
    assert counts(ev, "cophe", "block") == (1, 1, 0)  # 401-405: x = 2, y = 1
    assert counts(ev, "cophe", "overall") == (3, 3, 0)
    assert counts(ev, "set_based", "e0") == (1, 0, 0)
    assert counts(ev, "set_based", "overall") == (3, 1, 0)
    nodes = ev.nodes.set_index("code")
    assert nodes.loc["401", ["predicted", "gold", "tp", "fp", "fn"]].tolist() == [2, 1, 1, 1, 0]
    assert not {"428", "428.0", "428.1", "401.1"} & set(nodes.index)  # no count outside the slice
    doc = ev.documents.iloc[0]
    assert (doc.n_gold, doc.n_predicted, doc.flat_tp) == (1, 2, 1)
    assert ev.docs.tolist() == ["d1"] and ev.gold.shape == hand.gold.shape  # every document, every column


def test_a_code_slice_masks_the_predictions_too(hand):
    # slice {428.1}: only a prediction; the gold 428.0 is outside it, so 428 has x = 1, y = 0
    ev = restrict(hand, codes_slice(hand, ["428.1"]))
    assert counts(ev, "flat", "leaf") == (0, 1, 0)
    assert counts(ev, "cophe", "e0") == (0, 1, 0)
    assert ev.pred.nnz == 1 and ev.gold.nnz == 0


def test_cophe_counts_of_a_code_partition_need_not_add_up(hand):
    # gold 428.0 and predicted 428.1 share category 428: one TP there; split apart, a FN and a FP
    a, b = (restrict(hand, codes_slice(hand, c)) for c in (["428.0"], ["428.1"]))
    assert counts(a, "cophe", "e0") == (0, 0, 1) and counts(b, "cophe", "e0") == (0, 1, 0)
    assert hand.nodes.set_index("code").loc["428", "tp"] == 1
    # the whole partition of the codes in play: flat and e1 (where each node is one code here) add up, e0 not
    parts = [["401.9", "401.0"], ["401.1"], ["428.0"], ["428.1"]]
    sums = sum(table(restrict(hand, codes_slice(hand, p))) for p in parts)
    whole = table(hand)
    assert (sums.loc[("flat", "leaf")] == whole.loc[("flat", "leaf")]).all()
    assert (sums.loc[("cophe", "e1")] == whole.loc[("cophe", "e1")]).all()
    # e0: 401 gives (1, 1, 0) with {401.9, 401.0} and a FN with {401.1}; 428 a FN and a FP: not the whole's 3 TP
    assert sums.loc[("cophe", "e0")].tolist() == [1, 2, 2] and whole.loc[("cophe", "e0")].tolist() == [
        3,
        0,
        0,
    ]


def test_no_slice_is_the_whole_and_a_bad_mask_is_refused(hand):
    assert restrict(hand, None) is hand
    with pytest.raises(ValueError, match="mask of 3 documents for an evaluation of 1 document"):
        restrict(hand, docs_slice(np.ones(3, bool)))
    with pytest.raises(ValueError, match="mask of 5 codes for an ontology of"):
        restrict(hand, Slice("x", "T", "x", "codes", np.ones(5, bool), 5))
    with pytest.raises(ValueError, match="1-D boolean"):
        Slice("x", "T", "x", "documents", np.array([0, 1]), 1)
    with pytest.raises(ValueError, match="kind"):
        Slice("x", "T", "x", "rows", np.array([True]), 1)  # type: ignore[arg-type]


def test_a_slice_keeps_its_own_read_only_mask():
    mask = np.array([True, False])
    s = docs_slice(mask)
    mask[:] = False
    assert s.mask.tolist() == [True, False]
    with pytest.raises(ValueError):
        s.mask[0] = False
    assert s.fingerprint == docs_slice(np.array([True, False]), "other").fingerprint
    assert s.fingerprint != docs_slice(np.array([False, True])).fingerprint


# ------------------------------------------------------------------------------------------ partitions
@pytest.fixture(scope="module")
def scoring():
    return score_files(
        SAMPLE / "gold.csv",
        {"A": SAMPLE / "run_siblings.csv", "B": SAMPLE / "run_overcoder.csv"},
        ontology="icd9",
    )


@pytest.fixture(scope="module")
def sample(scoring):
    return scoring.evaluation("A")


@FAST
@given(seed=st.integers(0, 10_000), parts=st.integers(2, 5))
def test_document_slices_add_up_to_the_whole(sample, seed, parts):
    which = np.random.default_rng(seed).integers(0, parts, len(sample.docs))
    slices = partition(which, "documents")
    assert sum(s.size for s in slices) == len(sample.docs)
    total = sum(table(restrict(sample, s)) for s in slices)
    pd.testing.assert_frame_equal(total, table(sample))  # every measure, every level and overall
    nodes = sum(
        restrict(sample, s).nodes.set_index("node")[COUNTS].reindex(sample.nodes.node, fill_value=0)
        for s in slices
    )
    pd.testing.assert_frame_equal(nodes, sample.nodes.set_index("node")[COUNTS])


POOL = [
    "401.0",
    "401.1",
    "401.9",
    "428.0",
    "428.1",
    "428.21",
    "428.22",
    "427.31",
    "427.32",
    "250.00",
    "250.01",
    "V45.81",
    "E849.7",
    "38.93",
    "584.9",
]
corpus = st.dictionaries(
    st.sampled_from([f"d{i}" for i in range(8)]),
    st.sets(st.sampled_from(POOL), max_size=6),
    min_size=1,
    max_size=8,
)


def evaluation_of(gold: dict[str, set[str]], pred: dict[str, set[str]], ontology):
    """The evaluation of label sets, encoded by hand (no reading): documents × ontology nodes."""
    docs = sorted(set(gold) | set(pred))

    def matrix(labels: dict[str, set[str]]) -> sp.csr_matrix:
        pairs = [(i, ontology.codes[c]) for i, d in enumerate(docs) for c in labels.get(d, ())]
        rows, cols = zip(*pairs) if pairs else ((), ())
        return sp.csr_matrix(
            (np.ones(len(pairs), dtype=np.int8), (rows, cols)), shape=(len(docs), ontology.n_nodes)
        )

    return evaluate(matrix(gold), matrix(pred), ontology, docs=np.array(docs), max_level="chapter")


@FAST
@given(gold=corpus, pred=corpus, seed=st.integers(0, 1000))
def test_document_slices_of_small_corpora_add_up(icd9, gold, pred, seed):
    ev = evaluation_of(gold, pred, icd9)
    which = np.random.default_rng(seed).integers(0, 3, len(ev.docs))
    pd.testing.assert_frame_equal(
        sum(table(restrict(ev, s)) for s in partition(which, "documents")), table(ev)
    )


@FAST
@given(seed=st.integers(0, 10_000))
def test_flat_and_bottom_level_counts_of_a_code_partition_add_up(sample, seed):
    which = np.random.default_rng(seed).integers(0, 3, sample.ontology.n_nodes)
    total = sum(table(restrict(sample, s)) for s in partition(which, "codes"))
    whole = table(sample)
    for row in [("flat", "leaf"), ("cophe", "e2"), ("set_based", "e2")]:
        assert total.loc[row].tolist() == whole.loc[row].tolist(), row


@FAST
@given(seed=st.integers(0, 10_000))
def test_a_partition_that_keeps_each_category_whole_adds_up_to_the_category_level(sample, seed):
    o = sample.ontology
    category = o.ancestors[:, o.level_index("e0")]  # each code's category (-1 above it)
    which = np.random.default_rng(seed).integers(0, 3, o.n_nodes + 1)[category]  # -1 → the last draw
    total = sum(table(restrict(sample, s)) for s in partition(which, "codes"))
    whole = table(sample)
    for measure in ("cophe", "set_based"):
        for level in ("e2", "e1", "e0"):
            assert total.loc[(measure, level)].tolist() == whole.loc[(measure, level)].tolist(), (
                measure,
                level,
            )


# -------------------------------------------------------------------------------------------- frequency
def test_frequency_bins_by_hand():
    freq = np.array([0, 1, 9, 10, 99, 100, 5000, 0])
    used = np.array([True] * 7 + [False])
    rare, medium, frequent = code_frequency_slices(freq, (10, 100), in_play=used)
    assert rare.mask.tolist() == [True, True, True, False, False, False, False, False]
    assert medium.mask.tolist() == [False, False, False, True, True, False, False, False]
    assert frequent.mask.tolist() == [False] * 5 + [True, True, False]
    assert [s.size for s in (rare, medium, frequent)] == [3, 2, 2]
    assert [s.name for s in (rare, medium, frequent)] == [
        "Rare: fewer than 10 documents",
        "Medium: 10 to 99 documents",
        "Frequent: 100 documents or more",
    ]
    assert [s.key for s in (rare, medium, frequent)] == [f"codes:freq:10,100:{i}" for i in range(3)]
    assert rare.describe() == (
        "Only the codes seen in fewer than 10 documents of the gold standard (3 codes), in "
        "every document. It includes 1 code that never occurs in the gold standard "
        "(predicted only)."
    )
    assert medium.note == "" and {s.dimension for s in (rare, medium)} == {
        "Code frequency in the gold standard"
    }


@pytest.mark.parametrize(
    "edges, names",
    [
        ((5,), ["Rare: fewer than 5 documents", "Frequent: 5 documents or more"]),
        ((1,), ["Rare: fewer than 1 document", "Frequent: 1 document or more"]),
        (
            (10, 11),
            ["Rare: fewer than 10 documents", "Medium: 10 documents", "Frequent: 11 documents or more"],
        ),
        (
            (2, 5, 1000),
            [
                "Bin 1: fewer than 2 documents",
                "Bin 2: 2 to 4 documents",
                "Bin 3: 5 to 999 documents",
                "Bin 4: 1,000 documents or more",
            ],
        ),
        (
            np.array([10.0, 100.0]),
            [
                "Rare: fewer than 10 documents",
                "Medium: 10 to 99 documents",
                "Frequent: 100 documents or more",
            ],
        ),
        (7, ["Rare: fewer than 7 documents", "Frequent: 7 documents or more"]),
    ],
)
def test_n_edges_make_n_plus_one_bins(edges, names):
    slices = code_frequency_slices(np.arange(0, 2000, 7), edges)
    assert [s.name for s in slices] == names
    assert (np.vstack([s.mask for s in slices]).sum(axis=0) == (np.arange(0, 2000, 7) > 0)).all()


@pytest.mark.parametrize(
    "bad", [(), (10, 10), (100, 10), (0, 5), (-3,), (10.5,), ("10",), (True,), None, "10"]
)
def test_bad_edges_are_refused(bad):
    with pytest.raises(ValueError, match="increasing positive whole numbers"):
        code_frequency_slices(np.array([1, 2]), bad)


def test_at_most_max_edges_are_taken():
    """Twenty edges make 21 slices; one more is refused before any slice is built (2,000 edges on the sample
    once took 20 s and 4.6 GB), and the message does not echo the list."""
    freq = np.arange(0, 2000, 7)
    assert len(code_frequency_slices(freq, range(1, MAX_EDGES + 1))) == MAX_EDGES + 1 == 21
    for many in (range(1, MAX_EDGES + 2), range(1, 5001)):
        with pytest.raises(ValueError, match=f"{len(many):,} given, at most 20 can be used") as e:
            code_frequency_slices(freq, many)
        assert len(str(e.value)) < 120


@pytest.mark.parametrize(
    "text, want",
    [("10, 100", (10, 100)), ("5", (5,)), ("1;2; 3", (1, 2, 3)), (", ".join(map(str, range(1, 21))), None)],
)
def test_parse_edges_reads_what_a_user_types(text, want):
    assert parse_edges(text) == (want or tuple(range(1, 21)))


@pytest.mark.parametrize(
    "text, said",
    [
        (", ".join(map(str, range(1, 22))), "21 given, at most 20"),
        (",".join(map(str, range(1, 5001))), "5,000 given, at most 20"),
        ("1," * 100_000, "100,000 given, at most 20"),
        ("ten", "type whole numbers"),
        ("100, 10", "increasing positive numbers"),
        ("0", "increasing positive numbers"),
        (5, "type whole numbers"),
        (None, "type whole numbers"),
    ],
)
def test_parse_edges_refuses_with_a_short_message(text, said):
    with pytest.raises(InputError, match=said) as e:
        parse_edges(text)
    assert len(str(e.value)) < 140  # never the list it was given


def test_bad_frequencies_are_refused():
    for bad in (np.array([1, -1]), np.array([1.5, 2]), np.array([[1, 2]])):
        with pytest.raises(ValueError, match="frequency must be"):
            code_frequency_slices(bad)
    with pytest.raises(ValueError, match="in_play has 3 label columns for 2"):
        code_frequency_slices(np.array([1, 2]), in_play=np.ones(3, bool))


@pytest.fixture(scope="module")
def counted():
    # 401.9 in 6 documents, 428.0 in 3 (twice in d1: one document), 250.00 in 1; 584.9 predicted only
    gold = [(f"d{i}", "401.9") for i in range(6)] + [
        ("d0", "428.0"),
        ("d0", "428.0"),
        ("d1", "428.0"),
        ("d2", "428.0"),
        ("d3", "250.00"),
    ]
    pred = [("d0", "401.9"), ("d1", "584.9"), ("d3", "250.00"), ("d4", "428.0")]
    return score_files(long_csv(gold), {"A": long_csv(pred)}, ontology="icd9")


def test_code_frequency_and_bins_of_a_hand_built_gold(counted):
    c = counted.corpus
    o = c.ontology
    f = code_frequency(c.gold)
    assert [f[o.codes[k]] for k in ("401.9", "428.0", "250.00", "584.9")] == [6, 3, 1, 0] and f.sum() == 10
    used = codes_in_play(c.gold, *c.runs.values())
    assert sorted(o.keys[used]) == ["250.00", "401.9", "428.0", "584.9"]
    rare, medium, frequent = code_frequency_slices(f, (2, 5), in_play=used)
    assert sorted(o.keys[rare.mask]) == ["250.00", "584.9"]  # the predicted-only code is rare
    assert "1 code that never occurs in the gold standard" in rare.note
    assert o.keys[medium.mask].tolist() == ["428.0"] and medium.name == "Medium: 2 to 4 documents"
    assert o.keys[frequent.mask].tolist() == ["401.9"]
    ev = restrict(counted.evaluation("A"), rare)
    assert counts(ev, "flat", "leaf") == (1, 1, 0)  # 250.00 right in d3, 584.9 extra in d1


def test_code_frequency_counts_documents_not_stored_zeros():
    m = sp.csr_matrix(
        (np.array([1, 0, 1, 1], dtype=np.int8), np.array([0, 1, 0, 0]), np.array([0, 2, 4])), shape=(2, 3)
    )  # an explicit zero (row 0) and a duplicate entry (row 1), as stored
    assert m.nnz == 4
    assert code_frequency(m).tolist() == [2, 0, 0]
    assert gold_count_slices(m, bins=1)[0].name == "1 gold code"
    assert m.nnz == 4 and m.data.tolist() == [1, 0, 1, 1]  # the input is left alone


def test_training_frequency_maps_codes_and_counts_the_unknown(counted):
    c = counted.corpus
    o = c.ontology
    raw = read_labels(
        long_csv(
            [
                ("t1", "401.9"),
                ("t2", "401.9"),
                ("t2", "401.9"),
                ("t3", "NOPE"),
                ("t3", "428.0"),
                ("t4", " 428.0 "),
                ("t4", "401.99"),
                ("t5", "NOPE"),
            ]
        )
    )
    t = training_frequency(raw, c)
    assert t.frequency[o.codes["401.9"]] == 2 and t.frequency[o.codes["428.0"]] == 2  # documents, not rows
    assert t.frequency.sum() == 4 and t.frequency.shape == (o.n_nodes,)
    assert (
        t.documents == 5 and t.unknown_codes == 2 and set(t.examples) == {"NOPE", "401.99"}
    )  # 401.99: unlisted
    assert "2 codes are not codes of the evaluated data" in t.describe("train.csv")
    slices = code_frequency_slices(
        t.frequency, (2,), in_play=codes_in_play(c.gold, *c.runs.values()), source="the training labels"
    )
    assert slices[0].key == "codes:freq-training-labels:2:0" and slices[0].dimension.endswith(
        "training labels"
    )
    assert sorted(o.keys[slices[1].mask]) == ["401.9", "428.0"]
    assert "2 codes that never occur in the training labels." in slices[0].note  # 250.00 and 584.9


def test_training_frequency_reads_undotted_codes_as_the_gold_is_read(counted):
    c = counted.corpus
    raw = read_labels(long_csv([("t1", "4019"), ("t2", "4019"), ("t2", "4280")]), name="train.csv")
    with pytest.raises(InputError, match="train.csv: none of its 2 distinct codes.*say which system"):
        training_frequency(raw, c)
    dx = training_frequency(raw, c, system="diagnosis")
    assert dx.unknown_codes == 0 and dx.frequency[c.ontology.codes["401.9"]] == 2
    assert dx.frequency[c.ontology.codes["428.0"]] == 1
    mixed = training_frequency(read_labels(long_csv([("t1", "401.9"), ("t2", "4019")])), c)
    assert mixed.unknown_codes == 1 and mixed.needs_system and "need the system" in mixed.describe()
    with pytest.raises(InputError, match="train.csv: none of its 1 distinct codes"):
        training_frequency(read_labels(long_csv([("t1", "NOPE")]), name="train.csv"), c)


# ------------------------------------------------------------------------------------ gold codes per document
def test_gold_count_slices_by_hand():
    g = sp.csr_matrix(np.array([[1, 1, 0], [1, 0, 0], [0, 0, 0], [1, 1, 1], [1, 1, 1]]))
    slices = gold_count_slices(g, bins=2)
    assert [(s.name, s.size, s.key) for s in slices] == [
        ("1 to 2 gold codes", 2, "docs:gold:0"),
        ("3 gold codes", 2, "docs:gold:1"),
        ("No gold code", 1, "docs:gold:none"),
    ]
    assert slices[0].mask.tolist() == [True, True, False, False, False]
    assert slices[0].describe() == "Only the documents with 1 to 2 gold codes (2 documents)."
    assert [s.name for s in gold_count_slices(g, bins=3)][:3] == [
        "1 gold code",
        "2 gold codes",
        "3 gold codes",
    ]


def test_gold_count_slices_partition_the_sample(sample):
    slices = gold_count_slices(sample.gold)
    assert (np.vstack([s.mask for s in slices]).sum(axis=0) == 1).all() and 2 <= len(slices) <= 4
    n = np.asarray(sample.gold.sum(axis=1)).ravel()
    for s in slices:  # each slice's name states the range of its documents' gold codes
        lo, hi = n[s.mask].min(), n[s.mask].max()
        assert s.name == (
            f"{lo} to {hi} gold codes" if lo != hi else f"{lo} gold code{'s' if lo != 1 else ''}"
        )


@settings(max_examples=examples(60), deadline=None)
@given(n=st.lists(st.integers(0, 40), min_size=1, max_size=60), bins=st.integers(1, 6))
def test_gold_count_slices_always_partition_the_documents(n, bins):
    rows = np.repeat(np.arange(len(n)), n)
    cols = np.concatenate([np.arange(k) for k in n]) if sum(n) else np.array([], dtype=int)
    g = sp.csr_matrix((np.ones(len(rows), dtype=np.int8), (rows, cols)), shape=(len(n), 40))
    slices = gold_count_slices(g, bins=bins)
    assert (np.vstack([s.mask for s in slices]).sum(axis=0) == 1).all()
    assert len(slices) <= bins + 1 and len({s.name for s in slices}) == len(slices)
    counts_ = np.asarray(n)
    ranges = [(counts_[s.mask].min(), counts_[s.mask].max()) for s in slices if s.key != "docs:gold:none"]
    assert all(hi < lo2 for (_, hi), (lo2, _) in zip(ranges, ranges[1:]))  # increasing, disjoint
    assert any(s.name == "No gold code" for s in slices) == (0 in n)


# -------------------------------------------------------------------------------------------- metadata
def test_metadata_numeric_categorical_other_and_no_value():
    meta = read_metadata(
        b"doc_id,length,kind\n1,100,A\n2,200,B\n3,300,A\n4,400,C\n5,,A\n6,500,D\n", name="m.csv"
    )
    docs = np.array(["1", "2", "3", "4", "5", "6", "7"])
    num = metadata_slices(meta, docs, "length", bins=2)
    assert [(s.name, s.size) for s in num] == [
        ("length 100 to 300", 3),
        ("length 400 to 500", 2),
        ("No value", 2),
    ]
    assert num[-1].note == "1 document not in the table; 1 document with an empty value."
    assert num[0].describe() == "Only the documents whose length is from 100 to 300 (3 documents)."
    cat = metadata_slices(meta, docs, "kind", max_categories=2)
    assert [(s.name, s.size, s.key) for s in cat] == [
        ("kind: A", 3, "docs:meta:kind:v0"),
        ("kind: B", 1, "docs:meta:kind:v1"),
        ("Other values (2)", 2, "docs:meta:kind:other"),
        ("No value", 1, "docs:meta:kind:none"),
    ]
    assert cat[2].note == "The values: C, D."
    # one value beyond max_categories keeps its own slice rather than an "Other values" of one
    assert [s.name for s in metadata_slices(meta, docs, "kind", max_categories=3)][:4] == [
        "kind: A",
        "kind: B",
        "kind: C",
        "kind: D",
    ]
    for slices in (num, cat):
        assert (np.vstack([s.mask for s in slices]).sum(axis=0) == 1).all()
    assert metadata_columns(meta) == ["length", "kind"]


@pytest.mark.parametrize(
    "values, numeric",
    [
        (["1", "2.5", "1e3", "-4"], True),
        (["1", "2", "x"], False),
        (["1", "inf", "3"], False),  # not finite: text
        (["1", "nan", "2"], False),
        (["True", "False", "True"], False),
    ],
)
def test_a_column_is_numeric_when_every_value_is_a_finite_number(values, numeric):
    body = "".join(f"d{i},{v}\n" for i, v in enumerate(values))
    meta = read_metadata(("doc_id,col\n" + body).encode())
    slices = metadata_slices(meta, np.array([f"d{i}" for i in range(len(values))]), "col", bins=2)
    assert all(not s.name.startswith("col: ") for s in slices) == numeric
    assert all(s.key.split(":")[-1].isdigit() for s in slices) == numeric


def test_few_numbers_get_a_slice_each_and_names_stay_distinct():
    meta = read_metadata(b"doc_id,year,x\n1,2006,1.00001\n2,2007,1.00002\n3,2006,1.00003\n4,2008,1.00004\n")
    years = metadata_slices(meta, np.array(["1", "2", "3", "4"]), "year", bins=4)
    assert [(s.name, s.size) for s in years] == [("year 2006", 2), ("year 2007", 1), ("year 2008", 1)]
    close = metadata_slices(meta, np.array(["1", "2", "3", "4"]), "x", bins=2)
    assert len({s.name for s in close}) == len(close) == 2
    assert close[0].name == "x 1.00001 to 1.00002"


def test_long_values_are_cut_and_stay_distinct():
    a, b = "x" * 80 + "a", "x" * 80 + "b"
    meta = read_metadata(f"doc_id,note\n1,{a}\n2,{b}\n".encode())
    names = [s.name for s in metadata_slices(meta, np.array(["1", "2"]), "note")]
    assert len(set(names)) == 2 and all(len(n) < 80 for n in names)


@settings(max_examples=examples(40), deadline=None)
@given(
    values=st.lists(
        st.one_of(st.integers(0, 50).map(str), st.sampled_from(["x", "y", "", "2.5", "-1"])),
        min_size=1,
        max_size=30,
    ),
    extra=st.integers(0, 5),
    bins=st.integers(1, 5),
    cats=st.integers(1, 4),
)
def test_metadata_slices_always_partition_the_documents(values, extra, bins, cats):
    body = "".join(f"d{i},{v}\n" for i, v in enumerate(values))
    meta = read_metadata(("doc_id,col\n" + body).encode(), name="m.csv")
    docs = np.array([f"d{i}" for i in range(len(values) + extra)])
    slices = metadata_slices(meta, docs, "col", bins=bins, max_categories=cats)
    assert (np.vstack([s.mask for s in slices]).sum(axis=0) == 1).all()
    assert len({s.name for s in slices}) == len(slices) and len({s.key for s in slices}) == len(slices)
    no_value = [s for s in slices if s.name == "No value"]
    assert (len(no_value) == 1) == (extra > 0 or "" in values)
    if no_value:
        assert no_value[0].size == extra + values.count("")


def test_metadata_columns_leave_out_ids_and_constants():
    meta = read_metadata(
        b"doc_id,note_id,subject_id,kind,length,site,text\n1,a,7,x,10,h,p\n2,b,8,y,20,h,q\n3,c,9,x,30,h,r\n"
    )
    assert metadata_columns(meta) == ["kind", "length"]


def test_metadata_slices_refuse_bad_arguments():
    meta = read_metadata(b"doc_id,kind\n1,a\n")
    with pytest.raises(ValueError, match="no column 'nope'"):
        metadata_slices(meta, np.array(["1"]), "nope")
    with pytest.raises(ValueError, match="bins"):
        metadata_slices(meta, np.array(["1"]), "kind", bins=0)
    with pytest.raises(ValueError, match="max_categories"):
        metadata_slices(meta, np.array(["1"]), "kind", max_categories=0)


def test_read_metadata_formats(tmp_path):
    tsv = read_metadata(b"HADM_ID\tAdmission Type\n1\tURGENT\n", name="m.tsv")
    assert tsv.index.tolist() == ["1"] and tsv.columns.tolist() == ["Admission Type"]
    bom = read_metadata("\ufeffdoc_id;length\n 7 ;12\n".encode(), name="m.csv")
    assert bom.to_dict("index") == {"7": {"length": "12"}}
    chosen = read_metadata(b"id,note_id,x\n1,n1,a\n2,n2,b\n", doc_col="NOTE_ID")
    assert chosen.index.tolist() == ["n1", "n2"] and chosen.columns.tolist() == ["id", "x"]
    frame = pd.DataFrame(
        {"hadm_id": [10.0, 11.0, None], "length": [1.5, None, 3.0], "kind": ["a", None, "c"]}
    )
    frame = frame.dropna(subset=["hadm_id"])
    frame.loc[len(frame)] = [12.0, 2.0, "b"]
    buffer = io.BytesIO()
    frame.to_parquet(buffer)
    pq = read_metadata(buffer.getvalue(), name="m.parquet")
    assert pq.to_dict("index") == {
        "10": {"length": "1.5", "kind": "a"},
        "11": {"length": "", "kind": ""},
        "12": {"length": "2.0", "kind": "b"},
    }
    path = tmp_path / "details.csv"
    path.write_bytes(b"doc_id,kind\n1,a\n")
    assert read_metadata(path).kind.tolist() == ["a"]
    with pytest.raises(InputError, match="no such file"):
        read_metadata(tmp_path / "missing.csv")


@pytest.mark.parametrize(
    "content, message",
    [
        (b"", "the file is empty"),
        (b"  \n", "the file is empty"),
        (b"patient,length\n1,2\n", "line 1 (the header): no document id column (found: patient, length)"),
        (b"doc_id,length\n1,2\n2,3\n1,4\n", "line 4: document '1' is given twice (first on line 2)"),
        (b"doc_id,length\n1,2\n,3\n", "line 3: a row without a document id"),
        (b"doc_id\n1\n", "line 1: a single column"),
        (b"doc_id,\n1,\n", "only a document id column"),
        (b"doc_id,length\n", "no documents, only a header"),
        (b"doc_id,length\n1,2\n2,\xff\n", "line 3: not UTF-8 text"),
        (b"doc_id,length\n1,2,3\n", "line 2: this row has 3 fields where the header has 2"),
        (b"PAR1garbage", "cannot read it as Parquet"),
    ],
)
def test_metadata_errors_name_the_file_and_line(content, message):
    with pytest.raises(InputError, match="^details.csv.*" + re.escape(message)):
        read_metadata(content, name="details.csv")


def test_the_id_columns_include_the_label_readers():
    assert (
        DOC_COLUMNS[:3] == ("doc_id", "hadm_id", "document")
        and "note_id" in DOC_COLUMNS
        and "id" in DOC_COLUMNS
    )


def test_the_sample_details_slice_the_sample(scoring):
    meta = read_metadata(SAMPLE / "documents.csv")
    assert metadata_columns(meta) == ["note_length", "admission_type", "year"]
    for column in metadata_columns(meta):
        slices = metadata_slices(meta, scoring.corpus.docs, column)
        assert (np.vstack([s.mask for s in slices]).sum(axis=0) == 1).all() and len(slices) >= 2
    assert [s.name for s in metadata_slices(meta, scoring.corpus.docs, "year")][0].startswith("year 2001 to")


# ------------------------------------------------------------------------------------------ slice scores
def test_slice_scores_agree_with_restricting_by_hand(scoring):
    evals = {r: scoring.evaluation(r) for r in ("A", "B")}
    c = scoring.corpus
    slices = [
        *gold_count_slices(c.gold)[:2],
        *code_frequency_slices(
            code_frequency(c.gold), (10, 100), in_play=codes_in_play(c.gold, *c.runs.values())
        ),
    ]
    t = slice_scores(evals, slices, n_resamples=30)
    assert len(t) == len(slices) * 2 * 9 and t.note.eq("").all()
    assert t.slice.tolist()[:18:9] == [slices[0].name] * 2 and t.run.tolist()[:18:9] == ["A", "B"]
    t = t.set_index(["run", "key", "measure", "statistic"])
    for s in slices:
        for run, ev in evals.items():
            sub = restrict(ev, s)
            for m in ("flat", "set_based", "cophe"):
                for stat in ("precision", "recall", "f1"):
                    row = t.loc[(run, s.key, m, stat)]
                    assert row.value == pytest.approx(getattr(sub.score(m), stat))
                    assert row.low <= row.value + 1e-12 and row.value <= row.high + 1e-12
            row = t.loc[(run, s.key, "cophe", "f1")]
            assert (row.documents, row.gold_codes, row.predicted_codes, row["size"]) == (
                len(sub.docs),
                sub.gold.nnz,
                sub.pred.nnz,
                s.size,
            )
            assert row.kind == s.kind and row.dimension == s.dimension


def test_slice_scores_agree_with_a_naive_loop(counted):
    # restrict to documents d0-d2, and separately to the codes {428.0, 584.9}; count from the definitions
    ev = counted.evaluation("A", max_level="chapter")
    gold = {d: set() for d in ev.docs}
    pred = {d: set() for d in ev.docs}
    for d, codes in (
        ("d0", "401.9 428.0"),
        ("d1", "401.9 428.0"),
        ("d2", "401.9 428.0"),
        ("d3", "401.9 250.00"),
        ("d4", "401.9"),
        ("d5", "401.9"),
    ):
        gold[d] |= set(codes.split())
    for d, code in (("d0", "401.9"), ("d1", "584.9"), ("d3", "250.00"), ("d4", "428.0")):
        pred[d].add(code)
    keep_docs = np.isin(ev.docs, ["d0", "d1", "d2"])
    codes = {"428.0", "584.9"}
    cases = [
        (
            docs_slice(keep_docs),
            {d: gold[d] for d in ("d0", "d1", "d2")},
            {d: pred[d] for d in ("d0", "d1", "d2")},
        ),
        (
            codes_slice(ev, sorted(codes)),
            {d: g & codes for d, g in gold.items()},
            {d: p & codes for d, p in pred.items()},
        ),
    ]
    levels = ["e2", "e1", "e0", "block", "chapter"]
    t = slice_scores({"A": ev}, [s for s, _, _ in cases], n_resamples=10)
    for s, g, p in cases:
        naive = naive_scores(g, p, levels, block_of)
        flat = [
            sum(len(g[d] & p[d]) for d in g),
            sum(len(p[d] - g[d]) for d in g),
            sum(len(g[d] - p[d]) for d in g),
        ]
        want = {"flat": flat}
        for m in ("cophe", "set_based"):
            want[m] = np.sum([naive.get((m, lv), [0, 0, 0]) for lv in levels], axis=0).tolist()
        mine = t[t.slice == s.name].set_index(["measure", "statistic"]).value
        for m, (tp, fp, fn) in want.items():
            p_, r_, f_ = (float(x) for x in prf(tp, fp, fn))
            assert [mine[(m, "precision")], mine[(m, "recall")], mine[(m, "f1")]] == pytest.approx(
                [p_, r_, f_]
            ), m


def test_an_empty_slice_scores_nan_without_raising(sample, counted):
    empty = docs_slice(np.zeros(len(sample.docs), bool), "nothing")
    nothing = Slice("c", "Test", "no codes", "codes", np.zeros(sample.ontology.n_nodes, bool), 0)
    t = slice_scores({"A": sample}, [empty, nothing], n_resamples=10)
    assert t.value.isna().all() and t.low.isna().all() and t.high.isna().all()
    assert (t[t.slice == "nothing"].documents == 0).all()
    assert set(t.note) == {"No document in this slice.", "No gold or predicted code in this slice."}
    # predicted codes and no gold code: precision is scored (every prediction is a false positive), not recall
    ev = counted.evaluation("A")
    only_pred = slice_scores({"A": ev}, [codes_slice(ev, ["584.9"])], n_resamples=10).set_index(
        ["measure", "statistic"]
    )
    assert (only_pred.xs("precision", level="statistic").value == 0).all()
    assert only_pred.drop("precision", level="statistic").value.isna().all()
    assert only_pred.note.iloc[0].startswith("No gold code in this slice")
    assert slice_scores({"A": ev}, [], n_resamples=10).empty
