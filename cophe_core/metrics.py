"""Flat, set-based and CoPHE scores (SPEC §2-3, seed 000).

Definitions. For a document d, a level L, and a node n at L, let x (y) be the
number of predicted (gold) codes of d that are n or below n. A code counts at
its own level and every level above it, never below.

- **CoPHE** (count-preserving): TP = min(x, y), FP = max(x − y, 0),
  FN = max(y − x, 0).
- **Set-based** (Kosmopoulos et al. 2015): the same on the indicators x > 0
  and y > 0.
- **Flat** (leaf-only): set comparison of the raw codes.

Aggregation is micro: TP, FP and FN are summed over the nodes of a level and all
documents; *overall* sums them over the levels from the bottom up to the chosen
maximum level. Then P = TP/(TP+FP), R = TP/(TP+FN), F1 = 2PR/(P+R), **each 0
when its denominator is 0**.

Macro averages come in the two forms of the literature, over the nodes (codes)
that occur in the gold or the predictions: ``macro_f1`` is the mean of per-node
F1 (scikit-learn; Edin et al. 2023), ``macro_f1_of_means`` the F1 of macro-P and
macro-R (CAML, LAAT and the CoPHE scripts).

Everything is computed from two sparse documents × nodes count matrices
``X = P @ C`` and ``Y = G @ C``, with ``C`` the ontology's ancestor closure; the
cost is linear in the number of labels.
"""

from __future__ import annotations

import warnings
from abc import ABC, abstractmethod
from collections.abc import Mapping, Sequence
from dataclasses import Field, asdict, astuple, dataclass, fields, replace
from functools import cached_property
from typing import TYPE_CHECKING, Any, ClassVar

import numpy as np
import pandas as pd
import scipy.sparse as sp
from numpy.typing import ArrayLike, NDArray

from .decisions import check_rule, decide, ranks
from .labels import Corpus
from .ontology import Ontology

__all__ = [
    "prf",
    "balance",
    "evaluate",
    "evaluate_corpus",
    "on_shared_documents",
    "Evaluation",
    "Figures",
    "Score",
    "MacroScore",
    "NodeCounts",
    "DocumentCounts",
    "MEASURES",
    "MEASURE_WORDS",
    "precision_recall_fscore_hierarchical",
    "precision_recall_fscore_hierarchical_from_scores",
    "cophe_score",
    "cophe_score_from_scores",
    "set_based_score",
    "set_based_score_from_scores",
]

MEASURES = ("flat", "set_based", "cophe")
# Each measure in a coder's words and by its name in the papers: the one place they are written.
MEASURE_WORDS = {
    "flat": ("Exact codes", "Flat"),
    "set_based": ("Right family", "Set-based"),
    "cophe": ("Right family and count", "CoPHE"),
}
FLAT_LEVEL = "leaf"


def prf(
    tp: ArrayLike, fp: ArrayLike, fn: ArrayLike
) -> tuple[NDArray[np.float64], NDArray[np.float64], NDArray[np.float64]]:
    """Precision, recall and F1 from counts, elementwise; 0 where a denominator is 0.

    >>> [round(float(v), 3) for v in prf(6, 5, 2)]
    [0.545, 0.75, 0.632]
    >>> [float(v) for v in prf(0, 0, 0)]
    [0.0, 0.0, 0.0]
    """
    tp, fp, fn = (np.asarray(a, dtype=float) for a in (tp, fp, fn))
    with np.errstate(divide="ignore", invalid="ignore"):
        p = np.where(tp + fp > 0, tp / (tp + fp), 0.0)
        r = np.where(tp + fn > 0, tp / (tp + fn), 0.0)
        f = np.where(p + r > 0, 2 * p * r / (p + r), 0.0)
    return p, r, f


def balance(tp: ArrayLike, fp: ArrayLike, fn: ArrayLike) -> NDArray[np.float64]:
    """Extra against missed codes, elementwise: (FP − FN) / (TP + FP + FN) in [−1, 1]; 0 where there are no
    counts. −1: every error a missed code; +1: every error an extra one.

    >>> balance([1, 0, 0], [3, 0, 0], [0, 2, 0]).tolist()
    [0.75, -1.0, 0.0]
    """
    tp, fp, fn = (np.asarray(a, dtype=float) for a in (tp, fp, fn))
    total = tp + fp + fn
    share: NDArray[np.float64] = np.divide(fp - fn, total, out=np.zeros_like(total), where=total > 0)
    return share


class _Record:
    """Shared by the frozen result records: a plain dict for JSON, and read access by key, kept for code
    written when these were dicts (``ev.score("cophe").f1``), with a warning."""

    #: Set on each subclass by ``@dataclass``; declared so that ``asdict`` accepts ``self``.
    __dataclass_fields__: ClassVar[dict[str, Field[Any]]]

    def as_dict(self) -> dict[str, Any]:
        """The record as a dict of plain Python numbers, in field order."""
        return asdict(self)

    def __getitem__(self, key: str) -> Any:
        warnings.warn(
            f"{type(self).__name__}[{key!r}] is deprecated: read the attribute .{key}",
            DeprecationWarning,
            stacklevel=2,
        )
        return getattr(self, key)


@dataclass(frozen=True)
class Score(_Record):
    """One measure's micro scores at one level (or ``overall``): the counts TP, FP and FN summed over the
    documents and nodes, then P = TP/(TP+FP), R = TP/(TP+FN) and F1 = 2PR/(P+R), each 0 over 0.

    >>> s = Score.of(6, 5, 2)
    >>> s.tp, round(s.precision, 3), round(s.recall, 3), round(s.f1, 3)
    (6, 0.545, 0.75, 0.632)
    """

    tp: int
    fp: int
    fn: int
    precision: float
    recall: float
    f1: float

    @classmethod
    def of(cls, tp: int, fp: int, fn: int) -> Score:
        """The score of these counts."""
        p, r, f = prf(tp, fp, fn)
        return cls(int(tp), int(fp), int(fn), float(p), float(r), float(f))


@dataclass(frozen=True)
class MacroScore(_Record):
    """One measure's macro averages at one level, over the ``n_codes`` nodes in play: ``precision`` and
    ``recall`` are the means of the per-node values, ``f1`` the mean of per-node F1 (scikit-learn; Edin
    et al. 2023), ``f1_of_means`` the F1 of the two means (CAML, LAAT and the CoPHE scripts).

    >>> m = MacroScore.of(np.array([1, 0]), np.array([0, 1]), np.array([1, 0]))
    >>> m.n_codes, m.precision, m.recall, m.f1, round(m.f1_of_means, 4)
    (2, 0.5, 0.25, 0.3333333333333333, 0.3333)
    """

    n_codes: int
    precision: float
    recall: float
    f1: float
    f1_of_means: float

    @classmethod
    def of(cls, tp: np.ndarray, fp: np.ndarray, fn: np.ndarray) -> MacroScore:
        """The macro averages over the nodes whose counts are given (none: all 0)."""
        if not len(tp):
            return cls(0, 0.0, 0.0, 0.0, 0.0)
        p, r, f = prf(tp, fp, fn)
        mp, mr = float(p.mean()), float(r.mean())
        return cls(len(tp), mp, mr, float(f.mean()), _f1(mp, mr))


@dataclass(frozen=True, eq=False)
class NodeCounts:
    """Per node, counts summed over the documents, each an int64 array of ``ontology.n_nodes``.

    - ``gold``, ``predicted``: Σy and Σx, the gold and predicted codes at or below the node;
    - ``tp``, ``fp``, ``fn``: CoPHE's min(x, y), max(x − y, 0), max(y − x, 0);
    - ``set_tp``, ``set_fp``, ``set_fn``: the same on x > 0 and y > 0;
    - ``flat_tp``, ``flat_fp``, ``flat_fn``: the node's own code compared as a set (the flat measure);
    - ``docs_over``, ``docs_under``: documents with x > y and with x < y; ``None`` when not counted (they
      cost the most, and only the node table needs them);
    - ``shared_gold``, ``shared_predicted``: Σy and Σx over the documents where both x > 0 and y > 0 (the
      family is in the gold and the prediction: where a count can be over or under); ``None`` when not
      counted, like ``docs_over``.

    Every field is a sum over documents, so the counts of disjoint sets of documents add up to the counts
    of their union: ``a + b`` (the shorter is padded with zeros, for nodes added by a later extension of
    the ontology). Every table of an :class:`Evaluation` but the per-document ones is a function of them.

    >>> a = NodeCounts.zeros(2)
    >>> (a + NodeCounts.zeros(3)).tp.tolist()
    [0, 0, 0]
    """

    gold: np.ndarray
    predicted: np.ndarray
    tp: np.ndarray
    fp: np.ndarray
    fn: np.ndarray
    set_tp: np.ndarray
    set_fp: np.ndarray
    set_fn: np.ndarray
    flat_tp: np.ndarray
    flat_fp: np.ndarray
    flat_fn: np.ndarray
    docs_over: np.ndarray | None = None
    docs_under: np.ndarray | None = None
    shared_gold: np.ndarray | None = None
    shared_predicted: np.ndarray | None = None

    @classmethod
    def zeros(cls, n_nodes: int) -> NodeCounts:
        """Counts of no document."""
        return cls(*(np.zeros(n_nodes, dtype=np.int64) for _ in fields(cls)))

    def _arrays(self) -> dict[str, Any]:
        return {f.name: getattr(self, f.name) for f in fields(self)}

    @property
    def n_nodes(self) -> int:
        return len(self.tp)

    def padded(self, n_nodes: int) -> NodeCounts:
        """The same counts over ``n_nodes`` ≥ :attr:`n_nodes` nodes, the new ones 0."""
        extra = n_nodes - self.n_nodes
        if extra < 0:
            raise ValueError(f"cannot shrink counts of {self.n_nodes} nodes to {n_nodes}")
        if not extra:
            return self
        zeros = np.zeros(extra, np.int64)
        pad: dict[str, Any] = {
            k: None if v is None else np.concatenate([v, zeros]) for k, v in self._arrays().items()
        }
        return type(self)(**pad)

    def __add__(self, other: NodeCounts) -> NodeCounts:
        n = max(self.n_nodes, other.n_nodes)
        a, b = self.padded(n)._arrays(), other.padded(n)._arrays()
        total: dict[str, Any] = {k: None if a[k] is None or b[k] is None else a[k] + b[k] for k in a}
        return type(self)(**total)


@dataclass(frozen=True, eq=False)
class DocumentCounts:
    """One measure's TP, FP and FN per document (int64 arrays in the order of ``Evaluation.docs``), at one
    level or summed over the levels (``overall``)."""

    tp: np.ndarray
    fp: np.ndarray
    fn: np.ndarray

    @property
    def f1(self) -> np.ndarray:
        """Each document's F1 (0 where it has no counts)."""
        return prf(self.tp, self.fp, self.fn)[2]


def _keep_columns(m: sp.csr_matrix, mask: np.ndarray) -> sp.csr_matrix:
    """``m`` without its entries outside the ``mask`` columns (same shape and dtype)."""
    out = sp.csr_matrix(m, copy=True)
    out.data = out.data * mask[out.indices].astype(out.data.dtype)
    out.eliminate_zeros()
    return out


def _colcount(m: sp.csr_matrix, n: int) -> np.ndarray:
    """Number of stored non-zeros per column."""
    return np.bincount(m.indices, minlength=n)


def _colsum(m: sp.csr_matrix, n: int) -> np.ndarray:
    return np.bincount(m.indices, weights=m.data, minlength=n).astype(np.int64)


def _per_level(m: sp.csr_matrix, level: np.ndarray, n_levels: int) -> tuple[np.ndarray, np.ndarray]:
    """Documents × levels: the sum of each row's values over the nodes of each level, and how many of those
    nodes are non-zero (levels from ``n_levels`` on are left out). One bincount each, where a product with
    a node × level indicator matrix builds a sparse matrix first.

    >>> m = sp.csr_matrix(([2, 1, 0, 3], [0, 1, 2, 2], [0, 3, 4]), shape=(2, 3))  # a stored 0 counts for nothing
    >>> [a.tolist() for a in _per_level(m, np.array([0, 1, 1]), 2)]
    [[[2, 1], [0, 3]], [[1, 1], [0, 1]]]
    """
    rows = np.repeat(np.arange(m.shape[0]), np.diff(m.indptr))
    at_level = level[m.indices]
    keep = (at_level < n_levels) & (m.data != 0)
    cell = rows[keep] * n_levels + at_level[keep]
    shape = (m.shape[0], n_levels)
    sums = np.bincount(cell, weights=m.data[keep], minlength=m.shape[0] * n_levels).reshape(shape)
    return sums.astype(np.int64), np.bincount(cell, minlength=m.shape[0] * n_levels).reshape(shape)


class Figures(ABC):
    """The figures of an evaluation that are functions of its counts, written once for every kind of evaluation:
    in memory (:class:`Evaluation`), streamed (:class:`~cophe_core.stream.StreamedEvaluation`) and from an
    aggregate analysis (:class:`~cophe_core.aggregate.AggregateEvaluation`).

    A kind gives ``ontology``, ``max_level``, ``node_counts`` (:class:`NodeCounts` summed over its documents),
    ``docs`` and :attr:`n_documents`, and, when it has it, the per-document table (:attr:`documents`, rows in
    the order of ``docs``); the levels, macro, node and system tables, :meth:`score`, :meth:`macro`,
    :meth:`document_counts` and the JSON (:meth:`to_dict`) follow from them, here. A caller asks what a kind
    can do by its capabilities, never by its class:

    - :attr:`has_documents`: the per-document table, so :meth:`document_counts`, bootstrap intervals
      (:func:`cophe_core.stats.bootstrap`) and paired comparisons;
    - :attr:`has_codes`: each document's own codes (the documents × nodes matrices of :class:`Evaluation`), so
      one document's view, the ICM paper's per-document metrics and slices by document.

    An abstract base class rather than a ``typing.Protocol``: the kinds share these implementations, which a
    protocol could only describe.

    >>> from cophe_core import score_files
    >>> ev = score_files(b"doc_id,code\\n1,401.9\\n", {"A": b"doc_id,code\\n1,401.1\\n"}).evaluation("A")
    >>> ev.has_documents, ev.has_codes, ev.n_documents, ev.score("cophe", "e0").f1
    (True, True, 1, 1.0)
    """

    if (
        TYPE_CHECKING
    ):  # given by each kind, as a field or a property (declared here for the type checker only:
        # a class attribute would become the default of a dataclass field of the same name)
        @property
        def ontology(self) -> Ontology: ...

        @property
        def max_level(self) -> str: ...

        @property
        def docs(self) -> Any:
            """The evaluated documents' ids (an array or an index), in the order of :attr:`documents`."""

        @property
        def node_counts(self) -> NodeCounts: ...

    has_codes: ClassVar[bool] = False

    @property
    @abstractmethod
    def has_documents(self) -> bool:
        """Whether the per-document table (:attr:`documents`) is available."""

    @property
    @abstractmethod
    def n_documents(self) -> int:
        """The number of evaluated documents (known without reading their ids)."""

    @property
    @abstractmethod
    def documents(self) -> pd.DataFrame:
        """Per-document table: ``doc_id, n_gold, n_predicted``, flat ``flat_tp/fp/fn``, and for each evaluated
        level L CoPHE ``L_tp, L_fp, L_fn`` and set-based ``L_set_tp, L_set_fp, L_set_fn``; an error naming why
        when not :attr:`has_documents`."""

    def document_block(self) -> tuple[np.ndarray | None, list[str]]:
        """The per-document table but ``doc_id`` as int32 values (documents × columns, rows in the order of
        ``docs``) and its columns."""
        table = self.documents
        columns = [c for c in table.columns if c != "doc_id"]
        return table[columns].to_numpy(dtype=np.int32), columns

    def with_codes(self) -> Evaluation:
        """This evaluation with each document's codes (:attr:`has_codes`), for the figures that read them; a
        ``ValueError`` for a kind that has counts only.

        >>> from cophe_core import score_files
        >>> ev = score_files(b"doc_id,code\\n1,401.9\\n", {"A": b"doc_id,code\\n1,401.1\\n"}).evaluation("A")
        >>> ev.with_codes() is ev
        True
        """
        raise ValueError(
            "this evaluation holds counts, not each document's codes; score the gold standard and the run "
            "themselves in memory for this figure"
        )

    def code_slice_counts(self, key: str, mask: np.ndarray) -> NodeCounts:
        """The per-node counts of the codes of a code slice alone (``key`` names it, ``mask`` is over the
        ontology's nodes), as :func:`cophe_core.slices.restrict` counts them; a ``ValueError`` when this kind
        cannot count them."""
        raise ValueError(f"this evaluation has no counts of the code slice {key!r}")

    @property
    def _level_counts(self) -> NodeCounts:
        """The counts the levels, systems and macro tables read (:attr:`node_counts`, or a cheaper part of it
        with the same fields)."""
        return self.node_counts

    # ----------------------------------------------------------------- tables
    @cached_property
    def levels(self) -> list[str]:
        """Evaluated levels, bottom-up, up to ``max_level``."""
        return self.ontology.levels_up_to(self.max_level)

    @cached_property
    def levels_table(self) -> pd.DataFrame:
        """Micro TP/FP/FN/P/R/F1 per measure and level, plus ``overall``.

        Columns ``measure, level, tp, fp, fn, precision, recall, f1``; the flat
        row has level ``"leaf"``.
        """
        return levels_table(self._level_counts, self.ontology, self.levels)

    @cached_property
    def systems_table(self) -> pd.DataFrame | None:
        """For an ontology of several code systems (``icd10``): :attr:`levels_table` per system,
        with a ``system`` column first; ``None`` otherwise."""
        return systems_table(self._level_counts, self.ontology, self.levels)

    @cached_property
    def macro_table(self) -> pd.DataFrame:
        """Macro averages per measure and level, in both definitions (see module doc).

        Columns ``measure, level, n_codes, macro_precision, macro_recall,
        macro_f1`` (mean of per-code F1) and ``macro_f1_of_means``.
        """
        return macro_table(self._level_counts, self.ontology, self.levels)

    @cached_property
    def nodes(self) -> pd.DataFrame:
        """Per-node table over the nodes in play (gold or predicted mass > 0).

        Columns: ``node`` (id), ``level``, ``code``, ``title``, ``parent`` (id),
        ``gold`` (Σy), ``predicted`` (Σx), CoPHE ``tp, fp, fn, precision, recall,
        f1``, set-based ``set_tp, set_fp, set_fn, set_precision, set_recall,
        set_f1``, ``docs_over`` (documents with x > y), ``docs_under`` (x < y),
        ``balance`` = (FP − FN)/(TP + FP + FN) in [−1, 1] (−1: all
        under-predicted, +1: all over-predicted), ``listed``.
        """
        return nodes_table(self.node_counts, self.ontology)

    def score(self, measure: str = "cophe", level: str = "overall") -> Score:
        """One row of :attr:`levels_table` (``level="leaf"`` for flat).

        >>> from cophe_core.ontology import icd9_ontology
        >>> onto = icd9_ontology()
        >>> gold = sp.csr_matrix(([1, 1], ([0, 0], [onto.codes["401.9"], onto.codes["428.0"]])), shape=(1, onto.n_nodes))
        >>> pred = sp.csr_matrix(([1], ([0], [onto.codes["401.1"]])), shape=(1, onto.n_nodes))
        >>> evaluate(gold, pred, onto).score("cophe", "e0")
        Score(tp=1, fp=0, fn=1, precision=1.0, recall=0.5, f1=0.6666666666666666)
        """
        return _score_row(self.levels_table, measure, level)

    def macro(self, measure: str = "cophe", level: str = "e0") -> MacroScore:
        """One row of :attr:`macro_table` (``level="leaf"`` for flat).

        >>> from cophe_core.ontology import icd9_ontology
        >>> onto = icd9_ontology()
        >>> gold = sp.csr_matrix(([1, 1], ([0, 0], [onto.codes["401.9"], onto.codes["428.0"]])), shape=(1, onto.n_nodes))
        >>> pred = sp.csr_matrix(([1], ([0], [onto.codes["401.1"]])), shape=(1, onto.n_nodes))
        >>> evaluate(gold, pred, onto).macro("cophe", "e0")
        MacroScore(n_codes=2, precision=0.5, recall=0.5, f1=0.5, f1_of_means=0.5)
        """
        return _macro_row(self.macro_table, measure, level)

    def document_counts(self, measure: str = "cophe", level: str = "overall") -> DocumentCounts:
        """Each document's TP, FP and FN for ``measure`` at ``level`` (``"overall"``: summed over the
        evaluated levels; ``"leaf"`` for flat), in the order of :attr:`docs`.

        >>> from cophe_core import score_files
        >>> s = score_files(b"doc_id,code\\n1,401.9\\n2,428.0\\n", {"A": b"doc_id,code\\n1,401.1\\n2,428.0\\n"})
        >>> c = s.evaluation("A").document_counts("cophe", "e0")
        >>> c.tp.tolist(), c.fp.tolist(), c.f1.tolist()
        ([1, 1], [0, 0], [1.0, 1.0])
        """
        if measure == "flat":
            names: list[tuple[str, ...]] = [("flat_tp", "flat_fp", "flat_fn")]
        elif measure not in ("set_based", "cophe"):
            raise KeyError(f"no measure {measure!r}: use one of {', '.join(MEASURES)}")
        else:
            wanted = self.levels if level == "overall" else [level]
            if not set(wanted) <= set(self.levels):
                raise KeyError(f"no {measure} score at level {level!r}")
            infix = "_set" if measure == "set_based" else ""
            names = [tuple(f"{lv}{infix}_{k}" for k in ("tp", "fp", "fn")) for lv in wanted]
        d = self.documents
        tp, fp, fn = (sum(d[cols[i]].to_numpy() for cols in names) for i in range(3))
        return DocumentCounts(np.asarray(tp, np.int64), np.asarray(fp, np.int64), np.asarray(fn, np.int64))

    def _repr_html_(self) -> str:
        """In Jupyter: what was scored, then :attr:`levels_table`."""
        import html

        head = (
            f"<p><b>Evaluation</b>: {self.n_documents:,} documents, ontology {html.escape(self.ontology.name)}, "
            f"levels up to {html.escape(self.max_level)}; code sets "
            + html.escape("; ".join(f"{k} ({v})" for k, v in self.ontology.code_sets.items()) or "none")
            + "</p>"
        )
        table: str = self.levels_table.to_html(index=False, float_format="{:.4f}".format)
        return head + table

    @cached_property
    def documents_long(self) -> pd.DataFrame:
        """:attr:`documents` in long form, with columns that do not depend on the ontology's level names:
        ``doc_id, measure, level, tp, fp, fn``, one row per document, measure and level (flat at
        ``"leaf"``; no ``overall`` rows: they are sums over the levels).

        >>> from cophe_core import score_files
        >>> ev = score_files(b"doc_id,code\\n1,401.9\\n", {"A": b"doc_id,code\\n1,401.1\\n"}).evaluation("A")
        >>> t = ev.documents_long
        >>> list(t.columns), t[t.measure == "cophe"][["level", "tp", "fp", "fn"]].values.tolist()[:3]
        (['doc_id', 'measure', 'level', 'tp', 'fp', 'fn'], [['e2', 0, 0, 0], ['e1', 0, 1, 1], ['e0', 1, 0, 0]])
        """
        parts = [("flat", FLAT_LEVEL)] + [(m, lv) for m in ("set_based", "cophe") for lv in self.levels]
        n = len(self.docs)
        counts = [self.document_counts(m, lv) for m, lv in parts]
        return pd.DataFrame(
            {
                "doc_id": np.tile(self.docs, len(parts)),
                "measure": np.repeat([m for m, _ in parts], n),
                "level": np.repeat([lv for _, lv in parts], n),
                **{k: np.concatenate([getattr(c, k) for c in counts]) for k in ("tp", "fp", "fn")},
            }
        )

    def to_dict(self) -> dict[str, Any]:
        """The CLI's JSON shape: ontology, code_sets, levels, documents, flat, set_based, cophe.

        ``code_sets`` is the ontology's :attr:`~cophe_core.ontology.Ontology.code_sets`:
        system → release, which a published score should quote.
        """
        out: dict[str, Any] = {
            "ontology": self.ontology.name,
            "code_sets": dict(self.ontology.code_sets),
            "levels": list(self.levels),
            "documents": int(self.n_documents),
            "flat": self.score("flat").as_dict(),
        }
        for measure in ("set_based", "cophe"):
            out[measure] = {
                "levels": {lv: self.score(measure, lv).as_dict() for lv in self.levels},
                "overall": self.score(measure, "overall").as_dict(),
            }
        if self.systems_table is not None:
            st = self.systems_table
            out["systems"] = {
                name: {
                    measure: (
                        {
                            "levels": {lv: _score_row(g, measure, lv).as_dict() for lv in self.levels},
                            "overall": _score_row(g, measure, "overall").as_dict(),
                        }
                        if measure != "flat"
                        else _score_row(g, "flat").as_dict()
                    )
                    for measure in MEASURES
                }
                for name, g in st.groupby("system")
            }
        macro = self.macro_table
        out["macro"] = {
            m: {
                r.level: {
                    "n_codes": int(r.n_codes),
                    "macro_precision": r.macro_precision,
                    "macro_recall": r.macro_recall,
                    "macro_f1": r.macro_f1,
                    "macro_f1_of_means": r.macro_f1_of_means,
                }
                for r in macro[macro.measure == m].itertuples()
            }
            for m in MEASURES
        }
        return out


@dataclass(frozen=True, eq=False)
class Evaluation(Figures):
    """The scores of one run against the gold standard.

    Build it with :func:`evaluate`. Tables are pandas DataFrames computed on
    first access: :attr:`levels_table`, :attr:`macro_table`, :attr:`nodes`,
    :attr:`documents`; :meth:`to_dict` gives the CLI's JSON.
    """

    ontology: Ontology
    docs: np.ndarray
    gold: sp.csr_matrix
    pred: sp.csr_matrix
    max_level: str
    # which of the corpus's documents these are (Corpus.run_rows, as a mask over them), when evaluated from a
    # corpus: a document slice, a mask over the corpus's documents, is read on them
    corpus_mask: np.ndarray | None = None

    has_codes: ClassVar[bool] = True

    @property
    def has_documents(self) -> bool:
        """Always: the per-document table is computed from the matrices."""
        return True

    @property
    def n_documents(self) -> int:
        return len(self.docs)

    @property
    def _level_counts(self) -> NodeCounts:
        return self._counts

    def with_codes(self) -> Evaluation:
        return self

    def on_codes(self, mask: np.ndarray) -> Evaluation:
        """The evaluation of the codes of ``mask`` (over the ontology's nodes) alone: every document, the label
        columns outside the mask removed from ``gold`` and ``pred``, so that at every level a node counts only
        those codes below it.

        >>> from cophe_core import score_files
        >>> ev = score_files(b"doc_id,code\\n1,401.9\\n1,428.0\\n", {"A": b"doc_id,code\\n1,428.1\\n"}).evaluation("A")
        >>> mask = np.zeros(ev.ontology.n_nodes, dtype=bool)
        >>> mask[[ev.ontology.codes["428.0"], ev.ontology.codes["428.1"]]] = True
        >>> ev.on_codes(mask).score("cophe", "e0").tp, ev.on_codes(mask).score("flat").fn
        (1, 1)
        """
        if len(mask) != self.ontology.n_nodes:
            raise ValueError(
                f"a mask of {len(mask):,} codes for an ontology of {self.ontology.n_nodes:,} nodes"
            )
        return evaluate(
            _keep_columns(self.gold, mask),
            _keep_columns(self.pred, mask),
            self.ontology,
            docs=self.docs,
            max_level=self.max_level,
        )

    def code_slice_counts(self, key: str, mask: np.ndarray) -> NodeCounts:
        return self.on_codes(mask).node_counts  # docs_over and docs_under, which cost the most, are left out

    # ----------------------------------------------------------------- counts
    @cached_property
    def _closure(self) -> sp.csr_matrix:
        keep = (self.ontology.level <= len(self.levels) - 1).astype(np.int32)
        closure = self.ontology.closure_of(np.union1d(self.gold.indices, self.pred.indices))
        return (closure @ sp.diags_array(keep, dtype=np.int32)).tocsr()

    @cached_property
    def X(self) -> sp.csr_matrix:
        """Predicted counts, documents × nodes."""
        return (self.pred.astype(np.int32) @ self._closure).tocsr()

    @cached_property
    def Y(self) -> sp.csr_matrix:
        """Gold counts, documents × nodes."""
        return (self.gold.astype(np.int32) @ self._closure).tocsr()

    @cached_property
    def _min(self) -> sp.csr_matrix:
        m = self.X.minimum(self.Y).tocsr()
        m.eliminate_zeros()
        return m

    @cached_property
    def _counts(self) -> NodeCounts:
        # all but docs_over and docs_under, which cost the most: what the level and macro tables need
        n = self.ontology.n_nodes
        x, y, tp = _colsum(self.X, n), _colsum(self.Y, n), _colsum(self._min, n)
        sx, sy, stp = _colcount(self.X, n), _colcount(self.Y, n), _colcount(self._min, n)
        both = self.gold.multiply(self.pred).tocsr()
        both.eliminate_zeros()
        ftp = _colcount(both, n)
        return NodeCounts(
            gold=y,
            predicted=x,
            tp=tp,
            fp=x - tp,
            fn=y - tp,
            set_tp=stp,
            set_fp=sx - stp,
            set_fn=sy - stp,
            flat_tp=ftp,
            flat_fp=_colcount(self.pred, n) - ftp,
            flat_fn=_colcount(self.gold, n) - ftp,
        )

    @cached_property
    def node_counts(self) -> NodeCounts:
        """The per-node counts (:class:`NodeCounts`), summed over the documents; every table but the
        per-document ones is a function of them."""
        n = self.ontology.n_nodes
        diff = (self.X - self.Y).tocsr()
        diff.eliminate_zeros()
        # x and y where the other is non-zero too (same pattern): the documents that share the family
        xs, ys = self.X.multiply(self.Y.sign()).tocsr(), self.Y.multiply(self.X.sign()).tocsr()
        return replace(
            self._counts,
            docs_over=np.bincount(diff.indices[diff.data > 0], minlength=n),
            docs_under=np.bincount(diff.indices[diff.data < 0], minlength=n),
            shared_gold=np.bincount(ys.indices, weights=ys.data, minlength=n).astype(np.int64),
            shared_predicted=np.bincount(xs.indices, weights=xs.data, minlength=n).astype(np.int64),
        )

    # ----------------------------------------------------------------- per document
    @cached_property
    def documents(self) -> pd.DataFrame:
        """Per-document table: ``doc_id, n_gold, n_predicted``, flat ``flat_tp/fp/fn``,
        and for each evaluated level L CoPHE ``L_tp, L_fp, L_fn`` and set-based
        ``L_set_tp, L_set_fp, L_set_fn``."""
        nlev = len(self.levels)
        (x, bx), (y, by), (m, bm) = (
            _per_level(a, self.ontology.level, nlev) for a in (self.X, self.Y, self._min)
        )
        ftp = np.asarray(self.gold.multiply(self.pred).sum(1)).ravel().astype(np.int64)
        n_gold = np.asarray(self.gold.sum(1)).ravel().astype(np.int64)
        n_pred = np.asarray(self.pred.sum(1)).ravel().astype(np.int64)
        out: dict[str, Any] = {
            "doc_id": self.docs,
            "n_gold": n_gold,
            "n_predicted": n_pred,
            "flat_tp": ftp,
            "flat_fp": n_pred - ftp,
            "flat_fn": n_gold - ftp,
        }
        for i, name in enumerate(self.levels):
            out[f"{name}_tp"], out[f"{name}_fp"], out[f"{name}_fn"] = (
                m[:, i],
                x[:, i] - m[:, i],
                y[:, i] - m[:, i],
            )
            out[f"{name}_set_tp"] = bm[:, i]
            out[f"{name}_set_fp"], out[f"{name}_set_fn"] = bx[:, i] - bm[:, i], by[:, i] - bm[:, i]
        return pd.DataFrame(out)

    def node_documents(self, node: int) -> pd.DataFrame:
        """The documents in which ``node`` has gold or predicted mass.

        Columns ``doc_id, gold (y), predicted (x), difference (x − y), gold_codes,
        predicted_codes`` (the codes of that family, each a sorted list),
        most over-predicted first.
        """
        o = self.ontology
        x = self.X[:, node].toarray().ravel()
        y = self.Y[:, node].toarray().ravel()
        rows = np.nonzero((x + y) > 0)[0]
        fam_ids = o.closure[:, node].nonzero()[0]  # the node and everything below it

        def codes(m: sp.csr_matrix) -> list[list[str]]:
            sub = m[rows][:, fam_ids].tocsr()
            return [
                sorted(o.keys[fam_ids[sub.indices[sub.indptr[i] : sub.indptr[i + 1]]]])
                for i in range(len(rows))
            ]

        df = pd.DataFrame(
            {
                "doc_id": self.docs[rows],
                "gold": y[rows],
                "predicted": x[rows],
                "difference": x[rows] - y[rows],
                "gold_codes": codes(self.gold),
                "predicted_codes": codes(self.pred),
            }
        )
        return df.sort_values(["difference", "doc_id"], ascending=[False, True], key=None, ignore_index=True)


def _row(table: pd.DataFrame, measure: str, level: str) -> int:
    """The index of ``measure`` at ``level`` in a table with those two columns (flat: its one row).
    Compared as arrays: a pandas filter on string columns costs a millisecond a call, and the views call
    this often."""
    wanted = FLAT_LEVEL if measure == "flat" else level
    at = np.flatnonzero((table.measure.to_numpy() == measure) & (table.level.to_numpy() == wanted))
    if not len(at):
        raise KeyError(f"no {measure} score at level {level!r}")
    return int(at[0])


def _score_row(table: pd.DataFrame, measure: str, level: str = "overall") -> Score:
    """The row of a :attr:`Evaluation.levels_table`-shaped ``table`` for ``measure`` at ``level``."""
    i = _row(table, measure, level)
    return Score(
        *(int(table[k].iat[i]) for k in ("tp", "fp", "fn")),
        *(float(table[k].iat[i]) for k in ("precision", "recall", "f1")),
    )


def _macro_row(table: pd.DataFrame, measure: str, level: str) -> MacroScore:
    """The row of a :attr:`Evaluation.macro_table`-shaped ``table`` for ``measure`` at ``level``."""
    i = _row(table, measure, level)
    return MacroScore(
        int(table.n_codes.iat[i]),
        *(
            float(table[k].iat[i])
            for k in ("macro_precision", "macro_recall", "macro_f1", "macro_f1_of_means")
        ),
    )


# ------------------------------------------------------------------ tables of node counts
# Functions of NodeCounts, so that counts summed over chunks of documents give the same tables as one
# evaluation of them all.


def levels_table(
    counts: NodeCounts, ontology: Ontology, levels: Sequence[str], mask: np.ndarray | None = None
) -> pd.DataFrame:
    """Micro TP/FP/FN/P/R/F1 per measure and level, plus ``overall`` (the sum of the ``levels``), from
    per-node counts; ``mask`` keeps some nodes only. Columns ``measure, level, tp, fp, fn, precision,
    recall, f1``; the flat row has level ``"leaf"``.

    >>> from cophe_core import score_files
    >>> ev = score_files(b"doc_id,code\\n1,401.9\\n", {"A": b"doc_id,code\\n1,401.1\\n"}).evaluation("A")
    >>> t = levels_table(ev.node_counts, ev.ontology, ev.levels)
    >>> t[t.measure == "cophe"][["level", "tp", "fp", "fn"]].values.tolist()
    [['e2', 0, 0, 0], ['e1', 0, 1, 1], ['e0', 1, 0, 0], ['block', 1, 0, 0], ['overall', 2, 1, 1]]
    """
    if mask is None:
        mask = np.ones(counts.n_nodes, dtype=bool)
    rows = [
        (
            "flat",
            FLAT_LEVEL,
            counts.flat_tp[mask].sum(),
            counts.flat_fp[mask].sum(),
            counts.flat_fn[mask].sum(),
        )
    ]
    lv = ontology.level[: counts.n_nodes][mask]
    nlev = len(levels)
    for measure, prefix in (("set_based", "set_"), ("cophe", "")):
        per = {
            k: np.bincount(lv, weights=getattr(counts, prefix + k)[mask], minlength=nlev)[:nlev]
            for k in ("tp", "fp", "fn")
        }
        for i, name in enumerate(levels):
            rows.append((measure, name, per["tp"][i], per["fp"][i], per["fn"][i]))
        rows.append((measure, "overall", per["tp"].sum(), per["fp"].sum(), per["fn"].sum()))
    df = pd.DataFrame(rows, columns=["measure", "level", "tp", "fp", "fn"])
    df[["tp", "fp", "fn"]] = df[["tp", "fp", "fn"]].astype(np.int64)
    df["precision"], df["recall"], df["f1"] = prf(df.tp, df.fp, df.fn)
    return df


def systems_table(counts: NodeCounts, ontology: Ontology, levels: Sequence[str]) -> pd.DataFrame | None:
    """For an ontology of several code systems (``icd10``): :func:`levels_table` per system, with a
    ``system`` column first; ``None`` otherwise."""
    systems = ontology.systems
    if systems is None or len(set(systems)) < 2:
        return None
    systems = systems[: counts.n_nodes]
    return pd.concat(
        [
            levels_table(counts, ontology, levels, systems == name).assign(system=name)
            for name in sorted(set(systems))
        ],
        ignore_index=True,
    )[["system", "measure", "level", "tp", "fp", "fn", "precision", "recall", "f1"]]


MACRO_COLUMNS = [
    "measure",
    "level",
    "n_codes",
    "macro_precision",
    "macro_recall",
    "macro_f1",
    "macro_f1_of_means",
]


def macro_table(counts: NodeCounts, ontology: Ontology, levels: Sequence[str]) -> pd.DataFrame:
    """Macro averages per measure and level over the nodes in play (:class:`MacroScore`), from per-node
    counts. Columns ``measure, level, n_codes, macro_precision, macro_recall, macro_f1,
    macro_f1_of_means``.

    >>> from cophe_core import score_files
    >>> ev = score_files(b"doc_id,code\\n1,401.9\\n", {"A": b"doc_id,code\\n1,401.1\\n"}).evaluation("A")
    >>> macro_table(ev.node_counts, ev.ontology, ev.levels).macro_f1.tolist()
    [0.0, 0.0, 0.0, 0.0, 0.0, 1.0, 1.0, 1.0, 1.0]
    """
    c = counts
    rows = []
    flat = (c.flat_tp + c.flat_fp + c.flat_fn) > 0
    rows.append(("flat", FLAT_LEVEL, MacroScore.of(c.flat_tp[flat], c.flat_fp[flat], c.flat_fn[flat])))
    level = ontology.level[: c.n_nodes]
    for i, name in enumerate(levels):
        at = (level == i) & ((c.gold + c.predicted) > 0)
        rows.append(("set_based", name, MacroScore.of(c.set_tp[at], c.set_fp[at], c.set_fn[at])))
        rows.append(("cophe", name, MacroScore.of(c.tp[at], c.fp[at], c.fn[at])))
    return pd.DataFrame(
        [(m, lv, *astuple(s)) for m, lv, s in rows],
        columns=MACRO_COLUMNS,
    )


NODE_COLUMNS = [
    "node",
    "level",
    "code",
    "title",
    "parent",
    "gold",
    "predicted",
    "tp",
    "fp",
    "fn",
    "precision",
    "recall",
    "f1",
    "set_tp",
    "set_fp",
    "set_fn",
    "set_precision",
    "set_recall",
    "set_f1",
    "docs_over",
    "docs_under",
    "balance",
    "listed",
]


def nodes_table(counts: NodeCounts, ontology: Ontology) -> pd.DataFrame:
    """Per-node table over the nodes in play (gold or predicted mass > 0), from per-node counts with
    ``docs_over`` and ``docs_under``: see :attr:`Evaluation.nodes` for the columns (:data:`NODE_COLUMNS`).
    """
    c = counts
    if c.docs_over is None or c.docs_under is None:
        raise ValueError("the node table needs counts with docs_over and docs_under")
    idx = np.nonzero((c.gold + c.predicted) > 0)[0]
    o = ontology
    df = pd.DataFrame(
        {
            "node": idx,
            "level": np.asarray(o.levels, dtype=object)[o.level[idx]],
            "code": o.keys[idx],
            "title": o.titles[idx],
            "parent": o.parent[idx],
            **{
                k: getattr(c, k)[idx]
                for k in (
                    "gold",
                    "predicted",
                    "tp",
                    "fp",
                    "fn",
                    "set_tp",
                    "set_fp",
                    "set_fn",
                    "docs_over",
                    "docs_under",
                )
            },
            "listed": o.listed[idx],
        }
    )
    df["precision"], df["recall"], df["f1"] = prf(df.tp, df.fp, df.fn)
    df["set_precision"], df["set_recall"], df["set_f1"] = prf(df.set_tp, df.set_fp, df.set_fn)
    df["balance"] = balance(df.tp, df.fp, df.fn)
    return df[NODE_COLUMNS]


def _prf_zero_division(tp: int, fp: int, fn: int, zero_division: float) -> tuple[float, float, float]:
    """Precision, recall and F1 of counts as scikit-learn defines them: a ratio over 0 is ``zero_division``,
    and F1 = 2TP/(2TP+FP+FN), which is ``zero_division`` only when all three counts are 0.

    >>> _prf_zero_division(0, 0, 3, 1.0), _prf_zero_division(0, 0, 0, 1.0), _prf_zero_division(2, 2, 0, 0.0)
    ((1.0, 0.0, 0.0), (1.0, 1.0, 1.0), (0.5, 1.0, 0.6666666666666666))
    """
    p = tp / (tp + fp) if tp + fp else zero_division
    r = tp / (tp + fn) if tp + fn else zero_division
    f = 2 * tp / (2 * tp + fp + fn) if tp + fp + fn else zero_division
    return float(p), float(r), float(f)


def _f1(p: float, r: float) -> float:
    return 2 * p * r / (p + r) if p + r > 0 else 0.0


def evaluate(
    gold: sp.spmatrix,
    pred: sp.spmatrix,
    ontology: Ontology,
    *,
    docs: np.ndarray | None = None,
    max_level: str | None = None,
) -> Evaluation:
    """Score predictions against gold labels.

    Parameters
    ----------
    gold, pred : sparse matrix, shape (n_docs, ontology.n_nodes)
        0/1 label matrices on the same document index (see :func:`cophe_core.labels.encode`).
    ontology : Ontology
    docs : array of str, optional
        Document ids, for the per-document tables (default: row numbers).
    max_level : str, optional
        Highest level evaluated and summed into *overall*; default the
        ontology's (``"block"`` for ICD, the paper's "c").

    Returns
    -------
    Evaluation

    Examples
    --------
    >>> from cophe_core.ontology import icd9_ontology
    >>> onto = icd9_ontology()
    >>> gold = sp.csr_matrix(([1], ([0], [onto.codes["401.9"]])), shape=(1, onto.n_nodes))
    >>> pred = sp.csr_matrix(([1], ([0], [onto.codes["401.1"]])), shape=(1, onto.n_nodes))
    >>> ev = evaluate(gold, pred, onto)
    >>> ev.score("flat").f1, ev.score("cophe", "e0").f1
    (0.0, 1.0)
    """
    if gold.shape != pred.shape or gold.shape[1] != ontology.n_nodes:
        raise ValueError(
            f"gold {gold.shape} and predictions {pred.shape} must both be (n_docs, {ontology.n_nodes})"
        )
    max_level = ontology.top_level(max_level)
    if docs is None:
        docs = np.arange(gold.shape[0]).astype(str)
    g = sp.csr_matrix(gold, dtype=np.int8)
    p = sp.csr_matrix(pred, dtype=np.int8)
    g.data[:] = 1
    p.data[:] = 1
    return Evaluation(ontology, np.asarray(docs), g, p, max_level)


def evaluate_corpus(corpus: Corpus, run: str, *, max_level: str | None = None) -> Evaluation:
    """:func:`evaluate` one named run of a :class:`~cophe_core.labels.Corpus` on its own documents
    (:meth:`~cophe_core.labels.Corpus.run_rows`): the gold standard's and the run's, never those only another
    run has, so that every figure of a run is the same whichever runs are scored beside it.

    >>> from cophe_core import score_files
    >>> s = score_files(b"doc_id,code\\n1,401.9\\n", {"A": b"doc_id,code\\n1,401.9\\n", "B": b"doc_id,code\\n2,428.0\\n"})
    >>> evaluate_corpus(s.corpus, "A").docs.tolist(), evaluate_corpus(s.corpus, "B").docs.tolist()
    (['1'], ['1', '2'])
    """
    rows = corpus.run_rows(run)
    every = len(rows) == len(corpus.docs)  # the run has every document: the corpus's matrices as they are
    gold, pred = (corpus.gold, corpus.runs[run]) if every else (corpus.gold[rows], corpus.runs[run][rows])
    ev = evaluate(gold, pred, corpus.ontology, docs=corpus.docs[rows], max_level=max_level)
    mask = np.zeros(len(corpus.docs), dtype=bool)
    mask[rows] = True
    return replace(ev, corpus_mask=mask)


def on_shared_documents(evaluations: Mapping[str, Evaluation]) -> dict[str, Evaluation]:
    """The evaluations on the union of their documents, for comparing runs document by document.

    Each run is evaluated on its own documents (the gold standard's and its own, see :func:`evaluate_corpus`),
    so two runs' documents differ when one has documents that are in no other input. A comparison (a paired
    test, a difference per document or per family) needs both on the same documents: the union of the
    compared runs' (gold ∪ A ∪ B for two runs), each run predicting nothing on a document it lacks, with the
    gold codes of that document as the run that has it reads them (none, for a document outside the gold
    standard). Evaluations on the same documents already come back as they are. They must share the levels.

    >>> from cophe_core import score_files
    >>> s = score_files(b"doc_id,code\\n1,401.9\\n", {"A": b"doc_id,code\\n1,401.9\\n", "B": b"doc_id,code\\n2,428.0\\n"})
    >>> both = on_shared_documents({"A": s.evaluation("A"), "B": s.evaluation("B")})
    >>> both["A"].docs.tolist(), both["A"].score("flat").f1, both["A"].pred.nnz, both["B"].gold.nnz
    (['1', '2'], 1.0, 1, 1)
    """
    evs = dict(evaluations)
    if not evs:
        return {}
    first = next(iter(evs.values()))
    for ev in evs.values():
        if ev.levels != first.levels or ev.ontology.n_nodes != first.ontology.n_nodes:
            raise ValueError("runs compared need the same ontology and levels")
    if all(len(ev.docs) == len(first.docs) and np.array_equal(ev.docs, first.docs) for ev in evs.values()):
        _check_same_gold(evs, np.asarray(first.docs), first.gold)
        return evs
    docs = np.unique(np.concatenate([np.asarray(ev.docs) for ev in evs.values()]))
    n = len(docs)
    places = {name: _placement(np.searchsorted(docs, ev.docs), n) for name, ev in evs.items()}
    held = np.zeros(n, dtype=bool)
    gold = sp.csr_matrix((n, first.ontology.n_nodes), dtype=np.int8)
    for name, ev in evs.items():  # one step per run: each document's gold codes from the first run holding it
        at = np.searchsorted(docs, ev.docs)
        new = ~held[at]
        gold = gold + places[name][:, new] @ ev.gold[new]
        held[at] = True
    _check_same_gold(evs, docs, gold)
    masks = [ev.corpus_mask for ev in evs.values() if ev.corpus_mask is not None]
    # a corpus's documents are sorted, and so each run's: the union of the masks is the union's documents
    corpus_mask = np.logical_or.reduce(masks) if len(masks) == len(evs) else None
    return {
        name: replace(
            evaluate(gold, places[name] @ ev.pred, ev.ontology, docs=docs, max_level=ev.max_level),
            corpus_mask=corpus_mask if corpus_mask is not None and corpus_mask.sum() == n else None,
        )
        for name, ev in evs.items()
    }


def _check_same_gold(evs: dict[str, Evaluation], docs: np.ndarray, gold: sp.csr_matrix) -> None:
    """A ``ValueError`` unless the evaluations are of one gold standard: the same gold codes where two hold a
    document, and none on a document one of them lacks (it can only be another run's own)."""
    for ev in evs.values():
        if ev.gold is gold:
            continue
        at = pd.Index(docs).get_indexer(np.asarray(ev.docs))
        lacks = np.ones(len(docs), dtype=bool)
        lacks[at] = False
        differ = (gold[at] != sp.csr_matrix(ev.gold, dtype=gold.dtype)).nnz
        if differ or gold[np.flatnonzero(lacks)].nnz:
            raise ValueError(
                "runs compared must be scored against the same gold standard, on the same documents where "
                "they share them; score them together (score_files with every run)"
            )


def _placement(at: np.ndarray, n: int) -> sp.csr_matrix:
    """The (n × len(at)) 0/1 matrix that puts row i of a matrix at row ``at[i]`` of n."""
    return sp.csr_matrix((np.ones(len(at), dtype=np.int8), (at, np.arange(len(at)))), shape=(n, len(at)))


# ------------------------------------------------------------------ scikit-learn-style functions
# The functions below take what a training script has: indicator matrices (dense or sparse, documents ×
# labels) and the list of code strings naming their columns, as MultiLabelBinarizer gives them. They are
# plain functions of (y_true, y_pred), so ``sklearn.metrics.make_scorer`` takes them as they are.

HIERARCHICAL_MEASURES = ("cophe", "set_based")
AVERAGES = ("micro", "macro")


def precision_recall_fscore_hierarchical(
    y_true: ArrayLike | sp.spmatrix,
    y_pred: ArrayLike | sp.spmatrix,
    *,
    labels: Sequence[str],
    ontology: str | Ontology,
    measure: str = "cophe",
    level: str = "overall",
    max_level: str | None = None,
    average: str = "micro",
    zero_division: float = 0.0,
    system: str = "auto",
) -> tuple[float, float, float]:
    """Hierarchical precision, recall and F1 of indicator matrices, as the file-based path computes them.

    The counts are those of the module docs: for a document and a node, x (y) predicted (gold) codes at or
    below the node; CoPHE counts TP = min(x, y), FP = max(x − y, 0), FN = max(y − x, 0), the set-based
    measure the same on x > 0 and y > 0.

    - ``average="micro"`` sums TP, FP and FN over the documents and the nodes of ``level`` (``"overall"``:
      of every level up to ``max_level``), then P = TP/(TP+FP), R = TP/(TP+FN), F1 = 2TP/(2TP+FP+FN).
    - ``average="macro"`` averages each node's P, R and F1 over the nodes of ``level`` in play (with a gold
      or a predicted code below them), as the CoPHE scripts do; scikit-learn's macro average also counts
      labels never seen. A macro average is per level: ``level`` must name one.

    A ratio with a zero denominator is ``zero_division`` (scikit-learn's rule: F1 only when TP, FP and FN
    are all 0).

    Parameters
    ----------
    y_true, y_pred : array-like or sparse matrix of shape (n_documents, n_labels)
        0/1 indicators (bool, int or float), one column per code.
    labels : sequence of str
        The code of each column (``MultiLabelBinarizer().classes_``), placed in ``ontology`` as the file
        readers place codes; a code that cannot be placed is an error naming it.
    ontology : str or Ontology
        ``"icd9"``, ``"icd10cm"``, ``"icd10pcs"``, ``"icd10"``, a hierarchy file, or an :class:`Ontology`.
    measure : {"cophe", "set_based"}
    level : str
        ``"overall"`` or one of the ontology's levels (``"e0"``, ``"block"``…), at or below ``max_level``.
    max_level : str, optional
        The highest level summed into ``"overall"`` (default: the ontology's, ``"block"`` for ICD).
    average : {"micro", "macro"}
    zero_division : float
    system : {"auto", "diagnosis", "procedure"}
        For ICD-9: which list undotted codes such as ``4019`` come from.

    Returns
    -------
    precision, recall, f1 : float

    Examples
    --------
    >>> import numpy as np
    >>> labels = ["401.9", "401.1", "428.0"]
    >>> y_true = np.array([[1, 0, 1], [0, 0, 1]])
    >>> y_pred = np.array([[0, 1, 1], [0, 0, 0]])  # 401.1 for 401.9: right family, wrong code
    >>> precision_recall_fscore_hierarchical(y_true, y_pred, labels=labels, ontology="icd9", level="e0")
    (1.0, 0.6666666666666666, 0.8)
    >>> precision_recall_fscore_hierarchical(y_true, y_pred, labels=labels, ontology="icd9", level="e0",
    ...                                      average="macro")
    (1.0, 0.75, 0.8333333333333333)
    """
    ev = _indicator_evaluation(y_true, y_pred, labels, ontology, measure, level, max_level, average, system)
    if average == "micro":
        s = ev.score(measure, level)
        return _prf_zero_division(s.tp, s.fp, s.fn, zero_division)
    nodes = ev.nodes[ev.nodes.level.to_numpy() == level]
    if not len(nodes):
        return (zero_division,) * 3  # no code in play at this level: nothing to average
    prefix = "set_" if measure == "set_based" else ""
    per_node = [
        _prf_zero_division(t, f, n, zero_division)
        for t, f, n in zip(nodes[prefix + "tp"], nodes[prefix + "fp"], nodes[prefix + "fn"])
    ]
    p, r, f = np.mean(np.asarray(per_node, dtype=float), axis=0)
    return float(p), float(r), float(f)


def cophe_score(y_true: ArrayLike | sp.spmatrix, y_pred: ArrayLike | sp.spmatrix, **kwargs: Any) -> float:
    """CoPHE F1 of indicator matrices: :func:`precision_recall_fscore_hierarchical` with
    ``measure="cophe"`` (keywords as there), its third value.

    Examples
    --------
    >>> import numpy as np
    >>> cophe_score(np.array([[1, 0]]), np.array([[0, 1]]), labels=["401.9", "401.1"], ontology="icd9",
    ...             level="e0")
    1.0
    """
    return precision_recall_fscore_hierarchical(y_true, y_pred, measure="cophe", **kwargs)[2]


def set_based_score(y_true: ArrayLike | sp.spmatrix, y_pred: ArrayLike | sp.spmatrix, **kwargs: Any) -> float:
    """Set-based F1 (Kosmopoulos et al.) of indicator matrices: :func:`precision_recall_fscore_hierarchical`
    with ``measure="set_based"``, its third value.

    Examples
    --------
    >>> import numpy as np
    >>> y_true, y_pred = np.array([[1, 1, 0]]), np.array([[1, 0, 0]])  # two codes of 401, one predicted
    >>> set_based_score(y_true, y_pred, labels=["401.9", "401.1", "428.0"], ontology="icd9", level="e0")
    1.0
    >>> cophe_score(y_true, y_pred, labels=["401.9", "401.1", "428.0"], ontology="icd9", level="e0")
    0.6666666666666666
    """
    return precision_recall_fscore_hierarchical(y_true, y_pred, measure="set_based", **kwargs)[2]


def precision_recall_fscore_hierarchical_from_scores(
    y_true: ArrayLike | sp.spmatrix,
    y_score: ArrayLike | sp.spmatrix,
    *,
    labels: Sequence[str],
    ontology: str | Ontology,
    threshold: float | None = None,
    top_k: int | None = None,
    **kwargs: Any,
) -> tuple[float, float, float]:
    """:func:`precision_recall_fscore_hierarchical` of probabilities, decided by exactly one rule, as the
    file-based path decides them: ``threshold`` keeps the scores ≥ t (0 < t ≤ 1); ``top_k`` the k highest of
    each document (ties broken by the code, ascending).

    Parameters
    ----------
    y_score : array-like or sparse matrix of shape (n_documents, n_labels)
        Probabilities in [0, 1]; a sparse matrix's unstored cells are 0.

    Other parameters are those of :func:`precision_recall_fscore_hierarchical`.

    Examples
    --------
    >>> import numpy as np
    >>> y_true = np.array([[1, 0, 1]])
    >>> y_score = np.array([[0.2, 0.7, 0.9]])
    >>> labels = ["401.9", "401.1", "428.0"]
    >>> precision_recall_fscore_hierarchical_from_scores(y_true, y_score, labels=labels, ontology="icd9",
    ...                                                  threshold=0.5, level="e0")
    (1.0, 1.0, 1.0)
    >>> cophe_score_from_scores(y_true, y_score, labels=labels, ontology="icd9", top_k=1, level="e1")
    0.6666666666666666
    """
    from .ontology import load_ontology

    names = _labels(labels)
    scores = _indicators(y_score, "y_score", len(names), scores=True)
    onto, columns = _place_labels(names, load_ontology(ontology), kwargs.get("system", "auto"))
    # decided on the codes' nodes by the file-based path's own rule (ties go to the code that sorts first),
    # then moved back onto the label columns
    on_nodes = scores @ columns
    on_nodes = on_nodes.tocsr()
    rule = check_rule(threshold, top_k)
    found = ranks(on_nodes, onto.keys) if rule[0] == "top_k" else None
    y_pred = decide(on_nodes, rule, ranks=found) @ columns.T
    return precision_recall_fscore_hierarchical(y_true, y_pred, labels=names, ontology=ontology, **kwargs)


def cophe_score_from_scores(
    y_true: ArrayLike | sp.spmatrix, y_score: ArrayLike | sp.spmatrix, **kwargs: Any
) -> float:
    """CoPHE F1 of probabilities: :func:`precision_recall_fscore_hierarchical_from_scores` with
    ``measure="cophe"``, its third value.

    Examples
    --------
    >>> import numpy as np
    >>> cophe_score_from_scores(np.array([[1, 0]]), np.array([[0.3, 0.8]]), labels=["401.9", "401.1"], ontology="icd9", threshold=0.5, level="e0")
    1.0
    """
    return precision_recall_fscore_hierarchical_from_scores(y_true, y_score, measure="cophe", **kwargs)[2]


def set_based_score_from_scores(
    y_true: ArrayLike | sp.spmatrix, y_score: ArrayLike | sp.spmatrix, **kwargs: Any
) -> float:
    """Set-based F1 of probabilities: :func:`precision_recall_fscore_hierarchical_from_scores` with
    ``measure="set_based"``, its third value.

    Examples
    --------
    >>> import numpy as np
    >>> set_based_score_from_scores(np.array([[1, 0]]), np.array([[0.4, 0.6]]), labels=["401.9", "401.1"],
    ...                             ontology="icd9", threshold=0.5, level="e0")
    1.0
    """
    return precision_recall_fscore_hierarchical_from_scores(y_true, y_score, measure="set_based", **kwargs)[2]


def _indicator_evaluation(
    y_true: ArrayLike | sp.spmatrix,
    y_pred: ArrayLike | sp.spmatrix,
    labels: Sequence[str],
    ontology: str | Ontology,
    measure: str,
    level: str,
    max_level: str | None,
    average: str,
    system: str,
) -> Evaluation:
    """Every check of the functions above, in one place, then the :class:`Evaluation` of the placed
    matrices."""
    from .ontology import load_ontology

    if measure not in HIERARCHICAL_MEASURES:
        raise ValueError(f"measure must be one of {', '.join(HIERARCHICAL_MEASURES)}, not {measure!r}")
    if average not in AVERAGES:
        raise ValueError(f"average must be one of {', '.join(AVERAGES)}, not {average!r}")
    names = _labels(labels)
    gold = _indicators(y_true, "y_true", len(names))
    pred = _indicators(y_pred, "y_pred", len(names))
    if gold.shape != pred.shape:
        raise ValueError(f"y_true {gold.shape} and y_pred {pred.shape} must have the same shape")
    onto, columns = _place_labels(names, load_ontology(ontology), system)
    top = onto.top_level(max_level)
    below = onto.levels_up_to(top)
    if average == "macro" and level == "overall":
        raise ValueError("a macro average is per level: give level= one of " + ", ".join(below))
    if level != "overall" and level not in below:
        raise ValueError(
            f"level must be 'overall' or one of {', '.join(below)} (up to max_level), not {level!r}"
        )
    return evaluate(gold @ columns, pred @ columns, onto, max_level=top)


def _labels(labels: Sequence[str]) -> list[str]:
    names = [str(x) for x in labels]
    if not names:
        raise ValueError("labels is empty: give the code of each column")
    repeated = [x for x, again in zip(names, pd.Index(names).duplicated(), strict=True) if again]
    if repeated:
        raise ValueError(f"labels must be distinct; repeated: {', '.join(map(repr, repeated[:5]))}")
    return names


def dense_cells(a: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The non-zero cells of a 2-D array, in row-major order: their rows, columns and values.

    One scan of the array: a boolean mask, then its flat positions (``np.nonzero`` on floats, or on a 2-D
    mask, is about ten times slower; turning a dense float array into a sparse matrix slower still).

    >>> rows, cols, vals = dense_cells(np.array([[0, 0.5], [1, 0]], dtype=np.float32))
    >>> rows.tolist(), cols.tolist(), vals.tolist()
    ([0, 1], [1, 0], [0.5, 1.0])
    """
    flat = np.ravel(a)
    at = np.flatnonzero(flat != 0)  # NaN != 0 as well: a NaN is a cell, for the caller's check to find
    rows, cols = np.divmod(at, a.shape[1])
    return rows, cols, flat[at]


def _indicators(
    y: ArrayLike | sp.spmatrix, name: str, n_labels: int, *, scores: bool = False
) -> sp.csr_matrix:
    """``y`` as a float CSR matrix of n_labels columns, checked: 0/1 indicators, or scores in [0, 1]."""
    a: sp.spmatrix | NDArray[Any] = y if sp.issparse(y) else np.asarray(y)
    if sp.issparse(a) or a.ndim != 2:
        m = sp.csr_matrix(a, dtype=float)
    else:  # a model's dense output: its cells found in one scan, never a dense float64 copy
        rows, cols, vals = dense_cells(a)
        m = sp.csr_matrix((vals.astype(float), (rows, cols)), shape=a.shape)
    if m.ndim != 2 or m.shape[1] != n_labels:
        raise ValueError(f"{name} has shape {m.shape}; it needs one column per label ({n_labels})")
    if not np.isfinite(m.data).all() or (m.data < 0).any() or (m.data > 1).any():
        raise ValueError(f"{name} holds values outside [0, 1]" + ("" if scores else " (it must be 0/1)"))
    if not scores and ((m.data != 0) & (m.data != 1)).any():
        raise ValueError(
            f"{name} must hold 0/1 indicators; for probabilities use the *_from_scores functions"
        )
    m.eliminate_zeros()
    return m


def _place_labels(names: list[str], onto: Ontology, system: str) -> tuple[Ontology, sp.csr_matrix]:
    """The ontology (extended with placed unlisted codes) and the labels × nodes 0/1 matrix that moves each
    column onto its code's node; an error naming the labels that cannot be placed or that fall together."""
    from .labels import resolve_codes

    r = resolve_codes(names, onto, system=system)
    if r.reasons:
        bad = "; ".join(f"{names[i]!r}: {words}" for i, (_, words) in list(r.reasons.items())[:5])
        raise ValueError(f"{len(r.reasons)} of the labels cannot be placed in {onto.name}: {bad}")
    nodes, first = np.unique(r.nodes, return_index=True)
    if len(nodes) < len(names):
        twice = [i for i in range(len(names)) if i not in set(first.tolist())]
        same = [f"{names[i]!r} is {r.ontology.keys[r.nodes[i]]}" for i in twice[:5]]
        raise ValueError(f"labels name the same code twice: {', '.join(same)}; merge those columns")
    columns = sp.csr_matrix(
        (np.ones(len(names)), (np.arange(len(names)), r.nodes)), shape=(len(names), r.ontology.n_nodes)
    )
    return r.ontology, columns
