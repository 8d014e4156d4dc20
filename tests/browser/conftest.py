"""Browser-test fixtures: one real Streamlit server per test process, one 1440×900 page (a browser of its
own, so a session of its own) per test module, and the call report kept on each test item, so a failing test
leaves a screenshot.

The server is shared by the modules of a process: a server per module cost a start and a cold first page in
each of a dozen modules (tests/browser on 2 workers: 184 s, against 170 s shared). Each module still meets it
as a new user does, in a new browser."""

from __future__ import annotations

import pytest

from tests.browser.helpers import ARTIFACTS, BROWSER, playwright, start_server


@pytest.hookimpl(wrapper=True)
def pytest_runtest_makereport(item, call):
    report = yield
    setattr(item, f"rep_{report.when}", report)
    return report


@pytest.fixture(scope="session")
def server(tmp_path_factory):
    proc, url = start_server(tmp_path_factory.mktemp("server") / "streamlit.log")
    yield url
    proc.terminate()
    proc.wait(timeout=20)


@pytest.fixture(scope="module")
def page(server):
    ARTIFACTS.mkdir(exist_ok=True)
    with playwright.sync_playwright() as p:
        browser = p.chromium.launch(executable_path=BROWSER, args=["--no-sandbox"])
        pg = browser.new_page(viewport={"width": 1440, "height": 900})
        yield pg
        browser.close()


@pytest.fixture(autouse=True)
def keep_evidence(request, page):
    """On a failure, keep a screenshot of the page as it was, for the report."""
    yield
    report = getattr(request.node, "rep_call", None)
    if report is not None and report.failed:
        page.screenshot(path=ARTIFACTS / f"failure_{request.node.name}.png", full_page=True)
