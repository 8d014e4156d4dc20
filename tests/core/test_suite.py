"""The metric suite of seed 004: hand-worked values, PyEvALL's ICM, and properties."""

from __future__ import annotations

import json
import math
from pathlib import Path

import numpy as np
import pytest
import scipy.sparse as sp
from hypothesis import assume, given, settings
from hypothesis import strategies as st

from cophe_core import score_files
from cophe_core.metrics import evaluate
from cophe_core.ontology.custom import hierarchy_from_edges
from cophe_core.scoring.labels import NothingScorable
from cophe_core.scoring.suite import icm_left_out, icm_note, information_content, per_document, suite
from tests.conftest import examples, long_csv

GOLD = [("d1", "401.9"), ("d1", "428.0"), ("d2", "250.00")]
PRED = [("d1", "401.9"), ("d1", "427.31"), ("d2", "250.00"), ("d3", "584.9")]


@pytest.fixture(scope="module")
def hand():
    ev = score_files(long_csv(GOLD), {"r": long_csv(PRED)}, ontology="icd9").evaluation("r")
    return suite(ev)


@pytest.mark.parametrize(
    "metric,expected",
    [
        ("eb_jacc", (1 / 3 + 1 + 0) / 3),
        ("eb_hamm", (2 / 3 + 0 + 1 / 3) / 3),  # |s xor g| / |C_g|, C_g = 3 gold codes
        ("eb_subacc", 1 / 3),
        ("eb_f", (0.5 + 1 + 0) / 3),
        ("lb_acc", (1 + 2 / 3 + 2 / 3 + 1 + 2 / 3) / 5),
        ("lb_f", 2 / 5),
        # d1: 7 gold and 8 predicted ancestor-augmented nodes, 5 shared (incl. block 420-429 and chapter)
        ("hf", (10 / 15 + 1 + 0) / 3),
    ],
)
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
    """Cases 30-49 hold prediction-only ids and empty gold entries, which PyEvALL leaves out."""
    onto = _ontology_from_nested(case["hierarchy"])
    # an empty gold entry: a gold row with an empty code, rejected, so the document has no gold code
    gold = long_csv([(d, c) for d, codes in case["gold"].items() for c in (codes or [""])])
    pred = long_csv([(d, c) for d, codes in case["pred"].items() for c in codes])
    ev = score_files(gold, {"r": pred}, ontology=onto).evaluation("r")
    r = suite(ev)
    assert r["icm"] == pytest.approx(case["icm"], abs=1e-9)
    assert r["icm_norm"] == pytest.approx(case["icm_norm"], abs=1e-9)
    assert icm_left_out(ev) == case["no_gold"]


def test_the_fixture_holds_documents_without_gold():
    """Else the cases above could not tell the two treatments apart."""
    late = FIXTURE["cases"][30:]
    assert len(late) == 20 and sum(c["no_gold"] > 0 for c in late) >= 15
    assert any(set(c["pred"]) - set(c["gold"]) for c in late)  # prediction-only ids
    assert any(
        v == [] and d in c["pred"] for c in late for d, v in c["gold"].items()
    )  # empty gold, predicted
    assert any(
        v == [] and d not in c["pred"] for c in late for d, v in c["gold"].items()
    )  # and not predicted


codes = st.sampled_from(["401.9", "401.1", "428.0", "428.22", "250.00", "250.01", "V45.81", "39.95", "96.71"])
labels = st.dictionaries(
    st.sampled_from([f"d{i}" for i in range(8)]),
    st.sets(codes, min_size=1, max_size=5),
    min_size=1,
    max_size=8,
)


@settings(max_examples=examples(40), deadline=None)
@given(gold=labels)
def test_icm_norm_of_the_gold_against_itself_is_one(gold):
    pairs = long_csv([(d, c) for d, cs in gold.items() for c in sorted(cs)])
    r = suite(score_files(pairs, {"g": pairs}, ontology="icd9").evaluation("g"))
    assume(len({frozenset(c) for c in gold.values()}) > 1)  # else the gold carries no information
    assert r["icm_norm"] == pytest.approx(1.0)
    assert r["eb_f"] == r["hf"] == r["eb_jacc"] == r["eb_subacc"] == 1.0 and r["eb_hamm"] == 0.0


@settings(max_examples=examples(40), deadline=None)
@given(gold=labels)
def test_an_empty_prediction_scores_below_the_gold_itself(gold):
    pairs = long_csv([(d, c) for d, cs in gold.items() for c in sorted(cs)])
    assume(len({frozenset(c) for c in gold.values()}) > 1)
    s = score_files(pairs, {"g": pairs, "empty": b"doc_id,code\n"}, ontology="icd9")
    perfect, empty = suite(s.evaluation("g")), suite(s.evaluation("empty"))
    assert empty["icm"] < perfect["icm"] and empty["icm_norm"] < perfect["icm_norm"]
    assert empty["hf"] < perfect["hf"] and empty["prop_f"] < perfect["prop_f"]


# ---------------------------------------------------------------- documents without gold codes (hand-worked)
L3 = math.log2(3)


def _ab_tree():
    """@ → A → {A0, A1}, @ → B → {B0, B1}."""
    return hierarchy_from_edges(
        [
            ("@", "", "", 1),
            ("A", "@", "", 2),
            ("A0", "A", "", 3),
            ("A1", "A", "", 4),
            ("B", "@", "", 5),
            ("B0", "B", "", 6),
            ("B1", "B", "", 7),
        ],
        name="ab",
    )


AB_GOLD = [("d1", "A0"), ("d2", "A1"), ("d2", "B0"), ("d3", "B")]
AB_PRED = [("d1", "A0"), ("d2", "A0"), ("d3", "B1")]


@pytest.fixture(scope="module")
def ab():
    """The gold and run above, plus a prediction-only d4 and a gold d5 whose only code is rejected."""
    gold = long_csv(AB_GOLD + [("d5", "")])
    pred = long_csv(AB_PRED + [("d4", "A"), ("d4", "B0"), ("d5", "B1")])
    return score_files(gold, {"r": pred}, ontology=_ab_tree()).evaluation("r")


def test_information_content_counts_gold_documents_only(ab):
    # 3 gold documents: P(A) = 2/3 (d1, d2), P(B) = 2/3 (d2, d3), each leaf 1/3 (B1 unseen: 1/3), P(@) = 1;
    # counting d4 and d5 would give P(A) = 2/5 and P(@) = 3/5
    ic = information_content(ab)
    expected = {"@": 0.0, "A": L3 - 1, "B": L3 - 1, "A0": L3, "A1": L3, "B0": L3, "B1": L3}
    assert {k: ic[ab.ontology.codes[k]] for k in expected} == pytest.approx(expected, abs=1e-12)


def test_icm_leaves_out_documents_without_gold_codes(ab):
    per = per_document(ab).set_index("doc_id")
    assert list(per.icm_scored) == [True, True, True, False, False]
    # d1: s = g = {A0}, IC = log2 3, ICM = (2 + 2 - 3) log2 3
    # d2: IC({A0}) = log2 3, IC({A1, B0}) = 2 log2 3, IC({A0, A1, B0}) = (log2 3 - 1) + 1 + 1 + log2 3
    # d3: IC({B1}) = log2 3, IC({B}) = log2 3 - 1, IC({B, B1}) = log2 3
    assert per.icm.iloc[:3].tolist() == pytest.approx([L3, -3.0, L3 - 2], abs=1e-12)
    assert per.icm_gold.iloc[:3].tolist() == pytest.approx([L3, 2 * L3, L3 - 1], abs=1e-12)
    assert per.icm.iloc[3:].isna().all() and per.icm_gold.iloc[3:].isna().all()
    r = suite(ab)
    icm, icm_gold = (2 * L3 - 5) / 3, (4 * L3 - 1) / 3
    assert r["icm"] == pytest.approx(icm, abs=1e-12)  # PyEvALL 0.2.11: -0.6100249995192287
    assert r["icm_norm"] == pytest.approx((icm + icm_gold) / (2 * icm_gold), abs=1e-12)  # 0.3286398496615947
    assert r["icm_norm"] == pytest.approx((3 * L3 - 3) / (4 * L3 - 1), abs=1e-12)
    # the other metrics still average over all five documents: only d1 is an exact match
    assert r["eb_subacc"] == pytest.approx(1 / 5)
    # and the figures equal those of the three gold documents alone
    alone = suite(
        score_files(long_csv(AB_GOLD), {"r": long_csv(AB_PRED)}, ontology=_ab_tree()).evaluation("r")
    )
    assert (r["icm"], r["icm_norm"]) == pytest.approx((alone["icm"], alone["icm_norm"]), abs=1e-12)


def test_the_left_out_documents_are_counted_and_worded(ab):
    assert icm_left_out(ab) == 2
    assert icm_note(ab) == "ICM and ICM-Norm leave out 2 documents with no gold codes, as PyEvALL does"
    full = score_files(long_csv(AB_GOLD), {"r": long_csv(AB_PRED)}, ontology=_ab_tree()).evaluation("r")
    assert icm_left_out(full) == 0 and icm_note(full) is None


def test_no_gold_code_at_all_leaves_icm_undefined():
    with pytest.raises(NothingScorable):  # from files, a gold standard without a code is an error
        score_files(b"doc_id,code\nd1,\n", {"r": long_csv([("d1", "A0")])}, ontology=_ab_tree())
    onto = _ab_tree()
    pred = sp.csr_matrix(([1], ([0], [onto.codes["A0"]])), shape=(1, onto.n_nodes), dtype=np.int8)
    ev = evaluate(sp.csr_matrix((1, onto.n_nodes), dtype=np.int8), pred, onto, docs=np.array(["d1"]))
    r = suite(ev)
    assert math.isnan(r["icm"]) and math.isnan(r["icm_norm"]) and icm_left_out(ev) == 1


# ---------------------------------------------------------------- DAGs: root paths follow first parents
def _dag():
    """r → X → {c, x1}, r → Y → {c, y1}: c has first parent X, second parent Y."""
    return hierarchy_from_edges(
        [
            ("r", "", "", 1),
            ("X", "r", "", 2),
            ("Y", "r", "", 3),
            ("c", "X", "", 4),
            ("c", "Y", "", 5),
            ("x1", "X", "", 6),
            ("y1", "Y", "", 7),
        ],
        name="dag",
    )


DAG_GOLD = [("d1", "c"), ("d2", "y1"), ("d3", "x1"), ("d4", "x1")]
DAG_PRED = [("d1", "c"), ("d2", "c"), ("d3", "y1"), ("d4", "x1")]


@pytest.fixture(scope="module")
def dag():
    ev = score_files(long_csv(DAG_GOLD), {"r": long_csv(DAG_PRED)}, ontology=_dag()).evaluation("r")
    assert ev.ontology.is_dag
    return ev


def test_dag_information_content_counts_descendants_along_every_path(dag):
    # P(X) = 3/4 (d1 through c, d3, d4), P(Y) = 2/4 (d1 through its second parent, d2), P(c) = 1/4,
    # P(x1) = 2/4, P(y1) = 1/4
    ic = information_content(dag)
    expected = {"r": 0.0, "X": 2 - L3, "Y": 1.0, "c": 2.0, "x1": 1.0, "y1": 2.0}
    assert {k: ic[dag.ontology.codes[k]] for k in expected} == pytest.approx(expected, abs=1e-12)


def test_dag_per_document_icm_and_hf(dag):
    # Weights IC(v) - IC(first parent): X 2 - log2 3, Y 1, c log2 3, x1 log2 3 - 1, y1 1.
    # The root path of c is {c, X, r} (first parent), so IC({c}) = 2, IC({y1}) = 2, IC({x1}) = 1.
    # d1: s = g = {c}: 2 + 2 - 3 = 1 times 2 -> 2
    # d2: s = {c}, g = {y1}: union paths {c, X, y1, Y} -> 4; 2·2 + 2·2 - 3·4 = -4
    # d3: s = {y1}, g = {x1}: union {y1, Y, x1, X} -> 3; 2·2 + 2·1 - 3·3 = -3
    # d4: s = g = {x1}: 1
    # (the full closure would put Y on c's path: IC({c}) = 3, d1 3, d2 -2, and ICM -1/4)
    per = per_document(dag)
    assert per.icm.tolist() == pytest.approx([2.0, -4.0, -3.0, 1.0], abs=1e-12)
    assert per.icm_gold.tolist() == pytest.approx([2.0, 2.0, 1.0, 1.0], abs=1e-12)
    # HF on sets augmented with every ancestor (all paths): d2 {c, X, Y, r} vs {y1, Y, r}: 2·2 / (4 + 3);
    # d3 {y1, Y, r} vs {x1, X, r}: 2·1 / 6
    assert per.hf.tolist() == pytest.approx([1.0, 4 / 7, 1 / 3, 1.0], abs=1e-12)


def test_dag_suite(dag):
    r = suite(dag)
    assert r["icm"] == pytest.approx(-1.0, abs=1e-12)  # (2 - 4 - 3 + 1) / 4
    assert r["icm_norm"] == pytest.approx((-1.0 + 1.5) / (2 * 1.5), abs=1e-12)  # ICM(g, g) = 6 / 4
    assert r["hf"] == pytest.approx((1 + 4 / 7 + 1 / 3 + 1) / 4, abs=1e-12)
    assert r["eb_f"] == pytest.approx(0.5) and r["eb_subacc"] == pytest.approx(0.5)


def test_the_cli_warns_when_icm_leaves_documents_out(tmp_path, capsys):
    from cophe_core.cli import main

    g, p = tmp_path / "gold.csv", tmp_path / "pred.csv"
    g.write_text("doc_id,code\n1,401.9\n2,428.0\n3,250.00\n")
    p.write_text("doc_id,code\n1,401.9\n2,428.0\n4,584.9\n5,401.1\n")  # 4 and 5: prediction-only
    note = "ICM and ICM-Norm leave out 2 documents with no gold codes, as PyEvALL does"
    assert main(["score", "--gold", str(g), "--pred", str(p), "--metrics", "suite", "--format", "json"]) == 0
    out = capsys.readouterr()
    result = json.loads(out.out)
    assert note in result["warnings"] and f"cophe: warning: {note}" in out.err
    assert result["documents"] == 5
    assert main(["score", "--gold", str(g), "--pred", str(p), "--format", "json"]) == 0
    assert note not in json.loads(capsys.readouterr().out)["warnings"]  # no ICM, no note
