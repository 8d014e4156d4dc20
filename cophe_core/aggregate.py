"""The aggregate analysis: the counts of an evaluation too large to upload, in one file the dashboard opens.

A saved analysis (:mod:`cophe_core.analysis`) holds the inputs; an evaluation of 10⁸ label rows, scored
streamed (:func:`cophe_core.stream.score_dataset`) or on Dask (:func:`cophe_core.cluster.score_dask`), has
inputs of gigabytes. What the dashboard's views read of it is much smaller, and every figure of them is a
function of it (:class:`~cophe_core.stream.CountedFigures`):

- per run, the **per-node counts** (:class:`~cophe_core.metrics.NodeCounts`): the levels, per-code, per-family
  and macro tables, the code-family tree and the ranked offenders;
- per run and code-frequency slice, the counts of the slice's codes alone (the slices by code);
- per run, the **per-document table** (documents × levels × TP/FP/FN): the bootstrap intervals and the
  paired comparisons, read only when a view asks for them;
- the **ontology** as scored (code system, nodes, titles, the unlisted codes placed) and its code-set
  releases, so that the file shows the same codes and titles wherever it is opened;
- the rows not scored, the warnings, the settings and the sources' names.

The documents' own codes are not in it: the views that need them (one document, thresholds, metrics of
the ICM suite, slices by document details) are not available for an aggregate file.

The file is the saved analysis's zip (``.cophe``) with ``"kind": "aggregate"`` and format version 2 in
``manifest.json``, and Parquet members (``docs/analysis-format.md``). Opening it checks it like any upload
(:func:`read_aggregate`): the zip's bounds and paths, each member's size and SHA-256, the tables' columns
and types, node ids in range, counts whole and not negative; never a pickle.

Examples
--------
>>> from cophe_core import score_files
>>> s = score_files(b"doc_id,code\\n1,401.9\\n2,428.0\\n", {"A": b"doc_id,code\\n1,401.1\\n2,428.0\\n"})
>>> agg = aggregate_of({"A": s.evaluation("A")}, slice_edges=(1,))
>>> back = read_aggregate(write_aggregate(agg), name="counts.cophe")
>>> back.run_names, back.evaluation("A").score("cophe", "e0").f1, back.n_documents
(['A'], 1.0, 2)
"""

from __future__ import annotations

import dataclasses
import hashlib
import io
import json
import os
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field, fields
from datetime import UTC, datetime
from functools import cached_property
from pathlib import Path
from types import MappingProxyType
from typing import TYPE_CHECKING, Any, ClassVar, TypeGuard

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq

from .api import NotScored
from .archive import Archive, open_archive, show, write_zip, zip_member
from .files import MB, InputError
from .manifest import AGGREGATE, MAX_NAME, MAX_RUNS, check_manifest
from .metrics import Figures, NodeCounts
from .ontology import Ontology
from .readers import REJECTED_COLUMNS
from .slices import Slice, code_frequency_slices, counted_frequency
from .stream import CountedFigures

if TYPE_CHECKING:
    from .api import Scoring

__all__ = [
    "Aggregate",
    "AggregateEvaluation",
    "aggregate_of",
    "aggregate_scoring",
    "counts_only",
    "write_aggregate",
    "read_aggregate",
    "is_aggregate",
    "KIND",
    "FORMAT_VERSION",
    "MAX_RUNS",
]

FORMAT = "cophe-analysis"
KIND = "aggregate"
FORMAT_VERSION = 2
MAX_MEMBERS = 2 * MAX_RUNS + 8
MAX_BYTES = 4 * 2**30  # inflated bytes read from one file (the members are stored, so about its size)
# A Parquet member is decoded only when what it decodes to is in proportion to what it stores: at most
# MAX_EXPANSION times its stored bytes (and never refused below TABLE_FLOOR). cophe's own tables decode to
# a few times their size (zstd on small counts); a 1.2 MB member that decoded to 1 GiB, or a 0.5 MB one whose
# run-length encoding declared 20 million rows (2.9 GB), did so 800 and 5,000 times over. The decoded size is
# known before decoding: rows × width for numbers (from the footer), the dictionary's lengths for text.
MAX_EXPANSION = 64
TABLE_FLOOR = 16 * 2**20
MAX_ROWS_NOT_SCORED = 10_000_000  # rejected or flagged rows listed, per file
MAX_MANIFEST = MB
MAX_WARNINGS = 200  # warnings kept per run, each cut to MAX_WARNING characters
MAX_WARNING = 1000
COUNT_FIELDS = [f.name for f in fields(NodeCounts)]
# the counts that may be missing (None: not counted), written as -1
OPTIONAL_FIELDS = frozenset(f.name for f in fields(NodeCounts) if f.default is None)
WHOLE = ""  # the slice key of the counts of every code
# the column of a run's per-document table marking its own documents among the file's (absent: all of them)
EVALUATED = "evaluated"
README = """This is a cophe aggregate analysis (cophe: hierarchical evaluation of clinical coding). Open it in
the cophe dashboard (Source: Open a saved analysis). It holds counts, not documents' codes: per-node counts per
run, per-document counts, the ontology with its titles, the rows not scored and the settings. The document ids
are in it. The format is described in docs/analysis-format.md.
"""


# ------------------------------------------------------------------ the evaluation of an aggregate


@dataclass(frozen=True, eq=False)
class AggregateEvaluation(CountedFigures):
    """One run of an aggregate analysis up to one level, on every code or on a code slice: the figures of
    :class:`~cophe_core.metrics.Evaluation` from its counts. The per-document table (:attr:`docs`,
    :attr:`document_values`) is read from the file the first time a figure needs it; a slice has none.

    >>> from cophe_core import score_files
    >>> s = score_files(b"doc_id,code\\n1,401.9\\n", {"A": b"doc_id,code\\n1,401.1\\n"})
    >>> ev = read_aggregate(write_aggregate(aggregate_of({"A": s.evaluation("A")}))).evaluation("A")
    >>> ev.score("flat").fn, ev.documents[["doc_id", "e0_tp"]].values.tolist()
    (1, [['1', 1]])
    """

    ontology: Ontology
    max_level: str
    node_counts: NodeCounts
    documents_counted: int
    rejected: pd.DataFrame
    flagged: pd.DataFrame
    warnings: list[str] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    detection: str | None = None
    load_documents: Callable[[], tuple[pd.Index, np.ndarray, list[str]]] | None = field(
        default=None, repr=False
    )
    why_no_documents: str = ""

    @cached_property
    def _documents(self) -> tuple[pd.Index, np.ndarray, list[str]]:
        if self.load_documents is None:
            raise ValueError(self.why_no_documents or "this aggregate analysis holds no per-document table")
        docs, values, columns = self.load_documents()
        keep = [i for i, c in enumerate(columns) if _column_level(c) in (None, *self.levels)]
        if len(keep) == len(columns):  # every level: the loader's block itself, not a copy
            return docs, values, columns
        return docs, values[:, keep], [columns[i] for i in keep]

    @cached_property
    def docs(self) -> pd.Index:
        """The evaluated documents, sorted (read from the file when first asked for)."""
        return self._documents[0]

    def document_block(self) -> tuple[np.ndarray | None, list[str]]:
        """The per-document table's values and columns, read from the file the first time."""
        return self._documents[1], self._documents[2]

    @property
    def has_documents(self) -> bool:
        """Whether the per-document table (intervals, paired comparisons) is available."""
        return self.load_documents is not None

    @property
    def n_documents(self) -> int:
        """The run's documents, from the file, without reading their ids."""
        return self.documents_counted


def _column_level(column: str) -> str | None:
    """The level of a per-document column (``e0_set_tp`` → ``e0``), None for the flat and size columns."""
    if column in ("n_gold", "n_predicted") or column.startswith("flat_"):
        return None
    for suffix in ("_set_tp", "_set_fp", "_set_fn", "_tp", "_fp", "_fn"):
        if column.endswith(suffix):
            return column[: -len(suffix)]
    return column


# ------------------------------------------------------------------ the aggregate


def counts_only(scoring: Scoring | Aggregate) -> TypeGuard[Aggregate]:
    """Whether ``scoring`` holds counts only, not each document's codes (:attr:`Aggregate.has_codes`): a
    capability, which also tells the type checker that it is an :class:`Aggregate`.

    >>> from cophe_core import score_files
    >>> s = score_files(b"doc_id,code\\n1,401.9\\n", {"A": b"doc_id,code\\n1,401.9\\n"})
    >>> counts_only(s), counts_only(aggregate_scoring(s))
    (False, True)
    """
    return not scoring.has_codes


@dataclass(frozen=True, eq=False)
class Aggregate:
    """What an aggregate analysis holds (see the module docs): made by :func:`aggregate_of` from evaluations,
    written by :func:`write_aggregate`, opened by :func:`read_aggregate`.

    Attributes
    ----------
    ontology : Ontology
        As scored: the unlisted codes of every run placed.
    counts : dict of str → NodeCounts
        Per run, in order, the per-node counts of every document.
    n_documents : int
        Documents of any run (the gold standard's and every run's together).
    max_level : str
        The highest level shown by default.
    slices : list of Slice
        The code-frequency slices counted (empty if none), masks over the ontology's nodes.
    slice_counts : dict of (run, slice key) → NodeCounts
    rejected, flagged : DataFrame
        Rows not scored and rows scored with a caveat, with a ``run`` column (the gold standard's rows appear
        under each run that read them).
    warnings : dict of str → list of str
        Per run, as its evaluation's.
    options, sources : dict
        The settings (ontology, system, max_level, chunk rows…) and, per run, its gold and prediction
        sources' names.
    created, cophe_version : str
    documents : callable, optional
        ``run`` → its own documents (sorted ids), its per-document table on them and the table's columns.
    run_documents : dict of str → int
        Per run, the documents it is evaluated on: the gold standard's and its own (default
        :attr:`n_documents`). A run's figures count these only, as in memory.
    """

    ontology: Ontology
    counts: dict[str, NodeCounts]
    n_documents: int
    max_level: str
    slices: list[Slice] = field(default_factory=list)
    slice_counts: dict[tuple[str, str], NodeCounts] = field(default_factory=dict)
    rejected: pd.DataFrame = field(default_factory=lambda: pd.DataFrame(columns=["run", *REJECTED_COLUMNS]))
    flagged: pd.DataFrame = field(default_factory=lambda: pd.DataFrame(columns=["run", *REJECTED_COLUMNS]))
    warnings: dict[str, list[str]] = field(default_factory=dict)
    notes: dict[str, list[str]] = field(default_factory=dict)
    options: dict[str, Any] = field(default_factory=dict)
    sources: dict[str, dict[str, str]] = field(default_factory=dict)
    created: str = ""
    cophe_version: str = ""
    documents: Callable[[str], tuple[pd.Index, np.ndarray, list[str]]] | None = field(
        default=None, repr=False
    )
    run_documents: dict[str, int] = field(default_factory=dict)

    # counts only, not each document's codes (see the module docs): what :class:`~cophe_core.api.Scoring` has
    has_codes: ClassVar[bool] = False
    detection: ClassVar[str | None] = None  # the ontology is the file's own
    # no run of scores, and no run left out: as a Scoring without them
    scored: ClassVar[Mapping[str, Any]] = MappingProxyType({})
    refused: ClassVar[Mapping[str, Any]] = MappingProxyType({})

    @property
    def run_names(self) -> list[str]:
        return list(self.counts)

    def not_scored(self) -> NotScored:
        """The rows not scored and scored with a caveat, and the notes, of every run (the gold standard's rows,
        listed under each run that read them, once)."""

        def once(rows: pd.DataFrame) -> pd.DataFrame:
            return (
                rows.drop(columns="run")
                .drop_duplicates(subset=["file", "line", "value"])
                .reset_index(drop=True)
            )

        notes = list(dict.fromkeys(n for run in self.run_names for n in self.notes.get(run, [])))
        return NotScored(once(self.rejected), once(self.flagged), notes)

    @property
    def code_sets(self) -> dict[str, str]:
        return dict(self.ontology.code_sets)

    @property
    def slice_edges(self) -> list[int] | None:
        """The edges of the code-frequency slices (``[10, 100]``), None without slices."""
        return _edges(self.slices)

    def slice_named(self, key: str) -> Slice:
        """The slice with this key (``KeyError`` naming the keys there are)."""
        for s in self.slices:
            if s.key == key:
                return s
        raise KeyError(f"no slice {key!r} in this aggregate analysis; it has {[s.key for s in self.slices]}")

    def evaluation(
        self, run: str, *, max_level: str | None = None, slice: Slice | None = None
    ) -> AggregateEvaluation:
        """The figures of ``run`` up to ``max_level`` (default :attr:`max_level`), on every code or on one of
        :attr:`slices` (then without the per-document table). Kept once made.

        >>> from cophe_core import score_files
        >>> s = score_files(b"doc_id,code\\n1,401.9\\n", {"A": b"doc_id,code\\n1,401.9\\n"})
        >>> agg = aggregate_of({"A": s.evaluation("A")})
        >>> agg.evaluation("A", max_level="e0").levels
        ['e2', 'e1', 'e0']
        """
        level = self.ontology.top_level(max_level, default=self.max_level)
        if run not in self.counts:
            raise KeyError(f"no run {run!r} in this aggregate analysis; it has {self.run_names}")
        key = (run, level, None if slice is None else slice.key)
        cache: dict[tuple[str, str, str | None], AggregateEvaluation] = self.__dict__.setdefault(
            "_evaluations", {}
        )
        if key not in cache:
            counts = _up_to(
                self.counts[run] if slice is None else self.slice_counts[(run, slice.key)],
                self.ontology,
                level,
            )
            loader = None
            if slice is None and self.documents is not None:
                documents = self.documents
                loader = lambda: documents(run)  # noqa: E731 - read when a figure first needs them
            mine = self.rejected.run == run
            cache[key] = AggregateEvaluation(
                self.ontology,
                level,
                counts,
                self.run_documents.get(run, self.n_documents),
                self.rejected[mine].drop(columns="run").reset_index(drop=True),
                self.flagged[self.flagged.run == run].drop(columns="run").reset_index(drop=True),
                list(self.warnings.get(run, [])),
                list(self.notes.get(run, [])),
                load_documents=loader,
                why_no_documents="a slice of an aggregate analysis has counts only, not its documents' table"
                if slice is not None
                else "this aggregate analysis was written without its per-document table",
            )
        return cache[key]

    def slice_scores(
        self, runs: Sequence[str] | None = None, *, max_level: str | None = None
    ) -> pd.DataFrame:
        """Each run's overall precision, recall and F1 of each measure on each of :attr:`slices`, as
        :func:`cophe_core.slices.slice_scores` gives them in memory, without intervals (``low`` and ``high``
        NaN): a slice's counts are summed over its documents, which are not kept one by one.

        >>> from cophe_core import score_files
        >>> s = score_files(b"doc_id,code\\n1,401.9\\n2,428.0\\n", {"A": b"doc_id,code\\n1,401.9\\n"})
        >>> t = aggregate_scoring(s, slice_edges=(5,)).slice_scores()
        >>> t[(t.measure == "flat") & (t.statistic == "recall")][["slice", "value", "gold_codes"]].values.tolist()
        [['Rare: fewer than 5 documents', 0.5, 2], ['Frequent: 5 documents or more', nan, 0]]
        """
        from .slices import SCORE_COLUMNS, slice_rows

        rows = []
        for s in self.slices:
            for run in runs or self.run_names:
                ev = self.evaluation(run, max_level=max_level, slice=s)
                c = ev.node_counts  # the slice's own counts: its flat counts hold its codes' labels
                n_gold, n_pred = int((c.flat_tp + c.flat_fn).sum()), int((c.flat_tp + c.flat_fp).sum())
                figures = {}
                for measure in ("flat", "set_based", "cophe"):
                    score = ev.score(measure, "overall")
                    name = "flat" if measure == "flat" else f"{measure} overall"
                    for stat in ("precision", "recall", "f1"):
                        figures[f"{name} {stat}"] = (float(getattr(score, stat)), np.nan, np.nan)
                n_docs = self.run_documents.get(run, self.n_documents)
                has = n_docs and (n_gold or n_pred)
                rows += slice_rows(run, s, n_docs, n_gold, n_pred, figures if has else None)
        return pd.DataFrame(rows, columns=SCORE_COLUMNS)


def _up_to(counts: NodeCounts, ontology: Ontology, level: str) -> NodeCounts:
    """The counts of the nodes up to ``level``; those above are 0, as an evaluation up to it counts them."""
    above = ontology.level[: counts.n_nodes] > ontology.level_index(level)
    if not above.any():
        return counts
    arrays: dict[str, Any] = {
        f: None if (a := getattr(counts, f)) is None else np.where(above, 0, a) for f in COUNT_FIELDS
    }
    return NodeCounts(**arrays)


def aggregate_of(
    evaluations: Mapping[str, Figures],
    *,
    max_level: str | None = None,
    slice_edges: Sequence[int] | None = (10, 100),
    options: Mapping[str, Any] | None = None,
    sources: Mapping[str, Mapping[str, str]] | None = None,
    documents: bool = True,
) -> Aggregate:
    """The aggregate of the evaluations of one gold standard's runs (in memory, streamed or on Dask), each
    evaluated up to the ontology's top level for the per-document table to hold every level.

    The runs' ontologies may differ by the unlisted codes each placed: each must be the same code set, and
    the later runs' ontologies extensions of the first's (as when each run is scored with the ontology the
    previous one returned, :func:`cophe_core.stream.score_dataset` with ``ontology=``); the counts of the
    earlier runs are padded with zeros for the nodes added later. Each run keeps its own documents (the gold
    standard's and its own, as in memory): a document only in another run's predictions is none of its
    figures, not even the number of documents.

    Code-frequency slices (``slice_edges``; None: none) are the gold standard's, counted per run: a streamed
    evaluation brings its own (``score_dataset(..., slice_edges=)``), an in-memory one is restricted here.

    >>> from cophe_core import score_files
    >>> s = score_files(b"doc_id,code\\n1,401.9\\n", {"A": b"doc_id,code\\n1,401.9\\n", "B": b"doc_id,code\\n"})
    >>> agg = aggregate_of({r: s.evaluation(r) for r in s.run_names}, slice_edges=(5,))
    >>> agg.run_names, [x.name for x in agg.slices], agg.n_documents
    (['A', 'B'], ['Rare: fewer than 5 documents', 'Frequent: 5 documents or more'], 1)
    """
    if not evaluations:
        raise ValueError("an aggregate analysis needs at least one run")
    if len(evaluations) > MAX_RUNS:
        raise ValueError(f"{len(evaluations)} runs; an aggregate analysis holds at most {MAX_RUNS}")
    evs = dict(evaluations)
    for run in evs:
        if not isinstance(run, str) or not run.strip() or len(run) > MAX_NAME:
            raise ValueError(f"every run needs a name of 1 to {MAX_NAME} characters, not {show(run)}")
    onto = _common_ontology([ev.ontology for ev in evs.values()])
    n = onto.n_nodes
    counts = {run: ev.node_counts.padded(n) for run, ev in evs.items()}
    level = onto.top_level(max_level, default=next(iter(evs.values())).max_level)
    slices: list[Slice] = []
    slice_counts: dict[tuple[str, str], NodeCounts] = {}
    if slice_edges is not None:
        slices = _frequency_slices(counts, slice_edges, n)
        for run, ev in evs.items():
            for s in slices:
                slice_counts[(run, s.key)] = _slice_counts(ev, s, n)
    tables = {run: _document_table(ev) for run, ev in evs.items()} if documents else None
    union = _union_docs(tables) if tables is not None else None
    return Aggregate(
        onto,
        counts,
        len(union) if union is not None else _n_union(evs),
        level,
        slices,
        slice_counts,
        _with_run({r: getattr(ev, "rejected", None) for r, ev in evs.items()}),
        _with_run({r: getattr(ev, "flagged", None) for r, ev in evs.items()}),
        {r: list(getattr(ev, "warnings", [])) for r, ev in evs.items()},
        {r: list(getattr(ev, "notes", [])) for r, ev in evs.items()},
        dict(options or {}),
        {r: dict(v) for r, v in (sources or {}).items()},
        datetime.now(UTC).isoformat(timespec="seconds"),
        _version(),
        None if tables is None else tables.__getitem__,
        {r: len(ev.docs) for r, ev in evs.items()},
    )


def aggregate_scoring(
    scoring: Scoring,
    *,
    max_level: str | None = None,
    slice_edges: Sequence[int] | None = (10, 100),
    options: Mapping[str, Any] | None = None,
    sources: Mapping[str, Mapping[str, str]] | None = None,
) -> Aggregate:
    """The aggregate of an in-memory scoring (:func:`cophe_core.api.score_files`): every run evaluated up
    to the top level, with the rows not scored and the warnings of its inputs.

    >>> from cophe_core import score_files
    >>> s = score_files(b"doc_id,code\\n1,401.9\\n1,XYZ\\n", {"A": b"doc_id,code\\n1,401.9\\n"})
    >>> agg = aggregate_scoring(s)
    >>> agg.max_level, agg.rejected[["run", "value"]].values.tolist()
    ('block', [['A', 'XYZ']])
    """
    onto = scoring.corpus.ontology
    top = onto.levels[-1]
    agg = aggregate_of(
        {run: scoring.evaluation(run, max_level=top) for run in scoring.run_names},
        max_level=onto.top_level(max_level),
        slice_edges=slice_edges,
        options=options,
        sources=sources,
    )
    c = scoring.corpus
    runs = scoring.run_names
    return dataclasses.replace(  # each run with its own inputs' rows and warnings and the gold standard's
        agg,
        rejected=_with_run({r: c.run_rejected(r) for r in runs}),
        flagged=_with_run({r: c.run_flagged(r) for r in runs}),
        warnings={r: c.run_warnings(r) for r in runs},
        notes={r: c.run_notes(r) for r in runs},
    )


def _frequency_slices(counts: dict[str, NodeCounts], edges: Sequence[int], n: int) -> list[Slice]:
    """The gold standard's code-frequency slices (the same in every run's counts: the first's are read) over
    the codes in play in any run: what the writer counts and the reader rebuilds from the counts."""
    frequency, _ = counted_frequency(next(iter(counts.values())))
    _, in_play = counted_frequency(sum(counts.values(), NodeCounts.zeros(n)))
    return code_frequency_slices(frequency, edges, in_play=in_play)


def _version() -> str:
    from . import __version__

    return __version__


def _common_ontology(ontologies: list[Ontology]) -> Ontology:
    """The largest of the runs' ontologies, checked to extend each of the others (same nodes, same ids)."""
    largest = max(ontologies, key=lambda o: o.n_nodes)
    for o in ontologies:
        n = o.n_nodes
        same = (
            o.levels == largest.levels
            and o.code_sets == largest.code_sets
            and np.array_equal(o.keys, largest.keys[:n])
            and np.array_equal(o.level, largest.level[:n])
            and np.array_equal(o.parent, largest.parent[:n])
        )
        if not same:
            raise ValueError(
                "the runs were scored against different ontologies; score each run with the ontology the "
                "previous run returned (ontology=previous.ontology), so that their nodes agree"
            )
    return largest


def _slice_counts(ev: Figures, s: Slice, n: int) -> NodeCounts:
    return ev.code_slice_counts(s.key, _resized(s, ev.ontology.n_nodes).mask).padded(n)


def _resized(s: Slice, n: int) -> Slice:
    """``s`` on the first ``n`` nodes (a run's own ontology, before later runs' unlisted codes)."""
    if len(s.mask) == n:
        return s
    return Slice(s.key, s.dimension, s.name, s.kind, s.mask[:n], s.size, s.note, s.members)


def _document_table(ev: Figures) -> tuple[pd.Index, np.ndarray, list[str]]:
    """A run's documents, and its per-document table as int32 (a streamed evaluation's own block, not copied)."""
    values, columns = ev.document_block()
    if values is None:
        raise ValueError("the streamed evaluation kept no per-document table: score with keep_documents=True")
    docs = pd.Index(ev.docs, dtype=object)
    if not docs.is_monotonic_increasing:  # a file's documents are sorted, each run's among them
        order = np.argsort(docs.to_numpy(dtype=str), kind="stable")
        docs, values = docs[order], values[order]
    return docs, values, list(columns)


def _n_union(evs: Mapping[str, Figures]) -> int:
    """The number of documents of any run (their ids are not kept without the per-document tables)."""
    return len(pd.Index([]).append([pd.Index(ev.docs, dtype=object) for ev in evs.values()]).unique())


def _union_docs(tables: Mapping[str, tuple[pd.Index, np.ndarray, list[str]]]) -> pd.Index:
    """The documents of every run, sorted; each run's tables must have the same columns."""
    first = next(iter(tables.values()))
    union, columns = first[0], first[2]
    for _, (own, _, cols) in tables.items():
        if cols != columns:
            raise ValueError(
                "the runs were evaluated up to different levels; evaluate every run up to the same level (the "
                "ontology's top level keeps every level)"
            )
        if not own.equals(union):
            union = union.union(own)
    if not union.is_monotonic_increasing:
        union = union.sort_values()
    return union


def _with_run(tables: dict[str, pd.DataFrame | None]) -> pd.DataFrame:
    frames = [t[REJECTED_COLUMNS].assign(run=run) for run, t in tables.items() if t is not None and len(t)]
    if not frames:
        return pd.DataFrame(columns=["run", *REJECTED_COLUMNS])
    out = pd.concat(frames, ignore_index=True)
    return out[["run", *REJECTED_COLUMNS]]


# ------------------------------------------------------------------ writing


def _parquet(table: pa.Table) -> bytes:
    sink = io.BytesIO()
    pq.write_table(table, sink, compression="zstd")
    return sink.getvalue()


def _text(values: Any, kind: pa.DataType | None = None) -> pa.Array:
    """Text values as an Arrow string array (from Python strings: pyarrow 14 converts no NumPy text array to
    large_string)."""
    return pa.array([str(v) for v in values], kind or pa.string())


def _smallest(values: np.ndarray) -> np.ndarray:
    """Counts in the smallest unsigned type that holds them (the file's size, not its meaning)."""
    top = int(values.max()) if values.size else 0
    for kind in (np.uint8, np.uint16, np.uint32):
        if top <= np.iinfo(kind).max:
            return values.astype(kind)
    return values.astype(np.int64)


def _ontology_tables(o: Ontology) -> dict[str, bytes]:
    systems = pa.array(
        [""] * o.n_nodes if o.systems is None else [str(x or "") for x in o.systems], pa.string()
    )
    nodes = {
        "key": _text(o.keys),
        "title": _text(o.titles),
        "level": pa.array(np.asarray(o.level, dtype=np.int16)),
        "parent": pa.array(np.asarray(o.parent, dtype=np.int32)),
        "listed": pa.array(np.asarray(o.listed, dtype=bool)),
    }
    nodes["system"] = systems
    codes = pa.table(
        {
            "code": pa.array(list(o.codes.keys()), pa.string()),
            "node": pa.array(np.fromiter(o.codes.values(), np.int32, len(o.codes))),
        }
    )
    child, parent = o.extra_edges if o.extra_edges is not None else (np.zeros(0), np.zeros(0))
    edges = pa.table(
        {"child": pa.array(np.asarray(child, np.int32)), "parent": pa.array(np.asarray(parent, np.int32))}
    )
    return {
        "ontology/nodes.parquet": _parquet(pa.table(nodes)),
        "ontology/codes.parquet": _parquet(codes),
        "ontology/edges.parquet": _parquet(edges),
    }


def _counts_table(agg: Aggregate) -> bytes:
    """Every run's and slice's per-node counts, long: ``run, slice, node`` and the count fields; nodes
    where every count is 0 are left out."""
    runs = agg.run_names
    frames = []
    keyed = [(run, WHOLE, c) for run, c in agg.counts.items()]
    keyed += [(run, key, c) for (run, key), c in agg.slice_counts.items()]
    slice_keys = [WHOLE, *(s.key for s in agg.slices)]
    for run, key, c in keyed:
        arrays = {f: getattr(c, f) for f in COUNT_FIELDS}
        present = {f: a for f, a in arrays.items() if a is not None}
        any_count = np.zeros(c.n_nodes, dtype=bool)
        for a in present.values():
            any_count |= a != 0
        at = np.flatnonzero(any_count)
        frame = {
            "run": np.full(len(at), runs.index(run), np.int16),
            "slice": np.full(len(at), slice_keys.index(key), np.int16),
            "node": at.astype(np.int32),
        }
        for f in COUNT_FIELDS:
            frame[f] = (
                arrays[f][at].astype(np.int64) if arrays[f] is not None else np.full(len(at), -1, np.int64)
            )
        frames.append(pd.DataFrame(frame))
    return _parquet(pa.Table.from_pandas(pd.concat(frames, ignore_index=True), preserve_index=False))


def _rows_table(rows: pd.DataFrame, runs: list[str]) -> bytes:
    def text(column: str) -> pa.Array:
        return pa.array([str(getattr(v, "value", v)) for v in rows[column]], pa.string())

    line = pd.array(rows["line"], dtype="Int64")
    table = pa.table(
        {
            "run": pa.array(pd.Categorical(rows["run"], categories=runs).codes.astype(np.int16)),
            "file": text("file"),
            "line": pa.array(
                line.to_numpy(dtype=np.int64, na_value=0), mask=np.asarray(line.isna(), dtype=bool)
            ),
            "value": text("value"),
            "reason": text("reason"),
            "kind": text("kind"),
        }
    )
    return _parquet(table)


def write_aggregate(agg: Aggregate, target: str | os.PathLike[str] | None = None) -> bytes | None:
    """The aggregate as a ``.cophe`` file (see the module docs): its bytes, or written to the path
    ``target`` and None. Parquet members are stored as they are (compressed already).

    >>> from cophe_core import score_files
    >>> s = score_files(b"doc_id,code\\n1,401.9\\n", {"A": b"doc_id,code\\n1,401.9\\n"})
    >>> data = write_aggregate(aggregate_of({"A": s.evaluation("A")}))
    >>> data[:2], is_aggregate(data)
    (b'PK', True)
    """
    runs = agg.run_names
    tables: dict[str, bytes] = {**_ontology_tables(agg.ontology), "counts.parquet": _counts_table(agg)}
    tables["rejected.parquet"] = _rows_table(agg.rejected, runs)
    tables["flagged.parquet"] = _rows_table(agg.flagged, runs)
    run_entries = []
    columns: list[str] = []
    if agg.documents is not None:
        own = {run: agg.documents(run) for run in runs}
        union = _union_docs(own)
        tables["documents/ids.parquet"] = _parquet(pa.table({"doc_id": _text(union, pa.large_string())}))
        for i, run in enumerate(runs):
            docs, values, columns = own[run]
            if not docs.equals(union):  # on every id of the file, the run's own documents marked
                placed = np.zeros((len(union), len(columns)), dtype=values.dtype)
                at = union.get_indexer(docs)
                placed[at] = values
                values = placed
            table = pa.table({c: _smallest(values[:, j]) for j, c in enumerate(columns)})
            if len(docs) != len(union):
                evaluated = np.zeros(len(union), dtype=bool)
                evaluated[at] = True
                table = table.append_column(EVALUATED, pa.array(evaluated))
            tables[f"documents/run-{i:02d}.parquet"] = _parquet(table)
    for i, run in enumerate(runs):
        run_entries.append(
            {
                "name": run,
                "documents": f"documents/run-{i:02d}.parquet" if agg.documents is not None else None,
                "n_documents": int(agg.run_documents.get(run, agg.n_documents)),
                "sources": agg.sources.get(run, {}),
                "warnings": [w[:MAX_WARNING] for w in agg.warnings.get(run, [])[:MAX_WARNINGS]],
                "notes": [w[:MAX_WARNING] for w in agg.notes.get(run, [])[:MAX_WARNINGS]],
            }
        )
    o = agg.ontology
    manifest = {
        "format": FORMAT,
        "format_version": FORMAT_VERSION,
        "kind": KIND,
        "cophe_version": agg.cophe_version,
        "created": agg.created,
        "options": {**agg.options, "max_level": agg.max_level},
        "code_sets": dict(o.code_sets),
        "ontology": {
            "name": o.name,
            "levels": list(o.levels),
            "default_max_level": o.default_max_level,
            "code_system": o.code_system,
            "nodes": int(o.n_nodes),
        },
        "documents": int(agg.n_documents),
        "document_columns": columns,
        "runs": run_entries,
        "slices": {
            "edges": agg.slice_edges,
            "keys": [s.key for s in agg.slices],
        },
        "members": {
            path: {"size": len(data), "sha256": hashlib.sha256(data).hexdigest()}
            for path, data in tables.items()
        },
    }
    text = json.dumps(manifest, indent=1, sort_keys=True, allow_nan=False).encode()
    if len(text) > MAX_MANIFEST:
        raise ValueError(f"the manifest would be larger than {MAX_MANIFEST // MB} MB: fewer warnings or runs")
    members = [zip_member("manifest.json", text), zip_member("README.txt", README.encode())]
    members += [zip_member(path, data, compress=False) for path, data in tables.items()]
    if target is None:
        return write_zip(members)
    part = f"{os.fspath(target)}.part"  # written whole, then renamed: a failure never leaves half a file
    try:
        with open(part, "wb") as f:
            write_zip(members, f)
        os.replace(part, target)
    finally:
        if os.path.exists(part):
            os.remove(part)
    return None


def _edges(slices: list[Slice]) -> list[int] | None:
    """The edges of code-frequency slices, from their key ``codes:freq:10,100:0``."""
    if not slices:
        return None
    return [int(e) for e in slices[0].key.split(":")[2].split(",")]


# ------------------------------------------------------------------ reading


def is_aggregate(data: bytes) -> bool:
    """Whether ``data`` is a zip whose manifest says it is an aggregate analysis (no other check).

    >>> is_aggregate(b"doc_id,code\\n")
    False
    """
    try:
        archive = open_archive(data, name="file", not_zip="", max_members=MAX_MEMBERS, max_bytes=MAX_BYTES)
        if (
            archive.members.get("manifest.json") is None
            or archive.members["manifest.json"].file_size > MAX_MANIFEST
        ):
            return False
        manifest = json.loads(archive.read("manifest.json"))
    except (InputError, ValueError, RecursionError):
        return False
    return isinstance(manifest, dict) and manifest.get("kind") == KIND


def read_aggregate(source: bytes | str | os.PathLike[str], *, name: str | None = None) -> Aggregate:
    """Open an aggregate analysis (bytes, or a path), checking it like any upload (see the module docs). The
    per-document tables are read, and checked, when a figure first needs them.

    Raises :class:`~cophe_core.files.InputError` naming the file and the member or field at fault.

    >>> read_aggregate(b"doc_id,code\\n", name="big.cophe")
    Traceback (most recent call last):
    cophe_core.files.InputError: big.cophe: not a cophe aggregate analysis (a zip with manifest.json); write one with `cophe aggregate`
    """
    if isinstance(source, bytes | bytearray | memoryview):
        data, label = bytes(source), name or "analysis.cophe"
    else:
        label = name or Path(source).name
        data = Path(source).read_bytes()
    archive = open_archive(
        data,
        name=label,
        not_zip=f"{label}: not a cophe aggregate analysis (a zip with manifest.json); write one with "
        "`cophe aggregate`",
        max_members=MAX_MEMBERS,
        max_bytes=MAX_BYTES,
    )
    return _Reader(archive, label).aggregate()


class _Reader:
    """Reads one opened archive, each problem an :class:`InputError` naming the file and what is at fault."""

    def __init__(self, archive: Archive, name: str):
        self.archive, self.name = archive, name

    def fail(self, what: str) -> InputError:
        return InputError(f"{self.name}: {what}")

    def manifest(self) -> dict[str, Any]:
        info = self.archive.members.get("manifest.json")
        if info is None:
            raise self.fail("no manifest.json; not a cophe analysis file")
        if info.file_size > MAX_MANIFEST:
            raise self.fail(f"manifest.json inflates to more than {MAX_MANIFEST:,} bytes")
        try:
            m = json.loads(self.archive.read("manifest.json"))
        except (ValueError, RecursionError):
            raise self.fail("manifest.json is not valid JSON") from None
        if not isinstance(m, dict) or m.get("format") != FORMAT:
            raise self.fail(f"manifest.json does not describe a cophe analysis (format {FORMAT!r})")
        version = m.get("format_version")
        if isinstance(version, bool) or not isinstance(version, int) or version < 1:
            raise self.fail(f"manifest.json: format_version must be a whole number, not {show(version)}")
        if version > FORMAT_VERSION:
            raise self.fail(
                f"format version {version}; this cophe opens version {FORMAT_VERSION} or older: update cophe"
            )
        if m.get("kind") != KIND:
            raise self.fail("a saved analysis of inputs, not an aggregate; open it as a saved analysis")
        # every option, count and value of the manifest as its schema allows (the field named otherwise)
        check_manifest(m, AGGREGATE, name=self.name)
        return m

    def field(self, m: dict[str, Any], key: str, kind: type | tuple[type, ...], what: str) -> Any:
        value = m.get(key)
        if not isinstance(value, kind) or isinstance(value, bool) and kind is not bool:
            raise self.fail(f"manifest.json: {key} must be {what}, not {show(value)}")
        return value

    def table(self, path: str, columns: Mapping[str, str], *, rows: int | range) -> pd.DataFrame:
        """:meth:`arrow_table` as a DataFrame (a forged pandas note in the footer refused, naming the member)."""
        table = self.arrow_table(path, columns, rows=rows)
        try:
            return table.to_pandas()
        except (KeyError, TypeError, ValueError) as e:  # the footer's pandas metadata is JSON pandas trusts
            raise self.fail(
                f"{path} is not a readable Parquet table ({type(e).__name__}); write the file again"
            ) from None

    def arrow_table(self, path: str, columns: Mapping[str, str], *, rows: int | range) -> pa.Table:
        """A Parquet member checked against its size and SHA-256 in the manifest, with these columns of
        these kinds (``int``, ``bool``, ``str``) and ``rows`` rows (a number, or a range of them), whose decoded
        size is in proportion to its stored size (:data:`MAX_EXPANSION`). Every bound is checked from the footer
        and the text columns' dictionaries before anything is decoded."""
        entry = self.members.get(path)
        if not isinstance(entry, dict):
            raise self.fail(f"manifest.json does not list the member {path}")
        data = self.archive.read(path)
        if len(data) != entry.get("size") or hashlib.sha256(data).hexdigest() != entry.get("sha256"):
            raise self.fail(
                f"{path} does not match its size and SHA-256 in manifest.json; the file was altered"
            )
        text = [c for c, kind in columns.items() if kind == "str"]
        try:
            f = pq.ParquetFile(io.BytesIO(data), read_dictionary=text)
            self._check_footer(path, f, columns, rows, len(data))
            table = f.read(columns=[c for c in columns if c in f.schema_arrow.names])
            table = self._decoded_text(path, table, text, len(data))
        except InputError:
            raise
        except (pa.ArrowException, OSError, ValueError, KeyError, MemoryError) as e:  # KeyError: forged names
            raise self.fail(
                f"{path} is not a readable Parquet table ({type(e).__name__}); write the file again"
            ) from None
        missing = [c for c in columns if c not in table.column_names]
        if missing:
            raise self.fail(f"{path} lacks the column(s) {', '.join(missing)}")
        for c, kind in columns.items():
            t = table.schema.field(c).type
            ok = {
                "int": pa.types.is_integer(t),
                "bool": pa.types.is_boolean(t),
                "str": pa.types.is_string(t) or pa.types.is_large_string(t),
            }[kind]
            if not ok:
                raise self.fail(f"{path}: column {c} holds {t}, not {kind}")
            if kind != "str" and table[c].null_count and c != "line":
                raise self.fail(f"{path}: column {c} has empty cells")
        return table.select(list(columns))

    def _check_footer(
        self, path: str, f: pq.ParquetFile, columns: Mapping[str, str], rows: int | range, stored: int
    ) -> None:
        """The footer's row count against the manifest's, and the numbers' decoded size against the stored."""
        n = f.metadata.num_rows
        if isinstance(rows, int) and n != rows:
            raise self.fail(f"{path} declares {n:,} rows; manifest.json says {rows:,}")
        if isinstance(rows, range) and n not in rows:
            raise self.fail(f"{path} declares {n:,} rows; manifest.json allows at most {rows.stop - 1:,}")
        widths = {"int": 8, "bool": 1, "str": 4}  # text: its dictionary indices, its values checked after
        numbers = n * sum(widths[kind] for kind in columns.values())
        self._in_proportion(path, numbers, stored)

    def _decoded_text(self, path: str, table: pa.Table, text: list[str], stored: int) -> pa.Table:
        """``table`` with its text columns decoded from their dictionaries, once their decoded size is known to
        be in proportion (a dictionary of one long value, repeated, decodes to any size)."""
        decoded = 0
        for c in text:
            if c not in table.column_names:
                continue
            column = table.column(c)
            if not pa.types.is_dictionary(column.type):  # not text: the column check names it
                continue
            for chunk in column.chunks:
                lengths = pc.binary_length(chunk.dictionary)
                decoded += int(pc.sum(pc.take(lengths, chunk.indices)).as_py() or 0)
        self._in_proportion(path, decoded + table.num_rows * 8 * len(text), stored)
        for c in text:
            if c in table.column_names and pa.types.is_dictionary(table.column(c).type):
                i = table.column_names.index(c)
                table = table.set_column(i, c, pc.cast(table.column(c), pa.large_string()))
        return table

    def _in_proportion(self, path: str, decoded: int, stored: int) -> None:
        if decoded > max(TABLE_FLOOR, MAX_EXPANSION * stored):
            raise self.fail(
                f"{path} would decode to {decoded:,} bytes from {stored:,} stored, more than {MAX_EXPANSION} times "
                "its size; cophe's tables never expand so far: the file was not written by cophe aggregate"
            )

    def aggregate(self) -> Aggregate:
        m = self.manifest()
        self.members = self.field(m, "members", dict, "an object")
        onto = self.ontology(m)
        # the counts, names and types of the manifest's values are those of its schema (manifest.AGGREGATE)
        runs: list[dict[str, Any]] = m["runs"]
        names = [r["name"] for r in runs]
        n_docs: int = m["documents"]
        options: dict[str, Any] = m["options"] if isinstance(m.get("options"), dict) else {}
        try:
            max_level = onto.top_level(options.get("max_level"))
        except ValueError:
            shown = show(options.get("max_level"))
            raise self.fail(f"manifest.json: max_level {shown} is not a level of the ontology") from None
        edges = self.slice_edges(m)
        counted = self.counts(onto.n_nodes, len(names), 1 + (len(edges) + 1 if edges else 0))
        whole = {r: counted(i, 0) for i, r in enumerate(names)}
        slices: list[Slice] = []
        slice_counts: dict[tuple[str, str], NodeCounts] = {}
        if edges:
            slices = _frequency_slices(whole, edges, onto.n_nodes)
            keys = (m.get("slices") or {}).get("keys")
            if keys != [x.key for x in slices]:
                raise self.fail("manifest.json: slices.keys do not match the slices of slices.edges")
            for i, r in enumerate(names):
                for j, x in enumerate(slices):
                    slice_counts[(r, x.key)] = counted(i, j + 1)
        rows = {k: self.rows(f"{k}.parquet", names) for k in ("rejected", "flagged")}
        columns = m.get("document_columns") or []
        has_docs = (
            all(isinstance(r.get("documents"), str) for r in runs) and "documents/ids.parquet" in self.members
        )
        return Aggregate(
            onto,
            whole,
            n_docs,
            max_level,
            slices,
            slice_counts,
            rows["rejected"],
            rows["flagged"],
            {r["name"]: self.texts(r.get("warnings")) for r in runs},
            {r["name"]: self.texts(r.get("notes")) for r in runs},
            {k: v for k, v in options.items() if isinstance(v, str | int | float | type(None))},
            {r["name"]: self.sources(r.get("sources")) for r in runs},
            str(m.get("created") or "")[:100],
            str(m.get("cophe_version") or "")[:100],
            self.document_loader(
                {r["name"]: r["documents"] for r in runs},
                columns,
                n_docs,
                {r["name"]: self.run_documents(r, n_docs) for r in runs},
            )
            if has_docs
            else None,
            {r["name"]: self.run_documents(r, n_docs) for r in runs},
        )

    def run_documents(self, run: dict[str, Any], n_docs: int) -> int:
        """A run's own documents (files written before runs kept their own: every document)."""
        n = run.get("n_documents", n_docs)
        if not isinstance(n, int) or isinstance(n, bool) or not 0 <= n <= n_docs:
            raise self.fail(f"manifest.json: run {show(run['name'])}: n_documents must be 0 to {n_docs:,}")
        return n

    def sources(self, value: object) -> dict[str, str]:
        """A run's sources' names (``{"gold": "gold.csv", …}``) as text; anything else in their place refused."""
        if value is None:
            return {}
        if not isinstance(value, dict):
            raise self.fail(f"manifest.json: a run's sources must be names by role, not {show(value)}")
        return {str(k): str(v) for k, v in value.items()}

    def texts(self, values: Any) -> list[str]:
        if not isinstance(values, list):
            return []
        return [str(v)[:MAX_WARNING] for v in values[:MAX_WARNINGS]]

    def ontology(self, m: dict[str, Any]) -> Ontology:
        about = self.field(m, "ontology", dict, "an object")
        levels, n = about["levels"], about["nodes"]  # as the schema allows (manifest.AGGREGATE)
        nodes = self.table(
            "ontology/nodes.parquet",
            {
                "key": "str",
                "title": "str",
                "level": "int",
                "parent": "int",
                "listed": "bool",
                "system": "str",
            },
            rows=n,
        )
        level = nodes["level"].to_numpy(np.int64)
        parent = nodes["parent"].to_numpy(np.int64)
        if n and (level.min() < 0 or level.max() >= len(levels)):
            raise self.fail("ontology/nodes.parquet: a node's level is not one of the ontology's levels")
        if n and (parent.min() < -1 or parent.max() >= n or (parent == np.arange(n)).any()):
            raise self.fail("ontology/nodes.parquet: a node's parent is not a node")
        has_parent = parent >= 0
        if (level[parent[has_parent]] <= level[has_parent]).any():
            raise self.fail("ontology/nodes.parquet: a node's parent is not above it")
        # a node is named by a few codes at most (its forms with and without a dot); a DAG's extra edges are few
        # per node (a layered DAG of 100 nodes a layer, each below every node above: 100)
        codes = self.table("ontology/codes.parquet", {"code": "str", "node": "int"}, rows=range(8 * n + 1))
        code_nodes = codes["node"].to_numpy(np.int64)
        if len(codes) and (code_nodes.min() < 0 or code_nodes.max() >= n):
            raise self.fail("ontology/codes.parquet: a code names a node that does not exist")
        edges = self.table(
            "ontology/edges.parquet", {"child": "int", "parent": "int"}, rows=range(200 * n + 1)
        )
        child, up = edges["child"].to_numpy(np.int64), edges["parent"].to_numpy(np.int64)
        if len(edges) and (
            min(child.min(), up.min()) < 0
            or max(child.max(), up.max()) >= n
            or (level[up] <= level[child]).any()
        ):
            raise self.fail(
                "ontology/edges.parquet: an edge joins nodes that do not exist, or does not go up"
            )
        system = nodes["system"].to_numpy(dtype=object)
        systems = None if not n or (system == "").all() else system  # "": an ontology of one code system
        code_sets: dict[str, Any] = m["code_sets"] if isinstance(m.get("code_sets"), dict) else {}
        default = about.get("default_max_level")
        return Ontology(
            name=str(about.get("name") or "ontology")[:100],
            levels=tuple(levels),
            keys=nodes["key"].to_numpy(dtype=object).astype(str),
            titles=nodes["title"].to_numpy(dtype=object).astype(str),
            level=level.astype(np.int16),
            parent=parent.astype(np.int32),
            listed=nodes["listed"].to_numpy(bool),
            codes=dict(zip(codes["code"].astype(str), code_nodes.tolist())),
            default_max_level=default if default in levels else None,
            systems=systems,
            extra_edges=(child.astype(np.int32), up.astype(np.int32)) if len(edges) else None,
            code_sets={str(k): str(v)[:200] for k, v in code_sets.items()},
            code_system=about.get("code_system") if isinstance(about.get("code_system"), str) else None,
        )

    def slice_edges(self, m: dict[str, Any]) -> list[int] | None:
        about = m.get("slices") or {}
        edges = about.get("edges") if isinstance(about, dict) else None
        if edges is None:
            return None
        if (
            not isinstance(edges, list)
            or not edges
            or len(edges) > 20
            or not all(isinstance(e, int) and not isinstance(e, bool) and e > 0 for e in edges)
            or edges != sorted(set(edges))
        ):
            raise self.fail("manifest.json: slices.edges must be increasing whole numbers, such as [10, 100]")
        return edges

    def counts(self, n: int, n_runs: int, n_slices: int) -> Callable[[int, int], NodeCounts]:
        """The per-node counts of ``counts.parquet``, checked: a function of (run, slice) positions."""
        columns = {"run": "int", "slice": "int", "node": "int", **dict.fromkeys(COUNT_FIELDS, "int")}
        t = self.table("counts.parquet", columns, rows=range(n_runs * n_slices * n + 1))
        run, sl, node = (t[c].to_numpy(np.int64) for c in ("run", "slice", "node"))
        for values, top, what in ((run, n_runs, "run"), (sl, n_slices, "slice"), (node, n, "node")):
            if len(values) and (values.min() < 0 or values.max() >= top):
                raise self.fail(f"counts.parquet: a row names a {what} that does not exist")
        flat = (run * n_slices + sl) * n + node
        if len(np.unique(flat)) != len(flat):
            raise self.fail("counts.parquet: a (run, slice, node) row is repeated")
        values = {f: t[f].to_numpy(np.int64) for f in COUNT_FIELDS}
        for f, v in values.items():
            if len(v) and v.min() < (-1 if f in OPTIONAL_FIELDS else 0):
                raise self.fail(f"counts.parquet: column {f} holds a negative count")

        def counted(i: int, j: int) -> NodeCounts:
            rows = (run == i) & (sl == j)
            at = node[rows]
            arrays: dict[str, Any] = {}
            for f, v in values.items():
                mine = v[rows]
                if f in OPTIONAL_FIELDS and (mine < 0).any():
                    arrays[f] = None  # not counted
                    continue
                full = np.zeros(n, dtype=np.int64)
                full[at] = mine
                arrays[f] = full
            return NodeCounts(**arrays)

        return counted

    def rows(self, path: str, runs: list[str]) -> pd.DataFrame:
        t = self.table(
            path,
            {"run": "int", "file": "str", "line": "int", "value": "str", "reason": "str", "kind": "str"},
            rows=range(MAX_ROWS_NOT_SCORED * (len(runs) + 1) + 1),
        )
        run = t["run"].to_numpy(np.int64)
        if len(t) and (run.min() < 0 or run.max() >= len(runs)):
            raise self.fail(f"{path}: a row names a run that manifest.json does not list")
        t["run"] = np.asarray(runs, dtype=object)[run] if len(t) else pd.Series([], dtype=object)
        t["line"] = pd.array(t["line"], dtype="Int64")
        return t[["run", *REJECTED_COLUMNS]]

    def document_loader(
        self, members: dict[str, str], columns: list[str], n_docs: int, n_own: dict[str, int]
    ) -> Callable[[str], tuple[pd.Index, np.ndarray, list[str]]]:
        kept: dict[str, Any] = {}  # each member read and checked once

        def load(run: str) -> tuple[pd.Index, np.ndarray, list[str]]:
            if "ids" not in kept:
                ids = (
                    self.arrow_table("documents/ids.parquet", {"doc_id": "str"}, rows=n_docs)
                    .column("doc_id")
                    .combine_chunks()
                )
                ascending = len(ids) < 2 or pc.all(pc.greater(ids[1:], ids[:-1])).as_py()
                if len(ids) != n_docs or ids.null_count or not ascending:
                    raise self.fail("documents/ids.parquet must hold the documents' ids, sorted, each once")
                kept["ids"] = pd.Index(ids.to_numpy(zero_copy_only=False), dtype=object)
            if run not in kept:
                partial = n_own[run] != n_docs  # the run's own documents are marked among the file's
                wanted = dict.fromkeys(columns, "int") | ({EVALUATED: "bool"} if partial else {})
                table = self.arrow_table(members[run], wanted, rows=n_docs)
                if table.num_rows != n_docs:
                    raise self.fail(f"{members[run]} has {table.num_rows:,} rows for {n_docs:,} documents")
                values = np.empty((n_docs, len(columns)), dtype=np.int32)
                for j, c in enumerate(columns):
                    column = table.column(c).to_numpy()
                    if column.size and (column.min() < 0 or column.max() > np.iinfo(np.int32).max):
                        raise self.fail(f"{members[run]}: column {c} holds a count below 0 or above 2³¹ − 1")
                    values[:, j] = column
                ids = kept["ids"]
                if partial:
                    mine = table.column(EVALUATED)
                    if (pc.sum(mine).as_py() or 0) != n_own[run]:
                        raise self.fail(f"{members[run]}: {EVALUATED} must mark the run's n_documents rows")
                    at = np.flatnonzero(mine.to_numpy(zero_copy_only=False))
                    ids, values = ids[at], values[at]
                kept[run] = ids, values
            return *kept[run], list(columns)

        return load
