"""Pure functions: tables from cophe_core → Plotly figures. No Streamlit, no metric maths."""

from __future__ import annotations

import html

import pandas as pd
import plotly.express as px
import plotly.graph_objects as go

# Colour-blind-safe categorical colours (Okabe-Ito) and a diverging scale (ColorBrewer RdBu).
MEASURE_COLOURS = {"flat": "#999999", "set_based": "#56B4E9", "cophe": "#D55E00"}
MEASURE_NAMES = {"flat": "Flat (leaf codes)", "set_based": "Set-based", "cophe": "CoPHE"}
DIVERGING = "RdBu_r"  # blue = missed (under-coded), red = over-coded; midpoint 0
SEQUENTIAL = "Viridis"

COLOUR_BY = {
    "balance": ("Over/under-coding balance", DIVERGING, -1.0, 1.0),
    "f1": ("CoPHE F1", SEQUENTIAL, 0.0, 1.0),
    "set_f1": ("Set-based F1", SEQUENTIAL, 0.0, 1.0),
    "delta_f1": ("Change in CoPHE F1 (B − A)", "PuOr", -1.0, 1.0),
    "delta_balance": ("Change in balance (B − A)", "PuOr", -2.0, 2.0),
}


def levels_bar(table: pd.DataFrame, metric: str = "f1") -> go.Figure:
    """Grouped bars of one metric by level, one colour per measure, one panel per run.

    ``table`` is :func:`cophe_core.compare.levels_side_by_side` output.
    """
    df = table.assign(measure_name=table.measure.map(MEASURE_NAMES))
    fig = px.bar(
        df, x="level", y=metric, color="measure", barmode="group", facet_col="run",
        color_discrete_map=MEASURE_COLOURS, text_auto=".3f",
        category_orders={"measure": list(MEASURE_NAMES), "level": list(dict.fromkeys(df.level))},
        labels={"level": "Level", metric: metric.capitalize() if metric != "f1" else "F1", "measure": "Measure"},
        hover_data={"tp": True, "fp": True, "fn": True, "measure_name": True, "measure": False},
    )
    fig.for_each_trace(lambda t: t.update(name=MEASURE_NAMES.get(t.name, t.name)))
    fig.for_each_annotation(lambda a: a.update(text=html.escape(a.text.replace("run=", "Run: "))))
    fig.update_yaxes(range=[0, 1.05])
    fig.update_layout(height=380, margin={"t": 40, "b": 10, "l": 10, "r": 10},
                      legend={"orientation": "h", "y": -0.2})
    return fig


def delta_bar(deltas: pd.DataFrame, metric: str = "f1", a: str = "A", b: str = "B") -> go.Figure:
    """Bars of B − A for one metric, by level and measure (:func:`cophe_core.compare.level_deltas`)."""
    col = f"delta_{metric}"
    fig = px.bar(
        deltas.assign(measure_name=deltas.measure.map(MEASURE_NAMES)), x="level", y=col,
        color="measure", barmode="group", color_discrete_map=MEASURE_COLOURS, text_auto="+.3f",
        labels={"level": "Level", col: f"{metric.upper() if metric == 'f1' else metric.capitalize()}: "
                f"{html.escape(b)} − {html.escape(a)}", "measure": "Measure"},
    )
    fig.for_each_trace(lambda t: t.update(name=MEASURE_NAMES.get(t.name, t.name)))
    fig.add_hline(y=0, line_color="#444", line_width=1)
    fig.update_layout(height=340, margin={"t": 30, "b": 10, "l": 10, "r": 10},
                      legend={"orientation": "h", "y": -0.25})
    return fig


def tree_figure(sub: pd.DataFrame, colour: str = "balance", *, prefix: str = "") -> go.Figure:
    """An icicle of a :func:`cophe_core.tree.focused_subtree` table.

    Size is the row's ``value`` (gold plus predicted mass); colour is the chosen
    column, on an explicit scale with its midpoint at 0 for signed measures.
    Hover shows title, counts, TP/FP/FN and P/R/F1. Titles are HTML-escaped.
    """
    title, scale, lo, hi = COLOUR_BY[colour]
    p = prefix
    custom = pd.DataFrame({
        "title": sub.title.map(html.escape), "code": sub.code.map(html.escape),
        "gold": sub[p + "gold"], "predicted": sub[p + "predicted"],
        "tp": sub[p + "tp"], "fp": sub[p + "fp"], "fn": sub[p + "fn"],
        "precision": sub[p + "precision"], "recall": sub[p + "recall"], "f1": sub[p + "f1"],
        "balance": sub[p + "balance"], "set_f1": sub[p + "set_f1"], "colour": sub[colour],
    })
    hover = ("<b>%{customdata[1]} %{customdata[0]}</b><br>"
             "gold codes %{customdata[2]} · predicted %{customdata[3]}<br>"
             "matched (TP) %{customdata[4]} · over-coded (FP) %{customdata[5]} · missed (FN) %{customdata[6]}<br>"
             "P %{customdata[7]:.3f} · R %{customdata[8]:.3f} · CoPHE F1 %{customdata[9]:.3f} · "
             "set-based F1 %{customdata[11]:.3f}<br>"
             f"{html.escape(title)}: %{{customdata[12]:+.2f}}<extra></extra>")
    labels = [html.escape(v) for v in sub.label]
    # In a DAG a code can sit under two siblings, so children may outweigh their parent;
    # "total" would then draw nothing, "remainder" draws every tile.
    child_sum = sub.groupby("parent_id")["value"].sum()
    fits = (sub.set_index("id").value.reindex(child_sum.index).fillna(float("inf")) >= child_sum).all()
    fig = go.Figure(go.Icicle(
        ids=sub.id, parents=sub.parent_id, labels=labels, values=sub.value,
        branchvalues="total" if fits else "remainder",
        customdata=custom.to_numpy(), hovertemplate=hover, sort=False,
        marker={"colors": sub[colour], "colorscale": scale, "cmin": lo, "cmax": hi,
                "cmid": 0 if lo < 0 else None, "showscale": True,
                "colorbar": {"title": {"text": html.escape(title), "side": "right"}, "thickness": 14}},
        tiling={"orientation": "h"}, root={"color": "#f0f0f0"}, maxdepth=-1,
        textinfo="label",
    ))
    fig.update_layout(height=560, margin={"t": 10, "b": 10, "l": 10, "r": 10}, uniformtext={"minsize": 10, "mode": "hide"})
    return fig


def threshold_curve(curve: pd.DataFrame, current: float | None = None, tuned: float | None = None) -> go.Figure:
    """Flat, set-based and CoPHE F1 against the decision threshold (:meth:`ScoredRun.curve`)."""
    fig = go.Figure()
    for measure in MEASURE_NAMES:
        fig.add_scatter(x=curve.threshold, y=curve[f"{measure}_f1"], name=MEASURE_NAMES[measure],
                        mode="lines+markers", line={"color": MEASURE_COLOURS[measure]})
    if current is not None:
        fig.add_vline(x=current, line_dash="dot", line_color="#444", annotation_text="current")
    if tuned is not None:
        fig.add_vline(x=tuned, line_dash="dash", line_color="#009E73", annotation_text="tuned on dev")
    fig.update_layout(height=360, xaxis_title="Threshold", yaxis_title="F1 (overall)", yaxis_range=[0, 1],
                      margin={"t": 30, "b": 10, "l": 10, "r": 10}, legend={"orientation": "h", "y": -0.25})
    return fig
