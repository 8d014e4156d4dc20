"""Five runs in the real browser: the Compare page at a glance, a slice chosen in the sidebar, and an analysis
saved, reopened in a fresh session, and restored as it was."""

from __future__ import annotations

import json
import re

import pandas as pd

from cophe_core.inputs.synthetic import generate_run
from tests.browser.helpers import ARTIFACTS, ROOT, asking, expect, playwright, settle, timed

SAMPLE = ROOT / "sample_data" / "icd9"
RUN_FILES = ["run_siblings.csv", "run_overcoder.csv", "run_conservative.csv", "scores_model.csv"]


def choose(page, label: str, option: str) -> None:
    """Pick ``option`` in the selectbox labelled ``label``, until the box shows it: on a loaded machine a click
    can land while the sidebar is still being drawn (a first click may only move the focus, or the list may
    close before the option is hit)."""
    box = page.get_by_label(label, exact=True)
    listbox = page.get_by_role("listbox")
    for _ in range(4):
        box.click()
        try:
            listbox.wait_for(state="visible", timeout=5_000)
            listbox.get_by_role("option", name=option, exact=True).click(timeout=5_000)
            expect(box).to_have_value(option, timeout=10_000)
            return
        except (AssertionError, playwright.TimeoutError):
            page.keyboard.press("Escape")  # close a list left open, then try again
    raise AssertionError(f"the selectbox {label!r} did not take {option!r}")


def test_five_runs_a_slice_and_a_saved_analysis_round_trip(page, server, tmp_path):
    gold = pd.read_csv(SAMPLE / "gold.csv", dtype=str)
    fifth = tmp_path / "retrained.csv"
    generate_run(gold, "conservative", seed=77).to_csv(fifth, index=False)
    files = [SAMPLE / f for f in RUN_FILES] + [fifth]
    timings = {}

    page.goto(server)
    settle(page, "[data-testid=stTable]")
    timed(page, lambda: page.get_by_text("Upload files").click(), "text=Upload a gold standard")
    inputs = page.locator("[data-testid=stFileUploader] input[type=file]")
    inputs.nth(1).set_input_files([str(f) for f in files])
    settle(page, "text=Name of run 5 (retrained.csv)")
    timings["upload_s"] = timed(
        page, lambda: inputs.nth(0).set_input_files(str(SAMPLE / "gold.csv")), "[data-testid=stTable]"
    )

    # Compare: all five runs at a glance, and the families that changed
    timings["compare_s"] = timed(
        page,
        lambda: page.get_by_role("link", name="Compare runs").click(),
        "text=Documents where the runs disagree most",
    )
    expect(page.get_by_text("All runs at a glance")).to_be_visible()
    expect(page.get_by_text("Difference from run_siblings")).to_be_visible()
    chart = page.locator("[data-testid=stPlotlyChart]").first
    for run in ("run_siblings", "run_overcoder", "run_conservative", "scores_model", "retrained"):
        expect(chart.locator("text", has_text=run).first).to_be_attached()
    expect(page.get_by_text("differ beyond chance between the runs")).to_be_visible()
    page.screenshot(path=ARTIFACTS / "10_compare_five_runs.png", full_page=True)

    # A slice, chosen in the sidebar, restricts the page and says so
    page.get_by_text("Slice: look at part of the data").click()
    t0 = timed(
        page,
        lambda: choose(page, "Look at", "Codes, by how often they occur"),
        "text=Showing only Rare: fewer than 10 documents",
    )
    timings["slice_s"] = t0
    settle(page, "text=Documents where the runs disagree most")
    page.screenshot(path=ARTIFACTS / "11_compare_rare_codes.png", full_page=True)

    # Save the analysis, then open it in a fresh session
    asking(page, "Save analysis").click()  # the file is made, then offered
    with page.expect_download() as download:
        page.get_by_role("button", name=re.compile(r"Save analysis · ")).click()
    saved = tmp_path / "analysis.cophe"
    download.value.save_as(saved)
    assert saved.stat().st_size > 100_000  # the inputs as given are inside

    page.context.clear_cookies()
    page.goto(server)  # a new session: nothing uploaded
    settle(page, "[data-testid=stTable]")
    timed(
        page,
        lambda: page.get_by_text("Open a saved analysis").click(),
        "text=Open a file made with Save analysis",
    )
    opener = page.locator("[data-testid=stFileUploader] input[type=file]").first
    timings["open_s"] = timed(
        page, lambda: opener.set_input_files(str(saved)), "text=Showing only Rare: fewer than 10 documents"
    )
    link = page.get_by_role("link", name="Go to the view the analysis was saved on: Compare runs")
    timings["saved_view_s"] = timed(page, link.click, "text=Documents where the runs disagree most")
    expect(page.get_by_role("heading", name="Compare runs")).to_be_visible()
    expect(page.get_by_text("Difference from run_siblings")).to_be_visible()
    chart = page.locator("[data-testid=stPlotlyChart]").first
    expect(chart.locator("text", has_text="retrained").first).to_be_attached()
    page.screenshot(path=ARTIFACTS / "12_reopened_analysis.png", full_page=True)
    (ARTIFACTS / "compare_browser_timings.json").write_text(json.dumps(timings, indent=1))
    print("\ncompare browser timings:", json.dumps(timings))
