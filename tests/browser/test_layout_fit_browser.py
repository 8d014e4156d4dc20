"""Nothing cut at 1280×720 or 1440×900 (issue 26, point 8): on every page, no label or cell ends in "…" or
runs past the page, and a small table (a ranked list) fits its column rather than hiding its last one."""

from __future__ import annotations

import re

import pytest
from playwright.sync_api import TimeoutError as PlaywrightTimeout

from tests.browser.helpers import ARTIFACTS, PAGE_STATES, click_row, expect, settle

# Every text the page cuts: an element that hides what overflows it (Streamlit's "…" on button labels, a
# cell) while its text is wider than its box, or text beyond the right edge of the page's content, unless
# it sits in a box that scrolls. Charts and the canvas tables are measured apart.
CUT = """() => {
  const main = document.querySelector('[data-testid=stMainBlockContainer]');
  const right = main.getBoundingClientRect().right, out = [];
  const scrolls = el => { for (let a = el.parentElement; a && a !== main; a = a.parentElement) {
      const o = getComputedStyle(a).overflowX;
      if ((o === 'auto' || o === 'scroll') && a.scrollWidth > a.clientWidth) return true; } return false; };
  main.querySelectorAll('*').forEach(el => {
    if (el.closest('.js-plotly-plot, [data-testid=stDataFrame], svg')) return;
    if (el.querySelector('canvas, iframe, img, .js-plotly-plot, [data-testid=stDataFrame]')) return;
    const text = el.textContent.trim(), r = el.getBoundingClientRect();
    if (!text || !r.width || !r.height) return;
    const o = getComputedStyle(el).overflowX;
    if ((o === 'hidden' || o === 'clip') && el.scrollWidth > el.clientWidth + 1)
      out.push(`cut: ${el.tagName} "${text.slice(0, 60)}" ${el.scrollWidth} > ${el.clientWidth}`);
    const own = [...el.childNodes].some(n => n.nodeType === 3 && n.textContent.trim());
    if (own && r.right > right + 1 && !scrolls(el))
      out.push(`past the page: ${el.tagName} "${text.slice(0, 60)}" ${Math.round(r.right)} > ${Math.round(right)}`);
  });
  return out;
}"""

# Canvas tables of at most four columns (ranked lists) that scroll sideways, hiding a column. Wider tables
# may scroll: their first column is pinned (st.column_config ... pinned=True).
SMALL_TABLES_SCROLLING = """() => [...document.querySelectorAll('[data-testid=stDataFrame]')].flatMap((g, i) => {
  const s = g.querySelector('.dvn-scroller'), t = g.querySelector('table[role=grid]');
  const cols = t ? Number(t.getAttribute('aria-colcount')) : 0;
  return s && cols > 0 && cols <= 4 && s.scrollWidth > s.clientWidth + 1
    ? [`table ${i} (${cols} columns): ${s.scrollWidth} > ${s.clientWidth}`] : [];
})"""


def cuts_on_pages(page, server, size: tuple[int, int], pages, checks: tuple[str, ...], shot: str) -> dict:
    """What ``checks`` (JavaScript functions, each returning a list of findings) find on each of ``pages`` at
    the viewport ``size``, once the page has settled. The canvas grids lay out their rows after the script's
    run, so each page is given until ``CUT_WAIT_MS`` for its findings to clear (a state, not a time) before
    they are kept, with a screenshot named ``shot``."""
    every = "() => [" + ", ".join(f"...({c})()" for c in checks) + "]"
    page.set_viewport_size({"width": size[0], "height": size[1]})
    found = {}
    try:
        page.goto(server)
        settle(page, PAGE_STATES["Scores by level"])  # the first page, before any link is followed
        for name in pages:
            if name != "Scores by level":
                page.get_by_role("link", name=name).click()
            settle(page, PAGE_STATES[name])
            try:
                page.wait_for_function(f"() => ({every})().length === 0", timeout=CUT_WAIT_MS)
            except PlaywrightTimeout:
                found[name] = page.evaluate(every)
                page.screenshot(path=ARTIFACTS / f"{shot}_{name.replace(' ', '_')}_{size[0]}.png")
    finally:
        page.set_viewport_size({"width": 1440, "height": 900})
    return found


CUT_WAIT_MS = 5_000


@pytest.mark.parametrize("width, height", [(1280, 720), (1440, 900)])
def test_no_page_cuts_a_label_or_a_cell(page, server, width, height):
    checks = (CUT, SMALL_TABLES_SCROLLING)
    assert cuts_on_pages(page, server, (width, height), list(PAGE_STATES), checks, "cut") == {}


# Buttons and pills whose box runs past a box that clips it (a column too narrow for "Chart as HTML": the label
# ends mid-word with no "…", so the check on the label itself finds nothing).
CLIPPED_BUTTONS = """() => {
  const main = document.querySelector('[data-testid=stMainBlockContainer]'), out = [];
  main.querySelectorAll('button, [data-testid=stDownloadButton] a').forEach(b => {
    const r = b.getBoundingClientRect(), text = b.innerText.trim();
    if (!text || !r.width) return;
    for (let a = b.parentElement; a && a !== main.parentElement; a = a.parentElement) {
      const s = getComputedStyle(a), box = a.getBoundingClientRect();
      if (s.overflowX !== 'visible' && r.right > box.right + 1) {
        out.push(`"${text.slice(0, 60)}" ends at ${Math.round(r.right)}, past ${Math.round(box.right)}`); break; }
    }
  });
  return out;
}"""

# A chart's legend drawn over its panel titles (Plotly puts neither out of the other's way).
LEGEND_OVER_TITLES = """() => [...document.querySelectorAll('.js-plotly-plot')].flatMap((plot, i) => {
  const legend = plot.querySelector('g.legend');
  if (!legend) return [];
  const l = legend.getBoundingClientRect();
  return [...plot.querySelectorAll('g.annotation')].filter(a => {
    const r = a.getBoundingClientRect();
    return r.width && r.left < l.right && r.right > l.left && r.top < l.bottom && r.bottom > l.top;
  }).map(a => `chart ${i}: legend over "${a.textContent.trim()}"`);
})"""

# Canvas tables listing titles (a family's, a code's) whose longest title is wider than a third of the table,
# drawn on rows of one line: the grid cuts such a title with no "…". Rows taller than 4rem wrap their text.
TITLES_CUT = """() => {
  const heads = new Set(['Title', 'Gold code', 'Written instead']);
  const ctx = document.createElement('canvas').getContext('2d');
  return [...document.querySelectorAll('[data-testid=stDataFrame]')].flatMap((g, i) => {
    const t = g.querySelector('table[role=grid]'), s = g.querySelector('.dvn-scroller');
    if (!t || !s) return [];
    const cols = [...t.querySelectorAll('th')].map(h => h.textContent.trim());
    const rows = Number(t.getAttribute('aria-rowcount')) - 1;
    ctx.font = `14px ${getComputedStyle(g).fontFamily}`;
    const rowHeight = (s.scrollHeight - 35) / Math.max(rows, 1);
    return cols.flatMap((c, k) => {
      if (!heads.has(c)) return [];
      const texts = [...t.querySelectorAll(`td[aria-colindex="${k + 1}"]`)].map(d => d.textContent);
      const widest = Math.max(0, ...texts.map(x => ctx.measureText(x).width));
      return widest > g.clientWidth / 3 && rowHeight < 60
        ? [`table ${i}, ${c}: a title ${Math.round(widest)} px wide on rows of ${Math.round(rowHeight)} px`] : [];
    });
  });
}"""


@pytest.mark.parametrize("width, height", [(1280, 720), (1440, 900)])
def test_buttons_legends_and_titles_are_whole(page, server, width, height):
    """The review's faults at both sizes: figure and report buttons cut by their column, the Both runs legend
    over its panels' titles, titles cut in the canvas tables."""
    pages = ("Code-family tree", "Compare runs", "Export")
    checks = (CLIPPED_BUTTONS, LEGEND_OVER_TITLES, TITLES_CUT)
    assert cuts_on_pages(page, server, (width, height), pages, checks, "whole") == {}


def test_an_example_document_opens_in_one_click(page, server):
    """Each example document of "written instead" has a row of its own: one click opens it on One document
    (a row listing several needed a second click, on one of them)."""
    page.set_viewport_size({"width": 1280, "height": 720})
    try:
        page.goto(server + "/tree")
        settle(page, PAGE_STATES["Code-family tree"])
        table = (
            page.locator("[data-testid=stDataFrame]")
            .filter(has=page.locator("th", has_text=re.compile("^Document$")))
            .filter(has=page.locator("th", has_text="Written instead"))
        )
        expect(table).to_have_count(1)
        cell = table.locator("[role=gridcell]").first
        expect(cell).to_be_attached()
        want = cell.inner_text().strip()
        assert want and "," not in want, want
        click_row(page, table, 0)  # the one click
        settle(page, "h1:has-text('One document')")
        expect(page.locator("[data-testid=stMain]").get_by_text(f"{want} · ")).to_be_visible()
    finally:
        page.set_viewport_size({"width": 1440, "height": 900})


# The share of the tree chart's width left of its first column of labelled tiles (an icicle's implicit root
# had none, and took a column).
EMPTY_LEFT = """() => {
  const plot = document.querySelector('.js-plotly-plot'), box = plot.getBoundingClientRect();
  const tiles = [...plot.querySelectorAll('g.trace.bars g.point')]
    .filter(g => g.querySelector('text.bartext')?.textContent.trim())
    .map(g => g.querySelector('path').getBoundingClientRect()).filter(r => r.width > 0);
  return (Math.min(...tiles.map(r => r.left)) - box.left) / box.width;
}"""


def test_the_tree_spends_its_width_on_families(page, server):
    page.set_viewport_size({"width": 1280, "height": 720})
    try:
        page.goto(server + "/tree")
        settle(page, PAGE_STATES["Code-family tree"])
        assert page.evaluate(EMPTY_LEFT) < 0.05
    finally:
        page.set_viewport_size({"width": 1440, "height": 900})
