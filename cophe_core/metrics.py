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

from collections.abc import Sequence
from dataclasses import dataclass
from functools import cached_property
from typing import Any

import numpy as np
import pandas as pd
import scipy.sparse as sp

from .labels import Corpus
from .ontology import Ontology

__all__ = [
    "prf",
    "balance",
    "evaluate",
    "Evaluation",
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


def prf(tp, fp, fn) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
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


def balance(tp, fp, fn) -> np.ndarray:
    """Extra against missed codes, elementwise: (FP − FN) / (TP + FP + FN) in [−1, 1]; 0 where there are no
    counts. −1: every error a missed code; +1: every error an extra one.

    >>> balance([1, 0, 0], [3, 0, 0], [0, 2, 0]).tolist()
    [0.75, -1.0, 0.0]
    """
    tp, fp, fn = (np.asarray(a, dtype=float) for a in (tp, fp, fn))
    total = tp + fp + fn
    return np.divide(fp - fn, total, out=np.zeros_like(total), where=total > 0)


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


@dataclass(frozen=True, eq=False)
class Evaluation:
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

    # ----------------------------------------------------------------- counts
    @cached_property
    def levels(self) -> list[str]:
        """Evaluated levels, bottom-up, up to ``max_level``."""
        top = self.ontology.level_index(self.max_level)
        return list(self.ontology.levels[: top + 1])

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
    def _node_counts(self) -> dict[str, np.ndarray]:
        n = self.ontology.n_nodes
        x, y, tp = _colsum(self.X, n), _colsum(self.Y, n), _colsum(self._min, n)
        sx, sy, stp = _colcount(self.X, n), _colcount(self.Y, n), _colcount(self._min, n)
        return {
            "gold": y,
            "predicted": x,
            "tp": tp,
            "fp": x - tp,
            "fn": y - tp,
            "set_tp": stp,
            "set_fp": sx - stp,
            "set_fn": sy - stp,
        }

    @cached_property
    def _docs_over_under(self) -> dict[str, np.ndarray]:
        # apart from the counts: only the node table needs them, and X − Y is the costliest step
        n = self.ontology.n_nodes
        diff = (self.X - self.Y).tocsr()
        diff.eliminate_zeros()
        return {
            "docs_over": np.bincount(diff.indices[diff.data > 0], minlength=n),
            "docs_under": np.bincount(diff.indices[diff.data < 0], minlength=n),
        }

    @cached_property
    def flat_counts(self) -> dict[str, np.ndarray]:
        """Per node, the exact codes compared as sets: ``tp`` (written and in the gold standard), ``fp``
        (written only) and ``fn`` (in the gold standard only), summed over the documents; arrays of
        ``ontology.n_nodes``. The flat measure sums them."""
        n = self.ontology.n_nodes
        both = self.gold.multiply(self.pred).tocsr()
        both.eliminate_zeros()
        tp = _colcount(both, n)
        return {"tp": tp, "fp": _colcount(self.pred, n) - tp, "fn": _colcount(self.gold, n) - tp}

    # ----------------------------------------------------------------- tables
    @cached_property
    def levels_table(self) -> pd.DataFrame:
        """Micro TP/FP/FN/P/R/F1 per measure and level, plus ``overall``.

        Columns ``measure, level, tp, fp, fn, precision, recall, f1``; the flat
        row has level ``"leaf"``.
        """
        return self._levels_rows(np.ones(self.ontology.n_nodes, dtype=bool))

    @cached_property
    def systems_table(self) -> pd.DataFrame | None:
        """For an ontology of several code systems (``icd10``): :attr:`levels_table` per system,
        with a ``system`` column first; ``None`` otherwise."""
        systems = self.ontology.systems
        if systems is None or len(set(systems)) < 2:
            return None
        return pd.concat(
            [self._levels_rows(systems == name).assign(system=name) for name in sorted(set(systems))],
            ignore_index=True,
        )[["system", "measure", "level", "tp", "fp", "fn", "precision", "recall", "f1"]]

    def _levels_rows(self, mask: np.ndarray) -> pd.DataFrame:
        rows = []
        f = self.flat_counts
        rows.append(("flat", FLAT_LEVEL, f["tp"][mask].sum(), f["fp"][mask].sum(), f["fn"][mask].sum()))
        c = self._node_counts
        lv = self.ontology.level[mask]
        nlev = len(self.levels)
        for measure, prefix in (("set_based", "set_"), ("cophe", "")):
            per = {
                k: np.bincount(lv, weights=c[prefix + k][mask], minlength=nlev)[:nlev]
                for k in ("tp", "fp", "fn")
            }
            for i, name in enumerate(self.levels):
                rows.append((measure, name, per["tp"][i], per["fp"][i], per["fn"][i]))
            rows.append((measure, "overall", per["tp"].sum(), per["fp"].sum(), per["fn"].sum()))
        df = pd.DataFrame(rows, columns=["measure", "level", "tp", "fp", "fn"])
        df[["tp", "fp", "fn"]] = df[["tp", "fp", "fn"]].astype(np.int64)
        df["precision"], df["recall"], df["f1"] = prf(df.tp, df.fp, df.fn)
        return df

    def score(self, measure: str = "cophe", level: str = "overall") -> dict[str, float]:
        """One row of :attr:`levels_table` as a dict (``level="leaf"`` for flat).

        >>> from cophe_core.ontology import icd9_ontology
        >>> onto = icd9_ontology()
        >>> gold = sp.csr_matrix(([1, 1], ([0, 0], [onto.codes["401.9"], onto.codes["428.0"]])), shape=(1, onto.n_nodes))
        >>> pred = sp.csr_matrix(([1], ([0], [onto.codes["401.1"]])), shape=(1, onto.n_nodes))
        >>> evaluate(gold, pred, onto).score("cophe", "e0")
        {'tp': 1, 'fp': 0, 'fn': 1, 'precision': 1.0, 'recall': 0.5, 'f1': 0.6666666666666666}
        """
        return _score_row(self.levels_table, measure, level)

    def _repr_html_(self) -> str:
        """In Jupyter: what was scored, then :attr:`levels_table`."""
        import html

        head = (
            f"<p><b>Evaluation</b>: {len(self.docs):,} documents, ontology {html.escape(self.ontology.name)}, "
            f"levels up to {html.escape(self.max_level)}; code sets "
            + html.escape("; ".join(f"{k} ({v})" for k, v in self.ontology.code_sets.items()) or "none")
            + "</p>"
        )
        return head + self.levels_table.to_html(index=False, float_format="{:.4f}".format)

    @cached_property
    def macro_table(self) -> pd.DataFrame:
        """Macro averages per measure and level, in both definitions (see module doc).

        Columns ``measure, level, n_codes, macro_precision, macro_recall,
        macro_f1`` (mean of per-code F1) and ``macro_f1_of_means``.
        """
        rows = []
        f = self.flat_counts
        in_play = (f["tp"] + f["fp"] + f["fn"]) > 0
        rows.append(("flat", FLAT_LEVEL, *self._macro(f["tp"], f["fp"], f["fn"], in_play)))
        c = self._node_counts
        for i, name in enumerate(self.levels):
            at = (self.ontology.level == i) & ((c["gold"] + c["predicted"]) > 0)
            rows.append(("set_based", name, *self._macro(c["set_tp"], c["set_fp"], c["set_fn"], at)))
            rows.append(("cophe", name, *self._macro(c["tp"], c["fp"], c["fn"], at)))
        return pd.DataFrame(
            rows,
            columns=[
                "measure",
                "level",
                "n_codes",
                "macro_precision",
                "macro_recall",
                "macro_f1",
                "macro_f1_of_means",
            ],
        )

    @staticmethod
    def _macro(tp, fp, fn, mask) -> tuple[int, float, float, float, float]:
        if not mask.any():
            return 0, 0.0, 0.0, 0.0, 0.0
        p, r, f = prf(tp[mask], fp[mask], fn[mask])
        mp, mr = float(p.mean()), float(r.mean())
        return int(mask.sum()), mp, mr, float(f.mean()), _f1(mp, mr)

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
        c = self._node_counts
        idx = np.nonzero((c["gold"] + c["predicted"]) > 0)[0]
        o = self.ontology
        df = pd.DataFrame(
            {
                "node": idx,
                "level": np.asarray(o.levels, dtype=object)[o.level[idx]],
                "code": o.keys[idx],
                "title": o.titles[idx],
                "parent": o.parent[idx],
                **{k: v[idx] for k, v in (c | self._docs_over_under).items()},
                "listed": o.listed[idx],
            }
        )
        df["precision"], df["recall"], df["f1"] = prf(df.tp, df.fp, df.fn)
        df["set_precision"], df["set_recall"], df["set_f1"] = prf(df.set_tp, df.set_fp, df.set_fn)
        df["balance"] = balance(df.tp, df.fp, df.fn)
        order = [
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
        return df[order]

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

    def to_dict(self) -> dict[str, Any]:
        """The CLI's JSON shape: ontology, code_sets, levels, documents, flat, set_based, cophe.

        ``code_sets`` is the ontology's :attr:`~cophe_core.ontology.Ontology.code_sets`:
        system → release, which a published score should quote.
        """
        out: dict[str, Any] = {
            "ontology": self.ontology.name,
            "code_sets": dict(self.ontology.code_sets),
            "levels": list(self.levels),
            "documents": int(len(self.docs)),
            "flat": self.score("flat"),
        }
        for measure in ("set_based", "cophe"):
            out[measure] = {
                "levels": {lv: self.score(measure, lv) for lv in self.levels},
                "overall": self.score(measure, "overall"),
            }
        if self.systems_table is not None:
            st = self.systems_table
            out["systems"] = {
                name: {
                    measure: (
                        {
                            "levels": {lv: _score_row(g, measure, lv) for lv in self.levels},
                            "overall": _score_row(g, measure, "overall"),
                        }
                        if measure != "flat"
                        else _score_row(g, "flat")
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


def _score_row(table: pd.DataFrame, measure: str, level: str = "overall") -> dict[str, float]:
    """The row of a :attr:`Evaluation.levels_table`-shaped ``table`` for ``measure`` at ``level`` (flat: its
    one row) as a dict. Compared as arrays: a pandas filter on string columns costs a millisecond a call,
    and the views call this often."""
    wanted = FLAT_LEVEL if measure == "flat" else level
    at = np.flatnonzero((table.measure.to_numpy() == measure) & (table.level.to_numpy() == wanted))
    if not len(at):
        raise KeyError(f"no {measure} score at level {level!r}")
    return {
        k: (int(table[k].iat[at[0]]) if k in ("tp", "fp", "fn") else float(table[k].iat[at[0]]))
        for k in ("tp", "fp", "fn", "precision", "recall", "f1")
    }


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
    >>> ev.score("flat")["f1"], ev.score("cophe", "e0")["f1"]
    (0.0, 1.0)
    """
    if gold.shape != pred.shape or gold.shape[1] != ontology.n_nodes:
        raise ValueError(
            f"gold {gold.shape} and predictions {pred.shape} must both be (n_docs, {ontology.n_nodes})"
        )
    max_level = max_level or ontology.default_level
    ontology.level_index(max_level)
    if docs is None:
        docs = np.arange(gold.shape[0]).astype(str)
    g = sp.csr_matrix(gold, dtype=np.int8)
    p = sp.csr_matrix(pred, dtype=np.int8)
    g.data[:] = 1
    p.data[:] = 1
    return Evaluation(ontology, np.asarray(docs), g, p, max_level)


def evaluate_corpus(corpus: Corpus, run: str, *, max_level: str | None = None) -> Evaluation:
    """:func:`evaluate` one named run of a :class:`~cophe_core.labels.Corpus`."""
    return evaluate(corpus.gold, corpus.runs[run], corpus.ontology, docs=corpus.docs, max_level=max_level)


# ------------------------------------------------------------------ scikit-learn-style functions
# The functions below take what a training script has: indicator matrices (dense or sparse, documents ×
# labels) and the list of code strings naming their columns, as MultiLabelBinarizer gives them. They are
# plain functions of (y_true, y_pred), so ``sklearn.metrics.make_scorer`` takes them as they are.

HIERARCHICAL_MEASURES = ("cophe", "set_based")
AVERAGES = ("micro", "macro")


def precision_recall_fscore_hierarchical(
    y_true,
    y_pred,
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
        return _prf_zero_division(s["tp"], s["fp"], s["fn"], zero_division)
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


def cophe_score(y_true, y_pred, **kwargs: Any) -> float:
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


def set_based_score(y_true, y_pred, **kwargs: Any) -> float:
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
    y_true,
    y_score,
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
    from .scores import ScoredRun

    names = _labels(labels)
    scores = _indicators(y_score, "y_score", len(names), scores=True)
    onto, columns = _place_labels(names, load_ontology(ontology), kwargs.get("system", "auto"))
    # decided on the codes' nodes by the file-based path's own rule (ties go to the code that sorts first),
    # then moved back onto the label columns
    on_nodes = scores @ columns
    run = ScoredRun(
        onto, np.arange(scores.shape[0]).astype(str), sp.csr_matrix(on_nodes.shape), on_nodes.tocsr()
    )
    y_pred = run.decide(threshold=threshold, top_k=top_k) @ columns.T
    return precision_recall_fscore_hierarchical(y_true, y_pred, labels=names, ontology=ontology, **kwargs)


def cophe_score_from_scores(y_true, y_score, **kwargs: Any) -> float:
    """CoPHE F1 of probabilities: :func:`precision_recall_fscore_hierarchical_from_scores` with
    ``measure="cophe"``, its third value.

    Examples
    --------
    >>> import numpy as np
    >>> cophe_score_from_scores(np.array([[1, 0]]), np.array([[0.3, 0.8]]), labels=["401.9", "401.1"], ontology="icd9", threshold=0.5, level="e0")
    1.0
    """
    return precision_recall_fscore_hierarchical_from_scores(y_true, y_score, measure="cophe", **kwargs)[2]


def set_based_score_from_scores(y_true, y_score, **kwargs: Any) -> float:
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


def _indicator_evaluation(y_true, y_pred, labels, ontology, measure, level, max_level, average, system):
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
    top = max_level or onto.default_level
    below = onto.levels[: onto.level_index(top) + 1]
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
    seen: set[str] = set()
    repeated = [x for x in names if x in seen or seen.add(x)]  # type: ignore[func-returns-value]
    if repeated:
        raise ValueError(f"labels must be distinct; repeated: {', '.join(map(repr, repeated[:5]))}")
    return names


def _indicators(y, name: str, n_labels: int, *, scores: bool = False) -> sp.csr_matrix:
    """``y`` as a float CSR matrix of n_labels columns, checked: 0/1 indicators, or scores in [0, 1]."""
    m = sp.csr_matrix(y, dtype=float) if sp.issparse(y) else sp.csr_matrix(np.asarray(y, dtype=float))
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
