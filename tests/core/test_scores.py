"""Probability outputs: readers, decisions, P@k/R@k, AUC against scikit-learn, threshold curves."""

from __future__ import annotations

import io
import json
import subprocess
import sys

import numpy as np
import pandas as pd
import pytest
from sklearn.metrics import roc_auc_score

from cophe_core import read_labels
from cophe_core.ontology import icd9_ontology
from cophe_core.scores import decide, read_scores, score_run, tune_threshold
from tests.conftest import SAMPLE

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


def test_decisions_by_threshold_and_top_k():
    s = read_scores(SCORES, name="s.csv")
    assert sorted(decide(s, threshold=0.6).pairs.code) == ["250.00", "250.01", "401.1", "401.9"]
    assert sorted(decide(s, top_k=1).pairs.code) == ["250.01", "401.9", "96.71"]
    with pytest.raises(ValueError):
        decide(s)


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
    per_code = [roc_auc_score(run.gold[:, j].toarray().ravel(), run.scores[:, j].toarray().ravel())
                for j in in_play if 0 < run.gold[:, j].sum() < len(run.docs)]
    assert r["auc_macro"] == pytest.approx(np.mean(per_code))
    assert onto.name == "icd9"


def test_threshold_curve_and_tuning(run):
    curve = run.curve([0.25, 0.5, 0.75])
    assert list(curve.columns) == ["threshold", "flat_f1", "set_based_f1", "cophe_f1"]
    ev = run.evaluate(threshold=0.5)
    assert curve.loc[1, "cophe_f1"] == pytest.approx(ev.score("cophe")["f1"])
    assert tune_threshold(curve) == curve.threshold[curve.cophe_f1.idxmax()]


def test_wide_matrix_like_edin_et_al():
    frame = pd.DataFrame({"_id": ["1", "2"], "target": [["401.9"], ["250.00"]],
                          "401.9": [0.9, 0.1], "250.00": [0.2, 0.8], "428.0": [0.0, 0.05]})
    buf = io.BytesIO()
    frame.to_feather(buf)
    s = read_scores(buf.getvalue(), name="preds.feather")
    assert sorted(zip(s.frame.doc_id, s.frame.code, s.frame.score)) == [
        ("1", "250.00", 0.2), ("1", "401.9", 0.9), ("2", "250.00", 0.8), ("2", "401.9", 0.1), ("2", "428.0", 0.05)]


def test_mimic_table_is_not_mistaken_for_scores():
    data = b"ROW_ID,SUBJECT_ID,HADM_ID,SEQ_NUM,ICD9_CODE\n1,9,100,1,4019\n2,9,100,2,4280\n"
    from cophe_core import InputError

    with pytest.raises(InputError):
        read_scores(data, name="DIAGNOSES_ICD.csv")


def test_cli_with_scores_and_a_dev_split(tmp_path):
    out = subprocess.run([sys.executable, "-m", "cophe_core", "score", "--gold", str(SAMPLE / "gold.csv"),
                          "--pred", str(SAMPLE / "scores_model.csv"), "--tune-on", str(SAMPLE / "dev_gold.csv"),
                          str(SAMPLE / "dev_scores.csv"), "--format", "json"], capture_output=True, text=True)
    assert out.returncode == 0, out.stderr
    result = json.loads(out.stdout)
    d = result["decision"]
    curve = pd.DataFrame(d["tuned_on"]["curve"])
    assert d["threshold"] == curve.threshold[curve.cophe_f1.idxmax()]
    assert set(d["ranking"]) == {"p@5", "r@5", "p@8", "r@8", "p@15", "r@15", "auc_micro", "auc_macro"}
    bad = subprocess.run([sys.executable, "-m", "cophe_core", "score", "--gold", str(SAMPLE / "gold.csv"),
                          "--pred", str(SAMPLE / "scores_model.csv")], capture_output=True, text=True)
    assert bad.returncode == 2 and "--threshold T, --top-k K or --tune-on" in bad.stderr
