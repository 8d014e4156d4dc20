"""Many runs against a baseline (Holm), and per-family changes between two runs (Benjamini–Hochberg):
hand-worked values, naive loops, and the existing paired bootstrap as oracles."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from cophe_core import score_files
from cophe_core.breakdown.families import family_changes
from cophe_core.breakdown.stats import compare_runs, document_weights, holm, paired_bootstrap, runs_wide
from cophe_core.metrics import evaluate, prf
from tests.conftest import SAMPLE, examples, long_csv

p_values = st.lists(st.floats(0, 1, allow_nan=False), min_size=1, max_size=12)


def naive_holm(p: list[float]) -> list[float]:
    """Holm (1979) step by step: the i-th smallest p times (m − i), running maximum, capped at 1."""
    m = len(p)
    order = sorted(range(m), key=lambda i: p[i])
    out, running = [0.0] * m, 0.0
    for rank, i in enumerate(order):
        running = max(running, min(1.0, (m - rank) * p[i]))
        out[i] = running
    return out


def naive_bh(p: list[float]) -> list[float]:
    """Benjamini–Hochberg step by step: p·m/rank, running minimum from the largest p down."""
    m = len(p)
    order = sorted(range(m), key=lambda i: p[i])
    out, running = [0.0] * m, 1.0
    for rank in range(m, 0, -1):
        i = order[rank - 1]
        running = min(running, p[i] * m / rank)
        out[i] = running
    return out


def test_holm_by_hand():
    # m = 4: 0.01·4 = 0.04, 0.02·3 = 0.06, 0.03·2 = 0.06, 0.5·1 = 0.5
    assert holm([0.03, 0.01, 0.5, 0.02]).tolist() == pytest.approx([0.06, 0.04, 0.5, 0.06])


@settings(max_examples=examples(200), deadline=None)
@given(p=p_values)
def test_holm_agrees_with_a_naive_loop(p):
    assert holm(p) == pytest.approx(naive_holm(p))


@settings(max_examples=examples(100), deadline=None)
@given(p=p_values)
def test_scipys_benjamini_hochberg_agrees_with_a_naive_loop(p):
    from scipy.stats import false_discovery_control

    assert false_discovery_control(p, method="bh") == pytest.approx(naive_bh(p))


@pytest.fixture(scope="module")
def sample():
    runs = {r: (SAMPLE / f"run_{r}.csv").read_bytes() for r in ("siblings", "overcoder", "conservative")}
    s = score_files((SAMPLE / "gold.csv").read_bytes(), runs, ontology="icd9")
    return {r: s.evaluation(r) for r in runs}


@pytest.fixture(scope="module")
def table(sample):
    return compare_runs(sample, baseline="siblings", n_resamples=300, seed=4)


def test_values_are_each_runs_own_scores(sample, table):
    t = table.set_index(["run", "figure"])
    for run, ev in sample.items():
        assert t.loc[(run, "cophe overall f1"), "value"] == pytest.approx(ev.score("cophe").f1)
        assert t.loc[(run, "flat precision"), "value"] == pytest.approx(ev.score("flat").precision)
        assert t.loc[(run, "set_based e0 f1"), "value"] == pytest.approx(ev.score("set_based", "e0").f1)
        macro = ev.macro_table.set_index(["measure", "level"]).macro_f1
        assert t.loc[(run, "flat macro_f1"), "value"] == pytest.approx(macro["flat", "leaf"])
        assert t.loc[(run, "cophe e0 macro_f1"), "value"] == pytest.approx(macro["cophe", "e0"])
        assert t.loc[(run, "set_based block macro_f1"), "value"] == pytest.approx(macro["set_based", "block"])


def test_differences_are_the_paired_bootstrap_of_each_run_against_the_baseline(sample, table):
    for run in ("overcoder", "conservative"):
        pb = paired_bootstrap(sample["siblings"], sample[run], n_resamples=300, seed=4).set_index("figure")
        mine = table[table.run == run].set_index("figure").loc[pb.index]
        assert mine.delta.to_numpy() == pytest.approx(pb.delta.to_numpy())
        assert mine.delta_low.to_numpy() == pytest.approx(pb.low.to_numpy())
        assert mine.delta_high.to_numpy() == pytest.approx(pb.high.to_numpy())
        assert mine.p_value.to_numpy() == pytest.approx(pb.p_value.to_numpy())


def test_holm_runs_over_the_runs_compared_on_each_figure(table):
    for _, rows in table[table.run != "siblings"].groupby("figure"):
        assert rows.p_holm.to_numpy() == pytest.approx(naive_holm(rows.p_value.tolist()))


def test_baseline_row_best_marks_and_verdicts(table):
    base = table[table.run == "siblings"]
    assert base.delta.isna().all() and (base.verdict == "").all()
    wide = runs_wide(table, ["cophe overall f1", "flat f1"])
    best = runs_wide(table, ["cophe overall f1", "flat f1"], "best")
    assert (best.to_numpy() == (wide.to_numpy() == wide.max().to_numpy())).all()
    others = table[table.run != "siblings"]
    assert set(others.verdict) <= {"better", "worse", "no clear difference"}
    # worse is never called better: the word follows the sign of the difference
    assert (others[others.verdict == "better"].delta > 0).all()
    assert (others[others.verdict == "worse"].delta < 0).all()
    # the over-coder writes many extra codes: its CoPHE precision is clearly worse than the baseline's
    row = table.set_index(["run", "figure"]).loc[("overcoder", "cophe overall precision")]
    assert row.verdict == "worse" and row.p_holm < 0.05 and row.delta_high < 0


def test_macro_intervals_resample_codes_and_hold_their_estimate(table):
    macro = table[table.figure.str.endswith("macro_f1")]
    assert (macro.resampled == "codes").all()
    assert ((macro.low <= macro.value + 1e-12) & (macro.value <= macro.high + 1e-12)).all()
    assert (table[~table.figure.str.endswith("macro_f1")].resampled == "documents").all()


def test_a_run_against_a_copy_of_itself_shows_no_difference(sample):
    t = compare_runs({"A": sample["siblings"], "B": sample["siblings"]}, n_resamples=100)
    b = t[t.run == "B"]
    assert (b.delta == 0).all() and (b.p_value == 1).all() and (b.verdict == "no clear difference").all()


def test_bad_baseline_and_mismatched_documents_are_refused(sample):
    with pytest.raises(ValueError, match="baseline 'nope'"):
        compare_runs(sample, baseline="nope", n_resamples=10)
    other = score_files(long_csv([("x", "401.9")]), {"A": long_csv([("x", "401.9")])}).evaluation("A")
    with pytest.raises(ValueError, match="same documents"):
        compare_runs({"A": sample["siblings"], "B": other}, n_resamples=10)


# ------------------------------------------------------------------------------------------ family changes
def test_family_changes_by_hand():
    # category 401: A writes 401.9 + 401.1 in d1 (one extra) and 401.1 in d2 (a match at the category);
    # B equals the gold. Category 428: both runs right.
    gold = long_csv([("d1", "401.9"), ("d2", "401.9"), ("d3", "428.0")])
    a = long_csv([("d1", "401.9"), ("d1", "401.1"), ("d2", "401.1"), ("d3", "428.0")])
    s = score_files(gold, {"A": a, "B": gold}, ontology="icd9")
    t = family_changes(s.evaluation("A"), s.evaluation("B"), "e0", n_resamples=200).set_index("code")
    assert t.loc["401", ["gold", "a_extra", "a_missed", "b_extra", "b_missed"]].tolist() == [2, 1, 0, 0, 0]
    assert t.loc["401", "change_errors"] == -1
    # A at 401: x = 3, y = 2, TP = 2 → F1 = 4/5; B: F1 = 1
    assert t.loc["401", "a_f1"] == pytest.approx(0.8) and t.loc["401", "delta_f1"] == pytest.approx(0.2)
    assert t.loc["428", "p_value"] == 1.0 and not t.loc["428", "flagged"]
    assert list(t.index) == ["401", "428"]  # ranked by the size of the change


def test_family_changes_add_up_to_the_level(sample):
    a, b = sample["siblings"], sample["overcoder"]
    t = family_changes(a, b, "e0", n_resamples=50)
    la = a.levels_table.set_index(["measure", "level"]).loc[("cophe", "e0")]
    lb = b.levels_table.set_index(["measure", "level"]).loc[("cophe", "e0")]
    assert t.change_extra.sum() == lb.fp - la.fp and t.change_missed.sum() == lb.fn - la.fn
    nodes = a.nodes.set_index("node")
    at = nodes[nodes.level == "e0"]
    shared = t.set_index("node").loc[at.index]
    assert shared.a_f1.to_numpy() == pytest.approx(at.f1.to_numpy())


def _reweighted(ev, w: np.ndarray):
    """The evaluation of the documents repeated as often as the weights say: a resample, written out."""
    rows = np.repeat(np.arange(len(ev.docs)), w.astype(int))
    return evaluate(ev.gold[rows], ev.pred[rows], ev.ontology, docs=ev.docs[rows], max_level=ev.max_level)


@pytest.mark.parametrize("cells", [None, 1, 70])  # all resamples in one product, one by one, a few at a time
def test_family_intervals_agree_with_resamples_written_out(cells, monkeypatch):
    if cells is not None:
        monkeypatch.setattr("cophe_core.breakdown.families.PRODUCT_CELLS", cells)
    gold = long_csv([(f"d{i}", c) for i, c in enumerate(["401.9", "401.1", "428.0", "428.22", "250.00"] * 4)])
    a = long_csv([(f"d{i}", c) for i, c in enumerate(["401.9", "401.9", "428.1", "428.22", "250.01"] * 4)])
    b = long_csv([(f"d{i}", c) for i, c in enumerate(["401.1", "401.1", "428.0", "428.0", "250.00"] * 4)])
    s = score_files(gold, {"A": a, "B": b}, ontology="icd9")
    ea, eb = s.evaluation("A"), s.evaluation("B")
    t = family_changes(ea, eb, "e0", n_resamples=40, seed=2).set_index("node")
    w = np.vstack(list(document_weights(len(ea.docs), 40, 2)))
    deltas = []
    for row in w:
        fa, fb = (_reweighted(ev, row).nodes.set_index("node").f1 for ev in (ea, eb))
        deltas.append((fb.reindex(t.index, fill_value=0) - fa.reindex(t.index, fill_value=0)).to_numpy())
    d = np.vstack(deltas)
    low, high = np.quantile(d, [0.025, 0.975], axis=0)
    assert t.low.to_numpy() == pytest.approx(low) and t.high.to_numpy() == pytest.approx(high)


def test_a_run_against_itself_flags_no_family(sample):
    t = family_changes(sample["siblings"], sample["siblings"], "e0", n_resamples=50)
    assert (t.change_errors == 0).all() and (t.p_value == 1).all() and not t.flagged.any()


def test_planted_substitutions_are_flagged_where_the_runs_differ(sample):
    # siblings writes 401.9 → 401.0 swaps, conservative does not: hypertension (401) differs beyond noise
    t = family_changes(sample["conservative"], sample["siblings"], "e0", n_resamples=300).set_index("code")
    assert t.flagged.any()
    assert (t[t.flagged].q_value <= 0.05).all()
    assert t.q_value.to_numpy() == pytest.approx(naive_bh(t.p_value.tolist()))


def test_prf_identity_used_by_the_family_f1():
    # 2TP / (predicted + gold) is prf's F1
    tp, x, y = np.array([0, 2, 3, 0]), np.array([0, 3, 3, 2]), np.array([0, 2, 5, 0])
    assert prf(tp, x - tp, y - tp)[2] == pytest.approx(
        np.divide(2 * tp, x + y, out=np.zeros(4), where=x + y > 0)
    )


def test_ten_runs_compare_at_once(sample):
    runs = {f"run {i}": list(sample.values())[i % 3] for i in range(10)}
    t = compare_runs(runs, n_resamples=50, macro=False)
    assert t.run.nunique() == 10 and (t.groupby("figure").size() == 10).all()
    copies = t[t.run.isin(["run 3", "run 6", "run 9"])]  # the baseline's own evaluation again
    assert (copies.delta == 0).all() and (copies.verdict == "no clear difference").all()


def test_bootstrap_runs_is_each_runs_bootstrap_on_shared_resamples(sample):
    from cophe_core.breakdown.stats import bootstrap, bootstrap_runs

    together = bootstrap_runs(sample, n_resamples=120, seed=5)
    for run, ev in sample.items():
        pd_equal = together[run].equals(bootstrap(ev, n_resamples=120, seed=5))
        assert pd_equal, run
