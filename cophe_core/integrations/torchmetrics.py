"""A torchmetrics ``Metric`` of flat, set-based and CoPHE counts, summed across processes.

:class:`CoPHEMetric` keeps the per-node counts of :class:`~cophe_core.metrics.NodeCounts` as one int64 tensor
(fields × nodes) and the number of documents, both with ``dist_reduce_fx="sum"``: under DDP (any backend,
gloo on CPUs included) ``compute()`` sums every process's counts before the figures are made, so they are
those of all the documents at once. The counting is the :class:`~cophe_core.scale.accumulate.Accumulator`'s.
Needs the optional extra ``cophe[torch]``.

In a Lightning-style loop, log by level::

    class Model(L.LightningModule):
        def __init__(self, labels):
            super().__init__()
            self.val_cophe = CoPHEMetric(labels, "icd9", threshold=0.5)

        def validation_step(self, batch, batch_idx):
            self.val_cophe.update(batch["labels"], torch.sigmoid(self(batch["text"])))

        def on_validation_epoch_end(self):
            # {"cophe/cophe/e0/f1": tensor(0.71), "cophe/set_based/e0/f1": …, "cophe/flat/leaf/f1": …}
            self.log_dict(self.val_cophe.compute())
            self.val_cophe.reset()

``compute()`` gives the metrics of :func:`cophe_core.integrations.mlflow.evaluation_metrics` as tensors;
:meth:`CoPHEMetric.evaluation` the whole evaluation (node table, macro averages).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence
from typing import Any

import numpy as np
import torch
from torchmetrics import Metric

from ..metrics import NodeCounts
from ..ontology import Ontology
from ..scale.accumulate import AccumulatedEvaluation, Accumulator
from .mlflow import evaluation_metrics

__all__ = ["CoPHEMetric"]

FIELDS = [f.name for f in dataclasses.fields(NodeCounts)]


class CoPHEMetric(Metric):
    """Flat, set-based and CoPHE figures of batches of indicator (or score) tensors, summed across
    processes. Parameters as :class:`~cophe_core.scale.accumulate.Accumulator` (``keep_documents`` aside: the
    states are the counts), plus ``prefix`` for the metric names and torchmetrics' own keywords.

    >>> m = CoPHEMetric(["401.9", "401.1", "428.0"], "icd9")
    >>> m.update(torch.tensor([[1, 0, 1]]), torch.tensor([[0, 1, 1]]))
    >>> out = m.compute()
    >>> float(out["cophe/cophe/e0/f1"]), float(out["cophe/flat/leaf/f1"])
    (1.0, 0.5)
    """

    full_state_update = False
    is_differentiable = False
    higher_is_better = True
    # declared, so that the states read as tensors (nn.Module's __getattr__ would type them as Tensor | Module)
    accumulator: Accumulator
    counts: torch.Tensor
    documents: torch.Tensor

    def __init__(
        self,
        labels: Sequence[str],
        ontology: str | Ontology,
        *,
        max_level: str | None = None,
        threshold: float | None = None,
        top_k: int | None = None,
        system: str = "auto",
        prefix: str = "cophe",
        **kwargs: Any,
    ) -> None:
        super().__init__(**kwargs)
        self.accumulator = Accumulator(
            labels, ontology, max_level=max_level, threshold=threshold, top_k=top_k, system=system
        )
        self.prefix = prefix
        n = self.accumulator.ontology.n_nodes
        self.add_state("counts", default=torch.zeros(len(FIELDS), n, dtype=torch.int64), dist_reduce_fx="sum")
        self.add_state("documents", default=torch.zeros((), dtype=torch.int64), dist_reduce_fx="sum")

    def update(self, y_true: Any, y_pred: Any) -> None:
        """Add a batch (documents × labels; scores when the metric has a decision rule)."""
        c = self.accumulator.batch_counts(y_true, y_pred)
        counts = torch.from_numpy(np.stack([getattr(c, f) for f in FIELDS]).astype(np.int64))
        self.counts += counts.to(self.counts.device)
        self.documents += int(np.shape(y_true)[0])

    def evaluation(self) -> AccumulatedEvaluation:
        """The evaluation of the counts held (after a sync, every process's)."""
        arrays = self.counts.detach().cpu().numpy()
        counts = NodeCounts(**{f: arrays[i] for i, f in enumerate(FIELDS)})
        return self.accumulator.evaluation_of(counts, int(self.documents))

    def compute(self) -> dict[str, torch.Tensor]:
        """Micro precision, recall and F1 by measure and level, named as
        :func:`~cophe_core.integrations.mlflow.evaluation_metrics` names them."""
        metrics = evaluation_metrics(self.evaluation(), self.prefix)
        return {k: torch.tensor(v, dtype=torch.float64) for k, v in metrics.items()}
