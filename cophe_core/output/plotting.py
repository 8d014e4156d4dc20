"""Plotly figures of cophe's tables: pure functions, tables in and figures out, used by the dashboard and in
notebooks. No Streamlit, no metric maths. Needs Plotly: ``pip install ".[plot]"`` in a cophe checkout.

    >>> from cophe_core import score_files
    >>> from cophe_core.breakdown.compare import levels_side_by_side
    >>> ev = score_files(b"doc_id,code\\n1,401.9\\n", {"A": b"doc_id,code\\n1,401.1\\n"}).evaluation("A")
    >>> fig = levels_bar(levels_side_by_side({"A": ev}), "f1")
    >>> [trace.name for trace in fig.data]
    ['Exact codes (Flat)', 'Right family (Set-based)', 'Right family and count (CoPHE)']
"""

from __future__ import annotations

import html
from collections.abc import Mapping
from typing import Any

import numpy as np
import pandas as pd
import plotly.graph_objects as go
from plotly.colors import get_colorscale, sample_colorscale

from ..metrics import MEASURE_WORDS

# Colour-blind-safe categorical colours (Okabe-Ito) and a diverging scale (ColorBrewer RdBu).
MEASURE_COLOURS = {"flat": "#999999", "set_based": "#56B4E9", "cophe": "#D55E00"}
MEASURE_NAMES = {
    m: f"{coder} ({tech})" for m, (coder, tech) in MEASURE_WORDS.items()
}  # as texts.measure says them
DIVERGING = "RdBu_r"  # blue = missed (under-coded), red = over-coded; midpoint 0
SEQUENTIAL = "Viridis"

COLOUR_BY = {
    "balance": ("Extra vs missed", DIVERGING, -1.0, 1.0),
    "fp": ("Extra codes", "Reds", 0.0, 1.0),
    "fn": ("Missed codes", "Blues", 0.0, 1.0),
    "extra_per_100": ("Extra codes per 100 gold codes", "Reds", 0.0, 1.0),
    "missed_per_100": ("Missed codes per 100 gold codes", "Blues", 0.0, 1.0),
    "error_share": ("Share of the run's errors", "Oranges", 0.0, 1.0),
    "f1": ("F1 (right family and count)", SEQUENTIAL, 0.0, 1.0),
    "set_f1": ("F1, families only", SEQUENTIAL, 0.0, 1.0),
    "delta_f1": ("Change in F1, right family and count (B − A)", "PuOr", -1.0, 1.0),
    "delta_balance": ("Change in extra vs missed (B − A)", "PuOr", -2.0, 2.0),
}


#: Default words of the bar and curve charts; the views pass the user's vocabulary (texts.term) in ``words``.
CHART_WORDS = {
    "level": "Level",
    "run": "Run",
    "measure": "Measure",
    "tp": "Correct",
    "fp": "Extra",
    "fn": "Missed",
    "precision": "Precision",
    "recall": "Recall",
    "f1": "F1",
    "threshold": "Threshold",
    "overall": "all levels together",
    "current": "current threshold",
    "tuned": "chosen on the development split",
}
PANELS_PER_ROW = 4  # runs side by side in the levels chart; more go to the next row
MARGIN = {"t": 40, "b": 40, "l": 60, "r": 30}  # with automargin on every axis, so no tick label is cut


def _wrap(text: object, width: int = 20) -> str:
    """``text`` HTML-escaped and broken into lines of about ``width`` characters (Plotly's ``<br>``), a
    bracket starting a line of its own.

    >>> _wrap("Subcategory (4th digit)"), _wrap("Right family and count per document", 14)
    ('Subcategory<br>(4th digit)', 'Right family<br>and count per<br>document')
    """
    lines: list[str] = []
    for part in str(text).replace(" (", "\0(").split("\0"):
        fresh = True
        for word in part.split():
            if lines and not fresh and len(lines[-1]) + 1 + len(word) <= width:
                lines[-1] += " " + word
            else:
                lines.append(word)
            fresh = False
    return "<br>".join(html.escape(line) for line in lines) or html.escape(str(text))


def _words(words: Mapping[str, str] | None) -> dict[str, str]:
    return {**CHART_WORDS, **MEASURE_NAMES, **(words or {})}


def _readable(fig: go.Figure) -> go.Figure:
    """Every axis sized to its tick labels and titles (also in an exported HTML file)."""
    fig.update_xaxes(automargin=True)
    fig.update_yaxes(automargin=True)
    return fig


def _grid(titles: list[str], per_row: int) -> dict[str, Any]:
    """Layout axes of panels ``per_row`` to a row, sharing both axes, each titled; tick labels of the levels
    on the first column only. Written out rather than by ``make_subplots``, which costs 0.06 s a chart.

    >>> sorted(_grid(["A", "B"], 4))
    ['annotations', 'xaxis', 'xaxis2', 'yaxis', 'yaxis2']
    """
    n = max(len(titles), 1)
    cols, rows = min(per_row, n), -(-n // per_row)
    h_gap, v_gap = 0.02, 0.12 if rows > 1 else 0.0
    width, height = (1 - h_gap * (cols - 1)) / cols, (1 - v_gap * (rows - 1)) / rows
    layout: dict[str, Any] = {"annotations": []}
    for i in range(n):
        r, c, k = divmod(i, cols) + (i + 1,)
        x0, top = c * (width + h_gap), 1 - r * (height + v_gap)
        suffix = "" if k == 1 else str(k)
        layout[f"xaxis{suffix}"] = {
            "domain": [x0, x0 + width],
            "anchor": f"y{suffix}",
            **({"matches": "x"} if k > 1 else {}),
        }
        layout[f"yaxis{suffix}"] = {
            "domain": [max(top - height, 0), top],
            "anchor": f"x{suffix}",
            **({"matches": "y", "showticklabels": c == 0} if k > 1 else {}),
        }
        if titles:
            layout["annotations"].append(
                {
                    "text": titles[i],
                    "x": x0 + width / 2,
                    "y": top,
                    "xref": "paper",
                    "yref": "paper",
                    "xanchor": "center",
                    "yanchor": "bottom",
                    "showarrow": False,
                    "font": {"size": 16},
                }
            )
    return layout


def _error_bars(
    x: np.ndarray, low: np.ndarray | None, high: np.ndarray | None, rows: np.ndarray
) -> dict[str, Any]:
    """A horizontal bar trace's ``error_x`` from each bar to its interval's ends (none without intervals)."""
    if low is None or high is None or np.isnan(low[rows]).all():
        return {}
    plus = np.nan_to_num(high[rows] - x.astype(float), nan=0.0)
    minus = np.nan_to_num(x.astype(float) - low[rows], nan=0.0)
    return {
        "error_x": {
            "type": "data",
            "symmetric": False,
            "array": np.maximum(plus, 0.0),
            "arrayminus": np.maximum(minus, 0.0),
            "color": "#333333",
            "thickness": 1,
            "width": 2,
        }
    }


def _bars(
    df: pd.DataFrame,
    x: str,
    levels: Mapping[str, str] | None,
    w: dict[str, str],
    text: str,
    custom_data: list[str],
    hover: str,
    *,
    panel: str | None = None,
    per_row: int = 1,
    layout: dict[str, Any] | None = None,
) -> go.Figure:
    """Horizontal bars of ``x`` by level (level names read on the axis), one colour per measure, with the
    ``hover`` template over ``custom_data`` and ``layout`` added to the figure's; with
    ``panel``, one panel per value of that column (titled by ``w["run"]``), ``per_row`` to a row.

    The figure is written as one dictionary and validated once: plotly.express facets and ``make_subplots``
    with updates cost 0.1–0.2 s for five runs. The legend shows the first panel's traces and toggles a
    measure everywhere.
    """
    names = {lv: _wrap((levels or {}).get(lv, lv)) for lv in dict.fromkeys(df.level)}
    order = list(names.values())  # the exact codes at the top, all levels together at the bottom
    present = set(df.measure)
    measures = [m for m in MEASURE_NAMES if m in present]
    # selections on arrays, not pandas filters: a filter on a string column costs a millisecond each
    panels = df[panel].to_numpy() if panel else np.zeros(len(df))
    groups = list(dict.fromkeys(panels))
    titles = [f"{html.escape(w['run'])}: {html.escape(str(g))}" for g in groups] if panel else []
    grid = _grid(titles, per_row)
    values, of_measure = df[x].to_numpy(), df.measure.to_numpy()
    # an interval's arms about each bar where the table has them (NaN: none drawn)
    low, high = (df[c].to_numpy(dtype=float) if c in df else None for c in ("low", "high"))
    level_names = np.array([names[lv] for lv in df.level], dtype=object)
    custom = df[custom_data].to_numpy(dtype=object)
    traces = []
    for i, group in enumerate(groups):
        suffix = "" if i == 0 else str(i + 1)
        for m in measures:
            rows = (panels == group) & (of_measure == m)
            traces.append(
                {
                    "type": "bar",
                    "orientation": "h",
                    "x": values[rows],
                    "y": level_names[rows],
                    "xaxis": f"x{suffix}",
                    "yaxis": f"y{suffix}",
                    "name": html.escape(w[m]),
                    "legendgroup": m,
                    "showlegend": i == 0,
                    "marker": {"color": MEASURE_COLOURS[m]},
                    # flat has the row of the exact codes to itself: two bar slots a row, not three
                    "offsetgroup": "cophe" if m == "cophe" else "first",
                    "texttemplate": f"%{{x:{text}}}",
                    "textposition": "inside",
                    "insidetextanchor": "end",
                    "textangle": 0,
                    "textfont": {"size": 11},
                    "customdata": custom[rows],
                    "hovertemplate": hover,
                    **_error_bars(values[rows], low, high, rows),
                }
            )
    for key in grid:  # every axis sized to its tick labels and titles (also in an exported HTML file)
        if key.startswith("yaxis"):
            grid[key] |= {
                "type": "category",
                "categoryorder": "array",
                "categoryarray": order,
                "range": [len(order) - 0.5, -0.5],
                "autorange": False,
                "automargin": True,
            }
        elif key.startswith("xaxis"):
            grid[key] |= {"automargin": True, **(layout or {}).get("xaxis", {})}
    grid["yaxis"]["title"] = {"text": html.escape(w["level"])}
    return go.Figure(
        data=traces,
        layout={
            **{k: v for k, v in (layout or {}).items() if k != "xaxis"},
            **grid,
            "barmode": "group",
            "bargap": 0.2,
            "bargroupgap": 0.0,
            "uniformtext": {"minsize": 9, "mode": "hide"},
            "legend": {
                "orientation": "h",
                "yref": "container",
                "y": 1,
                "yanchor": "top",
                "x": 0,
                "title": {"text": html.escape(w["measure"])},
            },
        },
    )


def levels_bar(
    table: pd.DataFrame,
    metric: str = "f1",
    *,
    levels: Mapping[str, str] | None = None,
    words: Mapping[str, str] | None = None,
    per_row: int = PANELS_PER_ROW,
) -> go.Figure:
    """Bars of one metric by level, one colour per measure, one panel per run (:data:`PANELS_PER_ROW` to a row).

    ``table`` is :func:`cophe_core.breakdown.compare.levels_side_by_side` output. ``levels`` names the level ids (say
    by :func:`cophe_core.ontology.level_name`; by default the ids are shown); ``words`` names the measures,
    the counts and the axes (defaults :data:`MEASURE_NAMES` and :data:`CHART_WORDS`); ``per_row`` runs'
    panels go side by side. The bars lie horizontal, so that a level's name reads on its axis however long
    it is.

    Examples
    --------
    >>> from cophe_core import score_files
    >>> from cophe_core.breakdown.compare import levels_side_by_side
    >>> ev = score_files(b"doc_id,code\\n1,401.9\\n", {"A": b"doc_id,code\\n1,401.1\\n"}).evaluation("A")
    >>> fig = levels_bar(levels_side_by_side({"A": ev}), "f1", levels={"e0": "Category"})
    >>> fig.data[2].name, [round(float(v), 3) for v in fig.data[2].x]  # F1 at each level, then overall
    ('Right family and count (CoPHE)', [0.0, 0.0, 1.0, 1.0, 0.667])
    """
    w = _words(words)
    runs = list(dict.fromkeys(table.run))
    per_row = max(1, min(per_row, len(runs)))
    df = table.assign(run_name=table.run.map(lambda r: html.escape(str(r))))
    hover = (
        "<b>%{customdata[0]}</b> · %{fullData.name}<br>%{y}<br>"
        + html.escape(w[metric])
        + " %{x:.3f}<br>"
        + " · ".join(
            f"{html.escape(w[k])} %{{customdata[{i}]:,}}" for i, k in enumerate(("tp", "fp", "fn"), 1)
        )
        + "<extra></extra>"
    )
    n_rows = -(-len(runs) // per_row)
    per_panel = 100 + 24 * len(table) // max(len(runs), 1)
    top = (
        140  # room for the legend on three lines (one a measure, as in a half-width column at 1280 px) above
    )
    # the panels' titles, which it overlapped on two
    return _bars(
        df,
        metric,
        levels,
        w,
        ".3f",
        ["run_name", "tp", "fp", "fn"],
        hover,
        panel="run",
        per_row=per_row,
        layout={
            "height": top + 30 + n_rows * per_panel,
            "margin": {**MARGIN, "t": top},
            "xaxis": {"range": [0, 1.05], "title": {"text": html.escape(w[metric])}},
        },
    )


def delta_bar(
    deltas: pd.DataFrame,
    metric: str = "f1",
    a: str = "A",
    b: str = "B",
    *,
    levels: Mapping[str, str] | None = None,
    words: Mapping[str, str] | None = None,
) -> go.Figure:
    """Bars of B − A for one metric, by level and measure (:func:`cophe_core.breakdown.compare.level_deltas`);
    ``levels`` and ``words`` as in :func:`levels_bar`.

    Examples
    --------
    >>> from cophe_core import score_files
    >>> gold = b"doc_id,code\\n1,401.9\\n1,428.0\\n2,250.00\\n"
    >>> runs = {"A": b"doc_id,code\\n1,401.1\\n2,250.00\\n", "B": b"doc_id,code\\n1,401.9\\n1,428.0\\n2,250.01\\n"}
    >>> s = score_files(gold, runs)
    >>> a, b = s.evaluation("A"), s.evaluation("B")
    >>> from cophe_core.breakdown.compare import level_deltas
    >>> fig = delta_bar(level_deltas(a, b), "f1", a="A", b="B")
    >>> type(fig).__name__, len(fig.data) > 0
    ('Figure', True)
    """
    w = _words(words)
    col = f"delta_{metric}"
    title = f"{w[metric]}: {b} − {a}"
    hover = (
        "<b>%{fullData.name}</b><br>%{y}<br>"
        + html.escape(title)
        + " %{x:+.3f}<br>"
        + html.escape(f"{a} ")
        + "%{customdata[0]:.3f} · "
        + html.escape(f"{b} ")
        + "%{customdata[1]:.3f}"
        + "<extra></extra>"
    )
    fig = _bars(
        deltas,
        col,
        levels,
        w,
        "+.3f",
        [f"a_{metric}", f"b_{metric}"],
        hover,
        layout={
            "height": 140 + 24 * len(deltas),
            "margin": {**MARGIN, "t": 60},
            "xaxis": {"title": {"text": html.escape(title)}},
        },
    )
    fig.add_vline(x=0, line_color="#444", line_width=1)
    return fig


TREE_WORDS = {
    "gold": "Gold codes",
    "predicted": "codes written",
    "tp": "Correct",
    "fp": "Extra",
    "fn": "Missed",
    "precision": "Precision",
    "recall": "Recall",
    "f1": "F1",
    "set_f1": "F1, families only",
    "error_share": "Share of the run's errors at this level",
}
FITTED_QUANTILE = 0.9  # a signed colour scale ends at this quantile of |value| over the tiles shown


def colour_range(
    values: pd.Series, weights: pd.Series | None = None, *, signed: bool, quantile: float = FITTED_QUANTILE
) -> tuple[float, float]:
    """The colour scale fitted to the tiles shown.

    For a signed measure: ±r, symmetric about 0, with r the ``quantile`` of |value| weighted by ``weights``
    (the tiles' sizes), so that a few tiny families at ±1 do not wash out the large ones; values beyond
    ±r take the end colours (clipped). Otherwise 0 … the largest value. Never narrower than ±0.01 (or
    0 … 0.01), so that a scale exists when every value is 0.

    >>> colour_range(pd.Series([0.1, -0.2, 1.0]), pd.Series([10, 10, 1]), signed=True, quantile=0.9)
    (-0.2, 0.2)
    """
    v = pd.to_numeric(values, errors="coerce").to_numpy(dtype=float)
    w = np.ones_like(v) if weights is None else np.asarray(weights, dtype=float)
    keep = ~np.isnan(v) & (w > 0)
    v, w = np.abs(v[keep]), w[keep]
    if not signed:
        return 0.0, max(float(v.max()) if len(v) else 0.0, 0.01)
    if not len(v):
        return -0.01, 0.01
    order = np.argsort(v)
    cum = np.cumsum(w[order]) / w.sum()
    r = float(v[order][min(np.searchsorted(cum, quantile), len(v) - 1)])
    r = max(round(r, 2), 0.01)
    return -r, r


ROOT_COLOUR = "#f5f5f5"  # "All codes" is the sum of everything: a frame, not a family
OTHER_COLOUR = "#e6e6e6"  # an "Other" tile merges families: it is not one, so it takes no colour of the scale
COUNT_COLOURS = ("fp", "fn", "extra_per_100", "missed_per_100")  # colours shown as whole numbers
SUPPORTED_COLOURS = ("extra_per_100", "missed_per_100")  # no value (too few gold codes): grey, not a colour
COLOUR_UNITS = {
    "balance": "(extra − missed) per code handled",
    "delta_f1": "purple: B higher, orange: B lower",
    "delta_balance": "purple: B relatively more extra, orange: more missed",
    "error_share": "extra + missed, of all the run's",
    "fp": "codes written beyond the gold standard",
    "fn": "gold codes not written",
    "extra_per_100": "grey: fewer than 10 gold codes",
    "missed_per_100": "grey: fewer than 10 gold codes",
    "f1": "0 = nothing right, 1 = all right",
    "set_f1": "0 = nothing right, 1 = all right",
}


def coloured(sub: pd.DataFrame) -> pd.DataFrame:
    """The tiles drawn on the colour scale: the families, not the root or the "Other" tiles.

    Examples
    --------
    >>> from cophe_core import score_files
    >>> gold = b"doc_id,code\\n1,401.9\\n1,428.0\\n2,250.00\\n"
    >>> runs = {"A": b"doc_id,code\\n1,401.1\\n2,250.00\\n", "B": b"doc_id,code\\n1,401.9\\n1,428.0\\n2,250.01\\n"}
    >>> s = score_files(gold, runs)
    >>> a, b = s.evaluation("A"), s.evaluation("B")
    >>> from cophe_core.breakdown.tree import focused_subtree
    >>> sub = focused_subtree(a.nodes, a.ontology)
    >>> len(coloured(sub)) <= len(sub)
    True
    """
    return sub[(sub.id != "root") & (sub.merged.map(len) == 0)]


def tile_colours(sub: pd.DataFrame, colour: str, scale: str, lo: float, hi: float) -> list[str]:
    """Each tile's colour on ``scale`` between ``lo`` and ``hi`` (values beyond take the end colours); the
    root and the "Other" tiles are light grey.

    Examples
    --------
    >>> import pandas as pd
    >>> tile_colours(pd.DataFrame({"id": ["root", "7", "8"], "balance": [0.0, -1.0, 1.0], "merged": [[], [], []]}), "balance", "RdBu_r", -1.0, 1.0)
    ['#f5f5f5', 'rgb(5, 48, 97)', 'rgb(103, 0, 31)']
    """
    raw = pd.to_numeric(sub[colour], errors="coerce")
    values = raw.fillna((lo + hi) / 2).clip(lo, hi)
    span = hi - lo if hi > lo else 1.0
    colours = sample_colorscale(get_colorscale(scale), ((values - lo) / span).tolist())
    unsupported = raw.isna().to_numpy() if colour in SUPPORTED_COLOURS else np.zeros(len(sub), bool)
    return [
        ROOT_COLOUR if i == "root" else OTHER_COLOUR if len(m) or none else c
        for i, c, m, none in zip(sub.id, colours, sub.merged, unsupported)
    ]


def _short(text: str, n: int = 40) -> str:
    return text if len(text) <= n else text[: n - 1].rstrip() + "…"


def tree_labels(sub: pd.DataFrame) -> list[str]:
    """Tile labels: the code in bold and a short title; "Other" tiles say how many they merge and that
    they open. HTML-escaped.

    Examples
    --------
    >>> from cophe_core import score_files
    >>> gold = b"doc_id,code\\n1,401.9\\n1,428.0\\n2,250.00\\n"
    >>> runs = {"A": b"doc_id,code\\n1,401.1\\n2,250.00\\n", "B": b"doc_id,code\\n1,401.9\\n1,428.0\\n2,250.01\\n"}
    >>> s = score_files(gold, runs)
    >>> a, b = s.evaluation("A"), s.evaluation("B")
    >>> from cophe_core.breakdown.tree import focused_subtree
    >>> tree_labels(focused_subtree(a.nodes, a.ontology))[0]
    'All codes'
    """
    out = []
    for code, title, merged in zip(sub.code, sub.title, sub.merged):
        if code:
            out.append(f"<b>{html.escape(code)}</b> {html.escape(_short(title))}")
        elif len(merged):
            out.append(f"<b>Other</b>: {len(merged)} smaller families (click to list)")
        else:
            out.append(html.escape(title))
    return out


def without_root(sub: pd.DataFrame) -> pd.DataFrame:
    """The tiles of ``sub`` less the virtual "All codes" root, whose children become the top tiles.

    An icicle gives every depth the same width, so a root drawn for one label would take a third of a
    two-level view; the heading above the chart names the view instead. Counts are not changed.

    Examples
    --------
    >>> import pandas as pd
    >>> sub = pd.DataFrame({"id": ["root", "n1", "n2", "n3"], "parent_id": ["", "root", "root", "n1"]})
    >>> without_root(sub).parent_id.tolist()
    ['', '', 'n1']
    """
    if not (sub.id == "root").any():
        return sub
    out = sub[sub.id != "root"].copy()
    out["parent_id"] = out.parent_id.mask(out.parent_id == "root", "")
    return out


TREE_TEXT_PX = 13  # every tile label at this size: never shrunk (a label that does not fit is left out)
TREE_LINE_PX = 17  # a line of it (Plotly's line spacing, 1.3)
TREE_PAD_PX = 3  # Plotly's padding between a bar's text and its edges
TREE_CHAR_PX = 6.5  # the mean width of a character at that size, with room to spare (measured: 5.8)
TREE_WIDTH_PX = 680  # the width the labels are wrapped for: the tiles' width on the tree page at 1280 px


def _lines(text: str, width: int) -> list[str]:
    """``text`` broken into lines of at most ``width`` characters at its spaces; a word longer than a line
    is cut with an ellipsis.

    >>> _lines("Diseases of other endocrine glands", 16)
    ['Diseases of', 'other endocrine', 'glands']
    """
    lines: list[str] = []
    for word in text.split():
        word = _short(word, width)
        if lines and len(lines[-1]) + 1 + len(word) <= width:
            lines[-1] += " " + word
        else:
            lines.append(word)
    return lines


def tile_text(code: str, title: str, merged: int, lines: int, width: int) -> str:
    """A tile's label in at most ``lines`` lines of ``width`` characters: the code in bold and the title
    (the last line cut with an ellipsis when it goes on), or for an "Other" tile that merges ``merged``
    families, how many and that it opens; empty when not even a line fits. HTML-escaped.

    >>> tile_text("249-259", "Diseases of other endocrine glands", 0, 2, 20)
    '<b>249-259</b> Diseases of<br>other endocrine…'
    >>> tile_text("", "", 12, 1, 30), tile_text("401", "Essential hypertension", 0, 0, 30)
    ('<b>Other</b>: 12 smaller families…', '')
    """
    if lines < 1 or width < 1:
        return ""
    bold = code or ("Other" if merged else "")
    text = (
        f"{code} {title}"
        if code
        else f"Other: {merged} smaller families (click to list)"
        if merged
        else title
    )
    kept = _lines(text, width)
    if len(kept) > lines:
        last = kept[lines - 1]
        kept = kept[: lines - 1] + [last + "…" if len(last) < width else last[: width - 1].rstrip() + "…"]
    out = [html.escape(line) for line in kept]
    if bold and out and kept[0].startswith(bold):
        out[0] = f"<b>{html.escape(bold)}</b>{html.escape(kept[0][len(bold) :])}"
    return "<br>".join(out)


def children_fit(sub: pd.DataFrame) -> bool:
    """Whether every tile's children add up to no more than the tile (a tree); in a DAG a code can sit under
    two siblings, so children may outweigh their parent.

    >>> import pandas as pd
    >>> children_fit(pd.DataFrame({"id": ["a", "b"], "parent_id": ["", "a"], "value": [3, 2]}))
    True
    """
    child_sum = sub.groupby("parent_id")["value"].sum()
    child_sum = child_sum[child_sum.index != ""]
    own = sub.set_index("id").value.reindex(child_sum.index).fillna(float("inf"))
    return bool((own >= child_sum).all())


def tree_tiles(sub: pd.DataFrame) -> pd.DataFrame:
    """Where each tile of a tree table (``id``, ``parent_id``, ``value``; the top tiles' parent ``""``) is
    drawn: its ``depth`` (column: 0 for a top tile, its parent's plus one otherwise), and its ``start`` and
    ``size`` down that column, as shares of the column's height. Siblings follow one another in the table's
    order from their parent's start, so that a tile's children lie within its span; the top tiles fill
    their column, which starts at the left edge (no column for an implicit root).

    A tile's size is its value, over the sum of the top tiles' values, when every parent holds its
    children (:func:`children_fit`; what the children leave is blank). Otherwise (a DAG) a tile's size is
    its own value plus its children's sizes (Plotly's "remainder"), so that every tile is drawn. A tile
    whose parent is not in the table is a top tile.

    >>> import pandas as pd
    >>> sub = pd.DataFrame({"id": ["a", "b", "a1", "a2"], "parent_id": ["", "", "a", "a"],
    ...                     "value": [6, 2, 3, 1]})
    >>> t = tree_tiles(sub)
    >>> t.depth.tolist(), t.start.tolist(), t["size"].tolist()
    ([0, 0, 1, 1], [0.0, 0.75, 0.0, 0.375], [0.75, 0.25, 0.375, 0.125])
    """
    ids = sub.id.astype(str).reset_index(drop=True)
    parent = sub.parent_id.astype(str).reset_index(drop=True)
    parent = parent.where(parent.isin(ids), "")
    value = pd.to_numeric(sub.value.reset_index(drop=True), errors="coerce").fillna(0.0).clip(lower=0.0)
    # depth, one level at a time: a handful of levels, each a vectorised lookup
    depth = pd.Series(np.where(parent == "", 0, -1), dtype=int)
    for d in range(len(ids)):
        at = (depth < 0) & parent.isin(ids[depth == d])
        if not at.any():
            break
        depth[at] = d + 1
    if (depth < 0).any():
        raise ValueError(
            f"tiles {', '.join(ids[depth < 0][:5])} do not lead to a top tile: their parents form a cycle"
        )
    size = value.astype(float)
    if not children_fit(pd.DataFrame({"id": ids, "parent_id": parent, "value": value})):
        for d in range(int(depth.max()), 0, -1):  # bottom up: a tile holds its own value and its children
            kids = size[depth == d].groupby(parent[depth == d]).sum()
            at = depth == d - 1
            size[at] = value[at] + ids[at].map(kids).fillna(0.0)
    start = pd.Series(0.0, index=ids.index)
    for d in range(int(depth.max()) + 1):  # top down: siblings one after another from their parent's start
        at = depth == d
        first = parent[at].map(pd.Series(start.to_numpy(), index=ids)).fillna(0.0)
        start[at] = first + size[at].groupby(parent[at]).cumsum() - size[at]
    total = size[depth == 0].sum() or 1.0
    return pd.DataFrame(
        {"id": ids, "parent_id": parent, "depth": depth, "start": start / total, "size": size / total}
    )


def tree_figure(
    sub: pd.DataFrame,
    colour: str = "balance",
    *,
    prefix: str = "",
    words: Mapping[str, str] | None = None,
    fitted: bool = True,
    height: int = 640,
    runs: tuple[str, str] | None = None,
    width: int = TREE_WIDTH_PX,
) -> go.Figure:
    """An icicle of a :func:`cophe_core.breakdown.tree.focused_subtree` table: a column for each depth,
    the top tiles in the first, at the left edge (no column for a root), each tile's children beside it
    within its span (:func:`tree_tiles`), drawn as one bar trace with the tiles' ids on its bars.

    Size is the row's ``value`` (gold plus predicted codes); colour is the chosen column. With ``fitted``
    the scale is fitted to the tiles shown (:func:`colour_range`: symmetric about 0 and clipped for a
    signed measure), and the colour bar states its range; otherwise it spans the measure's whole range.
    Every tile tall enough for a line of text carries its code and as much of its title as its lines hold
    (:func:`tile_text`, at :data:`TREE_TEXT_PX` px, never shrunk; wrapped for tiles ``width`` px wide in all,
    the colour bar aside). Hover gives the counts
    in ``words`` (default: a coder's words, :data:`TREE_WORDS`). Titles are HTML-escaped. With ``runs``
    (the names of runs A and B), ``sub`` is a comparison (:func:`cophe_core.breakdown.compare.delta_subtree`) and the
    hover gives both runs' counts and the change.

    Examples
    --------
    >>> from cophe_core import score_files
    >>> gold = b"doc_id,code\\n1,401.9\\n1,428.0\\n2,250.00\\n"
    >>> runs = {"A": b"doc_id,code\\n1,401.1\\n2,250.00\\n", "B": b"doc_id,code\\n1,401.9\\n1,428.0\\n2,250.01\\n"}
    >>> s = score_files(gold, runs)
    >>> a, b = s.evaluation("A"), s.evaluation("B")
    >>> from cophe_core.breakdown.tree import focused_subtree
    >>> fig = tree_figure(focused_subtree(a.nodes, a.ontology))
    >>> fig.data[0].type, fig.data[0].ids[0], fig.data[0].text[0], int(fig.data[0].x[0])
    ('bar', 'n49', '<b>249-259</b> Diseases of other endocrine glands', 0)
    """
    title, scale, lo, hi = COLOUR_BY[colour]
    units = COLOUR_UNITS.get(colour, "")
    sub = without_root(sub)
    if runs is not None:  # name the runs where the legend says A and B
        title = title.replace("B − A", f"{runs[1]} − {runs[0]}")
        units = units.replace("B ", f"{runs[1]} ")
    signed = lo < 0
    w = {**TREE_WORDS, **(words or {})}
    p = prefix
    shown = coloured(sub)
    if fitted:
        lo, hi = colour_range(shown[colour], shown["value"], signed=signed)
    custom = pd.DataFrame(
        {
            "title": sub.title.map(html.escape),
            "code": sub.code.map(html.escape),
            "gold": sub[p + "gold"],
            "predicted": sub[p + "predicted"],
            "tp": sub[p + "tp"],
            "fp": sub[p + "fp"],
            "fn": sub[p + "fn"],
            "precision": sub[p + "precision"],
            "recall": sub[p + "recall"],
            "f1": sub[p + "f1"],
            "balance": sub[p + "balance"],
            "set_f1": sub[p + "set_f1"],
            "colour": sub[colour],
            "share": sub.get("error_share", 0.0),
        }
    )
    e = {k: html.escape(v) for k, v in w.items()}
    hover = (
        "<b>%{customdata[1]} %{customdata[0]}</b><br>"
        f"{e['gold']} %{{customdata[2]}} · {e['predicted']} %{{customdata[3]}}<br>"
        f"{e['tp']} %{{customdata[4]}} · {e['fp']} %{{customdata[5]}} · {e['fn']} %{{customdata[6]}}<br>"
        f"{e['precision']} %{{customdata[7]:.3f}} · {e['recall']} %{{customdata[8]:.3f}} · "
        f"{e['f1']} %{{customdata[9]:.3f}} · {e['set_f1']} %{{customdata[11]:.3f}}<br>"
        f"{e['error_share']}: %{{customdata[13]:.1%}}<extra></extra>"
    )
    if runs is not None:
        custom, hover = _both_runs_hover(sub, runs, w)
    fmt = (
        ".0%"
        if colour == "error_share"
        else "+.2f"
        if signed
        else ",.0f"
        if colour in COUNT_COLOURS
        else ".2f"
    )
    rng = f"±{hi:.2f}" if signed else f"{lo:{fmt}} to {hi:{fmt}}"
    bar_title = (
        f"{html.escape(title)}<br><sup>{html.escape(units)}</sup>"
        f"<br><sup>scale {rng}{', fitted' if fitted else ''}</sup>"
    )
    fig = go.Figure(_tiles_trace(sub, tile_colours(sub, colour, scale, lo, hi), custom, hover, height, width))
    # the colour bar, on a trace that draws nothing (the tiles carry explicit colours)
    fig.add_scatter(
        x=[None],
        y=[None],
        mode="markers",
        hoverinfo="skip",
        showlegend=False,
        marker={
            "colorscale": scale,
            "cmin": lo,
            "cmax": hi,
            "cmid": 0 if signed else None,
            "color": [lo],
            "showscale": True,
            "colorbar": {"title": {"text": bar_title, "side": "right"}, "thickness": 14, "tickformat": fmt},
        },
    )
    columns = int(max(fig.data[0].x, default=0)) + 1
    # the columns side by side from the left edge to the right, the first tile of each at the top
    fig.update_xaxes(visible=False, range=[-0.5, columns - 0.5], fixedrange=True)
    fig.update_yaxes(visible=False, range=[1, 0], fixedrange=True)
    fig.update_layout(
        height=height,
        margin={"t": 4, "b": 4, "l": 4, "r": 4},
        uniformtext={"minsize": TREE_TEXT_PX, "mode": "hide"},
        barmode="overlay",
        hovermode="closest",
        plot_bgcolor="#ffffff",
    )
    return fig


def _tiles_trace(
    sub: pd.DataFrame, colours: list[str], custom: pd.DataFrame, hover: str, height: int, width_px: int
) -> go.Bar:
    """The tiles of a tree (:func:`tree_tiles`) as one bar trace: a bar per tile, in its depth's column, from
    its start down by its size; each labelled as its height in pixels allows (:func:`tile_text`), the tile's
    id on the bar, so that a click names it."""
    tiles = tree_tiles(sub)
    columns = int(tiles.depth.max()) + 1 if len(tiles) else 1
    plot_px = height - 8  # the figure's margins
    lines = ((tiles["size"] * plot_px - 2 * TREE_PAD_PX) // TREE_LINE_PX).clip(lower=0).astype(int)
    width = int((width_px / columns - 2 * TREE_PAD_PX) // TREE_CHAR_PX)
    text = [tile_text(c, t, len(m), n, width) for c, t, m, n in zip(sub.code, sub.title, sub.merged, lines)]
    return go.Bar(
        x=tiles.depth,
        base=tiles.start,
        y=tiles["size"],
        width=1.0,
        ids=tiles.id,
        text=text,
        textposition="inside",
        insidetextanchor="start",
        textangle=0,
        textfont={"size": TREE_TEXT_PX},
        customdata=custom.to_numpy(),
        hovertemplate=hover,
        marker={"color": colours, "line": {"width": 1, "color": "#ffffff"}},
        # a click selects a tile to focus it: the others are not dimmed meanwhile
        selected={"marker": {"opacity": 1}},
        unselected={"marker": {"opacity": 1}},
        showlegend=False,
        name="",
    )


def _both_runs_hover(sub: pd.DataFrame, runs: tuple[str, str], w: dict[str, str]) -> tuple[pd.DataFrame, str]:
    """Hover data and template of a comparison tree: each run's counts and F1, and the change in F1."""
    custom = pd.DataFrame(
        {
            "title": sub.title.map(html.escape),
            "code": sub.code.map(html.escape),
            "gold": sub["a_gold"],
            "delta": sub["delta_f1"],
        }
    )
    lines = []
    for i, (run, p) in enumerate(zip(runs, ("a_", "b_"))):
        for k in ("predicted", "tp", "fp", "fn", "f1"):
            custom[f"{i}{k}"] = sub[p + k]
        base = 4 + 5 * i
        lines.append(
            f"<b>{html.escape(run)}</b>: {html.escape(w['predicted'])} %{{customdata[{base}]}} · "
            f"{html.escape(w['tp'])} %{{customdata[{base + 1}]}} · {html.escape(w['fp'])} "
            f"%{{customdata[{base + 2}]}} · {html.escape(w['fn'])} %{{customdata[{base + 3}]}} · "
            f"{html.escape(w['f1'])} %{{customdata[{base + 4}]:.3f}}"
        )
    change = html.escape(f"Change in {w['f1']} ({runs[1]} − {runs[0]})")
    hover = (
        "<b>%{customdata[1]} %{customdata[0]}</b><br>"
        + f"{html.escape(w['gold'])} %{{customdata[2]}}<br>"
        + "<br>".join(lines)
        + f"<br>{change}: %{{customdata[3]:+.3f}}<extra></extra>"
    )
    return custom, hover


def runs_chart(
    table: pd.DataFrame, figure: str, *, title: str, baseline: str, words: Mapping[str, str] | None = None
) -> go.Figure:
    """One figure of :func:`cophe_core.breakdown.stats.compare_runs` for every run: a dot with its 95% interval,
    coloured by the verdict against the baseline (green better, red worse, grey no clear difference, black
    for the baseline itself), so that colour and words agree.

    Examples
    --------
    >>> from cophe_core import score_files
    >>> gold = b"doc_id,code\\n1,401.9\\n1,428.0\\n2,250.00\\n"
    >>> runs = {"A": b"doc_id,code\\n1,401.1\\n2,250.00\\n", "B": b"doc_id,code\\n1,401.9\\n1,428.0\\n2,250.01\\n"}
    >>> s = score_files(gold, runs)
    >>> a, b = s.evaluation("A"), s.evaluation("B")
    >>> from cophe_core.breakdown.stats import compare_runs
    >>> table = compare_runs({"A": a, "B": b}, baseline="A", n_resamples=50, macro=False)
    >>> fig = runs_chart(table, "cophe overall f1", title="CoPHE F1", baseline="A")
    >>> [trace.name for trace in fig.data]
    ['baseline', 'no clear difference']
    """
    w = {
        "better": "better than the baseline",
        "worse": "worse than the baseline",
        "no clear difference": "no clear difference",
        "": "baseline",
        **(words or {}),
    }
    rows = table[table.figure == figure].iloc[::-1]  # the first run at the top
    fig = go.Figure()
    for verdict, colour in VERDICT_COLOURS.items():
        part = rows[rows.verdict == verdict]
        if part.empty:
            continue
        names = [html.escape(str(r)) for r in part.run]
        fig.add_scatter(
            x=part.value,
            y=names,
            mode="markers",
            name=html.escape(w[verdict]),
            marker={"color": colour, "size": 11, "symbol": "diamond" if verdict == "" else "circle"},
            error_x={
                "type": "data",
                "symmetric": False,
                "array": part.high - part.value,
                "arrayminus": part.value - part.low,
                "color": colour,
                "thickness": 2,
            },
            customdata=np.column_stack([part.low, part.high, part.delta.fillna(0)]),
            hovertemplate=(
                "<b>%{y}</b><br>" + html.escape(title) + " %{x:.3f} (95% interval %{customdata[0]:.3f}"
                " to %{customdata[1]:.3f})<extra>%{fullData.name}</extra>"
            ),
        )
    fig.update_yaxes(
        categoryorder="array",
        categoryarray=[html.escape(str(r)) for r in rows.run],
        title_text=html.escape(CHART_WORDS["run"]),
    )
    fig.update_xaxes(title_text=html.escape(title))
    fig.update_layout(
        height=120 + 34 * len(rows),
        margin={**MARGIN, "t": 50},
        legend={"orientation": "h", "yref": "container", "y": 1, "yanchor": "top", "x": 0},
    )
    return _readable(fig)


RUN_COLOURS = [
    "#0072B2",
    "#E69F00",
    "#009E73",
    "#CC79A7",
    "#56B4E9",
    "#D55E00",
    "#F0E442",
    "#000000",
    "#999999",
    "#882255",
]  # Okabe-Ito, then two more: up to 10 runs


def slices_chart(table: pd.DataFrame, *, title: str) -> go.Figure:
    """Scores per slice and run (one row per pair: ``slice``, ``run``, ``value``, ``low``, ``high``): a dot
    with its 95% interval for each run, slices down the side in their order.

    Examples
    --------
    >>> import pandas as pd
    >>> table = pd.DataFrame({"slice": ["rare", "frequent"], "run": ["A", "A"], "value": [0.4, 0.8], "low": [0.3, 0.7], "high": [0.5, 0.9]})
    >>> type(slices_chart(table, title="F1 by slice")).__name__
    'Figure'
    """
    slices = list(dict.fromkeys(table.slice))
    fig = go.Figure()
    for i, (run, part) in enumerate(table.groupby("run", sort=False)):
        colour = RUN_COLOURS[i % len(RUN_COLOURS)]
        fig.add_scatter(
            x=part.value,
            y=[_wrap(s, 28) for s in part.slice],
            mode="markers",
            name=html.escape(str(run)),
            orientation="h",  # runs side by side within a slice's row (scattermode "group")
            marker={"color": colour, "size": 10},
            error_x={
                "type": "data",
                "symmetric": False,
                "array": (part.high - part.value).fillna(0),
                "arrayminus": (part.value - part.low).fillna(0),
                "color": colour,
                "thickness": 2,
            },
            customdata=np.column_stack([part.low, part.high]),
            hovertemplate=(
                "<b>%{fullData.name}</b> · %{y}<br>" + html.escape(title) + " %{x:.3f} (95% interval "
                "%{customdata[0]:.3f} to %{customdata[1]:.3f})<extra></extra>"
            ),
        )
    order = [_wrap(s, 28) for s in slices]
    lo, hi = np.nanmin(table.low.fillna(table.value)), np.nanmax(table.high.fillna(table.value))
    if np.isfinite(lo) and np.isfinite(hi):  # the values, not 0 to 1: differences between runs stay visible
        pad = max((hi - lo) * 0.08, 0.005)
        fig.update_xaxes(range=[max(0.0, lo - pad), min(1.0, hi + pad) if hi <= 1 else hi + pad])
    fig.update_yaxes(
        categoryorder="array", categoryarray=order, range=[len(order) - 0.5, -0.5], autorange=False
    )
    fig.update_layout(
        scattermode="group",
        scattergap=0.3,
        height=140 + 40 * len(slices) * max(1, table.run.nunique()) // 2,
        xaxis_title=html.escape(title),
        margin={**MARGIN, "t": 50},
        legend={"orientation": "h", "yref": "container", "y": 1, "yanchor": "top", "x": 0},
    )
    return _readable(fig)


VERDICT_COLOURS = {"": "#222222", "better": "#1a9850", "worse": "#d73027", "no clear difference": "#8c8c8c"}


def threshold_curve(
    curve: pd.DataFrame,
    current: float | None = None,
    tuned: float | None = None,
    *,
    words: Mapping[str, str] | None = None,
) -> go.Figure:
    """Flat, set-based and CoPHE F1 over all levels against the decision threshold (:meth:`ScoredRun.curve`);
    ``words`` as in :func:`levels_bar`.

    Examples
    --------
    >>> import pandas as pd
    >>> curve = pd.DataFrame({"threshold": [0.3, 0.5], "flat_f1": [0.5, 0.6], "set_based_f1": [0.6, 0.7], "cophe_f1": [0.55, 0.65]})
    >>> len(threshold_curve(curve).data)
    3
    """
    w = _words(words)
    fig = go.Figure()
    for measure in MEASURE_NAMES:
        fig.add_scatter(
            x=curve.threshold,
            y=curve[f"{measure}_f1"],
            name=html.escape(w[measure]),
            mode="lines+markers",
            line={"color": MEASURE_COLOURS[measure]},
            hovertemplate=f"{html.escape(w['threshold'])} %{{x:.2f}}: {html.escape(w['f1'])} "
            "%{y:.3f}<extra>%{fullData.name}</extra>",
        )
    if current is not None:
        fig.add_vline(
            x=current,
            line_dash="dot",
            line_color="#444",
            annotation_text=html.escape(w["current"]),
            annotation_position="top right",
        )
    if tuned is not None:
        fig.add_vline(
            x=tuned,
            line_dash="dash",
            line_color="#009E73",
            annotation_text=html.escape(w["tuned"]),
            annotation_position="bottom right",
        )  # apart from the other, whichever is higher
    fig.update_layout(
        height=380,
        xaxis_title=html.escape(w["threshold"]),
        yaxis_title=html.escape(f"{w['f1']} ({w['overall']})"),
        yaxis_range=[0, 1.05],
        xaxis_range=[0, 1],
        margin=MARGIN,
        legend={"orientation": "h", "yref": "container", "y": 1, "yanchor": "top", "x": 0},
    )
    return _readable(fig)
