"""The Source opens a run from MLflow: a folder store made here, an experiment, its runs that hold a saved
analysis, scored as the opened file would be; a bad address is a panel."""

from __future__ import annotations

import pytest

from cophe_core.output.analysis import analysis_from_files, score_analysis
from tests.app.conftest import SAMPLE, run_app

mlflow = pytest.importorskip("mlflow")


@pytest.fixture
def store(tmp_path, monkeypatch):
    """A folder store holding an experiment "coding" with one run that logged a saved analysis (threshold
    0.3 on the scores run) and one that logged metrics only."""
    from cophe_core.integrations.mlflow import log_evaluation

    monkeypatch.setenv("MLFLOW_ALLOW_FILE_STORE", "true")
    folder = tmp_path / "mlruns"
    mlflow.set_tracking_uri(folder.as_uri())
    mlflow.set_experiment("coding")
    a = analysis_from_files(
        SAMPLE / "gold.csv",
        {"laat": SAMPLE / "scores_model.csv", "siblings": SAMPLE / "run_siblings.csv"},
        options={"ontology": "icd9"},
        rule=("threshold", 0.3),
    )
    ev = score_analysis(a).evaluation("siblings")
    with mlflow.start_run(run_name="metrics only"):
        log_evaluation(ev)
    with mlflow.start_run(run_name="epoch 5"):
        log_evaluation(ev, prefix="test", analysis=a)
    mlflow.set_tracking_uri(None)
    return folder


def test_a_run_in_an_mlflow_folder_is_listed_and_scored(store):
    at = run_app()
    at.radio(key="source").set_value("Open a saved analysis").run()
    at.text_input(key="mlflow_uri").set_value(str(store)).run()
    at.selectbox(key="mlflow_experiment").set_value("coding").run()
    assert not at.exception, [e.value for e in at.exception]
    assert not at.error, [e.value for e in at.error]
    assert at.selectbox(key="mlflow_run").options == [
        "epoch 5 (test/analysis.cophe)"
    ]  # the one with predictions
    assert at.selectbox(key="run").options == ["laat", "siblings"]
    assert at.session_state["threshold"] == 0.3  # the saved rule, applied


def test_an_mlflow_folder_that_is_not_there_is_a_panel(tmp_path):
    at = run_app()
    at.radio(key="source").set_value("Open a saved analysis").run()
    at.text_input(key="mlflow_uri").set_value(str(tmp_path / "nowhere")).run()
    assert not at.exception
    assert any("no such folder" in e.value for e in at.error)
