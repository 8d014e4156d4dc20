"""A document id one click away in a real browser: after an upload, one click on a row of the tree's
"Documents behind" table opens One document on that document, in the same session (the uploaded runs stay)."""

from __future__ import annotations

import shutil

import pytest

from tests.browser.helpers import ARTIFACTS, ROOT, TILES, click_row, expect, settle

pytestmark = pytest.mark.browser
SAMPLE = ROOT / "sample_data" / "icd9"
MAIN = "[data-testid=stMain]"
OUT = ARTIFACTS / "docs-links"


def first_document(page, table) -> str:
    """The document id in the first row of ``table`` (the grid draws on a canvas; its cells are also in the
    page for screen readers, the document column first)."""
    cell = table.locator("[role=gridcell]").first
    expect(cell).to_be_attached()
    return cell.inner_text().strip()


def test_a_document_row_opens_one_document_and_keeps_the_uploads(page, server):
    OUT.mkdir(parents=True, exist_ok=True)
    page.goto(server + "/tree")
    settle(page, TILES)
    page.get_by_text("Upload files").click()
    settle(page, "text=Upload a gold standard")
    inputs = page.locator("[data-testid=stFileUploader] input[type=file]")
    run = shutil.copy(SAMPLE / "run_overcoder.csv", OUT / "mine.csv")
    inputs.nth(1).set_input_files(str(run))
    settle(page, "[data-testid=stSidebar] >> text=Name of run 1 (mine.csv)")
    inputs.nth(0).set_input_files(str(SAMPLE / "gold.csv"))
    settle(page, f"{MAIN} >> text=The code families of run mine")

    box = page.get_by_label("Find a code or family")
    box.fill("428")
    box.press("Enter")
    settle(page, "text=Documents behind 428")
    table = page.locator(f"{MAIN} [data-testid=stDataFrame]").last
    table.scroll_into_view_if_needed()
    page.screenshot(path=OUT / "tree_documents_behind.png")
    want = first_document(page, table)
    assert want.startswith("D1"), want  # a document id of the sample
    click_row(page, table, 0)  # the one click
    settle(page, "h1:has-text('One document')")
    picked = page.get_by_label("Document (type to search)")
    expect(picked).to_be_visible()
    # the session kept the upload: run "mine" is still the sidebar's run, shown beside its documents
    expect(page.locator(MAIN).get_by_text("Run mine", exact=True)).to_be_visible()
    expect(page.get_by_text("Upload a gold standard")).to_have_count(0)
    page.screenshot(path=OUT / "one_document_opened.png")
    assert "/document" in page.url, page.url
    expect(page.locator(MAIN).get_by_text(f"{want} · ")).to_be_visible()  # the list shows the document
