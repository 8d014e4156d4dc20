"""Opening an aggregate analysis in the dashboard, in a real browser: the time from choosing the file to the
levels page drawn with its numbers.

    python -m benchmarks.bench_aggregate_browser                       # an aggregate of the bundled sample
    python -m benchmarks.bench_aggregate_browser --file year.cophe     # a given aggregate (cophe aggregate)
    python -m benchmarks.bench_aggregate_browser --file year.cophe --opens 5 --screens shots/

Starts ``streamlit run dashboard/app.py`` headless on a free port and, for each opening, a fresh browser
context of chromium-headless-shell at 1440×900: it loads the app (the sample, idle), chooses Source → Open a
saved analysis, gives the file to the uploader (``set_input_files``), and waits for the levels page to say
"N documents" for the file's N and for the script to be idle. The opening is timed from giving the file to
that state: the upload over 127.0.0.1, reading and checking the file, and drawing the first page. Prints
each opening, their median, the file's size, the server's resident memory after the openings, and the load.

Target (issue 13): opening a 10⁸-label aggregate ≤ 5 s. Prints figures and asserts nothing.
"""

from __future__ import annotations

import argparse
import os
import statistics
import tempfile
import time
from pathlib import Path

from tests.browser.helpers import BROWSER, IDLE, WAIT_MS, playwright, start_server

ROOT = Path(__file__).resolve().parents[1]


def sample_aggregate(folder: Path) -> Path:
    """An aggregate of the bundled ICD-9 sample's three runs."""
    from cophe_core import score_files
    from cophe_core.scale.aggregate import aggregate_scoring, write_aggregate

    sample = ROOT / "sample_data" / "icd9"
    runs = {r: sample / f"run_{r}.csv" for r in ("siblings", "overcoder", "conservative")}
    path = folder / "sample.cophe"
    write_aggregate(aggregate_scoring(score_files(sample / "gold.csv", runs)), path)
    return path


def rss_mb(pid: int) -> float:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    return float("nan")


def open_once(browser, url: str, path: Path, n_docs: int, shot: Path | None) -> float:
    context = browser.new_context(viewport={"width": 1440, "height": 900})
    page = context.new_page()
    try:
        page.goto(url)
        page.wait_for_selector("[data-testid=stTable]", timeout=WAIT_MS)
        page.wait_for_selector(IDLE, timeout=WAIT_MS)
        page.get_by_text("Open a saved analysis").click()
        page.wait_for_selector(
            "[data-testid=stMain] >> text=Open a file made with Save analysis", timeout=WAIT_MS
        )
        page.wait_for_selector(IDLE, timeout=WAIT_MS)
        uploader = page.locator("[data-testid=stSidebar] [data-testid=stFileUploader] input[type=file]")
        t0 = time.perf_counter()
        uploader.set_input_files(str(path))
        page.wait_for_selector(f"[data-testid=stMain] >> text={n_docs:,} documents", timeout=WAIT_MS)
        page.wait_for_selector("[data-testid=stMain] [data-testid=stDataFrame]", timeout=WAIT_MS)
        page.wait_for_selector(IDLE, timeout=WAIT_MS)
        seconds = time.perf_counter() - t0
        if shot is not None:
            page.screenshot(path=shot, full_page=False)
        return seconds
    finally:
        context.close()


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--file", type=Path, help="an aggregate analysis (default: one of the bundled sample)")
    ap.add_argument("--opens", type=int, default=3)
    ap.add_argument("--screens", type=Path, help="keep a 1440×900 screenshot of each opened page here")
    args = ap.parse_args()
    from cophe_core.scale.aggregate_reader import read_aggregate

    with tempfile.TemporaryDirectory() as tmp:
        path = args.file or sample_aggregate(Path(tmp))
        n_docs = read_aggregate(path).n_documents
        if args.screens:
            args.screens.mkdir(parents=True, exist_ok=True)
        proc, url = start_server(Path(tmp) / "streamlit.log")
        try:
            with playwright.sync_playwright() as p:
                browser = p.chromium.launch(executable_path=BROWSER, args=["--no-sandbox"])
                times = []
                for i in range(args.opens):
                    shot = args.screens / f"aggregate_{i}.png" if args.screens else None
                    times.append(open_once(browser, url, path, n_docs, shot))
                    print(f"opening {i + 1}: {times[-1]:.2f} s (load {os.getloadavg()[0]:.1f})")
                browser.close()
            print(
                f"file {path.name}: {path.stat().st_size / 2**20:.1f} MB, {n_docs:,} documents; median opening "
                f"{statistics.median(times):.2f} s (min {min(times):.2f}, max {max(times):.2f}); server resident "
                f"{rss_mb(proc.pid):.0f} MB; load {' '.join(f'{x:.1f}' for x in os.getloadavg())}"
            )
        finally:
            proc.terminate()
            proc.wait(timeout=20)


if __name__ == "__main__":
    main()
