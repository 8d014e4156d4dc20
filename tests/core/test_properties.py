"""Invariants (hypothesis) and cross-checks: scikit-learn for flat, a naive loop for CoPHE."""

from __future__ import annotations

import csv
import random
from pathlib import Path

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from sklearn.metrics import precision_recall_fscore_support
from sklearn.preprocessing import MultiLabelBinarizer

from cophe_core.ontology import icd9_ontology
from tests.conftest import examples, score_pairs
from tests.core.naive import naive_scores

LEVELS = ["e2", "e1", "e0", "block", "chapter"]
_O = icd9_ontology()
# A pool rich in siblings: every listed code of a few busy families, plus a random spread.
_ALL = sorted(c for c, n in _O.codes.items() if _O.listed[n])
_FAMILY = [
    c
    for c in _ALL
    if c.split(".")[0] in {"401", "403", "428", "427", "250", "584", "V45", "E849", "38", "39", "96"}
]
POOL = sorted(set(_FAMILY) | set(random.Random(0).sample(_ALL, 300)))
SETTINGS = settings(max_examples=examples(60), deadline=None, suppress_health_check=[HealthCheck.too_slow])

docs_strategy = st.dictionaries(
    st.sampled_from([f"d{i}" for i in range(12)]),
    st.sets(st.sampled_from(POOL), max_size=10),
    max_size=12,
).filter(lambda labels: any(labels.values()))  # a gold standard with no code is an error (NothingScorable)


def pairs(labels: dict[str, set[str]]) -> list[tuple[str, str]]:
    return [(d, c) for d, codes in sorted(labels.items()) for c in sorted(codes)]


def _block_table():
    path = Path(__file__).parents[2] / "cophe_core" / "ontology" / "data" / "icd9_blocks.csv"
    with open(path) as f:
        return [(row["block"], row["chapter"]) for row in csv.DictReader(f)]


_BLOCKS = _block_table()


def block_of(category: str) -> tuple[str, str]:
    """Independent block lookup: the range whose bounds (same length and prefix) hold the category."""
    for block, chapter in _BLOCKS:
        lo, _, hi = block.partition("-")
        hi = hi or lo
        if (
            len(lo) == len(category)
            and lo[0].isdigit() == category[0].isdigit()
            and (lo[0] == category[0] or lo[0].isdigit())
            and lo <= category <= hi
        ):
            return block, chapter
    raise AssertionError(f"no block for {category}")


@SETTINGS
@given(gold=docs_strategy, pred=docs_strategy)
def test_cophe_equals_naive_loop(gold, pred):
    ev = score_pairs(pairs(gold), pairs(pred), max_level="chapter")
    naive = naive_scores(gold, pred, LEVELS, block_of)
    for measure in ("cophe", "set_based"):
        for level in LEVELS:
            s = ev.score(measure, level)
            assert [s.tp, s.fp, s.fn] == naive.get((measure, level), [0, 0, 0]), (measure, level)


@SETTINGS
@given(gold=docs_strategy, pred=docs_strategy)
def test_tp_plus_fn_is_gold_mass_per_level(gold, pred):
    ev = score_pairs(pairs(gold), pairs(pred), max_level="chapter")
    depth = {"e2": 0, "e1": 1, "e0": 2}
    for i, level in enumerate(LEVELS):
        mass = sum(
            1 for codes in gold.values() for c in codes if depth[_O.levels[_O.level[_O.codes[c]]]] <= i
        )
        s = ev.score("cophe", level)
        assert s.tp + s.fn == mass
        assert ev.nodes.loc[ev.nodes.level == level, "gold"].sum() == mass


@SETTINGS
@given(gold=docs_strategy, pred=docs_strategy)
def test_swapping_gold_and_predictions_swaps_p_r_and_fp_fn(gold, pred):
    a = score_pairs(pairs(gold), pairs(pred)).levels_table
    b = score_pairs(pairs(pred), pairs(gold)).levels_table
    assert (a.tp == b.tp).all() and (a.fp == b.fn).all() and (a.fn == b.fp).all()
    np.testing.assert_allclose(a.precision, b.recall)
    np.testing.assert_allclose(a.recall, b.precision)
    np.testing.assert_allclose(a.f1, b.f1)


@SETTINGS
@given(gold=docs_strategy, pred=docs_strategy, seed=st.integers(0, 2**32 - 1))
def test_row_order_and_duplicates_do_not_matter(gold, pred, seed):
    rng = random.Random(seed)
    g, p = pairs(gold), pairs(pred)
    g2 = g + rng.choices(g, k=len(g) // 2) if g else g
    p2 = p + rng.choices(p, k=len(p) // 2) if p else p
    rng.shuffle(g2)
    rng.shuffle(p2)
    a = score_pairs(g, p).levels_table
    b = score_pairs(g2, p2).levels_table
    assert a.equals(b)


def _one_per_chapter(draw_codes: list[str]) -> set[str]:
    seen, out = set(), set()
    for c in draw_codes:
        chapter = block_of(c.split(".")[0])[1]
        if chapter not in seen:
            seen.add(chapter)
            out.add(c)
    return out


@SETTINGS
@given(gold=docs_strategy, pred=docs_strategy)
def test_cophe_equals_set_based_without_multi_code_families(gold, pred):
    gold = {d: _one_per_chapter(sorted(c)) for d, c in gold.items()}
    pred = {d: _one_per_chapter(sorted(c)) for d, c in pred.items()}
    t = score_pairs(pairs(gold), pairs(pred), max_level="chapter").levels_table
    cophe = t[t.measure == "cophe"].reset_index(drop=True)
    setb = t[t.measure == "set_based"].reset_index(drop=True)
    assert cophe[["level", "tp", "fp", "fn"]].equals(setb[["level", "tp", "fp", "fn"]])


def test_cophe_below_set_based_when_a_family_is_over_predicted():
    """The control for the test above: with two codes in one family the two differ."""
    ev = score_pairs([("d", "401.9")], [("d", "401.9"), ("d", "401.1")], max_level="e0")
    assert ev.score("cophe", "e0").fp == 1 and ev.score("set_based", "e0").fp == 0


@SETTINGS
@given(gold=docs_strategy, pred=docs_strategy)
def test_flat_equals_scikit_learn_micro(gold, pred):
    docs = sorted(set(gold) | set(pred))
    if not docs:
        return
    mlb = MultiLabelBinarizer(classes=POOL)
    y_true = mlb.fit_transform([gold.get(d, set()) for d in docs])
    y_pred = mlb.transform([pred.get(d, set()) for d in docs])
    p, r, f, _ = precision_recall_fscore_support(y_true, y_pred, average="micro", zero_division=0)
    s = score_pairs(pairs(gold), pairs(pred)).score("flat")
    assert s.precision == pytest.approx(p)
    assert s.recall == pytest.approx(r)
    assert s.f1 == pytest.approx(f)


@SETTINGS
@given(gold=docs_strategy, pred=docs_strategy)
def test_flat_macro_f1_equals_scikit_learn_over_codes_in_play(gold, pred):
    docs = sorted(set(gold) | set(pred))
    in_play = sorted(set().union(*gold.values(), *pred.values())) if docs else []
    if not in_play:
        return
    mlb = MultiLabelBinarizer(classes=in_play)
    y_true = mlb.fit_transform([gold.get(d, set()) for d in docs])
    y_pred = mlb.transform([pred.get(d, set()) for d in docs])
    # per code as a binary problem (a one-column indicator matrix would not be read as multilabel)
    per_code = np.array(
        [
            precision_recall_fscore_support(y_true[:, j], y_pred[:, j], average="binary", zero_division=0)[:3]
            for j in range(len(in_play))
        ]
    )
    p, r, f = per_code.mean(axis=0)
    m = score_pairs(pairs(gold), pairs(pred)).macro_table.iloc[0]
    assert m.measure == "flat" and m.n_codes == len(in_play)
    assert m.macro_precision == pytest.approx(p)
    assert m.macro_recall == pytest.approx(r)
    assert m.macro_f1 == pytest.approx(f)
    assert m.macro_f1_of_means == pytest.approx(2 * p * r / (p + r) if p + r else 0.0)


def test_document_table_sums_to_level_table():
    gold = [("a", "401.9"), ("a", "428.0"), ("b", "V45.81"), ("b", "39.95")]
    pred = [("a", "401.1"), ("a", "428.0"), ("a", "428.22"), ("c", "96.71")]
    ev = score_pairs(gold, pred)
    docs = ev.documents
    assert list(docs.doc_id) == ["a", "b", "c"]
    for level in ev.levels:
        s = ev.score("cophe", level)
        assert docs[f"{level}_tp"].sum() == s.tp
        assert docs[f"{level}_fp"].sum() == s.fp
        assert docs[f"{level}_fn"].sum() == s.fn
        t = ev.score("set_based", level)
        assert docs[f"{level}_set_tp"].sum() == t.tp
    assert docs.flat_tp.tolist() == [1, 0, 0]
    assert docs.n_gold.tolist() == [2, 2, 0]
