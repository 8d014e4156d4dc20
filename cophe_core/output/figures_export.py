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

import os
import shutil
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

import pandas as pd

from ..base.files import InputError
from ..metrics import Evaluation
from ..ontology.levels import level_name

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
LEVEL_ROW_PX = 40  # a level's bars in a printed levels chart: two bars tall enough for their values
PANEL_EXTRA_PX = 50  # a panel's title and axis
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
        uniformtext={"minsize": max(size - 2, 6), "mode": "hide"},
    )
    out.update_annotations(font={"size": size + 1})
    # the bars' values and the tiles' labels were sized for a screen; the trace types differ in their keys
    for trace in out.data:
        for key in ("textfont", "insidetextfont", "outsidetextfont"):
            if key in trace:
                trace[key] = {"size": size}
    out.update_xaxes(gridcolor="#dddddd", linecolor="#000000", zerolinecolor="#999999")
    out.update_yaxes(gridcolor="#dddddd", linecolor="#000000", zerolinecolor="#999999")
    return out


def families_bar(table: pd.DataFrame, *, top: int = 15, title: str = "") -> go.Figure:
    """The ``top`` families with most errors (:func:`cophe_core.breakdown.families.family_errors`): for each, bars of its
    extra codes (written beyond the gold standard) and its missed codes (gold codes not written), the family
    with most errors at the top.

    >>> t = pd.DataFrame({"code": ["401", "428"], "title": ["Hypertension", "Heart failure"],
    ...                   "fp": [3, 0], "fn": [1, 2]})
    >>> fig = families_bar(t)
    >>> [tr.name for tr in fig.data], list(fig.data[0].y)
    (['Extra codes', 'Missed codes'], ['401 Hypertension', '428 Heart failure'])
    """
    import html  # here: cophe's parser reads this module's KINDS, and a table needs no escaping

    import plotly.graph_objects as go

    from .plotting import MARGIN

    t = table.assign(errors=table.fp + table.fn)
    t = t[t.errors > 0].sort_values(["errors", "code"], ascending=[False, True]).head(top)
    names = [html.escape(f"{c} {_short(str(ti))}") for c, ti in zip(t.code, t.title)]
    fig = go.Figure()
    for col, name, colour in (("fp", "Extra codes", "#D55E00"), ("fn", "Missed codes", "#0072B2")):
        fig.add_bar(
            x=t[col],
            y=names,
            orientation="h",
            name=name,
            marker={"color": colour},
            texttemplate="%{x:,}",
            textposition="outside",
            cliponaxis=False,
            hovertemplate="<b>%{y}</b><br>" + name + " %{x:,}<extra></extra>",
        )
    fig.update_yaxes(categoryorder="array", categoryarray=names, autorange="reversed", automargin=True)
    fig.update_xaxes(title_text="Codes (summed over documents)", automargin=True, rangemode="tozero")
    fig.update_layout(
        barmode="group",
        height=120 + 34 * len(t),
        margin={**MARGIN, "t": 60},
        title={"text": html.escape(title)} if title else None,
        legend={"orientation": "h", "yref": "container", "y": 1, "yanchor": "top", "x": 0},
    )
    return fig


def _short(text: str, n: int = 32) -> str:
    return text if len(text) <= n else text[: n - 1].rstrip() + "…"


def paper_figure(
    kind: str,
    evals: Mapping[str, Evaluation],
    *,
    width: str | float = "one-column",
    metric: str = "f1",
    baseline: str | None = None,
    level: str | None = None,
    colour: str = "balance",
    top: int = 15,
) -> go.Figure:
    """One of :data:`KINDS`, drawn for print ``width`` wide (:func:`publication`).

    - ``levels``: ``metric`` by level and measure, one panel per run (:func:`cophe_core.output.plotting.levels_bar`);
    - ``compare``: each run's difference from ``baseline`` (default: the first run) by level and measure
      (:func:`cophe_core.output.plotting.delta_bar`), of the second run when there are more;
    - ``tree``: the family tree of the first run, coloured by ``colour``
      (:func:`cophe_core.output.plotting.tree_figure`);
    - ``families``: the ``top`` families with most errors at ``level`` (default: the highest level) of the
      first run (:func:`families_bar`).

    Level ids are named as the dashboard names them (``Category (3 digits)``).

    >>> from cophe_core import score_files
    >>> ev = score_files(b"doc_id,code\\n1,401.9\\n", {"A": b"doc_id,code\\n1,401.1\\n"}).evaluation("A")
    >>> fig = paper_figure("families", {"A": ev}, width="one-column")
    >>> fig.layout.width, fig.layout.title.text
    (336, 'A: Section')
    """
    from ..breakdown.compare import level_deltas, levels_side_by_side  # here: cophe's parser reads KINDS
    from ..breakdown.families import family_errors
    from ..breakdown.tree import focused_subtree
    from .plotting import delta_bar, levels_bar, tree_figure

    if kind not in KINDS:
        raise ValueError(f"figure {kind!r}: give one of {', '.join(KINDS)}")
    if not evals:
        raise ValueError("no runs: give at least one")
    names = list(evals)
    first = evals[names[0]]
    onto = first.ontology
    levels = {lv: level_name(onto, lv) for lv in ("leaf", *onto.levels, "overall")}
    inches = _inches(width)
    if kind == "levels":
        per_row = 1 if inches < WIDTHS["two-column"] else 2
        table = levels_side_by_side(dict(evals))
        fig = levels_bar(table, metric, levels=levels, per_row=per_row)
        # rows of print size, not of a screen's: a level's two bars in LEVEL_ROW_PX, each panel's axis below
        rows = -(-len(names) // per_row)
        per_panel = LEVEL_ROW_PX * table.level.nunique() + PANEL_EXTRA_PX
        tall = (fig.layout.margin.t or 0) + 30 + rows * per_panel
        # the statistic's name under the bottom row only: under every panel it ran into the next one's title
        for i in range((rows - 1) * per_row):
            fig.layout[f"xaxis{'' if i == 0 else i + 1}"].title = None
        return publication(fig, width, height=tall / CSS_PX_PER_INCH)
    if kind == "compare":
        base = baseline or names[0]
        if base not in evals:
            raise ValueError(f"baseline {base!r} is not one of the runs: {', '.join(names)}")
        others = [n for n in names if n != base]
        if not others:
            raise ValueError("the compare figure needs two runs: give a second --run")
        other = others[0]
        fig = delta_bar(level_deltas(evals[base], evals[other]), metric, a=base, b=other, levels=levels)
        return publication(fig, width)
    if kind == "tree":
        fig = tree_figure(focused_subtree(first.nodes, onto), colour, height=640)
        return publication(fig, width, height=inches * 0.8)
    lv = level or first.levels[-1]
    if lv not in first.levels:
        raise ValueError(f"level {lv!r}: give one of {', '.join(first.levels)}")
    title = f"{names[0]}: {levels.get(lv, lv)}"
    return publication(families_bar(family_errors(first, lv), top=top, title=title), width)


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
    Kaleido or a browser is missing.

    >>> import plotly.graph_objects as go
    >>> fig = publication(go.Figure(go.Bar(x=[1], y=["a"])), "one-column", height=2)
    >>> render(fig, "png")[:4] == b"\\x89PNG"
    True
    """
    if fmt not in FORMATS:
        raise ValueError(f"format {fmt!r}: give one of {', '.join(FORMATS)}")
    try:
        import kaleido
    except ImportError as e:
        raise InputError(NO_KALEIDO) from e
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
        data = kaleido.calc_fig_sync(fig, opts=opts, kopts={"path": browser, "mathjax": False})
    except Exception as e:  # Kaleido's own errors (no browser there, a browser that would not start)
        raise InputError(f"drawing the figure as {fmt.upper()} failed: {e}; {NO_BROWSER}") from e
    return data if isinstance(data, bytes) else str(data).encode("utf-8")
