"""Figures for papers: any of cophe's Plotly figures at a journal's column width, with fonts that stay legible
printed at that width, written as SVG, PNG or PDF.

Pure functions, evaluations in and figures or bytes out; :func:`render` is the one that starts a browser. The
static files are drawn by Kaleido (``pip install ".[plot]"``), which drives a Chrome or Chromium found on the
machine: the one named by ``BROWSER_PATH`` if set, else the first of :data:`BROWSERS` on the ``PATH`` (Debian's
``chromium-headless-shell`` is one). No network is used: plotly.js is Plotly's own copy, MathJax is off.

A width is a number of inches (:data:`WIDTHS`: one column of a two-column paper is 3.5 in, the page's width
7 in). A figure is laid out at 96 CSS pixels to the inch, so an SVG or PDF printed at that width shows its
text at :data:`FONT_PT` points, and a PNG is drawn at :data:`PNG_DPI` dots per inch.

    >>> from cophe_core import score_files
    >>> ev = score_files(b"doc_id,code\\n1,401.9\\n", {"A": b"doc_id,code\\n1,401.1\\n"}).evaluation("A")
    >>> fig = paper_figure("levels", {"A": ev}, width="one-column")
    >>> fig.layout.width, round(fig.layout.font.size, 2)
    (336, 10.67)
"""

from __future__ import annotations

import importlib.util
import os
import re
import shutil
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

import numpy as np
import pandas as pd

from ..base.files import InputError
from ..metrics import MEASURE_WORDS, Evaluation
from ..ontology.levels import level_name
from .drawing import DrawingFailed, draw

if TYPE_CHECKING:  # Plotly is the optional extra "plot": imported where a figure is made
    import plotly.graph_objects as go

__all__ = [
    "WIDTHS",
    "FONT_PT",
    "FORMATS",
    "KINDS",
    "PNG_DPI",
    "BROWSERS",
    "publication",
    "panels_per_row",
    "paper_figure",
    "families_bar",
    "find_browser",
    "render",
]

WIDTHS: dict[str, float] = {"one-column": 3.5, "two-column": 7.0}  # inches
FONT_PT: dict[str, float] = {"one-column": 8.0, "two-column": 9.0}  # journals ask for 6–9 pt in figures
CSS_PX_PER_INCH = 96  # what Plotly's pixels are, and how Chromium prints them to PDF
PNG_DPI = 300
FORMATS: dict[str, str] = {"svg": "image/svg+xml", "png": "image/png", "pdf": "application/pdf"}
KINDS = ("levels", "compare", "tree", "families")
MAX_HEIGHT_IN = 4.5  # a printed figure's height for up to six runs: room for a caption on a letter page
COLUMN_HEIGHT_IN = 3.5  # a one-column levels figure of thin bars: a column holds it and a long caption
PANELS_PER_ROW: dict[str, int] = {"one-column": 3, "two-column": 5}  # the most runs side by side
PANEL_GAP = 10  # px between two narrow panels: the "1" of one scale and the "0" of the next stay apart
VALUE_PANEL = 100  # px: a panel narrower than this carries no values (one beside a short bar runs over)
LINE = 1.4  # a line of text, in font sizes
BAR_GAP = 0.15  # the gap between two levels' bars, as a share of a level's row
FAMILIES_TOP: dict[str, int] = {"one-column": 10, "two-column": 12}  # families drawn by default
TREE_CHILDREN = 10  # families kept under each tile of a printed tree, the rest one "Other" tile
#: Browsers Kaleido can drive, looked for on the PATH in this order (choreographer's own list lacks the
#: headless shell, which is what Debian ships for servers and what the browser tests use).
BROWSERS = (
    "chromium-headless-shell",
    "chromium",
    "chromium-browser",
    "google-chrome",
    "google-chrome-stable",
)
FONT_FAMILY = "Arial, Helvetica, 'Liberation Sans', 'DejaVu Sans', sans-serif"


def _inches(width: str | float) -> float:
    """A named width of :data:`WIDTHS` or a number of inches (1 to 20)."""
    if isinstance(width, str):
        if width not in WIDTHS:
            raise ValueError(f"width {width!r}: give one of {', '.join(WIDTHS)} or a number of inches")
        return WIDTHS[width]
    if not 1.0 <= float(width) <= 20.0:
        raise ValueError(f"width {width}: give a number of inches from 1 to 20")
    return float(width)


def _font_pt(width: str | float) -> float:
    return FONT_PT["one-column"] if _inches(width) < WIDTHS["two-column"] else FONT_PT["two-column"]


def publication(
    fig: go.Figure, width: str | float = "one-column", *, height: float | None = None
) -> go.Figure:
    """A copy of ``fig`` laid out ``width`` wide (a name of :data:`WIDTHS` or inches) for print.

    Every text takes the same size, :data:`FONT_PT` points at that width (panel titles one point larger), in a
    sans-serif font; margins shrink to what the labels need; the background is white. ``height`` is in
    inches (default: the figure's own height, which it sets by its rows of text).

    >>> import plotly.graph_objects as go
    >>> fig = publication(go.Figure(go.Bar(x=[1], y=["a"])), "two-column", height=3)
    >>> fig.layout.width, fig.layout.height, fig.layout.font.size
    (672, 288, 12.0)
    """
    import plotly.graph_objects as go

    from .plotting import MARGIN

    inches = _inches(width)
    px = round(inches * CSS_PX_PER_INCH)
    size = _font_pt(width) * CSS_PX_PER_INCH / 72
    out = go.Figure(fig)
    # a chart's height is in rows of text, which keep their size at any width: its own height stays
    tall = height * CSS_PX_PER_INCH if height is not None else (out.layout.height or 450)
    out.update_layout(
        width=px,
        height=round(tall),
        font={"family": FONT_FAMILY, "size": size, "color": "#000000"},
        paper_bgcolor="#ffffff",
        plot_bgcolor="#ffffff",
        # the top keeps the figure's own: the legend and the panels' titles share it
        margin={
            "t": out.layout.margin.t if out.layout.margin.t is not None else MARGIN["t"],
            "b": 8,
            "l": 8,
            "r": 8,
        },
        # a text that would have to shrink below the print size is left out rather than drawn smaller
        uniformtext={"minsize": size, "mode": "hide"},
    )
    line = size * LINE
    bottom = round(6 + line + 10 + line + 6)  # a colour bar's gap, title, bar and ticks
    for trace in out.data:
        marker = getattr(trace, "marker", None)
        if marker is not None and "colorbar" in marker and marker.showscale:
            # below the tiles, across the width, its title on one line at the print size (no <sup>)
            # the scale's range is on its ticks: the title says what the colour is, on one line
            title = _plain(re.sub(r"<br><sup>scale .*?</sup>", "", marker.colorbar.title.text or ""))
            marker.colorbar = {
                "orientation": "h",
                "x": 0,
                "xanchor": "left",
                "len": 1,
                "y": -6 / (round(tall) - bottom - out.layout.margin.t),  # 6 px below the tiles
                "yref": "paper",
                "yanchor": "top",
                "ypad": 0,
                "thickness": 10,
                "tickformat": marker.colorbar.tickformat,
                "title": {"text": title, "side": "top", "font": {"size": size}},
                "tickfont": {"size": size},
            }
            out.update_layout(margin={"b": bottom})
    out.update_annotations(font={"size": size + 1})
    # the bars' values and the tiles' labels were sized for a screen; the trace types differ in their keys
    for trace in out.data:
        for key in ("textfont", "insidetextfont", "outsidetextfont"):
            if key in trace:
                trace[key] = {"size": size}
    out.update_xaxes(gridcolor="#dddddd", linecolor="#000000", zerolinecolor="#999999")
    out.update_yaxes(gridcolor="#dddddd", linecolor="#000000", zerolinecolor="#999999")
    return out


def families_bar(table: pd.DataFrame, *, top: int = 15, title: str = "", label: int = 32) -> go.Figure:
    """The ``top`` families with most errors (:func:`cophe_core.breakdown.families.family_errors`), one row each,
    the family with most errors at the top, named by its code and title (cut to ``label`` characters): its
    extra codes (written beyond the gold standard) as a bar to the right of zero, its missed codes (gold
    codes not written) to the left, each with its count. One bar thickness a family, not two side by side:
    a printed figure stays short.

    >>> t = pd.DataFrame({"code": ["401", "428"], "title": ["Hypertension", "Heart failure"],
    ...                   "fp": [3, 0], "fn": [1, 2]})
    >>> fig = families_bar(t)
    >>> [tr.name for tr in fig.data], list(fig.data[0].y), list(fig.data[1].x), list(fig.data[1].text)
    (['Extra codes (right)', 'Missed codes (left)'], ['401 Hypertension', '428 Heart failure'], [-1, -2], ['1', '2'])
    """
    import html  # here, as every import of the breakdown: cophe's parser reads this module's KINDS

    import plotly.graph_objects as go

    from .plotting import MARGIN

    t = table.assign(errors=table.fp + table.fn)
    t = t[t.errors > 0].sort_values(["errors", "code"], ascending=[False, True]).head(top)
    names = [html.escape(f"{c} {_short(str(ti), label)}") for c, ti in zip(t.code, t.title)]
    fig = go.Figure()
    for col, name, colour, sign in (
        ("fp", "Extra codes (right)", "#D55E00", 1),
        ("fn", "Missed codes (left)", "#0072B2", -1),
    ):
        counts = t[col].astype(int).tolist()
        fig.add_bar(
            x=[sign * v for v in counts],
            y=names,
            orientation="h",
            name=name,
            marker={"color": colour},
            text=[f"{v:,}" if v else "" for v in counts],
            textposition="outside",
            cliponaxis=False,
            customdata=counts,
            hovertemplate="<b>%{y}</b><br>" + name + " %{customdata:,}<extra></extra>",
        )
    most = max([*t.fp, *t.fn, 1])
    ticks = _ticks(most)
    fig.add_vline(x=0, line_color="#444444", line_width=1)
    fig.update_yaxes(categoryorder="array", categoryarray=names, autorange="reversed", automargin=True)
    fig.update_xaxes(
        title_text=None,  # the legend says which side is which
        automargin=True,
        # room beside the longest bars for their counts; the ticks count codes on both sides
        range=[-1.3 * max([*t.fn, 1]) - 0.1 * most, 1.3 * max([*t.fp, 1]) + 0.1 * most],
        tickvals=[-v for v in ticks[:0:-1]] + ticks,
        ticktext=[f"{v:,}" for v in ticks[:0:-1]] + [f"{v:,}" for v in ticks],
    )
    fig.update_layout(
        barmode="relative",
        height=120 + 24 * len(t),
        margin={**MARGIN, "t": 60},
        title={"text": html.escape(title)} if title else None,
        legend={"orientation": "h", "yref": "container", "y": 1, "yanchor": "top", "x": 0},
    )
    return fig


def _ticks(most: float) -> list[int]:
    """0 and round steps (1, 2 or 5 times a power of ten) up to ``most``, at most three steps.

    >>> _ticks(552), _ticks(3), _ticks(1)
    ([0, 200, 400], [0, 1, 2, 3], [0, 1])
    """
    power = 10 ** max(int(np.floor(np.log10(max(most, 1) / 3))), 0)
    step = next(k * power for k in (1, 2, 5, 10) if most / (k * power) <= 3)
    return list(range(0, int(most) + 1, int(step)))


def _short(text: str, n: int = 32) -> str:
    return text if len(text) <= n else text[: n - 1].rstrip() + "…"


def _lines(text: str, n: int, most: int) -> list[str]:
    """``text`` on lines of at most ``n`` characters, broken at spaces or hyphens where it can be, at most
    ``most`` lines, the last one cut with an ellipsis if there is more; a word longer than a line is
    hyphenated.

    >>> _lines("conservative", 8, 2), _lines("BERT-base fine-tuned", 10, 2), _lines("a b c d e f", 3, 2)
    (['conserv-', 'ative'], ['BERT-base', 'fine-tuned'], ['a b', 'c…'])
    """
    import textwrap

    lines: list[str] = []
    for line in textwrap.wrap(text, n, break_long_words=False, break_on_hyphens=True) or [text]:
        while len(line) > n:
            lines.append(line[: n - 1] + "-")
            line = line[n - 1 :]
        lines.append(line)
    if len(lines) > most:
        lines = lines[: most - 1] + [_short(" ".join(lines[most - 1 :]), n)]
    return lines


def _plain(text: str) -> str:
    """A Plotly title as one plain line: its first line break as ": ", the others as " · ", its tags gone.

    >>> _plain("Extra vs missed<br><sup>per code</sup><br><sup>scale ±0.5</sup>")
    'Extra vs missed: per code · scale ±0.5'
    """
    return re.sub(r"<[^>]+>", "", re.sub(r"<br\s*/?>", ": ", text, count=1).replace("<br>", " · "))


def _with_intervals(
    table: pd.DataFrame, evals: Mapping[str, Evaluation], metric: str, n_resamples: int
) -> pd.DataFrame:
    """``table`` (:func:`~cophe_core.breakdown.compare.levels_side_by_side`) with each F1's 95% interval as
    ``low`` and ``high`` (the first page's chart's, :func:`~cophe_core.output.level_chart.levels_points`),
    when the figure shows F1 and every run has its per-document counts."""
    if metric != "f1" or n_resamples < 1 or not all(ev.has_documents for ev in evals.values()):
        return table
    from ..breakdown.stats import bootstrap  # here: cophe's parser reads this module's KINDS
    from .level_chart import levels_points

    points = levels_points(evals, {r: bootstrap(ev, n_resamples=n_resamples) for r, ev in evals.items()})
    return table.assign(low=points.low.to_numpy(), high=points.high.to_numpy())  # the same rows, in order


def _delta_intervals(
    deltas: pd.DataFrame, a: Evaluation, b: Evaluation, metric: str, n_resamples: int
) -> pd.DataFrame:
    """``deltas`` (:func:`~cophe_core.breakdown.compare.level_deltas`) with each F1 difference's 95% interval
    as ``low`` and ``high``: the paired bootstrap's (:func:`~cophe_core.breakdown.stats.paired_bootstrap`,
    both runs on the same document resamples), when the figure shows F1 and both runs have their
    per-document counts."""
    if metric != "f1" or n_resamples < 1 or not (a.has_documents and b.has_documents):
        return deltas
    from ..breakdown.stats import paired_bootstrap  # here: cophe's parser reads this module's KINDS

    ci = paired_bootstrap(a, b, n_resamples=n_resamples).set_index("figure")
    names = ["flat f1" if m == "flat" else f"{m} {lv} f1" for m, lv in zip(deltas.measure, deltas.level)]
    return deltas.assign(
        low=ci.low.reindex(names).to_numpy(dtype=float), high=ci.high.reindex(names).to_numpy(dtype=float)
    )


def paper_figure(
    kind: str,
    evals: Mapping[str, Evaluation],
    *,
    width: str | float = "one-column",
    metric: str = "f1",
    baseline: str | None = None,
    level: str | None = None,
    colour: str = "balance",
    top: int | None = None,
    n_resamples: int = 1000,
) -> go.Figure:
    """One of :data:`KINDS`, drawn for print ``width`` wide (:func:`publication`), at most
    :data:`MAX_HEIGHT_IN` inches tall for up to six runs, every text at :data:`FONT_PT` points. The levels
    figure's F1 bars carry their 95% intervals (percentile bootstrap of the documents, ``n_resamples``
    resamples; 0, or runs without per-document counts: none), and so do the compare figure's differences
    in F1 (the paired bootstrap's: both runs on the same resamples; its bars then carry no values, which
    the arms would cross).

    - ``levels``: ``metric`` by level and measure, one panel per run (:func:`cophe_core.output.plotting.levels_bar`),
      one panel to a row for one run in one column, else two to a row in one column and three in two; the
      bars thin as the runs grow, and carry their values while the bars are as thick as the text;
    - ``compare``: each run's difference from ``baseline`` (default: the first run) by level and measure
      (:func:`cophe_core.output.plotting.delta_bar`), of the second run when there are more;
    - ``tree``: the family tree of the first run, two levels deep from the top, coloured by ``colour``
      (:func:`cophe_core.output.plotting.tree_figure`), its colour bar below;
    - ``families``: the ``top`` families (default :data:`FAMILIES_TOP`) with most errors at ``level``
      (default: the highest level) of the first run (:func:`families_bar`).

    Level ids are named as the dashboard names them (``Category (3 digits)``).

    >>> from cophe_core import score_files
    >>> ev = score_files(b"doc_id,code\\n1,401.9\\n", {"A": b"doc_id,code\\n1,401.1\\n"}).evaluation("A")
    >>> fig = paper_figure("families", {"A": ev}, width="one-column")
    >>> fig.layout.width, fig.layout.title.text
    (336, 'A: Section')
    """

    from ..breakdown.compare import level_deltas
    from ..breakdown.families import family_errors
    from .plotting import delta_bar

    if kind not in KINDS:
        raise ValueError(f"figure {kind!r}: give one of {', '.join(KINDS)}")
    if not evals:
        raise ValueError("no runs: give at least one")
    names = list(evals)
    first = evals[names[0]]
    onto = first.ontology
    levels = {lv: level_name(onto, lv) for lv in ("leaf", *onto.levels, "overall")}
    inches = _inches(width)
    text = _font_pt(width) * CSS_PX_PER_INCH / 72
    if kind == "levels":
        return _print_levels(evals, names, levels, width, metric, n_resamples)
    if kind == "compare":
        base = baseline or names[0]
        if base not in evals:
            raise ValueError(f"baseline {base!r} is not one of the runs: {', '.join(names)}")
        others = [n for n in names if n != base]
        if not others:
            raise ValueError("the compare figure needs two runs: give a second --run")
        other = others[0]
        deltas = _delta_intervals(
            level_deltas(evals[base], evals[other]), evals[base], evals[other], metric, n_resamples
        )
        # in one column the measures by the papers' names, on one line, as the levels figure names them
        one = inches < WIDTHS["two-column"]
        words = {m: paper for m, (_, paper) in MEASURE_WORDS.items()} if one else None
        fig = delta_bar(deltas, metric, a=base, b=other, levels=levels, words=words)
        # the axis holds the bars and their intervals' ends
        ends = [deltas[f"delta_{metric}"], *(deltas[c] for c in ("low", "high") if c in deltas)]
        lo, hi = min(min(e.min() for e in ends), 0.0), max(max(e.max() for e in ends), 0.0)
        # values where there are no intervals: an interval's arms would run through them (the paper table
        # gives each difference with its interval)
        values = "low" not in deltas
        pad = (0.3 if values else 0.05) * ((hi - lo) or 1.0)  # room for a value beside its bar
        fig.update_xaxes(range=[lo - pad if lo < 0 else lo, hi + pad if hi > 0 else hi])
        # the legend on one line at either width
        _print_bars(fig, text, 1, rows=1, per_row=1, levels=deltas.level.nunique(), values=values)
        return publication(fig, width, height=fig.layout.height / CSS_PX_PER_INCH)
    if kind == "tree":
        return _print_tree(first, colour, width)
    lv = level or first.levels[-1]
    if lv not in first.levels:
        raise ValueError(f"level {lv!r}: give one of {', '.join(first.levels)}")
    title = f"{names[0]}: {levels.get(lv, lv)}"
    one = inches < WIDTHS["two-column"]
    n = top if top is not None else FAMILIES_TOP["one-column" if one else "two-column"]
    fig = families_bar(family_errors(first, lv), top=n, title=title, label=22 if one else 40)
    _print_families(fig, text)
    return publication(fig, width, height=fig.layout.height / CSS_PX_PER_INCH)


def panels_per_row(n: int, width: str | float = "one-column") -> int:
    """Runs' panels to a row of the printed levels figure: every run on one row while they fit
    (:data:`PANELS_PER_ROW`), else as few rows as fit, shared out evenly (six runs in one column: three and
    three, not two rows of two and one of two, nor a row of four over an empty half-row).

    >>> [panels_per_row(n) for n in range(1, 8)], [panels_per_row(n, "two-column") for n in (4, 6, 7)]
    ([1, 2, 3, 2, 3, 3, 3], [4, 3, 4])
    """
    most = PANELS_PER_ROW["one-column" if _inches(width) < WIDTHS["two-column"] else "two-column"]
    rows = -(-max(n, 1) // most)
    return -(-max(n, 1) // rows)


def _print_levels(
    evals: Mapping[str, Evaluation],
    names: list[str],
    levels: dict[str, str],
    width: str | float,
    metric: str,
    n_resamples: int,
) -> go.Figure:
    """The levels figure for print: :func:`panels_per_row` runs to a row; the scale and the statistic's name
    under the bottom panel of each column; a legend of one line (in one column, the measures by the papers'
    names, as the paper tables name them), or in the empty cell a last short row leaves."""
    import html

    from ..breakdown.compare import levels_side_by_side
    from .plotting import levels_bar

    inches = _inches(width)
    one = inches < WIDTHS["two-column"]
    text = _font_pt(width) * CSS_PX_PER_INCH / 72
    n = len(names)
    per_row = panels_per_row(n, width)
    rows = -(-n // per_row)
    empty = rows * per_row - n
    words = {m: paper for m, (_, paper) in MEASURE_WORDS.items()} if one else None
    table = _with_intervals(levels_side_by_side(dict(evals)), evals, metric, n_resamples)
    fig = levels_bar(table, metric, levels=levels, per_row=per_row, words=words)
    for i in range(n - per_row):  # a panel with one below: its scale is the one below's
        fig.layout[f"xaxis{'' if i == 0 else i + 1}"].update(title=None, showticklabels=False)
    for i in range(max(n - per_row, 0), (rows - 1) * per_row):  # above an empty cell: the scale, no title
        fig.layout[f"xaxis{'' if i == 0 else i + 1}"].update(title=None)
    # the level names' column on one line, and what is left of the width for the panels
    full = inches * CSS_PX_PER_INCH - 16
    label = max(len(v) for v in levels.values()) * 0.5 * text + 8
    narrow = (full - label) / per_row - 0.02 * full < VALUE_PANEL
    # a panel is titled by its run's name alone, on a second line when it is wider than the panel (it would
    # be cut at the edge), cut only past two lines
    for title_lines in (1, 2):
        _print_bars(
            fig,
            text,
            0 if empty and not narrow else 1,
            rows=rows,
            per_row=per_row,
            levels=table.level.nunique(),
            values=not narrow,
            max_in=COLUMN_HEIGHT_IN if one and narrow else MAX_HEIGHT_IN,
            title_lines=title_lines,
        )
        # the names as drawn (on two lines where the rows allow), the panels beside them
        drawn = [line for name in fig.layout.yaxis.categoryarray for line in str(name).split("<br>")]
        plot = full - (max(map(len, drawn)) * 0.5 * text + 8)
        gap = (PANEL_GAP / plot) if narrow else 0.02  # narrow panels: apart enough for their scales' ends
        cell = (1 - gap * (per_row - 1)) / per_row
        fits = max(int(cell * plot / (0.55 * (text + 1))), 4)
        if all(len(str(run)) <= fits for run in names):
            break
    for i in range(n):
        x0 = (i % per_row) * (cell + gap)
        fig.layout[f"xaxis{'' if i == 0 else i + 1}"].domain = [x0, x0 + cell]
        fig.layout.annotations[i].x = x0 + cell / 2
    for note, run in zip(fig.layout.annotations, names):
        note.text = "<br>".join(html.escape(line) for line in _lines(str(run), fits, title_lines))
    in_cell = empty and not narrow  # a narrow cell is narrower than the legend: it would shrink the panels
    if one and not in_cell:
        # the legend on one line from the figure's left edge, above the panels' titles: Plotly wraps a legend
        # at the plot's width (the width beside the level names) unless it starts left of the plot
        high = fig.layout.height - fig.layout.margin.t - fig.layout.margin.b
        name = max(map(len, drawn)) * 0.5 * text
        fig.update_layout(
            legend={
                "xref": "paper",
                "yref": "paper",
                "x": -0.9 * name / plot,
                "y": 1 + (title_lines * text * LINE + 2) / high,
                "xanchor": "left",
                "yanchor": "bottom",
            }
        )
    if in_cell:  # the legend, a measure to a line, in the cell the last row leaves empty
        last = fig.layout[f"yaxis{(rows - 1) * per_row + 1}"].domain
        fig.update_layout(
            legend={
                "orientation": "v",
                "xref": "paper",
                "yref": "paper",
                "x": (per_row - empty) * (cell + gap) + gap,
                "y": last[1],
                "xanchor": "left",
                "yanchor": "top",
            }
        )
    return publication(fig, width, height=fig.layout.height / CSS_PX_PER_INCH)


def _bar_px(text: float) -> float:
    """How thick a bar must be to carry its value inside at ``text`` px (Plotly pads a bar's text 3 px a side)."""
    return text * 1.3 + 6


def _print_bars(
    fig: go.Figure,
    text: float,
    legend_rows: int,
    *,
    rows: int,
    per_row: int,
    levels: int,
    values: bool = True,
    max_in: float = MAX_HEIGHT_IN,
    title_lines: int = 1,
) -> None:
    """Size the horizontal bar panels of :func:`cophe_core.output.plotting._bars` for print, in place: each level
    a row two bars thick, the panels ``rows`` high stacked with room between them for a panel's ticks and
    the next one's title, the whole at most ``max_in`` inches tall; with ``values``, values inside the bars
    only while the bars are thick enough for them (else none: a value hidden on some bars and not others
    misleads); without, a level's row is as tall as its name on two lines. Panel titles take
    ``title_lines`` lines."""
    line = text * LINE
    titles = title_lines * line
    top = (
        legend_rows * (text * 1.3 + 5) + 8 + titles
    )  # the legend (a line of it is 1.3 fonts and 5 px) above the first title
    gap = titles + 8  # between panels: the title of the one below (the one above has no ticks)
    bottom = 2 * line + 6  # the bottom row's ticks and the statistic's name
    fixed = top + bottom + (rows - 1) * gap
    # a level's two bars, thick enough for their values; or its name on two lines
    ideal = 2 * _bar_px(text) / (1 - BAR_GAP) if values else 2 * line
    room = (max_in * CSS_PX_PER_INCH - fixed) / (rows * levels)
    row = max(min(ideal, room), line)  # at least a line of text for the level's name
    plot = rows * levels * row + (rows - 1) * gap
    panel = levels * row / plot
    for i in range(rows * per_row):
        r = i // per_row
        hi = 1 - r * (panel + gap / plot)
        key = f"yaxis{'' if i == 0 else i + 1}"
        if key in fig.layout:
            fig.layout[key].domain = [max(hi - panel, 0), hi]
            fig.layout[key].title = None  # the level names say what they are
        if i < len(fig.layout.annotations) and fig.layout.annotations[i].yref == "paper":
            fig.layout.annotations[i].y = hi
    thick = values and row * (1 - BAR_GAP) / 2 >= _bar_px(text) - 0.01
    if thick:  # a value too long for its bar stands beside it (inside the axis: see the ranges)
        fig.update_traces(selector={"type": "bar"}, textposition="auto", cliponaxis=False)
    else:
        fig.update_traces(selector={"type": "bar"}, texttemplate="")
    if row < 2 * line:  # a level's name on one line: two would run into the next level's
        for trace in fig.data:
            trace.y = [str(y).replace("<br>", " ") for y in trace.y]
        for axis in fig.select_yaxes():
            axis.categoryarray = [str(y).replace("<br>", " ") for y in axis.categoryarray]
    fig.update_layout(
        height=round(plot + top + bottom),  # plot holds the gaps between rows
        bargap=BAR_GAP,
        margin={"t": round(top), "b": round(bottom)},
        # across the whole figure, not the plot area beside the level names: two measures to a line in a column
        # not grouped (a legend group takes a line of its own); a line as wide as the plot, no wider: a
        # measure to a line in one column (two would be cut), all three on one in two columns
        legend={
            "title": None,
            "xref": "container",
            "x": 0,
            "y": 1,
            "yanchor": "top",
            "traceorder": "normal",
        },
    )


def _print_families(fig: go.Figure, text: float) -> None:
    """Size :func:`families_bar` for print, in place: each family a row one bar thick enough for its counts,
    the title and the legend on the line above."""
    line = text * LINE
    families = len(fig.data[0].y) if fig.data else 0
    row = _bar_px(text) / (1 - BAR_GAP)
    top = (text * 1.3 + 5) + (line + 4 if fig.layout.title.text else 0) + 8
    bottom = 2 * line + 6
    height = round(top + bottom + families * row)
    below = (line + 4) / height if fig.layout.title.text else 0.0  # the legend on the title's next line
    fig.update_layout(
        height=height,
        bargap=BAR_GAP,
        margin={"t": round(top), "b": round(bottom)},
        title={"y": 1, "yref": "container", "yanchor": "top", "x": 0, "xanchor": "left", "pad": {"t": 2}},
        legend={"y": 1 - below, "yref": "container", "yanchor": "top", "xref": "container", "x": 0},
    )


def _print_tree(ev: Evaluation, colour: str, width: str | float) -> go.Figure:
    """The tree of ``ev`` for print: the top families and theirs (depth 2, the largest few of each, the rest
    one "Other" tile), as nested tiles over the whole width (a treemap: no column for the root; its frame
    is white), the colour bar on a line below."""
    import html

    import plotly.graph_objects as go

    from ..breakdown.tree import focused_subtree
    from .plotting import children_fit, tree_figure, without_root

    inches = _inches(width)
    sub = focused_subtree(ev.nodes, ev.ontology, depth=2, max_children=TREE_CHILDREN)
    fig = tree_figure(sub, colour, height=round(inches * 0.75 * CSS_PX_PER_INCH))
    shown = without_root(sub)  # the tiles as the figure draws them, in its order and colours
    # a tile's code alone (a title fits few tiles at print size, and a label that does not fit is left
    # out); "Other" tiles say how many families they hold (paper has no clicks)
    labels = [
        f"<b>{html.escape(c)}</b>" if c else f"Other ({len(m)})" if len(m) else html.escape(t)
        for c, t, m in zip(shown.code, shown.title, shown.merged)
    ]
    drawn = fig.data[0]
    tiles = go.Treemap(
        ids=drawn.ids,
        parents=shown.parent_id,
        labels=labels,
        values=shown.value,
        branchvalues="total" if children_fit(shown) else "remainder",
        sort=False,
        marker={"colors": drawn.marker.color, "line": {"width": 1, "color": "#ffffff"}},
        textinfo="label",
        pathbar={"visible": False},
        root={"color": "#ffffff"},
        tiling={"pad": 2},
        maxdepth=-1,
    )
    out = go.Figure(data=[tiles, *fig.data[1:]], layout=fig.layout)
    return publication(out, width, height=min(inches * 0.75, MAX_HEIGHT_IN))


def find_browser() -> str | None:
    """The browser Kaleido will drive: ``BROWSER_PATH`` when set, else the first of :data:`BROWSERS` on the
    ``PATH`` (None when there is none).

    >>> from unittest import mock
    >>> with mock.patch.dict(os.environ, {"BROWSER_PATH": "/opt/chrome/chrome"}):
    ...     find_browser()
    '/opt/chrome/chrome'
    """
    if os.environ.get("BROWSER_PATH"):
        return os.environ["BROWSER_PATH"]
    return next((p for p in map(shutil.which, BROWSERS) if p), None)


NO_BROWSER = (
    "figures as SVG, PNG or PDF are drawn by a Chrome or Chromium browser, and none was found: install one "
    "(Debian/Ubuntu: apt-get install chromium-headless-shell) or name it with the BROWSER_PATH variable"
)
NO_KALEIDO = (
    'figures as SVG, PNG or PDF need Kaleido: pip install ".[plot]" in the folder of a cophe checkout'
)


def render(fig: go.Figure, fmt: str) -> bytes:
    """``fig`` as the bytes of an SVG, PNG or PDF file (:data:`FORMATS`), at its layout's width and height; a
    PNG at :data:`PNG_DPI` dots per inch. Raises :class:`cophe_core.InputError` naming what to install when
    Kaleido or a browser is missing, and saying what happened when the browser would not draw it: the drawing
    runs in a child process within a bound on its time (:func:`cophe_core.output.drawing.draw`), so that a
    browser that hangs or crashes never holds or ends the process that asked.

    >>> import plotly.graph_objects as go
    >>> fig = publication(go.Figure(go.Bar(x=[1], y=["a"])), "one-column", height=2)
    >>> render(fig, "png")[:4] == b"\\x89PNG"
    True
    """
    if fmt not in FORMATS:
        raise ValueError(f"format {fmt!r}: give one of {', '.join(FORMATS)}")
    if importlib.util.find_spec("kaleido") is None:
        raise InputError(NO_KALEIDO)
    browser = find_browser()
    if browser is None:
        raise InputError(NO_BROWSER)
    opts: dict[str, Any] = {
        "format": fmt,
        "width": fig.layout.width or 700,
        "height": fig.layout.height or 450,
        "scale": PNG_DPI / CSS_PX_PER_INCH if fmt == "png" else 1,
    }
    try:
        return draw(fig.to_json(), opts, browser)
    except DrawingFailed as e:  # a browser that would not start, hung, or crashed
        raise InputError(f"drawing the figure as {fmt.upper()} failed: {e}; {NO_BROWSER}") from e
