"""Within-family over- and under-coding: what separates CoPHE from set-based scores.

At a level L, a *shared family* is a (document, node) pair where both the gold
standard and the predictions have codes at or below the node (x > 0 and y > 0).
Set-based scoring counts such a pair as one true positive, whatever x and y.
CoPHE keeps the counts, so inside shared families

- over-coding = Σ max(x − y, 0): codes predicted beyond the gold count;
- under-coding = Σ max(y − x, 0): gold codes the predictions fell short of.

Both are reported as a share of the gold codes in shared families. When either
is non-zero, CoPHE falls below set-based (seed 003); :func:`describe_gaps`
says so in words.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
import pandas as pd
import scipy.sparse as sp
from numpy.typing import ArrayLike, NDArray

from ..metrics import Evaluation, Figures, on_shared_documents
from .stats import document_weights

__all__ = [
    "within_family",
    "describe_gaps",
    "gap_statement",
    "family_errors",
    "family_changes",
    "MIN_SUPPORT",
    "per_gold_rates",
]

PRODUCT_CELLS = 2_000_000  # cells of one block of resampled family counts (16 MB)


def within_family(ev: Figures) -> pd.DataFrame:
    """Per evaluated level: ``level, shared_families, gold_codes, predicted_codes, over, under,
    over_share, under_share, set_f1, cophe_f1``.

    >>> from cophe_core import score_files
    >>> s = score_files(b"doc_id,code\\n1,401.9\\n", {"A": b"doc_id,code\\n1,401.9\\n1,401.1\\n"})
    >>> row = within_family(s.evaluation("A")).set_index("level").loc["e0"]
    >>> int(row.over), float(row.over_share)
    (1, 1.0)
    """
    # a function of the per-node counts (so of streamed and aggregate evaluations too): over the (document,
    # family) pairs that both hold, Σx and Σy are shared_predicted and shared_gold, min(x, y) sums to the
    # family's TP (it is 0 where either is), so over = Σ max(x − y, 0) = Σx − TP and under = Σy − TP
    c = ev.node_counts
    if c.shared_gold is None or c.shared_predicted is None:
        raise ValueError("within_family needs counts with shared_gold and shared_predicted")
    lv = ev.ontology.level[: c.n_nodes]
    n = len(ev.levels)

    def per_level(values: np.ndarray) -> np.ndarray:
        return np.bincount(lv, weights=values, minlength=len(ev.ontology.levels))[:n].astype(int)

    table = ev.levels_table
    out = pd.DataFrame(
        {
            "level": ev.levels,
            "shared_families": per_level(c.set_tp),
            "gold_codes": per_level(c.shared_gold),
            "predicted_codes": per_level(c.shared_predicted),
            "over": per_level(c.shared_predicted - c.tp),
            "under": per_level(c.shared_gold - c.tp),
        }
    )
    denom = out.gold_codes.where(out.gold_codes > 0, 1)
    out["over_share"] = np.where(out.gold_codes > 0, out.over / denom, 0.0)
    out["under_share"] = np.where(out.gold_codes > 0, out.under / denom, 0.0)
    f1 = table.set_index(["measure", "level"])["f1"]
    out["set_f1"] = [float(f1["set_based", lv]) for lv in ev.levels]
    out["cophe_f1"] = [float(f1["cophe", lv]) for lv in ev.levels]
    return out


def describe_gaps(
    ev: Figures,
    run: str,
    *,
    threshold: float = 0.005,
    level_name: Callable[[str], str] | None = None,
    measures: tuple[str, str] = ("CoPHE", "set-based"),
) -> list[str]:
    """Plain-language lines for the levels where CoPHE F1 is below set-based F1.

    ``level_name`` names a level (default: its id); ``measures`` names CoPHE and set-based scoring, so a
    display can use its own words (the dashboard's "Right family and count" and "Right family").

    Example: "At e0, CoPHE F1 is 0.755 against 0.895 set-based: within the code
    families it shares with the gold standard, run B predicts 41% more codes than
    the gold standard and misses 9% of them."

    Examples
    --------
    >>> from cophe_core import score_files
    >>> ev = score_files(b"doc_id,code\\n1,401.9\\n", {"A": b"doc_id,code\\n1,401.9\\n1,401.1\\n1,401.0\\n"}).evaluation("A")
    >>> describe_gaps(ev, "A")[0][:58]
    'At e0, CoPHE F1 is 0.500 against 1.000 set-based: within t'
    """
    name = level_name or str
    cophe, set_based = measures
    lines = []
    for r in within_family(ev).itertuples():
        if r.set_f1 - r.cophe_f1 <= threshold:
            continue
        parts = []
        if r.over_share >= threshold:
            parts.append(f"predicts {r.over_share:.1%} more codes than the gold standard")
        if r.under_share >= threshold:
            parts.append(f"misses {r.under_share:.1%} of the gold codes")
        if not parts:
            parts.append("often predicts several codes in families the gold standard does not have")
        lines.append(
            f"At {name(r.level)}, {cophe} F1 is {r.cophe_f1:.3f} against {r.set_f1:.3f} {set_based}: within the "
            f"code families it shares with the gold standard, run {run} " + " and ".join(parts) + "."
        )
    return lines


def gap_statement(
    ev: Evaluation,
    run: str,
    *,
    threshold: float = 0.005,
    level_name: Callable[[str], str] | None = None,
    measures: tuple[str, str] = ("CoPHE", "set-based"),
) -> str | None:
    """One sentence for a run in place of :func:`describe_gaps`' line per level: the levels where CoPHE F1
    falls more than ``threshold`` below set-based F1, ranked by the size of the gap, the largest first with
    both F1 values and its cause (more codes than the gold standard, or gold codes missed, within the shared
    families); None when there is no such level.

    >>> from cophe_core import score_files
    >>> ev = score_files(b"doc_id,code\\n1,401.9\\n", {"A": b"doc_id,code\\n1,401.9\\n1,401.1\\n1,401.0\\n"}).evaluation("A")
    >>> gap_statement(ev, "A")
    'Run A: CoPHE F1 falls below set-based most at e0 (0.500 against 1.000: 200.0% more codes than the gold standard within its families), then at block.'
    """
    name = level_name or str
    cophe, set_based = measures
    t = within_family(ev)
    t = t.assign(gap=t.set_f1 - t.cophe_f1)
    t = t[t.gap > threshold].sort_values("gap", ascending=False, kind="stable")  # ties: the finer level first
    if t.empty:
        return None
    top = t.iloc[0]
    causes = []
    if top.over_share >= threshold:
        causes.append(f"{top.over_share:.1%} more codes than the gold standard")
    if top.under_share >= threshold:
        causes.append(f"{top.under_share:.1%} of the gold codes missed")
    cause = " and ".join(causes) or "codes in families the gold standard does not have"
    rest = [name(lv) for lv in t.level.iloc[1:]]
    then = f", then at {', '.join(rest)}" if rest else ""
    return (
        f"Run {run}: {cophe} F1 falls below {set_based} most at {name(top.level)} ({top.cophe_f1:.3f} "
        f"against {top.set_f1:.3f}: {cause} within its families){then}."
    )


MIN_SUPPORT = 10  # gold codes a family needs for its rates per gold code to be ranked or coloured


def per_gold_rates(table: pd.DataFrame, min_support: int = MIN_SUPPORT) -> pd.DataFrame:
    """``table`` (columns ``gold``, ``fp``, ``fn``) with ``extra_per_100`` = 100 · FP / gold and
    ``missed_per_100`` = 100 · FN / gold, a family's over- and under-coding rates; NaN where the family has
    fewer than ``min_support`` gold codes (at least 1): too few to judge a rate by.

    >>> t = pd.DataFrame({"gold": [20, 4, 0], "fp": [5, 4, 3], "fn": [2, 0, 0]})
    >>> per_gold_rates(t, min_support=10)[["extra_per_100", "missed_per_100"]].values.tolist()
    [[25.0, 10.0], [nan, nan], [nan, nan]]
    """
    gold = table.gold.to_numpy(dtype=float)
    supported = gold >= max(min_support, 1)
    out = table.copy()
    for rate, count in (("extra_per_100", "fp"), ("missed_per_100", "fn")):
        values = 100.0 * table[count].to_numpy(dtype=float) / np.where(supported, gold, 1.0)
        out[rate] = np.where(supported, values, np.nan)
    return out


def family_errors(ev: Evaluation, level: str) -> pd.DataFrame:
    """The run's errors family by family at ``level``, with each family's share of them (error coverage).

    One row per node of ``level`` with a gold or predicted code: ``node, code, title, gold, predicted, tp, fp,
    fn, f1, docs_over, docs_under, extra_share, missed_share, error_share``, where (CoPHE counts, summed over
    documents)

    - ``extra_share`` = fp / Σ fp, the family's part of all the extra codes at that level;
    - ``missed_share`` = fn / Σ fn, its part of all the missed codes;
    - ``error_share`` = (fp + fn) / Σ (fp + fn), its part of all errors, as the error-analysis tree of
      Microsoft's Responsible AI toolbox shows "error coverage".

    Each share is 0 when the run makes no error of that kind. Rows come in node order; sort by ``fp`` or
    ``fn`` for the families with most extra or missed codes.

    >>> from cophe_core import score_files
    >>> s = score_files(b"doc_id,code\\n1,401.9\\n1,428.0\\n", {"A": b"doc_id,code\\n1,401.9\\n1,401.1\\n"})
    >>> t = family_errors(s.evaluation("A"), "e0").set_index("code")
    >>> int(t.loc["401", "fp"]), int(t.loc["401", "fn"]), float(t.loc["401", "error_share"])
    (1, 0, 0.5)
    >>> float(t.loc["428", "missed_share"])
    1.0
    """
    ev.ontology.level_index(level)  # a clear error naming the levels
    nodes = ev.nodes
    t = nodes.loc[
        nodes.level == level,
        ["node", "code", "title", "gold", "predicted", "tp", "fp", "fn", "f1", "docs_over", "docs_under"],
    ]
    t = t.reset_index(drop=True)
    fp, fn = t.fp.to_numpy(dtype=float), t.fn.to_numpy(dtype=float)
    for name, part, whole in (
        ("extra_share", fp, fp.sum()),
        ("missed_share", fn, fn.sum()),
        ("error_share", fp + fn, fp.sum() + fn.sum()),
    ):
        t[name] = part / whole if whole > 0 else np.zeros_like(part)
    return t


def family_changes(
    a: Figures,
    b: Figures,
    level: str,
    *,
    n_resamples: int = 1000,
    seed: int = 0,
    confidence: float = 0.95,
    fdr: float = 0.05,
) -> pd.DataFrame:
    """Where two runs differ, family by family at ``level``: the change in errors, and whether it is real.

    One row per node of ``level`` with a gold or predicted code in either run. CoPHE counts summed over
    the documents give each run's ``extra`` (FP) and ``missed`` (FN) codes and F1; ``change_errors`` =
    (extra + missed of B) − (extra + missed of A), negative when B makes fewer errors, and ``delta_f1`` =
    F1 of B − F1 of A. Rows are ranked by |change_errors|, then |delta_f1|.

    The uncertainty resamples documents, both runs on the same resamples of the union of their documents
    (gold ∪ A ∪ B: :func:`~cophe_core.metrics.on_shared_documents`) (:func:`~cophe_core.breakdown.stats.document_weights`,
    the same draws as :func:`~cophe_core.breakdown.stats.paired_bootstrap` for the seed): ``low``/``high`` bound
    the percentile interval of ``delta_f1``. ``p_value`` is two-sided, from the bootstrap's standard error
    (z = delta_f1 / sd): a resampling p-value cannot fall below 1/(resamples + 1), which no family among
    hundreds could pass once corrected. ``q_value`` is the Benjamini–Hochberg adjustment over the families
    tested (``scipy.stats.false_discovery_control``), and ``flagged`` marks q ≤ ``fdr``: among the flagged
    families, the expected share of false discoveries is at most ``fdr``. A family the two runs code
    identically in every document has p = 1.

    Evaluations known by their per-node counts only (streamed, or of an aggregate analysis) give the same
    counts and ``delta_f1``, with ``low``, ``high``, ``p_value`` and ``q_value`` NaN and nothing flagged.

    >>> from cophe_core import score_files
    >>> gold = b"doc_id,code\\n1,401.9\\n2,401.9\\n3,428.0\\n"
    >>> s = score_files(gold, {"A": b"doc_id,code\\n1,401.9\\n1,401.1\\n2,401.1\\n3,428.0\\n", "B": gold})
    >>> t = family_changes(s.evaluation("A"), s.evaluation("B"), "e0", n_resamples=200).set_index("code")
    >>> t.loc["401", ["a_extra", "a_missed", "b_extra", "b_missed", "change_errors"]].tolist()
    [1, 0, 0, 0, -1]
    >>> float(t.loc["428", "delta_f1"]), float(t.loc["428", "p_value"])
    (0.0, 1.0)
    """
    if not (a.has_codes and b.has_codes):  # counts only: the point figures, without a test
        return _family_table(a.ontology, *_counted_point(a, b, level), None, fdr)
    if a.levels != b.levels:
        raise ValueError("the two runs must be scored on the same levels")
    # both resampled on gold ∪ A ∪ B
    ea, eb = on_shared_documents({"a": a.with_codes(), "b": b.with_codes()}).values()
    o = ea.ontology
    at = np.flatnonzero(o.level == o.level_index(level))
    y, xa, xb = ea.Y[:, at], ea.X[:, at], eb.X[:, at]
    ta, tb = xa.minimum(y), xb.minimum(y)
    blocks = [ta, xa, tb, xb, y]  # documents × nodes; FP = x − TP and FN = y − TP
    in_play = np.flatnonzero(np.asarray((y + xa + xb).sum(axis=0)).ravel() > 0)
    # (5 · families) × documents: a block of resamples is one sparse × dense product
    stacked = sp.hstack([m.tocsc()[:, in_play] for m in blocks]).T.tocsr().astype(np.float64)
    m = len(in_play)
    point = np.asarray(stacked.sum(axis=1)).ravel()
    # resamples in blocks of PRODUCT_CELLS: at the 4th digit of MIMIC-III (7,600 families) the product of
    # all 1,000 at once would be 300 MB, and filling fresh memory costs more than the product
    step = max(1, PRODUCT_CELLS // max(stacked.shape[0], 1))
    draws = [
        _delta_f1((stacked @ np.ascontiguousarray(w[i : i + step].T)).T, m)
        for w in document_weights(len(ea.docs), n_resamples, seed)
        for i in range(0, len(w), step)
    ]
    d = np.vstack(draws) if draws else np.empty((0, m))
    return _family_table(o, at[in_play], point, (d, confidence), fdr)


def _counted_point(a: Figures, b: Figures, level: str) -> tuple[np.ndarray, np.ndarray]:
    """The families of ``level`` in play and their summed (TP, x of A | TP, x of B | y) blocks, from the
    per-node counts of evaluations without matrices (streamed or aggregate)."""
    if a.levels != b.levels or a.ontology.n_nodes != b.ontology.n_nodes:
        raise ValueError("the two runs must be scored on the same ontology and levels")
    o = a.ontology
    at = np.flatnonzero(o.level == o.level_index(level))
    ca, cb = a.node_counts, b.node_counts
    blocks = [ca.tp[at], ca.predicted[at], cb.tp[at], cb.predicted[at], ca.gold[at]]
    in_play = np.flatnonzero(ca.gold[at] + ca.predicted[at] + cb.predicted[at] > 0)
    return at[in_play], np.concatenate([x[in_play] for x in blocks]).astype(np.float64)


def _family_table(
    o: Any, nodes: np.ndarray, point: np.ndarray, draws: tuple[np.ndarray, float] | None, fdr: float
) -> pd.DataFrame:
    """The table of :func:`family_changes` from the summed blocks, with the bootstrap ``draws`` of delta F1
    and the confidence (None: no interval, test or flag; the documents were not kept one by one)."""
    m = len(nodes)
    obs = _delta_f1(point[None, :], m)[0]
    if draws is None:
        low = high = p = np.full(m, np.nan)
        q = np.full(m, np.nan)
    else:
        from scipy import stats as sps  # here, not at the top: it takes 0.4 s to import and few commands test

        d, confidence = draws
        alpha = (1 - confidence) / 2
        low, high = np.quantile(d, [alpha, 1 - alpha], axis=0) if len(d) else (np.full(m, np.nan),) * 2
        sd = d.std(axis=0, ddof=1) if len(d) > 1 else np.zeros(m)
        with np.errstate(divide="ignore", invalid="ignore"):
            p = np.where(sd > 0, 2 * sps.norm.sf(np.abs(obs) / sd), np.where(obs == 0, 1.0, 0.0))
        q = sps.false_discovery_control(p, method="bh") if m else p
    tp_a, x_a, tp_b, x_b, gold = point.reshape(5, m).astype(np.int64)
    out = pd.DataFrame(
        {
            "node": nodes,
            "code": o.keys[nodes],
            "title": o.titles[nodes],
            "gold": gold,
            "a_extra": x_a - tp_a,
            "a_missed": gold - tp_a,
            "b_extra": x_b - tp_b,
            "b_missed": gold - tp_b,
            "a_f1": _f1(tp_a, x_a, gold),
            "b_f1": _f1(tp_b, x_b, gold),
        }
    )
    out["change_extra"] = out.b_extra - out.a_extra
    out["change_missed"] = out.b_missed - out.a_missed
    out["change_errors"] = out.change_extra + out.change_missed
    out["delta_f1"], out["low"], out["high"], out["p_value"] = obs, low, high, p
    out["q_value"] = q
    out["flagged"] = out.q_value <= fdr
    order = np.lexsort((-np.abs(out.delta_f1.to_numpy()), -np.abs(out.change_errors.to_numpy())))
    return out.iloc[order].reset_index(drop=True)


def _f1(tp: ArrayLike, predicted: ArrayLike, gold: np.ndarray) -> NDArray[np.float64]:
    """2TP / (predicted + gold), which is 2TP / (2TP + FP + FN): the F1 of :func:`cophe_core.metrics.prf`,
    0 where nothing is in play."""
    tp = np.asarray(tp, dtype=float)
    den = np.asarray(predicted, dtype=float) + gold
    f1: NDArray[np.float64] = np.divide(2 * tp, den, out=np.zeros_like(tp), where=den > 0)
    return f1


def _delta_f1(totals: np.ndarray, m: int) -> np.ndarray:
    """F1 of B − F1 of A per node, per row of summed (TP, x of A | TP, x of B | y) blocks of width m."""
    tp_a, x_a, tp_b, x_b, y = (totals[:, k * m : (k + 1) * m] for k in range(5))
    return _f1(tp_b, x_b, y) - _f1(tp_a, x_a, y)
