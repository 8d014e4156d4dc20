"""The real thing: `streamlit run` driven by Playwright in Debian's chromium-headless-shell.

Loads the app, uploads a run, clicks a tree tile, checks the focused view and
the detail panel, and saves screenshots and timings to ``artifacts/``.

Every step waits for a state, never for a time: after an action, for the element that only its rerun draws,
then for the script to be idle. So the test does not depend on how busy the machine is.
"""

from __future__ import annotations

import json
import shutil
import time

import pytest

from tests.browser.helpers import ARTIFACTS, ROOT, TILES, choose, expect, settle, tile, timed

pytestmark = pytest.mark.browser


def test_load_upload_click_and_drill(page, server):
    timings: dict[str, float] = {}
    t0 = time.perf_counter()
    page.goto(server)
    settle(page, "[data-testid=stTable]")
    timings["cold_start_to_first_complete_view_s"] = time.perf_counter() - t0
    expect(page.get_by_text("Scores by level").first).to_be_visible()
    expect(page.get_by_text("42.3% more codes than the gold standard", exact=False).first).to_be_visible()
    page.screenshot(path=ARTIFACTS / "01_levels_sample.png", full_page=True)

    # Change the highest level (a rerun of the levels view on cached scores)
    timings["change_level_s"] = timed(
        page,
        choose(page, "Highest level", "Category (3 digits)").click,
        "text=levels up to Category (3 digits)",
    )
    timed(page, choose(page, "Highest level", "Section").click, "text=levels up to Section")

    # Upload: the sample gold standard and two runs, one of them renamed by its file name
    timed(page, lambda: page.get_by_text("Upload files").click(), "text=Upload a gold standard")
    inputs = page.locator("[data-testid=stFileUploader] input[type=file]")
    expect(inputs).to_have_count(2)
    # The runs first: their rerun draws a name box per run, a state that says the upload reached the server
    # (the gold upload's rerun changes nothing visible, and a file set while a rerun redraws its uploader
    # could be lost).
    # Two runs whose files share a name (preds.csv) get distinct names
    files = []
    for folder, run in (("a", "conservative"), ("b", "overcoder")):
        (ARTIFACTS / folder).mkdir(exist_ok=True)
        files.append(
            shutil.copy(ROOT / "sample_data" / "icd9" / f"run_{run}.csv", ARTIFACTS / folder / "preds.csv")
        )
    inputs.nth(1).set_input_files([str(f) for f in files])
    settle(page, "[data-testid=stSidebar] >> text=Name of run 2 (preds.csv)")
    inputs.nth(0).set_input_files(str(ROOT / "sample_data" / "icd9" / "gold.csv"))
    settle(page, "[data-testid=stMain] >> text=preds-2")
    expect(page.get_by_text("Upload a gold standard")).to_have_count(0)
    expect(page.locator("[data-testid=stMain]").get_by_text("preds", exact=True).first).to_be_visible()
    page.screenshot(path=ARTIFACTS / "02_levels_uploaded.png", full_page=True)

    # Renaming a run keeps it selected: the levels page shows it under its new name
    box = page.get_by_label("Name of run 2 (preds.csv)")
    box.fill("my_overcoder")
    timings["rename_run_s"] = timed(
        page, lambda: box.press("Enter"), "[data-testid=stMain] >> text=my_overcoder"
    )
    expect(page.get_by_text("Choose at least one run")).to_have_count(0)
    expect(page.locator("[data-testid=stMain]").get_by_text("preds-2")).to_have_count(0)

    # The tree: click the hypertension block, then check the focused view and the detail panel
    timed(page, lambda: page.get_by_role("link", name="Code-family tree").click(), TILES)
    page.screenshot(path=ARTIFACTS / "03_tree_root.png", full_page=True)
    timings["focus_block_s"] = timed(
        page, lambda: tile(page, "401-405").click(force=True), "text=Inside 401-405 Hypertensive disease"
    )
    assert "focus=block%3A401-405" in page.url or "focus=block:401-405" in page.url, page.url
    timings["focus_category_s"] = timed(
        page,
        lambda: tile(page, "401 Essential").click(force=True),
        "text=Documents behind 401 Essential hypertension",
    )
    expect(page.get_by_role("button", name="› 401-405 Hypertensive disease")).to_be_visible()  # the way back
    expect(page.get_by_text("The run writes too many of these codes in")).to_be_visible()
    page.screenshot(path=ARTIFACTS / "04_tree_focus_401.png", full_page=True)

    # Change the run (cached): the focus stays
    timings["change_run_s"] = timed(
        page,
        choose(page, "Run", "my_overcoder").click,
        "[data-testid=stMain] >> text=The code families of run my_overcoder",
    )
    settle(page, "text=Documents behind 401 Essential hypertension")

    # Back up through the breadcrumb
    timed(page, lambda: page.get_by_role("button", name="All codes").click(), "text=Inside all codes")

    (ARTIFACTS / "browser_timings.json").write_text(json.dumps(timings, indent=1))
    print("\nbrowser timings:", json.dumps(timings))


def test_document_and_compare_views_render(page, server):
    for path, state, shot in [
        ("/document", "text=Wrong code in the right family", "05_document.png"),
        ("/compare", "text=Documents where the runs disagree most", "06_compare.png"),
        ("/metrics", "text=Which metric rewards what", "07_metrics.png"),
        ("/threshold", "text=Threshold-free metrics", "08_threshold.png"),
    ]:
        page.goto(server + path)
        settle(page, state)
        page.screenshot(path=ARTIFACTS / shot, full_page=True)
    page.goto(server + "/document")
    settle(page, "text=Wrong code in the right family")
    expect(page.get_by_text("Correct").first).to_be_visible()
