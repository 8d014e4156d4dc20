"""An aggregate analysis (cophe aggregate) opened in the real dashboard: the levels page with its numbers,
the tree drawn from counts, and a page that needs documents' codes saying it is not available."""

from __future__ import annotations

import pytest

from cophe_core import score_files
from cophe_core.scale.aggregate import aggregate_scoring, write_aggregate
from tests.browser.helpers import ARTIFACTS, ROOT, expect, settle, timed

pytestmark = pytest.mark.browser


def test_an_aggregate_file_opens_on_the_levels_page_and_feeds_the_tree(page, server, tmp_path):
    sample = ROOT / "sample_data" / "icd9"
    s = score_files(sample / "gold.csv", {r: sample / f"run_{r}.csv" for r in ("siblings", "overcoder")})
    path = tmp_path / "year.cophe"
    write_aggregate(aggregate_scoring(s), path)
    page.goto(server)
    settle(page, "[data-testid=stTable]")
    timed(
        page,
        lambda: page.get_by_text("Open a saved analysis").click(),
        "text=Open a file made with Save analysis",
    )
    page.locator("[data-testid=stSidebar] [data-testid=stFileUploader] input[type=file]").set_input_files(
        str(path)
    )
    settle(page, "[data-testid=stMain] >> text=1,000 documents")
    expect(
        page.get_by_text("an aggregate analysis (counts) of 2 runs on 1,000 documents").first
    ).to_be_visible()
    f1 = f"{s.evaluation('siblings').score('cophe').f1:.3f}"
    expect(page.locator("[data-testid=stTable]").get_by_text(f1, exact=True).first).to_be_visible()
    page.screenshot(path=ARTIFACTS / "aggregate_levels.png")

    timed(page, lambda: page.get_by_role("link", name="Code-family tree").click(), ".js-plotly-plot")
    expect(page.get_by_text("an aggregate analysis holds counts only").first).to_be_visible()
    page.screenshot(path=ARTIFACTS / "aggregate_tree.png")

    timed(
        page,
        lambda: page.get_by_role("link", name="One document").click(),
        "text=is not available for an aggregate",
    )
