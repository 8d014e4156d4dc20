"""Probability outputs: the one decision rule, P@k/R@k, AUC against scikit-learn, threshold curves.

The decision rule (cophe_core.scoring.scores): ``threshold=t`` predicts the codes scoring at least t (a finite
0 < t ≤ 1); ``top_k=k`` each document's k best positive scores, ties broken by the canonical code string
ascending; a (document, code) given twice keeps its highest score.
"""

from __future__ import annotations

import io
import json
import re
import subprocess
import sys

import numpy as np
import pandas as pd
import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st
from sklearn.metrics import roc_auc_score

from cophe_core import InputError, read_labels, score_labels
from cophe_core.api import decide_run
from cophe_core.cli import main
from cophe_core.inputs.readers import RawLabels, read_input
from cophe_core.ontology import icd9_ontology
from cophe_core.ontology.custom import load_hierarchy
from cophe_core.scoring.decisions import check_rule
from cophe_core.scoring.scores import read_scores, score_run, tune_threshold
from tests.conftest import SAMPLE, examples

GOLD = b"doc_id,code\n1,401.9\n1,428.0\n2,250.00\n3,584.9\n"
SCORES = b"""doc_id,code,score
1,401.9,0.9
1,401.1,0.8
1,428.0,0.3
1,427.31,0.2
2,250.01,0.7
2,250.00,0.6
3,96.71,0.4
"""


@pytest.fixture(scope="module")
def run():
    return score_run(read_labels(GOLD, name="g.csv"), read_scores(SCORES, name="s.csv"), icd9_ontology())


def keys(run, matrix) -> set[tuple[str, str]]:
    """(document, canonical code) of each decision."""
    coo = matrix.tocoo()
    return {(str(run.docs[r]), str(run.ontology.keys[c])) for r, c in zip(coo.row, coo.col)}


def test_decisions_by_threshold_and_top_k(run):
    assert sorted(c for _, c in keys(run, run.decide(threshold=0.6))) == [
        "250.00",
        "250.01",
        "401.1",
        "401.9",
    ]
    assert sorted(c for _, c in keys(run, run.decide(top_k=1))) == ["250.01", "401.9", "96.71"]
    # "at least": a score equal to the threshold is predicted
    assert ("1", "428.0") in keys(run, run.decide(threshold=0.3))


@pytest.mark.parametrize(
    "rule,fragment",
    [
        ({}, "exactly one"),
        ({"threshold": 0.5, "top_k": 3}, "exactly one"),
        ({"threshold": float("nan")}, "threshold is nan"),
        ({"threshold": float("inf")}, "outside (0, 1]"),
        ({"threshold": 0}, "outside (0, 1]"),
        ({"threshold": -0.1}, "outside (0, 1]"),
        ({"threshold": 1.5}, "outside (0, 1]"),
        ({"threshold": True}, "not a number"),
        ({"threshold": "0.5"}, "not a number"),
        ({"top_k": 0}, "at least 1"),
        ({"top_k": 2.5}, "whole number"),
    ],
)
def test_one_rule_for_the_threshold_everywhere(run, rule, fragment):
    """The same validation, with the same message, on every path (it was: decide accepted 0 and nan)."""
    with pytest.raises(InputError, match=re.escape(fragment)) as direct:
        run.decide(**rule)
    with pytest.raises(InputError, match=re.escape(fragment)):
        check_rule(**rule)
    if rule:
        with pytest.raises(InputError) as via_api:
            score_labels(read_input(GOLD), {"m": read_input(SCORES)}, ontology="icd9", **rule)
        assert str(via_api.value) == str(direct.value)


def test_threshold_one_and_limits():
    assert check_rule(threshold=1) == ("threshold", 1.0)
    assert check_rule(top_k=np.int32(3)) == ("top_k", 3)


def test_cli_rejects_a_nan_threshold(tmp_path):
    g, s = tmp_path / "g.csv", tmp_path / "s.csv"
    g.write_bytes(GOLD)
    s.write_bytes(SCORES)
    out = subprocess.run(
        [
            sys.executable,
            "-m",
            "cophe_core",
            "score",
            "--gold",
            str(g),
            "--pred",
            str(s),
            "--threshold",
            "nan",
        ],
        capture_output=True,
        text=True,
    )
    assert (
        out.returncode == 2 and "argument --threshold: invalid number from 0 to 1 value: 'nan'" in out.stderr
    )


def test_duplicate_rows_keep_the_highest_score_and_are_counted():
    gold = read_input(b"doc_id,code\n1,401.9\n")
    # 4019 is 401.9 written without its dot: the same (document, code) three times
    scores = read_input(
        b"doc_id,code,score\n1,401.9,0.2\n1,4019,0.7\n1,401.9,0.4\n1,428.0,0.6\n", name="s.csv"
    )
    run = score_run(gold, scores, icd9_ontology(), system="diagnosis")
    assert run.scores.nnz == 2 and run.scores.max() == pytest.approx(0.7)
    assert (
        "s.csv: 2 duplicate (document, code) rows collapsed; each keeps its highest score"
        in run.corpus.warnings
    )
    # 401.9 at 0.7 beats 428.0 at 0.6, whatever the row order
    assert keys(run, run.decide(top_k=1)) == {("1", "401.9")}
    assert keys(run, run.decide(threshold=0.65)) == {("1", "401.9")}
    scoring = score_labels(gold, {"m": scores}, ontology="icd9", system="diagnosis", threshold=0.65)
    assert scoring.evaluation("m").score("flat").f1 == 1.0
    assert (
        "s.csv: 2 duplicate (document, code) rows collapsed; each keeps its highest score"
        in scoring.corpus.warnings
    )


# --- the top-k tie order: hand-worked, so a mutant of the tie-break must fail ---------------------------

TREE = b"child,parent\nroot,\nzeta,root\nalpha,root\nmid,root\n"  # node ids: zeta 1 < alpha 2


def test_top_k_ties_go_to_the_code_that_sorts_first_not_the_node_id():
    """Document 1 scores mid 0.9, and alpha and zeta tie at 0.6. Top 2 = {mid, alpha}: alpha sorts before
    zeta although zeta has the smaller node id. Gold {alpha}: P@2 = 1/2, R@2 = 1. Breaking the tie by node
    id, or by descending code, predicts zeta instead, and P@2 = R@2 = 0."""
    onto = load_hierarchy(TREE, name="tree.csv")
    assert onto.codes["zeta"] < onto.codes["alpha"]
    gold = read_input(b"doc_id,code\n1,alpha\n")
    scores = read_input(b"doc_id,code,score\n1,zeta,0.6\n1,alpha,0.6\n1,mid,0.9\n")
    run = score_run(gold, scores, onto)
    assert keys(run, run.decide(top_k=2)) == {("1", "mid"), ("1", "alpha")}
    r = run.ranking(ks=(1, 2))
    assert (r["p@1"], r["p@2"], r["r@2"]) == (0.0, 0.5, 1.0)
    scoring = score_labels(gold, {"m": scores}, ontology=onto, top_k=2)
    assert scoring.evaluation("m").score("flat").tp == 1


def test_top_k_ties_on_icd9_use_the_canonical_code():
    """V45.81 has a smaller node id than 401.9, and "401.9" < "V45.81": the tie goes to 401.9. Written
    without its dot, 4280 is 428.0, which sorts before 428.1 (as written, "428.1" < "4280")."""
    onto = icd9_ontology()
    assert onto.codes["V45.81"] < onto.codes["401.9"]
    gold = read_input(b"doc_id,code\n1,401.9\n2,428.0\n")
    scores = read_input(b"doc_id,code,score\n1,V45.81,0.5\n1,401.9,0.5\n2,428.1,0.5\n2,4280,0.5\n")
    run = score_run(gold, scores, onto, system="diagnosis")
    assert keys(run, run.decide(top_k=1)) == {("1", "401.9"), ("2", "428.0")}
    assert run.ranking(ks=(1,))["p@1"] == 1.0
    scoring, info = decide_run(gold, scores, top_k=1, ontology="icd9", system="diagnosis")
    assert scoring.evaluation("pred").score("flat").tp == 2 and info.ranking["p@5"] == pytest.approx(1 / 5)


# --- property: decisions, P@k and the curve agree with a naive reading of the rows -------------------

# raw form → canonical ICD-9 diagnosis (undotted forms need system="diagnosis"); "zz" is rejected
FORMS = {
    "401.9": "401.9",
    "4019": "401.9",
    "401.1": "401.1",
    "4011": "401.1",
    "4280": "428.0",
    "428.0": "428.0",
    "428.1": "428.1",
    "V45.81": "V45.81",
    "V4581": "V45.81",
    "25000": "250.00",
    "250.01": "250.01",
    "5849": "584.9",
    "E849.0": "E849.0",
    "zz": None,
}
DOCS = ["d0", "d1", "d2", "d3"]
score_values = st.sampled_from([0.0, 0.1, 0.3, 0.5, 0.5, 0.7, 1.0]) | st.floats(0, 1)
rows_strategy = st.lists(
    st.tuples(st.sampled_from(DOCS), st.sampled_from(sorted(FORMS)), score_values), min_size=1, max_size=25
)
gold_strategy = st.dictionaries(
    st.sampled_from(DOCS),
    st.sets(st.sampled_from(sorted({*FORMS.values()} - {None})), max_size=4),
    min_size=1,
    max_size=4,
)


def naive_best(rows) -> dict[tuple[str, str], float]:
    """Each (document, canonical code)'s highest score, by a loop over the rows."""
    best: dict[tuple[str, str], float] = {}
    for doc, raw, score in rows:
        if FORMS[raw] is not None:
            best[(doc, FORMS[raw])] = max(score, best.get((doc, FORMS[raw]), 0.0))
    return best


def naive_top_k(best, k) -> set[tuple[str, str]]:
    out = set()
    for doc in DOCS:
        ranked = sorted((-s, c) for (d, c), s in best.items() if d == doc and s > 0)
        out |= {(doc, c) for _, c in ranked[:k]}
    return out


def as_labels(decisions: set[tuple[str, str]], docs) -> RawLabels:
    pairs = pd.DataFrame(sorted(decisions), columns=["doc_id", "code"]).assign(line=1)
    return RawLabels("decisions", np.asarray(docs, dtype=object), pairs.astype({"doc_id": str, "code": str}))


@settings(max_examples=examples(40), deadline=None, suppress_health_check=[HealthCheck.too_slow])
# ties where the node ids (V45.81 < 401.9) or the codes as written ("428.1" < "4280") sort the other way
@example(
    rows=[("d0", "V4581", 0.5), ("d0", "401.9", 0.5), ("d1", "428.1", 0.5), ("d1", "4280", 0.5)],
    gold={"d0": {"401.9"}, "d1": {"428.0"}},
    t=0.5,
    k=1,
)
@given(
    rows=rows_strategy,
    gold=gold_strategy,
    t=st.sampled_from([0.1, 0.3, 0.5, 0.7, 1.0]) | st.floats(0.01, 1),
    k=st.integers(1, 4),
)
def test_decisions_ranking_and_curve_agree(rows, gold, t, k):
    onto = icd9_ontology()
    gold_raw = read_input(
        ("doc_id,code\n" + "".join(f"{d},{c}\n" for d, cs in gold.items() for c in cs)).encode()
        if any(gold.values())
        else b"doc_id,code\nd0,401.9\n"
    )
    text = "doc_id,code,score\n" + "".join(f"{d},{c},{s!r}\n" for d, c, s in rows)
    scores = read_input(text.encode(), name="s.csv")
    if not any(FORMS[c] for _, c, _ in rows):
        return  # nothing scorable: encode's business
    run = score_run(gold_raw, scores, onto, system="diagnosis")
    gold_pairs = set(zip(gold_raw.pairs.doc_id, gold_raw.pairs.code))
    best = naive_best(rows)

    # the decisions are the naive ones
    by_threshold = {key for key, s in best.items() if s >= t}
    top = naive_top_k(best, k)
    assert keys(run, run.decide(threshold=t)) == by_threshold
    assert keys(run, run.decide(top_k=k)) == top

    # the curve's F1 at t is the F1 of the threshold-t decisions scored as code sets (the labels path)
    labels_path = score_labels(
        gold_raw, {"pred": as_labels(by_threshold, run.docs)}, ontology=onto, system="diagnosis"
    ).evaluation("pred")
    curve = run.curve([t]).iloc[0]
    for measure in ("flat", "set_based", "cophe"):
        assert curve[f"{measure}_f1"] == pytest.approx(labels_path.score(measure).f1)
    # ... and the API's scores path (as the CLI and the dashboard use it) decides the same
    api_path = score_labels(gold_raw, {"pred": scores}, ontology=onto, system="diagnosis", threshold=t)
    assert (api_path.corpus.runs["pred"] != labels_path.pred).nnz == 0

    # P@k's hits are the top-k decisions' true positives
    hits = {
        d: len({c for dd, c in top if dd == d} & {c for dd, c in gold_pairs if dd == d}) for d in run.docs
    }
    r = run.ranking(ks=(k,))
    assert r[f"p@{k}"] == pytest.approx(np.mean([hits[d] / k for d in run.docs]))
    top_eval = score_labels(gold_raw, {"pred": scores}, ontology=onto, system="diagnosis", top_k=k)
    assert top_eval.evaluation("pred").score("flat").tp == sum(hits.values())


# --- rejected rows of a scores file are reported like any other input ---------------------------------

BAD_SCORES = b"doc_id,code,score\n1,401.9,0.9\n1,zz9,0.8\n2,250.00,abc\n2,250.01,1.7\n,428.0,0.5\n3,,0.5\n"


def test_rejected_rows_of_a_scores_file_are_listed():
    run = score_run(read_input(GOLD, name="g.csv"), read_input(BAD_SCORES, name="s.csv"), icd9_ontology())
    rej = run.corpus.rejected.sort_values("line")
    assert list(zip(rej.file, rej.line, rej.value)) == [
        ("s.csv", 3, "zz9"),
        ("s.csv", 4, "abc"),
        ("s.csv", 5, "1.7"),
        ("s.csv", 6, "428.0"),
        ("s.csv", 7, ""),
    ]
    reasons = dict(zip(rej.line, rej.reason))
    assert "well-formed" in reasons[3] and "not a number" in reasons[4] and "outside [0, 1]" in reasons[5]
    assert reasons[6] == "empty document id" and reasons[7] == "empty code"
    assert any(w.startswith("s.csv: 5 rows not scored") for w in run.corpus.warnings)


def test_cli_reports_rejected_score_rows(tmp_path, capsys):
    g, s, rej = tmp_path / "g.csv", tmp_path / "s.csv", tmp_path / "rejected.csv"
    g.write_bytes(GOLD)
    s.write_bytes(BAD_SCORES)
    assert (
        main(
            [
                "score",
                "--gold",
                str(g),
                "--pred",
                str(s),
                "--threshold",
                "0.5",
                "--format",
                "json",
                "--max-rejected",
                "1",  # most rows are bad on purpose
                "--rejected",
                str(rej),
            ]
        )
        == 0
    )
    result = json.loads(capsys.readouterr().out)
    assert any(w.startswith("s.csv: 5 rows not scored") for w in result["warnings"])
    table = pd.read_csv(rej, keep_default_na=False)
    assert sorted(table.line) == [3, 4, 5, 6, 7] and set(table.file) == {"s.csv"}


def test_cli_reads_the_column_options_for_scores(tmp_path, capsys):
    g, s = tmp_path / "g.csv", tmp_path / "s.csv"
    g.write_text("adm,dx\n1,4019\n")
    s.write_text("adm,dx,score\n1,4019,0.9\n1,4280,0.2\n")
    assert (
        main(
            [
                "score",
                "--gold",
                str(g),
                "--pred",
                str(s),
                "--doc-col",
                "adm",
                "--code-col",
                "dx",
                "--system",
                "diagnosis",
                "--threshold",
                "0.5",
                "--format",
                "json",
            ]
        )
        == 0
    )
    result = json.loads(capsys.readouterr().out)
    assert result["flat"]["f1"] == 1.0 and result["warnings"] == []


# --- ranking metrics, curves, readers -----------------------------------------------------------------


def test_precision_and_recall_at_k(run):
    r = run.ranking(ks=(1, 2))
    # top-1: doc1 401.9 (hit), doc2 250.01 (miss), doc3 96.71 (miss)
    assert r["p@1"] == pytest.approx(1 / 3) and r["r@1"] == pytest.approx((1 / 2 + 0 + 0) / 3)
    # top-2: doc1 {401.9, 401.1}: 1 hit; doc2 {250.01, 250.00}: 1 hit; doc3 {96.71}: 0
    assert r["p@2"] == pytest.approx((1 / 2 + 1 / 2 + 0) / 3)
    assert r["r@2"] == pytest.approx((1 / 2 + 1 + 0) / 3)


def test_auc_equals_scikit_learn_on_the_dense_matrix(run):
    onto = run.ontology
    in_play = np.union1d(run.gold.indices, run.scores.indices)
    y = run.gold[:, in_play].toarray().ravel()
    s = run.scores[:, in_play].toarray().ravel()
    r = run.ranking()
    assert r["auc_micro"] == pytest.approx(roc_auc_score(y, s))
    per_code = [
        roc_auc_score(run.gold[:, j].toarray().ravel(), run.scores[:, j].toarray().ravel())
        for j in in_play
        if 0 < run.gold[:, j].sum() < len(run.docs)
    ]
    assert r["auc_macro"] == pytest.approx(np.mean(per_code))
    assert onto.name == "icd9"


def test_threshold_curve_and_tuning(run):
    curve = run.curve([0.25, 0.5, 0.75])
    assert list(curve.columns) == ["threshold", "flat_f1", "set_based_f1", "cophe_f1"]
    ev = run.evaluate(threshold=0.5)
    assert curve.loc[1, "cophe_f1"] == pytest.approx(ev.score("cophe").f1)
    assert tune_threshold(curve) == curve.threshold[curve.cophe_f1.idxmax()]
    assert run.curve([0.5], max_level="e0").cophe_f1[0] == pytest.approx(
        run.evaluate(threshold=0.5, max_level="e0").score("cophe").f1
    )


def test_wide_matrix_like_edin_et_al():
    frame = pd.DataFrame(
        {
            "_id": ["1", "2"],
            "target": [["401.9"], ["250.00"]],
            "401.9": [0.9, 0.1],
            "250.00": [0.2, 0.8],
            "428.0": [0.0, 0.05],
        }
    )
    buf = io.BytesIO()
    frame.to_feather(buf)
    s = read_scores(buf.getvalue(), name="preds.feather")
    assert sorted(zip(s.pairs.doc_id, s.pairs.code, s.pairs.score)) == [
        ("1", "250.00", 0.2),
        ("1", "401.9", 0.9),
        ("2", "250.00", 0.8),
        ("2", "401.9", 0.1),
        ("2", "428.0", 0.05),
    ]


def test_mimic_table_is_not_mistaken_for_scores():
    data = b"ROW_ID,SUBJECT_ID,HADM_ID,SEQ_NUM,ICD9_CODE\n1,9,100,1,4019\n2,9,100,2,4280\n"
    with pytest.raises(InputError, match="holds code sets, not scores"):
        read_scores(data, name="DIAGNOSES_ICD.csv")


def test_a_development_split_of_code_sets_is_refused_by_name():
    gold = b"doc_id,code\n1,401.9\n"
    scores = b"doc_id,code,score\n1,401.9,0.8\n"
    with pytest.raises(InputError, match=r"^dev_pred.csv: holds code sets, not scores; tuning .*--tune-on"):
        decide_run(gold, scores, tune_on=(gold, read_input(b"doc_id,code\n1,401.9\n", name="dev_pred.csv")))


def test_cli_with_scores_and_a_dev_split(tmp_path):
    out = subprocess.run(
        [
            sys.executable,
            "-m",
            "cophe_core",
            "score",
            "--gold",
            str(SAMPLE / "gold.csv"),
            "--pred",
            str(SAMPLE / "scores_model.csv"),
            "--tune-on",
            str(SAMPLE / "dev_gold.csv"),
            str(SAMPLE / "dev_scores.csv"),
            "--format",
            "json",
        ],
        capture_output=True,
        text=True,
    )
    assert out.returncode == 0, out.stderr
    result = json.loads(out.stdout)
    d = result["decision"]
    curve = pd.DataFrame(d["tuned_on"]["curve"])
    assert d["threshold"] == curve.threshold[curve.cophe_f1.idxmax()]
    assert set(d["ranking"]) == {"p@5", "r@5", "p@8", "r@8", "p@15", "r@15", "auc_micro", "auc_macro"}
    bad = subprocess.run(
        [
            sys.executable,
            "-m",
            "cophe_core",
            "score",
            "--gold",
            str(SAMPLE / "gold.csv"),
            "--pred",
            str(SAMPLE / "scores_model.csv"),
        ],
        capture_output=True,
        text=True,
    )
    assert bad.returncode == 2 and "--threshold T, --top-k K or --tune-on" in bad.stderr


def test_a_scored_runs_ranking_does_not_depend_on_the_other_runs_loaded():
    """P@k and AUC run over the gold's and the run's documents, as score_run and the CLI compute them."""
    from cophe_core import read_input, score_labels
    from cophe_core.ontology import icd9_ontology
    from cophe_core.scoring.scores import score_run

    g = read_input(b"doc_id,code\n1,401.9\n2,428.0\n")
    a = read_input(b"doc_id,code,score\n1,401.9,0.9\n2,401.1,0.4\n2,428.0,0.3\n")
    b = read_input(b"doc_id,code\n3,401.9\n4,250.00\n5,428.0\n")
    alone = score_labels(g, {"A": a}, threshold=0.5).scored["A"].ranking()
    beside = score_labels(g, {"A": a, "B": b}, threshold=0.5)
    assert beside.scored["A"].ranking() == alone == score_run(g, a, icd9_ontology()).ranking()
    assert alone["p@5"] == 0.2  # (1 + 1) hits / 5, over 2 documents, not 5
    assert beside.evaluation("A").score("flat").tp == 1 and len(beside.corpus.docs) == 5
