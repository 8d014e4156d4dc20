"""Refresh docs/tree.png, the README's screenshot: the sample's over-coding run, focused on 428, at 1440 px.

python scripts/readme_screenshot.py   (needs chromium-headless-shell and playwright)
"""

from __future__ import annotations

import subprocess
import sys
import time
import urllib.request
from pathlib import Path

from playwright.sync_api import sync_playwright

ROOT = Path(__file__).resolve().parents[1]
PORT = 8597
IDLE = "[data-testid=stApp][data-test-script-state=notRunning]"


def main() -> None:
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
            str(PORT),
        ],
        cwd=ROOT,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        for _ in range(100):
            try:
                urllib.request.urlopen(f"http://127.0.0.1:{PORT}/_stcore/health", timeout=1)
                break
            except OSError:
                time.sleep(0.2)
        with sync_playwright() as p:
            browser = p.chromium.launch(
                executable_path="/usr/bin/chromium-headless-shell", args=["--no-sandbox"]
            )
            page = browser.new_page(viewport={"width": 1440, "height": 1500})
            # the view lives in the URL: the over-coding run's tree, focused on 428 Heart failure
            page.goto(f"http://127.0.0.1:{PORT}/tree?data=icd9&run=overcoder&focus=428")
            page.wait_for_selector("text=Documents behind 428 Heart failure", timeout=60_000)
            page.wait_for_selector(IDLE)
            page.wait_for_selector(".js-plotly-plot g.trace.bars g.point")  # the tree's tiles
            page.wait_for_function("() => !document.querySelector('[data-testid=stSkeleton]')")
            page.screenshot(path=ROOT / "docs" / "tree.png")
            browser.close()
    finally:
        proc.terminate()


if __name__ == "__main__":
    main()
