"""Every page opens for run names of every shape a user gives a file: capitals, underscores, hyphens, spaces,
dots, digits only and non-ASCII letters (One document once crashed on ``Model_A``: its status columns were
capitalised for display, then looked up as written)."""

from __future__ import annotations

import pytest

from tests.app.conftest import PAGES, goto, run_app, upload

GOLD = b"doc_id,code\n1,401.9\n1,428.0\n2,250.00\n3,038.9\n"
RUN = b"doc_id,code\n1,401.9\n1,428.1\n2,250.01\n3,038.9\n3,401.1\n"
OTHER = b"doc_id,code\n1,401.9\n2,250.00\n3,038.9\n"
NAMES = ["Model_A", "BERT-base", "run two.v1", "2024", "Modèle_É"]


@pytest.fixture(scope="module")
def named():
    at = run_app()
    files = [(f"{n}.csv", RUN if i % 2 == 0 else OTHER) for i, n in enumerate(NAMES)]
    upload(at, ("gold.csv", GOLD), files)
    assert not at.error, [e.value for e in at.error]
    assert at.session_state["_ctx"].scoring.run_names == NAMES
    return at


@pytest.mark.parametrize("page", PAGES)
def test_every_page_opens_for_run_names_of_every_shape(named, page):
    at = named
    goto(at, page).run()
    assert not at.exception, [e.value for e in at.exception]
    assert not at.error, [e.value for e in at.error]


def test_one_document_shows_each_run_status_under_its_own_name(named):
    at = named
    at.session_state["doc_id"] = "1"
    goto(at, "views/document.py").run()
    assert not at.exception, [e.value for e in at.exception]
    headers = {c for df in at.dataframe for c in df.value.columns}
    assert {f"Status · {n}" for n in NAMES[:2]} <= headers, headers
