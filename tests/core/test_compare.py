"""Two runs against one gold standard: per-node and per-level B − A, and the documents they disagree on."""

from __future__ import annotations

import pytest
from pytest import approx

from cophe_core import score_files
from cophe_core.breakdown.compare import (
    HEADLINE_COLUMNS,
    compare_nodes,
    delta_subtree,
    disagreements,
    figure_parts,
    headlines,
    level_deltas,
    levels_side_by_side,
)
from tests.conftest import long_csv

# One document. Gold {401.9, 428.0}; A over-codes the 401 family, B misses 428.0.
GOLD = [("d1", "401.9"), ("d1", "428.0")]
RUN_A = [("d1", "401.9"), ("d1", "401.1"), ("d1", "428.0")]
RUN_B = [("d1", "401.9")]


def two_runs(gold, a, b):
    s = score_files(long_csv(gold), {"A": long_csv(a), "B": long_csv(b)}, ontology="icd9")
    assert s.corpus.rejected.empty
    return s.evaluation("A"), s.evaluation("B")


@pytest.fixture(scope="module")
def pair():
    return two_runs(GOLD, RUN_A, RUN_B)


def test_compare_nodes_covers_nodes_of_either_run(pair):
    """Rows are the union of the nodes in play in A and in B, with their ontology parent."""
    t = compare_nodes(*pair).set_index("code")
    assert set(t.index) == {"401-405", "420-429", "401", "428", "401.1", "401.9", "428.0"}
    assert t.loc["401.1", "parent"] == t.loc["401", "node"]
    assert t.loc["401.1", "level"] == "e1" and t.loc["401-405", "level"] == "block"


def test_compare_nodes_balance_is_fp_minus_fn_over_total(pair):
    """Balance = (FP − FN)/(TP + FP + FN): + for over-prediction, − for under-prediction."""
    t = compare_nodes(*pair).set_index("code")
    # 401 (e0): A x=2, y=1 -> TP 1, FP 1, FN 0 -> (1 - 0)/2 = +0.5; B x=1, y=1 -> 0
    r = t.loc["401"]
    assert (r.a_tp, r.a_fp, r.a_fn, r.b_tp, r.b_fp, r.b_fn) == (1, 1, 0, 1, 0, 0)
    assert (r.a_balance, r.b_balance) == approx((0.5, 0.0))
    # 428 (e0): A x=1, y=1 -> 0; B x=0, y=1 -> TP 0, FP 0, FN 1 -> (0 - 1)/1 = -1
    r = t.loc["428"]
    assert (r.a_balance, r.b_balance) == approx((0.0, -1.0))
    # 401.1: predicted by A only, not in gold -> FP 1 -> +1; absent from B -> all counts 0, balance 0
    r = t.loc["401.1"]
    assert (r.a_fp, r.b_tp, r.b_fp, r.b_fn) == (1, 0, 0, 0)
    assert (r.a_balance, r.b_balance) == approx((1.0, 0.0))


def test_compare_nodes_deltas_are_b_minus_a(pair):
    """delta_f1 and delta_balance are B − A."""
    t = compare_nodes(*pair).set_index("code")
    # 401: A P=1/2, R=1, F1=2/3; B F1=1 -> delta_f1 = +1/3; balance 0 - 0.5 = -0.5
    assert (t.loc["401", "a_f1"], t.loc["401", "b_f1"]) == approx((2 / 3, 1.0))
    assert t.loc["401", "delta_f1"] == approx(1 / 3)
    assert t.loc["401", "delta_balance"] == approx(-0.5)
    # 428: A F1=1, B F1=0 -> delta_f1 = -1; balance -1 - 0 = -1
    assert t.loc["428", "delta_f1"] == approx(-1.0)
    assert t.loc["428", "delta_balance"] == approx(-1.0)
    # 401.1: A F1=0 (FP only), B nothing -> delta_f1 0; balance 0 - 1 = -1
    assert t.loc["401.1", "delta_f1"] == approx(0.0)
    assert t.loc["401.1", "delta_balance"] == approx(-1.0)


def test_delta_subtree_recomputes_b_minus_a_on_the_root(pair):
    """The tree view's root sums the blocks' counts, then takes B − A of the recomputed rates."""
    t = delta_subtree(*pair).set_index("id")
    # root = 401-405 + 420-429. A: (1,1,0) + (1,0,0) = TP 2, FP 1, FN 0 -> F1 0.8, balance 1/3
    #                          B: (1,0,0) + (0,0,1) = TP 1, FP 0, FN 1 -> F1 2/3, balance -1/2
    root = t.loc["root"]
    assert (root.delta_f1, root.delta_balance) == approx((2 / 3 - 0.8, -1 / 2 - 1 / 3))
    block = t[t.code == "401-405"].iloc[0]
    assert (block.delta_f1, block.delta_balance) == approx((1 / 3, -0.5))


def test_level_deltas_are_b_minus_a(pair):
    """Per measure and level: both runs' P/R/F1 and B − A, worked by hand."""
    d = level_deltas(*pair).set_index(["measure", "level"])
    # All codes are at e1. CoPHE e1, e0 and block alike:
    #   A TP 2, FP 1, FN 0 -> P 2/3, R 1, F1 0.8;  B TP 1, FP 0, FN 1 -> P 1, R 1/2, F1 2/3
    for level in ("e1", "e0", "block", "overall"):
        r = d.loc[("cophe", level)]
        assert (r.a_precision, r.a_recall, r.a_f1) == approx((2 / 3, 1.0, 0.8))
        assert (r.b_precision, r.b_recall, r.b_f1) == approx((1.0, 0.5, 2 / 3))
        assert (r.delta_precision, r.delta_recall, r.delta_f1) == approx((1 / 3, -0.5, 2 / 3 - 0.8))
    # set-based e0: A {401, 428} both shared -> TP 2, F1 1; B TP 1, FN 1 -> F1 2/3: delta -1/3
    assert d.loc[("set_based", "e0"), "delta_f1"] == approx(-1 / 3)
    # set-based overall: A e1 2/1/0 + e0 2/0/0 + block 2/0/0 = 6/1/0 -> F1 12/13; B 3/0/3 -> 2/3
    assert d.loc[("set_based", "overall"), "delta_f1"] == approx(2 / 3 - 12 / 13)
    # e2: no codes on either side -> 0 everywhere
    assert d.loc[("cophe", "e2"), ["a_f1", "b_f1", "delta_f1"]].tolist() == [0, 0, 0]


def test_levels_side_by_side_stacks_runs(pair):
    """One block of levels_table rows per run, with the run name first."""
    t = levels_side_by_side({"A": pair[0], "B": pair[1]})
    assert t.columns[0] == "run" and list(t.run.unique()) == ["A", "B"]
    flat = t[t.measure == "flat"].set_index("run")
    # flat: A TP 2, FP 1, FN 0; B TP 1, FP 0, FN 1
    assert flat.loc["A", ["tp", "fp", "fn"]].tolist() == [2, 1, 0]
    assert flat.loc["B", ["tp", "fp", "fn"]].tolist() == [1, 0, 1]


# Four documents for disagreements:
#   d1: A predicts 401.1 and 428.0 that B does not (2 codes disagreed)
#   d2: B predicts 250.01 that A does not (1 code)
#   d3: A and B identical (dropped)
#   d4: A predicts 584.9, B predicts 401.9 instead (2 codes)
MULTI_GOLD = GOLD + [("d2", "250.00"), ("d3", "486"), ("d4", "584.9")]
MULTI_A = RUN_A + [("d2", "250.00"), ("d3", "486"), ("d4", "584.9")]
MULTI_B = RUN_B + [("d2", "250.00"), ("d2", "250.01"), ("d3", "486"), ("d4", "401.9")]


@pytest.fixture(scope="module")
def multi():
    return two_runs(MULTI_GOLD, MULTI_A, MULTI_B)


def test_disagreements_lists_codes_and_f1_per_document(multi):
    """Codes only one run predicts, and each run's CoPHE F1 at the level, B − A."""
    d = disagreements(*multi, level="e0").set_index("doc_id")
    assert "d3" not in d.index
    assert d.loc["d1", "only_a"] == "401.1, 428.0" and d.loc["d1", "only_b"] == ""
    assert d.loc["d2", "only_a"] == "" and d.loc["d2", "only_b"] == "250.01"
    assert d.loc["d4", "only_a"] == "584.9" and d.loc["d4", "only_b"] == "401.9"
    # d1 at e0: A 401 x2/y1 (TP1 FP1) + 428 TP1 -> F1 0.8; B 401 TP1 + 428 FN1 -> 2/3
    assert (d.loc["d1", "a_f1"], d.loc["d1", "b_f1"], d.loc["d1", "delta_f1"]) == approx(
        (0.8, 2 / 3, 2 / 3 - 0.8)
    )
    # d2 at e0: A 250 TP1 -> 1; B 250 x2/y1 -> P 1/2, R 1, F1 2/3
    assert (d.loc["d2", "a_f1"], d.loc["d2", "b_f1"], d.loc["d2", "delta_f1"]) == approx((1.0, 2 / 3, -1 / 3))
    # d4 at e0: A 584 TP1 -> 1; B 584 FN1, 401 FP1 -> 0
    assert (d.loc["d4", "a_f1"], d.loc["d4", "b_f1"], d.loc["d4", "delta_f1"]) == approx((1.0, 0.0, -1.0))


def test_disagreements_order_and_top(multi):
    """Most codes disagreed first; ties by the larger |B − A| F1; identical documents dropped."""
    d = disagreements(*multi, level="e0")
    # d4: 2 codes (584.9 vs 401.9), |delta| 1; d1: 2 codes, |delta| 2/15; d2: 1 code
    assert d.doc_id.tolist() == ["d4", "d1", "d2"]
    assert d.codes_disagreed.tolist() == [2, 2, 1]
    assert disagreements(*multi, level="e0", top=1).doc_id.tolist() == ["d4"]


def test_headlines_are_the_overall_scores_with_their_intervals(pair):
    """One row per run, each column the run's overall score; with bootstrap tables, their bounds."""
    from cophe_core.breakdown.stats import bootstrap

    a, b = pair
    t = headlines({"A": a, "B": b})
    assert t.index.tolist() == ["A", "B"] and t.columns.tolist() == list(HEADLINE_COLUMNS)
    for run, ev in (("A", a), ("B", b)):
        for col, (measure, stat) in HEADLINE_COLUMNS.items():
            assert t.loc[run, col] == approx(getattr(ev.score(measure), stat))
    ci = {"A": bootstrap(a, n_resamples=50, seed=0)}
    t = headlines({"A": a, "B": b}, ci)
    row = ci["A"].set_index("figure").loc["set_based overall f1"]
    assert (t.loc["A", "set_based_f1_low"], t.loc["A", "set_based_f1_high"]) == approx((row.low, row.high))
    assert t.loc["A", "flat_f1_low"] == approx(ci["A"].set_index("figure").loc["flat f1", "low"])
    assert t.loc["B"].filter(like="_low").isna().all()  # no table for B: no interval, not a made-up one


def test_figure_parts_read_every_bootstrap_figure(pair):
    from cophe_core.breakdown.stats import bootstrap

    for name in bootstrap(pair[0], n_resamples=10, with_suite=True).figure:
        measure, level, stat = figure_parts(name)
        assert " ".join(p for p in (measure, level, stat if stat != "value" else None) if p) == name
