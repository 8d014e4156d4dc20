"""Scoring on a cluster: Dask DataFrames or Parquet datasets on Dask (:func:`score_dask`), and the pieces a
Spark job needs (:func:`count_batches`, :func:`combine_counted`).

The figures are those of the in-memory path (:func:`cophe_core.api.score_files`) and of the streamed one
(:func:`cophe_core.scale.pipeline.score_dataset`), to the last digit, because the counting is the streamed path's,
unchanged: :func:`cophe_core.scoring.kernel.count_partition` on the rows of disjoint sets of documents, the per-node
counts summed. Dask does the rest with its own machinery:

1. **Read and normalise.** Each partition of each side goes through the readers' normalisation and
   validation (:func:`cophe_core.inputs.readers.read_frame`), as each chunk of a streamed file does: the same
   columns detected, the same rejected rows (quoted by partition and row number in it).
2. **Resolve.** The distinct codes of every partition (a small result) come back to the client and are
   placed in the ontology once, each side's codes read on its own evidence
   (:func:`cophe_core.scoring.kernel.resolve_tables`): the same node ids as in memory, unlisted codes included. The
   two code tables are broadcast to the workers (``Client.scatter``).
3. **Co-partition.** Both sides' rows, one frame with a ``side`` column, are shuffled on the document id
   (``DataFrame.shuffle(on="doc_id")``, Dask's hash shuffle, peer-to-peer on a distributed cluster): every
   row of a document, gold and predicted, lands in the same partition. One shuffle of one frame, rather
   than a join or a ``set_index`` (which would sort, and first compute quantiles of the ids).
4. **Count and reduce.** ``count_partition`` runs on each shuffled partition, and the partitions' counts are
   summed by a tree reduction: ``dask.delayed`` sums of eight at a time, the tree ``dask.bag``'s reductions
   build (a bag over a shuffled frame's partitions does not compute in dask 2026.8), so neither the client
   nor one worker receives every partition's result at once.

The inputs are read twice (once for the codes, once to count), as the streamed path reads each file once and
its spilled buckets once; ``persist()`` a frame first to read it once. Dask is an optional extra
(``pip install ".[dask]"`` in a cophe checkout), imported when :func:`score_dask` is called.

**On Spark.** ``count_partition`` is a pure function of two pandas DataFrames, and a ``mapInPandas``
function wraps it unchanged (:func:`count_batches`): union the normalised rows of both sides with a ``side``
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

import os
import uuid
from collections.abc import Iterable, Iterator
from dataclasses import fields
from operator import getitem
from typing import TYPE_CHECKING, Any

import numpy as np
import pandas as pd
import pyarrow

from ..base.files import InputError
from ..inputs.readers import REJECTED_COLUMNS, RawScores, read_frame
from ..metrics import NodeCounts
from ..ontology import Ontology, choose_ontology
from ..scoring.kernel import (
    CodeTable,
    PartitionCounts,
    Tables,
    count_partition,
    nothing_scorable,
    rejected_codes,
    resolve_tables,
)
from ..scoring.labels import NothingScorable
from .pipeline import StreamedEvaluation

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

_ROWS = {"side": np.int8, "doc_id": object, "code": object, "line": np.int64, "part": np.int32}
_SPLIT_EVERY = 8
_INSTALL = (
    'scoring on Dask needs Dask: pip install ".[dask]" in the folder of a cophe checkout '
    "(dask[dataframe] and distributed)"
)


def _dask() -> Any:
    try:
        import dask
        import dask.dataframe
    except ImportError as e:
        raise ImportError(f"{_INSTALL} ({e})") from None
    return dask


# ------------------------------------------------------------------ the functions the workers run


def _normalise(
    frame: pd.DataFrame, side: int, part: int, file: str, doc_col: str | None, code_col: str | None
) -> tuple[pd.DataFrame, pd.DataFrame, list[str]]:
    """One input partition through the readers: its scorable rows (``side, doc_id, code, line, part``; a
    document without a code is a row with no code), the rows the reader rejected, its warnings."""
    if not len(frame):
        return pd.DataFrame({k: pd.Series(dtype=v) for k, v in _ROWS.items()}), _no_rows(), []
    frame = frame.reset_index(drop=all(n is None for n in frame.index.names))  # a named index is a column
    frame.columns = [str(c) for c in frame.columns]
    frame.index = pd.RangeIndex(
        1, len(frame) + 1
    )  # the row number in the partition, which rejected rows quote
    raw = read_frame(frame, name=file, labels_only=side == 0, doc_col=doc_col, code_col=code_col)
    if isinstance(raw, RawScores):
        raise InputError(
            f"{file}: holds scores; scoring on Dask takes code sets (doc_id,code rows). Decide the codes first"
        )
    pairs = raw.pairs
    docs = np.asarray(raw.docs, dtype=object)
    alone = docs[~pd.Index(docs, dtype=object).isin(pairs["doc_id"].unique())]
    rows = pd.DataFrame(
        {
            "side": np.int8(side),
            "doc_id": np.concatenate([pairs["doc_id"].to_numpy(dtype=object), alone]),
            "code": np.concatenate([pairs["code"].to_numpy(dtype=object), np.full(len(alone), None)]),
            "line": np.concatenate([pairs["line"].to_numpy(dtype=np.int64), np.zeros(len(alone), np.int64)]),
            "part": np.int32(part),
        }
    ).astype(_ROWS)
    return rows, raw.rejected, list(raw.warnings)


def _summary(
    normalised: tuple[pd.DataFrame, pd.DataFrame, list[str]],
) -> tuple[np.ndarray, int, pd.DataFrame, list[str]]:
    """What the client needs of a partition before counting: its distinct codes and code rows, the rows the
    reader rejected and its warnings."""
    rows, rejected, warnings = normalised
    codes = rows["code"].dropna()
    return np.asarray(codes.unique(), dtype=object), len(codes), rejected, warnings


def _count(
    rows: pd.DataFrame, tables: Tables, files: list[str], max_level: str, keep_documents: bool
) -> list[PartitionCounts]:
    """One shuffled partition counted: a list of its counts, empty for an empty partition."""
    if not len(rows):
        return []
    gold = rows["side"].to_numpy() == 0
    frame = pd.DataFrame(
        {
            "doc_id": rows["doc_id"].to_numpy(dtype=object),
            "code": rows["code"].to_numpy(dtype=object),
            "line": rows["line"].to_numpy(dtype=np.int64),
            "file": pd.Categorical.from_codes(rows["part"].to_numpy(dtype=np.int32), files),
        }
    )
    frame["code"] = frame["code"].where(frame["code"].notna(), None)
    return [count_partition(frame[gold], frame[~gold], tables, max_level=max_level, documents=keep_documents)]


def _combine(parts: Iterable[PartitionCounts | None]) -> PartitionCounts | None:
    """The sum of counted partitions (a step of the tree reduction); ``None`` for none."""
    found = [p for p in parts if p is not None]
    return PartitionCounts.combine(found) if found else None


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
        ``code_col``); a path (local, ``s3://``, any fsspec URL) is read by ``dask.dataframe.read_parquet``.
    ontology, system, max_level :
        As :func:`cophe_core.scale.pipeline.score_dataset`; ``"auto"`` detects the code system from all the codes.
    client : dask.distributed.Client, optional
        The cluster to run on (default: Dask's current scheduler, a client's if one was started).
    npartitions : int, optional
        Partitions of the shuffle by document (default: the inputs' partitions added up).
    keep_documents : bool
        Keep the per-document table (for :attr:`~cophe_core.scale.pipeline.StreamedEvaluation.documents` and the
        bootstrap).

    Returns
    -------
    StreamedEvaluation
        Its ``rejected`` rows quote the partition (``gold (partition 3)``) and the row number in it.

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
    dd = dask.dataframe
    frames = [_frame(dd, source) for source in (gold, pred)]
    names = [_name(source, default) for source, default in ((gold, "gold"), (pred, "pred"))]
    if names[0] == names[1]:
        names = [f"{names[0]} (gold standard)", f"{names[1]} (run pred)"]
    # pass 1: every partition through the readers; its distinct codes, code rows and rejected rows back
    normalised: list[Any] = []
    files: list[str] = []
    sides: list[int] = []
    for side, (frame, name) in enumerate(zip(frames, names)):
        parts = frame.to_delayed()
        for i, part in enumerate(parts):
            file = name if len(parts) == 1 else f"{name} (partition {i})"
            normalised.append(dask.delayed(_normalise)(part, side, len(files), file, doc_col, code_col))
            files.append(file)
            sides.append(side)
    summaries = _compute(dask, client, [dask.delayed(_summary)(n) for n in normalised])
    codes = sorted({str(c) for s in summaries for c in s[0]})
    onto, detection = choose_ontology(ontology, codes)
    max_level = onto.top_level(max_level)
    side_codes = [[c for s, i in zip(summaries, sides) if i == side for c in s[0]] for side in (0, 1)]
    tables = resolve_tables(side_codes, onto, system=system)  # each side read on its own evidence
    read_rejected = _concat_rows([s[2] for s in summaries])
    _check_scorable(tables, summaries, sides, files, names, system)
    # pass 2: both sides in one frame shuffled on the document, each partition counted, a tree of sums
    rows = dd.from_delayed([dask.delayed(getitem)(n, 0) for n in normalised], meta=_meta(), verify_meta=False)
    shuffled = rows.shuffle(on="doc_id", npartitions=npartitions or len(files))
    shared = (
        client.scatter(tables, broadcast=True, hash=False)
        if client is not None
        else dask.delayed(tables, name=f"cophe-code-table-{uuid.uuid4().hex}", traverse=False)
    )
    counted = [
        dask.delayed(_combine)(dask.delayed(_count)(p, shared, files, max_level, keep_documents))
        for p in shuffled.to_delayed()
    ]
    while len(counted) > 1:  # a tree of sums, eight at a time, as dask.bag's reductions build it
        counted = [
            dask.delayed(_combine)(counted[i : i + _SPLIT_EVERY])
            for i in range(0, len(counted), _SPLIT_EVERY)
        ]
    (found,) = _compute(dask, client, counted)
    if found is None:  # no rows at all (a gold standard without codes stopped above): nothing to count
        found = count_partition(pd.DataFrame(_meta()), pd.DataFrame(_meta()), tables, max_level=max_level)
    return StreamedEvaluation.of(
        found,
        tables[0].ontology,
        max_level,
        names=names,
        files=files,
        read_rejected=read_rejected,
        notes=[w for s in summaries for w in s[3]],
        detection=detection,
        keep_documents=keep_documents,
    )


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
    text = pyarrow.schema([(key, pyarrow.string()) for key in keys])
    return dd.read_parquet(path, dataset={"partitioning": {"flavor": "hive", "schema": text}})


def _name(source: Any, default: str) -> str:
    return os.fspath(source) if isinstance(source, str | os.PathLike) else default


def _meta() -> pd.DataFrame:
    return pd.DataFrame({k: pd.Series(dtype=v) for k, v in _ROWS.items()})


def _no_rows() -> pd.DataFrame:
    return pd.DataFrame(columns=REJECTED_COLUMNS)


def _concat_rows(frames: list[pd.DataFrame]) -> pd.DataFrame:
    full = [f for f in frames if len(f)]
    return pd.concat(full, ignore_index=True) if full else _no_rows()


def _compute(dask: Any, client: Any, objs: list[Any]) -> list[Any]:
    if client is not None:
        return list(client.gather(client.compute(objs)))
    return list(dask.compute(*objs))


def _check_scorable(
    tables: tuple[CodeTable, ...],
    summaries: list[tuple[np.ndarray, int, pd.DataFrame, list[str]]],
    sides: list[int],
    files: list[str],
    names: list[str],
    system: str,
) -> None:
    """As the streamed path checks each source: a side none of whose rows can be scored is a
    :class:`~cophe_core.scoring.labels.NothingScorable` naming it, and so is a gold standard without a code."""
    for side, (name, table) in enumerate(zip(names, tables)):
        mine = [i for i, s in enumerate(sides) if s == side]
        at = [table.index.get_indexer(summaries[i][0]) for i in mine]
        if any((table.nodes[a] >= 0).any() for a in at if len(a)):
            continue
        read_bad = _concat_rows([summaries[i][2] for i in mine])
        n_rows = sum(summaries[i][1] for i in mine) + len(read_bad)
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
        codes = [rejected_codes(table, files[i], a) for i, a in zip(mine, at)]
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
    the partition) counted together by :func:`~cophe_core.scoring.kernel.count_partition`, yielded as plain rows of
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
    rows = pd.concat(frames, ignore_index=True)
    gold = rows["side"].to_numpy() == 0
    columns = [c for c in rows.columns if c != "side"]
    part = count_partition(
        rows.loc[gold, columns].reset_index(drop=True),
        rows.loc[~gold, columns].reset_index(drop=True),
        table,
        max_level=max_level,
        documents=keep_documents,
    )
    yield _counted_rows(part)


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
