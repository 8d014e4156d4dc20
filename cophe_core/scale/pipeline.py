"""Streamed scoring: gold standards and predictions of any size, read in chunks, in bounded memory.

Every count of :mod:`cophe_core.metrics` is a sum over documents: a document's TP, FP and FN at each node
depend on that document's gold and predicted codes only. So inputs too large for memory are scored in
three steps, and the figures are those of the in-memory path (:func:`cophe_core.api.score_files`), to the
last digit:

1. **Spill.** Each source (a Parquet file, a folder of Parquet files, hive-partitioned or not, a glob, or
   a CSV/TSV file) is read in chunks of rows: Parquet by pyarrow's dataset scanner, one record batch at a
   time; CSV/TSV in blocks of whole lines. A Parquet file whose column names say it holds labels is read on
   its two columns as dictionary-encoded Arrow arrays, and the readers' normalisation is applied to their
   distinct values only (:func:`~cophe_core.scale.sources.label_chunks`); any other chunk goes through the
   readers' own normalisation and validation (:func:`cophe_core.inputs.readers.read_frame`). Rows are hashed
   by document id into B buckets, written as Arrow IPC streams to a temporary folder (each batch's ids once,
   as a dictionary). So every row of a document, gold and predicted, ends up in the same bucket. The
   distinct code strings are collected.
2. **Resolve.** The distinct codes (thousands, not millions) are placed in the ontology once
   (:func:`~cophe_core.scoring.kernel.resolve_table`), as :func:`cophe_core.scoring.labels.encode` places them: the same extension of the
   ontology for unlisted codes, the same node ids, the same rejected codes with their reasons.
3. **Count.** Each bucket is counted on integers by :func:`~cophe_core.scoring.kernel.count_rows` (each row's
   document and node numbers: one sort, then run lengths per level); with the ICM suite or a DAG ontology, by
   :func:`~cophe_core.scoring.kernel.count_partition` on pandas frames. The per-node counts
   (:class:`~cophe_core.metrics.NodeCounts`) are summed, and the per-document table (documents × levels ×
   TP/FP/FN, small) is kept.

The result, :class:`StreamedEvaluation`, offers the figures of :class:`~cophe_core.metrics.Evaluation`
(levels, macro, node and document tables, ``to_dict``) and the bootstrap; the tables are the metrics
module's functions of the summed counts.

**The ICM paper's metrics** (``suite=True``, ``--metrics suite``) need the gold standard's class
probabilities before any document is scored, so they take two passes: step 3 also counts the gold
standard's :class:`~cophe_core.scoring.suite.Frequencies` (sums over documents), and a further pass over the buckets
scores each document with the whole gold standard's frequencies (:func:`~cophe_core.scoring.kernel.suite_partition`) and sums the
per-document values. Their bootstrap intervals are not offered (they would need every document's values).

**Code slices** (``slice_edges=``) take one more pass: each code-frequency slice's codes counted alone,
for the aggregate analysis (:mod:`cophe_core.scale.aggregate`).

**Memory.** Pass 1 holds one chunk; pass 2 one bucket (about ``chunk_rows`` rows); the result holds the
per-node counts, the sorted document ids (about 20 bytes a document), the per-document table (about 140 bytes
a document; optional) and the rejected and flagged rows.

The counting kernel is :mod:`cophe_core.scoring.kernel`, shared with the Dask and Spark paths
(:mod:`cophe_core.scale.cluster`); the sources are :mod:`cophe_core.scale.sources`, the spill
:mod:`cophe_core.scale.spill`.
"""

from __future__ import annotations

import dataclasses
import math
import os
import tempfile
from abc import abstractmethod
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from functools import cached_property
from typing import TYPE_CHECKING, Any, NamedTuple

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.compute as pc

from ..base.files import InputError
from ..inputs.datasets import DEFAULT_CHUNK_ROWS
from ..inputs.readers import REJECTED_COLUMNS, RawScores, read_frame
from ..metrics import Figures, NodeCounts
from ..ontology import Ontology, choose_ontology
from ..scoring.kernel import (
    CodeTable,
    PartitionCounts,
    concat_rows,
    count_partition,
    count_rows,
    nothing_scorable,
    rejected_codes,
    resolve_tables,
    suite_partition,
)
from ..scoring.labels import (
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
from ..scoring.suite import Frequencies, left_out_note, suite_of_sums, sum_frequencies
from .sources import (
    ColumnNames,
    LabelChunk,
    SourceFile,
    estimate_rows,
    label_chunks,
    source_files,
    source_frames,
    source_name,
)
from .spill import Bucket, Spill, arrow_strings, bucket_documents, bucket_frames

if TYPE_CHECKING:
    import networkx as nx

__all__ = ["CountedFigures", "SortedDocuments", "StreamedEvaluation", "score_dataset", "DEFAULT_CHUNK_ROWS"]


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
        """Percentile intervals of the headline figures, as :func:`cophe_core.breakdown.stats.bootstrap` (which reads
        the per-document table only); the suite's metrics are not offered here."""
        from ..breakdown.stats import bootstrap

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
        Per code slice (by its key: :func:`cophe_core.breakdown.slices.code_frequency_slices` of the gold standard's
        frequencies, the edges given to :func:`score_dataset`), the counts of the slice's codes alone, as
        :func:`cophe_core.breakdown.slices.restrict` counts them.
    suite : dict of str → float, optional
        The ICM paper's metrics (``score_dataset(..., suite=True)``), as :func:`cophe_core.scoring.suite.suite`.
    rows : dict of str → FileRows
        The gold and predicted sources' rows given, scored and rejected, by source name
        (:class:`~cophe_core.scoring.labels.FileRows`).
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
        """As :func:`cophe_core.scoring.suite.icm_note`, when the suite was computed."""
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
        documents: SortedDocuments | None = None,
    ) -> StreamedEvaluation:
        """The evaluation of all documents' counts (the partitions of :func:`count_partition` summed, on
        any engine), assembled as :func:`score_dataset` assembles its buckets': ``names`` are the gold and
        predicted sources' (in the notes), ``files`` the file names of the rejected rows in the order they
        are listed, ``read_rejected`` the readers' own rejected rows (listed first). ``documents``, when
        given, is the per-document table in place of ``counted.documents``, taken as it is
        (:class:`SortedDocuments`: no copy of a block of millions of rows).

        >>> from cophe_core.ontology import load_ontology
        >>> from cophe_core.scoring.kernel import resolve_table
        >>> t = resolve_table(["401.9", "401.1"], load_ontology("icd9"))
        >>> part = count_partition(pd.DataFrame({"doc_id": ["1"], "code": ["401.9"]}),
        ...                        pd.DataFrame({"doc_id": ["1"], "code": ["401.1"]}), t)
        >>> ev = StreamedEvaluation.of(part, t.ontology, "block")
        >>> round(ev.score("cophe", "e0").f1, 2), ev.docs.tolist()
        (1.0, ['1'])
        """
        empty = pd.DataFrame(columns=REJECTED_COLUMNS)
        kept = _Kept.of(counted, keep_documents)
        if documents is not None:
            values = documents.values if keep_documents else None
            kept = dataclasses.replace(
                kept, docs=documents.ids, values=values, columns=list(documents.columns)
            )
        return _assemble(
            [kept],
            counted.counts,
            ontology,
            max_level,
            list(names),
            list(files),
            empty if read_rejected is None else read_rejected,
            list(notes),
            detection,
        )


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
    file is read as :func:`cophe_core.inputs.readers.read_labels` reads the gold standard and
    :func:`cophe_core.inputs.readers.read_input` a run of code sets (the same columns, normalisation and rejected
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
        content, as :func:`cophe_core.inputs.readers.read_input` decides).
    chunk_rows : int
        Rows read at a time, and about the rows of one bucket counted at a time: memory grows with it.
    temp_dir : str, optional
        Where the temporary bucket files go once the rows outgrow what the spill holds in memory
        (:data:`cophe_core.scale.spill.HELD_BYTES`, about 20M rows; default: the system's temporary folder);
        removed on return.
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
        Also compute the ICM paper's metrics (:func:`cophe_core.scoring.suite.suite`) in two passes: the gold
        standard's frequencies are counted with the per-node counts, then each bucket's documents are
        scored with them (:func:`suite_partition`), for :attr:`StreamedEvaluation.suite`. The sums of
        floating-point values over buckets may differ from the in-memory means in the last digits.
    bound : RowBound, optional
        How much of a source may go unscored (:class:`cophe_core.scoring.labels.RowBound`; default: no bound): a
        source it refuses raises :class:`~cophe_core.scoring.labels.TooManyRejected` (one error naming each), after
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
    sides = [source_files(gold), source_files(pred)]
    names = [source_name(gold), source_name(pred)]
    if names[0] == names[1]:
        names = [f"{names[0]} (gold standard)", f"{names[1]} (run pred)"]
    gold_names = {f.name for f in sides[0]}
    sides[1] = [
        SourceFile(f.path, f"{f.name} (run pred)", f.fmt, f.partition) if f.name in gold_names else f
        for f in sides[1]
    ]
    sides[0] = [
        SourceFile(f.path, f"{f.name} (gold standard)", f.fmt, f.partition)
        if f.name in {g.name.removesuffix(" (run pred)") for g in sides[1]}
        else f
        for f in sides[0]
    ]
    files = sides[0] + sides[1]
    file_names = [f.name for f in files]
    n_buckets = max(1, math.ceil(sum(estimate_rows(f) for f in files) / chunk_rows))
    read_rejected: list[pd.DataFrame] = []
    reader_notes: list[str] = []
    with tempfile.TemporaryDirectory(prefix="cophe-stream-", dir=temp_dir) as folder:
        spill = Spill(folder, n_buckets, len(files))
        for index, f in enumerate(files):
            side = 0 if index < len(sides[0]) else 1
            chunks = label_chunks(f, chunk_rows, labels_only=side == 0, doc_col=doc_col, code_col=code_col)
            for frame in chunks or source_frames(f, chunk_rows, ColumnNames(header, doc_col, code_col)):
                if isinstance(frame, LabelChunk):  # read on Arrow arrays
                    if len(frame.rejected):
                        read_rejected.append(frame.rejected)
                    spill.add_ids(
                        side,
                        index,
                        frame.docs,
                        frame.doc_at,
                        frame.codes,
                        frame.code_at,
                        frame.lines,
                        frame.alone,
                    )
                    continue
                # a chunk of joined codes from the Arrow reading holds these two columns only
                wanted = ("doc_id", "code") if chunks is not None else (doc_col, code_col)
                raw = read_frame(
                    frame,
                    name=f.name,
                    labels_only=side == 0 or chunks is not None,
                    doc_col=wanted[0],
                    code_col=wanted[1],
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
        read_rejected_df = concat_rows(read_rejected or [pd.DataFrame(columns=REJECTED_COLUMNS)])
        _check_scorable(spill, tables, sides, names, read_rejected_df, system)
        to_table = [
            t.index.get_indexer(book).astype(np.int32) if len(book) else np.zeros(0, np.int32) for t in tables
        ]
        categories = [pd.Index(t.codes, dtype=object) for t in tables]
        parts = []
        found: list[Frequencies] = []
        counts: NodeCounts | None = None
        on_ids = not suite and not table.ontology.is_dag  # the integer kernel; else the in-memory evaluation
        lookup = _Lookup.of(to_table, tables)
        for bucket in spill.buckets():
            if on_ids:
                kept, bucket_counts = _count_bucket(
                    bucket, lookup, tables, file_names, max_level, keep_documents
                )
                counts = bucket_counts if counts is None else counts + bucket_counts
                parts.append(kept)
                continue
            gold_rows, pred_rows = bucket_frames(bucket, to_table, categories, file_names)
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
                frames = bucket_frames(bucket, to_table, categories, file_names)
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
    sides: list[list[SourceFile]],
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


def _spans(sides: list[list[SourceFile]]) -> list[tuple[int, int]]:
    """The files of each side, as a range of file indices: the gold standard's first."""
    return [(0, len(sides[0])), (len(sides[0]), len(sides[0]) + len(sides[1]))]


def _side_codes(spill: Spill, indices: Iterable[int]) -> np.ndarray:
    """The distinct codes of some files (their positions in the spill's book of codes), sorted."""
    found = [spill.file_codes(i) for i in indices]
    return np.unique(np.concatenate(found)) if found else np.zeros(0, np.int64)


def _count_slices(
    spill: Spill,
    tables: tuple[CodeTable, ...],
    counts: NodeCounts,
    edges: Sequence[int],
    to_table: Sequence[np.ndarray],
    categories: Sequence[pd.Index],
    file_names: list[str],
    max_level: str,
) -> dict[str, NodeCounts]:
    """A third pass over the buckets: the counts of each code-frequency slice's codes alone (the rows of its
    codes only, as :func:`cophe_core.breakdown.slices.restrict` keeps its label columns), for the aggregate analysis."""
    from ..breakdown.slices import code_frequency_slices, counted_frequency

    frequency, in_play = counted_frequency(counts)
    slices = code_frequency_slices(frequency, edges, in_play=in_play)
    out: dict[str, NodeCounts] = {s.key: NodeCounts.zeros(tables[0].ontology.n_nodes) for s in slices}
    for bucket in spill.buckets():
        frames = bucket_frames(bucket, to_table, categories, file_names)
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


class SortedDocuments(NamedTuple):
    """A per-document table as an engine sends it back whole: the documents' ids (Arrow strings, sorted, each
    once), their counts (documents x ``columns``, int32, writable: kept as they are), the columns' names."""

    ids: pa.Array
    values: np.ndarray
    columns: Sequence[str]


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
            arrow_strings(d["doc_id"]),
            d[columns].to_numpy(dtype=np.int32) if keep_documents else None,
            columns,
            p.rejected,
            p.flagged,
            p.duplicates,
            p.only_gold,
            p.only_pred,
        )


_SCORED, _REJECTED, _FLAGGED = 0, 1, 2


class _Lookup(NamedTuple):
    """Per side, per code number in the spill's book (the last: no code): its position in the side's code
    table (-1: not there), its node (-1: not scored) and its status (scored, rejected or flagged); built once
    for every bucket."""

    pos: np.ndarray
    node_of: np.ndarray
    status_of: np.ndarray

    @classmethod
    def of(cls, to_table: Sequence[np.ndarray], tables: tuple[CodeTable, ...]) -> _Lookup:
        pos = np.stack([np.append(t, -1) for t in to_table]).astype(np.int64)
        node_of = np.stack(
            [
                np.where(p >= 0, t.nodes[np.maximum(p, 0)], -1) if len(t.nodes) else np.full(len(p), -1)
                for p, t in zip(pos, tables)
            ]
        )
        flag_of = np.stack(
            [
                (p >= 0) & (t.flag != "")[np.maximum(p, 0)] if len(t.codes) else np.zeros(len(p), bool)
                for p, t in zip(pos, tables)
            ]
        )
        status_of = np.where(
            node_of >= 0, np.where(flag_of, _FLAGGED, _SCORED), np.where(pos >= 0, _REJECTED, _SCORED)
        )
        return cls(pos, node_of, status_of)


def _count_bucket(
    bucket: Bucket,
    lookup: _Lookup,
    tables: tuple[CodeTable, ...],
    file_names: list[str],
    max_level: str,
    keep_documents: bool,
) -> tuple[_Kept, NodeCounts]:
    """One spilled bucket counted on integers (:func:`~cophe_core.scoring.kernel.count_rows`): each row's
    document a number into the bucket's distinct ids, its node and status looked up by its code's number in
    its side's table; only the rejected and flagged rows (few) become table rows. The same as
    :func:`count_partition` on :func:`bucket_frames`."""
    ids, doc = bucket_documents(bucket.rows)
    side = bucket.side
    code = bucket.rows["code"].to_numpy()
    pos, node_of, status_of = lookup
    book = pos.shape[1] - 1
    # each row's cell in the flattened (side, code number) tables: a row without a code (-1) falls on the
    # "no code" entry that ends the other side's table (the same: no node, scored), so it needs no test
    cell = side.astype(np.int64) * (book + 1) + code
    node = node_of.ravel()[cell]
    got = count_rows(
        doc,
        node,
        side.astype(bool),
        len(ids),
        tables[0].ontology,
        max_level=max_level,
        documents=keep_documents,
    )
    odd = np.flatnonzero(status_of.ravel()[cell])  # the rejected and flagged rows (few)
    status = status_of.ravel()[cell[odd]]
    listed = [
        _listed(tables, pos, side, code, bucket, odd[status == kind], kind, file_names)
        for kind in (_REJECTED, _FLAGGED)
    ]
    in_side = np.bincount(doc * 2 + side, minlength=2 * len(ids)).reshape(-1, 2) > 0
    kept = _Kept(
        ids.cast(pa.large_string()),
        None if got.documents is None else got.documents.astype(np.int32),
        got.columns,
        listed[0],
        listed[1],
        got.duplicates,
        int((in_side[:, 0] & ~in_side[:, 1]).sum()),
        int((in_side[:, 1] & ~in_side[:, 0]).sum()),
    )
    return kept, got.counts


def _listed(
    tables: tuple[CodeTable, ...],
    pos: np.ndarray,
    side: np.ndarray,
    code: np.ndarray,
    bucket: Bucket,
    at: np.ndarray,
    kind: int,
    file_names: list[str],
) -> pd.DataFrame:
    """A bucket's rows ``at`` of one status (rejected or flagged), each side's by its table, as the rejected
    table lists them, with the file and line ``bucket`` gives them."""
    if not len(at):
        return pd.DataFrame(columns=REJECTED_COLUMNS)
    line, file = bucket.lines(at), bucket.file_of(at)
    frames = []
    for s, table in enumerate(tables):
        mine = side[at] == s
        p = pos[s][code[at][mine]]
        text, why = (table.reason, table.reason_kind) if kind == _REJECTED else (table.flag, table.flag_kind)
        frames.append(
            pd.DataFrame(
                {
                    "file": np.asarray(file_names, dtype=object)[file[mine]],
                    "line": line[mine],
                    "value": table.codes[p],
                    "reason": text[p],
                    "kind": why[p],
                },
                columns=REJECTED_COLUMNS,
            )
        )
    return concat_rows(frames)


def _check_scorable(
    spill: Spill,
    tables: tuple[CodeTable, ...],
    sides: list[list[SourceFile]],
    names: list[str],
    read_rejected: pd.DataFrame,
    system: str,
) -> None:
    """As :func:`cophe_core.scoring.labels.encode` checks each input: a source (gold or predictions, one file or a
    dataset of several) with rows none of which can be scored is a :class:`~cophe_core.scoring.labels.NothingScorable`
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
        mine = [spill.file_codes(i) for i in indices]
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
        raise nothing_scorable(name, n_rows, concat_rows([read_bad, *codes]), table.ontology, system)


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
    if len(parts) == 1:  # (no copy of millions of ids)
        ids = parts[0].docs
    else:
        ids = pa.concat_arrays([p.docs for p in parts]) if parts else pa.array([], pa.large_string())
    # documents that come sorted (Dask's count tasks deal them by ranges of ids) are taken as they are
    ordered = _is_sorted(ids)
    order = None if ordered else pc.sort_indices(ids).to_numpy()
    docs = pd.Index((ids if order is None else ids.take(pa.array(order))).to_pandas(), dtype="str", name=None)
    values = None
    if ordered and len(parts) == 1:
        kept = parts[0].values
        values = (
            kept if kept is None or kept.flags.writeable else kept.copy()
        )  # (a read-only view of a frame)
    elif not parts or parts[0].values is not None:  # the per-document table, filled in sorted order
        if order is None:
            order = np.arange(len(ids))
        rank = np.empty(len(order), dtype=np.int64)
        rank[order] = np.arange(len(order))
        values = np.empty((len(order), len(columns)), dtype=np.int32)
        start = 0
        for p in parts:
            block = p.values if p.values is not None else np.empty((0, len(columns)), np.int32)
            values[rank[start : start + len(block)]] = block
            start += len(block)
    code_rejected = concat_rows([p.rejected for p in parts] or [pd.DataFrame(columns=REJECTED_COLUMNS)])
    flagged = concat_rows([p.flagged for p in parts] or [pd.DataFrame(columns=REJECTED_COLUMNS)])
    rejected = concat_rows([read_rejected, _in_file_order(code_rejected, files)])
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


def _is_sorted(ids: pa.Array) -> bool:
    """Whether the ids are in Arrow's order of strings (that of ``pc.sort_indices``), in one pass.

    >>> _is_sorted(pa.array(["1", "10", "2"])), _is_sorted(pa.array(["2", "10"])), _is_sorted(pa.array([], pa.string()))
    (True, False, True)
    """
    if len(ids) < 2:
        return True
    return bool(pc.all(pc.less_equal(ids.slice(0, len(ids) - 1), ids.slice(1))).as_py())


def _in_file_order(rows: pd.DataFrame, files: list[str]) -> pd.DataFrame:
    """Rows gathered bucket by bucket, back in the order of the files (gold's first) and their lines."""
    if not len(rows):
        return rows
    which = pd.Categorical(rows["file"], categories=files).codes
    order = np.lexsort((rows["line"].to_numpy(), which))
    return rows.iloc[order].reset_index(drop=True)
