"""A saved analysis against its files uploaded as plain files, in the dashboard (issue 29, point 1's target:
"a file within the bounds costs no more than scoring its members uploaded as plain files").

    python -m benchmarks.bench_saved_browser               # 5 rounds
    python -m benchmarks.bench_saved_browser --rounds 9

Builds the files of :func:`benchmarks.bench_bombs.saved_within_bounds`: the sample's gold standard and a run,
each repeated 90 times under new document ids (26 MB and 24 MB), and the saved analysis of the two (9.8 MB).
Starts ``streamlit run dashboard/app.py`` headless on a free port and, with chromium-headless-shell, measures
in a fresh browser context (a new session) for each trial:

- (A) plain files: "Upload files", then the run and the gold standard set on their uploaders (the run first,
  as ``bench_browser``'s upload does), until the first complete view;
- (B) a saved analysis: "Open a saved analysis", then the .cophe set on its "Saved analysis" uploader, until
  the same view.

The first complete view is Scores by level showing the files' document count, its numbers, its table by level
and its levels chart drawn, and the script idle (as ``bench_browser``'s upload step waits). For each trial:
wall seconds from setting the first file until then, and the CPU seconds (user + system, all threads, from
``/proc/<pid>/stat``) the server process used over that interval: the upload's HTTP requests, hashing,
reading and scoring; then its CPU until it is quiet again (work left running in the background counted too).
The browser's CPU is not counted. The server is started through ``bench_browser``'s timing wrapper
(``--server-timing`` there), which also gives the script's runs in each trial and their thread's CPU: the rest
of the process's CPU is the server receiving the files and work in other threads. ``--only A`` (or ``B``)
runs one kind alone, to profile the server (``py-spy record --pid`` on the pid printed).

One round of each is run first and left out (the server's first upload imports and loads what later ones
find ready); then A and B alternate, their order swapped each round, so a change of load falls on both.
Closed sessions are dropped by the server a second after (``server.disconnectedSessionTTL``) so no earlier
trial's files stay in its memory. Prints the medians, the ratio B/A of the medians and the median of each
round's ratio, with the load average before and after. Asserts nothing.
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from benchmarks.bench_bombs import saved_within_bounds
from benchmarks.bench_browser import BROWSER, MARKS_JS, SEL, WAIT_MS, script_runs, settle, start_server

TICK = os.sysconf("SC_CLK_TCK")
VIEWPORT = {"width": 1440, "height": 900}
# the notice each source draws before a file is given
NOTICE = {
    "Upload files": SEL["upload_notice"],
    "Open a saved analysis": "[data-testid=stMain] >> text=Open a file made with Save analysis",
}
SAVED_UPLOADER = (
    "[data-testid=stSidebar] [data-testid=stFileUploader]:has-text('Saved analysis') input[type=file]"
)


def cpu_seconds(pid: int) -> float:
    """User + system CPU seconds of process ``pid`` so far, all its threads (``/proc/<pid>/stat`` fields 14
    and 15, after the command name, which may hold spaces)."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / TICK


def quiet(pid: int, window: float = 0.5, most: float = 0.02, limit: float = 30.0) -> None:
    """Wait until the server has used under ``most`` CPU seconds in ``window`` seconds (its background work
    done), ``limit`` seconds at most: a polling of its state, not a measure."""
    deadline = time.perf_counter() + limit
    before = cpu_seconds(pid)
    while time.perf_counter() < deadline:
        time.sleep(window)
        now = cpu_seconds(pid)
        if now - before < most:
            return
        before = now


def within_bounds(folder: Path) -> tuple[Path, Path, Path]:
    """The gold standard, the run and their saved analysis, as ``bench_bombs`` builds them."""
    saved_within_bounds(folder)
    return folder / "big_gold.csv", folder / "big_run_siblings.csv", folder / "within.cophe"


def n_documents(gold: Path) -> int:
    """The gold standard's documents (one ``doc_id,code`` row per code), as the page counts them."""
    with gold.open() as f:
        next(f)
        return len({line.split(",", 1)[0] for line in f})


def complete_view(n_docs: int) -> list[str]:
    """The selectors of the first complete view: the document count, numbers, table and levels chart."""
    return [
        SEL["upload_numbers"].format(n_docs=f"{n_docs:,}"),
        SEL["numbers"],
        SEL["levels_table"],
        SEL["levels_chart"],
    ]


def fresh_page(browser, url: str, source: str):
    """A new session on the app, switched to ``source`` (a sidebar radio option), idle."""
    context = browser.new_context(viewport=VIEWPORT)
    page = context.new_page()
    page.add_init_script(MARKS_JS)
    page.goto(url)
    settle(page, SEL["levels_chart"])  # the bundled sample, drawn
    page.get_by_text(source, exact=True).click()
    settle(page, NOTICE[source])
    return context, page


def plain(page, gold: Path, run: Path) -> None:
    """(A): the run, then (once the server has it: its name box) the gold standard."""
    inputs = page.locator(SEL["file_inputs"])
    inputs.nth(1).set_input_files(str(run))
    page.wait_for_selector(SEL["run_name_box"].format(file=run.name), timeout=WAIT_MS)
    inputs.nth(0).set_input_files(str(gold))


def saved(page, cophe: Path) -> None:
    """(B): the saved analysis on its uploader."""
    page.locator(SAVED_UPLOADER).set_input_files(str(cophe))


def trial(
    browser, url: str, pid: int, runs: Path, kind: str, files: tuple[Path, Path, Path], n_docs: int
) -> dict:
    """One upload in a fresh session: wall and server CPU seconds from the first file set to the view."""
    gold, run, cophe = files
    source = "Upload files" if kind == "A" else "Open a saved analysis"
    context, page = fresh_page(browser, url, source)
    try:
        quiet(pid)
        load, c0, t0, w0 = os.getloadavg()[0], cpu_seconds(pid), time.perf_counter(), time.time()
        plain(page, gold, run) if kind == "A" else saved(page, cophe)
        for state in complete_view(n_docs):
            page.wait_for_selector(state, timeout=WAIT_MS)
        page.wait_for_selector(SEL["idle"], timeout=WAIT_MS)
        wall, cpu = time.perf_counter() - t0, cpu_seconds(pid) - c0
        quiet(pid)  # work the upload left running in the background (parsed ahead, cached ahead) counts too
        settled = cpu_seconds(pid) - c0
    finally:
        context.close()
    mine = [cpu for start, _, _, cpu in script_runs(runs) if start >= w0 - 0.01]
    return {
        "kind": kind,
        "wall_s": wall,
        "cpu_s": cpu,
        "cpu_quiet_s": settled,
        "script_runs": len(mine),
        "script_cpu_s": sum(mine),
        "load": load,
    }


def report(rows: list[dict], loads: tuple[str, str], sizes: dict[str, float]) -> None:
    a = [r for r in rows if r["kind"] == "A"]
    b = [r for r in rows if r["kind"] == "B"]
    print(f"\nload before: {loads[0]}\nload after:  {loads[1]}")
    print(
        f"files: gold {sizes['gold']:.1f} MB + run {sizes['run']:.1f} MB as plain files; "
        f"saved analysis {sizes['cophe']:.1f} MB"
    )
    print(
        f"\n{'':27} {'wall s':>7} {'CPU to view':>12} {'CPU to quiet':>13} {'script runs':>12} {'their CPU':>10}"
        f"   (medians of {len(a)})"
    )
    keys = ("wall_s", "cpu_s", "cpu_quiet_s", "script_runs", "script_cpu_s")
    for label, part in (("(A) plain files uploaded", a), ("(B) saved analysis opened", b)):
        med = {k: statistics.median(r[k] for r in part) for k in keys}
        print(
            f"{label:27} {med['wall_s']:7.2f} {med['cpu_s']:12.2f} {med['cpu_quiet_s']:13.2f} "
            f"{med['script_runs']:12g} {med['script_cpu_s']:10.2f}"
        )
    for what, words in (("wall_s", "wall"), ("cpu_s", "CPU to view"), ("cpu_quiet_s", "CPU to quiet")):
        med = statistics.median(r[what] for r in b) / statistics.median(r[what] for r in a)
        per_round = statistics.median(rb[what] / ra[what] for ra, rb in zip(a, b))
        print(f"B/A {words:13}: {med:.3f} (ratio of medians), {per_round:.3f} (median of each round's ratio)")
    trial_loads = ", ".join(f"{r['load']:.2f}" for r in rows)
    print(
        "\nwall: from setting the first file until the view is drawn and idle (a shared machine's load "
        "inflates it). CPU: user + system seconds\nof the streamlit process (all threads) from then until the "
        "view, and until the server is quiet again (work left in the\nbackground included). Script runs: the script's runs started from then (their\nthread's CPU: the rest is the server receiving the files and work in other threads). Load (1 min) "
        f"at each trial, A then B: {trial_loads}"
    )


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--rounds", type=int, default=5, help="rounds of (A, B), after one left out (default 5)")
    ap.add_argument(
        "--data", type=Path, metavar="DIR", help="folder for the files (default: a temporary one)"
    )
    ap.add_argument("--log", type=Path, help="keep the streamlit log here")
    ap.add_argument(
        "--only",
        choices=["A", "B"],
        help="run only this kind, to profile the server (its pid is printed): py-spy record --pid PID",
    )
    args = ap.parse_args()

    from playwright.sync_api import sync_playwright

    if not Path(BROWSER).exists():
        sys.exit(f"{BROWSER} is not installed (apt-get install chromium-headless-shell)")
    tmp = Path(tempfile.mkdtemp(prefix="cophe_bench_saved_browser_"))
    folder = args.data or tmp
    folder.mkdir(parents=True, exist_ok=True)
    files = within_bounds(folder)
    n_docs = n_documents(files[0])
    sizes = {k: p.stat().st_size / 1e6 for k, p in zip(("gold", "run", "cophe"), files)}
    loads = [subprocess.run(["uptime"], capture_output=True, text=True).stdout.strip()]
    os.environ["STREAMLIT_SERVER_DISCONNECTED_SESSION_TTL"] = "1"  # a closed trial's session is dropped
    runs = tmp / "script_runs.txt"  # each script run's time and its thread's CPU (bench_browser's wrapper)
    proc, url = start_server(args.log or tmp / "streamlit.log", runs)
    print(f"server pid {proc.pid} at {url}", flush=True)
    rows: list[dict] = []
    try:
        with sync_playwright() as p:
            browser = p.chromium.launch(executable_path=BROWSER, args=["--no-sandbox"])
            kinds = args.only or "AB"
            for kind in kinds:  # left out: the server's first upload of each kind
                warm = trial(browser, url, proc.pid, runs, kind, files, n_docs)
                print(f"warm-up {kind}: {warm}", flush=True)
            for i in range(args.rounds):
                for kind in kinds if i % 2 == 0 else kinds[::-1]:
                    row = trial(browser, url, proc.pid, runs, kind, files, n_docs)
                    print(
                        f"round {i + 1} {kind}: wall {row['wall_s']:.2f} s, server CPU {row['cpu_s']:.2f} s "
                        f"({row['cpu_quiet_s']:.2f} s to quiet; {row['script_runs']} script runs, "
                        f"{row['script_cpu_s']:.2f} s CPU in them), "
                        f"load {row['load']:.2f}",
                        flush=True,
                    )
                    rows.append(row)
            browser.close()
    finally:
        proc.terminate()
        try:
            proc.wait(timeout=20)
        except subprocess.TimeoutExpired:
            proc.kill()
    loads.append(subprocess.run(["uptime"], capture_output=True, text=True).stdout.strip())
    rows.sort(key=lambda r: r["kind"])  # stable: each kind in its rounds' order
    if not args.only:
        report(rows, (loads[0], loads[1]), sizes)
    shutil.rmtree(tmp, ignore_errors=True)  # the files unless --data, the log unless --log, the runs' times


if __name__ == "__main__":
    main()
