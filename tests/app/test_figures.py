"""The pure figure functions: explicit colours, midpoint 0, escaping, and DAG-safe sizes."""

from __future__ import annotations

import pandas as pd
import pytest

from cophe_core import score_files
from cophe_core.breakdown.compare import level_deltas, levels_side_by_side
from cophe_core.breakdown.tree import focused_subtree
from cophe_core.ontology.custom import load_hierarchy
from cophe_core.output.plotting import MEASURE_NAMES, delta_bar, levels_bar, threshold_curve, tree_figure
from tests.conftest import long_csv


def test_tree_figure_uses_explicit_colours_centred_on_zero():
    s = score_files(
        long_csv([("d", "401.9"), ("d", "428.0")]), {"r": long_csv([("d", "401.1"), ("d", "401.9")])}
    )
    ev = s.evaluation("r")
    sub = focused_subtree(ev.nodes, ev.ontology)
    fig = tree_figure(sub, "balance")
    trace, bar = fig.data
    # 401 (one extra, one correct) is red, 428 (one missed) blue, on a scale fitted to them (±1 here)
    assert bar.marker.cmid == 0 and (bar.marker.cmin, bar.marker.cmax) == (-1, 1)
    colours = dict(zip(sub.code[sub.id != "root"], trace.marker.color))  # no tile for the root
    assert colours["428"] == "rgb(5, 48, 97)" and colours["401"] != colours["428"]
    red, _, blue = (int(v) for v in colours["401"][4:-1].split(", "))
    assert red > blue
    assert len(trace.ids) == len(sub) - 1  # every row but the root
    # children fit their parents: every tile is drawn at its value, on one scale (Plotly's "total")
    shown = sub[sub.id != "root"]
    scale = shown.value[shown.parent_id == "root"].sum()
    assert [y * scale for y in trace.y] == pytest.approx(shown.value.tolist())


def test_titles_are_escaped():
    h = load_hierarchy(
        b"child,parent,title\nroot,,<b>All</b>\nA,root,<script>alert(1)</script>\n", name="x.csv"
    )
    s = score_files(long_csv([("d", "A")]), {"r": long_csv([("d", "A")])}, ontology=h)
    ev = s.evaluation("r", max_level="d0")
    fig = tree_figure(focused_subtree(ev.nodes, ev.ontology), "f1")
    text = fig.to_json()
    assert "<script>" not in text and "&lt;script&gt;" in text


def test_dag_tree_draws_with_remainder_sizes():
    h = load_hierarchy(b"child,parent\nroot,\nA,root\nB,root\nab,A\nab,B\n", name="dag.csv")
    s = score_files(long_csv([("d", "ab")]), {"r": long_csv([("d", "ab")])}, ontology=h)
    ev = s.evaluation("r", max_level="d0")
    sub = focused_subtree(ev.nodes, ev.ontology, h.codes["root"])
    trace = tree_figure(sub, "f1").data[0]
    # ab sits under A and B, so children outweigh root: each tile holds its own value and its children's
    # (Plotly's "remainder"), so that every tile is drawn, each child inside its parent
    size = dict(zip(trace.ids, trace.y))
    start = dict(zip(trace.ids, trace.base))
    scale = sub.value.iloc[0] / (
        size[sub.id.iloc[0]] - sum(size[i] for i in sub.id[sub.parent_id == sub.id.iloc[0]])
    )
    for i, p, v in zip(sub.id, sub.parent_id, sub.value):
        kids = sub.id[sub.parent_id == i]
        assert size[i] * scale == pytest.approx(v + sum(size[k] * scale for k in kids)) and size[i] > 0
        if p:
            assert start[p] <= start[i] and start[i] + size[i] <= start[p] + size[p] + 1e-12


def test_levels_bar_has_one_trace_per_measure():
    s = score_files(
        long_csv([("d", "401.9")]), {"A": long_csv([("d", "401.1")]), "B": long_csv([("d", "401.9")])}
    )
    table = levels_side_by_side({r: s.evaluation(r) for r in ("A", "B")})
    fig = levels_bar(table)
    assert sorted({t.name for t in fig.data}) == [
        "Exact codes (Flat)",
        "Right family (Set-based)",
        "Right family and count (CoPHE)",
    ]
    assert isinstance(table, pd.DataFrame) and set(table.run) == {"A", "B"}


def _pair():
    s = score_files(
        long_csv([("d", "401.9"), ("d", "428.0")]),
        {"A": long_csv([("d", "401.1")]), "B <i>": long_csv([("d", "401.9"), ("d", "401.1")])},
    )
    return s.evaluation("A"), s.evaluation("B <i>")


def _charts():
    a, b = _pair()
    curve = pd.DataFrame(
        {"threshold": [0.1, 0.5, 0.9], **{f"{m}_f1": [0.2, 0.5, 0.1] for m in MEASURE_NAMES}}
    )
    return {
        "levels": levels_bar(levels_side_by_side({"A": a, "B <i>": b})),
        "delta": delta_bar(level_deltas(a, b), "f1", "A", "B <i>"),
        "threshold": threshold_curve(curve, 0.5, 0.3),
    }


def test_exported_charts_leave_room_for_their_ticks_and_titles():
    """In a standalone HTML file (cophe_core.output.report.figure_html) nothing resizes the margins but Plotly's
    automargin: every axis has it, and the fixed margins leave room for the titles and the legend."""
    for name, fig in _charts().items():
        layout = fig.to_plotly_json()["layout"]
        axes = {k: v for k, v in layout.items() if k.startswith(("xaxis", "yaxis"))}
        assert axes and all(v.get("automargin") is True for v in axes.values()), name
        m = layout["margin"]
        assert m["l"] >= 40 and m["b"] >= 30 and m["r"] >= 20 and m["t"] >= 40, name
        assert layout["legend"]["yref"] == "container"  # the legend sits in the margin, over no tick label


def test_bar_charts_name_the_levels_and_take_the_pages_words():
    a, b = _pair()
    names = {"leaf": "Codes as given", "e0": "Category (3 digits)", "overall": "All levels together"}
    words = {"flat": "Flat", "set_based": "Set-based", "cophe": "CoPHE", "tp": "TP", "run": "Run"}
    fig = levels_bar(levels_side_by_side({"A": a}), levels=names, words=words)
    assert {t.name for t in fig.data} == {"Flat", "Set-based", "CoPHE"}
    ticks = {y for t in fig.data for y in t.y}
    assert {"Codes as given", "Category<br>(3 digits)", "All levels together"} <= ticks
    assert not ticks & {"leaf", "e0", "overall"}
    assert "TP %{customdata[1]:,}" in fig.data[0].hovertemplate
    fig = delta_bar(level_deltas(a, b), "f1", "A", "B <i>", levels=names)
    assert "Category<br>(3 digits)" in {y for t in fig.data for y in t.y}
    assert "B &lt;i&gt; − A" in fig.layout.xaxis.title.text  # run names are escaped


def test_levels_bar_puts_four_runs_to_a_row():
    a, _ = _pair()
    fig = levels_bar(levels_side_by_side({f"run {i}": a for i in range(8)}))
    titles = [x.text for x in fig.layout.annotations]
    assert sorted(titles) == [f"Run: run {i}" for i in range(8)]
    rows = {round(fig.layout[k].domain[0], 3) for k in fig.layout if k.startswith("yaxis")}
    assert len(rows) == 2


def test_slices_chart_draws_each_run_with_its_interval_on_a_fitted_axis():
    from cophe_core.output.plotting import runs_chart, slices_chart

    t = pd.DataFrame(
        {
            "slice": ["Rare", "Rare", "Frequent", "Frequent"],
            "run": ["a", "b", "a", "b"],
            "value": [0.60, 0.65, 0.80, 0.82],
            "low": [0.58, 0.63, 0.79, 0.80],
            "high": [0.62, 0.66, 0.81, 0.84],
        }
    )
    fig = slices_chart(t, title="F1")
    assert [tr.name for tr in fig.data] == ["a", "b"]
    a = fig.data[0]
    assert list(a.error_x.array) == pytest.approx([0.02, 0.01]) and list(
        a.error_x.arrayminus
    ) == pytest.approx([0.02, 0.01])
    lo, hi = fig.layout.xaxis.range
    assert 0.5 < lo < 0.58 and 0.84 < hi <= 1.0  # fitted to the intervals, not 0 to 1
    runs = pd.DataFrame(
        {
            "run": ["a", "b", "c"],
            "figure": "f1",
            "value": [0.7, 0.8, 0.6],
            "low": [0.69, 0.79, 0.59],
            "high": [0.71, 0.81, 0.61],
            "delta": [None, 0.1, -0.1],
            "verdict": ["", "better", "worse"],
        }
    )
    colours = {tr.name: tr.marker.color for tr in runs_chart(runs, "f1", title="F1", baseline="a").data}
    assert colours == {
        "baseline": "#222222",
        "better than the baseline": "#1a9850",
        "worse than the baseline": "#d73027",
    }
