"""The torchmetrics metric (cophe_core.integrations.torchmetrics): batches equal the accumulator and the
one-shot evaluation, and two processes on torch.distributed's gloo backend equal one. The test extras
install the optional extra cophe[torch] (scripts/test.sh asks for a CPU build of torch)."""

from __future__ import annotations

import pickle
import subprocess
import sys
from pathlib import Path

import numpy as np
import torch

from cophe_core.accumulate import Accumulator
from cophe_core.integrations.mlflow import evaluation_metrics
from cophe_core.integrations.torchmetrics import CoPHEMetric
from tests.core.test_accumulate import LABELS, assert_same, one_shot

ROOT = Path(__file__).resolve().parents[2]


def data(seed: int = 0, n: int = 37):
    rng = np.random.default_rng(seed)
    return (rng.random((2, n, len(LABELS))) < 0.25).astype(np.float32)


def test_batches_of_tensors_equal_the_one_shot_evaluation():
    y_true, y_pred = data()
    metric = CoPHEMetric(LABELS, "icd9")
    for lo in range(0, len(y_true), 8):
        metric.update(torch.from_numpy(y_true[lo : lo + 8]), torch.from_numpy(y_pred[lo : lo + 8]).bool())
    assert_same(metric.evaluation(), one_shot(y_true, y_pred))
    expected = evaluation_metrics(one_shot(y_true, y_pred))
    got = metric.compute()
    assert {k: float(v) for k, v in got.items()} == expected
    metric.reset()
    assert int(metric.documents) == 0 and int(metric.counts.sum()) == 0


def _worker(rank: int, world: int, rendezvous: str, out: str) -> None:
    """One process of the group: its half of the documents, then the synced metrics."""
    import torch.distributed as dist

    dist.init_process_group("gloo", init_method=f"file://{rendezvous}", rank=rank, world_size=world)
    y_true, y_pred = data()
    metric = CoPHEMetric(LABELS, "icd9", threshold=0.5)
    mine = np.arange(len(y_true)) % world == rank  # interleaved: neither holds a contiguous block
    for lo in range(0, int(mine.sum()), 5):
        metric.update(
            torch.from_numpy(y_true[mine][lo : lo + 5]), torch.from_numpy(y_pred[mine][lo : lo + 5])
        )
    result = {k: float(v) for k, v in metric.compute().items()}
    with open(f"{out}.{rank}", "wb") as f:
        pickle.dump((result, int(metric.documents), metric.counts.numpy()), f)
    dist.destroy_process_group()


def test_two_gloo_processes_equal_one(tmp_path):
    # Two fresh interpreters from the checkout, not torch's spawn of this one: a spawned child re-imports
    # this module through the pytest worker's state (its path, its folder), which other tests may change.
    out = str(tmp_path / "result")
    code = "import sys; from tests.core.test_torchmetrics import _worker; _worker(int(sys.argv[1]), 2, *sys.argv[2:])"
    ranks = [
        subprocess.Popen(
            [sys.executable, "-c", code, str(rank), str(tmp_path / "rendezvous"), out],
            cwd=ROOT,
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            text=True,
        )
        for rank in (0, 1)
    ]
    for rank, process in enumerate(ranks):
        said, _ = process.communicate(timeout=600)
        assert process.returncode == 0, f"rank {rank}:\n{said}"
    y_true, y_pred = data()
    one = Accumulator(LABELS, "icd9", threshold=0.5)
    one.update(y_true, y_pred)
    expected = evaluation_metrics(one.compute())
    parts = []
    for rank in (0, 1):
        with open(f"{out}.{rank}", "rb") as f:
            parts.append(pickle.load(f))
    # each process's compute() gave the metrics of all the documents: the counts were summed
    assert [p[0] for p in parts] == [expected, expected]
    # and each kept its own half afterwards (torchmetrics restores the local states after a sync)
    assert sum(p[1] for p in parts) == len(y_true) and parts[0][1] == 19
    assert np.array_equal(parts[0][2][2] + parts[1][2][2], one.compute().node_counts.tp)
