"""Shared by the browser tests: the real `streamlit run` server, a 1440×900 page in Debian's
chromium-headless-shell, and waiting for states (never for times)."""

from __future__ import annotations

import os
import re
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

playwright = pytest.importorskip("playwright.sync_api")
expect = playwright.expect
expect.set_options(timeout=WAIT_MS)
if not Path(BROWSER).exists():  # scripts/test.sh installs it; a bare `pytest` may not have it
    pytest.skip(
        f"{BROWSER} is not installed (apt-get install chromium-headless-shell)", allow_module_level=True
    )

# Each page's link in the navigation, and a selector only its drawing shows (what settle() waits for).
PAGE_STATES = {
    "Scores by level": "[data-testid=stTable]",
    "Code-family tree": ".js-plotly-plot",
    "Compare runs": "text=Documents where the runs disagree most",
    "Slices": "[data-testid=stMain] >> text=Slices",
    "One document": "[data-testid=stMain] >> text=One document",
    "More metrics": "[data-testid=stMain] >> text=More metrics",
    # the curve, or (no run holds scores) the note saying what to upload
    "Threshold": "[data-testid=stMain] :is(:text('F1 against the threshold (test set)'), "
    ":text('No run holds probabilities'))",
    "Export": "text=Tables (CSV)",
}

# The tree's tiles: a bar each (plotting.tree_figure), its text a bar's text.
TILES = ".js-plotly-plot g.trace.bars g.point"
# Tiles whose label is drawn: Plotly hides the text of a tile too small for it (uniformtext "hide").
LABELLED_TILES = """() => [...document.querySelectorAll('.js-plotly-plot g.trace.bars g.point')].filter(g => {
    const t = g.querySelector('text.bartext');
    return t && t.textContent.trim() && t.getBoundingClientRect().height > 0; }).length"""


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def start_server(log_path: Path) -> tuple[subprocess.Popen, str]:
    """`streamlit run dashboard/app.py` on a free port, once healthy."""
    port = free_port()
    log = open(log_path, "w")  # noqa: SIM115 (kept open for the server's life)
    proc = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "streamlit",
            "run",
            "dashboard/app.py",
            "--server.headless",
            "true",
            "--server.address",
            "127.0.0.1",
            "--server.port",
            str(port),
        ],
        cwd=ROOT,
        stdout=log,
        stderr=subprocess.STDOUT,
        env={**os.environ, "PYTHONUNBUFFERED": "1"},
    )
    url = f"http://127.0.0.1:{port}"
    deadline = time.time() + 60
    while time.time() < deadline:
        try:
            if urllib.request.urlopen(f"{url}/_stcore/health", timeout=2).read() == b"ok":
                return proc, url
        except OSError:
            time.sleep(0.2)
    proc.kill()
    raise RuntimeError("streamlit did not become healthy in 60 s")


def settle(pg, state: str) -> None:
    """Wait until ``state`` (a selector only the action's rerun draws) is present, then for the script to be
    idle, so that the whole rerun has been drawn."""
    pg.wait_for_selector(state, timeout=WAIT_MS)
    pg.wait_for_selector(IDLE, timeout=WAIT_MS)


def asking(pg, label: str):
    """The pill that asks for a file to be made (downloads.prepared), by the start of its words: a choice the
    browser sends with every rerun, drawn as a pill (a radio of one option), not a plain button."""
    return pg.locator("[data-testid=stButtonGroup] button").filter(
        has_text=re.compile("^" + re.escape(label))
    )


def timed(pg, action, state: str) -> float:
    """Seconds from ``action`` until its rerun has drawn ``state`` and finished."""
    t0 = time.perf_counter()
    action()
    settle(pg, state)
    return time.perf_counter() - t0


def tile(pg, text: str):
    """The clickable surface of the tree's tile whose label starts with ``text``."""
    # from the start: "Other" is also inside titles ("420-429 Other forms of heart disease")
    label = pg.locator("text", has_text=re.compile("^" + re.escape(text)))
    return pg.locator(TILES, has=label).first.locator("path")


def click_row(pg, table, row: int = 0) -> None:
    """Select a row of a Streamlit dataframe (a canvas grid): click its selection cell."""
    table.scroll_into_view_if_needed()
    box = table.bounding_box()
    pg.mouse.click(box["x"] + 16, box["y"] + 35 * (row + 1) + 17)


def choose(pg, label: str, option: str):
    """Open the Streamlit selectbox labelled ``label`` and return the ``option`` to click (the timed part)."""
    box = pg.get_by_label(label, exact=True)
    listbox = pg.get_by_role("listbox")
    wanted = pg.get_by_role("option", name=option, exact=True)
    # A first click may only move focus out of another widget, and a rerun under way may redraw the box
    # and close its list: open it until the option itself is shown.
    for _ in range(4):
        box.click()
        try:
            listbox.wait_for(state="visible", timeout=5_000)
            wanted.wait_for(state="visible", timeout=5_000)
            break
        except playwright.TimeoutError:
            pg.keyboard.press("Escape")  # a list left open would take the next click
            continue
    return wanted
