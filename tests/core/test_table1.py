"""The worked example of the CoPHE paper, Table 1 (seed 000; SPEC §3)."""

from __future__ import annotations

import pytest

from tests.conftest import score_pairs

PRED = ["364.11", "364.21", "364.3", "364.41"]
GOLD = ["364.11", "364.24", "364.9"]

# measure, level, TP, FP, FN, P, R, F1 (exact arithmetic; the paper prints 28.4 and 63.1)
TABLE_1 = [
    ("flat", "leaf", 1, 3, 2, 0.250, 0.333, 0.286),
    ("set_based", "e2", 1, 2, 1, 0.333, 0.500, 0.400),
    ("set_based", "e1", 2, 2, 1, 0.500, 0.667, 0.571),
    ("set_based", "e0", 1, 0, 0, 1.000, 1.000, 1.000),
    ("set_based", "overall", 4, 4, 2, 0.500, 0.667, 0.571),
    ("cophe", "e2", 1, 2, 1, 0.333, 0.500, 0.400),
    ("cophe", "e1", 2, 2, 1, 0.500, 0.667, 0.571),
    ("cophe", "e0", 3, 1, 0, 0.750, 1.000, 0.857),
    ("cophe", "overall", 6, 5, 2, 0.545, 0.750, 0.632),
]


@pytest.fixture(scope="module")
def table1():
    return score_pairs([("d", c) for c in GOLD], [("d", c) for c in PRED], max_level="e0")


@pytest.mark.parametrize("measure,level,tp,fp,fn,p,r,f1", TABLE_1)
def test_table_1(table1, measure, level, tp, fp, fn, p, r, f1):
    s = table1.score(measure, level)
    assert (s.tp, s.fp, s.fn) == (tp, fp, fn)
    assert s.precision == pytest.approx(p, abs=5e-4)
    assert s.recall == pytest.approx(r, abs=5e-4)
    assert s.f1 == pytest.approx(f1, abs=5e-4)


def test_table_1_levels_stop_at_max_level(table1):
    assert table1.levels == ["e2", "e1", "e0"]
    assert set(table1.levels_table.level) == {"leaf", "e2", "e1", "e0", "overall"}


def test_node_364_over_predicted(table1, icd9):
    nodes = table1.nodes.set_index("code")
    row = nodes.loc["364"]
    assert (row.gold, row.predicted, row.tp, row.fp, row.fn) == (3, 4, 3, 1, 0)
    assert (row.set_tp, row.set_fp, row.set_fn) == (1, 0, 0)
    assert row.docs_over == 1 and row.docs_under == 0
    assert row.balance == pytest.approx(0.25)
    docs = table1.node_documents(icd9.codes["364"])
    assert docs.gold_codes[0] == GOLD[:1] + ["364.24", "364.9"]
    assert docs.predicted_codes[0] == PRED
