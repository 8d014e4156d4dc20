"""Nothing cut at 1280×720 or 1440×900 (issue 26, point 8): on every page, no label or cell ends in "…" or
runs past the page, and a small table (a ranked list) fits its column rather than hiding its last one."""

from __future__ import annotations

import pytest

from tests.browser.helpers import ARTIFACTS, PAGE_STATES, settle

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


@pytest.mark.parametrize("width, height", [(1280, 720), (1440, 900)])
def test_no_page_cuts_a_label_or_a_cell(page, server, width, height):
    page.set_viewport_size({"width": width, "height": height})
    found = {}
    try:
        page.goto(server)
        for name, state in PAGE_STATES.items():
            if name != "Scores by level":
                page.get_by_role("link", name=name).click()
            settle(page, state)
            cut = page.evaluate(CUT) + page.evaluate(SMALL_TABLES_SCROLLING)
            if cut:
                found[name] = cut
                page.screenshot(path=ARTIFACTS / f"cut_{name.replace(' ', '_')}_{width}.png")
    finally:
        page.set_viewport_size({"width": 1440, "height": 900})
    assert found == {}
