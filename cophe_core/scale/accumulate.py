"""Scoring inside a training loop: an accumulator fed batch by batch, merged across workers.

A validation loop sees its documents a batch at a time, often on several processes. Every count of
:mod:`cophe_core.metrics` is a sum over documents (a document's TP, FP and FN at a node depend on its own
gold and predicted codes only), so the per-node counts (:class:`~cophe_core.metrics.NodeCounts`) of the
batches add up to those of all the documents at once, and so do every table built from them: the
:class:`Accumulator`'s :meth:`~Accumulator.compute` gives the figures :func:`cophe_core.metrics.evaluate`
gives on all the rows together, to the last digit.

**State.** The summed per-node counts (15 int64 arrays of ``ontology.n_nodes``) and the number of documents;
the rows of the last batches, up to ``chunk_rows`` documents, wait in a buffer and are counted together,
because counting has a fixed cost per call that a batch of 16 documents would pay hundreds of times. An
update itself scans each array once, checks only its non-zero cells (dense scores under a threshold: two
reductions for the range, then the cells at or above it) and keeps their flat positions; rows and nodes are
worked out at the flush. So memory does not grow with the number of batches. With
``keep_documents=True`` (needed for the per-document table and for bootstrap intervals) each document's
counts are kept too: about 4 bytes × (6 + 6 × levels) a document.

**Inputs.** Arrays of documents × labels: numpy, ``scipy.sparse``, or anything with ``__array__`` (a torch
tensor included; one on a GPU is moved to the CPU by its own ``.cpu()``), each column the code named by
``labels``, placed in the ontology as the file readers place codes.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, NoReturn

import numpy as np
import pandas as pd
import scipy.sparse as sp

from ..base.files import InputError
from ..metrics import NodeCounts, evaluate
from ..ontology import Ontology, load_ontology
from ..scoring.decisions import check_rule
from ..scoring.labels import resolve_codes
from ..scoring.scores import ScoredRun
from .pipeline import CountedFigures

__all__ = ["Accumulator", "AccumulatedEvaluation"]


@dataclass(frozen=True, eq=False)
class AccumulatedEvaluation(CountedFigures):
    """The figures of an :class:`Accumulator`: those of :class:`~cophe_core.metrics.Evaluation` (``score``,
    ``macro``, ``levels_table``, ``macro_table``, ``nodes``, ``to_dict``; ``documents``, ``document_counts``
    and ``bootstrap`` when the documents were kept), from the same functions of the summed counts.

    Attributes
    ----------
    ontology : Ontology
        Extended with the labels' unlisted codes.
    max_level : str
    node_counts : NodeCounts
        Summed over all documents.
    docs : Index of str
        The documents' row numbers (``"0"``, ``"1"``…) in the order the accumulator saw them, as
        :func:`~cophe_core.metrics.evaluate` names rows.
    document_values : ndarray, optional
        The per-document table as int32, or ``None`` when the documents were not kept.
    document_columns : list of str
    """

    ontology: Ontology
    max_level: str
    node_counts: NodeCounts
    docs: pd.Index
    document_values: np.ndarray | None
    document_columns: list[str]

    def document_block(self) -> tuple[np.ndarray | None, list[str]]:
        return self.document_values, self.document_columns


class Accumulator:
    """Flat, set-based and CoPHE counts summed over batches of indicator (or score) matrices.

    Parameters
    ----------
    labels : sequence of str
        The code of each column (``MultiLabelBinarizer().classes_``).
    ontology : str or Ontology
        ``"icd9"``, ``"icd10cm"``, ``"icd10pcs"``, ``"icd10"``, a hierarchy file, or an :class:`Ontology`.
    max_level : str, optional
        The highest level evaluated (default the ontology's, ``"block"`` for ICD).
    threshold, top_k : optional
        A decision rule (at most one): then :meth:`update` takes scores in [0, 1] and predicts the codes
        scoring at least ``threshold``, or each document's ``top_k`` best (ties go to the code that sorts
        first), as :func:`cophe_core.metrics.precision_recall_fscore_hierarchical_from_scores` does.
    keep_documents : bool
        Keep each document's counts, for the per-document table and bootstrap intervals (memory grows with
        the documents; see the module docs).
    system : {"auto", "diagnosis", "procedure"}
        For ICD-9: which list undotted codes such as ``4019`` come from.
    chunk_rows : int
        How many buffered documents are counted together (memory is bounded by it).

    Examples
    --------
    >>> import numpy as np
    >>> acc = Accumulator(labels=["401.9", "401.1", "428.0"], ontology="icd9")
    >>> acc.update(np.array([[1, 0, 1]]), np.array([[0, 1, 1]]))
    >>> other = Accumulator(labels=["401.9", "401.1", "428.0"], ontology="icd9")
    >>> other.update(np.array([[0, 0, 1]]), np.array([[0, 0, 0]]))
    >>> ev = acc.merge(other).compute()
    >>> ev.score("cophe", "e0").f1, ev.score("flat").f1, len(ev.docs)
    (0.8, 0.4, 2)
    """

    def __init__(
        self,
        labels: Sequence[str],
        ontology: str | Ontology,
        *,
        max_level: str | None = None,
        threshold: float | None = None,
        top_k: int | None = None,
        keep_documents: bool = False,
        system: str = "auto",
        chunk_rows: int = 4096,
    ) -> None:
        self.labels = _distinct(labels)
        onto = load_ontology(ontology) if not isinstance(ontology, Ontology) else ontology
        placed = resolve_codes(self.labels, onto, system=system)
        if placed.reasons:
            bad = "; ".join(f"{self.labels[i]!r}: {w}" for i, (_, w) in list(placed.reasons.items())[:5])
            raise InputError(
                f"{len(placed.reasons)} of the labels cannot be placed in {onto.name}: {bad}",
                fix="give the code of each column as the ontology writes it",
            )
        if len(np.unique(placed.nodes)) < len(self.labels):
            raise InputError("labels name the same code twice (e.g. 4019 and 401.9); merge those columns")
        self.ontology: Ontology = placed.ontology
        self.nodes = np.asarray(placed.nodes, dtype=np.int64)  # label column → node id
        self.max_level = self.ontology.top_level(max_level)  # checked now rather than at compute()
        self.rule = None if threshold is None and top_k is None else check_rule(threshold, top_k)
        self.keep_documents = keep_documents
        self.chunk_rows = int(chunk_rows)
        self.reset()

    # ------------------------------------------------------------------ state
    def reset(self) -> None:
        """Forget every document (an epoch starts)."""
        self.counts = NodeCounts.zeros(self.ontology.n_nodes)
        self.n_documents = 0
        self._documents: list[np.ndarray] = []
        self._columns: list[str] = []
        # each waiting batch: the flat positions (row × labels + column) of its gold and predicted cells,
        # and its number of rows
        self._buffer: list[tuple[np.ndarray, np.ndarray, int]] = []
        self._buffered = 0

    def update(self, y_true: Any, y_pred: Any) -> None:
        """Add a batch: ``y_true`` 0/1 indicators and ``y_pred`` 0/1 indicators (scores in [0, 1] when the
        accumulator has a decision rule), both documents × labels."""
        # a training loop calls this for every batch: one scan of each array and a check of its non-zero
        # cells only; their rows in the buffer, columns and nodes are worked out at the flush, for all the
        # buffered batches at once
        width = len(self.nodes)
        gold, n, _ = _cells(y_true, "y_true", width)
        if self.rule is None:
            pred, m, _ = _cells(y_pred, "y_pred", width)
        else:
            pred, m = self._decide(y_pred)
        if n != m:
            raise InputError(f"y_true has {n} rows and y_pred {m}; give both for the same documents")
        self._buffer.append((gold, pred, n))
        self._buffered += n
        if self._buffered >= self.chunk_rows:
            self._flush()

    def merge(self, other: Accumulator) -> Accumulator:
        """Add the documents of ``other`` (another worker's, on the same labels, ontology and rule) to
        these, after them; returns ``self``."""
        if (
            other.labels != self.labels
            or other.ontology.n_nodes != self.ontology.n_nodes
            or (other.max_level, other.rule, other.keep_documents)
            != (self.max_level, self.rule, self.keep_documents)
        ):
            raise ValueError(
                "accumulators merged need the same labels, ontology, max_level, rule and keep_documents"
            )
        self._flush()
        other._flush()
        self.counts = self.counts + other.counts
        self.n_documents += other.n_documents
        self._documents += other._documents
        self._columns = self._columns or other._columns
        return self

    def compute(self) -> AccumulatedEvaluation:
        """The evaluation of every document added (:class:`AccumulatedEvaluation`)."""
        self._flush()
        ev = self.evaluation_of(self.counts, self.n_documents)
        if self.keep_documents and self.n_documents > 0:
            ev = dataclasses.replace(
                ev, document_values=np.concatenate(self._documents), document_columns=list(self._columns)
            )
        return ev

    def evaluation_of(self, counts: NodeCounts, n_documents: int) -> AccumulatedEvaluation:
        """The evaluation of per-node counts summed elsewhere (by a metric synced across processes, say) on
        these labels, ontology and levels; no per-document table."""
        return AccumulatedEvaluation(
            self.ontology, self.max_level, counts, pd.Index(np.arange(n_documents).astype(str)), None, []
        )

    def batch_counts(self, y_true: Any, y_pred: Any) -> NodeCounts:
        """The per-node counts of one batch alone (the state of a metric that sums counts across processes,
        such as the torchmetrics one); the accumulator is left as it was."""
        saved = (self.counts, self.n_documents, self._documents, self._columns, self._buffer, self._buffered)
        keep, self.keep_documents = self.keep_documents, False
        try:
            self.reset()
            self.update(y_true, y_pred)
            self._flush()
            return self.counts
        finally:
            self.keep_documents = keep
            (self.counts, self.n_documents, self._documents, self._columns, self._buffer, self._buffered) = (
                saved
            )

    def __getstate__(self) -> dict[str, Any]:
        self._flush()  # the counts, not the rows, travel to another process
        return self.__dict__.copy()

    # ------------------------------------------------------------------ counting
    def _flush(self) -> None:
        """Count the buffered documents together and add them to the state."""
        if not self._buffer:
            return
        rows = np.array([b[2] for b in self._buffer])
        gold = self._buffered_cells([b[0] for b in self._buffer], rows)
        pred = self._buffered_cells([b[1] for b in self._buffer], rows)
        ev = evaluate(gold, pred, self.ontology, max_level=self.max_level)
        self.counts = self.counts + ev.node_counts
        self.n_documents += self._buffered
        if self.keep_documents:
            table = ev.documents.drop(columns="doc_id")
            self._columns = list(table.columns)
            self._documents.append(table.to_numpy(dtype=np.int32))
        self._buffer, self._buffered = [], 0

    def _buffered_cells(self, parts: list[np.ndarray], rows: np.ndarray) -> sp.csr_matrix:
        """The documents × nodes 0/1 matrix of the buffered batches' cells, given as each batch's flat
        positions (``parts``) and number of rows."""
        at = np.concatenate(parts)
        if len(parts) > 1:  # each batch's positions after those of the batches before it
            at += np.repeat((np.cumsum(rows) - rows) * len(self.nodes), [len(p) for p in parts])
        return _matrix(at, self.nodes, (self._buffered, self.ontology.n_nodes))

    def _decide(self, y_score: Any) -> tuple[np.ndarray, int]:
        """The flat positions of the cells predicted from scores under the rule, and the number of rows."""
        assert self.rule is not None  # update() calls this only under a rule
        kind, value = self.rule
        width = len(self.nodes)
        at, n, vals = _cells(
            y_score, "y_score", width, scores=True, threshold=value if kind == "threshold" else 0
        )
        if kind == "threshold":
            return at, n
        # top-k by the file-based path's own rule (ScoredRun.decide: ties go to the code that sorts first)
        rows, cols = np.divmod(at, width)
        scores = sp.csr_matrix(
            (vals.astype(float), (rows, self.nodes[cols])), shape=(n, self.ontology.n_nodes)
        )
        run = ScoredRun(self.ontology, np.arange(n).astype(str), sp.csr_matrix(scores.shape), scores)
        decided = run.decide(top_k=int(value)).tocoo()
        back = np.full(self.ontology.n_nodes, -1, dtype=np.int64)
        back[self.nodes] = np.arange(width)
        return decided.row.astype(np.int64) * width + back[decided.col], n


def _distinct(labels: Sequence[str]) -> list[str]:
    names = [str(x) for x in labels]
    if not names:
        raise InputError("labels is empty: give the code of each column")
    if len(set(names)) < len(names):
        seen = pd.Index(names)
        raise InputError(
            f"labels must be distinct; repeated: {', '.join(map(repr, seen[seen.duplicated()][:5]))}"
        )
    return names


def _array(y: Any) -> Any:
    """A scipy.sparse matrix as it is; anything else as a numpy array (a torch tensor through ``detach`` and
    ``cpu``, duck-typed so that torch is never imported)."""
    if isinstance(y, np.ndarray) or sp.issparse(y):
        return y
    if hasattr(y, "detach") and hasattr(y, "cpu"):
        y = y.detach().cpu()
    return np.asarray(y)


def _cells(
    y: Any, name: str, width: int, *, scores: bool = False, threshold: float = 0.0
) -> tuple[np.ndarray, int, np.ndarray]:
    """The cells of a documents × labels batch that count, as their flat positions (row × ``width`` +
    column, int64), the number of rows, and the cells' values: the non-zero cells of 0/1 indicators, or of
    scores in [0, 1] those scoring at least ``threshold``. Checked: ``width`` columns, every value 0/1 (in
    [0, 1] for scores)."""
    a = y if type(y) is np.ndarray else _array(y)
    if a.ndim != 2 or a.shape[1] != width:
        raise InputError(f"{name} has shape {tuple(a.shape)}; it needs one column per label ({width})")
    n = int(a.shape[0])
    if not isinstance(a, np.ndarray):  # scipy.sparse
        m = sp.csr_matrix(a)
        m.sum_duplicates()
        m.eliminate_zeros()
        at = np.repeat(np.arange(n, dtype=np.int64) * width, np.diff(m.indptr)) + m.indices
        vals = m.data
    elif scores and threshold > 0 and a.size:
        return _dense_scores(a.reshape(-1), name, width, threshold, n)
    else:  # one scan of the array: a mask and its flat positions (np.nonzero on floats is far slower)
        flat = a.reshape(-1)
        at = (flat != 0).nonzero()[0]  # NaN != 0 as well: a NaN is a cell, for the check below to find
        vals = flat[at]
    bad = ~((vals >= 0) & (vals <= 1)) if scores else vals != 1
    if np.count_nonzero(bad):  # not bad.any(): a quarter of the fixed cost, and this runs every batch
        _refuse(name, at, vals, bad, width, scores=scores)
    if threshold > 0:
        keep = vals >= threshold
        at, vals = at[keep], vals[keep]
    return at.astype(np.int64, copy=False), n, vals


def _dense_scores(
    flat: np.ndarray, name: str, width: int, threshold: float, n: int
) -> tuple[np.ndarray, int, np.ndarray]:
    """:func:`_cells` of a dense score matrix (flattened) under a threshold. A model's scores are non-zero
    almost everywhere, so the range is checked by two reductions (NaN fails both) and only the cells
    reaching the threshold are gathered."""
    if not (flat.min() >= 0 and flat.max() <= 1):
        _refuse(name, np.arange(flat.size), flat, ~((flat >= 0) & (flat <= 1)), width, scores=True)
    at = (flat >= threshold).nonzero()[0]
    return at.astype(np.int64, copy=False), n, flat[at]


def _refuse(
    name: str, at: np.ndarray, vals: np.ndarray, bad: np.ndarray, width: int, *, scores: bool
) -> NoReturn:
    """The error naming a batch's first cell that is not 0/1 (not in [0, 1] for scores)."""
    i = int(np.flatnonzero(bad)[0])
    row, col = divmod(int(at[i]), width)
    want = (
        "scores in [0, 1]"
        if scores
        else "0/1 indicators (for scores, give the accumulator a threshold or top_k)"
    )
    raise InputError(f"{name} row {row}, column {col}: {vals[i].item()!r}; it must hold {want}")


def _matrix(at: np.ndarray, nodes: np.ndarray, shape: tuple[int, int]) -> sp.csr_matrix:
    """The documents × nodes 0/1 matrix of cells at flat positions ``at`` (row × labels + column), each
    column moved onto its code's node by ``nodes``."""
    rows, cols = np.divmod(at, len(nodes))
    return sp.csr_matrix((np.ones(len(at), dtype=np.int8), (rows, nodes[cols])), shape=shape)
