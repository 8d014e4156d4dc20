"""MLflow: an evaluation logged beside a run's hyperparameters, and runs found again by their saved analysis.

:func:`log_evaluation` logs to the active MLflow run (one is started if none is):

- the metrics, micro precision, recall and F1 per measure and level (:func:`evaluation_metrics`), named
  ``{prefix}/{measure}/{level}/{p|r|f1}``, at ``step`` (an epoch) when given;
- artifacts under ``{prefix}/`` (``{prefix}/step-{step}/`` with a step): ``levels.csv``, ``macro.csv`` and
  ``nodes.csv`` (the tables of :class:`~cophe_core.metrics.Evaluation`), and the saved analysis
  ``analysis.cophe`` when one is given (:mod:`cophe_core.output.analysis`: the gold standard and predictions
  themselves, which the dashboard opens again).

:func:`analysis_runs` lists the runs of an experiment that hold a saved analysis, and :func:`run_analysis`
reads one back; the dashboard's Source offers them. Needs the optional extra ``cophe[mlflow]``.
"""

from __future__ import annotations

import os
import tempfile
from pathlib import Path
from typing import Any

import pandas as pd

from ..base.files import InputError
from ..output.analysis import Analysis, read_analysis, write_analysis

__all__ = [
    "evaluation_metrics",
    "log_evaluation",
    "tracking_uri",
    "experiments",
    "analysis_runs",
    "run_analysis",
]

ANALYSIS = "analysis.cophe"
SHORT = {"precision": "p", "recall": "r", "f1": "f1"}


def evaluation_metrics(evaluation: Any, prefix: str = "cophe") -> dict[str, float]:
    """Micro precision, recall and F1 of every measure and level of an evaluation (anything with
    ``levels_table``: an :class:`~cophe_core.metrics.Evaluation`, a streamed or accumulated one), by
    metric name.

    >>> from cophe_core import score_files
    >>> ev = score_files(b"doc_id,code\\n1,401.9\\n", {"A": b"doc_id,code\\n1,401.1\\n"}).evaluation("A")
    >>> m = evaluation_metrics(ev)
    >>> m["cophe/cophe/e0/f1"], m["cophe/flat/leaf/f1"], len(m)  # 11 rows of the levels table, 3 values each
    (1.0, 0.0, 33)
    """
    t = evaluation.levels_table
    out: dict[str, float] = {}
    for measure, level, *values in t[["measure", "level", *SHORT]].itertuples(index=False):
        for short, v in zip(SHORT.values(), values):
            out[f"{prefix}/{measure}/{level}/{short}"] = float(v)
    return out


def log_evaluation(
    evaluation: Any, *, prefix: str = "cophe", step: int | None = None, analysis: Analysis | None = None
) -> None:
    """Log an evaluation's metrics and tables, and the saved ``analysis`` when given, to the active MLflow
    run (see the module docs).

    >>> import os, tempfile, mlflow
    >>> os.environ["MLFLOW_ALLOW_FILE_STORE"] = "true"  # MLflow 3.10+ asks for a database unless told
    >>> uri = tracking_uri(tempfile.mkdtemp())
    >>> from cophe_core import score_files
    >>> ev = score_files(b"doc_id,code\\n1,401.9\\n", {"A": b"doc_id,code\\n1,401.1\\n"}).evaluation("A")
    >>> mlflow.set_tracking_uri(uri)
    >>> _ = mlflow.set_experiment("training")  # MLflow keeps the active experiment: one of this store
    >>> with mlflow.start_run() as run:
    ...     log_evaluation(ev, prefix="val", step=0)
    >>> mlflow.set_tracking_uri(None)
    >>> mlflow.MlflowClient(uri).get_run(run.info.run_id).data.metrics["val/cophe/e0/f1"]
    1.0
    """
    import mlflow

    mlflow.log_metrics(evaluation_metrics(evaluation, prefix), step=step)
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        evaluation.levels_table.to_csv(folder / "levels.csv", index=False)
        evaluation.macro_table.to_csv(folder / "macro.csv", index=False)
        evaluation.nodes.to_csv(folder / "nodes.csv", index=False)
        if analysis is not None:
            (folder / ANALYSIS).write_bytes(write_analysis(analysis))
        mlflow.log_artifacts(tmp, artifact_path=prefix if step is None else f"{prefix}/step-{step}")


def tracking_uri(where: str) -> str:
    """A tracking URI as given (``http://…``, ``file:…``, ``sqlite:…``), or a folder's (an ``mlruns`` folder)
    as a ``file:`` URI; a folder that does not exist is an :class:`~cophe_core.InputError`.

    >>> tracking_uri("http://localhost:5000")
    'http://localhost:5000'
    """
    if "://" in where or where.startswith(("file:", "sqlite:", "databricks")):
        return where
    folder = Path(where).expanduser()
    if not folder.is_dir():
        raise InputError(f"{where}: no such folder; give an MLflow tracking address or its mlruns folder")
    return folder.resolve().as_uri()


def _client(uri: str) -> Any:
    """A client of the tracking URI. A folder (``file:``) is read as MLflow 3 reads it only when allowed: it
    has been chosen by the user here, so it is allowed for this process."""
    from mlflow import MlflowClient

    if uri.startswith("file:"):
        os.environ.setdefault("MLFLOW_ALLOW_FILE_STORE", "true")
    return MlflowClient(tracking_uri=uri)


def experiments(uri: str) -> pd.DataFrame:
    """The experiments of a tracking server or folder: columns ``experiment_id, name``.

    >>> import os, tempfile, mlflow
    >>> os.environ["MLFLOW_ALLOW_FILE_STORE"] = "true"  # MLflow 3.10+ asks for a database unless told
    >>> uri = tracking_uri(tempfile.mkdtemp())
    >>> _ = mlflow.MlflowClient(uri).create_experiment("coding")
    >>> experiments(uri).name.tolist()
    ['coding']
    """
    from mlflow.exceptions import MlflowException

    try:
        found = _client(uri).search_experiments()
    except (MlflowException, OSError) as e:  # an address that answers nothing, or not as MLflow does
        raise InputError(f"{uri}: MLflow could not be read there ({e})") from e
    return pd.DataFrame(
        {"experiment_id": [e.experiment_id for e in found], "name": [e.name for e in found]},
        columns=["experiment_id", "name"],
    )


def analysis_runs(uri: str, experiment_id: str) -> pd.DataFrame:
    """The runs of an experiment that hold a saved analysis (logged by :func:`log_evaluation`), newest
    first: columns ``run_id, run_name, started, artifact`` (the analysis's path in the run).

    >>> import os, tempfile, mlflow
    >>> os.environ["MLFLOW_ALLOW_FILE_STORE"] = "true"  # MLflow 3.10+ asks for a database unless told
    >>> uri = tracking_uri(tempfile.mkdtemp())
    >>> from cophe_core import score_files
    >>> from cophe_core.output.analysis import Analysis, InputFile
    >>> gold, pred = b"doc_id,code\\n1,401.9\\n", b"doc_id,code\\n1,401.1\\n"
    >>> a = Analysis(InputFile("gold.csv", gold), {"A": InputFile("a.csv", pred)})
    >>> mlflow.set_tracking_uri(uri)
    >>> _ = mlflow.set_experiment("coding")
    >>> with mlflow.start_run(run_name="laat"):
    ...     log_evaluation(score_files(gold, {"A": pred}).evaluation("A"), analysis=a)
    >>> mlflow.set_tracking_uri(None)
    >>> e = experiments(uri)
    >>> analysis_runs(uri, e.experiment_id[0])[["run_name", "artifact"]].values.tolist()
    [['laat', 'cophe/analysis.cophe']]
    """
    from mlflow.store.artifact.artifact_repository_registry import get_artifact_repository

    client = _client(uri)
    rows = []
    for run in client.search_runs([experiment_id], order_by=["attributes.start_time DESC"]):
        # the run's own artifact store: MLflow 3.0's client looks a run up in the process's tracking store
        repo = get_artifact_repository(run.info.artifact_uri)
        for path in _analyses(repo, ""):
            rows.append((run.info.run_id, run.info.run_name or run.info.run_id, run.info.start_time, path))
    return pd.DataFrame(rows, columns=["run_id", "run_name", "started", "artifact"])


def _analyses(repo: Any, path: str, depth: int = 3) -> list[str]:
    """The paths of the saved analyses among a run's artifacts (``repo``: its artifact store), ``depth``
    folders down at most."""
    out = []
    for f in repo.list_artifacts(path or None):
        if f.is_dir and depth > 0:
            out += _analyses(repo, f.path, depth - 1)
        elif f.path.endswith(".cophe"):
            out.append(f.path)
    return out


def run_analysis(uri: str, run_id: str, artifact: str) -> Analysis:
    """The saved analysis ``artifact`` of a run, read and checked as any saved analysis
    (:func:`cophe_core.output.analysis.read_analysis`).

    >>> import os, tempfile, mlflow
    >>> os.environ["MLFLOW_ALLOW_FILE_STORE"] = "true"  # MLflow 3.10+ asks for a database unless told
    >>> uri = tracking_uri(tempfile.mkdtemp())
    >>> from cophe_core import score_files
    >>> from cophe_core.output.analysis import Analysis, InputFile
    >>> gold, pred = b"doc_id,code\\n1,401.9\\n", b"doc_id,code\\n1,401.1\\n"
    >>> a = Analysis(InputFile("gold.csv", gold), {"A": InputFile("a.csv", pred)})
    >>> mlflow.set_tracking_uri(uri)
    >>> _ = mlflow.set_experiment("coding")
    >>> with mlflow.start_run(run_name="laat"):
    ...     log_evaluation(score_files(gold, {"A": pred}).evaluation("A"), analysis=a)
    >>> mlflow.set_tracking_uri(None)
    >>> e = experiments(uri)
    >>> r = analysis_runs(uri, e.experiment_id[0])
    >>> run_analysis(uri, r.run_id[0], r.artifact[0]).runs["A"].data
    b'doc_id,code\\n1,401.1\\n'
    """
    from mlflow.artifacts import download_artifacts

    root = _client(uri).get_run(run_id).info.artifact_uri  # as in analysis_runs: the run's own store
    with tempfile.TemporaryDirectory() as tmp:
        local = download_artifacts(artifact_uri=f"{root.rstrip('/')}/{artifact}", dst_path=tmp)
        return read_analysis(Path(local).read_bytes(), name=f"run {run_id}: {artifact}")
