"""Uncertainty: bootstrap confidence intervals and paired significance tests, resampling documents.

Every headline figure is a function of per-document quantities: micro P/R/F1
of summed TP/FP/FN, or a mean of per-document values (the example-based suite,
ICM). A resample is a vector of document weights, so B resamples are one
matrix product of a (B × documents) weight matrix with the (documents × k)
per-document table — no loop over resamples or documents.

- :func:`bootstrap`: percentile intervals (Efron), multinomial document weights.
  With B resamples in chunks of k (a chunk's weight matrix stays under a
  memory budget), chunk i draws from ``SeedSequence(seed).spawn(k)[i]``, so
  no two seeds (and no two chunks) share a random stream.
- :func:`paired_bootstrap`: the same resamples applied to two runs; the
  two-sided p-value is the share of resampled differences at least as far from
  the observed difference as the observed difference is from 0 (the
  shifted-null reading of Berg-Kirkpatrick et al., 2012).
- :func:`randomisation_test`: approximate randomisation (Noreen 1989, as LAAT
  reports): each document's outputs are swapped between the runs with
  probability 1/2; p = (1 + #{|d*| ≥ |d|}) / (R + 1). A run against itself gives p = 1.

ICM is averaged over the documents with a gold code only (see
:mod:`cophe_core.suite`), in every resample as in the point estimate: a
resample's ICM is Σ wᵢ·ICMᵢ / Σ wᵢ over those documents (and NaN if the
resample holds none of them), its ICM-Norm follows from that ICM and
ICM(g, g) averaged the same way. For example, documents d1 (ICM 2), d2 (ICM −4)
and a prediction-only d3 give ICM −1; the resample (d1, d1, d3) gives 2, not 4/3.
The information content itself is the full data's, not re-estimated per resample.

All are seeded and take the number of resamples as an argument.
"""

from __future__ import annotations

import warnings
from collections.abc import Iterator
from dataclasses import dataclass

import numpy as np
import pandas as pd

from .metrics import Evaluation, prf
from .suite import per_document

__all__ = ["HEADLINES", "bootstrap", "paired_bootstrap", "randomisation_test", "describe_difference"]


@dataclass(frozen=True)
class _Table:
    names: list[str]  # one per headline figure
    counts: np.ndarray  # docs × (3 · ratio figures): tp, fp, fn
    ratio_index: list[tuple[int, str]]  # figure → (group, stat)
    means: np.ndarray  # docs × per-document values: the suite's means, then icm, icm_gold, icm_docs
    mean_names: list[str]


HEADLINES = ("flat", "set_based", "cophe")
_EB = ["eb_jacc", "eb_hamm", "eb_subacc", "eb_f", "prop_f", "hf"]  # averaged over every document
# icm and icm_gold are 0 on documents without a gold code and icm_docs marks the others (1), so that a
# resample's ICM is Σ w·icm / Σ w·icm_docs: the mean over the same documents as the point estimate.
_ICM = ["icm", "icm_gold", "icm_docs"]
BUDGET = 20_000_000  # cells of one chunk's (resamples × documents) weight matrix


def _table(ev: Evaluation, with_suite: bool) -> _Table:
    d = ev.documents
    groups: list[tuple[str, np.ndarray]] = [("flat", d[["flat_tp", "flat_fp", "flat_fn"]].to_numpy())]
    for measure, infix in (("set_based", "_set"), ("cophe", "")):
        per_level = [d[[f"{lv}{infix}_tp", f"{lv}{infix}_fp", f"{lv}{infix}_fn"]].to_numpy() for lv in ev.levels]
        groups.append((f"{measure} overall", np.sum(per_level, axis=0)))
        groups += [(f"{measure} {lv}", m) for lv, m in zip(ev.levels, per_level)]
    names, ratio_index = [], []
    for gi, (label, _) in enumerate(groups):
        stats = ("precision", "recall", "f1") if label in ("flat", "set_based overall", "cophe overall") else ("f1",)
        for stat in stats:
            names.append(f"{label} {stat}")
            ratio_index.append((gi, stat))
    counts = np.concatenate([m for _, m in groups], axis=1).astype(np.float64)
    mean_names: list[str] = []
    means = np.zeros((len(ev.docs), 0))
    if with_suite:
        per = per_document(ev)
        mean_names = _EB + _ICM
        scored = per["icm_scored"].to_numpy(dtype=bool)
        means = np.column_stack([per[_EB].to_numpy(dtype=np.float64),
                                 np.where(scored, per["icm"], 0.0), np.where(scored, per["icm_gold"], 0.0),
                                 scored.astype(np.float64)])
    return _Table(names, counts, ratio_index, means, mean_names)


def _figures(t: _Table, count_totals: np.ndarray, mean_totals: np.ndarray, n: np.ndarray) -> np.ndarray:
    """(resamples × figures) from summed counts and summed per-document values."""
    cols = []
    for gi, stat in t.ratio_index:
        tp, fp, fn = (count_totals[:, 3 * gi + k] for k in range(3))
        p, r, f = prf(tp, fp, fn)
        cols.append({"precision": p, "recall": r, "f1": f}[stat])
    if t.mean_names:
        k = len(_EB)
        cols += list((mean_totals[:, :k] / n[:, None]).T)
        icm_sum, gold_sum, icm_docs = mean_totals[:, k], mean_totals[:, k + 1], mean_totals[:, k + 2]
        with np.errstate(divide="ignore", invalid="ignore"):
            icm = np.where(icm_docs > 0, icm_sum / icm_docs, np.nan)
            icm_gold = np.where(icm_docs > 0, gold_sum / icm_docs, np.nan)
            norm = np.where(icm_gold > 0, np.maximum(0, (icm + icm_gold) / (2 * icm_gold)), np.nan)
        cols += [icm, norm]
    return np.column_stack(cols)


def _names(t: _Table) -> list[str]:
    return t.names + ([*_EB, "icm", "icm_norm"] if t.mean_names else [])


def _weights(n_docs: int, n_resamples: int, rng: np.random.Generator) -> np.ndarray:
    return rng.multinomial(n_docs, np.full(n_docs, 1.0 / n_docs), size=n_resamples).astype(np.float64)


def _resamples(n_docs: int, n_resamples: int, seed: int, budget: int = BUDGET) -> Iterator[np.ndarray]:
    """Bootstrap weight matrices (resamples × documents, multinomial counts), chunk by chunk.

    Chunk i of k draws from ``SeedSequence(seed).spawn(k)[i]``: independent streams, so seed 0's second
    chunk is not seed 1's first (as it was with chunk i seeded ``seed + i``). With 10 documents and
    ``budget=40``, 10 resamples come in 3 chunks of 4, 4 and 2 rows, each row summing to 10.
    """
    sizes = _chunks(n_resamples, n_docs, budget)
    for size, child in zip(sizes, np.random.SeedSequence(seed).spawn(len(sizes))):
        yield _weights(n_docs, size, np.random.default_rng(child))


def _apply(t: _Table, w: np.ndarray) -> np.ndarray:
    return _figures(t, w @ t.counts, w @ t.means, w.sum(axis=1))


def _point(t: _Table) -> np.ndarray:
    return _apply(t, np.ones((1, t.counts.shape[0])))[0]


def bootstrap(ev: Evaluation, *, n_resamples: int = 1000, seed: int = 0, confidence: float = 0.95,
              with_suite: bool = False) -> pd.DataFrame:
    """Percentile bootstrap intervals of every headline figure.

    Returns a DataFrame with columns ``figure, value, low, high`` (figures such
    as ``"cophe overall f1"``, ``"flat precision"``, ``"cophe e0 f1"``, and the
    suite's metrics when ``with_suite``).
    """
    t = _table(ev, with_suite)
    n = t.counts.shape[0]
    if n == 0:
        raise ValueError("no documents to resample")
    draws = np.vstack([_apply(t, w) for w in _resamples(n, n_resamples, seed)])
    return pd.DataFrame({"figure": _names(t), "value": _point(t), **_interval(draws, confidence)})


def _interval(draws: np.ndarray, confidence: float) -> dict[str, np.ndarray]:
    """Percentile bounds per column; NaN for a figure undefined on every resample."""
    alpha = (1 - confidence) / 2
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)  # all-NaN columns (an undefined ICM-Norm)
        low, high = np.nanquantile(draws, [alpha, 1 - alpha], axis=0)
    return {"low": low, "high": high}


def _chunks(total: int, n_docs: int, budget: int = BUDGET) -> list[int]:
    """Resamples per chunk, so that a weight matrix stays under ``budget`` cells."""
    size = max(1, budget // max(n_docs, 1))
    return [min(size, total - start) for start in range(0, total, size)]


def paired_bootstrap(a: Evaluation, b: Evaluation, *, n_resamples: int = 1000, seed: int = 0,
                     confidence: float = 0.95, with_suite: bool = False) -> pd.DataFrame:
    """B − A on the same document resamples: ``figure, a, b, delta, low, high, p_value``."""
    _same_docs(a, b)
    ta, tb = _table(a, with_suite), _table(b, with_suite)
    n = ta.counts.shape[0]
    d = np.vstack([_apply(tb, w) - _apply(ta, w) for w in _resamples(n, n_resamples, seed)])
    pa, pb = _point(ta), _point(tb)
    obs = pb - pa
    bounds = _interval(d, confidence)
    # a resample where a figure is undefined (ICM without a gold document) does not count
    far = np.where(np.isnan(d), np.nan, np.abs(d - obs) >= np.abs(obs) - 1e-12)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)  # all-NaN columns: an undefined figure
        p = np.where(np.isnan(obs), np.nan, np.nanmean(far, axis=0))
    return pd.DataFrame({"figure": _names(ta), "a": pa, "b": pb, "delta": obs, **bounds, "p_value": p})


def randomisation_test(a: Evaluation, b: Evaluation, *, n_permutations: int = 1000, seed: int = 0,
                       with_suite: bool = False) -> pd.DataFrame:
    """Approximate randomisation test of B − A: ``figure, delta, p_value``."""
    _same_docs(a, b)
    ta, tb = _table(a, with_suite), _table(b, with_suite)
    n = ta.counts.shape[0]
    obs = _point(tb) - _point(ta)
    dc, dm = tb.counts - ta.counts, tb.means - ta.means
    ca, cb = ta.counts.sum(0), tb.counts.sum(0)
    ma, mb = ta.means.sum(0), tb.means.sum(0)
    rng = np.random.default_rng(seed)
    hits = np.zeros(len(obs))
    ones = np.full(1, float(n))
    for size in _chunks(n_permutations, n):
        swap = (rng.random((size, n)) < 0.5).astype(np.float64)
        sc, sm = swap @ dc, swap @ dm
        nn = np.repeat(ones, size)
        star_a = _figures(ta, ca + sc, ma + sm, nn)
        star_b = _figures(tb, cb - sc, mb - sm, nn)
        hits += np.sum(np.abs(star_b - star_a) >= np.abs(obs) - 1e-12, axis=0)
    p = np.where(np.isnan(obs), np.nan, (1 + hits) / (n_permutations + 1))  # undefined figure: no test
    return pd.DataFrame({"figure": _names(ta), "delta": obs, "p_value": p})


def _same_docs(a: Evaluation, b: Evaluation) -> None:
    if len(a.docs) != len(b.docs) or not np.array_equal(a.docs, b.docs) or a.levels != b.levels:
        raise ValueError("paired tests need two runs scored on the same documents and levels")


LOWER_IS_BETTER = {"eb_hamm"}


def describe_difference(row, a: str, b: str, *, alpha: float = 0.05) -> str:
    """One sentence on a row of :func:`paired_bootstrap` (with a ``p_value`` column): is B − A real?

    >>> import pandas as pd
    >>> r = pd.Series({"figure": "cophe overall f1", "delta": 0.004, "low": -0.002, "high": 0.010, "p_value": 0.21})
    >>> describe_difference(r, "A", "B").split(" — ")[1]
    'within noise: this test set cannot tell the two runs apart on this figure.'
    """
    noise = row.p_value >= alpha or (row.low <= 0 <= row.high)
    def num(v: float) -> str:
        return f"{v:+.3f}".replace("-", "−")

    head = (f"{row.figure}: {b} − {a} = {num(row.delta)} (95% interval {num(row.low)} to {num(row.high)}, "
            f"p = {row.p_value:.3f})")
    if noise:
        return head + " — within noise: this test set cannot tell the two runs apart on this figure."
    better = (row.delta > 0) != (row.figure in LOWER_IS_BETTER)
    return head + f" — {b} is {'better' if better else 'worse'}, beyond resampling noise."
