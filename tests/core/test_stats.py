"""Bootstrap intervals and paired tests: properties and the vectorised formulation against a loop."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from cophe_core import score_files
from cophe_core.metrics import prf
from cophe_core.stats import bootstrap, paired_bootstrap, randomisation_test
from tests.conftest import long_csv

CODES = ["401.9", "401.1", "428.0", "428.22", "250.00", "250.01", "V45.81", "39.95", "96.71", "584.9"]
docs = st.lists(st.tuples(st.sets(st.sampled_from(CODES), min_size=1, max_size=4),
                          st.sets(st.sampled_from(CODES), max_size=4)),
                min_size=20, max_size=40)


def scoring(rows):
    gold = long_csv([(f"d{i}", c) for i, (g, _) in enumerate(rows) for c in sorted(g)])
    pred = long_csv([(f"d{i}", c) for i, (_, p) in enumerate(rows) for c in sorted(p)])
    return score_files(gold, {"A": pred, "B": gold}, ontology="icd9")


@settings(max_examples=25, deadline=None)
@given(rows=docs)
def test_a_bootstrap_interval_contains_its_point_estimate(rows):
    ev = scoring(rows).evaluation("A")
    ci = bootstrap(ev, n_resamples=300, seed=1, with_suite=True)
    ok = ci.dropna()
    assert ((ok.low <= ok.value + 1e-12) & (ok.value <= ok.high + 1e-12)).all()


@settings(max_examples=25, deadline=None)
@given(rows=docs)
def test_randomisation_of_a_run_against_itself_gives_p_one(rows):
    ev = scoring(rows).evaluation("A")
    rt = randomisation_test(ev, ev, n_permutations=200, seed=3, with_suite=True).dropna()  # ICM-Norm may be undefined
    assert len(rt) >= 20 and (rt.p_value == 1.0).all() and (rt.delta == 0).all()


def test_point_values_match_the_evaluation():
    s = score_files(b"doc_id,code\n1,401.9\n1,428.0\n2,250.00\n", {"A": b"doc_id,code\n1,401.1\n2,250.00\n"})
    ev = s.evaluation("A")
    ci = bootstrap(ev, n_resamples=50).set_index("figure")
    assert ci.loc["cophe overall f1", "value"] == pytest.approx(ev.score("cophe")["f1"])
    assert ci.loc["flat precision", "value"] == pytest.approx(ev.score("flat")["precision"])
    assert ci.loc["set_based e0 f1", "value"] == pytest.approx(ev.score("set_based", "e0")["f1"])


def test_bootstrap_equals_a_loop_over_resamples():
    rows = [({"401.9", "428.0"}, {"401.1"}), ({"250.00"}, {"250.00", "250.01"}), (set(), {"96.71"}),
            ({"V45.81"}, {"V45.81"}), ({"584.9", "39.95"}, {"584.9"})]
    ev = scoring(rows).evaluation("A")
    n, b, seed = len(ev.docs), 200, 7
    weights = np.random.default_rng(seed).multinomial(n, np.full(n, 1 / n), size=b)
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
