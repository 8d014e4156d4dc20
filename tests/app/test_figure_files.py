"""Every chart downloads as SVG, PNG and PDF for a paper, the tree included: a visible button under it."""

from __future__ import annotations

import json
import re

import pytest

from cophe_core.output.figures_export import find_browser
from tests.app.conftest import ask, asking, run_app


@pytest.mark.skipif(find_browser() is None, reason="no Chrome or Chromium to draw figures")
def test_the_tree_downloads_as_svg_png_and_pdf():
    at = run_app("views/tree.py")
    labels = asking(at)
    assert {"SVG", "PNG", "PDF"} <= set(labels), labels
    svg = next(g for g in at.button_group if g.options == ["SVG"])
    svg.set_value("SVG").run()
    assert not at.exception, [e.value for e in at.exception]
    made = [b.label for b in at.get("download_button")]
    assert any(re.fullmatch(r"SVG · \d[\d,]* KB", x) for x in made), made
    assert "PNG" in asking(at)  # the others are still made on request only


def test_export_offers_the_paper_tables():
    at = run_app("views/export.py")
    assert {"LaTeX", "Markdown", "Spreadsheet (CSV)", "Web page", "PDF"} <= set(asking(at))
    ask(at, "dl_paper_tex_make")
    assert not at.exception, [e.value for e in at.exception]
    assert any(b.label.startswith("LaTeX · ") for b in at.get("download_button"))


def test_export_offers_the_coding_report():
    at = run_app("views/export.py")
    ask(at, "dl_coder_html_make")
    assert not at.exception, [e.value for e in at.exception]
    assert any(b.label.startswith("Coding report (web page) · ") for b in at.get("download_button"))


def test_the_first_page_shows_the_levels_chart_at_once():
    at = run_app()  # the first page, nothing switched on
    charts = at.get("vega_lite_chart")
    assert len(charts) == 1
    spec = json.loads(charts[0].proto.spec)
    assert spec["facet"]["field"] == "run" and len(spec["spec"]["layer"]) == 3  # interval, dot, value
    # one ranked sentence per run where right family and count falls below right family, not one per level
    lines = [m.value for m in at.markdown if m.value.startswith("- Run ")]
    runs = at.multiselect(key="levels_runs").value
    assert len(lines) == 1 and lines[0].count("- Run ") == len(runs) == 4  # each sample run has a gap
