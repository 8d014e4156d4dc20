"""The Compare page: N runs against a baseline, the family changes, the change tree; numbers from the core,
and colours that agree with the words."""

from __future__ import annotations

import re

import pytest

from cophe_core import score_files
from cophe_core.breakdown.families import family_changes
from cophe_core.breakdown.stats import compare_runs
from tests.app.conftest import SAMPLE, is_tree, plotly_specs, run_app

RUNS = ["siblings", "overcoder", "conservative"]
GREEN, RED = "#d9f0d3", "#f8d3d0"


@pytest.fixture(scope="module")
def evals():
    s = score_files(SAMPLE / "gold.csv", {r: SAMPLE / f"run_{r}.csv" for r in RUNS})
    return {r: s.evaluation(r) for r in RUNS}


@pytest.fixture(scope="module")
def page():
    return run_app("views/compare.py")


def tints(element) -> dict[tuple[int, int], str]:
    """(row, column) → background colour, from the Styler CSS sent with a dataframe."""
    out = {}
    for cells, colour in re.findall(
        r"([^{}]+)\{\s*background-color:\s*(#[0-9a-f]{6})\s*\}", element.proto.arrow_data.styler.styles
    ):
        for r, c in re.findall(r"row(\d+)_col(\d+)", cells):
            out[int(r), int(c)] = colour
    return out


def grids(at, column: str = "Right family and count F1"):
    """The scores grid (a dataframe) and the differences (a static table, whose cells wrap to the page)."""
    scores = next(d for d in at.dataframe if column in d.value.columns)
    deltas = next(t for t in at.table if column in t.value.columns)
    return scores, deltas


def test_precision_and_recall_columns(evals):
    at = run_app("views/compare.py")
    at.radio(key="cmp_figures").set_value("Precision and recall").run()
    _, deltas = grids(at, "Right family and count Precision")
    assert deltas.value.loc["overcoder", "Right family and count Precision"].endswith("worse")
    assert deltas.value.loc["overcoder", "Right family and count Recall"].endswith("better")


def test_runs_table_shows_the_cores_intervals_and_marks_the_best(page, evals):
    scores, _ = grids(page)
    t = scores.value
    # a run's values and intervals do not depend on the other runs: every run is resampled the same way
    table = compare_runs(evals, baseline="siblings", n_resamples=1000, seed=0)
    row = table.set_index(["run", "figure"]).loc[("overcoder", "cophe overall f1")]
    assert (
        t.loc["overcoder", "Right family and count F1"] == f"{row.value:.3f} ({row.low:.3f}–{row.high:.3f})"
    )
    for col in t.columns:
        starred = [r for r in t.index if t.loc[r, col].startswith("★")]
        values = {r: float(t.loc[r, col].lstrip("★ ").split()[0]) for r in t.index}
        assert starred == [r for r, v in values.items() if v == max(values.values())], col


def test_differences_are_green_only_when_better_and_red_only_when_worse(page):
    _, deltas = grids(page)
    t, colours = deltas.value, tints(deltas)
    assert "siblings" not in t.index  # the baseline is not compared with itself
    said = {"better": 0, "worse": 0}
    for i, run in enumerate(t.index):
        for j, col in enumerate(t.columns):
            text, colour = t.loc[run, col], colours.get((i, j))
            if text.endswith("better"):
                assert colour == GREEN and not text.startswith("−")
                said["better"] += 1
            elif text.endswith("worse"):
                assert colour == RED and text.startswith("−")
                said["worse"] += 1
            else:
                assert colour is None
    # overcoder writes many extra codes: worse F1 when counts matter than siblings, better exact-code F1
    assert t.loc["overcoder", "Right family and count F1"].endswith("worse")
    assert t.loc["overcoder", "Exact codes F1"].endswith("better")
    assert said["better"] and said["worse"]


def test_choosing_a_baseline_and_the_level_columns(evals):
    at = run_app("views/compare.py")
    at.selectbox(key="cmp_baseline").set_value("conservative").run()
    at.radio(key="cmp_figures").set_value("F1 by level").run()
    assert not at.exception
    scores, deltas = grids(at, "Category (3 digits)")
    assert "conservative" not in deltas.value.index and "conservative" in scores.value.index
    assert {"Category (3 digits)", "All levels together"} <= set(scores.value.columns)


def test_family_table_is_the_cores_ranked_with_words_and_tints_that_agree(page, evals):
    el = next(d for d in page.dataframe if "change_errors" in d.value.columns)
    t, colours = el.value, tints(el)
    core = family_changes(evals["siblings"], evals["overcoder"], "e0", n_resamples=1000, seed=0)
    assert list(t.code) == list(core.code[: len(t)])
    assert list(t.change_errors) == list(core.change_errors[: len(t)])
    col = list(t.columns).index("verdict")
    for i, (verdict, delta) in enumerate(zip(t.verdict, t.delta_f1)):
        if verdict == "B better":
            assert delta > 0 and colours[i, col] == GREEN
        elif verdict == "B worse":
            assert delta < 0 and colours[i, col] == RED
        else:
            assert verdict == "no clear difference" and (i, col) not in colours
    assert (t.verdict == "B worse").any()


def test_change_tree_has_a_fitted_symmetric_scale_and_both_runs_in_its_hover(page):
    spec = next(s for s in plotly_specs(page) if is_tree(s["data"][0]))
    icicle, bar = spec["data"][0], spec["data"][1]["marker"]
    assert bar["cmin"] == -bar["cmax"] and 0 < bar["cmax"] < 1  # fitted to the changes, not ±1
    assert "siblings" in icicle["hovertemplate"] and "overcoder" in icicle["hovertemplate"]
    assert "Change in F1 (overcoder − siblings)" in icicle["hovertemplate"]


def test_another_family_level_reruns_the_section_with_the_cores_table(evals):
    at = run_app("views/compare.py")
    at.selectbox(key="cmp_family_level").set_value("block").run()
    assert not at.exception
    el = next(d for d in at.dataframe if "change_errors" in d.value.columns)
    core = family_changes(evals["siblings"], evals["overcoder"], "block", n_resamples=1000, seed=0)
    assert list(el.value.code) == list(core.code[: len(el.value)]) and "401-405" in set(el.value.code)
    at.radio(key="cmp_family_order").set_value("Where overcoder makes fewer errors").run()
    shown = next(d for d in at.dataframe if "change_errors" in d.value.columns).value
    assert (shown.change_errors < 0).all() and list(shown.change_errors) == sorted(shown.change_errors)
