"""The real thing: `streamlit run` driven by Playwright in Debian's chromium-headless-shell.

Loads the app, uploads a run, clicks a tree tile, checks the focused view and
the detail panel, and saves screenshots and timings to ``artifacts/``.

Every step waits for a state, never for a time: after an action, for the element that only its rerun draws,
then for the script to be idle. So the test does not depend on how busy the machine is.
"""

from __future__ import annotations

import json
import os
import shutil
import socket
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
BROWSER = "/usr/bin/chromium-headless-shell"
ARTIFACTS = ROOT / "artifacts"
IDLE = "[data-testid=stApp][data-test-script-state=notRunning]"
WAIT_MS = 90_000  # an upper bound for one state on a loaded 2-core machine, not an expected duration

pytestmark = pytest.mark.browser
playwright = pytest.importorskip("playwright.sync_api")
expect = playwright.expect
expect.set_options(timeout=WAIT_MS)
if not Path(BROWSER).exists():  # scripts/test.sh installs it; a bare `pytest` may not have it
    pytest.skip(f"{BROWSER} is not installed (apt-get install chromium-headless-shell)", allow_module_level=True)


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.fixture(scope="module")
def server(tmp_path_factory):
    port = _free_port()
    with open(tmp_path_factory.mktemp("server") / "streamlit.log", "w") as log:
        proc = subprocess.Popen(
            [sys.executable, "-m", "streamlit", "run", "dashboard/app.py", "--server.headless", "true",
             "--server.address", "127.0.0.1", "--server.port", str(port)],
            cwd=ROOT, stdout=log, stderr=subprocess.STDOUT, env={**os.environ, "PYTHONUNBUFFERED": "1"},
        )
        url = f"http://127.0.0.1:{port}"
        deadline = time.time() + 60
        while time.time() < deadline:
            try:
                if urllib.request.urlopen(f"{url}/_stcore/health", timeout=2).read() == b"ok":
                    break
            except OSError:
                time.sleep(0.2)
        else:
            proc.kill()
            raise RuntimeError("streamlit did not become healthy in 60 s")
        yield url
        proc.terminate()
        proc.wait(timeout=20)


@pytest.fixture(autouse=True)
def keep_evidence(request, page):
    """On a failure, keep a screenshot of the page as it was, for the report."""
    yield
    report = getattr(request.node, "rep_call", None)
    if report is not None and report.failed:
        page.screenshot(path=ARTIFACTS / f"failure_{request.node.name}.png", full_page=True)


@pytest.fixture(scope="module")
def page(server):
    ARTIFACTS.mkdir(exist_ok=True)
    with playwright.sync_playwright() as p:
        browser = p.chromium.launch(executable_path=BROWSER, args=["--no-sandbox"])
        pg = browser.new_page(viewport={"width": 1440, "height": 900})
        yield pg
        browser.close()


def settle(pg, state: str) -> None:
    """Wait until ``state`` (a selector only the action's rerun draws) is present, then for the script to be
    idle, so that the whole rerun has been drawn."""
    pg.wait_for_selector(state, timeout=WAIT_MS)
    pg.wait_for_selector(IDLE, timeout=WAIT_MS)


def timed(pg, action, state: str) -> float:
    """Seconds from ``action`` until its rerun has drawn ``state`` and finished."""
    t0 = time.perf_counter()
    action()
    settle(pg, state)
    return time.perf_counter() - t0


def tile(pg, text: str):
    """The clickable surface of the icicle tile whose label starts with ``text``."""
    return pg.locator("g.slice", has=pg.locator("text", has_text=text)).first.locator("path.surface")


def test_load_upload_click_and_drill(page, server):
    timings: dict[str, float] = {}
    t0 = time.perf_counter()
    page.goto(server)
    settle(page, ".js-plotly-plot")
    timings["cold_start_to_first_complete_view_s"] = time.perf_counter() - t0
    expect(page.get_by_text("Scores by level").first).to_be_visible()
    expect(page.get_by_text("run overcoder predicts 42% more codes").first).to_be_visible()
    page.screenshot(path=ARTIFACTS / "01_levels_sample.png", full_page=True)

    # Change the highest level (a rerun of the levels view on cached scores)
    timings["change_level_s"] = timed(page, _choose(page, "Highest level", "e0").click, "text=levels up to e0")
    timed(page, _choose(page, "Highest level", "block").click, "text=levels up to block")

    # Upload: the sample gold standard and two runs, one of them renamed by its file name
    timed(page, lambda: page.get_by_text("Upload files").click(), "text=Upload a gold standard")
    inputs = page.locator("[data-testid=stFileUploader] input[type=file]")
    expect(inputs).to_have_count(2)
    # The runs first: their rerun draws a name box per run, a state that says the upload reached the server
    # (the gold upload's rerun changes nothing visible, and a file set while a rerun redraws its uploader
    # could be lost).
    mine = ARTIFACTS / "my_model.csv"
    shutil.copy(ROOT / "sample_data" / "icd9" / "run_conservative.csv", mine)
    inputs.nth(1).set_input_files([str(mine), str(ROOT / "sample_data" / "icd9" / "run_overcoder.csv")])
    settle(page, "[data-testid=stSidebar] >> text=Name for my_model.csv")
    inputs.nth(0).set_input_files(str(ROOT / "sample_data" / "icd9" / "gold.csv"))
    settle(page, "[data-testid=stMain] >> text=my_model")
    expect(page.get_by_text("Upload a gold standard")).to_have_count(0)
    expect(page.locator("[data-testid=stMain]").get_by_text("F1", exact=False).first).to_be_visible()
    page.screenshot(path=ARTIFACTS / "02_levels_uploaded.png", full_page=True)

    # The tree: click the hypertension block, then check the focused view and the detail panel
    timed(page, lambda: page.get_by_role("link", name="Code-family tree").click(), ".js-plotly-plot g.slice")
    page.screenshot(path=ARTIFACTS / "03_tree_root.png", full_page=True)
    timings["focus_block_s"] = timed(page, lambda: tile(page, "401-405").click(force=True),
                                     "text=Inside 401-405 Hypertensive disease")
    timings["focus_category_s"] = timed(page, lambda: tile(page, "401 Essential").click(force=True),
                                        "text=Documents behind 401 Essential hypertension")
    expect(page.get_by_role("button", name="› 401-405 Hypertensive disease")).to_be_visible()  # the way back
    expect(page.get_by_text("The model codes too many in")).to_be_visible()
    page.screenshot(path=ARTIFACTS / "04_tree_focus_401.png", full_page=True)

    # Change the run (cached): the focus stays
    timings["change_run_s"] = timed(page, _choose(page, "Run", "run_overcoder").click,
                                    "[data-testid=stMain] >> text=Run run_overcoder")
    settle(page, "text=Documents behind 401 Essential hypertension")

    # Back up through the breadcrumb
    timed(page, lambda: page.get_by_role("button", name="All codes").click(), "text=Inside All codes")

    (ARTIFACTS / "browser_timings.json").write_text(json.dumps(timings, indent=1))
    print("\nbrowser timings:", json.dumps(timings))


def test_document_and_compare_views_render(page, server):
    for path, state, shot in [
        ("/document", "text=Codes by family", "05_document.png"),
        ("/compare", "text=Documents where the runs disagree most", "06_compare.png"),
        ("/metrics", "text=Which metric rewards what", "07_metrics.png"),
        ("/threshold", "text=Threshold-free metrics", "08_threshold.png"),
    ]:
        page.goto(server + path)
        settle(page, state)
        page.screenshot(path=ARTIFACTS / shot, full_page=True)
    page.goto(server + "/document")
    settle(page, "text=Codes by family")
    expect(page.get_by_text("matched").first).to_be_visible()


def _choose(pg, label: str, option: str):
    """Open the Streamlit selectbox labelled ``label`` and return the ``option`` to click (the timed part)."""
    box = pg.get_by_label(label, exact=True)
    listbox = pg.get_by_role("listbox")
    for _ in range(3):  # a first click may only move focus out of another widget
        box.click()
        try:
            listbox.wait_for(state="visible", timeout=5_000)
            break
        except playwright.TimeoutError:
            continue
    return pg.get_by_role("option", name=option, exact=True)
