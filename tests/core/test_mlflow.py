"""MLflow (cophe_core.integrations.mlflow): an evaluation logged to a real file store in a temporary folder
(no mock), read back as MLflow gives it, and the runs holding a saved analysis found and scored again."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from cophe_core import InputError
from cophe_core.integrations.mlflow import (
    analysis_runs,
    evaluation_metrics,
    experiments,
    log_evaluation,
    run_analysis,
    tracking_uri,
)
from cophe_core.output.analysis import InputFile, analysis_from_files, score_analysis
from cophe_core.scale.accumulate import Accumulator
from tests.conftest import SAMPLE, score_pairs

mlflow = pytest.importorskip("mlflow")


@pytest.fixture
def store(tmp_path, monkeypatch):
    """A file store of its own, as the active tracking URI."""
    uri = (tmp_path / "mlruns").as_uri()
    monkeypatch.setenv("MLFLOW_TRACKING_URI", uri)
    monkeypatch.setenv("MLFLOW_ALLOW_FILE_STORE", "true")  # MLflow 3.10+ asks for a database unless told
    mlflow.set_tracking_uri(uri)
    mlflow.set_experiment("tests")  # MLflow keeps the active experiment between tests: one of this store
    yield uri
    mlflow.set_tracking_uri(None)


def test_metrics_by_hand():
    """Gold 401.9 and 428.0, predicted 401.1 and 428.0: at e0 both families right (F1 1); flat 1 of 2 each
    way (P = R = F1 = 1/2); at e1 401.1 is a false positive and 401.9 a false negative."""
    ev = score_pairs([("1", "401.9"), ("1", "428.0")], [("1", "401.1"), ("1", "428.0")])
    m = evaluation_metrics(ev, "val")
    assert m["val/cophe/e0/f1"] == 1.0
    assert (m["val/flat/leaf/p"], m["val/flat/leaf/r"], m["val/flat/leaf/f1"]) == (0.5, 0.5, 0.5)
    assert m["val/set_based/e1/p"] == 0.5
    # every row of the levels table, three numbers each
    assert len(m) == 3 * len(ev.levels_table)


def test_logged_to_a_file_store_and_read_back(store, tmp_path):
    ev = score_pairs([("1", "401.9"), ("1", "428.0")], [("1", "401.1"), ("1", "428.0")])
    a = analysis_from_files(
        SAMPLE / "gold.csv", {"siblings": SAMPLE / "run_siblings.csv"}, options={"ontology": "icd9"}
    )
    mlflow.set_experiment("coding")
    with mlflow.start_run(run_name="laat") as run:
        mlflow.log_param("lr", 1e-3)
        for epoch in (0, 1):
            log_evaluation(ev, prefix="val", step=epoch)
        log_evaluation(score_analysis(a).evaluation("siblings"), prefix="test", analysis=a)
    client = mlflow.MlflowClient(tracking_uri=store)
    got = client.get_run(run.info.run_id)
    assert got.data.metrics["val/cophe/e0/f1"] == 1.0
    assert got.data.params == {"lr": "0.001"}
    history = client.get_metric_history(run.info.run_id, "val/flat/leaf/f1")
    assert sorted(h.step for h in history) == [0, 1] and {h.value for h in history} == {0.5}
    folder = mlflow.artifacts.download_artifacts(
        run_id=run.info.run_id, artifact_path="val/step-1", dst_path=str(tmp_path / "dl")
    )
    pd.testing.assert_frame_equal(
        pd.read_csv(f"{folder}/nodes.csv"), pd.read_csv(_csv(ev.nodes)), check_dtype=False
    )
    # the run is found by its saved analysis, which scores to what was logged
    exp = experiments(store)
    assert "coding" in exp.name.tolist()
    runs = analysis_runs(store, exp.experiment_id[exp.name == "coding"].iloc[0])
    assert runs[["run_name", "artifact"]].values.tolist() == [["laat", "test/analysis.cophe"]]
    back = run_analysis(store, runs.run_id.iloc[0], runs.artifact.iloc[0])
    assert back == a
    f1 = score_analysis(back).evaluation("siblings").score("cophe", "e0").f1
    assert got.data.metrics["test/cophe/e0/f1"] == pytest.approx(f1, rel=1e-12)


def _csv(table: pd.DataFrame):
    import io

    buf = io.StringIO()
    table.to_csv(buf, index=False)
    buf.seek(0)
    return buf


def test_an_accumulated_evaluation_logs_too(store):
    labels = ["401.9", "401.1", "428.0"]
    acc = Accumulator(labels, "icd9")
    acc.update(np.array([[1, 0, 1]]), np.array([[0, 1, 1]]))
    with mlflow.start_run() as run:
        log_evaluation(acc.compute(), step=3)
    metrics = mlflow.MlflowClient(tracking_uri=store).get_run(run.info.run_id).data.metrics
    assert metrics["cophe/cophe/e0/f1"] == 1.0 and metrics["cophe/flat/leaf/f1"] == 0.5


def test_tracking_uri_of_a_folder(tmp_path):
    assert tracking_uri(str(tmp_path)) == tmp_path.resolve().as_uri()
    assert tracking_uri("sqlite:///x.db") == "sqlite:///x.db"
    with pytest.raises(InputError, match="no such folder"):
        tracking_uri(str(tmp_path / "missing"))


def test_an_altered_analysis_is_refused(store):
    a = analysis_from_files(
        SAMPLE / "gold.csv", {"siblings": SAMPLE / "run_siblings.csv"}, options={"ontology": "icd9"}
    )
    with mlflow.start_run() as run:
        mlflow.log_text("not a zip", "test/analysis.cophe")
    with pytest.raises(InputError, match="analysis.cophe"):
        run_analysis(store, run.info.run_id, "test/analysis.cophe")
    assert isinstance(a.gold, InputFile)
