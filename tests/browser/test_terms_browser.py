"""Technical terms switched on and off on every page that offers choices worded by it. Streamlit sends a choice
widget's value back as its label: when Technical terms changed the labels, the old label came back as the value
("ValueError: unknown level 'Section'", a fault panel on Scores by level). Only a real browser sends it so."""

from __future__ import annotations

import pytest

from tests.browser.helpers import IDLE, PAGE_STATES, WAIT_MS, expect, settle

pytestmark = pytest.mark.browser

# the pages whose choices Technical terms words
PAGES = ["Scores by level", "Code-family tree", "Compare runs", "Slices", "One document"]
FAULT = "[data-testid=stException], [data-testid=stAlertContentError]:has-text('This is a fault in cophe')"


def _switch(page) -> None:
    """Flip Technical terms and wait for the rerun it starts to finish."""
    switch = page.get_by_role("switch", name="Technical terms")
    before = switch.is_checked()
    page.get_by_text("Technical terms", exact=True).click()
    expect(switch).to_be_checked(checked=not before, timeout=WAIT_MS)
    page.wait_for_selector(IDLE, timeout=WAIT_MS)


def test_technical_terms_on_and_off_never_break_a_page(page, server):
    page.goto(server)
    settle(page, "[data-testid=stTable]")
    for link in PAGES:
        state = PAGE_STATES[link]
        page.get_by_role("link", name=link).click()
        settle(page, state)
        for _ in range(2):  # on, off
            _switch(page)
            settle(page, state)
            assert page.locator(FAULT).all_inner_texts() == [], link
