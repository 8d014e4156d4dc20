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
:mod:`cophe_core.scoring.suite`), in every resample as in the point estimate: a
resample's ICM is Σ wᵢ·ICMᵢ / Σ wᵢ over those documents (and NaN if the
resample holds none of them), its ICM-Norm follows from that ICM and
ICM(g, g) averaged the same way. For example, documents d1 (ICM 2), d2 (ICM −4)
and a prediction-only d3 give ICM −1; the resample (d1, d1, d3) gives 2, not 4/3.
The information content itself is the full data's, not re-estimated per resample.

All are seeded and take the number of resamples as an argument.

**Which documents.** A run's own figures (:func:`bootstrap`, :func:`bootstrap_runs`) resample its own
documents: the gold standard's and the run's (:meth:`cophe_core.scoring.labels.Corpus.run_rows`), whichever runs
are scored beside it. A comparison of runs (:func:`paired_bootstrap`, :func:`randomisation_test`,
:func:`compare_runs`) needs them on the same documents, so it resamples the union of the compared runs'
(gold ∪ A ∪ B), each run predicting nothing on a document only another run has
(:func:`cophe_core.metrics.on_shared_documents`). Micro counts do not change; the intervals and the
example-based values of a run in a comparison are those of that union.
"""

from __future__ import annotations

import warnings
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from enum import StrEnum
from functools import lru_cache

import numpy as np
import pandas as pd
from numpy.typing import ArrayLike

from ..metrics import Figures, on_shared_documents, prf
from ..scoring.suite import per_document

__all__ = [
    "HEADLINES",
    "bootstrap",
    "paired_bootstrap",
    "paired_significance",
    "randomisation_test",
    "describe_difference",
    "p_text",
    "holm",
    "compare_runs",
    "runs_wide",
    "document_weights",
    "verdict",
    "verdicts",
    "Verdict",
    "Outcome",
    "NO_CLEAR",
    "bootstrap_runs",
]


@dataclass(frozen=True)
class _Table:
    names: list[str]  # one per headline figure
    counts: np.ndarray  # docs × (3 · ratio figures): tp, fp, fn
    ratio_index: list[tuple[int, str]]  # figure → (group, stat)
    means: np.ndarray  # docs × per-document values: the suite's means, then icm, icm_gold, icm_docs
    mean_names: list[str]


# the figure ids of the three headline F1s
HEADLINES = ("flat f1", "set_based overall f1", "cophe overall f1")
_EB = ["eb_jacc", "eb_hamm", "eb_subacc", "eb_f", "prop_f", "hf"]  # averaged over every document
# icm and icm_gold are 0 on documents without a gold code and icm_docs marks the others (1), so that a
# resample's ICM is Σ w·icm / Σ w·icm_docs: the mean over the same documents as the point estimate.
_ICM = ["icm", "icm_gold", "icm_docs"]
CODES_STREAM = 2**32 - 1  # the spawn key of the codes' resampling stream (see _macro_draws)
BUDGET = 20_000_000  # cells of one chunk's (resamples × documents) weight matrix
# Weight matrices up to this many cells (32 MB) are kept, the last two: a dashboard draws the same
# resamples for every view of the same documents, and drawing them anew costs more than the products
# that use them (0.1–0.2 s for 1,000 × 3,372 in a server, mostly fresh pages for the arrays).
KEPT_CELLS = 4_000_000


def _table(ev: Figures, with_suite: bool, level_statistics: tuple[str, ...] = ("f1",)) -> _Table:
    """The per-document counts of every micro figure: precision, recall and F1 of flat and of each measure
    over all levels, and ``level_statistics`` at each level (any of precision, recall and F1, in that
    order; the statistics share their counts, so a figure's value does not depend on which others are
    asked for)."""

    def stacked(measure: str, level: str) -> np.ndarray:
        c = ev.document_counts(measure, level)
        return np.column_stack([c.tp, c.fp, c.fn])

    groups: list[tuple[str, np.ndarray]] = [("flat", stacked("flat", "leaf"))]
    for measure in ("set_based", "cophe"):
        per_level = [stacked(measure, lv) for lv in ev.levels]
        groups.append((f"{measure} overall", np.sum(per_level, axis=0)))
        groups += [(f"{measure} {lv}", m) for lv, m in zip(ev.levels, per_level)]
    names: list[str] = []
    ratio_index: list[tuple[int, str]] = []
    for gi, (label, _) in enumerate(groups):
        stats = (
            ("precision", "recall", "f1")
            if label in ("flat", "set_based overall", "cophe overall")
            else tuple(k for k in ("precision", "recall", "f1") if k in level_statistics)
        )
        for stat in stats:
            names.append(f"{label} {stat}")
            ratio_index.append((gi, stat))
    counts = np.concatenate([m for _, m in groups], axis=1).astype(np.float64)
    mean_names: list[str] = []
    means = np.zeros((len(ev.docs), 0))
    if with_suite:
        per = per_document(ev.with_codes())
        mean_names = _EB + _ICM
        scored = per["icm_scored"].to_numpy(dtype=bool)
        means = np.column_stack(
            [
                per[_EB].to_numpy(dtype=np.float64),
                np.where(scored, per["icm"], 0.0),
                np.where(scored, per["icm_gold"], 0.0),
                scored.astype(np.float64),
            ]
        )
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
    """Multinomial document counts: each row counts n_docs draws with replacement. Counting uniform draws
    with one bincount is the same distribution as ``rng.multinomial`` and ten times faster."""
    draws = rng.integers(0, n_docs, size=(n_resamples, n_docs))
    draws += (np.arange(n_resamples, dtype=draws.dtype) * n_docs)[:, None]  # row r counts into its own bins
    counts = np.bincount(draws.ravel(), minlength=n_resamples * n_docs)
    return counts.reshape(n_resamples, n_docs).astype(np.float64)


def document_weights(n_docs: int, n_resamples: int, seed: int, budget: int = BUDGET) -> Iterator[np.ndarray]:
    """Bootstrap weight matrices (resamples × documents, multinomial counts), chunk by chunk: the resamples
    every function of this module draws, for the same seed.

    Chunk i of k draws from ``SeedSequence(seed).spawn(k)[i]``: independent streams, so seed 0's second
    chunk is not seed 1's first (as it was with chunk i seeded ``seed + i``). The matrices are read-only:
    small ones (up to :data:`KEPT_CELLS` cells) are kept and handed out again for the same arguments.

    >>> chunks = list(document_weights(10, 10, seed=0, budget=40))
    >>> [w.shape for w in chunks], {float(s) for w in chunks for s in w.sum(axis=1)}
    ([(4, 10), (4, 10), (2, 10)], {10.0})
    """
    if n_docs * n_resamples <= KEPT_CELLS:
        yield from _kept_weights(n_docs, n_resamples, seed, budget)
    else:
        yield from _draw_weights(n_docs, n_resamples, seed, budget)


def _draw_weights(n_docs: int, n_resamples: int, seed: int, budget: int) -> Iterator[np.ndarray]:
    sizes = _chunks(n_resamples, n_docs, budget)
    for size, child in zip(sizes, np.random.SeedSequence(seed).spawn(len(sizes))):
        w = _weights(n_docs, size, np.random.default_rng(child))
        w.setflags(write=False)
        yield w


@lru_cache(maxsize=2)
def _kept_weights(n_docs: int, n_resamples: int, seed: int, budget: int) -> tuple[np.ndarray, ...]:
    return tuple(_draw_weights(n_docs, n_resamples, seed, budget))


def _apply(t: _Table, w: np.ndarray) -> np.ndarray:
    return _figures(t, w @ t.counts, w @ t.means, w.sum(axis=1))


def _point(t: _Table) -> np.ndarray:
    point: np.ndarray = _apply(t, np.ones((1, t.counts.shape[0])))[0]
    return point


def bootstrap(
    ev: Figures,
    *,
    n_resamples: int = 1000,
    seed: int = 0,
    confidence: float = 0.95,
    with_suite: bool = False,
) -> pd.DataFrame:
    """Percentile bootstrap intervals of every headline figure.

    Returns a DataFrame with columns ``figure, value, low, high`` (figures such
    as ``"cophe overall f1"``, ``"flat precision"``, ``"cophe e0 f1"``, and the
    suite's metrics when ``with_suite``).

    Examples
    --------
    >>> from cophe_core import score_files
    >>> gold = b"doc_id,code\\n1,401.9\\n1,428.0\\n2,250.00\\n"
    >>> runs = {"A": b"doc_id,code\\n1,401.1\\n2,250.00\\n", "B": b"doc_id,code\\n1,401.9\\n1,428.0\\n2,250.01\\n"}
    >>> s = score_files(gold, runs)
    >>> a, b = s.evaluation("A"), s.evaluation("B")
    >>> ci = bootstrap(b, n_resamples=200).set_index("figure")
    >>> list(ci.columns), float(ci.loc["flat f1", "value"])
    (['value', 'low', 'high'], 0.6666666666666666)
    """
    t = _table(ev, with_suite)
    n = t.counts.shape[0]
    if n == 0:
        raise ValueError("no documents to resample")
    draws = np.vstack([_apply(t, w) for w in document_weights(n, n_resamples, seed)])
    return pd.DataFrame({"figure": _names(t), "value": _point(t), **_interval(draws, confidence)})


def bootstrap_runs(
    evals: Mapping[str, Figures], *, n_resamples: int = 1000, seed: int = 0, confidence: float = 0.95
) -> dict[str, pd.DataFrame]:
    """:func:`bootstrap` of several runs, equal to calling it on each run, but drawing the resamples once for
    the runs on the same documents (they depend only on the number of documents and the seed); each run
    keeps its own documents.

    >>> from cophe_core import score_files
    >>> s = score_files(b"doc_id,code\\n1,401.9\\n2,428.0\\n", {"A": b"doc_id,code\\n1,401.9\\n"})
    >>> ev = s.evaluation("A")
    >>> bootstrap_runs({"A": ev, "B": ev}, n_resamples=50)["B"].equals(bootstrap(ev, n_resamples=50))
    True
    """
    names = list(evals)
    if not names:
        return {}
    groups: list[list[str]] = []  # runs on the same documents share their resamples
    for name in names:
        group = next((g for g in groups if _same_documents(evals[g[0]], evals[name])), None)
        if group is None:
            groups.append([name])
        else:
            group.append(name)
    tables = {r: _table(ev, False) for r, ev in evals.items()}
    if any(len(evals[r].docs) == 0 for r in names):
        raise ValueError("no documents to resample")
    draws: dict[str, np.ndarray] = {}
    for group in groups:
        draws |= _draws_of_runs({r: tables[r] for r in group}, n_resamples, seed)
    return {
        r: pd.DataFrame(
            {"figure": _names(tables[r]), "value": _point(tables[r]), **_interval(draws[r], confidence)}
        )
        for r in names
    }


def _draws_of_runs(tables: dict[str, _Table], n_resamples: int, seed: int) -> dict[str, np.ndarray]:
    """(resamples × figures) of each run's micro figures, every run on the same resamples: the runs' counts
    side by side, so that a chunk of resamples is one matrix product for all of them."""
    names = list(tables)
    stacked = np.hstack([tables[r].counts for r in names])
    ends = np.cumsum([tables[r].counts.shape[1] for r in names])
    draws: dict[str, list[np.ndarray]] = {r: [] for r in names}
    for w in document_weights(stacked.shape[0], n_resamples, seed):
        totals, n = w @ stacked, w.sum(axis=1)
        for r, end in zip(names, ends):
            t = tables[r]
            draws[r].append(_figures(t, totals[:, end - t.counts.shape[1] : end], np.empty((len(w), 0)), n))
    return {r: np.vstack(d) for r, d in draws.items()}


def _interval(draws: np.ndarray, confidence: float) -> dict[str, np.ndarray]:
    """Percentile bounds per column; NaN for a figure undefined on every resample."""
    alpha = (1 - confidence) / 2
    bounds = np.empty((2, draws.shape[1]))
    gaps = np.isnan(draws).any(axis=0)
    # nanquantile works column by column: only the columns with a NaN need it (the same values otherwise)
    bounds[:, ~gaps] = np.quantile(draws[:, ~gaps], [alpha, 1 - alpha], axis=0)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)  # all-NaN columns (an undefined ICM-Norm)
        bounds[:, gaps] = np.nanquantile(draws[:, gaps], [alpha, 1 - alpha], axis=0)
    return {"low": bounds[0], "high": bounds[1]}


def _chunks(total: int, n_docs: int, budget: int = BUDGET) -> list[int]:
    """Resamples per chunk, so that a weight matrix stays under ``budget`` cells."""
    size = max(1, budget // max(n_docs, 1))
    return [min(size, total - start) for start in range(0, total, size)]


def paired_bootstrap(
    a: Figures,
    b: Figures,
    *,
    n_resamples: int = 1000,
    seed: int = 0,
    confidence: float = 0.95,
    with_suite: bool = False,
) -> pd.DataFrame:
    """B − A on the same document resamples: ``figure, a, b, delta, low, high, p_value``. Both runs are
    resampled on the union of their documents (see the module docs).

    Examples
    --------
    >>> from cophe_core import score_files
    >>> gold = b"doc_id,code\\n1,401.9\\n1,428.0\\n2,250.00\\n"
    >>> runs = {"A": b"doc_id,code\\n1,401.1\\n2,250.00\\n", "B": b"doc_id,code\\n1,401.9\\n1,428.0\\n2,250.01\\n"}
    >>> s = score_files(gold, runs)
    >>> a, b = s.evaluation("A"), s.evaluation("B")
    >>> d = paired_bootstrap(a, b, n_resamples=200).set_index("figure")
    >>> round(float(d.loc["flat f1", "delta"]), 3), list(d.columns)
    (0.267, ['a', 'b', 'delta', 'low', 'high', 'p_value'])
    """
    ta, tb = _paired_tables({"a": a, "b": b}, with_suite).values()
    n = ta.counts.shape[0]
    d = np.vstack([_apply(tb, w) - _apply(ta, w) for w in document_weights(n, n_resamples, seed)])
    pa, pb = _point(ta), _point(tb)
    obs = pb - pa
    bounds = _interval(d, confidence)
    # a resample where a figure is undefined (ICM without a gold document) does not count
    far = np.where(np.isnan(d), np.nan, np.abs(d - obs) >= np.abs(obs) - 1e-12)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)  # all-NaN columns: an undefined figure
        p = np.where(np.isnan(obs), np.nan, np.nanmean(far, axis=0))
    return pd.DataFrame({"figure": _names(ta), "a": pa, "b": pb, "delta": obs, **bounds, "p_value": p})


def paired_significance(a: Figures, b: Figures, *, n_resamples: int = 1000, seed: int = 0) -> pd.DataFrame:
    """B − A with both tests: the paired bootstrap's interval, and as ``p_value`` the approximate
    randomisation test's (which holds its size better on small differences), the bootstrap's kept as
    ``p_bootstrap``. Columns ``figure, a, b, delta, low, high, p_value, p_bootstrap``.

    >>> from cophe_core import score_files
    >>> gold = b"doc_id,code\\n1,401.9\\n2,428.0\\n"
    >>> s = score_files(gold, {"A": b"doc_id,code\\n1,401.1\\n2,428.0\\n", "B": gold})
    >>> row = paired_significance(s.evaluation("A"), s.evaluation("B"), n_resamples=200).set_index("figure")
    >>> float(row.loc["flat f1", "delta"]), list(row.columns)
    (0.5, ['a', 'b', 'delta', 'low', 'high', 'p_value', 'p_bootstrap'])
    """
    paired = paired_bootstrap(a, b, n_resamples=n_resamples, seed=seed)
    rand = randomisation_test(a, b, n_permutations=n_resamples, seed=seed)
    return paired.drop(columns="p_value").assign(
        p_value=rand.p_value.to_numpy(), p_bootstrap=paired.p_value.to_numpy()
    )


def randomisation_test(
    a: Figures, b: Figures, *, n_permutations: int = 1000, seed: int = 0, with_suite: bool = False
) -> pd.DataFrame:
    """Approximate randomisation test of B − A: ``figure, delta, p_value``, on the union of the two runs'
    documents (see the module docs).

    Examples
    --------
    >>> from cophe_core import score_files
    >>> gold = b"doc_id,code\\n1,401.9\\n1,428.0\\n2,250.00\\n"
    >>> runs = {"A": b"doc_id,code\\n1,401.1\\n2,250.00\\n", "B": b"doc_id,code\\n1,401.9\\n1,428.0\\n2,250.01\\n"}
    >>> s = score_files(gold, runs)
    >>> a, b = s.evaluation("A"), s.evaluation("B")
    >>> r = randomisation_test(a, a, n_permutations=100).set_index("figure")
    >>> float(r.loc["cophe overall f1", "delta"]), float(r.loc["cophe overall f1", "p_value"])
    (0.0, 1.0)
    """
    ta, tb = _paired_tables({"a": a, "b": b}, with_suite).values()
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


def _same_documents(a: Figures, b: Figures) -> bool:
    return len(a.docs) == len(b.docs) and np.array_equal(np.asarray(a.docs), np.asarray(b.docs))


def _paired_tables(
    evals: Mapping[str, Figures], with_suite: bool, level_statistics: tuple[str, ...] = ("f1",)
) -> dict[str, _Table]:
    """Each run's per-document table on the union of the runs' documents, in the same order: evaluations
    with their matrices are put there by :func:`~cophe_core.metrics.on_shared_documents`; evaluations known
    by their per-document counts only (streamed or aggregate) get zero counts on a document they lack (it
    has no gold code and no prediction of theirs, so it counts nothing)."""
    first = next(iter(evals.values()))
    if any(ev.levels != first.levels for ev in evals.values()):
        raise ValueError("paired tests need two runs scored on the same levels")
    if all(ev.has_codes for ev in evals.values()):
        shared = on_shared_documents({r: ev.with_codes() for r, ev in evals.items()})
        return {r: _table(ev, with_suite, level_statistics) for r, ev in shared.items()}
    tables = {r: _table(ev, with_suite, level_statistics) for r, ev in evals.items()}
    if all(_same_documents(first, ev) for ev in evals.values()):
        return tables
    docs = np.unique(np.concatenate([np.asarray(ev.docs).astype(str) for ev in evals.values()]))
    out = {}
    for r, ev in evals.items():
        t = tables[r]
        counts = np.zeros((len(docs), t.counts.shape[1]))
        counts[np.searchsorted(docs, np.asarray(ev.docs).astype(str))] = t.counts
        out[r] = _Table(t.names, counts, t.ratio_index, np.zeros((len(docs), 0)), [])
    return out


LOWER_IS_BETTER = {"eb_hamm"}


class Outcome(StrEnum):
    """What a paired test says of the second run of a difference (a string: ``Outcome.BETTER == "better"``)."""

    BETTER = "better"
    WORSE = "worse"
    NO_CLEAR = "no clear difference"


NO_CLEAR = Outcome.NO_CLEAR


def verdict(
    delta: float,
    low: float,
    high: float,
    p_value: float,
    *,
    alpha: float = 0.05,
    lower_is_better: bool = False,
) -> Outcome:
    """:attr:`Outcome.BETTER` or :attr:`Outcome.WORSE` (for the second run of a difference) when the
    difference is beyond noise, that is p < ``alpha`` and its interval leaves out 0; otherwise
    :attr:`Outcome.NO_CLEAR`.

    >>> verdict(-0.03, -0.05, -0.01, 0.001).value, verdict(0.004, -0.002, 0.01, 0.21).value
    ('worse', 'no clear difference')
    """
    if not (p_value < alpha) or low <= 0 <= high or np.isnan(delta):
        return Outcome.NO_CLEAR
    return Outcome.BETTER if (delta > 0) != lower_is_better else Outcome.WORSE


@dataclass(frozen=True)
class Verdict:
    """B − A on one figure of a paired test, and what it says: ``delta`` = ``b`` − ``a`` with its
    interval [``low``, ``high``] and ``p_value``; :attr:`outcome` is :func:`verdict`'s at ``alpha``.

    >>> v = Verdict("cophe overall f1", a=0.61, b=0.65, delta=0.04, low=0.01, high=0.07, p_value=0.003)
    >>> v.outcome.value, v.describe("A", "B").split(" — ")[1]
    ('better', 'B is better, beyond resampling noise.')
    """

    figure: str
    a: float
    b: float
    delta: float
    low: float
    high: float
    p_value: float
    alpha: float = 0.05

    @property
    def outcome(self) -> Outcome:
        return verdict(
            self.delta,
            self.low,
            self.high,
            self.p_value,
            alpha=self.alpha,
            lower_is_better=self.figure in LOWER_IS_BETTER,
        )

    @classmethod
    def all_of(cls, table: pd.DataFrame, *, alpha: float = 0.05) -> list[Verdict]:
        """One verdict per row of a :func:`paired_bootstrap` or :func:`paired_significance` table."""
        cols = ["figure", "a", "b", "delta", "low", "high", "p_value"]
        return [cls(**dict(zip(cols, r)), alpha=alpha) for r in table[cols].itertuples(index=False)]

    def describe(self, a: str, b: str, *, figure: str | None = None) -> str:
        """One sentence: the difference, its interval and p-value, and the outcome in words; ``figure``
        names the figure on screen (default :attr:`figure`)."""

        def num(v: float) -> str:
            return f"{v:+.3f}".replace("-", "−")

        head = (
            f"{figure or self.figure}: {b} − {a} = {num(self.delta)} (95% interval {num(self.low)} to "
            f"{num(self.high)}, {p_text(self.p_value)})"
        )
        if self.outcome == Outcome.NO_CLEAR:
            return head + " — within noise: this test set cannot tell the two runs apart on this figure."
        return head + f" — {b} is {self.outcome.value}, beyond resampling noise."


def verdicts(
    a: Figures, b: Figures, *, n_resamples: int = 1000, seed: int = 0, alpha: float = 0.05
) -> list[Verdict]:
    """:func:`paired_significance` of B − A as one :class:`Verdict` per figure, in its order.

    >>> from cophe_core import score_files
    >>> gold = b"doc_id,code\\n1,401.9\\n2,428.0\\n"
    >>> s = score_files(gold, {"A": b"doc_id,code\\n1,401.1\\n2,428.0\\n", "B": gold})
    >>> v = {x.figure: x for x in verdicts(s.evaluation("A"), s.evaluation("B"), n_resamples=200)}
    >>> v["flat f1"].delta, v["flat f1"].outcome.value  # two documents cannot show it
    (0.5, 'no clear difference')
    """
    return Verdict.all_of(paired_significance(a, b, n_resamples=n_resamples, seed=seed), alpha=alpha)


def p_text(p: float) -> str:
    """A p-value in words for a reader: ``"p < 0.001"`` below 0.001 (never "0.000"), else three decimals;
    ``"no test"`` for an undefined one (NaN).

    >>> p_text(0.0), p_text(0.000999), p_text(0.0234), p_text(float("nan"))
    ('p < 0.001', 'p < 0.001', 'p = 0.023', 'no test')
    """
    if np.isnan(p):
        return "no test"
    return "p < 0.001" if p < 0.001 else f"p = {p:.3f}"


def describe_difference(row: pd.Series, a: str, b: str, *, alpha: float = 0.05) -> str:
    """One sentence on a row of :func:`paired_bootstrap` (with a ``p_value`` column): is B − A real?
    Its conclusion is :func:`verdict`'s; :meth:`Verdict.describe` says the same of a :class:`Verdict`.

    >>> import pandas as pd
    >>> r = pd.Series({"figure": "cophe overall f1", "delta": 0.004, "low": -0.002, "high": 0.010, "p_value": 0.21})
    >>> describe_difference(r, "A", "B").split(" — ")[1]
    'within noise: this test set cannot tell the two runs apart on this figure.'
    """

    return Verdict(
        row.figure, float("nan"), float("nan"), row.delta, row.low, row.high, row.p_value, alpha
    ).describe(a, b)


# ------------------------------------------------------------------------------------------ many runs at once
def holm(p_values: ArrayLike) -> np.ndarray:
    """Holm's step-down adjustment of p-values for multiple comparisons (NaN stays NaN, uncounted).

    Sorted ascending, the i-th smallest of m p-values becomes max over j ≤ i of min(1, (m − j + 1)·p₍ⱼ₎);
    rejecting where the adjusted value is below α controls the family-wise error rate at α.

    >>> holm([0.01, 0.04, 0.03, float("nan")]).round(3).tolist()
    [0.03, 0.06, 0.06, nan]
    """
    p = np.asarray(p_values, dtype=float)
    out = np.full(p.shape, np.nan)
    ok = np.flatnonzero(~np.isnan(p))
    order = ok[np.argsort(p[ok], kind="stable")]
    m = len(order)
    scaled = np.minimum(1.0, (m - np.arange(m)) * p[order])
    out[order] = np.maximum.accumulate(scaled)
    return out


def _per_code_f1(ev: Figures) -> dict[str, tuple[np.ndarray, np.ndarray]]:
    """For each macro figure: (node ids in play, their F1), as :attr:`Evaluation.macro_table` averages them
    (flat on the codes; set-based and CoPHE on each level's nodes)."""
    c = ev.node_counts
    tp, fp, fn = c.flat_tp, c.flat_fp, c.flat_fn
    flat = np.flatnonzero(tp + fp + fn)
    out = {"flat macro_f1": (flat, prf(tp[flat], fp[flat], fn[flat])[2])}
    nodes = ev.nodes
    for name in ev.levels:
        at = nodes[nodes.level == name]
        out[f"set_based {name} macro_f1"] = (at.node.to_numpy(), at.set_f1.to_numpy())
        out[f"cophe {name} macro_f1"] = (at.node.to_numpy(), at.f1.to_numpy())
    return out


def _macro_draws(
    per_run: dict[str, dict[str, tuple[np.ndarray, np.ndarray]]],
    figures: list[str],
    n_resamples: int,
    seed: int,
) -> dict[str, np.ndarray]:
    """(resamples × macro figures) per run, resampling the codes: a macro average is a mean over codes, so
    its interval resamples them (Poisson weights, one per node, shared by every run and figure, so that
    differences are paired). Resampling documents instead drops a code seen in one document from 37% of
    resamples, which shifts a per-code average away from its own estimate."""
    union = np.unique(
        np.concatenate([ids for run in per_run.values() for ids, _ in run.values()] or [np.zeros(1, int)])
    )
    # one column of F1 values and one of in-play marks per (run, figure), over the union of their codes:
    # a resample's averages are then one product of its weights with this matrix
    runs = list(per_run)
    values = np.zeros((len(union), 2 * len(runs) * len(figures)))
    for k, (r, fig) in enumerate((r, fig) for r in runs for fig in figures):
        ids, f1 = per_run[r][fig]
        cols = np.searchsorted(union, ids)
        values[cols, 2 * k], values[cols, 2 * k + 1] = f1, 1.0
    # a stream of its own: the documents' chunk i uses spawn key (i,), which this key can never be
    rng = np.random.default_rng(np.random.SeedSequence(seed, spawn_key=(CODES_STREAM,)))
    step = max(1, BUDGET // max(len(union), 1))
    parts = []
    for start in range(0, n_resamples, step):
        w = rng.poisson(1.0, size=(min(step, n_resamples - start), len(union))).astype(np.float64)
        parts.append(w @ values)
    sums = np.vstack(parts) if parts else np.empty((0, values.shape[1]))
    with np.errstate(invalid="ignore", divide="ignore"):
        means = np.where(sums[:, 1::2] > 0, sums[:, 0::2] / sums[:, 1::2], np.nan)
    out = {r: means[:, i * len(figures) : (i + 1) * len(figures)] for i, r in enumerate(runs)}
    return out


def compare_runs(
    evals: Mapping[str, Figures],
    *,
    baseline: str | None = None,
    n_resamples: int = 1000,
    seed: int = 0,
    confidence: float = 0.95,
    alpha: float = 0.05,
    macro: bool = True,
    level_statistics: Sequence[str] = ("f1",),
) -> pd.DataFrame:
    """Every run's figures with bootstrap intervals, and each run's difference from a baseline, tested.

    All runs are resampled on the same documents, the union of theirs (gold ∪ every run's own; see the module
    docs), so every interval, and every difference from the ``baseline`` (default: the first run), is paired. The figures are those of :func:`bootstrap`
    (micro P/R/F1 of flat and of each measure over all levels, and ``level_statistics`` at each level: F1 by
    default, ``("precision", "recall", "f1")`` for all three) and, with ``macro``, the mean per-code F1 of
    the flat codes and of each level's nodes for set-based and CoPHE scoring (``"cophe e0 macro_f1"``),
    over the codes in play as in :attr:`Evaluation.macro_table`. Micro figures resample documents; a
    macro average is a mean over codes, so its interval resamples the codes (``resampled`` says which).

    For a run other than the baseline, ``delta`` = run − baseline with its percentile interval
    (``delta_low``, ``delta_high``), ``p_value`` the paired bootstrap's (as :func:`paired_bootstrap`,
    on the same resamples for the same seed), and ``p_holm`` that p-value adjusted by :func:`holm`
    over the runs compared on the same figure. ``verdict`` is ``"better"`` or ``"worse"`` only when
    ``p_holm < alpha`` and the interval of the difference leaves out 0, else ``"no clear difference"``.
    ``best`` marks the highest value of each figure (ties all marked).

    Returns one row per (run, figure): ``run, figure, value, low, high, best, delta, delta_low,
    delta_high, p_value, p_holm, verdict`` (NaN and an empty verdict for the baseline's own row).

    >>> from cophe_core import score_files
    >>> gold = b"doc_id,code\\n1,401.9\\n2,428.0\\n3,250.00\\n"
    >>> s = score_files(gold, {"A": gold, "B": b"doc_id,code\\n1,401.9\\n2,401.1\\n3,250.01\\n"})
    >>> t = compare_runs({r: s.evaluation(r) for r in "AB"}, n_resamples=200).set_index(["run", "figure"])
    >>> round(float(t.loc[("B", "flat f1"), "value"]), 3), round(float(t.loc[("B", "flat f1"), "delta"]), 3)
    (0.333, -0.667)
    >>> bool(t.loc[("A", "flat f1"), "best"]), t.loc[("B", "flat f1"), "verdict"]
    (True, 'no clear difference')
    """
    names = list(evals)
    if not names:
        raise ValueError("no runs to compare")
    baseline = names[0] if baseline is None else baseline
    if baseline not in evals:
        raise ValueError(f"baseline {baseline!r} is not one of the runs: {', '.join(names)}")
    unknown = set(level_statistics) - {"precision", "recall", "f1"}
    if unknown:
        raise ValueError(f"level statistics {sorted(unknown)}: give precision, recall or f1")
    tables = _paired_tables(evals, False, tuple(level_statistics))
    n = tables[names[0]].counts.shape[0]
    if n == 0:
        raise ValueError("no documents to resample")
    per_code = {r: _per_code_f1(ev) for r, ev in evals.items()} if macro else {}
    macro_figs = list(per_code[baseline]) if macro else []
    figures = _names(tables[baseline]) + macro_figs
    point = {
        r: np.concatenate(
            [
                _point(tables[r]),
                [f.mean() if len(f) else 0.0 for _, f in (per_code[r][m] for m in macro_figs)],
            ]
        )
        for r in names
    }
    micro = _draws_of_runs(tables, n_resamples, seed)
    macro_draws = _macro_draws(per_code, macro_figs, n_resamples, seed) if macro else {}
    draws = {r: np.hstack([d, macro_draws.get(r, np.empty((n_resamples, 0)))]) for r, d in micro.items()}
    frames = []
    for r in names:
        row = pd.DataFrame(
            {"run": r, "figure": figures, "value": point[r], **_interval(draws[r], confidence)}
        )
        if r == baseline:
            row = row.assign(delta=np.nan, delta_low=np.nan, delta_high=np.nan, p_value=np.nan)
        else:
            d = draws[r] - draws[baseline]
            obs = point[r] - point[baseline]
            bounds = _interval(d, confidence)
            far = np.where(np.isnan(d), np.nan, np.abs(d - obs) >= np.abs(obs) - 1e-12)  # shifted null
            with warnings.catch_warnings():
                warnings.simplefilter("ignore", RuntimeWarning)  # a figure undefined on every resample
                p = np.nanmean(far, axis=0)
            row = row.assign(delta=obs, delta_low=bounds["low"], delta_high=bounds["high"], p_value=p)
        frames.append(row)
    out = pd.concat(frames, ignore_index=True)
    out["resampled"] = np.where(out.figure.str.endswith("macro_f1"), "codes", "documents")
    out["p_holm"] = out.groupby("figure", sort=False).p_value.transform(lambda p: holm(p.to_numpy()))
    out["best"] = out.value >= out.groupby("figure", sort=False).value.transform("max") - 1e-12
    out["verdict"] = [
        verdict(d, lo, hi, p, alpha=alpha).value if r != baseline else ""  # plain text in a table
        for r, d, lo, hi, p in zip(out.run, out.delta, out.delta_low, out.delta_high, out.p_holm)
    ]
    return out[
        [
            "run",
            "figure",
            "value",
            "low",
            "high",
            "best",
            "delta",
            "delta_low",
            "delta_high",
            "p_value",
            "p_holm",
            "verdict",
            "resampled",
        ]
    ]


def runs_wide(table: pd.DataFrame, figures: list[str], column: str = "value") -> pd.DataFrame:
    """One column of :func:`compare_runs` as runs × figures (runs in their order, figures as given).

    >>> t = pd.DataFrame({"run": ["A", "A", "B", "B"], "figure": ["f1", "p", "f1", "p"], "value": [1, 2, 3, 4]})
    >>> runs_wide(t, ["p", "f1"]).to_dict("list")
    {'p': [2, 4], 'f1': [1, 3]}
    """
    wide = table.pivot(index="run", columns="figure", values=column)
    return wide.loc[list(dict.fromkeys(table.run)), figures].rename_axis(columns=None)
