"""The counting kernel: the code tables and the counts of one partition of the documents, shared by the
streamed path (:mod:`cophe_core.scale.pipeline`, on its spilled buckets) and the Dask and Spark paths
(:mod:`cophe_core.scale.cluster`, on co-partitioned frames).

**Distributed counting.** :func:`count_partition` needs no state but its arguments, and its arguments and
result pickle. To count under Dask or Spark: collect the distinct codes (``unique()`` of both code
columns), resolve them once with :func:`resolve_table` on the driver, partition gold and predictions by a
hash of the document id (so that a document's rows share a partition), apply ``count_partition`` to each
pair of partitions, and :meth:`PartitionCounts.combine` the results.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from functools import cached_property

import numpy as np
import pandas as pd
import scipy.sparse as sp

from ..inputs.readers import REJECTED_COLUMNS
from ..metrics import Evaluation, NodeCounts, evaluate
from ..ontology import Ontology, system_of, systems
from ..ontology.base import Placement
from .labels import NothingScorable
from .suite import Frequencies, document_sums, per_document, sum_frequencies

__all__ = [
    "CodeTable",
    "PartitionCounts",
    "Tables",
    "IdCounts",
    "count_ids",
    "count_partition",
    "count_rows",
    "document_columns",
    "nothing_scorable",
    "rejected_codes",
    "resolve_table",
    "resolve_tables",
    "suite_partition",
]


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
        Per code: why it is rejected (``""`` when it is not) and the :class:`~cophe_core.base.files.Reason`;
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
    :func:`cophe_core.scoring.labels.encode` places an input's codes: the same node ids, the same extension for
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
    :func:`cophe_core.scoring.labels.encode` places them: each input's codes read on its own evidence (an undotted
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
            concat_rows([p.documents for p in parts]),
            concat_rows([p.rejected for p in parts]),
            concat_rows([p.flagged for p in parts]),
            (sum(p.duplicates[0] for p in parts), sum(p.duplicates[1] for p in parts)),
            sum(p.only_gold for p in parts),
            sum(p.only_pred for p in parts),
            scored,
            None if len(known) < len(parts) else sum_frequencies(known),
        )


def concat_rows(frames: list[pd.DataFrame]) -> pd.DataFrame:
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
        (:func:`cophe_core.inputs.readers.read_frame`).
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
        Also count the partition's :class:`~cophe_core.scoring.suite.Frequencies` (the first pass of the ICM paper's
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
        concat_rows([g.rejected, p.rejected]),
        concat_rows([g.flagged, p.flagged]),
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


# ------------------------------------------------------------------ counting integer rows


@dataclass(frozen=True, eq=False)
class IdCounts:
    """What :func:`count_ids` counts: the per-node counts, the per-document table as a block of numbers
    (documents × :attr:`columns`, rows in the order of the document ids; None when not asked for), and the
    repeated (document, node) rows collapsed on each side."""

    counts: NodeCounts
    documents: np.ndarray | None
    columns: list[str]
    duplicates: tuple[int, int]


def document_columns(levels: Sequence[str]) -> list[str]:
    """The columns of the per-document table (:attr:`cophe_core.metrics.Evaluation.documents`, ``doc_id``
    left out) for the evaluated ``levels``.

    >>> document_columns(["e0"])
    ['n_gold', 'n_predicted', 'flat_tp', 'flat_fp', 'flat_fn', 'e0_tp', 'e0_fp', 'e0_fn', 'e0_set_tp', 'e0_set_fp', 'e0_set_fn']
    """
    out = ["n_gold", "n_predicted", "flat_tp", "flat_fp", "flat_fn"]
    for name in levels:
        out += [f"{name}_{c}" for c in ("tp", "fp", "fn", "set_tp", "set_fp", "set_fn")]
    return out


def count_ids(
    gold: tuple[np.ndarray, np.ndarray],
    pred: tuple[np.ndarray, np.ndarray],
    n_docs: int,
    ontology: Ontology,
    *,
    max_level: str | None = None,
    documents: bool = True,
) -> IdCounts:
    """The counts of :func:`cophe_core.metrics.evaluate` from integer rows: each side's scored rows as
    (document number in ``range(n_docs)``, node id) arrays, repeated rows collapsed, on a tree ontology
    (:func:`count_rows` of both sides' rows).

    >>> from cophe_core.ontology import icd9_ontology
    >>> o = icd9_ontology()
    >>> gold = (np.array([0, 0]), np.array([o.codes["401.9"], o.codes["428.0"]]))
    >>> pred = (np.array([0]), np.array([o.codes["401.1"]]))
    >>> got = count_ids(gold, pred, 1, o)
    >>> dict(zip(got.columns, got.documents[0].tolist()))["e0_tp"], int(got.counts.tp[o.codes["401"]])
    (1, 1)
    """
    return count_rows(
        np.concatenate([gold[0], pred[0]]),
        np.concatenate([gold[1], pred[1]]),
        np.arange(len(gold[0]) + len(pred[0])) >= len(gold[0]),
        n_docs,
        ontology,
        max_level=max_level,
        documents=documents,
    )


def count_rows(
    doc: np.ndarray,
    node: np.ndarray,
    pred: np.ndarray,
    n_docs: int,
    ontology: Ontology,
    *,
    max_level: str | None = None,
    documents: bool = True,
) -> IdCounts:
    """The counts of :func:`cophe_core.metrics.evaluate` from the rows of both sides: each row's document
    (a number in ``range(n_docs)``), node (-1: not scored, left out) and side (``pred``: True for a predicted
    row). Repeated rows are collapsed; the ontology is a tree.

    The same figures as the label matrices times the ancestor closure, by one sort instead of sparse
    products. The nodes present are ranked in depth-first order (sorted by their ancestors from the top
    level down), so that once the rows are sorted by (document, rank, side), the rows of a document below
    any node at any level are contiguous. The distinct (document, node) pairs are the finest groups; each
    level's x (predicted) and y (gold) per (document, ancestor) are sums over runs of the previous level's
    groups (a coarser level's groups are unions of a finer one's), so each level reads fewer groups than the
    last, with no Python object per row.

    >>> from cophe_core.ontology import icd9_ontology
    >>> o = icd9_ontology()
    >>> nodes = np.array([o.codes["401.9"], o.codes["401.1"], -1])
    >>> got = count_rows(np.array([0, 0, 1]), nodes, np.array([False, True, True]), 2, o)
    >>> int(got.counts.tp[o.codes["401"]]), int(got.counts.fp[o.codes["401.1"]]), got.documents.shape[0]
    (1, 1, 2)
    """
    if ontology.is_dag:
        raise ValueError("count_rows counts on a tree; count a DAG with evaluate()")
    nlev = len(ontology.levels_up_to(ontology.top_level(max_level)))
    n = ontology.n_nodes
    scored = node >= 0
    if not scored.all():
        doc, node, pred = doc[scored], node[scored], pred[scored]
    present = np.flatnonzero(np.bincount(node, minlength=n))
    ranked = present[np.lexsort(ontology.ancestors[present].T)]  # depth-first: top level's ancestor first
    keys, shift = _sort_keys(doc, node, pred, ranked, n_docs, n)
    first = np.ones(len(keys), dtype=bool)
    np.not_equal(keys[1:], keys[:-1], out=first[1:])
    pred_dups = int(np.count_nonzero(np.bitwise_and(keys[~first], 1)))
    duplicates = (int(len(keys) - np.count_nonzero(first)) - pred_dups, pred_dups)
    if len(keys) >= 1 << 31:  # x and y are packed in 32 bits each (_PACKED)
        raise ValueError("count_rows counts fewer than 2**31 rows at a time: split the documents")
    units = _units(keys[first], shift)
    rank = np.bitwise_and(units.key, units.rank_mask).astype(np.intp)
    per_rank = np.bincount(rank * 3 + units.cls, minlength=3 * len(ranked)).reshape(-1, 3)
    flat = np.zeros((n, 3), dtype=per_rank.dtype)  # per node: a rank is one node
    flat[ranked] = per_rank
    ftp = flat[:, 2]
    fgold, fpred = flat[:, 0] + ftp, flat[:, 1] + ftp
    per_doc: list[np.ndarray] = []
    if documents:
        by_doc = np.bincount(units.doc * 3 + units.cls, minlength=3 * n_docs).reshape(n_docs, 3)
        d_ftp = by_doc[:, 2]
        n_gold, n_pred = by_doc[:, 0] + d_ftp, by_doc[:, 1] + d_ftp
        per_doc = [n_gold, n_pred, d_ftp, n_pred - d_ftp, n_gold - d_ftp]
    by_rank = (per_rank[:, 1] + per_rank[:, 2], per_rank[:, 0] + per_rank[:, 2])  # predicted rows, gold rows
    anc = np.ascontiguousarray(ontology.ancestors[ranked][:, :nlev].T)  # per level, each rank's ancestor
    sums = {k: np.zeros(n, dtype=np.int64) for k in _NODE_SUMS}
    groups = _Groups(units.key, None)
    for level in range(nlev):
        has = anc[level] >= 0  # each side's rows summed per node from the counts per rank: Σx and Σy
        sums["x"] += np.bincount(anc[level][has], weights=by_rank[0][has], minlength=n).astype(np.int64)
        sums["y"] += np.bincount(anc[level][has], weights=by_rank[1][has], minlength=n).astype(np.int64)
        if level == 0 and np.all((anc[0] < 0) | (anc[0] == ranked)):
            # the finest level's groups are the units themselves (no node of the level below another): counted
            # from each unit's class, x and y 0 or 1
            per_doc += _count_units(units, rank, anc[0], flat, sums, documents, n_docs)
            continue
        groups, runs = _merge_level(groups, units, anc[level], last=level == nlev - 1)
        per_doc += _count_level(runs, units.rank_bits, n, n_docs, sums, documents)
    counts = NodeCounts(
        gold=sums["y"],
        predicted=sums["x"],
        tp=sums["tp"],
        fp=sums["x"] - sums["tp"],
        fn=sums["y"] - sums["tp"],
        set_tp=sums["both"],
        set_fp=sums["sx"] - sums["both"],
        set_fn=sums["sy"] - sums["both"],
        flat_tp=ftp.astype(np.int64),
        flat_fp=(fpred - ftp).astype(np.int64),
        flat_fn=(fgold - ftp).astype(np.int64),
        docs_over=sums["over"],
        docs_under=sums["under"],
        shared_gold=sums["y"] - sums["y_alone"],
        shared_predicted=sums["x"] - sums["x_alone"],
    )
    block = None
    if documents:
        block = np.column_stack(per_doc).astype(np.int64) if per_doc else np.zeros((n_docs, 0), np.int64)
    return IdCounts(counts, block, document_columns(ontology.levels[:nlev]), duplicates)


def _sort_keys(
    doc: np.ndarray, node: np.ndarray, pred: np.ndarray, ranked: np.ndarray, n_docs: int, n: int
) -> tuple[np.ndarray, int]:
    """One sort key per row, sorted: document, depth-first rank and side in bit fields, 32 bits when they fit
    (numpy sorts them faster); and the document's shift."""
    shift = max(len(ranked) - 1, 1).bit_length() + 1
    dtype = np.uint32 if max(n_docs, 1) << shift <= 1 << 32 else np.int64
    rank_of = np.zeros(n, dtype=dtype)
    rank_of[ranked] = np.arange(len(ranked)) * 2
    keys = np.left_shift(doc.astype(dtype), shift, dtype=dtype)
    np.bitwise_or(keys, rank_of[node], out=keys)
    np.bitwise_or(keys, pred.astype(dtype), out=keys)
    n_gold = len(pred) - int(np.count_nonzero(pred))
    if not pred[:n_gold].any():  # the gold rows first (as the spill and count_ids give them): each side's
        # rows sorted by the sort that suits their order, then the two runs merged (a stable sort's merge)
        for part in (slice(0, n_gold), slice(n_gold, None)):
            keys[part].sort(kind="stable" if _mostly_ascending(doc[part]) else "quicksort")
        keys.sort(kind="stable")
    else:
        keys.sort(kind="stable" if _mostly_ascending(doc) else "quicksort")
    return keys, shift


def _mostly_ascending(values: np.ndarray) -> bool:
    """Whether ``values`` fall in few ascending runs (fewer than one descent in 128 values): files list a
    document's rows together, so a side's rows in a bucket come in document order, where numpy's stable
    sort (a merge of runs) sorts keys 2-3x faster than its quicksort; in any other order it is slower.

    >>> two_runs = np.concatenate([np.arange(200), np.arange(100)])  # one descent in 300 values
    >>> _mostly_ascending(two_runs), _mostly_ascending(two_runs[::-1])
    (True, False)
    """
    descents = np.count_nonzero(values[1:] < values[:-1])
    return bool(descents * 128 < max(len(values), 1))


@dataclass(frozen=True)
class _Units:
    """The distinct (document, node) pairs of the sorted rows, in (document, depth-first rank) order: each
    one's key (``document << rank_bits | rank``) and class (0: gold only, 1: predicted only, 2: both), and
    the cumulative sums of their counts packed as ``x + (y << 32)`` (x predicted, y gold; one entry more than
    the units, from 0), so that the counts of any run of units are one difference."""

    key: np.ndarray
    cls: np.ndarray
    cum: np.ndarray
    rank_bits: int

    @property
    def rank_mask(self) -> np.generic:
        """The low bits of a key that hold the rank, in the keys' type."""
        mask: np.generic = self.key.dtype.type((1 << self.rank_bits) - 1)
        return mask

    @property
    def doc(self) -> np.ndarray:
        """Each unit's document."""
        doc: np.ndarray = np.right_shift(self.key, self.rank_bits).astype(np.intp)
        return doc


@dataclass(frozen=True)
class _Groups:
    """A level's groups of units, in order: each one's key (that of its first unit) and where its units end
    (``edges``: group k holds units ``edges[k]:edges[k + 1]``; None while each group is one unit)."""

    key: np.ndarray
    edges: np.ndarray | None


@dataclass(frozen=True)
class _Runs:
    """A level's (document, node) groups with an ancestor at the level: that node, the packed counts, and the
    group's key (its document in the high bits)."""

    node: np.ndarray
    xy: np.ndarray
    key: np.ndarray


_LOW = np.int64(0xFFFFFFFF)
_PACKED = np.array([1 << 32, 1, 1 + (1 << 32)], dtype=np.int64)  # x + (y << 32) of each class


def _units(keys: np.ndarray, shift: int) -> _Units:
    """The distinct sorted keys (document, rank, side) as one unit per (document, node)."""
    pair = np.right_shift(keys, 1)
    start = np.ones(len(pair) + 1, dtype=bool)  # and one past the end
    np.not_equal(pair[1:], pair[:-1], out=start[1:-1])
    at = np.flatnonzero(start[:-1])
    cls = np.bitwise_and(keys[at], 1).astype(np.intp)
    # both sides have the pair when the next key has it too (the gold row sorted first: class 0 + 2)
    cls += 2 * ~start[at + 1]
    cum = np.zeros(len(at) + 1, dtype=np.int64)
    np.cumsum(_PACKED[cls], out=cum[1:])
    return _Units(pair[at], cls, cum, shift - 1)


def _back(anc: np.ndarray, dtype: np.dtype) -> np.ndarray:
    """Per rank, how far it is from the first rank under its ancestor ``anc`` (ranks under one ancestor are
    consecutive, depth-first), 0 without an ancestor: a key minus this is the same for every unit of one
    document under one ancestor."""
    idx = np.arange(len(anc))
    new = np.ones(len(anc), dtype=bool)
    np.not_equal(anc[1:], anc[:-1], out=new[1:])
    first = np.maximum.accumulate(np.where(new, idx, 0))
    return np.where(anc >= 0, idx - first, 0).astype(dtype)


def _merge_level(groups: _Groups, units: _Units, anc: np.ndarray, *, last: bool) -> tuple[_Groups, _Runs]:
    """One level's groups: consecutive groups of one document under one ancestor at the level merged (their
    x and y summed); a group without an ancestor there (a node above the level) stays alone. Returns every
    group (the next, coarser level merges them further: its groups are unions of these) and the runs, the
    groups with an ancestor at the level."""
    rank = np.bitwise_and(groups.key, units.rank_mask)
    level_key = groups.key - _back(anc, groups.key.dtype)[rank]
    start = np.ones(len(level_key), dtype=bool)
    np.not_equal(level_key[1:], level_key[:-1], out=start[1:])
    at = np.flatnonzero(start)
    ends = np.append(at, len(level_key))
    edges = ends if groups.edges is None else groups.edges[ends]
    xy = np.diff(units.cum[edges])
    node = anc[rank[at]]
    key = groups.key[at]
    keep = node >= 0
    runs = _Runs(node, xy, key) if keep.all() else _Runs(node[keep], xy[keep], key[keep])
    return (groups if last else _Groups(key, edges)), runs


_NODE_SUMS = ("x", "y", "tp", "sx", "sy", "both", "over", "under", "x_alone", "y_alone")
# a run's state: 3 × (both sides have it) + sign(x − y) + 1 (x = y = 0 is never a run, so 1 never is)
_UNDER_ALONE, _OVER_ALONE, _UNDER, _EQUAL, _OVER = 0, 2, 3, 4, 5


def _count_units(
    units: _Units,
    rank: np.ndarray,
    anc: np.ndarray,
    flat: np.ndarray,
    sums: dict[str, np.ndarray],
    documents: bool,
    n_docs: int,
) -> list[np.ndarray]:
    """The finest level when its groups are the units themselves (no node of the level lies under another
    of it), as :func:`_count_level` counts them: x and y are 0 or 1, so each node's sums are its units' counts
    per class (``flat``: gold only, predicted only, both) for the nodes of the level."""
    mine = np.zeros(len(flat), dtype=bool)
    mine[anc[anc >= 0]] = True
    gold, pred, both = (np.where(mine, flat[:, k], 0).astype(np.int64) for k in range(3))
    for name, value in (
        ("tp", both),
        ("sx", pred + both),
        ("sy", gold + both),
        ("both", both),
        ("over", pred),
        ("under", gold),
        ("x_alone", pred),
        ("y_alone", gold),
    ):
        sums[name] += value
    if not documents:
        return []
    at = anc[rank] >= 0
    by_doc = np.bincount(units.doc[at] * 3 + units.cls[at], minlength=3 * n_docs).reshape(n_docs, 3)
    gold, pred, both = (by_doc[:, k].astype(np.int64) for k in range(3))
    return [both, pred, gold, both, pred, gold]


def _segment_sums(values: np.ndarray, at: np.ndarray) -> np.ndarray:
    """Sums of ``values`` over the segments beginning at ``at`` (sorted, the first 0): differences of one
    cumulative sum (faster than ``np.add.reduceat``)."""
    total = np.zeros(len(values) + 1, dtype=np.int64)
    np.cumsum(values, out=total[1:])
    bounds = np.append(at, len(values))
    return np.diff(total[bounds])


_SUM_BITS = 26


def _state_sums(key: np.ndarray, weight: np.ndarray, size: int) -> tuple[np.ndarray, np.ndarray]:
    """How many ``key`` fall on each of ``size`` bins, and the sum of their ``weight`` (non-negative): in one
    pass when both fit in a float64's 53 exact bits (each weight plus ``1 << 26``, summed, then split: a bin's
    sum below 2**26, its count below 2**27), else in two.

    >>> count, total = _state_sums(np.array([0, 2, 2]), np.array([5, 1, 3], np.int32), 3)
    >>> count.tolist(), total.tolist()
    ([1, 0, 2], [5, 0, 4])
    """
    if len(key) < 1 << _SUM_BITS and int(weight.sum(dtype=np.int64)) < 1 << _SUM_BITS:
        packed = np.bincount(key, weights=weight + float(1 << _SUM_BITS), minlength=size).astype(np.int64)
        return np.right_shift(packed, _SUM_BITS), np.bitwise_and(packed, (1 << _SUM_BITS) - 1)
    count = np.bincount(key, minlength=size)
    return count, np.bincount(key, weights=weight, minlength=size).astype(np.int64)


def _count_level(
    runs: _Runs, rank_bits: int, n: int, n_docs: int, sums: dict[str, np.ndarray], documents: bool
) -> list[np.ndarray]:
    """One level of :func:`count_rows`: ``runs`` are the level's (document, node) groups in document order.
    Adds the per-node sums but Σx and Σy into ``sums``; returns the per-document
    columns (tp, fp, fn, set_tp, set_fp, set_fn) when ``documents``."""
    halves = runs.xy.view(np.int32).reshape(-1, 2)  # x in the low 32 bits, y in the high: views, no copies
    x, y = (halves[:, 0], halves[:, 1]) if np.little_endian else (halves[:, 1], halves[:, 0])
    both = (x > 0) & (y > 0)
    state = (x > y).view(np.int8) - (x < y).view(np.int8)
    state += 1 + 3 * both.view(np.int8)
    key = runs.node.astype(np.int64) * 6
    key += state
    # per (node, state) the runs and one weighted sum: min(x, y) where both sides have the node (tp), else
    # the side's rows
    weight = x + y  # where both: x + y - max(x, y) = min(x, y) (masked copies are several times slower)
    weight -= np.maximum(x, y) * both
    by_state, summed = _state_sums(key, weight, n * 6)
    by_state, summed = by_state.reshape(n, 6).T, summed.reshape(n, 6).T
    shared = by_state[_UNDER] + by_state[_EQUAL] + by_state[_OVER]
    for name, value in (
        ("tp", summed[_UNDER] + summed[_EQUAL] + summed[_OVER]),
        ("sx", by_state[_OVER_ALONE] + shared),
        ("sy", by_state[_UNDER_ALONE] + shared),
        ("both", shared),
        ("over", by_state[_OVER_ALONE] + by_state[_OVER]),
        ("under", by_state[_UNDER_ALONE] + by_state[_UNDER]),
        ("x_alone", summed[_OVER_ALONE]),
        ("y_alone", summed[_UNDER_ALONE]),
    ):
        sums[name] += value
    if not documents:
        return []
    # runs come in document order: each document's sums are differences of cumulative sums over its runs
    doc = np.right_shift(runs.key, rank_bits)
    begins = np.ones(len(doc), dtype=bool)
    np.not_equal(doc[1:], doc[:-1], out=begins[1:])
    at = np.flatnonzero(begins)
    here = doc[at]
    columns = []
    for values in (np.minimum(x, y), runs.xy, both, y == 0):  # tp; x and y packed; set_tp; predicted only
        column = np.zeros(n_docs, dtype=np.int64)
        column[here] = _segment_sums(values, at)
        columns.append(column)
    m, packed, bm, pred_only = columns
    dx, dy = np.bitwise_and(packed, _LOW), np.right_shift(packed, 32)
    runs_per_doc = np.zeros(n_docs, dtype=np.int64)
    runs_per_doc[here] = np.diff(np.append(at, len(doc)))
    return [m, dx - m, dy - m, bm, pred_only, runs_per_doc - bm - pred_only]


def suite_partition(
    gold: pd.DataFrame,
    pred: pd.DataFrame,
    codes: Tables,
    frequencies: Frequencies,
    *,
    max_level: str | None = None,
) -> dict[str, float]:
    """The second pass of the ICM paper's metrics on one partition of the documents: the
    :func:`cophe_core.scoring.suite.document_sums` of its documents, scored with the ``frequencies`` of the whole
    gold standard (the first pass: :attr:`PartitionCounts.frequencies` summed). Like :func:`count_partition`,
    a pure function of its arguments, for any engine; the sums of all partitions add up, and
    :func:`cophe_core.scoring.suite.suite_of_sums` makes the suite of them.

    >>> from cophe_core.ontology import load_ontology
    >>> from cophe_core.scoring.suite import suite_of_sums
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
    the codes once told which (MIMIC's undotted ``4019``), as :func:`cophe_core.scoring.labels.encode` does.

    >>> from cophe_core.base.files import Reason
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
