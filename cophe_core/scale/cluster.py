"""Scoring on a cluster: Dask DataFrames or Parquet datasets on Dask (:func:`score_dask`), and the pieces a
Spark job needs (:func:`count_batches`, :func:`combine_counted`).

The figures are those of the in-memory path (:func:`cophe_core.api.score_files`) and of the streamed one
(:func:`cophe_core.scale.pipeline.score_dataset`), to the last digit, because the reading and the counting are
the streamed path's: each partition read on Arrow arrays as a chunk of a Parquet file is, and each document's
rows counted on integers by :func:`cophe_core.scoring.kernel.count_rows`, the per-node counts summed. Dask
does the rest with its own machinery:

1. **Read and normalise.** A Parquet dataset on disk (a file, a folder, hive-partitioned or not, a glob) is
   read by the workers themselves, with no Dask DataFrame: its files listed as the streamed path lists them
   (:func:`cophe_core.scale.sources.source_files`), a task for each batch of files of about 8 MB, each file
   read as the streamed path reads it (:func:`cophe_core.scale.sources.label_chunks`): its document and code
   columns alone, dictionary-encoded by the Parquet reader, the readers' normalisation applied to their
   distinct values only; a chunk of codes joined in cells, or a file whose columns do not say it holds labels
   one code a row (a hive key as the document column, ...), through the readers' own
   (:func:`cophe_core.inputs.readers.read_frame`). Its rejected rows quote the file and its row, as the
   streamed path's do. A partition of a Dask DataFrame (or of a dataset Dask reads: ``s3://`` and other
   URLs) is read the same way on its Arrow arrays (:func:`cophe_core.scale.sources.frame_label_chunk`), its
   rejected rows quoted by partition and row number in it. The same columns detected, the same rejected
   rows. Each file's or partition's encoded rows (numbers into its distinct ids, kept as Arrow strings, and
   codes, 32-bit) stay in its worker's memory (``Client.persist``) for step 3: every row is read once.
2. **Resolve.** The distinct codes of the partitions are joined by a tree of tasks (eight at a time) as the
   partitions are read, with what the client needs of each (its rows, rejected rows, warnings, the worker
   that holds it, a sample of its document ids): the client receives one summary a side. The codes are placed
   in the ontology once, each side's codes read on its own evidence
   (:func:`cophe_core.scoring.kernel.resolve_tables`): the same node ids as in memory, unlisted codes included. The
   two code tables are broadcast to the workers (``Client.scatter``).
3. **Place and deal.** The partitions a worker holds are placed and dealt in one task per group (of up to
   25M rows), run on that worker: each partition's distinct codes are looked up in its side's table once,
   every row gets its code's node (-1: not scored), and the few rows rejected or flagged for their code are
   listed there and then (a row's fate depends on its code alone). The rows are then dealt into as many
   shares as there are count tasks by the range their document's id falls in (bounds cut from the sampled
   ids, in Arrow's order of strings, on the distinct ids only), and each group's pieces joined: one share
   per count task and side, its distinct ids once and its rows as two columns of 16 or 32 bits (the
   document's number among those ids, the node). Every row of a document, gold and predicted, from any
   partition, goes to the same count task; only the shares travel between workers, rather than a shuffle
   of whole rows of text, and the scheduler handles groups times count tasks pieces, not partitions times
   count tasks.
4. **Count and reduce.** Each count task takes its share of every group, numbers their ids (the distinct
   ids dictionary-encoded together, numbered in sorted order) and counts the rows by ``count_rows`` (on a DAG
   ontology, by the in-memory evaluation of the same rows). It returns plain columns only: its per-node counts
   (``node`` and one column per :class:`~cophe_core.metrics.NodeCounts` field, the nodes with a count), four
   totals, and its per-document table (its ids, sorted, and their counts as one array). The per-node counts
   are summed by a tree reduction (``dask.delayed`` sums of eight at a time, the tree ``dask.bag``'s
   reductions build), so neither the client nor one worker receives every task's counts at once; the client
   fetches the sum, the per-document tables (in order of their ranges: all the documents come sorted) and
   the listed rows as their tasks finish, and no pickled object of cophe's.

The kept partitions take about 12 bytes a row of the workers' memory until the shares are dealt. Dask is an
optional extra (``pip install ".[dask]"`` in a cophe checkout), imported when :func:`score_dask` is called.

**On Spark.** The same integer kernel counts a ``mapInPandas`` partition (:func:`count_batches`: each side's
codes placed by its table, the document ids numbered, ``count_rows``): union the normalised rows of both sides with a ``side``
column (0 gold, 1 predicted), repartition on ``doc_id``, and map each partition to plain rows of the schema
:data:`COUNTED_SCHEMA` (a ``kind`` column says what each row holds: a node's counts, a file's scored rows, a
total, a document's counts, a rejected or flagged row). Spark sums the node counts and totals itself
(grouped by :data:`SUMMED_KEYS`), only the per-document and listed rows travel as they are, and the driver
rebuilds the counts (:func:`combine_counted`; the raw rows collected give the same). The results are plain
columns: nothing is unpickled on the driver. The recipe (tested on a local session by ``tests/core/test_spark.py``)::

    from pyspark.sql import functions as F
    from cophe_core.scale.cluster import (
        COUNTED_SCHEMA,
        SUMMED_COLUMNS,
        SUMMED_KEYS,
        SUMMED_KINDS,
        combine_counted,
        count_batches,
    )
    from cophe_core.ontology import load_ontology
    from cophe_core.scale.pipeline import StreamedEvaluation
    from cophe_core.scoring.kernel import resolve_tables

    rows = gold.withColumn("side", F.lit(0)).unionByName(pred.withColumn("side", F.lit(1)))
    codes = rows.select("side", "code").where("code is not null").distinct().collect()
    tables = resolve_tables([[r.code for r in codes if r.side == s] for s in (0, 1)],
                            load_ontology("icd9"))                  # once, on the driver; a table per side
    counted = rows.repartition(200, "doc_id").mapInPandas(
        lambda batches: count_batches(batches, tables), schema=COUNTED_SCHEMA)
    summable = F.col("kind").isin(*SUMMED_KINDS)
    summed = counted.where(summable).groupBy(*SUMMED_KEYS).agg(*[F.sum(c).alias(c) for c in SUMMED_COLUMNS])
    found = combine_counted(pd.concat([summed.toPandas(), counted.where(~summable).toPandas()]))
    ev = StreamedEvaluation.of(found, tables[0].ontology, "block")

``gold`` and ``pred`` are Spark DataFrames with columns ``doc_id`` and ``code`` (strings, as the readers
normalise them: trimmed, one code a row, no empty document id); ``ev.levels_table`` and the rest are as
:func:`score_dask` gives them. ``counted`` is computed twice there (two actions): ``counted.cache()`` or
``counted.toPandas()`` once (``combine_counted`` sums the raw rows itself) to count once.
"""

from __future__ import annotations

import importlib
import os
import uuid
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass, fields, replace
from operator import getitem
from typing import TYPE_CHECKING, Any

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.compute as pc
import scipy.sparse as sp

from ..base.files import InputError
from ..inputs.readers import REJECTED_COLUMNS, RawScores, read_frame
from ..metrics import NodeCounts, evaluate
from ..ontology import Ontology, choose_ontology
from ..scoring.kernel import (
    CodeTable,
    IdCounts,
    PartitionCounts,
    Tables,
    count_rows,
    nothing_scorable,
    rejected_codes,
    resolve_tables,
)
from ..scoring.labels import NothingScorable
from .pipeline import SortedDocuments, StreamedEvaluation
from .sources import (
    ColumnNames,
    LabelChunk,
    SourceFile,
    frame_label_chunk,
    label_chunks,
    source_files,
    source_frames,
)
from .spill import deal_rows

if TYPE_CHECKING:
    import networkx as nx

__all__ = [
    "COUNTED_SCHEMA",
    "SUMMED_COLUMNS",
    "SUMMED_KEYS",
    "SUMMED_KINDS",
    "combine_counted",
    "count_batches",
    "score_dask",
]

_SPLIT_EVERY = 8
_INSTALL = (
    'scoring on Dask needs Dask: pip install ".[dask]" in the folder of a cophe checkout '
    "(dask[dataframe] and distributed)"
)


def _dask(dataframe: bool = False) -> Any:
    """Dask (with ``dask.dataframe``, which a Parquet dataset on disk does not need, on request)."""
    try:
        import dask

        if dataframe:
            import dask.dataframe
    except ImportError as e:
        raise ImportError(f"{_INSTALL} ({e})") from None
    return dask


# ------------------------------------------------------------------ the functions the workers run

# A share of one side's rows in a group of input partitions, those of the documents in one count task's range
# of ids: its document ids (Arrow strings), per row the number of its document among them and its code's
# node (-1: none, or a code not scored: its document is evaluated all the same), in 16 or 32 bits, and the
# side (0 gold, 1 predicted). The ids travel once per group, side and share, the rows as 4 to 8 bytes each.
Share = tuple[pa.Array, np.ndarray, np.ndarray, int]
# Rows per count task by default: each counts about as many rows as the streamed path's buckets
_COUNT_ROWS = 2_000_000
# Code rows per group of partitions placed and dealt in one task (the partitions a worker holds, cut): its
# result, the shares, takes some 9 bytes a row
_GROUP_ROWS = 25_000_000
_TOTALS_ROW = ("duplicates_gold", "duplicates_pred", "only_gold", "only_pred")
# A count task's per-document table: its documents' ids (a ``doc_id`` column, in sorted order), their counts
# (documents x columns, in the narrowest integers that hold them; no column when they are not kept), and
# the columns' names.
Documents = tuple[pd.DataFrame, np.ndarray, list[str]]


@dataclass(frozen=True)
class _Part(LabelChunk):
    """A partition as pass 1 keeps it in its worker's memory for pass 2: a chunk read as the streamed path
    reads one (its ids Arrow strings, never an object a row), its row numbers 32-bit (a partition holds far
    fewer than 2**31 rows; 12 bytes a row), with the readers' warnings and the name of its file (that its
    rejected rows quote). Pass 1's tasks each read a batch of them (:data:`Batch`)."""

    warnings: list[str]
    file: str = ""


# The partitions one task of pass 1 reads (files of a dataset, a few megabytes in all; a partition of a Dask
# DataFrame): the scheduler and the workers handle a task for every few files, not a task a file
Batch = list[_Part]
# Bytes of Parquet files per task of pass 1 (at least _MIN_BATCHES tasks a side, where there are as many files)
_BATCH_BYTES = 8 << 20
_MIN_BATCHES = 4


# Rows per batch when a file is read (a Parquet file's row group, or this many rows of it, a chunk)
_FILE_ROWS = 1 << 22


def _chunk(frame: pd.DataFrame, side: int, file: str, doc_col: str | None, code_col: str | None) -> _Part:
    """One partition of a Dask DataFrame read as the streamed path reads a chunk of a file: on Arrow arrays
    when its columns say it holds labels one code a row (:func:`~cophe_core.scale.sources.frame_label_chunk`),
    else through the readers' normalisation (:func:`cophe_core.inputs.readers.read_frame`); rows numbered
    from 1 in the partition, as its rejected rows quote them."""
    if not len(frame):
        return replace(_joined_parts([]), file=file)
    frame = frame.reset_index(drop=all(n is None for n in frame.index.names))  # a named index is a column
    frame.columns = [str(c) for c in frame.columns]
    frame.index = pd.RangeIndex(1, len(frame) + 1)
    chunk = frame_label_chunk(frame, file, labels_only=side == 0, doc_col=doc_col, code_col=code_col)
    if chunk is not None:
        return replace(_kept(chunk), file=file)
    return _frame_part(frame, file, side == 0, doc_col, code_col)


def _partition(frame: pd.DataFrame, side: int, file: str, doc_col: str | None, code_col: str | None) -> Batch:
    """A partition of a Dask DataFrame as a task of pass 1 reads it (:func:`_chunk`): a batch of one."""
    return [_chunk(frame, side, file, doc_col, code_col)]


def _read_files(files: Sequence[SourceFile], side: int, doc_col: str | None, code_col: str | None) -> Batch:
    """A batch of files of a dataset, each read by :func:`_read_file`."""
    return [_read_file(f, side, doc_col, code_col) for f in files]


def _read_file(f: SourceFile, side: int, doc_col: str | None, code_col: str | None) -> _Part:
    """One file of a dataset read as the streamed path reads it, straight into Arrow arrays: a Parquet file of
    labels one code a row by its schema (:func:`~cophe_core.scale.sources.label_chunks`) its document and
    code columns only, dictionary-encoded, the readers' normalisation applied to their distinct values; a
    chunk of codes joined in cells, or a file whose columns say otherwise (a hive key as the document
    column, ...), through the readers' own (:func:`cophe_core.inputs.readers.read_frame`). Its rejected rows
    quote the file's name and row number, as the streamed path's do."""
    chunks = label_chunks(f, _FILE_ROWS, labels_only=side == 0, doc_col=doc_col, code_col=code_col)
    if chunks is None:
        names = ColumnNames(None, doc_col, code_col)
        frames = source_frames(f, _FILE_ROWS, names)
        parts = [_frame_part(x, f.name, side == 0, doc_col, code_col) for x in frames]
    else:  # a chunk of joined codes comes as a frame of these two columns only
        parts = [
            c if isinstance(c, _Part) else _frame_part(c, f.name, True, "doc_id", "code")
            for c in map(_kept, chunks)
        ]
    return replace(_joined_parts(parts), file=f.name)


def _kept(chunk: LabelChunk | pd.DataFrame) -> _Part | pd.DataFrame:
    """A chunk read on Arrow arrays as pass 1 keeps it (a frame, as it is)."""
    if isinstance(chunk, pd.DataFrame):
        return chunk
    return _Part(
        _ids(chunk.docs),
        chunk.doc_at.astype(np.int32),
        np.asarray(chunk.codes, dtype=object),
        chunk.code_at.astype(np.int32),
        chunk.lines.astype(np.int32),
        chunk.alone.astype(np.int32),
        chunk.rejected,
        [],
    )


def _ids(docs: Any) -> pa.Array:
    """Document ids as one Arrow array of large strings, from an array of Python strings or Arrow strings
    (of one chunk or several, dictionary-encoded or not).

    >>> _ids(np.array(["1", "2"], dtype=object)).to_pylist(), _ids(pa.array(["1"]).dictionary_encode()).type
    (['1', '2'], DataType(large_string))
    """
    if isinstance(docs, np.ndarray):
        return pa.array(docs.astype(object, copy=False), pa.large_string())
    found = pa.array(docs)  # Arrow's own, or a pandas column backed by Arrow: no copy to Python objects
    if isinstance(found, pa.ChunkedArray):
        found = found.combine_chunks()
    return found.cast(pa.large_string())


def _frame_part(
    frame: pd.DataFrame, file: str, labels_only: bool, doc_col: str | None, code_col: str | None
) -> _Part:
    """A frame of rows (indexed by line) read by the readers (:func:`cophe_core.inputs.readers.read_frame`),
    with their warnings."""
    raw = read_frame(frame, name=file, labels_only=labels_only, doc_col=doc_col, code_col=code_col)
    if isinstance(raw, RawScores):
        raise InputError(
            f"{file}: holds scores; scoring on Dask takes code sets (doc_id,code rows). Decide the codes first"
        )
    pairs = raw.pairs
    docs = pd.Index(np.asarray(raw.docs, dtype=object), dtype=object)
    doc_at = docs.get_indexer(pairs["doc_id"].to_numpy(dtype=object))
    code_at, codes = pd.factorize(pairs["code"].to_numpy(dtype=object))
    listed = np.bincount(doc_at, minlength=len(docs)) > 0
    return _Part(
        _ids(docs.to_numpy(dtype=object)),
        doc_at.astype(np.int32),
        np.asarray(codes, dtype=object),
        code_at.astype(np.int32),
        pairs["line"].to_numpy(dtype=np.int32),
        np.flatnonzero(~listed).astype(np.int32),
        raw.rejected,
        list(raw.warnings),
    )


def _joined_parts(parts: Sequence[_Part]) -> _Part:
    """The chunks of one file as one partition: their distinct values one after another (an id or a code in
    two chunks twice: pass 2 numbers ids afresh, and looks codes up one by one), the rows' numbers shifted.

    >>> one = _chunk(pd.DataFrame({"doc_id": ["a", "b"], "code": ["401.9", "428.0"]}), 0, "f", None, None)
    >>> two = _chunk(pd.DataFrame({"doc_id": ["b"], "code": ["401.9"]}), 0, "f", None, None)
    >>> both = _joined_parts([one, two])
    >>> both.docs.take(pa.array(both.doc_at)).to_pylist(), both.codes[both.code_at].tolist()
    (['a', 'b', 'b'], ['401.9', '428.0', '401.9'])
    """
    if len(parts) == 1:
        return parts[0]

    def joined(values: list[np.ndarray], at: str) -> np.ndarray:
        starts = np.cumsum([0, *(len(v) for v in values)])
        return np.concatenate(
            [np.zeros(0, np.int32), *(getattr(p, at) + k for k, p in zip(starts, parts))]
        ).astype(np.int32)

    docs = [np.arange(len(p.docs)) for p in parts]
    return _Part(
        pa.concat_arrays([pa.array([], pa.large_string()), *(p.docs for p in parts)]),
        joined(docs, "doc_at"),
        np.concatenate([np.zeros(0, object), *(p.codes for p in parts)]),
        joined([p.codes for p in parts], "code_at"),
        np.concatenate([np.zeros(0, np.int32), *(p.lines for p in parts)]),
        joined(docs, "alone"),
        _concat_rows([p.rejected for p in parts]),
        [w for p in parts for w in p.warnings],
    )


# What the client needs of a partition before counting: its code rows, the rows the reader rejected, its
# warnings, the address of the worker that holds it (None outside a cluster), and a sample of its document
# ids (to cut the ids into ranges of about as many documents each).
Brief = tuple[int, pd.DataFrame, list[str], str | None, np.ndarray]
# Document ids sampled per partition
_SAMPLE = 128


def _summary(batch: Batch) -> tuple[np.ndarray, list[Brief]]:
    """A batch's distinct codes and its :data:`Brief` (its partitions' rows, rejected rows and warnings, and
    a sample of each one's document ids)."""
    samples = [np.zeros(0, object)]
    for part in batch:
        every = np.arange(0, len(part.docs), max(1, len(part.docs) * len(batch) // _SAMPLE))
        samples.append(part.docs.take(pa.array(every)).to_numpy(zero_copy_only=False))
    rows = sum(len(part.code_at) for part in batch)
    rejected = _concat_rows([part.rejected for part in batch])
    warnings = [w for part in batch for w in part.warnings]
    return _codes(batch), [(rows, rejected, warnings, _worker(), np.concatenate(samples))]


def _codes(batch: Batch) -> np.ndarray:
    """The distinct codes of a batch's kept rows."""
    return _distinct([codes for _, codes in _file_codes(batch)])


def _file_codes(batch: Batch) -> list[tuple[str, np.ndarray]]:
    """Each partition of a batch's file, and the distinct codes of its kept rows."""
    return [(p.file, p.codes[np.bincount(p.code_at, minlength=len(p.codes)) > 0]) for p in batch]


def _merge_summaries(*found: tuple[np.ndarray, list[Brief]]) -> tuple[np.ndarray, list[Brief]]:
    """A step of the tree of summaries: the distinct codes of all, their partitions' briefs in order. (The
    tasks of the graph take their inputs one an argument, never in a list: Dask builds a graph of delayed
    calls with lists of inputs in time that grows with the square of its size.)"""
    return _distinct([codes for codes, _ in found]), [b for _, briefs in found for b in briefs]


def _worker() -> str | None:
    """The address of the Dask worker running this task, None when it runs elsewhere (Dask's local
    schedulers)."""
    try:
        from distributed import get_worker

        return str(get_worker().address)
    except (ImportError, ValueError):
        return None


def _prepare(sides: Sequence[int], tables: Tables, bounds: pa.Array, *batches: Batch) -> tuple[Any, ...]:
    """A group of partitions (those one worker holds), each placed by its side's code table (its distinct
    codes looked up once) and dealt by document into shares, one per count task (:data:`Share`; a document
    without a scored code keeps a row with node -1), by the range of ids among ``bounds`` its id is in
    (:func:`_deal`, on the distinct ids only): every row of a document, gold and predicted, in any
    partition, goes to the same count task, and the count tasks' documents, in order, are in the order of
    their ids. Returns ``len(bounds) + 1`` items, the shares of count task ``k`` (one per partition with
    rows there), then the group's rejected and flagged rows and each partition's rows scored (the
    partitions of its batches, in turn). Whether a row
    is scored depends on its code alone, so the few rows listed are listed here. One task per group rather
    than per partition: the scheduler and the transfers between workers handle groups times count tasks
    pieces, not partitions times count tasks; each partition is still dealt on its own (its arrays stay in
    the processor's cache).

    >>> from cophe_core.ontology import icd9_ontology
    >>> tables = resolve_tables([["401.9"], ["401.9", "XYZ"]], icd9_ontology())
    >>> c = _chunk(pd.DataFrame({"doc_id": ["1", "2"], "code": ["401.9", "XYZ"]}), 1, "p", None, None)
    >>> *shares, (rejected, flagged, scored) = _prepare([1, 1], tables, pa.array(["2"]), [c], [replace(c, file="q")])
    >>> sum(len(s[1]) for k in shares for s in k), rejected.file.tolist(), scored.tolist()
    (4, ['p', 'q'], [1, 1])
    """
    rejected: list[pd.DataFrame] = []
    flagged: list[pd.DataFrame] = []
    parts = [(c, side) for batch, side in zip(batches, sides) for c in batch]
    scored = np.zeros(len(parts), np.int64)
    pieces: list[list[Share]] = [[] for _ in range(2 * (len(bounds) + 1))]  # per share, per side
    for i, (c, side) in enumerate(parts):
        table = tables if isinstance(tables, CodeTable) else tables[side]
        node, bad, caveat = _place(c, table)
        rejected.append(bad)
        flagged.append(caveat)
        scored[i] = int((node >= 0).sum())
        doc_at = np.concatenate([c.doc_at, c.alone]).astype(np.int64)
        nodes = np.concatenate([node, np.full(len(c.alone), -1)]).astype(np.int32)
        for k, share in enumerate(_deal(c.docs, doc_at, nodes, side, bounds)):
            if len(share[1]):
                pieces[2 * k + side].append(share)
    # one share per count task and side: a few arrays to send, each in the narrowest integers that hold it
    n_nodes = (tables if isinstance(tables, CodeTable) else tables[0]).ontology.n_nodes
    shares = [
        tuple(_joined(p, n_nodes) for p in pieces[2 * k : 2 * k + 2] if p) for k in range(len(bounds) + 1)
    ]
    return (*shares, (_concat_rows(rejected), _concat_rows(flagged), scored))


def _joined(pieces: Sequence[Share], n_nodes: int) -> Share:
    """Shares of one side as one: their ids one after another (an id in two of them twice: the count task
    numbers ids afresh), each row's number into them, its node; the numbers in 16 bits where they fit.

    >>> one = (pa.array(["a"], pa.large_string()), np.array([0, 0], np.int32), np.array([5, -1], np.int32), 1)
    >>> two = (pa.array(["b", "a"], pa.large_string()), np.array([1, 0], np.int32), np.array([6, 7], np.int32), 1)
    >>> ids, doc, node, side = _joined([one, two], 100)
    >>> ids.to_pylist(), doc.tolist(), node.tolist(), doc.dtype.name, node.dtype.name, side
    (['a', 'b', 'a'], [0, 0, 2, 1], [5, -1, 6, 7], 'uint16', 'int16', 1)
    """
    starts = np.cumsum([0, *(len(p[0]) for p in pieces)])
    doc_type = np.uint16 if starts[-1] <= 1 << 16 else np.int32
    return (
        pa.concat_arrays([p[0] for p in pieces]),
        np.concatenate([(p[1] + k).astype(doc_type) for k, p in zip(starts, pieces)]),
        np.concatenate([p[2] for p in pieces]).astype(np.int16 if n_nodes < 1 << 15 else np.int32),
        pieces[0][3],
    )


def _place(c: _Part, table: CodeTable) -> tuple[np.ndarray, pd.DataFrame, pd.DataFrame]:
    """Each kept row's node by its code (the partition's distinct codes looked up once; -1: not scored), and
    the rows rejected and flagged for their code, quoted by its file and line."""
    pos = table.index.get_indexer(c.codes) if len(c.codes) else np.zeros(0, np.int64)
    node_of = (
        np.where(pos >= 0, table.nodes[np.maximum(pos, 0)], -1) if len(table.nodes) else np.full(len(pos), -1)
    )
    flag_of = (node_of >= 0) & ((table.flag != "")[np.maximum(pos, 0)] if len(table.codes) else False)
    listed = []
    for mask, text, kind in (
        ((pos >= 0) & (node_of < 0), table.reason, table.reason_kind),
        (flag_of, table.flag, table.flag_kind),
    ):
        at = np.flatnonzero(mask[c.code_at])
        p = pos[c.code_at[at]]
        listed.append(
            pd.DataFrame(
                {
                    "file": c.file,
                    "line": c.lines[at].astype(np.int64),
                    "value": table.codes[p],
                    "reason": text[p],
                    "kind": kind[p],
                },
                columns=REJECTED_COLUMNS,
            )
        )
    return node_of[c.code_at], listed[0], listed[1]


def _deal(
    docs: pa.Array, doc_at: np.ndarray, node: np.ndarray, side: int, bounds: pa.Array
) -> tuple[Share, ...]:
    """The rows (each its document's number in the distinct ``docs``, and its node) dealt into
    ``len(bounds) + 1`` shares by their document's id: share ``k`` holds the ids from ``bounds[k - 1]``
    (included) up to ``bounds[k]`` (excluded), in Arrow's order of strings. Each share's documents are
    numbered among its own ids. The ids stay Arrow strings throughout.

    >>> docs = pa.array(["a", "b", "c"], pa.large_string())  # "b": no row, left out
    >>> one, two = _deal(docs, np.array([2, 0, 2]), np.array([7, 8, 9], np.int32), 1, pa.array(["b"]))
    >>> one[0].to_pylist(), one[1].tolist(), one[2].tolist(), two[0].to_pylist(), two[1].tolist(), two[3]
    (['a'], [0], [8], ['c'], [0, 0], 1)
    """
    used = np.flatnonzero(np.bincount(doc_at, minlength=len(docs)))  # the ids of some row
    ids = docs.take(pa.array(used))
    n_shares = len(bounds) + 1
    share = _ranges(ids, bounds)
    # 16-bit share numbers where they fit, for which numpy's stable sort is a radix sort
    d = deal_rows(
        share.astype(np.uint16 if n_shares <= 1 << 16 else np.int64), used, len(docs), doc_at, n_shares
    )
    return tuple(
        (
            # an array of its own, taken (a slice of a larger one would be pickled with its whole buffers)
            ids.take(pa.array(d.by_group[d.value_bounds[k] : d.value_bounds[k + 1]])),
            d.within[d.order[d.bounds[k] : d.bounds[k + 1]]],
            node[d.order[d.bounds[k] : d.bounds[k + 1]]],
            side,
        )
        for k in range(n_shares)
    )


def _ranges(ids: pa.Array, bounds: pa.Array) -> np.ndarray:
    """The range of each id among the sorted ``bounds``: how many bounds sort before it (an id equal to a
    bound is in the range that bound begins), in Arrow's order of strings (by their UTF-8 bytes).

    >>> _ranges(pa.array(["b", "a", "c", "bb"]), pa.array(["b", "c"])).tolist()
    [1, 0, 2, 1]
    """
    both = pa.concat_arrays([bounds.cast(pa.large_string()), ids.cast(pa.large_string())])
    order = pc.sort_indices(both).to_numpy()  # a stable sort: a bound before an id equal to it
    is_bound = order < len(bounds)
    passed = np.cumsum(is_bound)
    found = np.empty(len(ids), np.int64)
    found[order[~is_bound] - len(bounds)] = passed[~is_bound]
    return found


def _bounds(samples: Sequence[np.ndarray], n_shares: int) -> pa.Array:
    """``n_shares - 1`` bounds that cut the sampled document ids into ranges of about as many each.

    >>> _bounds([np.array(["d", "a"], dtype=object), np.array(["c", "b"], dtype=object)], 2).to_pylist()
    ['c']
    """
    ids = pa.array(np.concatenate([np.zeros(0, object), *samples]), pa.large_string())
    ordered = ids.take(pc.sort_indices(ids))
    if not len(ordered):
        return pa.array([""] * (n_shares - 1), pa.large_string())
    return ordered.take(pa.array((np.arange(1, n_shares) * len(ordered)) // n_shares))


def _string_column(values: pa.Array) -> pd.api.extensions.ExtensionArray:
    """Arrow strings as a pandas column without a copy to Python objects. As Arrow's ``string`` (32-bit
    offsets): pandas before 2.2 takes no other, and one partition's ids are far below 2 GB."""
    return pd.arrays.ArrowStringArray(pa.chunked_array([values.cast(pa.string())]))


def _count(
    tables: Tables, max_level: str, keep_documents: bool, *groups: Sequence[Share]
) -> tuple[tuple[pd.DataFrame, pd.DataFrame], Documents]:
    """The shares of one count task (every row of its documents, both sides, from every group) counted on
    integers: their document ids dictionary-encoded into document numbers (the distinct ids of each share
    only, numbered in sorted order), counted with the nodes by :func:`~cophe_core.scoring.kernel.count_rows`. Returns plain columns: the
    per-node counts of the nodes with a count (``node`` and one column per
    :class:`~cophe_core.metrics.NodeCounts` field) with the four totals (one row), which the tree of sums
    takes as they are, and the per-document table (:data:`Documents`)."""
    onto = (tables if isinstance(tables, CodeTable) else tables[0]).ontology
    shares = [share for group in groups for share in group]
    names = pa.chunked_array([s[0] for s in shares], pa.large_string()).combine_chunks()
    encoded = pc.dictionary_encode(names)
    # the documents numbered in the order of their ids: the per-document table comes out sorted, and the
    # client's sort of all the documents (the count tasks', in turn, in the order of their ranges) is short
    order = pc.sort_indices(encoded.dictionary).to_numpy()
    ids = encoded.dictionary.take(pa.array(order))
    rank = np.empty(len(order), np.int64)
    rank[order] = np.arange(len(order))
    number = rank[encoded.indices.to_numpy(zero_copy_only=False)]
    starts = np.cumsum([0, *(len(s[0]) for s in shares)])
    doc = np.concatenate([np.zeros(0, np.int64), *(number[k + s[1]] for k, s in zip(starts, shares))])
    node = np.concatenate([np.zeros(0, np.int64), *(s[2] for s in shares)]).astype(np.int64)
    side = np.concatenate([np.zeros(0, bool), *(np.full(len(s[1]), s[3] == 1) for s in shares)])
    got = _count_ids(doc, node, side, len(ids), onto, max_level, keep_documents)
    in_side = np.bincount(doc * 2 + side, minlength=2 * len(ids)).reshape(-1, 2) > 0
    totals = (
        *got.duplicates,
        int((in_side[:, 0] & ~in_side[:, 1]).sum()),
        int((in_side[:, 1] & ~in_side[:, 0]).sum()),
    )
    kept = got.documents is not None
    documents = (
        pd.DataFrame({"doc_id": _string_column(ids)}),
        _narrow(got.documents) if got.documents is not None else np.zeros((len(ids), 0), np.uint8),
        list(got.columns) if kept else [],
    )
    return (_node_rows(got.counts), pd.DataFrame([totals], columns=list(_TOTALS_ROW))), documents


def _narrow(block: np.ndarray) -> np.ndarray:
    """Counts in the narrowest of 8, 16 and 32 bits that holds them all (fewer bytes to send; the client
    reads them as 32-bit).

    >>> _narrow(np.array([[0, 255]])).dtype.name, _narrow(np.array([[0, 256]])).dtype.name
    ('uint8', 'uint16')
    """
    lo, hi = (int(block.min()), int(block.max())) if block.size else (0, 0)
    for kind in (np.uint8, np.uint16):
        if lo >= 0 and hi <= np.iinfo(kind).max:
            return block.astype(kind)
    return block.astype(np.int32)


def _count_ids(
    doc: np.ndarray,
    node: np.ndarray,
    pred: np.ndarray,
    n_docs: int,
    onto: Ontology,
    max_level: str,
    documents: bool,
) -> IdCounts:
    """:func:`~cophe_core.scoring.kernel.count_rows` on a tree; on a DAG, the in-memory evaluation of the label
    matrices the same rows make."""
    if not onto.is_dag:
        return count_rows(doc, node, pred, n_docs, onto, max_level=max_level, documents=documents)
    scored = node >= 0
    shape = (n_docs, onto.n_nodes)
    matrices, duplicates = [], []
    for mine in (scored & ~pred, scored & pred):
        m = sp.csr_matrix((np.ones(int(mine.sum()), np.int32), (doc[mine], node[mine])), shape=shape)
        m.sum_duplicates()
        matrices.append(m.astype(np.int8))
        duplicates.append(int(mine.sum()) - m.nnz)
    ev = evaluate(matrices[0], matrices[1], onto, docs=np.arange(n_docs).astype(str), max_level=max_level)
    columns = [c for c in ev.documents.columns if c != "doc_id"]
    block = ev.documents[columns].to_numpy(dtype=np.int64) if documents else None
    return IdCounts(ev.node_counts, block, columns, (duplicates[0], duplicates[1]))


def _node_rows(counts: NodeCounts) -> pd.DataFrame:
    """Per-node counts as plain columns: ``node`` and one column per counted field, the nodes with a count
    only."""
    known = {f: v for f in COUNT_FIELDS if (v := getattr(counts, f)) is not None}
    at = np.flatnonzero(np.logical_or.reduce([v != 0 for v in known.values()]))
    return pd.DataFrame({"node": at, **{f: v[at].astype(np.int64) for f, v in known.items()}})


def _sum_counts(*found: Sequence[pd.DataFrame]) -> tuple[pd.DataFrame, pd.DataFrame]:
    """A step of the tree reduction: of partitions' (node rows, totals), the node rows summed by node, the
    totals summed."""
    nodes = (
        pd.concat([p[0] for p in found], ignore_index=True).groupby("node", as_index=False, sort=True).sum()
    )
    return nodes, pd.concat([p[1] for p in found], ignore_index=True).sum().to_frame().T


# ------------------------------------------------------------------ Dask


def score_dask(
    gold: Any,
    pred: Any,
    *,
    ontology: str | Ontology | nx.DiGraph = "auto",
    system: str = "auto",
    max_level: str | None = None,
    doc_col: str | None = None,
    code_col: str | None = None,
    client: Any = None,
    npartitions: int | None = None,
    keep_documents: bool = True,
) -> StreamedEvaluation:
    """Score predictions against a gold standard on Dask: the figures of :func:`cophe_core.api.score_files`
    on the same rows, counted partition by partition on the workers (see the module docs for how).

    Parameters
    ----------
    gold, pred : dask DataFrame, or path or glob of a Parquet dataset
        Rows as the readers take them (``doc_id,code`` rows, columns detected or named by ``doc_col`` and
        ``code_col``). A local path is read by the workers file by file, as the streamed path reads it (see
        the module docs); a URL (``s3://``, any fsspec URL) by ``dask.dataframe.read_parquet``.
    ontology, system, max_level :
        As :func:`cophe_core.scale.pipeline.score_dataset`; ``"auto"`` detects the code system from all the codes.
    client : dask.distributed.Client, optional
        The cluster to run on (default: Dask's current scheduler, a client's if one was started).
    npartitions : int, optional
        Count tasks, each counting the rows of the documents in its range of ids (default: one per 2M rows, at
        least four per worker thread).
    keep_documents : bool
        Keep the per-document table (for :attr:`~cophe_core.scale.pipeline.StreamedEvaluation.documents` and the
        bootstrap).

    Returns
    -------
    StreamedEvaluation
        Its ``rejected`` rows quote the file and its row (a local dataset: ``gold/tile=3/part.parquet``), or
        the partition (``gold (partition 3)``) and the row number in it.

    Examples
    --------
    >>> import dask.dataframe as dd
    >>> gold = dd.from_pandas(pd.read_csv("sample_data/icd9/gold.csv", dtype=str), npartitions=3)
    >>> pred = dd.from_pandas(pd.read_csv("sample_data/icd9/run_siblings.csv", dtype=str), npartitions=2)
    >>> ev = score_dask(gold, pred)
    >>> round(ev.score("cophe").f1, 4), len(ev.docs)
    (0.7547, 1000)
    """
    dask = _dask()
    names = [_name(source, default) for source, default in ((gold, "gold"), (pred, "pred"))]
    if names[0] == names[1]:
        names = [f"{names[0]} (gold standard)", f"{names[1]} (run pred)"]
    # pass 1: every file of a local Parquet dataset, every partition of a Dask DataFrame, read as the streamed
    # path reads a file; its distinct codes, code rows and rejected rows back
    chunks, batch_files, sides = _reads(dask, (gold, pred), names, doc_col, code_col)
    files = [f for mine in batch_files for f in mine]
    # kept in the workers' memory (compact: 32-bit numbers into the distinct values), so that pass 2 places
    # the rows pass 1 read rather than reading and encoding every partition again
    chunks = _persist(dask, client, chunks)
    # each side's distinct codes and what the client needs of each partition, summed up by a tree of tasks
    # as the partitions are read: the client receives one summary a side, not the codes of every partition
    roots = []
    for side in (0, 1):
        level = [dask.delayed(_summary)(c) for c, s in zip(chunks, sides) if s == side]
        while len(level) > 1:
            level = [
                dask.delayed(_merge_summaries)(*level[i : i + _SPLIT_EVERY])
                for i in range(0, len(level), _SPLIT_EVERY)
            ]
        roots.extend(level)
    found = _compute(dask, client, roots)
    side_codes = [codes for codes, _ in found]
    briefs = [b for _, mine in found for b in mine]  # (gold's partitions first, as files lists them)
    onto, detection = choose_ontology(ontology, sorted({str(c) for c in np.concatenate(side_codes)}))
    max_level = onto.top_level(max_level)
    tables = resolve_tables(side_codes, onto, system=system)  # each side read on its own evidence
    read_rejected = _concat_rows([b[1] for b in briefs])
    _check_scorable(
        tables,
        briefs,
        sides,
        names,
        system,
        lambda at: _compute(dask, client, [dask.delayed(_file_codes)(chunks[i]) for i in at]),
    )
    # pass 2: the persisted partitions in groups, each group's on the worker that holds them: its rows placed
    # (node ids) and dealt into shares by document, each count task counting its share of every group on
    # integers, a tree of sums of the per-node counts
    shared = (
        client.scatter(tables, broadcast=True, hash=False)
        if client is not None
        else dask.delayed(tables, name=f"cophe-code-table-{uuid.uuid4().hex}", traverse=False)
    )
    n_shares = npartitions or _shares(sum(b[0] for b in briefs), client)
    bounds = _bounds([b[4] for b in briefs], n_shares)
    groups = _groups([b[3] for b in briefs], [b[0] for b in briefs])
    prepared = []
    for where, group in groups:
        with dask.annotate(**({} if where is None else {"workers": [where], "allow_other_workers": True})):
            prepared.append(
                dask.delayed(_prepare, nout=n_shares + 1)(
                    [sides[i] for i in group], shared, bounds, *[chunks[i] for i in group]
                )
            )
    # each count task takes its share of every group: Dask moves the shares (8 bytes a row and each share's
    # distinct ids) between workers, with no shuffle of whole rows of text
    counted = [
        dask.delayed(_count)(shared, max_level, keep_documents, *[p[k] for p in prepared])
        for k in range(n_shares)
    ]
    summed: list[Any] = [dask.delayed(getitem)(c, 0) for c in counted]
    while len(summed) > 1:  # a tree of sums, eight at a time, as dask.bag's reductions build it
        summed = [
            dask.delayed(_sum_counts)(*summed[i : i + _SPLIT_EVERY])
            for i in range(0, len(summed), _SPLIT_EVERY)
        ]
    documents = [dask.delayed(getitem)(c, 1) for c in counted]
    listed = [p[n_shares] for p in prepared]
    # the client's hold on the partitions let go once the graph is submitted: each is freed once placed
    found = _compute(dask, client, [*summed, *documents, *listed], release=chunks)
    scored = np.zeros(len(files), np.int64)
    starts = np.cumsum([0, *(len(mine) for mine in batch_files)])
    for (_, group), (_, _, rows) in zip(groups, found[1 + len(documents) :]):
        scored[np.concatenate([np.arange(starts[i], starts[i + 1]) for i in group])] = rows
    counts, sorted_documents = _partition_counts(
        found[0],
        found[1 : 1 + len(documents)],
        found[1 + len(documents) :],
        dict(zip(files, scored.tolist())),
        tables[0].ontology.n_nodes,
    )
    return StreamedEvaluation.of(
        counts,
        tables[0].ontology,
        max_level,
        names=names,
        files=files,
        read_rejected=read_rejected,
        notes=[w for b in briefs for w in b[2]],
        detection=detection,
        keep_documents=keep_documents,
        documents=sorted_documents,
    )


def _partition_counts(
    summed: Sequence[pd.DataFrame],
    documents: list[Documents],
    listed: list[tuple[pd.DataFrame, pd.DataFrame, np.ndarray]],
    scored: dict[str, int],
    n_nodes: int,
) -> tuple[PartitionCounts, SortedDocuments]:
    """The counts of all the documents, from the plain columns the workers returned: the summed per-node
    counts and totals, the per-document tables (in the order of their ranges of ids: all the documents
    sorted), per group of partitions its rejected and flagged rows, and per partition its rows scored. The
    per-document table comes apart (as :class:`~cophe_core.scale.pipeline.SortedDocuments`): its ids as one
    Arrow array, its counts as one block of 32-bit integers, copied once."""
    nodes, totals = summed
    at = nodes["node"].to_numpy(dtype=np.int64)
    arrays: dict[str, Any] = dict.fromkeys(COUNT_FIELDS)
    for f in COUNT_FIELDS:
        if f in nodes.columns:  # (a field not counted is None)
            arrays[f] = np.zeros(n_nodes, dtype=np.int64)
            arrays[f][at] = nodes[f].to_numpy(dtype=np.int64)
    n = {k: int(totals[k].iloc[0]) for k in _TOTALS_ROW}
    columns = documents[0][2] if documents else []
    values = np.concatenate(
        [np.zeros((0, len(columns)), np.int32), *(d[1] for d in documents)], dtype=np.int32
    )
    ids = pa.concat_arrays(
        [pa.array([], pa.large_string()), *(_ids(d[0]["doc_id"].array) for d in documents)]
    )
    counts = PartitionCounts(
        NodeCounts(**arrays),
        _no_documents(),
        _concat_rows([g[0] for g in listed]),
        _concat_rows([g[1] for g in listed]),
        (n["duplicates_gold"], n["duplicates_pred"]),
        n["only_gold"],
        n["only_pred"],
        scored,
    )
    return counts, SortedDocuments(ids, values, columns)


def _no_documents() -> pd.DataFrame:
    return pd.DataFrame({"doc_id": pd.Series(dtype=object)})


def _reads(
    dask: Any, sources: Sequence[Any], names: Sequence[str], doc_col: str | None, code_col: str | None
) -> tuple[list[Any], list[list[str]], list[int]]:
    """Pass 1's tasks (one per batch of files of a local Parquet dataset, read by :func:`_read_files`; one
    per partition of a Dask DataFrame or of a dataset Dask reads, by :func:`_partition`), the names of the
    files each one reads (its rejected rows quote them), and its side."""
    listed = [_local_files(source) for source in sources]
    if listed[0] is not None and listed[1] is not None:
        listed = list(_file_names(listed[0], listed[1]))
    tasks: list[Any] = []
    files: list[list[str]] = []
    sides: list[int] = []
    for side, (source, name, found) in enumerate(zip(sources, names, listed)):
        if found is not None:
            for batch in _batches(found):
                tasks.append(dask.delayed(_read_files)(batch, side, doc_col, code_col))
                files.append([f.name for f in batch])
                sides.append(side)
            continue
        parts = _frame(_dask(dataframe=True).dataframe, source).to_delayed()
        for i, part in enumerate(parts):
            file = name if len(parts) == 1 else f"{name} (partition {i})"
            tasks.append(dask.delayed(_partition)(part, side, file, doc_col, code_col))
            files.append([file])
            sides.append(side)
    return tasks, files, sides


def _batches(files: list[SourceFile]) -> list[list[SourceFile]]:
    """The files of a side in batches of files one after another, of about :data:`_BATCH_BYTES` each on disk,
    and at least :data:`_MIN_BATCHES` of them where there are as many files.

    >>> from pathlib import Path
    >>> files = [SourceFile(Path(f"/no/{i}"), str(i), "parquet") for i in range(10)]
    >>> [[f.name for f in b] for b in _batches(files)]
    [['0', '1'], ['2', '3', '4'], ['5', '6'], ['7', '8', '9']]
    """
    sizes = np.array([_size(f.path) for f in files], dtype=np.float64) + 1  # (an empty file costs a task too)
    n = min(len(files), max(_MIN_BATCHES, int(np.ceil(sizes.sum() / _BATCH_BYTES))))
    # each file in the batch its middle byte falls in, the bytes cut into n equal runs
    which = ((np.cumsum(sizes) - sizes / 2) * n // sizes.sum()).astype(np.int64)
    cuts = np.flatnonzero(np.diff(which)) + 1
    return [list(b) for b in np.split(np.array(files, dtype=object), cuts) if len(b)]


def _size(path: os.PathLike[str]) -> int:
    try:
        return os.stat(path).st_size
    except OSError:
        return 0  # (the reading says why)


def _local_files(source: Any) -> list[SourceFile] | None:
    """The files of a local Parquet dataset (a file, a folder, hive-partitioned or not, a glob), as the
    streamed path lists them (:func:`~cophe_core.scale.sources.source_files`); None for a Dask DataFrame, a
    URL (``s3://``: Dask reads it) or a dataset of other files."""
    if not isinstance(source, str | os.PathLike) or "://" in os.fspath(source):
        return None
    found = source_files(source)
    return found if all(f.fmt == "parquet" for f in found) else None


def _file_names(gold: list[SourceFile], pred: list[SourceFile]) -> tuple[list[SourceFile], list[SourceFile]]:
    """The two sides' files, a name both hold told apart as the streamed path tells it.

    >>> from pathlib import Path
    >>> g, p = _file_names([SourceFile(Path("a"), "x.parquet", "parquet")], [SourceFile(Path("b"), "x.parquet", "parquet")])
    >>> g[0].name, p[0].name
    ('x.parquet (gold standard)', 'x.parquet (run pred)')
    """
    gold_names = {f.name for f in gold}
    pred = [replace(f, name=f"{f.name} (run pred)") if f.name in gold_names else f for f in pred]
    clash = {f.name.removesuffix(" (run pred)") for f in pred}
    return [replace(f, name=f"{f.name} (gold standard)") if f.name in clash else f for f in gold], pred


def _frame(dd: Any, source: Any) -> Any:
    if isinstance(source, str | os.PathLike):
        return _parquet(dd, os.fspath(source))
    if not hasattr(source, "to_delayed"):
        raise TypeError(f"score_dask takes Dask DataFrames or Parquet paths, not {type(source).__name__}")
    return source


def _parquet(dd: Any, path: str) -> Any:
    """A Parquet dataset read by Dask, a hive directory's key (``shard=07/``) a column of text, as the streamed
    path reads it: ``"07"``, never Dask's own categorical of the number 7 (whose shared index of categories,
    under threads, can also judge itself not unique with pandas 2.1)."""
    plain = dd.read_parquet(path, dataset={"partitioning": None})
    keys = [c for c in dd.read_parquet(path).columns if c not in plain.columns]
    if not keys:
        return plain
    text = pa.schema([(key, pa.string()) for key in keys])
    return dd.read_parquet(path, dataset={"partitioning": {"flavor": "hive", "schema": text}})


def _name(source: Any, default: str) -> str:
    return os.fspath(source) if isinstance(source, str | os.PathLike) else default


def _no_rows() -> pd.DataFrame:
    return pd.DataFrame(columns=REJECTED_COLUMNS)


def _concat_rows(frames: list[pd.DataFrame]) -> pd.DataFrame:
    full = [f for f in frames if len(f)]
    return pd.concat(full, ignore_index=True) if full else _no_rows()


def _shares(rows: int, client: Any) -> int:
    """How many count tasks by default: one per :data:`_COUNT_ROWS` rows, and at least four per worker thread
    (a task's fixed cost is small; more tasks than threads share the work evenly)."""
    threads = sum(client.nthreads().values()) if client is not None else 1
    return max(-(-rows // _COUNT_ROWS), 4 * max(threads, 1))


def _distinct(arrays: Sequence[np.ndarray]) -> np.ndarray:
    """The distinct values of some arrays, in the order they first appear.

    >>> _distinct([np.array(["b", "a"], dtype=object), np.array(["a", "c"], dtype=object)]).tolist()
    ['b', 'a', 'c']
    """
    return np.asarray(pd.unique(np.concatenate([np.zeros(0, object), *arrays])), dtype=object)


def _groups(
    where: Sequence[str | None], rows: Sequence[int], most: int = _GROUP_ROWS
) -> list[tuple[str | None, list[int]]]:
    """The partitions in groups to place and deal, a group per worker (the partitions ``where`` says it
    holds, in their order), cut into as few groups of about as many code rows (``rows``) as hold
    :data:`_GROUP_ROWS` rows at most each (``most``; a batch larger than that is a group of its own).

    >>> _groups(["a", "b", "a", None], [10, 20, 30, 40])
    [('a', [0, 2]), ('b', [1]), (None, [3])]
    >>> _groups(["a"] * 5, [10, 10, 10, 10, 20], most=30)
    [('a', [0, 1, 2]), ('a', [3, 4])]
    """
    held: dict[str | None, list[int]] = {}
    for i, w in enumerate(where):
        held.setdefault(w, []).append(i)
    out: list[tuple[str | None, list[int]]] = []
    for w, mine in held.items():
        given = np.array([rows[i] for i in mine], dtype=np.float64)
        n = max(1, int(np.ceil(given.sum() / most)))
        size = given + 1  # (a partition without rows has a place all the same)
        # each partition in the group its middle row falls in, the rows cut into n equal runs
        which = ((np.cumsum(size) - size / 2) * n // size.sum()).astype(np.int64)
        cuts = np.flatnonzero(np.diff(which)) + 1
        out.extend((w, [int(i) for i in group]) for group in np.split(np.array(mine), cuts))
    return out


def _persist(dask: Any, client: Any, objs: list[Any]) -> list[Any]:
    """The objects computed and kept where they were computed (on the workers, with a client), as delayed
    objects that later graphs take as inputs."""
    if client is not None:
        return list(client.persist(objs))
    return list(dask.persist(*objs))


def _compute(dask: Any, client: Any, objs: list[Any], release: list[Any] | None = None) -> list[Any]:
    """The objects computed; ``release`` (persisted inputs) emptied once they are submitted. With a client,
    the results are fetched as they are done, while the others run, rather than all at the end."""
    if client is None:
        return list(dask.compute(*objs))
    distributed: Any = importlib.import_module("distributed")  # (a client is about: it is installed)
    futures = client.compute(objs)
    if release is not None:
        release.clear()
    at = {f.key: i for i, f in enumerate(futures)}
    found: list[Any] = [None] * len(futures)
    for done in distributed.as_completed(futures).batches():
        for f, result in zip(done, client.gather(done)):
            found[at[f.key]] = result
    return found


def _check_scorable(
    tables: tuple[CodeTable, ...],
    briefs: list[Brief],
    sides: list[int],
    names: list[str],
    system: str,
    codes_of: Callable[[list[int]], list[list[tuple[str, np.ndarray]]]],
) -> None:
    """As the streamed path checks each source: a side none of whose rows can be scored is a
    :class:`~cophe_core.scoring.labels.NothingScorable` naming it, and so is a gold standard without a code.
    ``codes_of`` gives the distinct codes of each file of some batches (asked for the error's rows only)."""
    for side, (name, table) in enumerate(zip(names, tables)):
        if (table.nodes >= 0).any():  # the table holds the side's codes, and no other
            continue
        mine = [i for i, s in enumerate(sides) if s == side]
        read_bad = _concat_rows([briefs[i][1] for i in mine])
        n_rows = sum(briefs[i][0] for i in mine) + len(read_bad)
        what = "gold standard" if side == 0 else "run"
        if not n_rows:
            if side == 1:
                continue  # a run without rows predicts nothing
            raise NothingScorable(
                f"{name}: the {what} holds no codes; give one row per (document, code)",
                file=name,
                rejected=_no_rows(),
                needs_system=False,
            )
        found = [pair for batch in codes_of(mine) for pair in batch]
        codes = [rejected_codes(table, file, table.index.get_indexer(c)) for file, c in found]
        raise nothing_scorable(name, n_rows, _concat_rows([read_bad, *codes]), table.ontology, system)


# ------------------------------------------------------------------ Spark's mapInPandas

# The NodeCounts fields, in order: one column each in the rows count_batches yields.
COUNT_FIELDS = tuple(f.name for f in fields(NodeCounts))
# The columns Spark sums, and the ones it groups the summed rows by (kinds in SUMMED_KINDS only).
SUMMED_COLUMNS = ("n", *COUNT_FIELDS)
SUMMED_KEYS = ("kind", "node", "name")
SUMMED_KINDS = ("node", "scored", "total", "columns")
# The rows' Spark schema (``mapInPandas(..., schema=COUNTED_SCHEMA)``): plain columns, see count_batches.
COUNTED_SCHEMA = ", ".join(
    [
        "kind string",
        "node bigint",
        "name string",
        "line bigint",
        "value string",
        "reason string",
        "reason_kind string",
        "n bigint",
        *(f"{f} bigint" for f in COUNT_FIELDS),
        "values array<bigint>",
    ]
)
_COLUMNS = [column.split()[0] for column in COUNTED_SCHEMA.split(", ")]
_TOTALS = ("duplicates_gold", "duplicates_pred", "only_gold", "only_pred")
_INTS = ("node", "line", "n", *COUNT_FIELDS)
_TEXTS = ("kind", "name", "value", "reason", "reason_kind")


def count_batches(
    batches: Iterable[pd.DataFrame],
    table: Tables,
    *,
    max_level: str | None = None,
    keep_documents: bool = True,
) -> Iterator[pd.DataFrame]:
    """A ``mapInPandas`` function: the batches of one partition (rows of both sides, columns ``side`` (0
    gold, 1 predicted), ``doc_id``, ``code``, optionally ``line`` and ``file``, every row of a document in
    the partition) counted together on integers (:func:`~cophe_core.scoring.kernel.count_rows`; the figures of
    :func:`~cophe_core.scoring.kernel.count_partition` on the two sides' rows), yielded as plain rows of
    the Spark schema :data:`COUNTED_SCHEMA` (nothing for an empty partition). ``table``: the gold standard's
    and the predictions' code tables (:func:`~cophe_core.scoring.kernel.resolve_tables`), or one for both.

    Each row's ``kind`` says what it holds (the other columns are null):

    - ``node``: a node's counts, ``node`` its id and one column per :class:`~cophe_core.metrics.NodeCounts`
      field (:data:`COUNT_FIELDS`); only the nodes with a count, and always the ontology's last node (so
      the driver knows how many nodes there are);
    - ``scored``: ``n`` rows scored in the file ``name``;
    - ``total``: ``n`` for ``name`` in ``duplicates_gold``, ``duplicates_pred``, ``only_gold``,
      ``only_pred``;
    - ``columns``: ``name`` the per-document table's columns after ``doc_id``, joined by commas, ``n`` 1;
    - ``document``: a document ``name`` and its per-document counts (``values``, in that column order);
    - ``rejected``, ``flagged``: a row not scored or scored with a caveat: ``name`` (its file), ``line``,
      ``value``, ``reason`` and ``reason_kind`` (the rejected rows' ``kind``).

    Rows of the kinds in :data:`SUMMED_KINDS` add up over partitions: Spark can sum their
    :data:`SUMMED_COLUMNS` grouped by :data:`SUMMED_KEYS` before they reach the driver (see the module docs).

    >>> from cophe_core.ontology import icd9_ontology
    >>> tables = resolve_tables([["401.9"], ["401.1"]], icd9_ontology())  # the gold's codes, the predictions'
    >>> batches = [pd.DataFrame({"side": [0, 1], "doc_id": ["1", "1"], "code": ["401.9", "401.1"]})]
    >>> out = pd.concat(count_batches(iter(batches), tables))
    >>> sorted(set(out.kind)), int(combine_counted(out).counts.tp.sum()) > 0
    (['columns', 'document', 'node', 'scored', 'total'], True)
    """
    frames = [b for b in batches if len(b)]
    if not frames:
        return
    yield _counted_rows(_count_sides(pd.concat(frames, ignore_index=True), table, max_level, keep_documents))


def _count_sides(
    rows: pd.DataFrame, tables: Tables, max_level: str | None, documents: bool
) -> PartitionCounts:
    """Rows of both sides (``side``, ``doc_id``, ``code``, optionally ``line`` and ``file``) counted on integers,
    as :func:`~cophe_core.scoring.kernel.count_partition` counts the two sides' frames: each side's codes placed
    by its table (a code not in it is a ``ValueError``), the document ids numbered, the rows counted by
    :func:`~cophe_core.scoring.kernel.count_rows`."""
    pair = (tables, tables) if isinstance(tables, CodeTable) else tuple(tables)
    onto = pair[0].ontology
    side = rows["side"].to_numpy() == 1
    node = np.full(len(rows), -1, dtype=np.int64)
    rejected: list[pd.DataFrame] = []
    flagged: list[pd.DataFrame] = []
    scored: dict[str, int] = {}
    for s, default in enumerate(("gold", "pred")):
        at = np.flatnonzero(side == bool(s))
        mine = rows.iloc[at]
        table = pair[s]
        pos = table.positions(mine["code"].reset_index(drop=True))
        mine_node = (
            np.where(pos >= 0, table.nodes[np.maximum(pos, 0)], -1) if len(table.nodes) else pos * 0 - 1
        )
        node[at] = mine_node
        line = mine["line"].to_numpy(dtype=np.int64) if "line" in rows.columns else np.arange(1, len(at) + 1)
        file = (
            mine["file"].astype(str).to_numpy(dtype=object)
            if "file" in rows.columns
            else np.full(len(at), default)
        )
        for listed, mask, text, kind in (
            (rejected, (pos >= 0) & (mine_node < 0), table.reason, table.reason_kind),
            (flagged, (mine_node >= 0) & (table.flag != "")[np.maximum(pos, 0)], table.flag, table.flag_kind),
        ):
            p = pos[mask]
            listed.append(
                pd.DataFrame(
                    {
                        "file": file[mask],
                        "line": line[mask],
                        "value": table.codes[p],
                        "reason": text[p],
                        "kind": kind[p],
                    },
                    columns=REJECTED_COLUMNS,
                )
            )
        which, names = pd.factorize(file)
        for name, k in zip(names, np.bincount(which[mine_node >= 0], minlength=len(names))):
            scored[str(name)] = scored.get(str(name), 0) + int(k)
    doc, ids = pd.factorize(rows["doc_id"].to_numpy(dtype=object))
    got = _count_ids(doc.astype(np.int64), node, side, len(ids), onto, onto.top_level(max_level), documents)
    in_side = np.bincount(doc * 2 + side, minlength=2 * len(ids)).reshape(-1, 2) > 0
    table = pd.DataFrame({"doc_id": np.asarray(ids, dtype=object).astype(str)})
    if got.documents is not None:
        table = pd.concat([table, pd.DataFrame(got.documents, columns=got.columns)], axis=1)
    return PartitionCounts(
        got.counts,
        table,
        _concat_rows(rejected),
        _concat_rows(flagged),
        got.duplicates,
        int((in_side[:, 0] & ~in_side[:, 1]).sum()),
        int((in_side[:, 1] & ~in_side[:, 0]).sum()),
        scored,
    )


def _counted_rows(part: PartitionCounts) -> pd.DataFrame:
    """A partition's counts as rows of :data:`COUNTED_SCHEMA`."""
    counts = {f: getattr(part.counts, f) for f in COUNT_FIELDS}
    known = [v for v in counts.values() if v is not None]
    last = np.zeros(part.counts.n_nodes, dtype=bool)
    last[-1:] = True
    node = np.flatnonzero(np.logical_or.reduce([v != 0 for v in known]) | last)
    d = part.documents
    doc_columns = [c for c in d.columns if c != "doc_id"]
    values = d[doc_columns].to_numpy(dtype=np.int64)
    totals = (*part.duplicates, part.only_gold, part.only_pred)
    sections = [
        _section(
            "node", len(node), node=node, **{f: None if v is None else v[node] for f, v in counts.items()}
        ),
        _section("scored", len(part.scored), name=list(part.scored), n=list(part.scored.values())),
        _section("total", len(totals), name=list(_TOTALS), n=list(totals)),
        _section("columns", 1, name=",".join(doc_columns), n=1),
        _section(
            "document", len(d), name=d["doc_id"].astype(str).to_numpy(dtype=object), values=list(values)
        ),
        *(_listed(kind, listed) for kind, listed in (("rejected", part.rejected), ("flagged", part.flagged))),
    ]
    rows = pd.concat([s for s in sections if len(s)], ignore_index=True)
    # pandas 3 makes a column of strings its Arrow-backed str, which PySpark 4.3 refuses: objects, as built
    return rows.astype(dict.fromkeys(_COLUMNS, object))


def _listed(kind: str, rows: pd.DataFrame) -> pd.DataFrame:
    return _section(
        kind,
        len(rows),
        name=rows["file"].astype(str).to_numpy(dtype=object),
        line=rows["line"].to_numpy(dtype=np.int64),
        value=rows["value"].astype(str).to_numpy(dtype=object),
        reason=rows["reason"].astype(str).to_numpy(dtype=object),
        reason_kind=rows["kind"].astype(str).to_numpy(dtype=object),
    )


def _section(kind: str, size: int, **given: Any) -> pd.DataFrame:
    """``size`` rows of one kind, every column of the schema (the ones not given null), each an object column
    (pandas' nullable ``Int64`` reaches PySpark 4.3's Arrow conversion as a chunked array, which it refuses;
    Arrow reads integers and ``None`` in an object column as a bigint with nulls)."""
    out: dict[str, Any] = {"kind": np.full(size, kind, dtype=object)}
    for c in (*_TEXTS[1:], *_INTS, "values"):
        v = given.get(c)
        if c == "values" and v is not None:  # a list of arrays, one an object (numpy would make a matrix)
            out[c] = pd.Series(v, dtype=object, index=range(size)).to_numpy()
        else:
            column = np.empty(size, dtype=object)
            if v is not None:
                column[:] = [v] * size if isinstance(v, str | int) else v
            out[c] = column
    return pd.DataFrame(out, columns=_COLUMNS)


def combine_counted(counted: pd.DataFrame) -> PartitionCounts:
    """The partitions' rows that :func:`count_batches` yielded, collected on the driver (``toPandas()``),
    as one :class:`~cophe_core.scoring.kernel.PartitionCounts`: the rows of :data:`SUMMED_KINDS` summed by
    :data:`SUMMED_KEYS` (as they come, or already summed by Spark: the same result), the others listed.

    >>> from cophe_core.ontology import icd9_ontology
    >>> tables = resolve_tables([["401.9"], ["401.9"]], icd9_ontology())
    >>> one = pd.DataFrame({"side": [0, 1], "doc_id": ["1", "1"], "code": ["401.9", "401.9"]})
    >>> two = one.assign(doc_id="2")
    >>> rows = pd.concat([*count_batches([one], tables), *count_batches([two], tables)])
    >>> sorted(combine_counted(rows).documents.doc_id), combine_counted(rows).scored
    (['1', '2'], {'gold': 2, 'pred': 2})
    """
    if not len(counted):
        raise ValueError("no counted partitions: the rows were empty")
    kind = counted["kind"].to_numpy(dtype=object)
    summed = _summed(counted[np.isin(kind, SUMMED_KINDS)])
    few = summed[summed["kind"].isin(["scored", "total"])]  # a row a file, four totals
    n = {(k, name): int(v) for k, name, v in few[["kind", "name", "n"]].itertuples(index=False)}
    totals = [n.get(("total", t), 0) for t in _TOTALS]
    return PartitionCounts(
        _node_counts(summed[summed["kind"] == "node"]),
        _documents(counted[kind == "document"], summed[summed["kind"] == "columns"]),
        _rows(counted[kind == "rejected"]),
        _rows(counted[kind == "flagged"]),
        (totals[0], totals[1]),
        totals[2],
        totals[3],
        {name: v for (k, name), v in n.items() if k == "scored"},
    )


def _node_counts(nodes: pd.DataFrame) -> NodeCounts:
    """The per-node counts of the summed ``node`` rows; as many nodes as the last one's id says."""
    at = nodes["node"].to_numpy(dtype=np.int64)
    n_nodes = int(at.max()) + 1 if len(at) else 0
    arrays: dict[str, Any] = {}
    for f in COUNT_FIELDS:
        column = nodes[f]
        if column.isna().all():  # not counted (docs_over and the like, on request)
            arrays[f] = None
            continue
        arrays[f] = np.zeros(n_nodes, dtype=np.int64)
        arrays[f][at] = column.fillna(0).to_numpy(dtype=np.int64)
    return NodeCounts(**arrays)


def _summed(rows: pd.DataFrame) -> pd.DataFrame:
    """The rows of the summed kinds, summed by their keys (a null sum stays null: a count not counted)."""
    keys = pd.DataFrame(
        {
            "kind": rows["kind"].to_numpy(dtype=object),
            "node": pd.to_numeric(rows["node"]).fillna(-1).to_numpy(dtype=np.int64),
            "name": rows["name"].fillna("").to_numpy(dtype=object),
        }
    )
    values = pd.DataFrame({c: pd.to_numeric(rows[c]).to_numpy(dtype=np.float64) for c in SUMMED_COLUMNS})
    return pd.concat([keys, values], axis=1).groupby(list(SUMMED_KEYS), as_index=False).sum(min_count=1)


def _documents(rows: pd.DataFrame, columns: pd.DataFrame) -> pd.DataFrame:
    names = set(columns["name"])
    if len(names) > 1:
        raise ValueError(f"the partitions' per-document tables differ in their columns: {sorted(names)}")
    header = [c for c in (names.pop() if names else "").split(",") if c]
    values = np.array([np.asarray(v, dtype=np.int64) for v in rows["values"]], dtype=np.int64)
    block = values.reshape(len(rows), len(header))
    documents = pd.DataFrame({"doc_id": rows["name"].astype(str).to_numpy()})
    return pd.concat([documents, pd.DataFrame(block, columns=header)], axis=1)


def _rows(rows: pd.DataFrame) -> pd.DataFrame:
    return pd.DataFrame(
        {
            "file": rows["name"].astype(str).to_numpy(),
            "line": pd.to_numeric(rows["line"]).to_numpy(dtype=np.int64),
            "value": rows["value"].astype(str).to_numpy(),
            "reason": rows["reason"].astype(str).to_numpy(),
            "kind": rows["reason_kind"].astype(str).to_numpy(),
        },
        columns=REJECTED_COLUMNS,
    )
