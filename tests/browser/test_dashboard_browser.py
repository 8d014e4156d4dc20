"""The real thing: `streamlit run` driven by Playwright in Debian's chromium-headless-shell.

Loads the app, uploads a run, clicks a tree tile, checks the focused view and
the detail panel, and saves screenshots and timings to ``artifacts/``.
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

pytestmark = pytest.mark.browser
playwright = pytest.importorskip("playwright.sync_api")
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


@pytest.fixture(scope="module")
def page(server):
    ARTIFACTS.mkdir(exist_ok=True)
    with playwright.sync_playwright() as p:
        browser = p.chromium.launch(executable_path=BROWSER, args=["--no-sandbox"])
        pg = browser.new_page(viewport={"width": 1500, "height": 1000})
        yield pg
        browser.close()


def idle(pg, timeout: float = 60_000) -> None:
    pg.wait_for_timeout(150)  # let a rerun start before waiting for it to end
    pg.wait_for_selector(IDLE, timeout=timeout)


def timed(pg, action) -> float:
    t0 = time.perf_counter()
    action()
    idle(pg)
    return time.perf_counter() - t0


def tile(pg, text: str):
    """The clickable surface of the icicle tile whose label starts with ``text``."""
    return pg.locator("g.slice", has=pg.locator("text", has_text=text)).first.locator("path.surface")


def test_load_upload_click_and_drill(page, server):
    timings: dict[str, float] = {}
    t0 = time.perf_counter()
    page.goto(server)
    page.wait_for_selector(".js-plotly-plot", timeout=60_000)
    idle(page)
    timings["cold_start_to_first_complete_view_s"] = time.perf_counter() - t0
    assert page.get_by_text("Scores by level").first.is_visible()
    assert page.get_by_text("run overcoder predicts 42% more codes").first.is_visible()
    page.screenshot(path=ARTIFACTS / "01_levels_sample.png", full_page=True)

    # Change the highest level (a rerun of the levels view on cached scores)
    timings["change_level_s"] = timed(page, lambda: _choose(page, "Highest level", "e0"))
    assert page.get_by_text("levels up to e0").is_visible()
    timed(page, lambda: _choose(page, "Highest level", "block"))

    # Upload: the sample gold standard and one new run
    page.get_by_text("Upload files").click()
    idle(page)
    inputs = page.locator("[data-testid=stFileUploader] input[type=file]")
    inputs.nth(0).set_input_files(str(ROOT / "sample_data" / "icd9" / "gold.csv"))
    idle(page)
    mine = ARTIFACTS / "my_model.csv"
    shutil.copy(ROOT / "sample_data" / "icd9" / "run_conservative.csv", mine)
    inputs.nth(1).set_input_files([str(mine), str(ROOT / "sample_data" / "icd9" / "run_overcoder.csv")])
    idle(page)
    page.wait_for_selector("text=my_model", timeout=30_000)
    assert page.get_by_text("F1", exact=False).first.is_visible()
    page.screenshot(path=ARTIFACTS / "02_levels_uploaded.png", full_page=True)

    # The tree: click the hypertension block, then check the focused view and the detail panel
    page.get_by_role("link", name="Code-family tree").click()
    page.wait_for_selector(".js-plotly-plot g.slice", timeout=30_000)
    idle(page)
    page.screenshot(path=ARTIFACTS / "03_tree_root.png", full_page=True)
    timings["focus_block_s"] = timed(page, lambda: tile(page, "401-405").click(force=True))
    page.wait_for_selector("text=Inside 401-405 Hypertensive disease", timeout=20_000)
    timings["focus_category_s"] = timed(page, lambda: tile(page, "401 Essential").click(force=True))
    page.wait_for_selector("text=Documents behind 401 Essential hypertension", timeout=20_000)
    assert page.get_by_role("button", name="› 401-405 Hypertensive disease").is_visible()  # the path leads back
    assert page.get_by_text("The model codes too many in").is_visible()
    page.screenshot(path=ARTIFACTS / "04_tree_focus_401.png", full_page=True)

    # Change the run (cached): the focus stays
    timings["change_run_s"] = timed(page, lambda: _choose(page, "Run", "run_overcoder"))
    page.wait_for_selector("text=Documents behind 401 Essential hypertension", timeout=20_000)

    # Back up through the breadcrumb
    timed(page, lambda: page.get_by_role("button", name="All codes").click())
    page.wait_for_selector("text=Inside All codes", timeout=20_000)

    (ARTIFACTS / "browser_timings.json").write_text(json.dumps(timings, indent=1))
    print("\nbrowser timings:", json.dumps(timings))
    assert timings["cold_start_to_first_complete_view_s"] < 60  # reported, not a speed target


def test_document_and_compare_views_render(page, server):
    page.goto(server + "/document")
    page.wait_for_selector("text=Codes by family", timeout=60_000)
    idle(page)
    assert page.get_by_text("matched").first.is_visible()
    page.screenshot(path=ARTIFACTS / "05_document.png", full_page=True)
    page.goto(server + "/compare")
    page.wait_for_selector("text=Documents where the runs disagree most", timeout=60_000)
    idle(page)
    page.screenshot(path=ARTIFACTS / "06_compare.png", full_page=True)
    page.goto(server + "/metrics")
    page.wait_for_selector("text=Which metric rewards what", timeout=60_000)
    idle(page)
    page.screenshot(path=ARTIFACTS / "07_metrics.png", full_page=True)
    page.goto(server + "/threshold")
    page.wait_for_selector("text=Threshold-free metrics", timeout=60_000)
    idle(page)
    page.screenshot(path=ARTIFACTS / "08_threshold.png", full_page=True)


def _choose(pg, label: str, option: str) -> None:
    """Pick an option of a Streamlit selectbox by its label."""
    box = pg.get_by_label(label, exact=True)
    for _ in range(3):  # a first click may only move focus out of another widget
        box.click()
        if box.get_attribute("aria-expanded") == "true":
            break
        pg.wait_for_timeout(200)
    pg.get_by_role("option", name=option, exact=True).click()
