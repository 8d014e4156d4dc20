"""Bootstrap intervals and paired tests: properties, the vectorised formulation against a loop, the chunk
seeding, ICM over the documents with a gold code, and scipy.stats as an oracle."""

from __future__ import annotations

import inspect
import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy import stats as sps

from cophe_core import score_files
from cophe_core.breakdown.stats import (
    _apply,
    _chunks,
    _table,
    bootstrap,
    document_weights,
    paired_bootstrap,
    paired_significance,
    randomisation_test,
)
from cophe_core.metrics import prf
from cophe_core.ontology.custom import hierarchy_from_edges
from cophe_core.scoring.suite import per_document, suite
from tests.conftest import examples, long_csv

CODES = ["401.9", "401.1", "428.0", "428.22", "250.00", "250.01", "V45.81", "39.95", "96.71", "584.9"]
docs = st.lists(
    st.tuples(
        st.sets(st.sampled_from(CODES), min_size=1, max_size=4), st.sets(st.sampled_from(CODES), max_size=4)
    ),
    min_size=20,
    max_size=40,
)


def scoring(rows):
    gold = long_csv([(f"d{i}", c) for i, (g, _) in enumerate(rows) for c in sorted(g)])
    pred = long_csv([(f"d{i}", c) for i, (_, p) in enumerate(rows) for c in sorted(p)])
    return score_files(gold, {"A": pred, "B": gold}, ontology="icd9")


@settings(max_examples=examples(25), deadline=None)
@given(rows=docs)
def test_a_bootstrap_interval_contains_its_point_estimate(rows):
    ev = scoring(rows).evaluation("A")
    ci = bootstrap(ev, n_resamples=300, seed=1, with_suite=True)
    ok = ci.dropna()
    assert ((ok.low <= ok.value + 1e-12) & (ok.value <= ok.high + 1e-12)).all()


@settings(max_examples=examples(25), deadline=None)
@given(rows=docs)
def test_randomisation_of_a_run_against_itself_gives_p_one(rows):
    ev = scoring(rows).evaluation("A")
    rt = randomisation_test(
        ev, ev, n_permutations=200, seed=3, with_suite=True
    ).dropna()  # ICM-Norm may be undefined
    assert len(rt) >= 20 and (rt.p_value == 1.0).all() and (rt.delta == 0).all()


def test_point_values_match_the_evaluation():
    s = score_files(b"doc_id,code\n1,401.9\n1,428.0\n2,250.00\n", {"A": b"doc_id,code\n1,401.1\n2,250.00\n"})
    ev = s.evaluation("A")
    ci = bootstrap(ev, n_resamples=50).set_index("figure")
    assert ci.loc["cophe overall f1", "value"] == pytest.approx(ev.score("cophe").f1)
    assert ci.loc["flat precision", "value"] == pytest.approx(ev.score("flat").precision)
    assert ci.loc["set_based e0 f1", "value"] == pytest.approx(ev.score("set_based", "e0").f1)


def test_bootstrap_equals_a_loop_over_resamples():
    rows = [
        ({"401.9", "428.0"}, {"401.1"}),
        ({"250.00"}, {"250.00", "250.01"}),
        (set(), {"96.71"}),
        ({"V45.81"}, {"V45.81"}),
        ({"584.9", "39.95"}, {"584.9"}),
    ]
    ev = scoring(rows).evaluation("A")
    n, b, seed = len(ev.docs), 200, 7
    rng = np.random.default_rng(np.random.SeedSequence(seed).spawn(1)[0])  # one chunk
    weights = [np.bincount(row, minlength=n) for row in rng.integers(0, n, size=(b, n))]  # n draws each
    d = ev.documents
    tp = np.array([sum(w[i] * sum(d[f"{lv}_tp"][i] for lv in ev.levels) for i in range(n)) for w in weights])
    fp = np.array([sum(w[i] * sum(d[f"{lv}_fp"][i] for lv in ev.levels) for i in range(n)) for w in weights])
    fn = np.array([sum(w[i] * sum(d[f"{lv}_fn"][i] for lv in ev.levels) for i in range(n)) for w in weights])
    f1 = prf(tp, fp, fn)[2]
    ci = bootstrap(ev, n_resamples=b, seed=seed).set_index("figure")
    low, high = np.quantile(f1, [0.025, 0.975])
    assert ci.loc["cophe overall f1", "low"] == pytest.approx(low)
    assert ci.loc["cophe overall f1", "high"] == pytest.approx(high)


def test_paired_tests_see_a_real_difference():
    rng = np.random.default_rng(0)
    rows = []
    for _ in range(200):
        g = set(rng.choice(CODES, 3, replace=False))
        rows.append((g, set(list(g)[:1])))  # A finds one of three codes; B is the gold itself
    s = scoring(rows)
    a, b = s.evaluation("A"), s.evaluation("B")
    paired = paired_bootstrap(a, b, n_resamples=300).set_index("figure")
    rand = randomisation_test(a, b, n_permutations=300).set_index("figure")
    row = paired.loc["cophe overall f1"]
    assert row.delta > 0 and row.low > 0 and row.p_value < 0.01
    assert rand.loc["cophe overall f1", "p_value"] == pytest.approx(1 / 301)
    with pytest.raises(ValueError, match="same documents"):
        other = score_files(b"doc_id,code\nx,401.9\n", {"r": b"doc_id,code\nx,401.9\n"}).evaluation("r")
        paired_bootstrap(a, other)
    both = paired_significance(a, b, n_resamples=300).set_index("figure")  # the bootstrap's interval, the
    assert both[["a", "b", "delta", "low", "high"]].equals(
        paired[["a", "b", "delta", "low", "high"]]
    )  # test's p
    assert both.p_value.equals(rand.p_value) and both.p_bootstrap.equals(paired.p_value)


# ---------------------------------------------------------------- chunk seeding
def test_chunks_of_two_seeds_share_no_resample():
    """Chunk i used to be seeded seed + i, so seed 0's second chunk was seed 1's first."""
    n, b, budget = 30, 12, 4 * 30  # 4 resamples per chunk: 3 chunks
    assert _chunks(b, n, budget) == [4, 4, 4]
    w0, w1 = (np.vstack(list(document_weights(n, b, seed, budget))) for seed in (0, 1))
    assert w0.shape == w1.shape == (b, n) and (w0.sum(axis=1) == n).all() and (w1.sum(axis=1) == n).all()
    assert not (w0[:, None, :] == w1[None, :, :]).all(axis=2).any()
    assert len({r.tobytes() for r in w0}) == b  # nor do two chunks of one seed
    again = np.vstack(list(document_weights(n, b, 0, budget)))
    assert np.array_equal(w0, again)  # and a seed still reproduces its draws


def test_chunk_generators_come_from_spawned_seed_sequences():
    n, budget = 5, 10  # 2 resamples per chunk
    children = np.random.SeedSequence(3).spawn(3)

    def counts(rng, k):  # k rows, each the counts of n documents drawn with replacement
        return np.vstack([np.bincount(row, minlength=n) for row in rng.integers(0, n, size=(k, n))])

    expected = np.vstack([counts(np.random.default_rng(c), k) for c, k in zip(children, [2, 2, 1])])
    assert np.array_equal(np.vstack(list(document_weights(n, 5, 3, budget))), expected)


def test_kept_weights_are_the_drawn_ones_and_read_only(monkeypatch):
    """Small weight matrices are kept between calls: the kept ones are the very draws of a fresh call, and
    nobody can change them for the next caller."""
    from cophe_core.breakdown import stats

    kept = [w.copy() for w in document_weights(50, 30, 4, 50 * 8)]  # 4 chunks, under KEPT_CELLS
    assert all(
        w is v for w, v in zip(document_weights(50, 30, 4, 50 * 8), document_weights(50, 30, 4, 50 * 8))
    )
    shared = next(document_weights(50, 30, 4, 50 * 8))
    monkeypatch.setattr(stats, "KEPT_CELLS", 0)  # now drawn afresh every time
    fresh = list(document_weights(50, 30, 4, 50 * 8))
    assert len(fresh) == len(kept) == 4 and all(np.array_equal(a, b) for a, b in zip(kept, fresh))
    for w in (shared, *fresh):
        with pytest.raises(ValueError, match="read-only"):
            w[0, 0] = 99


def test_document_weights_are_multinomial_counts():
    # each row sums to n; a document's count is Binomial(n, 1/n): mean 1, variance 1 − 1/n
    w = np.vstack(list(document_weights(10, 20_000, 1)))
    assert (w.sum(axis=1) == 10).all() and w.min() >= 0
    assert np.abs(w.mean(axis=0) - 1).max() < 0.03
    assert np.abs(w.var(axis=0) - 0.9).max() < 0.05


# ---------------------------------------------------------------- ICM over the documents with a gold code
def _ab_run():
    """Tree @ → A → {A0, A1}, @ → B → {B0, B1}; d4 is prediction-only, d5 has no gold code (see test_suite)."""
    onto = hierarchy_from_edges(
        [
            ("@", "", "", 1),
            ("A", "@", "", 2),
            ("A0", "A", "", 3),
            ("A1", "A", "", 4),
            ("B", "@", "", 5),
            ("B0", "B", "", 6),
            ("B1", "B", "", 7),
        ],
        name="ab",
    )
    gold = long_csv([("d1", "A0"), ("d2", "A1"), ("d2", "B0"), ("d3", "B"), ("d5", "")])
    pred = long_csv([("d1", "A0"), ("d2", "A0"), ("d3", "B1"), ("d4", "A"), ("d4", "B0"), ("d5", "B1")])
    return score_files(gold, {"r": pred}, ontology=onto).evaluation("r")


def test_a_resample_averages_icm_over_its_gold_documents():
    # per-document ICM: d1 log2 3, d2 -3, d3 log2 3 - 2, d4 and d5 none; ICM(g, g): log2 3, 2 log2 3, log2 3 - 1
    ev = _ab_run()
    t = _table(ev, with_suite=True)
    names = [*t.names, "eb_jacc", "eb_hamm", "eb_subacc", "eb_f", "prop_f", "hf", "icm", "icm_norm"]
    l3 = math.log2(3)
    w = np.array(
        [
            [1, 1, 1, 1, 1],  # the point estimate: (2 log2 3 - 5) / 3
            [2, 0, 0, 1, 2],  # d1 twice: ICM log2 3 (not 2 log2 3 / 5), ICM-Norm 1
            [0, 1, 1, 3, 0],  # d2, d3: (l3 - 5) / 2, ICM(g, g) (3 l3 - 1) / 2
            [0, 0, 0, 2, 3],
        ],
        dtype=float,
    )  # no gold document: undefined
    out = _apply(t, w)
    icm, norm = out[:, names.index("icm")], out[:, names.index("icm_norm")]
    g2 = (3 * l3 - 1) / 2
    assert icm[:3] == pytest.approx([(2 * l3 - 5) / 3, l3, (l3 - 5) / 2], abs=1e-12)
    assert norm[1:3] == pytest.approx([1.0, ((l3 - 5) / 2 + g2) / (2 * g2)], abs=1e-12)
    assert np.isnan(icm[3]) and np.isnan(norm[3])
    assert out[1, names.index("eb_subacc")] == pytest.approx(2 / 5)  # EB figures: every document, d1 twice
    assert icm[0] == pytest.approx(suite(ev)["icm"], abs=1e-12)


def test_bootstrap_icm_equals_a_loop_over_resamples():
    ev = _ab_run()
    ci = bootstrap(ev, n_resamples=300, seed=5, with_suite=True).set_index("figure")
    icm = per_document(ev).icm.to_numpy()
    draws = []
    for w in np.vstack(list(document_weights(len(ev.docs), 300, 5))):
        kept = [(wi, x) for wi, x in zip(w, icm) if not np.isnan(x) and wi > 0]
        draws.append(sum(wi * x for wi, x in kept) / sum(wi for wi, _ in kept) if kept else np.nan)
    low, high = np.nanquantile(draws, [0.025, 0.975])
    assert ci.loc["icm", "value"] == pytest.approx(suite(ev)["icm"], abs=1e-12)
    assert (ci.loc["icm", "low"], ci.loc["icm", "high"]) == pytest.approx((low, high), abs=1e-12)


def test_randomisation_with_documents_without_gold():
    ev = _ab_run()
    rt = randomisation_test(ev, ev, n_permutations=50, seed=1, with_suite=True).set_index("figure")
    assert rt.loc["icm", "delta"] == 0 and rt.loc["icm", "p_value"] == 1.0


# ---------------------------------------------------------------- scipy.stats as an oracle
# 14 documents, two of them prediction-only (no gold code, so no ICM), two runs A and B. The figures checked:
# cophe overall F1 (micro F1 of the per-document counts summed over levels) and ICM (the mean of the
# per-document ICM over the documents with a gold code: numpy's nanmean of per_document's icm column).
#
# Monte-Carlo tolerances, with R = 50,000 resamples on both sides. The standard deviations of our bounds and
# p-values over 12 seeds were: bootstrap F1 bounds 0.0007, ICM bounds 0.005; paired-bootstrap F1 bounds
# 0.0013, ICM bounds 0.007; p-values sqrt(p(1 - p) / R): 0.0013 (p = 0.10), 0.0005 (p = 0.01), 0.0017
# (p = 0.17), 0.0008 (p = 0.03). Each tolerance is about 5 combined standard deviations (sqrt(2) times ours
# when scipy also resamples; ours alone against the exact permutation test), and each is well below what a
# wrong formula moves: the basic ("reflected", wrong-centre) interval moves the F1 bounds by 0.03 and the ICM
# bounds by 0.10; averaging ICM over all 14 documents moves its low bound by 0.11; a paired p-value centred
# on 0 instead of the observed difference is about 0.5; a swapped sign in the randomisation shift or in B - A
# moves the p-values or intervals by far more than that (checked by applying each mutant to stats.py).
R = 50_000
TOL = {
    "f1_bounds": 0.005,
    "icm_bounds": 0.04,
    "paired_f1_bounds": 0.01,
    "paired_icm_bounds": 0.05,
    "paired_f1_p": 0.01,
    "paired_icm_p": 0.004,
    "rand_f1_p": 0.008,
    "rand_icm_p": 0.004,
}
_RNG = "rng" if "rng" in inspect.signature(sps.bootstrap).parameters else "random_state"  # scipy < 1.15


@pytest.fixture(scope="module")
def oracle_runs():
    codes = CODES
    rng = np.random.default_rng(11)
    n = 14
    gold, a, b = [], [], []
    for i in range(n):
        doc = f"d{i:02}"
        if i >= n - 2:  # prediction-only
            a.append((doc, "401.9"))
            b.append((doc, "428.0"))
            continue
        g = list(rng.choice(codes, rng.integers(1, 4), replace=False))
        pa = {c for c in g if rng.random() < 0.5} | set(rng.choice(codes, rng.integers(0, 2), replace=False))
        pb = {c for c in g if rng.random() < 0.8} | set(rng.choice(codes, rng.integers(0, 2), replace=False))
        gold += [(doc, c) for c in g]
        a += [(doc, c) for c in sorted(pa)]
        b += [(doc, c) for c in sorted(pb)]
    s = score_files(long_csv(gold), {"A": long_csv(a), "B": long_csv(b)}, ontology="icd9")
    ea, eb = s.evaluation("A"), s.evaluation("B")
    assert len(ea.docs) == n and per_document(ea).icm_scored.sum() == n - 2

    def counts(ev):
        d = ev.documents
        return np.column_stack(
            [sum(d[f"{lv}_{k}"].to_numpy() for lv in ev.levels) for k in ("tp", "fp", "fn")]
        ).astype(float)

    return ea, eb, counts(ea), counts(eb), per_document(ea).icm.to_numpy(), per_document(eb).icm.to_numpy()


def _f1(c: np.ndarray) -> np.ndarray:
    """Micro F1 of (..., documents, 3) counts, summed over documents."""
    return prf(c[..., 0].sum(-1), c[..., 1].sum(-1), c[..., 2].sum(-1))[2]


def _scipy_bootstrap(data, statistic, seed, paired=False):
    return sps.bootstrap(
        data,
        statistic,
        paired=paired,
        vectorized=True,
        n_resamples=R,
        method="percentile",
        confidence_level=0.95,
        **{_RNG: np.random.default_rng(seed)},
    )


def test_bootstrap_agrees_with_scipy(oracle_runs):
    ea, _, ca, _, ia, _ = oracle_runs
    ours = bootstrap(ea, n_resamples=R, seed=1, with_suite=True).set_index("figure")
    idx = np.arange(len(ca), dtype=float)  # resample document indices: the counts travel together
    f1 = _scipy_bootstrap((idx,), lambda i, axis: _f1(ca[i.astype(int)]), seed=2).confidence_interval
    icm = _scipy_bootstrap((ia,), lambda x, axis: np.nanmean(x, axis=axis), seed=3).confidence_interval
    assert ours.loc["cophe overall f1", "value"] == pytest.approx(_f1(ca))
    assert ours.loc["icm", "value"] == pytest.approx(np.nanmean(ia))
    assert ours.loc["cophe overall f1", "low"] == pytest.approx(f1.low, abs=TOL["f1_bounds"])
    assert ours.loc["cophe overall f1", "high"] == pytest.approx(f1.high, abs=TOL["f1_bounds"])
    assert ours.loc["icm", "low"] == pytest.approx(icm.low, abs=TOL["icm_bounds"])
    assert ours.loc["icm", "high"] == pytest.approx(icm.high, abs=TOL["icm_bounds"])


def test_paired_bootstrap_agrees_with_scipy(oracle_runs):
    ea, eb, ca, cb, ia, ib = oracle_runs
    ours = paired_bootstrap(ea, eb, n_resamples=R, seed=1, with_suite=True).set_index("figure")
    idx = np.arange(len(ca), dtype=float)
    f1 = _scipy_bootstrap((idx,), lambda i, axis: _f1(cb[i.astype(int)]) - _f1(ca[i.astype(int)]), seed=4)
    icm = _scipy_bootstrap(
        (ia, ib), lambda x, y, axis: np.nanmean(y, axis=axis) - np.nanmean(x, axis=axis), seed=5, paired=True
    )
    for name, res, obs, key in (
        ("cophe overall f1", f1, _f1(cb) - _f1(ca), "paired_f1"),
        ("icm", icm, np.nanmean(ib) - np.nanmean(ia), "paired_icm"),
    ):
        row = ours.loc[name]
        assert row.delta == pytest.approx(obs)
        assert row.low == pytest.approx(res.confidence_interval.low, abs=TOL[key + "_bounds"])
        assert row.high == pytest.approx(res.confidence_interval.high, abs=TOL[key + "_bounds"])
        # the shifted-null p-value, read off scipy's bootstrap distribution of B - A
        p = np.mean(np.abs(res.bootstrap_distribution - obs) >= abs(obs) - 1e-12)
        assert row.p_value == pytest.approx(p, abs=TOL[key + "_p"])


def test_randomisation_test_agrees_with_scipy(oracle_runs):
    ea, eb, ca, cb, ia, ib = oracle_runs
    ours = randomisation_test(ea, eb, n_permutations=R, seed=1, with_suite=True).set_index("figure")
    n = len(ca)
    table = np.vstack([ca, cb])  # row i: A's counts of document i; row n + i: B's

    def f1_delta(x, y, axis):  # x, y: row indices into table, swapped pairwise by scipy
        return _f1(table[y.astype(int)]) - _f1(table[x.astype(int)])

    def icm_delta(x, y, axis):
        return np.nanmean(y, axis=axis) - np.nanmean(x, axis=axis)

    idx = np.arange(n, dtype=float)
    exact = {
        "cophe overall f1": (
            sps.permutation_test(
                (idx, idx + n), f1_delta, permutation_type="samples", vectorized=True, n_resamples=np.inf
            ),
            "rand_f1_p",
        ),
        "icm": (
            sps.permutation_test(
                (ia, ib), icm_delta, permutation_type="samples", vectorized=True, n_resamples=np.inf
            ),
            "rand_icm_p",
        ),
    }  # all 2^14 swaps: exact
    for name, (res, key) in exact.items():
        assert ours.loc[name, "delta"] == pytest.approx(res.statistic)
        assert 0.01 < res.pvalue < 0.5  # a p-value a wrong formula could move either way
        assert ours.loc[name, "p_value"] == pytest.approx(res.pvalue, abs=TOL[key])
