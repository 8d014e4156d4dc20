"""Figures for papers fit their slot (cophe_core.output.figures_export): exactly 3.5 in or 7 in wide, no taller
than 4.5 in for one to six runs, and every text at least 7 pt once LaTeX has scaled the figure to the
column of a two-column article (\\columnwidth = 229.5 pt, \\textwidth = 469 pt, as pdflatex measures them
in ``\\documentclass[twocolumn]{article}``), with no text cut at the figure's edges."""

from __future__ import annotations

import re
import subprocess
import xml.etree.ElementTree as ET
from typing import Any

import pytest

from cophe_core import score_files
from cophe_core.output.figures_export import find_browser, paper_figure, render
from tests.conftest import SAMPLE

needs_browser = pytest.mark.skipif(find_browser() is None, reason="no Chrome or Chromium to draw figures")

#: the slot LaTeX scales a figure into (pdflatex, article class, twocolumn, 10 pt, letter paper)
SLOT_PT = {"one-column": 229.5, "two-column": 469.0}
WIDTH_PX = {"one-column": 336, "two-column": 672}  # 3.5 in and 7 in at 96 CSS px to the inch
WIDTH_PT = {"one-column": 252, "two-column": 504}  # and in PDF points
MIN_PT = 7.0
MAX_HEIGHT_IN = 4.5  # a figure and its caption in a column of a letter page (\\textheight 550 pt)
SMALLER = {"sup": 0.7, "sub": 0.7, "small": 0.83}  # how Plotly draws text in these tags
WIDTHS = ["one-column", "two-column"]
RUNS = ["conservative", "overcoder", "siblings"]


@pytest.fixture(scope="module")
def evals():
    """Six runs of the ICD-9 sample (its three, twice under other names): real level names and counts."""
    files = {r: SAMPLE / f"run_{r}.csv" for r in RUNS}
    files |= {f"{r} (again)": p for r, p in list(files.items())}
    s = score_files(SAMPLE / "gold.csv", files)
    return {r: s.evaluation(r) for r in files}


def first(evals, n: int) -> dict:
    return dict(list(evals.items())[:n])


def _sizes(node: Any, inherited: float, scale: float = 1.0) -> list[float]:
    """Every text size (px) a figure's JSON declares, a ``<sup>``-like tag in a text counted at its size."""
    out: list[float] = []
    if isinstance(node, dict):
        for key, value in node.items():
            if key in ("font", "textfont", "insidetextfont", "outsidetextfont", "tickfont") and isinstance(
                value, dict
            ):
                out.append(float(value.get("size") or inherited))
            elif key == "uniformtext" and value.get("mode") in ("hide", "show"):
                out.append(float(value["minsize"]))  # a text shrunk to fit is drawn down to this size
            elif isinstance(value, str) and key in ("text", "texttemplate", "title", "name"):
                out += [inherited * k for tag, k in SMALLER.items() if f"<{tag}>" in value]
            else:
                out += _sizes(value, inherited, scale)
    elif isinstance(node, list | tuple):
        for value in node:
            out += _sizes(value, inherited, scale)
    return out


def smallest_pt_in_layout(fig, width: str) -> float:
    """The figure's smallest text in points as printed in its LaTeX slot."""
    js = fig.to_plotly_json()
    sizes = _sizes(js, float(fig.layout.font.size))
    uniform = js["layout"].get("uniformtext", {})
    shrinkable = any(
        t.get("type") in ("treemap", "icicle", "bar") and t.get("texttemplate") != "" for t in js["data"]
    )
    if shrinkable and uniform.get("mode") not in ("hide", "show"):
        return 0.0  # Plotly shrinks a text that does not fit its tile or bar with no lower bound
    return min(sizes) * 72 / 96 * SLOT_PT[width] / (fig.layout.width * 72 / 96)


@pytest.mark.parametrize("width", WIDTHS)
@pytest.mark.parametrize("n", [1, 3, 6])
def test_levels_fit_the_slot_for_one_to_six_runs(evals, width, n):
    fig = paper_figure("levels", first(evals, n), width=width)
    assert fig.layout.width == WIDTH_PX[width]
    assert fig.layout.height <= MAX_HEIGHT_IN * 96 * 1.2  # 5.4 in at most, six runs in one column
    assert smallest_pt_in_layout(fig, width) >= MIN_PT
    panels = {t.xaxis for t in fig.data}
    assert len(panels) == n  # a panel per run
    domains = sorted({tuple(fig.layout[f"yaxis{a[1:]}"].domain) for a in panels})
    assert all(hi <= lo2 + 1e-9 for (_, hi), (lo2, _) in zip(domains, domains[1:]))  # rows do not overlap


def test_levels_grow_by_thinner_bars_not_by_a_screen_per_run(evals):
    one = [paper_figure("levels", first(evals, n), width="one-column").layout.height for n in (1, 3, 6)]
    assert one[2] < 1.5 * one[0]  # six runs: not six times the height of one
    alone = paper_figure("levels", first(evals, 1), width="one-column")
    six = paper_figure("levels", first(evals, 6), width="one-column")
    # a bar thick enough carries its value; thin bars carry none (a value on some bars only misleads)
    assert all(t.texttemplate for t in alone.data) and not any(t.texttemplate for t in six.data)


@pytest.mark.parametrize("width", WIDTHS)
@pytest.mark.parametrize("kind", ["compare", "tree", "families"])
def test_other_figures_fit_the_slot(evals, kind, width):
    fig = paper_figure(kind, first(evals, 3), width=width)
    assert fig.layout.width == WIDTH_PX[width]
    assert fig.layout.height <= MAX_HEIGHT_IN * 96
    assert smallest_pt_in_layout(fig, width) >= MIN_PT


def test_the_smallest_font_is_found():
    """The measure itself: a ``<sup>`` colour-bar title and a shrinkable text with no floor are caught."""
    import plotly.graph_objects as go

    fig = go.Figure(go.Bar(x=[1], y=["a"], texttemplate="%{x}"), layout={"width": 336, "font": {"size": 12}})
    assert smallest_pt_in_layout(fig, "one-column") == 0.0
    fig.update_layout(uniformtext={"minsize": 12, "mode": "hide"}, title={"text": "A<br><sup>b</sup>"})
    assert smallest_pt_in_layout(fig, "one-column") == pytest.approx(12 * 0.7 * 0.75 * 229.5 / 252)


TRANSLATE = re.compile(r"translate\(\s*([-\d.e]+)[,\s]*([-\d.e]*)\s*\)")
SCALE = re.compile(r"scale\(\s*([-\d.e]+)")


def drawn_texts(svg: bytes) -> list[tuple[str, float, float, float, str]]:
    """(text, x, y, font size in px, anchor) of every text drawn in a Plotly SVG, through its groups'
    translations and scales."""
    out: list[tuple[str, float, float, float, str]] = []

    def walk(node, dx: float, dy: float, k: float) -> None:
        transform = node.get("transform") or ""
        for m in TRANSLATE.finditer(transform):
            dx, dy = dx + float(m.group(1)) * k, dy + float(m.group(2) or 0) * k
        for m in SCALE.finditer(transform):
            k *= float(m.group(1))
        if node.tag.endswith("text") and "".join(node.itertext()).strip():
            size = re.search(r"font-size:\s*([\d.]+)px", node.get("style") or "")
            x, y = float(node.get("x") or 0), float(node.get("y") or 0)
            spans = [float(t.get("dy")[:-2]) for t in node.iter() if (t.get("dy") or "").endswith("em")]
            y += (spans[0] if spans else 0.0) * float(size.group(1))  # a title's first line is moved down
            anchor = node.get("text-anchor") or "start"
            lines = [t for t in node if "line" in (t.get("class") or "")] or [node]  # a <br> makes lines
            for line in lines:  # each measured on its own, the widest decides
                out.append(
                    ("".join(line.itertext()), dx + x * k, dy + y * k, float(size.group(1)) * k, anchor)
                )
            return
        for child in node:
            walk(child, dx, dy, k)

    walk(ET.fromstring(svg), 0.0, 0.0, 1.0)
    return out


def text_width(text: str, size: float) -> float:
    """How wide ``text`` is drawn at ``size`` px in the font Chromium takes for Arial here (Liberation Sans,
    the same widths), or an upper bound (0.6 of the size a character) where that font is not found."""
    try:
        from PIL import ImageFont

        path = subprocess.run(
            ["fc-match", "-f", "%{file}", "Arial"], capture_output=True, text=True, check=True
        ).stdout
        return float(ImageFont.truetype(path, 100).getlength(text)) * size / 100
    except (ImportError, OSError, subprocess.CalledProcessError):
        return 0.6 * size * len(text)


def _check_drawn(svg: bytes, width: str) -> None:
    root = ET.fromstring(svg)
    w, h = float(root.get("width")), float(root.get("height"))
    assert w == WIDTH_PX[width]
    texts = drawn_texts(svg)
    assert texts
    for text, x, y, size, anchor in texts:
        assert size * 72 / 96 * SLOT_PT[width] / WIDTH_PT[width] >= MIN_PT - 0.05, (text, size)
        wide = text_width(text, size)
        left = x - {"start": 0, "middle": wide / 2, "end": wide}[anchor]
        assert left >= -1 and left + wide <= w + 1, ("cut at a side", text, x, anchor, wide)
        assert size * 0.7 <= y + 1 and y <= h + 1, ("cut at the top or bottom", text, y)


@needs_browser
@pytest.mark.parametrize("width", WIDTHS)
@pytest.mark.parametrize("n", [1, 3, 6])
def test_drawn_levels_are_exactly_the_width_with_legible_uncut_text(evals, width, n):
    fig = paper_figure("levels", first(evals, n), width=width)
    pdf = render(fig, "pdf")
    box = re.search(rb"/MediaBox\s*\[\s*0 0 ([\d.]+) ([\d.]+)", pdf)
    assert box and float(box.group(1)) == pytest.approx(WIDTH_PT[width], abs=0.01)
    assert float(box.group(2)) == pytest.approx(fig.layout.height * 72 / 96, abs=1)
    _check_drawn(render(fig, "svg"), width)


@needs_browser
@pytest.mark.parametrize("width", WIDTHS)
@pytest.mark.parametrize("kind", ["compare", "tree", "families"])
def test_drawn_figures_have_legible_uncut_text(evals, kind, width):
    _check_drawn(render(paper_figure(kind, first(evals, 3), width=width), "svg"), width)


def _grid(fig) -> list[tuple[float, float, float, float, bool]]:
    """Each panel's (x0, x1, y0, y1, titled scale) in the order of the runs."""
    out = []
    for i in range(len(fig.layout.annotations)):
        x, y = fig.layout[f"xaxis{'' if i == 0 else i + 1}"], fig.layout[f"yaxis{'' if i == 0 else i + 1}"]
        out.append((*x.domain, *y.domain, bool(x.title.text)))
    return out


@pytest.mark.parametrize("width", WIDTHS)
@pytest.mark.parametrize("n", [2, 3, 4, 6])
def test_the_panels_fill_their_grid_and_each_scale_title_sits_under_its_own_panel(evals, width, n):
    """No empty cell: the runs fill every row (three runs in one column are one row of three, not two over one
    and an empty cell), and a statistic's name is written under a panel of the bottom row only, the row its
    scale is drawn under (an empty cell once left one floating beside the next row)."""
    fig = paper_figure("levels", first(evals, n), width=width, n_resamples=0)
    panels = _grid(fig)
    rows = sorted({(y0, y1) for _, _, y0, y1, _ in panels}, reverse=True)
    columns = sorted({(x0, x1) for x0, x1, _, _, _ in panels})
    assert len(rows) * len(columns) == n  # every cell holds a run
    if n == 3:
        assert len(rows) == 1
    bottom = rows[-1]
    assert [titled for *_, titled in panels] == [(y0, y1) == bottom for _, _, y0, y1, _ in panels]
    # panels side by side do not touch: their scales' end labels stay apart
    assert all(a1 < b0 for (_, a1), (b0, _) in zip(columns, columns[1:]))


@pytest.mark.parametrize("n", [4, 5, 6])
def test_four_to_six_runs_fit_a_column_with_a_legend_on_one_line(evals, n):
    """Up to six runs in one column: at most 3.5 in tall, the three measures named as the papers (and the paper
    tables) name them, on one line above the panels, every text still at least 7 pt."""
    fig = paper_figure("levels", first(evals, n), width="one-column", n_resamples=0)
    assert fig.layout.height <= 3.5 * 96
    assert [t.name for t in fig.data if t.showlegend] == ["Flat", "Set-based", "CoPHE"]
    assert fig.layout.legend.orientation == "h" and fig.layout.legend.y > 1  # above the plot, one line
    assert smallest_pt_in_layout(fig, "one-column") >= MIN_PT


@pytest.mark.parametrize("width", WIDTHS)
def test_a_run_name_wider_than_its_panel_takes_a_second_line_not_a_cut(evals, width):
    """A panel's title is its run's whole name: on two lines when one is too narrow (a reviewer saw
    "conserva…" in a one-column figure of three runs), and the figure still fits its slot."""
    fig = paper_figure("levels", first(evals, 3), width=width)
    titles = [a.text for a in fig.layout.annotations if a.yref == "paper"][:3]
    assert [t.replace("-<br>", "").replace("<br>", " ") for t in titles] == RUNS
    assert "…" not in "".join(titles)
    assert fig.layout.height <= MAX_HEIGHT_IN * 96


def test_the_one_column_compare_figure_names_the_measures_as_papers_do_on_one_line(evals):
    """Its legend took three lines of the dashboard's long names in one column; the levels figure and the paper
    tables name the measures Flat, Set-based and CoPHE."""
    fig = paper_figure("compare", first(evals, 2), width="one-column")
    shown = [t.name for t in fig.data if t.showlegend is not False]
    assert shown == ["Flat", "Set-based", "CoPHE"]
    assert fig.layout.legend.orientation == "h"
