"""The code-family tree in a real browser at 1440×900: labels drawn, the ranked panel, "Other", the
wrong-code table, the view kept in the URL across a reload, and a neutral empty state.

Every step waits for a state that only its rerun draws, then for the script to be idle.
"""

from __future__ import annotations

import json
import re
import time

import pytest

from cophe_core import score_files
from cophe_core.breakdown.families import family_errors
from tests.browser.helpers import (
    ARTIFACTS,
    LABELLED_TILES,
    ROOT,
    TILES,
    click_row,
    expect,
    settle,
    tile,
    timed,
)

pytestmark = pytest.mark.browser
SAMPLE = ROOT / "sample_data" / "icd9"
MAIN = "[data-testid=stMain]"


@pytest.fixture(scope="module")
def worst():
    """The sample's default run (siblings): its family with the most extra codes at the category level, as
    the ranked panel should list it first (most extra codes, then code order)."""
    ev = score_files(SAMPLE / "gold.csv", {"siblings": SAMPLE / "run_siblings.csv"}).evaluation("siblings")
    t = family_errors(ev, "e0").sort_values(["fp", "code"], ascending=[False, True])
    return f"{t.iloc[0].code} {t.iloc[0].title}"


def first_ranked(page):
    """The first code above the ranked list "Most extra codes": its first family's one-click focus."""
    return page.locator(f"{MAIN} [class*='st-key-ranked_rank_fp_'] [role=radiogroup] [role=radio]").first


@pytest.mark.parametrize("width, height", [(1440, 900), (1280, 720)])
def test_a_click_on_a_ranked_family_focuses_it(page, server, worst, width, height):
    """A real click on the first family of "Most extra codes" focuses the tree on it (its breadcrumb
    "› CODE" shows), and so does the same click after the way back through "All codes", which leaves the
    page scrolled below the panel. The ranked table's rows are titles on up to three lines: a click must
    not depend on where a row lies in the table."""
    code = worst.split(" ")[0]
    crumb = f"{MAIN} button:has-text('› {code} ')"
    page.set_viewport_size({"width": width, "height": height})
    try:
        page.goto(server + "/tree")
        settle(page, TILES)
        expect(first_ranked(page)).to_have_text(code)
        for _ in range(2):
            timed(page, lambda: first_ranked(page).click(), crumb)
            expect(page.locator(MAIN).get_by_text(f"Documents behind {worst}")).to_be_visible()
            timed(page, lambda: page.get_by_role("button", name="All codes").click(), "text=Inside all codes")
            expect(page.locator(crumb)).to_have_count(0)
        page.locator("[data-testid=stExpander]:has-text('Where this run goes wrong')").screenshot(
            path=ARTIFACTS / f"13_tree_ranked_{width}.png"
        )
    finally:
        page.set_viewport_size({"width": 1440, "height": 900})


def test_tree_is_labelled_ranked_and_kept_in_the_url(page, server, worst):
    timings: dict[str, float] = {}
    t0 = time.perf_counter()
    page.goto(server + "/tree")
    page.wait_for_selector("h1:has-text('Code-family tree')")  # the first load shows its title at once
    timings["first_load_title_s"] = time.perf_counter() - t0
    settle(page, TILES)
    timings["first_load_complete_s"] = time.perf_counter() - t0
    labelled = page.evaluate(LABELLED_TILES)
    assert labelled >= 15, f"only {labelled} tiles carry a label on the root view"
    timings["labelled_tiles_at_root"] = labelled
    expect(page.get_by_text("Where this run goes wrong")).to_be_visible()
    expect(page.locator(MAIN).get_by_text("Size", exact=True)).to_be_visible()  # the legend
    page.screenshot(path=ARTIFACTS / "10_tree_root.png")

    # One click on the ranked panel's first family (its code above the list) focuses the tree on the worst
    timings["ranked_panel_click_s"] = timed(
        page, lambda: first_ranked(page).click(), f"text=Documents behind {worst}"
    )
    assert re.search(r"[?&]focus=", page.url), page.url
    expect(page.get_by_text("Right family, wrong code").first).to_be_visible()
    page.set_viewport_size({"width": 1440, "height": 2400})
    page.screenshot(path=ARTIFACTS / "11_tree_focus_worst.png")
    page.set_viewport_size({"width": 1440, "height": 900})

    # A reload keeps the view: the URL holds page, data, run, level, focus and colour
    url = page.url
    page.reload()
    settle(page, f"text=Documents behind {worst}")
    assert page.url == url

    # Back to all codes, then open an "Other" tile: the list of what it merged, each entry clickable
    timed(page, lambda: page.get_by_role("button", name="All codes").click(), "text=Inside all codes")
    timings["open_other_s"] = timed(
        page, lambda: tile(page, "Other").click(force=True), "text=smaller families of"
    )
    page.screenshot(path=ARTIFACTS / "12_tree_other.png")
    other_table = page.locator(".st-key-other_panel [data-testid=stDataFrame]").first
    click_row(page, other_table, 0)
    settle(page, "text=Documents behind")
    (ARTIFACTS / "tree_browser_timings.json").write_text(json.dumps(timings, indent=1))
    print("\ntree timings:", json.dumps(timings))


def test_the_empty_upload_state_is_a_neutral_prompt(page, server):
    page.goto(server)
    settle(page, "h1:has-text('Scores by level')")
    timed(page, lambda: page.get_by_text("Upload files").click(), "text=Upload a gold standard")
    prompt = page.locator(f"{MAIN} [data-testid=stAlert]", has_text="Upload a gold standard")
    expect(prompt.locator("[data-testid=stAlertContentInfo]")).to_have_count(1)
    expect(page.locator(f"{MAIN} [data-testid=stAlertContentError]")).to_have_count(0)
