"""Streamed scoring: gold standards and predictions of any size, read in chunks, in bounded memory.

Every count of :mod:`cophe_core.metrics` is a sum over documents: a document's TP, FP and FN at each node
depend on that document's gold and predicted codes only. So inputs too large for memory are scored in
three steps, and the figures are those of the in-memory path (:func:`cophe_core.api.score_files`), to the
last digit:

1. **Spill.** Each source (a Parquet file, a folder of Parquet files, hive-partitioned or not, a glob, or
   a CSV/TSV file) is read in chunks of rows: Parquet by pyarrow's dataset scanner, one record batch at a
   time; CSV/TSV in blocks of whole lines. Each chunk goes through the readers' own normalisation and
   validation (:func:`cophe_core.readers.read_frame`), and its rows are hashed by document id into B
   buckets, written as Arrow IPC files to a temporary folder. So every row of a document, gold and
   predicted, ends up in the same bucket. The distinct code strings are collected.
2. **Resolve.** The distinct codes (thousands, not millions) are placed in the ontology once
   (:func:`resolve_table`), as :func:`cophe_core.labels.encode` places them: the same extension of the
   ontology for unlisted codes, the same node ids, the same rejected codes with their reasons.
3. **Count.** Each bucket is counted by :func:`count_partition`, a pure function of two pandas DataFrames
   (gold and predicted rows of the same documents); the per-node counts (:class:`~cophe_core.metrics.NodeCounts`)
   are summed, and the per-document table (documents × levels × TP/FP/FN, small) is kept.

The result, :class:`StreamedEvaluation`, offers the figures of :class:`~cophe_core.metrics.Evaluation`
(levels, macro, node and document tables, ``to_dict``) and the bootstrap; the tables are the metrics
module's functions of the summed counts.

**The ICM paper's metrics** (``suite=True``, ``--metrics suite``) need the gold standard's class
probabilities before any document is scored, so they take two passes: step 3 also counts the gold
standard's :class:`~cophe_core.suite.Frequencies` (sums over documents), and a further pass over the buckets
scores each document with the whole gold standard's frequencies (:func:`suite_partition`) and sums the
per-document values. Their bootstrap intervals are not offered (they would need every document's values).

**Code slices** (``slice_edges=``) take one more pass: each code-frequency slice's codes counted alone,
for the aggregate analysis (:mod:`cophe_core.aggregate`).

**Memory.** Pass 1 holds one chunk; pass 2 one bucket (about ``chunk_rows`` rows); the result holds the
per-node counts, the sorted document ids (about 20 bytes a document), the per-document table (about 140 bytes
a document; optional) and the rejected and flagged rows.

**Distributed counting.** :func:`count_partition` needs no state but its arguments, and its arguments and
result pickle. To count under Dask or Spark: collect the distinct codes (``unique()`` of both code
columns), resolve them once with :func:`resolve_table` on the driver, partition gold and predictions by a
hash of the document id (so that a document's rows share a partition), apply ``count_partition`` to each
pair of partitions, and :meth:`PartitionCounts.combine` the results.
"""

from __future__ import annotations

import dataclasses
import math
import os
import tempfile
from abc import abstractmethod
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from functools import cached_property
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.dataset as ds
import scipy.sparse as sp

from .datasets import DEFAULT_CHUNK_ROWS, dataset_files, glob_root, is_dataset
from .files import (
    InputError,
    binary_as_text,
    check_width,
    decode_text,
    excerpt,
    parse_delimited,
    sniff_separator,
)
from .labels import (
    FileRows,
    NothingScorable,
    RowBound,
    TooManyRejected,
    check_rows,
    coverage_notes,
    duplicates_note,
    summarise_rows,
    undotted_mask,
)
from .metrics import Evaluation, Figures, NodeCounts, evaluate
from .ontology import Ontology, choose_ontology, system_of, systems
from .ontology.base import Placement
from .readers import REJECTED_COLUMNS, RawScores, headerless_columns, read_frame
from .suite import Frequencies, document_sums, left_out_note, per_document, suite_of_sums, sum_frequencies

if TYPE_CHECKING:
    import networkx as nx

__all__ = [
    "CodeTable",
    "CountedFigures",
    "PartitionCounts",
    "StreamedEvaluation",
    "count_partition",
    "dataset_files",
    "is_dataset",
    "resolve_table",
    "resolve_tables",
    "nothing_scorable",
    "rejected_codes",
    "score_dataset",
    "suite_partition",
    "DEFAULT_CHUNK_ROWS",
]

STREAMED_FORMATS = {".parquet": "parquet", ".pq": "parquet", ".csv": "csv", ".tsv": "tsv", ".txt": "csv"}
# a spilled row's line holds its file's index in the high bits: one int64 column says file and line
_FILE_SHIFT = 40
_LINE_MASK = (1 << _FILE_SHIFT) - 1


# ------------------------------------------------------------------ the code table


@dataclass(frozen=True, eq=False)
class CodeTable:
    """Distinct code strings resolved once against an ontology (:func:`resolve_table`), so that every
    partition of the documents places each code on the same node.

    Attributes
    ----------
    codes : ndarray of str
        The distinct code strings, sorted.
    nodes : ndarray of int64
        The node of each code, -1 where the code is rejected.
    ontology : Ontology
        The ontology, extended with the unlisted codes that were placed.
    reason, reason_kind, flag, flag_kind : ndarray of object
        Per code: why it is rejected (``""`` when it is not) and the :class:`~cophe_core.files.Reason`;
        the caveat it is scored with, and its kind.
    """

    codes: np.ndarray
    nodes: np.ndarray
    ontology: Ontology
    reason: np.ndarray
    reason_kind: np.ndarray
    flag: np.ndarray
    flag_kind: np.ndarray

    @cached_property
    def index(self) -> pd.Index:
        """The codes as an index, to look strings up."""
        return pd.Index(self.codes, dtype=object)

    def positions(self, codes: pd.Series) -> np.ndarray:
        """The position in :attr:`codes` of each value of ``codes`` (strings or categorical), -1 for a
        missing value (a document row without a code); a code not in the table is a ``ValueError``."""
        if isinstance(codes.dtype, pd.CategoricalDtype):
            at = self.index.get_indexer(np.asarray(codes.cat.categories, dtype=object))
            c = codes.cat.codes.to_numpy()
            pos = np.where(c >= 0, at[np.maximum(c, 0)], -1) if len(at) else np.full(len(c), -1)
            unknown = (c >= 0) & (pos < 0)
        else:
            values = codes.to_numpy(dtype=object)
            present = codes.notna().to_numpy()
            pos = np.where(present, self.index.get_indexer(values), -1)
            unknown = present & (pos < 0)
        if unknown.any():
            first = codes.to_numpy(dtype=object)[np.flatnonzero(unknown)[0]]
            raise ValueError(
                f"code {first!r} is not in the code table: resolve the codes of every partition first "
                "(resolve_table)"
            )
        return pos


def resolve_table(codes: Iterable[str], ontology: Ontology, *, system: str = "auto") -> CodeTable:
    """Place the distinct code strings of one input in ``ontology`` once, as
    :func:`cophe_core.labels.encode` places an input's codes: the same node ids, the same extension for
    unlisted codes, the same reasons. For a gold standard and predictions, each read on its own evidence,
    use :func:`resolve_tables`.

    Examples
    --------
    >>> from cophe_core.ontology import icd9_ontology
    >>> t = resolve_table(["428.0", "401.9", "XYZ", "401.9"], icd9_ontology())
    >>> t.codes.tolist(), [int(n) >= 0 for n in t.nodes], t.reason_kind[2]
    (['401.9', '428.0', 'XYZ'], [True, True, False], <Reason.MALFORMED_CODE: 'malformed_code'>)
    """
    return resolve_tables([codes], ontology, system=system)[0]


def resolve_tables(
    sides: Sequence[Iterable[str]], ontology: Ontology, *, system: str = "auto"
) -> tuple[CodeTable, ...]:
    """One code table per input (the gold standard's codes, then the predictions'), as
    :func:`cophe_core.labels.encode` places them: each input's codes read on its own evidence (an undotted
    run makes no ``684`` of the gold standard ambiguous), the ontology extended once by the unlisted codes
    of all (:func:`cophe_core.ontology.systems.resolve_inputs`), so every table shares one ontology.

    Examples
    --------
    >>> from cophe_core.ontology import icd9_ontology
    >>> gold, pred = resolve_tables([["401.9", "684"], ["4019", "684"]], icd9_ontology())
    >>> [int(n) >= 0 for n in gold.nodes], [int(n) >= 0 for n in pred.nodes], gold.ontology is pred.ontology
    ([True, True], [False, False], True)
    """
    distinct = [np.asarray(sorted({str(c) for c in codes}), dtype=object) for codes in sides]
    placed = systems.resolve_inputs([d.astype(str) for d in distinct], ontology, system)
    return tuple(_table(d, r) for d, r in zip(distinct, placed))


def _table(distinct: np.ndarray, r: Placement) -> CodeTable:
    n = len(distinct)
    reason, reason_kind = np.full(n, "", dtype=object), np.full(n, None, dtype=object)
    flag, flag_kind = np.full(n, "", dtype=object), np.full(n, None, dtype=object)
    for i, (kind, words) in r.reasons.items():
        reason[i], reason_kind[i] = words, kind
    for i, (kind, words) in r.flags.items():
        flag[i], flag_kind[i] = words, kind
    return CodeTable(
        distinct, np.asarray(r.nodes, dtype=np.int64), r.ontology, reason, reason_kind, flag, flag_kind
    )


# ------------------------------------------------------------------ counting one partition


@dataclass(frozen=True, eq=False)
class PartitionCounts:
    """What :func:`count_partition` counts in one partition of the documents; partitions of disjoint
    documents add up (``a + b``, :meth:`combine`).

    Attributes
    ----------
    counts : NodeCounts
        Per-node counts summed over the partition's documents, ``docs_over`` and ``docs_under`` included.
    documents : DataFrame
        The per-document table, columns as :attr:`cophe_core.metrics.Evaluation.documents`.
    rejected, flagged : DataFrame
        Rows not scored, and rows scored with a caveat: ``file, line, value, reason, kind``.
    duplicates : tuple of int
        (Document, code) rows collapsed into one, in the gold and in the predictions.
    only_gold, only_pred : int
        Documents with rows on one side only.
    scored : dict of str → int
        Rows scored per file.
    frequencies : Frequencies, optional
        The gold standard's frequencies in the partition (``count_partition(..., frequencies=True)``).
    """

    counts: NodeCounts
    documents: pd.DataFrame
    rejected: pd.DataFrame
    flagged: pd.DataFrame
    duplicates: tuple[int, int] = (0, 0)
    only_gold: int = 0
    only_pred: int = 0
    scored: dict[str, int] = field(default_factory=dict)
    frequencies: Frequencies | None = None

    def __add__(self, other: PartitionCounts) -> PartitionCounts:
        return PartitionCounts.combine([self, other])

    @staticmethod
    def combine(parts: Sequence[PartitionCounts]) -> PartitionCounts:
        """The counts of the union of disjoint partitions: counts summed, tables concatenated once.

        >>> from cophe_core.ontology import load_ontology
        >>> a = count_partition(pd.DataFrame({"doc_id": ["1"], "code": ["401.9"]}),
        ...                     pd.DataFrame({"doc_id": ["1"], "code": ["401.1"]}), load_ontology("icd9"))
        >>> b = PartitionCounts.combine([a, a])
        >>> int(b.counts.tp.sum()) == 2 * int(a.counts.tp.sum()), len(b.documents)
        (True, 2)
        """
        if not parts:
            raise ValueError("no partitions to combine")
        counts = parts[0].counts
        for p in parts[1:]:
            counts = counts + p.counts
        scored: dict[str, int] = {}
        for p in parts:
            for k, v in p.scored.items():
                scored[k] = scored.get(k, 0) + v
        known = [p.frequencies for p in parts if p.frequencies is not None]
        return PartitionCounts(
            counts,
            _concat([p.documents for p in parts]),
            _concat([p.rejected for p in parts]),
            _concat([p.flagged for p in parts]),
            (sum(p.duplicates[0] for p in parts), sum(p.duplicates[1] for p in parts)),
            sum(p.only_gold for p in parts),
            sum(p.only_pred for p in parts),
            scored,
            None if len(known) < len(parts) else sum_frequencies(known),
        )


def _concat(frames: list[pd.DataFrame]) -> pd.DataFrame:
    full = [f for f in frames if len(f)]
    return pd.concat(full, ignore_index=True) if full else frames[0].iloc[:0]


@dataclass(frozen=True)
class _Side:
    """One side's rows of a partition, resolved."""

    doc: pd.Series  # every row's document id
    node: np.ndarray  # node of the row's code; -1: rejected or no code
    coded: np.ndarray  # bool: the row has a code
    ok: np.ndarray  # bool: the row is scored
    rejected: pd.DataFrame
    flagged: pd.DataFrame
    scored: dict[str, int]


def _side(frame: pd.DataFrame, table: CodeTable, default_file: str) -> _Side:
    for col in ("doc_id", "code"):
        if col not in frame.columns:
            raise ValueError(f"a partition needs the columns doc_id and code; {default_file} has no {col!r}")
    n = len(frame)
    pos = table.positions(frame["code"])
    coded = pos >= 0
    node = np.where(coded, table.nodes[np.maximum(pos, 0)] if len(table.nodes) else -1, -1)
    ok = node >= 0
    line = frame["line"].to_numpy(dtype=np.int64) if "line" in frame.columns else np.arange(1, n + 1)
    files = (
        frame["file"].astype("category")
        if "file" in frame.columns
        else pd.Series(pd.Categorical.from_codes(np.zeros(n, dtype=np.int8), [default_file]))
    )
    names = np.asarray(files.cat.categories, dtype=object)
    fcode = files.cat.codes.to_numpy()

    def rows(mask: np.ndarray, text: np.ndarray, kind: np.ndarray) -> pd.DataFrame:
        p = pos[mask]
        return pd.DataFrame(
            {
                "file": names[fcode[mask]],
                "line": line[mask],
                "value": table.codes[p],
                "reason": text[p],
                "kind": kind[p],
            },
            columns=REJECTED_COLUMNS,
        )

    bad = coded & ~ok
    flagged = ok & (table.flag != "")[np.maximum(pos, 0)] if len(table.codes) else np.zeros(n, dtype=bool)
    per_file = np.bincount(fcode[ok], minlength=len(names))
    return _Side(
        frame["doc_id"].reset_index(drop=True),
        node,
        coded,
        ok,
        rows(bad, table.reason, table.reason_kind),
        rows(flagged, table.flag, table.flag_kind),
        {str(k): int(v) for k, v in zip(names, per_file)},
    )


def _label_matrix(doc: np.ndarray, node: np.ndarray, shape: tuple[int, int]) -> tuple[sp.csr_matrix, int]:
    """Documents × nodes (int8) from (document, node) rows, and how many repeated rows collapsed (a repeated
    row's cell holds its count; :func:`~cophe_core.metrics.evaluate` reads any non-zero as 1)."""
    m = sp.csr_matrix((np.ones(len(doc), dtype=np.int32), (doc, node)), shape=shape)
    m.sum_duplicates()
    return m.astype(np.int8), len(doc) - m.nnz


Tables = CodeTable | Sequence[CodeTable]  # one table for both sides, or the gold's and the predictions'


def _pair(codes: Tables) -> tuple[CodeTable, CodeTable]:
    """The gold standard's and the predictions' code tables: a single table serves both sides."""
    if isinstance(codes, CodeTable):
        return codes, codes
    gold, pred = codes
    if gold.ontology.n_nodes != pred.ontology.n_nodes:  # (a pickled pair is two copies of one ontology)
        raise ValueError(
            "the two code tables were resolved apart: resolve both sides at once (resolve_tables)"
        )
    return gold, pred


def count_partition(
    gold: pd.DataFrame,
    pred: pd.DataFrame,
    codes: Tables | Ontology,
    *,
    max_level: str | None = None,
    system: str = "auto",
    documents: bool = True,
    frequencies: bool = False,
) -> PartitionCounts:
    """Count one partition of the documents: every row of its documents, gold and predicted.

    A pure function of pandas DataFrames (no file, no global state; arguments and result pickle), so that
    it runs unchanged on the buckets of :func:`score_dataset` and on co-partitioned pandas partitions in Dask
    (``dask.delayed`` over pairs of partitions) or Spark (``cogroup(...).applyInPandas`` hands over two
    DataFrames; ``mapInPandas``, one, needs a ``side`` column split into the two).

    Parameters
    ----------
    gold, pred : DataFrame
        Columns ``doc_id`` (str) and ``code`` (str or categorical; missing: a document row without a
        code), optionally ``line`` (int; default the row number from 1) and ``file`` (the file name the
        rejected rows quote; default ``"gold"`` and ``"pred"``). Rows are as the readers normalise them
        (:func:`cophe_core.readers.read_frame`).
    codes : (CodeTable, CodeTable), CodeTable or Ontology
        The codes of **all** partitions resolved once, so that partitions agree on the nodes of unlisted
        codes: the gold standard's table and the predictions' (:func:`resolve_tables`, each side's codes
        read on its own evidence), or one table for both sides (:func:`resolve_table`); an ontology
        resolves this partition's codes alone (one partition).
    max_level : str, optional
        The highest level evaluated (default the ontology's).
    system : {"auto", "diagnosis", "procedure"}
        For ICD-9, with an ontology: which table undotted codes come from.
    documents : bool
        Count the per-document table; without it, ``documents`` has the ``doc_id`` column only.
    frequencies : bool
        Also count the partition's :class:`~cophe_core.suite.Frequencies` (the first pass of the ICM paper's
        metrics; see :func:`suite_partition`).

    Returns
    -------
    PartitionCounts
        The per-node counts (``counts``), the per-document table, the rejected and flagged rows.

    Examples
    --------
    >>> from cophe_core.ontology import load_ontology
    >>> gold = pd.DataFrame({"doc_id": ["1", "1", "2"], "code": ["401.9", "428.0", "XYZ"]})
    >>> pred = pd.DataFrame({"doc_id": ["1"], "code": ["401.1"]})
    >>> part = count_partition(gold, pred, load_ontology("icd9"))
    >>> part.documents[["doc_id", "e0_tp", "e0_fn"]].values.tolist()
    [['1', 1, 1], ['2', 0, 0]]
    >>> part.rejected[["file", "line", "value"]].values.tolist(), part.only_gold
    ([['gold', 3, 'XYZ']], 1)
    """
    ev, g, p, dups, in_gold, in_pred = _partition_evaluation(gold, pred, codes, max_level, system)
    return PartitionCounts(
        ev.node_counts,
        ev.documents if documents else pd.DataFrame({"doc_id": ev.docs}),
        _concat([g.rejected, p.rejected]),
        _concat([g.flagged, p.flagged]),
        dups,
        int((in_gold & ~in_pred).sum()),
        int((in_pred & ~in_gold).sum()),
        {**g.scored, **{k: p.scored.get(k, 0) + g.scored.get(k, 0) for k in p.scored}},
        Frequencies.of(ev) if frequencies else None,
    )


def _partition_evaluation(
    gold: pd.DataFrame, pred: pd.DataFrame, codes: Tables | Ontology, max_level: str | None, system: str
) -> tuple[Evaluation, _Side, _Side, tuple[int, int], np.ndarray, np.ndarray]:
    """The in-memory evaluation of one partition's documents, with its sides' resolved rows, the repeated
    rows collapsed on each side, and which documents have gold and predicted rows."""
    if isinstance(codes, Ontology):
        values = [f["code"].dropna().astype(str).unique() for f in (gold, pred)]
        codes = resolve_tables(values, codes, system=system)
    tables = _pair(codes)
    onto = tables[0].ontology
    g, p = _side(gold, tables[0], "gold"), _side(pred, tables[1], "pred")
    idx, uniques = pd.factorize(pd.concat([g.doc, p.doc], ignore_index=True))
    docs = np.asarray(uniques, dtype=object).astype(str)
    gi, pi = idx[: len(g.doc)], idx[len(g.doc) :]
    shape = (len(docs), onto.n_nodes)
    gm, gdups = _label_matrix(gi[g.ok], g.node[g.ok], shape)
    pm, pdups = _label_matrix(pi[p.ok], p.node[p.ok], shape)
    ev = evaluate(gm, pm, onto, docs=docs, max_level=max_level)
    in_gold = np.zeros(len(docs), dtype=bool)
    in_gold[gi] = True
    in_pred = np.zeros(len(docs), dtype=bool)
    in_pred[pi] = True
    return ev, g, p, (gdups, pdups), in_gold, in_pred


def suite_partition(
    gold: pd.DataFrame,
    pred: pd.DataFrame,
    codes: Tables,
    frequencies: Frequencies,
    *,
    max_level: str | None = None,
) -> dict[str, float]:
    """The second pass of the ICM paper's metrics on one partition of the documents: the
    :func:`cophe_core.suite.document_sums` of its documents, scored with the ``frequencies`` of the whole
    gold standard (the first pass: :attr:`PartitionCounts.frequencies` summed). Like :func:`count_partition`,
    a pure function of its arguments, for any engine; the sums of all partitions add up, and
    :func:`cophe_core.suite.suite_of_sums` makes the suite of them.

    >>> from cophe_core.ontology import load_ontology
    >>> from cophe_core.suite import suite_of_sums
    >>> gold = pd.DataFrame({"doc_id": ["1", "2"], "code": ["401.9", "428.0"]})
    >>> pred = pd.DataFrame({"doc_id": ["1"], "code": ["401.9"]})
    >>> table = resolve_table(["401.9", "428.0"], load_ontology("icd9"))
    >>> first = count_partition(gold, pred, table, frequencies=True)
    >>> sums = suite_partition(gold, pred, table, first.frequencies)
    >>> suite_of_sums(sums, first.counts, 2)["eb_subacc"]
    0.5
    """
    ev = _partition_evaluation(gold, pred, codes, max_level, "auto")[0]
    return document_sums(per_document(ev, frequencies))


# ------------------------------------------------------------------ the streamed evaluation


class CountedFigures(Figures):
    """The figures of an evaluation known by its summed per-node counts and, when kept, its per-document table
    as a block of numbers: those of :class:`~cophe_core.metrics.Evaluation` (:class:`~cophe_core.metrics.Figures`:
    the same tables, from the same functions of the counts, and the same JSON), without the documents × nodes
    matrices. A kind using it gives the attributes of :class:`~cophe_core.metrics.Figures` and
    :meth:`document_block`: :class:`StreamedEvaluation` and the aggregate analysis's evaluations."""

    @abstractmethod
    def document_block(self) -> tuple[np.ndarray | None, list[str]]:
        """The per-document table as int32 values (documents × columns, rows in the order of ``docs``; None when
        not kept) and its columns."""

    @property
    def has_documents(self) -> bool:
        """Whether the per-document table (intervals, paired comparisons) is available."""
        return self.document_block()[0] is not None

    @property
    def n_documents(self) -> int:
        return len(self.docs)

    @cached_property
    def documents(self) -> pd.DataFrame:
        """As :attr:`cophe_core.metrics.Evaluation.documents`, documents sorted by id."""
        values, columns = self.document_block()
        if values is None:
            raise ValueError(
                "the per-document table was not kept: score with keep_documents=True (the command line keeps it "
                "for --documents and --bootstrap)"
            )
        out: dict[str, Any] = {"doc_id": self.docs}
        for i, name in enumerate(columns):
            out[name] = values[:, i].astype(np.int64)
        return pd.DataFrame(out)

    def bootstrap(self, *, n_resamples: int = 1000, seed: int = 0, confidence: float = 0.95) -> pd.DataFrame:
        """Percentile intervals of the headline figures, as :func:`cophe_core.stats.bootstrap` (which reads
        the per-document table only); the suite's metrics are not offered here."""
        from .stats import bootstrap

        return bootstrap(self, n_resamples=n_resamples, seed=seed, confidence=confidence)


@dataclass(frozen=True, eq=False)
class StreamedEvaluation(CountedFigures):
    """The figures of a streamed scoring (:func:`score_dataset`): those of
    :class:`~cophe_core.metrics.Evaluation` (the same tables, from the same functions of the summed
    per-node counts, and the same JSON), without the documents × nodes matrices.

    Attributes
    ----------
    ontology : Ontology
        Extended with the unlisted codes found.
    max_level : str
    node_counts : NodeCounts
        Summed over all documents.
    docs : Index of str
        The evaluated documents, sorted (Arrow-backed: about 20 bytes a document).
    document_values : ndarray, optional
        The per-document table (:attr:`documents`) as int32, rows in the order of ``docs``; ``None`` when not
        kept (``keep_documents=False``): then :attr:`documents`, :meth:`document_counts` and
        :meth:`bootstrap` are not available.
    document_columns : list of str
        Its columns.
    rejected, flagged : DataFrame
        Every row not scored, and every row scored with a caveat: ``file, line, value, reason, kind``.
    warnings : list of str
        :attr:`notes`, then one line per file summing up its rejected rows and one its flagged rows.
    notes : list of str
        Duplicates collapsed, documents on one side only, the readers' warnings.
    detection : str, optional
        How the ontology was chosen, when detected from the codes.
    slice_counts : dict of str → NodeCounts
        Per code slice (by its key: :func:`cophe_core.slices.code_frequency_slices` of the gold standard's
        frequencies, the edges given to :func:`score_dataset`), the counts of the slice's codes alone, as
        :func:`cophe_core.slices.restrict` counts them.
    suite : dict of str → float, optional
        The ICM paper's metrics (``score_dataset(..., suite=True)``), as :func:`cophe_core.suite.suite`.
    rows : dict of str → FileRows
        The gold and predicted sources' rows given, scored and rejected, by source name
        (:class:`~cophe_core.labels.FileRows`).
    """

    ontology: Ontology
    max_level: str
    node_counts: NodeCounts
    docs: pd.Index
    document_values: np.ndarray | None
    document_columns: list[str]
    rejected: pd.DataFrame
    flagged: pd.DataFrame
    warnings: list[str] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    detection: str | None = None
    slice_counts: dict[str, NodeCounts] = field(default_factory=dict)
    suite: dict[str, float] | None = None
    icm_left_out: int = 0
    rows: dict[str, FileRows] = field(default_factory=dict)

    def document_block(self) -> tuple[np.ndarray | None, list[str]]:
        return self.document_values, self.document_columns

    def code_slice_counts(self, key: str, mask: np.ndarray) -> NodeCounts:
        """The counts of the code slice ``key`` counted while streaming (:attr:`slice_counts`)."""
        if key not in self.slice_counts:
            raise ValueError(
                f"the streamed evaluation has no counts of the slice {key!r}: score it with "
                "score_dataset(..., slice_edges=) and the same edges, or give slice_edges=None"
            )
        return self.slice_counts[key]

    @property
    def icm_note(self) -> str | None:
        """As :func:`cophe_core.suite.icm_note`, when the suite was computed."""
        return None if self.suite is None else left_out_note(self.icm_left_out)

    @classmethod
    def of(
        cls,
        counted: PartitionCounts,
        ontology: Ontology,
        max_level: str,
        *,
        names: Sequence[str] = ("gold", "pred"),
        files: Sequence[str] = (),
        read_rejected: pd.DataFrame | None = None,
        notes: Sequence[str] = (),
        detection: str | None = None,
        keep_documents: bool = True,
    ) -> StreamedEvaluation:
        """The evaluation of all documents' counts (the partitions of :func:`count_partition` summed, on
        any engine), assembled as :func:`score_dataset` assembles its buckets': ``names`` are the gold and
        predicted sources' (in the notes), ``files`` the file names of the rejected rows in the order they
        are listed, ``read_rejected`` the readers' own rejected rows (listed first).

        >>> from cophe_core.ontology import load_ontology
        >>> t = resolve_table(["401.9", "401.1"], load_ontology("icd9"))
        >>> part = count_partition(pd.DataFrame({"doc_id": ["1"], "code": ["401.9"]}),
        ...                        pd.DataFrame({"doc_id": ["1"], "code": ["401.1"]}), t)
        >>> ev = StreamedEvaluation.of(part, t.ontology, "block")
        >>> round(ev.score("cophe", "e0").f1, 2), ev.docs.tolist()
        (1.0, ['1'])
        """
        empty = pd.DataFrame(columns=REJECTED_COLUMNS)
        return _assemble(
            [_Kept.of(counted, keep_documents)],
            counted.counts,
            ontology,
            max_level,
            list(names),
            list(files),
            empty if read_rejected is None else read_rejected,
            list(notes),
            detection,
        )


# ------------------------------------------------------------------ sources


@dataclass(frozen=True)
class _File:
    path: Path
    name: str  # in messages and the rejected table
    fmt: str  # "parquet", "csv" or "tsv"
    partition: dict[str, str] = field(default_factory=dict)  # hive keys of its folder


def _source_files(source: str | os.PathLike[str]) -> list[_File]:
    text = os.fspath(source)
    root = glob_root(text)
    single = Path(text).is_file()
    out = []
    for p in dataset_files(text):
        fmt = STREAMED_FORMATS.get(p.suffix.lower())
        if fmt is None:
            with open(p, "rb") as f:
                fmt = "parquet" if f.read(4) == b"PAR1" else None
        if fmt is None:
            raise InputError(
                f"{p}: streamed scoring reads Parquet (.parquet) and CSV/TSV (.csv, .tsv) files; convert "
                "this one, or score it in memory"
            )
        rel = p.relative_to(root) if not single else Path(p.name)
        name = p.name if single else str(Path(root.name) / rel) if root.name else str(rel)
        keys = dict(part.split("=", 1) for part in rel.parts[:-1] if "=" in part)
        out.append(_File(p, name, fmt, keys))
    return out


def _source_name(source: str | os.PathLike[str]) -> str:
    text = os.fspath(source)
    return Path(text).name if Path(text).is_file() else text


def _frames(f: _File, chunk_rows: int, names: _Names) -> Iterator[pd.DataFrame]:
    """The file's rows in chunks, each a frame indexed by 1-based line (row number for Parquet), as the
    readers parse a whole file (``names``: the options that name the columns of a CSV/TSV file)."""
    if f.fmt == "parquet":
        yield from _parquet_frames(f, chunk_rows)
    else:
        yield from _delimited_frames(f, chunk_rows, names)


@dataclass(frozen=True)
class _Names:
    """The reading options that say whether a CSV/TSV file's first row names its columns, and which."""

    header: bool | None = None
    doc_col: str | None = None
    code_col: str | None = None


def _parquet_frames(f: _File, chunk_rows: int) -> Iterator[pd.DataFrame]:
    try:
        fragments = list(ds.dataset(str(f.path), format="parquet").get_fragments())
        start = 1
        for fragment in fragments:
            for batch in fragment.to_batches(batch_size=chunk_rows):
                frame = batch.to_pandas()
                frame.columns = [str(c) for c in frame.columns]
                frame = binary_as_text(frame, f.name, first_row=start)
                for key, value in f.partition.items():  # a hive partition's key, a column of its rows
                    if key not in frame.columns:
                        frame[key] = value
                frame.index = pd.RangeIndex(start, start + len(frame))
                start += len(frame)
                yield frame
    except (pa.ArrowException, OSError) as e:
        detail = " ".join(str(e).split())[:160]
        raise InputError(f"{f.name}: cannot read as Parquet ({type(e).__name__}: {detail})") from None


def _delimited_frames(f: _File, chunk_rows: int, names: _Names) -> Iterator[pd.DataFrame]:
    """Blocks of whole lines (never inside a quoted field), each parsed by the readers' parser below the
    file's header, their line numbers shifted to the file's. A file without a header
    (:func:`cophe_core.readers.headerless_columns`) has its first row read as data, on its own line."""
    block = max(16, chunk_rows * 24)  # bytes: about chunk_rows rows of a long doc_id,code file
    with open(f.path, "rb") as fh:
        head = fh.read(1 << 16)
        if head[:2] in (b"\xff\xfe", b"\xfe\xff"):
            raise InputError(f"{f.name}: streamed reading takes UTF-8 text; save the file as UTF-8 CSV")
        if head.startswith(b"\xef\xbb\xbf"):
            fh.seek(3)
            head = head[3:]
        else:
            fh.seek(0)
        header, line_no = b"", 0
        while not header.strip():  # blank lines before the header, as pandas skips them
            header = fh.readline()
            line_no += 1
            if not header:
                raise InputError(f"{f.name}: the file is empty; expected one row per document and code")
        header_text = decode_text(header, f.name).rstrip("\r\n")
        sep = "\t" if f.fmt == "tsv" else sniff_separator(header_text, f.name)
        check_width(header_text, f.name, sep, first=line_no)
        columns = headerless_columns(
            header_text, sep, f.name, header=names.header, doc_col=names.doc_col, code_col=names.code_col
        )
        carry = b"" if columns is None else header  # the first row is data: read in the first block
        first_line = line_no + (columns is None)  # the file's line number of the first line of the next block
        while True:
            data = fh.read(block)
            buf = carry + data
            if not buf:
                break
            cut = len(buf) if not data else _last_cut(buf)
            if cut <= 0:  # no line end outside quotes yet: read on
                carry = buf
                continue
            chunk, carry = buf[:cut], buf[cut:]
            if chunk.strip():
                try:
                    text = chunk.decode("utf-8")
                except UnicodeDecodeError as e:
                    line = first_line + chunk[: e.start].count(b"\n")
                    raise InputError(
                        f"{f.name}, line {line}: not valid UTF-8 text (byte {chunk[e.start]:#04x}); save the "
                        "file as UTF-8 CSV"
                    ) from None
                if columns is None:
                    frame = parse_delimited(header_text + "\n" + text, f.name, sep, offset=first_line - 2)
                else:
                    frame = parse_delimited(text, f.name, sep, names=columns, offset=first_line - 1)
                if frame.shape[1] < 2:
                    raise InputError(
                        f"{f.name}: found a single column {excerpt(frame.columns[0])!r}; expected a document id and a "
                        "code column separated by a comma, tab, | or ;"
                    )
                frame.index = frame.index + (first_line - (1 if columns is not None else 2))
                yield frame
            first_line += chunk.count(b"\n")
            if not data:
                break


def _last_cut(buf: bytes) -> int:
    """The end of the last whole line of ``buf`` that is not inside a quoted field (an even number of
    quotes before it; doubled quotes inside a field keep the count even), 0 when there is none."""
    end = buf.rfind(b"\n") + 1
    if b'"' not in buf[:end]:
        return end
    arr = np.frombuffer(buf, dtype=np.uint8)
    newlines = np.flatnonzero(arr == ord("\n"))
    quotes = np.cumsum(arr == ord('"'))
    even = newlines[quotes[newlines] % 2 == 0]
    return int(even[-1]) + 1 if len(even) else 0


def _strings(values: pd.Series | np.ndarray) -> pa.Array:
    """Strings as one Arrow array (a pandas column backed by Arrow may hold several chunks, or none)."""
    found = pa.array(values, pa.large_string())
    return found.combine_chunks() if isinstance(found, pa.ChunkedArray) else found


def _estimate_rows(f: _File) -> int:
    if f.fmt == "parquet":
        try:
            return int(ds.dataset(str(f.path), format="parquet").count_rows())
        except (pa.ArrowException, OSError):
            return 0
    size = f.path.stat().st_size
    with open(f.path, "rb") as fh:
        head = fh.read(1 << 20)
    return int(size / max(len(head) / max(head.count(b"\n"), 1), 1))


# ------------------------------------------------------------------ pass 1: spill into buckets

_SPILL_SCHEMA = pa.schema(
    [("side", pa.int8()), ("doc_id", pa.large_string()), ("code", pa.int32()), ("line", pa.int64())]
)


class _Spill:
    """Rows hashed by document into bucket files (Arrow IPC), and the distinct codes seen."""

    def __init__(self, folder: str, n_buckets: int, n_files: int):
        self.folder = Path(folder)
        self.n_buckets = n_buckets
        self.writers: dict[int, pa.ipc.RecordBatchFileWriter] = {}
        self.book: dict[str, int] = {}
        self.index: pd.Index | None = None
        self.file_codes: list[set[int]] = [set() for _ in range(n_files)]
        self.rows = np.zeros(n_files, dtype=np.int64)  # code rows per file
        self.docs = [False, False]  # has the side any document

    def add(self, side: int, file_index: int, pairs: pd.DataFrame, docs: np.ndarray) -> None:
        """Spill one chunk's rows (a reader's ``pairs``) and its documents without a code row. String work
        is done on the distinct values (codes, document ids), which pyarrow finds; rows are only indexed."""
        code_at, distinct = pd.factorize(pairs["code"])
        ids = self._book_ids(np.asarray(distinct, dtype=object))
        self.file_codes[file_index].update(ids.tolist())
        self.rows[file_index] += len(pairs)
        doc_at, doc_distinct = pd.factorize(pairs["doc_id"])
        doc_distinct = np.asarray(doc_distinct, dtype=object)
        # documents without a code row in this chunk (an empty code): kept as rows without a code, since
        # they are evaluated documents; the reader's docs hold every pair's document, so equal sizes say none
        alone = (
            docs[~pd.Index(docs, dtype=object).isin(doc_distinct)]
            if len(docs) > len(doc_distinct)
            else docs[:0]
        )
        doc = pa.concat_arrays([_strings(pairs["doc_id"]), _strings(alone)])
        code = np.concatenate([ids[code_at], np.full(len(alone), -1, np.int32)])
        lines = pairs["line"].to_numpy(dtype=np.int64)
        line = np.concatenate([lines, np.zeros(len(alone), np.int64)]) | (np.int64(file_index) << _FILE_SHIFT)
        if not len(doc):
            return
        self.docs[side] = True
        buckets = np.uint64(self.n_buckets)
        bucket = np.concatenate(
            [
                (pd.util.hash_array(doc_distinct) % buckets)[doc_at],
                pd.util.hash_array(np.asarray(alone, dtype=object)) % buckets,
            ]
        )
        order = np.argsort(bucket, kind="stable")
        bounds = np.searchsorted(bucket[order], np.arange(self.n_buckets + 1, dtype=np.uint64))
        batch = pa.record_batch(
            [
                pa.array(np.full(len(doc), side, np.int8)),
                doc.take(pa.array(order)),
                pa.array(code[order]),
                pa.array(line[order]),
            ],
            schema=_SPILL_SCHEMA,
        )
        for b in np.flatnonzero(np.diff(bounds)).tolist():
            if b not in self.writers:
                self.writers[b] = pa.ipc.new_file(str(self.folder / f"bucket-{b:05d}.arrow"), _SPILL_SCHEMA)
            self.writers[b].write_batch(batch.slice(bounds[b], bounds[b + 1] - bounds[b]))

    def _book_ids(self, distinct: np.ndarray) -> np.ndarray:
        """The code book's number of each distinct code of a chunk, new codes numbered on (looked up in one
        vectorised call: after the first chunks, new codes are rare)."""
        if self.index is None or len(self.index) != len(self.book):
            self.index = pd.Index(list(self.book), dtype=object)
        at = self.index.get_indexer(distinct) if len(self.index) else np.full(len(distinct), -1)
        for i in np.flatnonzero(at < 0).tolist():
            at[i] = self.book.setdefault(str(distinct[i]), len(self.book))
        return at.astype(np.int32)

    def close(self) -> None:
        for w in self.writers.values():
            w.close()

    def codes(self) -> list[str]:
        return list(self.book)

    def buckets(self) -> Iterator[pa.Table]:
        for b in sorted(self.writers):
            with pa.memory_map(str(self.folder / f"bucket-{b:05d}.arrow")) as source:
                yield pa.ipc.open_file(source).read_all()


def score_dataset(
    gold: str | os.PathLike[str],
    pred: str | os.PathLike[str],
    *,
    ontology: str | Ontology | nx.DiGraph = "auto",
    system: str = "auto",
    max_level: str | None = None,
    doc_col: str | None = None,
    code_col: str | None = None,
    chunk_rows: int = DEFAULT_CHUNK_ROWS,
    temp_dir: str | None = None,
    keep_documents: bool = True,
    slice_edges: Sequence[int] | None = None,
    every_level: bool = False,
    suite: bool = False,
    bound: RowBound | None = None,
    header: bool | None = None,
) -> StreamedEvaluation:
    """Score a prediction source against a gold source of any size, in chunks, in bounded memory.

    A source is a Parquet file, a folder of Parquet files (hive-partitioned or not: ``key=value/``
    folders add their keys as columns), a glob pattern (``runs/part-*.parquet``), or a CSV/TSV file. Each
    file is read as :func:`cophe_core.readers.read_labels` reads the gold standard and
    :func:`cophe_core.readers.read_input` a run of code sets (the same columns, normalisation and rejected
    rows); a run of scores is not streamed (decide its codes first). The figures equal those of
    :func:`cophe_core.api.score_files` on the same rows (see the module docs for how).

    Parameters
    ----------
    gold, pred : path or glob pattern
    ontology, system :
        As :func:`cophe_core.api.score_labels`; ``"auto"`` detects the code system from all the codes.
    max_level : str, optional
        Highest level evaluated and summed into *overall*; default the ontology's.
    doc_col, code_col : str, optional
        The document and code columns (default: detected, per file).
    header : bool, optional
        Whether the first row of each CSV/TSV file names its columns (default: decided per file from its
        content, as :func:`cophe_core.readers.read_input` decides).
    chunk_rows : int
        Rows read at a time, and about the rows of one bucket counted at a time: memory grows with it.
    temp_dir : str, optional
        Where the temporary bucket files go (default: the system's temporary folder); removed on return.
    keep_documents : bool
        Keep the per-document table (about 140 bytes a document), for :attr:`~StreamedEvaluation.documents`
        and the bootstrap; without it, memory is the per-node counts and the sorted document ids.
    slice_edges : sequence of int, optional
        Also count each code-frequency slice of the gold standard with these edges (such as ``(10, 100)``:
        rare, medium and frequent codes) in a third pass over the buckets, for
        :attr:`StreamedEvaluation.slice_counts` and the aggregate analysis's slices.
    every_level : bool
        Evaluate up to the ontology's top level whatever ``max_level`` says (the aggregate analysis keeps
        every level's per-document counts, to be shown up to any level).
    suite : bool
        Also compute the ICM paper's metrics (:func:`cophe_core.suite.suite`) in two passes: the gold
        standard's frequencies are counted with the per-node counts, then each bucket's documents are
        scored with them (:func:`suite_partition`), for :attr:`StreamedEvaluation.suite`. The sums of
        floating-point values over buckets may differ from the in-memory means in the last digits.
    bound : RowBound, optional
        How much of a source may go unscored (:class:`cophe_core.labels.RowBound`; default: no bound): a
        source it refuses raises :class:`~cophe_core.labels.TooManyRejected` (one error naming each), after
        the counting pass that finds each rejected row's line.

    Returns
    -------
    StreamedEvaluation

    Examples
    --------
    >>> ev = score_dataset("sample_data/icd9/gold.csv", "sample_data/icd9/run_siblings.csv", chunk_rows=5000)
    >>> round(ev.score("cophe").f1, 4), len(ev.docs)
    (0.7547, 1000)
    """
    if chunk_rows < 1:
        raise ValueError(f"chunk_rows must be at least 1, not {chunk_rows}")
    sides = [_source_files(gold), _source_files(pred)]
    names = [_source_name(gold), _source_name(pred)]
    if names[0] == names[1]:
        names = [f"{names[0]} (gold standard)", f"{names[1]} (run pred)"]
    gold_names = {f.name for f in sides[0]}
    sides[1] = [
        _File(f.path, f"{f.name} (run pred)", f.fmt, f.partition) if f.name in gold_names else f
        for f in sides[1]
    ]
    sides[0] = [
        _File(f.path, f"{f.name} (gold standard)", f.fmt, f.partition)
        if f.name in {g.name.removesuffix(" (run pred)") for g in sides[1]}
        else f
        for f in sides[0]
    ]
    files = sides[0] + sides[1]
    file_names = [f.name for f in files]
    n_buckets = max(1, math.ceil(sum(_estimate_rows(f) for f in files) / chunk_rows))
    read_rejected: list[pd.DataFrame] = []
    reader_notes: list[str] = []
    with tempfile.TemporaryDirectory(prefix="cophe-stream-", dir=temp_dir) as folder:
        spill = _Spill(folder, n_buckets, len(files))
        for index, f in enumerate(files):
            side = 0 if index < len(sides[0]) else 1
            for frame in _frames(f, chunk_rows, _Names(header, doc_col, code_col)):
                raw = read_frame(
                    frame, name=f.name, labels_only=side == 0, doc_col=doc_col, code_col=code_col
                )
                if isinstance(raw, RawScores):
                    raise InputError(
                        f"{f.name}: holds scores; streamed scoring takes code sets (doc_id,code rows)",
                        fix="decide the codes first, or score the file in memory with {in_memory_rule}",
                    )
                if len(raw.rejected):
                    read_rejected.append(raw.rejected)
                reader_notes += raw.warnings
                spill.add(side, index, raw.pairs, np.asarray(raw.docs, dtype=object))
        spill.close()
        codes = spill.codes()
        onto, detection = choose_ontology(ontology, codes)
        max_level = onto.levels[-1] if every_level else onto.top_level(max_level)
        book = np.asarray(codes, dtype=object)
        tables = resolve_tables(
            [book[_side_codes(spill, range(*span))] for span in _spans(sides)], onto, system=system
        )
        table = tables[0]  # the ontology both share
        read_rejected_df = _concat(read_rejected or [pd.DataFrame(columns=REJECTED_COLUMNS)])
        _check_scorable(spill, tables, sides, names, read_rejected_df, system)
        to_table = [
            t.index.get_indexer(book).astype(np.int32) if len(book) else np.zeros(0, np.int32) for t in tables
        ]
        categories = [pd.Index(t.codes, dtype=object) for t in tables]
        parts = []
        found: list[Frequencies] = []
        counts: NodeCounts | None = None
        for bucket in spill.buckets():
            gold_rows, pred_rows = _bucket_frames(bucket, to_table, categories, file_names)
            part = count_partition(
                gold_rows, pred_rows, tables, max_level=max_level, documents=keep_documents, frequencies=suite
            )
            counts = part.counts if counts is None else counts + part.counts
            if part.frequencies is not None:
                found.append(part.frequencies)
            parts.append(_Kept.of(part, keep_documents))
        slice_counts = {}
        if slice_edges is not None and counts is not None:
            slice_counts = _count_slices(
                spill, tables, counts, slice_edges, to_table, categories, file_names, max_level
            )
        metrics, left_out = None, 0
        if suite and counts is not None:  # the second pass of the suite, with the whole gold's frequencies
            frequencies = sum_frequencies(found)
            sums: dict[str, float] = {}
            for bucket in spill.buckets():
                frames = _bucket_frames(bucket, to_table, categories, file_names)
                part_sums = suite_partition(*frames, tables, frequencies, max_level=max_level)
                sums = {k: sums.get(k, 0.0) + v for k, v in part_sums.items()}
            metrics = suite_of_sums(sums, counts, frequencies.n_docs)
            left_out = frequencies.n_docs - frequencies.n_gold_docs
    duplicates = [sum(p.duplicates[side] for p in parts) for side in (0, 1)]
    ev = _assemble(
        parts,
        counts if counts is not None else NodeCounts.zeros(table.ontology.n_nodes),
        table.ontology,
        max_level,
        names,
        file_names,
        read_rejected_df,
        reader_notes,
        detection,
    )
    rows = _source_rows(ev, spill.rows, read_rejected_df, sides, names, duplicates, system)
    refused = []
    for side, name in enumerate(names):
        mine = ev.rejected[ev.rejected.file.isin([f.name for f in sides[side]])].reset_index(drop=True)
        try:
            check_rows(rows[name], mine, bound, run=None if side == 0 else "pred")
        except TooManyRejected as e:
            refused.append(e)
    if refused:
        raise TooManyRejected.together(refused)
    return dataclasses.replace(ev, slice_counts=slice_counts, suite=metrics, icm_left_out=left_out, rows=rows)


def _source_rows(
    ev: StreamedEvaluation,
    code_rows: np.ndarray,
    read_rejected: pd.DataFrame,
    sides: list[list[_File]],
    names: list[str],
    duplicates: list[int],
    system: str,
) -> dict[str, FileRows]:
    """Each source's rows given (its code rows and its readers' rejected rows), rejected and collapsed."""
    file_side = {f.name: side for side, files in enumerate(sides) for f in files}
    which = ev.rejected.file.map(file_side).to_numpy()
    read_which = read_rejected.file.map(file_side).to_numpy()
    undotted = undotted_mask(ev.rejected.value.to_numpy(), ev.ontology, system)
    out = {}
    first = 0
    for side, name in enumerate(names):
        n_files = len(sides[side])
        mine = which == side
        read_bad = int((read_which == side).sum())
        out[name] = FileRows(
            name,
            given=int(code_rows[first : first + n_files].sum()) + read_bad,
            rejected=int(mine.sum()),
            duplicates=duplicates[side],
            undotted=int((mine & undotted).sum()),
        )
        first += n_files
    return out


def _spans(sides: list[list[_File]]) -> list[tuple[int, int]]:
    """The files of each side, as a range of file indices: the gold standard's first."""
    return [(0, len(sides[0])), (len(sides[0]), len(sides[0]) + len(sides[1]))]


def _side_codes(spill: _Spill, indices: Iterable[int]) -> np.ndarray:
    """The distinct codes of some files (their positions in the spill's book of codes), sorted."""
    found = [np.fromiter(spill.file_codes[i], np.int64, len(spill.file_codes[i])) for i in indices]
    return np.unique(np.concatenate(found)) if found else np.zeros(0, np.int64)


def _bucket_frames(
    bucket: pa.Table, to_table: Sequence[np.ndarray], categories: Sequence[pd.Index], file_names: list[str]
) -> tuple[pd.DataFrame, pd.DataFrame]:
    """A spilled bucket as the gold and predicted frames :func:`count_partition` takes, each side's codes
    categories of its own code table."""
    frames = []
    for side in (0, 1):
        rows = bucket.filter(pc.equal(bucket["side"], side))
        code = rows["code"].to_numpy()
        line = rows["line"].to_numpy()
        frames.append(
            pd.DataFrame(
                {
                    "doc_id": rows["doc_id"].to_pandas(),
                    "code": pd.Categorical.from_codes(
                        np.where(code >= 0, to_table[side][np.maximum(code, 0)], -1), categories[side]
                    ),
                    "line": line & _LINE_MASK,
                    "file": pd.Categorical.from_codes(line >> _FILE_SHIFT, file_names),
                }
            )
        )
    return frames[0], frames[1]


def _count_slices(
    spill: _Spill,
    tables: tuple[CodeTable, ...],
    counts: NodeCounts,
    edges: Sequence[int],
    to_table: Sequence[np.ndarray],
    categories: Sequence[pd.Index],
    file_names: list[str],
    max_level: str,
) -> dict[str, NodeCounts]:
    """A third pass over the buckets: the counts of each code-frequency slice's codes alone (the rows of its
    codes only, as :func:`cophe_core.slices.restrict` keeps its label columns), for the aggregate analysis."""
    from .slices import code_frequency_slices, counted_frequency

    frequency, in_play = counted_frequency(counts)
    slices = code_frequency_slices(frequency, edges, in_play=in_play)
    out: dict[str, NodeCounts] = {s.key: NodeCounts.zeros(tables[0].ontology.n_nodes) for s in slices}
    for bucket in spill.buckets():
        frames = _bucket_frames(bucket, to_table, categories, file_names)
        nodes = []
        for f, table in zip(frames, tables):  # each side's codes by its own table
            c = f["code"].cat.codes.to_numpy()
            nodes.append(np.where(c >= 0, table.nodes[np.maximum(c, 0)], -1))
        for s in slices:
            keep = [(n >= 0) & s.mask[np.maximum(n, 0)] for n in nodes]
            part = count_partition(
                frames[0][keep[0]], frames[1][keep[1]], tables, max_level=max_level, documents=False
            )
            out[s.key] = out[s.key] + part.counts
    return out


@dataclass(frozen=True, eq=False)
class _Kept:
    """What the streamed evaluation keeps of a partition (its per-node counts are summed as they come): the
    document ids, the per-document table as a compact int32 block, the rejected and flagged rows."""

    docs: pa.Array
    values: np.ndarray | None
    columns: list[str]
    rejected: pd.DataFrame
    flagged: pd.DataFrame
    duplicates: tuple[int, int]
    only_gold: int
    only_pred: int

    @classmethod
    def of(cls, p: PartitionCounts, keep_documents: bool) -> _Kept:
        d = p.documents
        columns = [c for c in d.columns if c != "doc_id"]
        return cls(
            _strings(d["doc_id"]),
            d[columns].to_numpy(dtype=np.int32) if keep_documents else None,
            columns,
            p.rejected,
            p.flagged,
            p.duplicates,
            p.only_gold,
            p.only_pred,
        )


def _check_scorable(
    spill: _Spill,
    tables: tuple[CodeTable, ...],
    sides: list[list[_File]],
    names: list[str],
    read_rejected: pd.DataFrame,
    system: str,
) -> None:
    """As :func:`cophe_core.labels.encode` checks each input: a source (gold or predictions, one file or a
    dataset of several) with rows none of which can be scored is a :class:`~cophe_core.labels.NothingScorable`
    naming it, and so is a gold standard without a code. Checked on the distinct codes of each file, before
    the counting pass."""
    book = np.asarray(spill.codes(), dtype=object)
    first_file = 0
    for side, (files, name, table) in enumerate(zip(sides, names, tables)):
        # this side's codes by its own table (-1: a code of the other side only, which no file here holds)
        at = table.index.get_indexer(book) if len(book) else np.zeros(0, np.int64)
        placed = (at >= 0) & (table.nodes[at] >= 0) if len(table.nodes) else np.zeros(len(book), bool)
        indices = range(first_file, first_file + len(files))
        first_file += len(files)
        mine = [np.fromiter(spill.file_codes[i], np.int64, len(spill.file_codes[i])) for i in indices]
        if any(placed[m].any() for m in mine):
            continue
        read_bad = read_rejected[read_rejected.file.isin([f.name for f in files])]
        n_rows = int(sum(spill.rows[i] for i in indices)) + len(read_bad)
        what = "gold standard" if side == 0 else "run"
        if not n_rows:
            if side == 1:
                continue  # a run without rows predicts nothing
            raise NothingScorable(
                f"{name}: the {what} holds no codes; give one row per (document, code)",
                file=name,
                rejected=pd.DataFrame(columns=REJECTED_COLUMNS),
                needs_system=False,
            )
        # the reader's rejected rows, then each distinct rejected code of each file once (their lines are
        # known in the counting pass only, which a source with nothing scorable does not reach)
        codes = [rejected_codes(table, f.name, at[m]) for f, m in zip(files, mine)]
        raise nothing_scorable(name, n_rows, _concat([read_bad, *codes]), table.ontology, system)


def rejected_codes(table: CodeTable, file: str, positions: np.ndarray) -> pd.DataFrame:
    """The rejected table of a file's distinct codes (``positions`` in ``table``), without lines: a source
    with nothing scorable stops before the pass that knows them.

    >>> from cophe_core.ontology import icd9_ontology
    >>> t = resolve_table(["401.9", "XYZ"], icd9_ontology())
    >>> rejected_codes(t, "g.csv", t.index.get_indexer(["XYZ"]))[["file", "value"]].values.tolist()
    [['g.csv', 'XYZ']]
    """
    at = np.sort(positions)
    return pd.DataFrame(
        {
            "file": file,
            "line": pd.array([None] * len(at), dtype="Int64"),
            "value": table.codes[at],
            "reason": table.reason[at],
            "kind": table.reason_kind[at],
        },
        columns=REJECTED_COLUMNS,
    )


def nothing_scorable(
    name: str, n_rows: int, rows: pd.DataFrame, ontology: Ontology, system: str
) -> NothingScorable:
    """The error for a source whose ``n_rows`` rows cannot be scored, ``rows`` the rejected ones: it names
    the source and the first rejected value, and asks for the code system's list when the system would read
    the codes once told which (MIMIC's undotted ``4019``), as :func:`cophe_core.labels.encode` does.

    >>> from cophe_core.files import Reason
    >>> from cophe_core.ontology import icd9_ontology
    >>> rows = pd.DataFrame({"file": ["g.csv"], "line": [2], "value": ["4019"], "reason": ["ambiguous"],
    ...                      "kind": [Reason.AMBIGUOUS]})
    >>> e = nothing_scorable("g.csv", 1, rows, icd9_ontology(), "auto")
    >>> e.needs_system, "Say which system its undotted codes are" in str(e)
    (True, True)
    """
    found = system_of(ontology)  # undotted codes that the system named would read
    needs_system = system == "auto" and found is not None and any(map(found.readable_with_system, rows.value))
    return NothingScorable.of(name, n_rows, rows, needs_system=needs_system)


def _assemble(
    parts: list[_Kept],
    counts: NodeCounts,
    onto: Ontology,
    max_level: str,
    names: list[str],
    files: list[str],
    read_rejected: pd.DataFrame,
    reader_notes: list[str],
    detection: str | None,
) -> StreamedEvaluation:
    columns = parts[0].columns if parts else []
    ids = pa.concat_arrays([p.docs for p in parts]) if parts else pa.array([], pa.large_string())
    order = pc.sort_indices(ids).to_numpy()
    docs = pd.Index(ids.take(pa.array(order)).to_pandas(), dtype="str", name=None)
    values = None
    if not parts or parts[0].values is not None:  # the per-document table, filled in sorted order
        rank = np.empty(len(order), dtype=np.int64)
        rank[order] = np.arange(len(order))
        values = np.empty((len(order), len(columns)), dtype=np.int32)
        start = 0
        for p in parts:
            block = p.values if p.values is not None else np.empty((0, len(columns)), np.int32)
            values[rank[start : start + len(block)]] = block
            start += len(block)
    code_rejected = _concat([p.rejected for p in parts] or [pd.DataFrame(columns=REJECTED_COLUMNS)])
    flagged = _concat([p.flagged for p in parts] or [pd.DataFrame(columns=REJECTED_COLUMNS)])
    rejected = _concat([read_rejected, _in_file_order(code_rejected, files)])
    flagged = _in_file_order(flagged, files)
    notes = []
    for name, dups in zip(names, (sum(p.duplicates[0] for p in parts), sum(p.duplicates[1] for p in parts))):
        if dups:
            notes.append(duplicates_note(name, dups))
    notes += coverage_notes(names[1], sum(p.only_gold for p in parts), sum(p.only_pred for p in parts))
    notes += reader_notes
    summaries = summarise_rows(rejected, "not scored") + summarise_rows(flagged, "scored with a caveat")
    parts.clear()  # the blocks are copied into values: let them go before the caller builds anything else
    return StreamedEvaluation(
        onto, max_level, counts, docs, values, columns, rejected, flagged, notes + summaries, notes, detection
    )


def _in_file_order(rows: pd.DataFrame, files: list[str]) -> pd.DataFrame:
    """Rows gathered bucket by bucket, back in the order of the files (gold's first) and their lines."""
    if not len(rows):
        return rows
    which = pd.Categorical(rows["file"], categories=files).codes
    order = np.lexsort((rows["line"].to_numpy(), which))
    return rows.iloc[order].reset_index(drop=True)
