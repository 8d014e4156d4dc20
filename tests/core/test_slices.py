"""Slices as masks: hand-worked code and document slices, partitions that add up (and the one that need not),
bins, metadata, and slice scores against restricting by hand."""

from __future__ import annotations

import re

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from cophe_core import InputError, read_labels, score_files
from cophe_core.slices import (
    Slice,
    code_frequency,
    code_frequency_slices,
    gold_count_slices,
    metadata_columns,
    metadata_slices,
    read_metadata,
    restrict,
    slice_scores,
    training_frequency,
)
from tests.conftest import SAMPLE, long_csv


def counts(ev, measure: str, level: str) -> tuple[int, int, int]:
    s = ev.score(measure, level)
    return int(s["tp"]), int(s["fp"]), int(s["fn"])


def codes_slice(ev, codes: list[str]) -> Slice:
    mask = np.zeros(ev.gold.shape[1], dtype=bool)
    mask[[ev.ontology.codes[c] for c in codes]] = True
    return Slice("t", "Test", "some codes", "codes", mask, int(mask.sum()))


@pytest.fixture(scope="module")
def hand():
    # d1: gold 401.9, 401.1, 428.0; predicted 401.9, 401.0, 428.1
    gold = long_csv([("d1", "401.9"), ("d1", "401.1"), ("d1", "428.0")])
    pred = long_csv([("d1", "401.9"), ("d1", "401.0"), ("d1", "428.1")])
    return score_files(gold, {"A": pred}, ontology="icd9").evaluation("A", max_level="block")


def test_a_code_slice_by_hand(hand):
    # slice {401.9, 401.0}: gold keeps 401.9, predictions keep 401.9 and 401.0
    ev = restrict(hand, codes_slice(hand, ["401.9", "401.0"]))
    assert counts(ev, "flat", "leaf") == (1, 1, 0)  # 401.9 right, 401.0 extra
    # category 401: x = 2 predicted, y = 1 gold → TP 1, FP 1; category 428 counts nothing
    assert counts(ev, "cophe", "e0") == (1, 1, 0)
    assert counts(ev, "set_based", "e0") == (1, 0, 0)
    nodes = ev.nodes.set_index("code")
    assert "428" not in nodes.index and "428.0" not in nodes.index
    # without the slice, category 401 has x = 2, y = 2 and 428 has x = 1, y = 1
    assert counts(hand, "cophe", "e0") == (3, 0, 0)


def test_cophe_counts_of_a_code_partition_need_not_add_up(hand):
    # gold 428.0 and predicted 428.1 share category 428: one TP there; split apart, each side has none
    a, b = (restrict(hand, codes_slice(hand, c)) for c in (["428.0"], ["428.1"]))
    assert counts(a, "cophe", "e0")[0] + counts(b, "cophe", "e0")[0] < 3
    whole = hand.nodes.set_index("code").loc["428"]
    assert whole.tp == 1
    assert "428" not in a.nodes.query("tp > 0").code.tolist() and "428" not in b.nodes.query("tp > 0").code.tolist()


@pytest.fixture(scope="module")
def sample():
    s = score_files(SAMPLE / "gold.csv", {"A": SAMPLE / "run_siblings.csv"}, ontology="icd9")
    return s.evaluation("A")


@settings(max_examples=15, deadline=None)
@given(seed=st.integers(0, 10_000), parts=st.integers(2, 5))
def test_document_slices_add_up_to_the_whole(sample, seed, parts):
    which = np.random.default_rng(seed).integers(0, parts, len(sample.docs))
    slices = [Slice(str(i), "Random", str(i), "documents", which == i, int((which == i).sum())) for i in range(parts)]
    whole = sample.levels_table.set_index(["measure", "level"])[["tp", "fp", "fn"]]
    total = sum(restrict(sample, s).levels_table.set_index(["measure", "level"])[["tp", "fp", "fn"]] for s in slices)
    pd.testing.assert_frame_equal(total, whole)


@settings(max_examples=15, deadline=None)
@given(seed=st.integers(0, 10_000))
def test_flat_counts_of_a_code_partition_add_up(sample, seed):
    which = np.random.default_rng(seed).integers(0, 3, sample.gold.shape[1])
    parts = [Slice(str(i), "Random", str(i), "codes", which == i, 0) for i in range(3)]
    assert sum(np.array(counts(restrict(sample, s), "flat", "leaf")) for s in parts).tolist() == \
        list(counts(sample, "flat", "leaf"))


def test_frequency_bins_by_hand():
    freq = np.array([0, 1, 9, 10, 99, 100, 5000, 0])
    used = np.array([True] * 7 + [False])
    rare, medium, frequent = code_frequency_slices(freq, (10, 100), in_play=used)
    assert rare.mask.tolist() == [True, True, True, False, False, False, False, False]
    assert medium.mask.tolist() == [False, False, False, True, True, False, False, False]
    assert frequent.mask.tolist() == [False] * 5 + [True, True, False]
    assert "1 code that the gold standard never holds" in rare.describe()  # the predicted-only code
    assert [s.name for s in code_frequency_slices(freq, (5,), in_play=used)] == [
        "Rare: fewer than 5 documents", "Frequent: 5 documents or more"]
    for bad in ((), (10, 10), (100, 10), (0, 5)):
        with pytest.raises(ValueError, match="increasing positive"):
            code_frequency_slices(freq, bad)


def test_code_frequency_counts_documents():
    s = score_files(long_csv([("1", "401.9"), ("2", "401.9"), ("2", "428.0")]), {"A": long_csv([("1", "401.9")])},
                    ontology="icd9")
    f = code_frequency(s.corpus.gold)
    o = s.corpus.ontology
    assert f[o.codes["401.9"]] == 2 and f[o.codes["428.0"]] == 1 and f.sum() == 3


def test_training_frequency_maps_codes_and_counts_the_unknown():
    s = score_files(long_csv([("1", "401.9")]), {"A": long_csv([("1", "428.0")])}, ontology="icd9")
    t = training_frequency(read_labels(long_csv([("t1", "401.9"), ("t2", "401.9"), ("t2", "401.9"),
                                                 ("t3", "NOPE"), ("t3", "428.0")])), s.corpus)
    o = s.corpus.ontology
    assert t.frequency[o.codes["401.9"]] == 2 and t.frequency[o.codes["428.0"]] == 1
    assert t.documents == 3 and t.unknown_codes == 1


def test_gold_count_slices_partition_the_documents(sample):
    slices = gold_count_slices(sample.gold)
    stacked = np.vstack([s.mask for s in slices])
    assert (stacked.sum(axis=0) == 1).all() and 2 <= len(slices) <= 4
    n = np.asarray(sample.gold.sum(axis=1)).ravel()
    for s in slices:  # each slice's name states the range of its documents' gold codes
        lo, hi = n[s.mask].min(), n[s.mask].max()
        assert s.name.startswith(f"{lo} to {hi}" if lo != hi else f"{lo} gold code")


def test_metadata_numeric_categorical_other_and_no_value():
    meta = read_metadata(b"doc_id,length,kind\n1,100,A\n2,200,B\n3,300,A\n4,400,C\n5,,A\n", name="m.csv")
    docs = np.array(["1", "2", "3", "4", "5", "6"])
    num = metadata_slices(meta, docs, "length", bins=2)
    assert [(s.name, s.size) for s in num] == [("length 100 to 200", 2), ("length 300 to 400", 2), ("No value", 2)]
    cat = metadata_slices(meta, docs, "kind", max_categories=1)
    assert [(s.name, s.size) for s in cat] == [("kind: A", 3), ("Other values (2)", 2), ("No value", 1)]
    for slices in (num, cat):
        assert (np.vstack([s.mask for s in slices]).sum(axis=0) == 1).all()
    assert metadata_columns(meta) == ["length", "kind"]


@settings(max_examples=30, deadline=None)
@given(values=st.lists(st.one_of(st.integers(0, 50).map(str), st.sampled_from(["x", "y", ""])), min_size=1,
                       max_size=30), extra=st.integers(0, 5))
def test_metadata_slices_always_partition_the_documents(values, extra):
    body = "".join(f"d{i},{v}\n" for i, v in enumerate(values))
    meta = read_metadata(("doc_id,col\n" + body).encode(), name="m.csv")
    docs = np.array([f"d{i}" for i in range(len(values) + extra)])
    slices = metadata_slices(meta, docs, "col", bins=3, max_categories=2)
    assert (np.vstack([s.mask for s in slices]).sum(axis=0) == 1).all()


@pytest.mark.parametrize("content, message", [
    (b"", "the file is empty"),
    (b"patient,length\n1,2\n", "line 1 (the header): no document id column"),
    (b"doc_id,length\n1,2\n2,3\n1,4\n", "line 4: document '1' is given twice"),
    (b"doc_id,length\n1,2\n,3\n", "line 3: a row without a document id"),
    (b"doc_id\n1\n", "line 1: a single column"),
    (b"doc_id,\n1,\n", "only a document id column"),
])
def test_metadata_errors_name_the_file_and_line(content, message):
    with pytest.raises(InputError, match="^details.csv.*" + re.escape(message)):
        read_metadata(content, name="details.csv")


def test_slice_scores_agree_with_restricting_by_hand(sample):
    docs = gold_count_slices(sample.gold)[:2]
    freq = code_frequency_slices(code_frequency(sample.gold), (10, 100))
    t = slice_scores({"A": sample}, [*docs, *freq], n_resamples=30).set_index(["key", "measure", "statistic"])
    for s in [*docs, *freq]:
        sub = restrict(sample, s)
        for m in ("flat", "set_based", "cophe"):
            assert t.loc[(s.key, m, "f1"), "value"] == pytest.approx(sub.score(m)["f1"])
        assert t.loc[(s.key, "cophe", "f1"), "documents"] == len(sub.docs)


def test_an_empty_slice_scores_nan_without_raising(sample):
    empty = Slice("e", "Test", "nothing", "documents", np.zeros(len(sample.docs), bool), 0)
    t = slice_scores({"A": sample}, [empty], n_resamples=10)
    assert t.value.isna().all() and (t.documents == 0).all()


def test_a_mask_of_the_wrong_length_is_refused(sample):
    with pytest.raises(ValueError, match="mask of 3 documents"):
        restrict(sample, Slice("x", "T", "x", "documents", np.ones(3, bool), 3))
