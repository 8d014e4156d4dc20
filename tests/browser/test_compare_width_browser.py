"""Nothing cut: the comparison report's tables fit the width of an A4 page in print, and the Compare page's
differences from the baseline fit the page at 1280 and 1440 px wide."""

from __future__ import annotations

import pytest

from cophe_core import score_files
from cophe_dashboard import reports, state
from tests.browser.helpers import ARTIFACTS, ROOT, settle

SAMPLE = ROOT / "sample_data" / "icd9"
RUNS = ["siblings", "overcoder", "conservative"]
A4_CONTENT_PX = round((210 - 2 * 12) / 25.4 * 96)  # A4's width less the report's 12 mm margins, in CSS px
A4_LANDSCAPE_PX = round((297 - 2 * 12) / 25.4 * 96)  # the page a table of many columns is printed on

# Every table (and every cell of it) within the page's width and its own box: [] when nothing runs past.
OVERFLOWING = """(selector) => {
    const width = document.documentElement.clientWidth, out = [];
    document.querySelectorAll(selector).forEach((t, i) => {
        const box = t.getBoundingClientRect();
        if (box.right > width + 1 || t.scrollWidth > t.clientWidth + 1)
            out.push(`table ${i}: right ${box.right}, scroll ${t.scrollWidth}, page ${width}`);
        t.querySelectorAll('td, th').forEach(c => {
            if (c.scrollWidth > c.clientWidth + 1) out.push(`table ${i} cell ${c.textContent.slice(0, 40)}`);
        });
    });
    return out;
}"""

# The words a table's cells split across lines (a break after a hyphen or a dash is a line break, not a split).
SPLIT_WORDS = """(selector) => {
    const out = [];
    document.querySelectorAll(selector).forEach(cell => {
        const walker = document.createTreeWalker(cell, NodeFilter.SHOW_TEXT);
        for (let node = walker.nextNode(); node; node = walker.nextNode()) {
            for (const m of node.data.matchAll(/[^\\s\\-–]+/g)) {
                const range = document.createRange();
                range.setStart(node, m.index);
                range.setEnd(node, m.index + m[0].length);
                const lines = new Set([...range.getClientRects()].filter(r => r.width > 0).map(r => Math.round(r.top)));
                if (lines.size > 1) out.push(m[0]);
            }
        }
    });
    return out;
}"""


@pytest.fixture(scope="module")
def report() -> str:
    scoring = score_files(SAMPLE / "gold.csv", {r: SAMPLE / f"run_{r}.csv" for r in RUNS})
    ctx = state.Context(scoring, "Sample: ICD-9", "block", "siblings")
    cmp = reports.comparison(ctx, RUNS, "siblings", "siblings", "overcoder", resamples=200)
    return reports.compare_report(ctx, cmp)


def test_the_comparison_reports_tables_fit_an_a4_page_in_print(page, report):
    """Each table fits its printed page with whole words: A4 portrait, or landscape for a table of many
    columns (its own named page)."""
    page.emulate_media(media="print")
    try:
        page.set_content(report, wait_until="load")
        assert page.locator("table").count() >= 4
        assert page.locator("div.table.wide table").count() >= 1  # the families table's 14 columns
        for width, tables in ((A4_CONTENT_PX, "div.table:not(.wide)"), (A4_LANDSCAPE_PX, "div.table.wide")):
            page.set_viewport_size({"width": width, "height": 1100})
            assert page.evaluate(OVERFLOWING, f"{tables} table") == []
            # whole words, never "Resam pled"
            assert page.evaluate(SPLIT_WORDS, f"{tables} td, {tables} th") == []
        page.pdf(path=str(ARTIFACTS / "compare_report_a4.pdf"), format="A4")
    finally:
        page.emulate_media(media="screen")
        page.set_viewport_size({"width": 1440, "height": 900})


@pytest.mark.parametrize("width, height", [(1280, 720), (1440, 900)])
def test_the_compare_pages_differences_are_not_cut(page, server, width, height):
    page.set_viewport_size({"width": width, "height": height})
    try:
        page.goto(server)
        settle(page, "[data-testid=stTable]")
        page.get_by_role("link", name="Compare runs").click()
        settle(page, "text=Documents where the runs disagree most")
        table = page.locator("[data-testid=stTable]", has_text="Right family and count F1").first
        table.scroll_into_view_if_needed()
        assert "worse" in table.inner_text()
        assert page.evaluate(OVERFLOWING, "[data-testid=stTable] table") == []
        main = page.locator("[data-testid=stMain]").bounding_box()
        box = table.bounding_box()
        assert box["x"] + box["width"] <= main["x"] + main["width"]
        page.screenshot(path=ARTIFACTS / f"compare_differences_{width}.png")
    finally:
        page.set_viewport_size({"width": 1440, "height": 900})
