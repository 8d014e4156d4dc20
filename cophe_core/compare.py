"""Side-by-side comparison of runs scored against the same gold standard."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np
import pandas as pd
import scipy.sparse as sp
from numpy.typing import NDArray

from .metrics import Evaluation, Figures, balance, on_shared_documents, prf
from .tree import COUNTS

__all__ = [
    "levels_side_by_side",
    "level_deltas",
    "compare_nodes",
    "disagreements",
    "HEADLINE_COLUMNS",
    "headlines",
    "figure_parts",
]

#: The columns of :func:`headlines`: (measure, statistic), each the overall figure of its measure.
HEADLINE_COLUMNS: dict[str, tuple[str, str]] = {
    "flat_f1": ("flat", "f1"),
    "set_based_f1": ("set_based", "f1"),
    "cophe_f1": ("cophe", "f1"),
    "cophe_precision": ("cophe", "precision"),
    "cophe_recall": ("cophe", "recall"),
}


def levels_side_by_side(evals: Mapping[str, Figures]) -> pd.DataFrame:
    """:attr:`Evaluation.levels_table` of each run, stacked with a ``run`` column first.

    Examples
    --------
    >>> from cophe_core import score_files
    >>> gold = b"doc_id,code\\n1,401.9\\n1,428.0\\n2,250.00\\n"
    >>> runs = {"A": b"doc_id,code\\n1,401.1\\n2,250.00\\n", "B": b"doc_id,code\\n1,401.9\\n1,428.0\\n2,250.01\\n"}
    >>> s = score_files(gold, runs)
    >>> a, b = s.evaluation("A"), s.evaluation("B")
    >>> t = levels_side_by_side({"A": a, "B": b})
    >>> t[(t.measure == "cophe") & (t.level == "overall")][["run", "tp", "fp", "fn"]].values.tolist()
    [['A', 6, 1, 4], ['B', 9, 1, 1]]
    """
    return pd.concat([ev.levels_table.assign(run=name) for name, ev in evals.items()], ignore_index=True)[
        ["run", *evals[next(iter(evals))].levels_table.columns]
    ]


def _figure_id(measure: str, stat: str) -> str:
    """The name :func:`cophe_core.stats.bootstrap` gives an overall figure."""
    return f"flat {stat}" if measure == "flat" else f"{measure} overall {stat}"


def headlines(evals: Mapping[str, Figures], intervals: dict[str, pd.DataFrame] | None = None) -> pd.DataFrame:
    """Runs × headline figures: one row per run (index ``run``), the columns of :data:`HEADLINE_COLUMNS`
    (the overall F1 of each measure, CoPHE's precision and recall) from :meth:`Evaluation.score`.

    With ``intervals`` (run → its :func:`cophe_core.stats.bootstrap` table), each column ``c`` is followed
    by ``c_low`` and ``c_high``, the bounds of its interval (NaN for a run without a table).

    >>> from cophe_core import score_files
    >>> gold = b"doc_id,code\\n1,364.11\\n1,364.24\\n1,364.9\\n"
    >>> s = score_files(gold, {"paper": b"doc_id,code\\n1,364.11\\n1,364.21\\n1,364.3\\n1,364.41\\n"})
    >>> headlines({"paper": s.evaluation("paper", max_level="e0")}).round(3).iloc[0].tolist()
    [0.286, 0.571, 0.632, 0.545, 0.75]
    """
    rows = {}
    for run, ev in evals.items():
        scores = {m: ev.score(m) for m in dict.fromkeys(m for m, _ in HEADLINE_COLUMNS.values())}
        row: dict[str, float] = {}
        table = None if intervals is None or run not in intervals else intervals[run].set_index("figure")
        for col, (m, stat) in HEADLINE_COLUMNS.items():
            row[col] = getattr(scores[m], stat)
            if intervals is not None:
                fig = _figure_id(m, stat)
                bounds = table.loc[fig] if table is not None and fig in table.index else None
                row[f"{col}_low"] = bounds["low"] if bounds is not None else np.nan
                row[f"{col}_high"] = bounds["high"] if bounds is not None else np.nan
        rows[run] = row
    out = pd.DataFrame.from_dict(rows, orient="index", dtype=float)
    out.index.name = "run"
    return out


def figure_parts(figure: str) -> tuple[str, str | None, str]:
    """A :func:`cophe_core.stats.bootstrap` figure name split into (measure, level, statistic); the level
    is ``"overall"`` for an overall figure and None for a flat one or a suite metric (measure is then
    the metric's id and statistic ``"value"``).

    >>> figure_parts("cophe overall f1"), figure_parts("set_based e0 f1"), figure_parts("flat precision")
    (('cophe', 'overall', 'f1'), ('set_based', 'e0', 'f1'), ('flat', None, 'precision'))
    >>> figure_parts("icm_norm")
    ('icm_norm', None, 'value')
    """
    parts = figure.split(" ")
    if len(parts) == 3:
        return parts[0], parts[1], parts[2]
    if len(parts) == 2:
        return parts[0], None, parts[1]
    return figure, None, "value"


def level_deltas(a: Evaluation, b: Evaluation) -> pd.DataFrame:
    """B − A for precision, recall and F1, per measure and level.

    Examples
    --------
    >>> from cophe_core import score_files
    >>> gold = b"doc_id,code\\n1,401.9\\n1,428.0\\n2,250.00\\n"
    >>> runs = {"A": b"doc_id,code\\n1,401.1\\n2,250.00\\n", "B": b"doc_id,code\\n1,401.9\\n1,428.0\\n2,250.01\\n"}
    >>> s = score_files(gold, runs)
    >>> a, b = s.evaluation("A"), s.evaluation("B")
    >>> d = level_deltas(a, b).set_index(["measure", "level"])
    >>> round(float(d.loc[("flat", "leaf"), "delta_f1"]), 3)
    0.267
    """
    ta, tb = a.levels_table, b.levels_table
    out = ta[["measure", "level"]].copy()
    for k in ("precision", "recall", "f1"):
        out[f"a_{k}"], out[f"b_{k}"] = ta[k].to_numpy(), tb[k].to_numpy()
        out[f"delta_{k}"] = out[f"b_{k}"] - out[f"a_{k}"]
    return out


def compare_nodes(a: Evaluation, b: Evaluation) -> pd.DataFrame:
    """Per node in play in either run: counts prefixed ``a_`` and ``b_``, their rates, and
    ``delta_f1`` and ``delta_balance`` (B − A). Columns ``node`` and ``parent`` as in
    :attr:`Evaluation.nodes`, so the table feeds :func:`cophe_core.tree.focused_subtree`.

    Examples
    --------
    >>> from cophe_core import score_files
    >>> gold = b"doc_id,code\\n1,401.9\\n1,428.0\\n2,250.00\\n"
    >>> runs = {"A": b"doc_id,code\\n1,401.1\\n2,250.00\\n", "B": b"doc_id,code\\n1,401.9\\n1,428.0\\n2,250.01\\n"}
    >>> s = score_files(gold, runs)
    >>> a, b = s.evaluation("A"), s.evaluation("B")
    >>> n = compare_nodes(a, b)
    >>> n[n.node == a.ontology.codes["401"]][["a_tp", "b_tp", "a_fp", "b_fp"]].values.tolist()
    [[1, 1, 0, 0]]
    """
    na = a.nodes.set_index("node")
    nb = b.nodes.set_index("node")
    idx = na.index.union(nb.index)
    o = a.ontology
    out = pd.DataFrame({"node": idx, "parent": o.parent[idx]})
    for prefix, t in (("a_", na), ("b_", nb)):
        counts = t[COUNTS].reindex(idx, fill_value=0).astype(np.int64)
        for k in COUNTS:
            out[prefix + k] = counts[k].to_numpy()
        p, r, f = prf(out[prefix + "tp"], out[prefix + "fp"], out[prefix + "fn"])
        out[prefix + "f1"] = f
        out[prefix + "balance"] = balance(out[prefix + "tp"], out[prefix + "fp"], out[prefix + "fn"])
    out["delta_f1"] = out.b_f1 - out.a_f1
    out["delta_balance"] = out.b_balance - out.a_balance
    out["code"] = o.keys[idx]
    out["title"] = o.titles[idx]
    out["level"] = np.asarray(o.levels, dtype=object)[o.level[idx]]
    return out


def disagreements(a: Evaluation, b: Evaluation, *, level: str = "e0", top: int = 50) -> pd.DataFrame:
    """Documents where two runs differ most.

    ``only_a`` / ``only_b``: codes predicted by one run and not the other;
    ``a_f1`` / ``b_f1``: the document's CoPHE F1 at ``level``; sorted by the number
    of codes the runs disagree on, then by |B − A| F1. The two runs are compared on the union of their
    documents (gold ∪ A ∪ B: :func:`~cophe_core.metrics.on_shared_documents`).

    Examples
    --------
    >>> from cophe_core import score_files
    >>> gold = b"doc_id,code\\n1,401.9\\n1,428.0\\n2,250.00\\n"
    >>> runs = {"A": b"doc_id,code\\n1,401.1\\n2,250.00\\n", "B": b"doc_id,code\\n1,401.9\\n1,428.0\\n2,250.01\\n"}
    >>> s = score_files(gold, runs)
    >>> a, b = s.evaluation("A"), s.evaluation("B")
    >>> disagreements(a, b)[["doc_id", "only_a", "only_b"]].values.tolist()
    [['1', '401.1', '401.9, 428.0'], ['2', '250.00', '250.01']]
    """
    a, b = on_shared_documents({"a": a, "b": b}).values()
    diff = (a.pred != b.pred).tocsr()
    only_a = a.pred.multiply(diff)
    only_b = b.pred.multiply(diff)
    fa = a.document_counts("cophe", level).f1
    fb = b.document_counts("cophe", level).f1
    keys = a.ontology.keys

    def codes(m: sp.spmatrix, rows: NDArray[np.intp]) -> list[str]:
        m = m.tocsr()
        return [", ".join(sorted(keys[m.indices[m.indptr[r] : m.indptr[r + 1]]])) for r in rows]

    n_diff = np.asarray(diff.sum(1)).ravel()
    order = np.lexsort((-np.abs(fb - fa), -n_diff))[:top]
    order = order[n_diff[order] > 0]
    return pd.DataFrame(
        {
            "doc_id": a.docs[order],
            "codes_disagreed": n_diff[order],
            "only_a": codes(only_a, order),
            "only_b": codes(only_b, order),
            "a_f1": fa[order],
            "b_f1": fb[order],
            "delta_f1": fb[order] - fa[order],
        }
    )


def delta_subtree(a: Evaluation, b: Evaluation, focus: int | None = None, **kw: Any) -> pd.DataFrame:
    """:func:`cophe_core.tree.focused_subtree` of :func:`compare_nodes`, with B − A
    ``delta_f1`` and ``delta_balance`` recomputed on every row (Other buckets included)."""
    from .tree import focused_subtree

    sub = focused_subtree(
        compare_nodes(a, b), a.ontology, focus, prefixes=("a_", "b_"), size="gold+predicted", **kw
    )
    sub["delta_f1"] = sub.b_f1 - sub.a_f1
    sub["delta_balance"] = sub.b_balance - sub.a_balance
    return sub
