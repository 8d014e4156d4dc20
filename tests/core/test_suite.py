"""The metric suite of seed 004: hand-worked values, PyEvALL's ICM, and properties."""

from __future__ import annotations

import json
import math
from pathlib import Path

import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st

from cophe_core import score_files
from cophe_core.ontology.custom import hierarchy_from_edges
from cophe_core.suite import suite
from tests.conftest import long_csv

GOLD = [("d1", "401.9"), ("d1", "428.0"), ("d2", "250.00")]
PRED = [("d1", "401.9"), ("d1", "427.31"), ("d2", "250.00"), ("d3", "584.9")]


@pytest.fixture(scope="module")
def hand():
    ev = score_files(long_csv(GOLD), {"r": long_csv(PRED)}, ontology="icd9").evaluation("r")
    return suite(ev)


@pytest.mark.parametrize("metric,expected", [
    ("eb_jacc", (1 / 3 + 1 + 0) / 3),
    ("eb_hamm", (2 / 3 + 0 + 1 / 3) / 3),  # |s xor g| / |C_g|, C_g = 3 gold codes
    ("eb_subacc", 1 / 3),
    ("eb_f", (0.5 + 1 + 0) / 3),
    ("lb_acc", (1 + 2 / 3 + 2 / 3 + 1 + 2 / 3) / 5),
    ("lb_f", 2 / 5),
    # d1: 7 gold and 8 predicted ancestor-augmented nodes, 5 shared (incl. block 420-429 and chapter)
    ("hf", (10 / 15 + 1 + 0) / 3),
])
def test_hand_worked(hand, metric, expected):
    assert hand[metric] == pytest.approx(expected)


def test_propensity_f_by_its_formula(hand):
    n = 3  # documents
    c = (math.log(n) - 1) * (1.5 + 1) ** 0.55

    def inv(nc):
        return 1 + c * math.exp(-0.55 * math.log(nc + 1.5))

    empty = inv(n)
    counts = {"401.9": 1, "428.0": 1, "250.00": 1, "427.31": 0, "584.9": 0}

    def propf(s, g):
        hit = sum(inv(counts[x]) for x in s & g) + empty
        p = hit / (sum(inv(counts[x]) for x in s) + empty)
        r = hit / (sum(inv(counts[x]) for x in g) + empty)
        return 2 * p * r / (p + r)

    docs = [({"401.9", "427.31"}, {"401.9", "428.0"}), ({"250.00"}, {"250.00"}), ({"584.9"}, set())]
    assert hand["prop_f"] == pytest.approx(sum(propf(s, g) for s, g in docs) / 3)


def _ontology_from_nested(tree: dict):
    edges = [("@", "", "", 1)]

    def walk(sub, parent):
        items = sub.items() if isinstance(sub, dict) else ((k, []) for k in sub)
        for name, kids in items:
            edges.append((name, parent, "", len(edges) + 1))
            walk(kids, name)

    walk(tree, "@")
    return hierarchy_from_edges(edges, name="pyevall")


FIXTURE = json.loads((Path(__file__).parents[1] / "fixtures" / "pyevall_icm.json").read_text())


@pytest.mark.parametrize("case", FIXTURE["cases"], ids=lambda c: f"case{c['case']}")
def test_icm_equals_pyevall(case):
    onto = _ontology_from_nested(case["hierarchy"])
    gold = long_csv([(d, c) for d, codes in case["gold"].items() for c in codes])
    pred = long_csv([(d, c) for d, codes in case["pred"].items() for c in codes])
    s = score_files(gold, {"r": pred}, ontology=onto)
    r = suite(s.evaluation("r"))
    assert r["icm"] == pytest.approx(case["icm"], abs=1e-9)
    assert r["icm_norm"] == pytest.approx(case["icm_norm"], abs=1e-9)


codes = st.sampled_from(["401.9", "401.1", "428.0", "428.22", "250.00", "250.01", "V45.81", "39.95", "96.71"])
labels = st.dictionaries(st.sampled_from([f"d{i}" for i in range(8)]), st.sets(codes, min_size=1, max_size=5),
                         min_size=1, max_size=8)


@settings(max_examples=40, deadline=None)
@given(gold=labels)
def test_icm_norm_of_the_gold_against_itself_is_one(gold):
    pairs = long_csv([(d, c) for d, cs in gold.items() for c in sorted(cs)])
    r = suite(score_files(pairs, {"g": pairs}, ontology="icd9").evaluation("g"))
    assume(len({frozenset(c) for c in gold.values()}) > 1)  # else the gold carries no information
    assert r["icm_norm"] == pytest.approx(1.0)
    assert r["eb_f"] == r["hf"] == r["eb_jacc"] == r["eb_subacc"] == 1.0 and r["eb_hamm"] == 0.0


@settings(max_examples=40, deadline=None)
@given(gold=labels)
def test_an_empty_prediction_scores_below_the_gold_itself(gold):
    pairs = long_csv([(d, c) for d, cs in gold.items() for c in sorted(cs)])
    assume(len({frozenset(c) for c in gold.values()}) > 1)
    s = score_files(pairs, {"g": pairs, "empty": b"doc_id,code\n"}, ontology="icd9")
    perfect, empty = suite(s.evaluation("g")), suite(s.evaluation("empty"))
    assert empty["icm"] < perfect["icm"] and empty["icm_norm"] < perfect["icm_norm"]
    assert empty["hf"] < perfect["hf"] and empty["prop_f"] < perfect["prop_f"]
