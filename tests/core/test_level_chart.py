"""The first page's chart (cophe_core.output.level_chart) and its one ranked sentence per run (families.gap_statement)."""

from __future__ import annotations

import json
import re

import numpy as np
import pytest

from cophe_core import score_files
from cophe_core.breakdown.families import describe_gaps, gap_statement, within_family
from cophe_core.breakdown.stats import bootstrap
from cophe_core.output.level_chart import levels_chart_spec, levels_points
from tests.conftest import SAMPLE


@pytest.fixture(scope="module")
def evals():
    runs = {r: SAMPLE / f"run_{r}.csv" for r in ("overcoder", "siblings")}
    s = score_files(SAMPLE / "gold.csv", runs, ontology="icd9")
    return {r: s.evaluation(r) for r in runs}


def test_points_are_the_evaluations_f1_with_the_bootstraps_intervals(evals):
    cis = {r: bootstrap(ev, n_resamples=100) for r, ev in evals.items()}
    t = levels_points(evals, cis)
    assert len(t) == 2 * (1 + 2 * (len(evals["siblings"].levels) + 1))
    for r in t.itertuples():
        assert r.value == pytest.approx(evals[r.run].score(r.measure, r.level).f1)
        figure = "flat f1" if r.measure == "flat" else f"{r.measure} {r.level} f1"
        ci = cis[r.run].set_index("figure").loc[figure]
        assert (r.low, r.high) == (ci.low, ci.high) and r.low <= r.value <= r.high
    assert np.isnan(levels_points(evals).low).all()  # no intervals given: none drawn


def test_spec_has_a_panel_per_run_and_the_levels_in_order(evals):
    data, spec = levels_chart_spec(levels_points(evals), level_name=str.upper, columns=2)
    assert spec["facet"]["field"] == "run" and spec["facet"]["sort"] == ["overcoder", "siblings"]
    y = spec["spec"]["layer"][1]["encoding"]["y"]
    assert y["sort"] == ["LEAF", "E2", "E1", "E0", "BLOCK", "OVERALL"]
    assert set(data.label) <= {f"{v:.3f}" for v in data.value}
    json.dumps(spec)  # plain data, as Streamlit sends it


def test_one_ranked_sentence_per_run_names_the_largest_gap_first(evals):
    ev = evals["overcoder"]
    w = within_family(ev)
    gaps = (w.set_f1 - w.cophe_f1).to_numpy()
    largest = w.level.iat[int(np.argmax(gaps))]
    line = gap_statement(ev, "overcoder")
    assert line is not None and line.startswith(
        f"Run overcoder: CoPHE F1 falls below set-based most at {largest} "
    )
    top = w.iloc[int(np.argmax(gaps))]
    assert f"({top.cophe_f1:.3f} against {top.set_f1:.3f}" in line
    # every level describe_gaps lists is named once, in one sentence
    listed = [g.split(",")[0].removeprefix("At ") for g in describe_gaps(ev, "overcoder")]
    # one sentence: a single full stop, the decimals' points aside ("0.755", "42.3%")
    assert all(line.count(f" {lv}") >= 1 for lv in listed) and len(re.findall(r"\.(?!\d)", line)) == 1
    exact = score_files(SAMPLE / "gold.csv", {"g": SAMPLE / "gold.csv"}).evaluation("g")
    assert gap_statement(exact, "g") is None
