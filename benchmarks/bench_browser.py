"""Browser benchmark: the dashboard in a real browser on a MIMIC-III-full-sized upload.

    python -m benchmarks.bench_browser                         # print the figures
    python -m benchmarks.bench_browser --json timings.json     # and write them
    python -m benchmarks.bench_browser --keep-screens shots/   # and a screenshot after each step
    python -m benchmarks.bench_browser --server-timing         # and the script's run time in the server

Starts ``streamlit run dashboard/app.py`` headless on a free port, opens
chromium-headless-shell at 1440×900 and measures, on a fresh server:

- the app shell with the bundled sample (first visit, cold server) until its
  first metric, chart and table are drawn and the script is idle;
- the first complete view of an upload: switching the source to "Upload files",
  uploading two runs and a scores file (one ``set_input_files``), then the gold
  standard, until Scores by level shows the upload's numbers, its table by level
  and its chart of the levels (drawn: the chart's canvas or SVG marks) and is idle;
- then the median, min and max of five for each interaction: the "Highest
  level" selectbox, the sidebar "Run" selectbox (on the tree page, where the run
  shows), focusing a family by clicking the largest tile of the tree and going
  back through the "All codes" breadcrumb, opening the ranked panel "Where
  this run goes wrong", and focusing the tree on its first family (the first
  code above the list "Most extra codes").

The upload is written by ``benchmarks/mimic_upload.py``: 3,372 documents, about
15.9 ICD-9 codes each, in CAML's ``test_full.csv`` shape (no patient text).

Every step waits for a state, never for a time: after an action, for a selector
that only the new state draws (all in :data:`SEL`), then for the script to be
idle. Each timing is split, from marks a MutationObserver takes in the page, into
the time until the script starts (the event reaching the server), the time it
runs (as the page sees it), and the time after it ends until the step's state is
drawn (chart rendering and the like). With ``--server-timing`` the server is
started through a small wrapper that also times each script run inside the
server, which separates the rerun from the browser's work during it, and notes
its CPU time (the script's thread), which a busy machine does not inflate.

Each step's load average (1 minute) is noted before and after it: on a shared
machine, a median is comparable with another only at a like load.

Targets are reported, not tested (issues 26 and 28, on a quiet machine): first
complete view ≤ 3 s with the levels chart drawn, each interaction's median
≤ 0.5 s. Asserts nothing; exits 0 unless the server or the browser fails.
"""

from __future__ import annotations

import argparse
import html
import json
import os
import platform
import re
import shutil
import socket
import statistics
import subprocess
import sys
import tempfile
import time
import urllib.request
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
BROWSER = "/usr/bin/chromium-headless-shell"
WAIT_MS = 90_000  # an upper bound for one state on a loaded machine, not an expected duration
REPEATS = 5
TARGET_FIRST_VIEW_S = 3.0
TARGET_INTERACTION_S = 0.5

# Every selector the benchmark waits for or acts on. "{…}" fields are filled in per step.
SEL = {
    "idle": "[data-testid=stApp][data-test-script-state=notRunning]",
    "main": "[data-testid=stMain]",
    "sidebar": "[data-testid=stSidebar]",
    # the levels page: numbers drawn (metric cards or a table, whichever the page uses) and the chart
    "numbers": "[data-testid=stMain] :is([data-testid=stMetric], [data-testid=stTable], [data-testid=stDataFrame], "
    "[data-testid=stMarkdown] table)",
    "chart": "[data-testid=stMain] .js-plotly-plot",
    # the levels page's chart of the levels (Vega-Lite), drawn: vega-embed adds its canvas (or SVG marks) when
    # it renders the view
    "levels_chart": "[data-testid=stMain] [data-testid=stVegaLiteChart] :is(canvas, svg.marks)",
    # the levels page's table of every measure and level (its chart is drawn on request)
    "levels_table": "[data-testid=stMain] [data-testid=stDataFrame]",
    # the upload
    "upload_radio": "Upload files",  # label of the Source radio option
    "upload_notice": "[data-testid=stMain] >> text=Upload a gold standard",
    "file_inputs": "[data-testid=stSidebar] [data-testid=stFileUploader] input[type=file]",
    "run_name_box": "[data-testid=stSidebar] [data-testid=stTextInput]:has-text('{file}')",  # a run's name box
    "upload_numbers": "[data-testid=stMain] >> text={n_docs} documents",
    # sidebar selectboxes (labels) and the states they draw
    "level_box": "Highest level",
    "level_caption": "[data-testid=stMain] [data-testid=stCaptionContainer]",  # the caption that changes …
    "level_caption_has": "levels up to",  # … the one holding this text
    "run_box": "Run",
    "run_done": "[data-testid=stMain] >> text=run {run}",  # the tree's heading names the run
    # the tree page
    "tree_link": "Code-family tree",  # the sidebar navigation link
    "tree_drawn": "[data-testid=stMain] .js-plotly-plot g.trace.bars g.point",
    "tiles": "[data-testid=stMain] .js-plotly-plot g.trace.bars g.point",  # a bar a tile (tree_figure)
    "focused": "[data-testid=stMain] button:has-text('› {code} ')",  # the breadcrumb only a focus draws
    "root_button": "All codes",
    "at_root": "[data-testid=stMain] >> text=Inside all codes",  # the children table's heading at the root
    # the ranked panel: an expander with this title, and its tables
    "ranked_title": "Where this run goes wrong",
    "ranked_expander": "[data-testid=stExpander]:has-text('Where this run goes wrong')",
    "ranked_summary": "summary",
    "ranked_table": "[data-testid=stDataFrame], [data-testid=stTable], table",
    # the first code above the list "Most extra codes" (its pills: a stable container key per list)
    "ranked_first": "[class*='st-key-ranked_rank_fp_'] [role=radiogroup] [role=radio]",
    "focus_detail": "[data-testid=stMain] >> text=Documents behind",  # only a focused family draws it
}

# Records every change of the script state with performance.now(), from the first paint on.
MARKS_JS = """
window.__benchMarks = [];
new MutationObserver((muts) => {
  for (const m of muts) {
    if (m.attributeName === 'data-test-script-state') {
      window.__benchMarks.push({t: performance.now(), s: m.target.getAttribute('data-test-script-state')});
    }
  }
}).observe(document, {attributes: true, subtree: true, attributeFilter: ['data-test-script-state']});
"""

# Milestones of the first visit, in seconds from the navigation: the page's own loading, then the script.
SHELL_PHASES_JS = """() => {
  const nav = performance.getEntriesByType('navigation')[0];
  const marks = window.__benchMarks;
  const run = marks.find((m) => m.s === 'running');
  const idle = marks.filter((m) => m.s === 'notRunning').pop();
  const s = (ms) => (ms === undefined ? null : Math.round(ms) / 1000);
  return {html_received: s(nav.responseEnd), dom_content_loaded: s(nav.domContentLoadedEventEnd),
          load_event: s(nav.loadEventEnd), script_started: s(run && run.t), script_idle: s(idle && idle.t)};
}"""

# The tiles of the tree with their plotly id, label and drawn area (the largest first).
TILES_JS = """
(els) => els.map((el) => {
  const r = el.getBoundingClientRect();
  const d = el.__data__;
  const t = el.querySelector('text.bartext');
  return {id: d && d.id !== undefined ? String(d.id) : '', label: t ? t.textContent : '', area: r.width * r.height};
}).sort((a, b) => b.area - a.area)
"""


# -- the server and the page -------------------------------------------------------------------


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


# With --server-timing the server is started through this instead of ``-m streamlit``: it times each script
# run (ScriptRunner._run_script, reruns it requests included) into the file $COPHE_BENCH_RUNS, one
# "start duration session cpu" line (wall-clock seconds, the session's id, the script thread's CPU seconds) per
# run. The CPU time is what a run costs whatever the load: on a busy machine the duration is mostly waiting.
SERVER_TIMING = """
import os, sys, time
from streamlit.runtime.scriptrunner import script_runner as sr
from streamlit.web.cli import main
plain = sr.ScriptRunner._run_script
def timed(self, rerun_data):
    start, t0, c0 = time.time(), time.perf_counter(), time.thread_time()
    try:
        return plain(self, rerun_data)
    finally:
        with open(os.environ["COPHE_BENCH_RUNS"], "a") as f:
            f.write(f"{start} {time.perf_counter() - t0} {self._session_id} {time.thread_time() - c0}\\n")
sr.ScriptRunner._run_script = timed
sys.exit(main(prog_name="streamlit"))
"""


def script_runs(runs_path: Path) -> list[tuple[float, float, str, float]]:
    """The server's script runs written through :data:`SERVER_TIMING`: (wall-clock start, seconds, session,
    CPU seconds of the script's thread)."""
    rows = [line.split() for line in runs_path.read_text().splitlines()] if runs_path.exists() else []
    return [(float(start), float(seconds), session, float(cpu)) for start, seconds, session, cpu in rows]


def start_server(log_path: Path, runs_path: Path | None = None) -> tuple[subprocess.Popen, str]:
    port = free_port()
    log = open(log_path, "w")  # noqa: SIM115 - closed with the process
    start = ["-c", SERVER_TIMING] if runs_path else ["-m", "streamlit"]
    env = {
        **os.environ,
        "PYTHONUNBUFFERED": "1",
        **({"COPHE_BENCH_RUNS": str(runs_path)} if runs_path else {}),
    }
    proc = subprocess.Popen(
        [
            sys.executable,
            *start,
            "run",
            "dashboard/app.py",
            "--server.headless",
            "true",
            "--server.address",
            "127.0.0.1",
            "--server.port",
            str(port),
            "--browser.gatherUsageStats",
            "false",
        ],
        cwd=ROOT,
        stdout=log,
        stderr=subprocess.STDOUT,
        env=env,
    )
    url = f"http://127.0.0.1:{port}"
    deadline = time.time() + 60
    while time.time() < deadline:
        if proc.poll() is not None:
            break
        try:
            if urllib.request.urlopen(f"{url}/_stcore/health", timeout=2).read() == b"ok":
                return proc, url
        except OSError:
            time.sleep(0.2)  # polling the health endpoint, not a measure
    proc.kill()
    raise RuntimeError(f"streamlit did not become healthy in 60 s; its log:\n{log_path.read_text()[-3000:]}")


def settle(page, state: str) -> None:
    """Wait until ``state`` (a selector only the action's rerun draws) is present, then for the script to
    be idle, so that the whole rerun has been drawn."""
    page.wait_for_selector(state, timeout=WAIT_MS)
    page.wait_for_selector(SEL["idle"], timeout=WAIT_MS)


def _median(values: list) -> float | None:
    known = [v for v in values if v is not None]
    return statistics.median(known) if known else None


class Bench:
    """The page, the figures measured on it, and the screenshots."""

    def __init__(self, page, screens: Path | None, runs_path: Path | None = None):
        self.page = page
        self.screens = screens
        self.runs_path = runs_path
        self.figures: dict[str, dict] = {}
        self.shot_no = 0

    def shot(self, name: str) -> None:
        if self.screens is not None:
            self.shot_no += 1
            self.page.screenshot(path=self.screens / f"{self.shot_no:02d}_{name}.png", full_page=True)

    def timed(self, action, *states) -> dict:
        """Seconds from ``action`` until every one of ``states`` (a selector, or a function that waits) is
        present and the script is idle, with the time the script was running in between (from the page's
        marks)."""
        b0 = self.page.evaluate("performance.now()")
        w0, t0 = time.time(), time.perf_counter()
        action()
        reached = [time.perf_counter() - t0]  # when the action returned, then each state in turn
        for state in states:
            if callable(state):
                state()
            else:
                self.page.wait_for_selector(state, timeout=WAIT_MS)
            reached.append(time.perf_counter() - t0)
        self.page.wait_for_selector(SEL["idle"], timeout=WAIT_MS)
        total = time.perf_counter() - t0
        return {"s": total, "reached_s": reached, **self.running_since(b0), **self.server_since(w0)}

    def server_since(self, w0: float) -> dict:
        """Seconds the server spent running the script in runs started since wall-clock ``w0``, and the CPU
        seconds of those runs (with --server-timing)."""
        if self.runs_path is None:
            return {"server_s": None, "server_cpu_s": None}
        runs = [(d, cpu) for start, d, _, cpu in script_runs(self.runs_path) if start >= w0 - 0.01]
        return {"server_s": sum(d for d, _ in runs), "server_cpu_s": sum(cpu for _, cpu in runs)}

    def running_since(self, b0: float) -> dict:
        """Since browser time ``b0``: the time the script was running and its number of runs, the time until
        the first run started (the event reaching the server), and from the last run's end until now (the
        browser drawing what the run sent, and this process noticing)."""
        marks, now = self.page.evaluate(
            "(b0) => [window.__benchMarks.filter((m) => m.t >= b0), performance.now()]", b0
        )
        running, runs, started, first, last_idle = 0.0, 0, None, None, None
        for m in marks:
            busy = m["s"] != "notRunning"
            if busy and started is None:
                started, runs = m["t"], runs + 1
                first = m["t"] if first is None else first
            elif not busy and started is not None:
                running += m["t"] - started
                started, last_idle = None, m["t"]
        if started is not None:
            running += now - started
        return {
            "running_s": running / 1000,
            "runs": runs,
            "to_run_s": None if first is None else (first - b0) / 1000,
            "after_run_s": None if last_idle is None or started is not None else (now - last_idle) / 1000,
        }

    def record(self, name: str, samples: list[dict], target: float | None, what: str) -> None:
        secs = [x["s"] for x in samples]
        self.figures[name] = {
            "what": what,
            "n": len(secs),
            "median_s": statistics.median(secs),
            "min_s": min(secs),
            "max_s": max(secs),
            "running_median_s": statistics.median(x["running_s"] for x in samples),
            "runs_per_action": max(x["runs"] for x in samples),
            "samples_s": secs,
            "running_s": [x["running_s"] for x in samples],
            "to_run_median_s": _median([x.get("to_run_s") for x in samples]),
            "after_run_median_s": _median([x.get("after_run_s") for x in samples]),
            "server_median_s": _median([x.get("server_s") for x in samples]),
            "server_cpu_median_s": _median([x.get("server_cpu_s") for x in samples]),
            "target_s": target,
            "met": None if target is None else statistics.median(secs) <= target,
        }

    def fail(self, name: str, what: str, error: Exception) -> None:
        self.figures[name] = {"what": what, "error": f"{type(error).__name__}: {str(error).splitlines()[0]}"}
        print(f"  {name}: did not reach its state ({self.figures[name]['error']})")
        self.shot(f"failed_{name}")


def open_select(page, label: str):
    """Open the Streamlit selectbox labelled ``label``; return its listbox."""
    from playwright.sync_api import TimeoutError as PWTimeout

    box = page.get_by_label(label, exact=True)
    listbox = page.get_by_role("listbox")
    for _ in range(3):  # a first click may only move focus out of another widget
        box.click()
        try:
            listbox.wait_for(state="visible", timeout=5_000)
            return listbox
        except PWTimeout:
            continue
    raise RuntimeError(f"the selectbox {label!r} does not open")


def choose(page, label: str, option: str):
    """Open the selectbox labelled ``label``; return the ``option`` to click (the timed part)."""
    return open_select(page, label).get_by_role("option", name=option, exact=True)


def two_options(page, label: str) -> tuple[str, str]:
    """The option shown next to the selected one, and the selected one, as the selectbox words them."""
    listbox = open_select(page, label)
    options = listbox.get_by_role("option")
    texts = [t.strip() for t in options.all_inner_texts()]
    chosen = [options.nth(i).get_attribute("aria-selected") == "true" for i in range(len(texts))]
    current = chosen.index(True) if True in chosen else 0
    page.keyboard.press("Escape")
    listbox.wait_for(state="hidden", timeout=WAIT_MS)
    return texts[current - 1 if current else 1], texts[current]


# the first element of ``css`` holding ``has`` (the one text_of reads) now reads otherwise
CHANGED_JS = """([css, has, before]) => {
  const e = [...document.querySelectorAll(css)].find((el) => el.textContent.includes(has));
  return !!e && e.textContent !== before;
}"""


def text_of(page, css: str, has: str) -> str:
    return page.evaluate(
        "([css, has]) => ([...document.querySelectorAll(css)]"
        ".find((e) => e.textContent.includes(has)) || {textContent: ''}).textContent",
        [css, has],
    )


# -- the steps ---------------------------------------------------------------------------------


def step_shell(b: Bench, url: str) -> None:
    t = b.timed(lambda: b.page.goto(url), SEL["numbers"], SEL["levels_table"], SEL["levels_chart"])
    t.update(b.running_since(0.0))  # a new document: its clock starts at the navigation
    b.record(
        "shell_with_sample",
        [t],
        TARGET_FIRST_VIEW_S,
        "first visit, cold server: the app with the bundled sample until its numbers (metrics or table), "
        "the table by level and the levels chart are drawn",
    )
    phases = b.page.evaluate(SHELL_PHASES_JS)
    # seen from here (the navigation starts a little after the call): goto returns at the load event
    phases |= dict(
        zip(
            ("goto_returned", "numbers_drawn", "table_drawn", "chart_drawn"),
            (round(x, 3) for x in t["reached_s"]),
        )
    )
    b.figures["shell_with_sample"]["phases_s"] = phases
    b.shot("levels_sample")


def step_upload(b: Bench, files: dict[str, Path], n_docs: int) -> None:
    page = b.page
    switch = b.timed(lambda: page.get_by_text(SEL["upload_radio"], exact=True).click(), SEL["upload_notice"])
    b.shot("upload_page")
    inputs = page.locator(SEL["file_inputs"])
    inputs.nth(1).wait_for(state="attached", timeout=WAIT_MS)
    runs = [files["siblings"], files["overcoder"], files["scores"]]
    # the runs first: their rerun draws a name box per run, a state that says the upload reached the server
    up_runs = b.timed(
        lambda: inputs.nth(1).set_input_files([str(p) for p in runs]),
        *(SEL["run_name_box"].format(file=p.name) for p in runs),
    )
    b.shot("runs_uploaded")
    up_gold = b.timed(
        lambda: inputs.nth(0).set_input_files(str(files["gold"])),
        SEL["upload_numbers"].format(n_docs=f"{n_docs:,}"),
        SEL["numbers"],
        SEL["levels_table"],
        SEL["levels_chart"],
    )
    b.shot("levels_upload")
    b.record(
        "switch_to_upload", [switch], None, "click 'Upload files' until the uploaders and the notice show"
    )
    b.record(
        "upload_runs", [up_runs], None, "3 run files (2 code sets, 1 scores) until a name box per run shows"
    )
    b.record(
        "upload_gold_to_numbers",
        [up_gold],
        None,
        "gold file until Scores by level shows the upload's numbers, its table and its levels chart",
    )

    def total(*parts: dict) -> dict:
        server, cpu = [p.get("server_s") for p in parts], [p.get("server_cpu_s") for p in parts]
        return {
            "s": sum(p["s"] for p in parts),
            "running_s": sum(p["running_s"] for p in parts),
            "runs": sum(p["runs"] for p in parts),
            "server_s": None if None in server else sum(server),
            "server_cpu_s": None if None in cpu else sum(cpu),
        }

    up = total(up_runs, up_gold)
    b.record("upload_to_numbers", [up], None, "the two uploads together")
    first = total(switch, up_runs, up_gold)
    b.record(
        "first_complete_view",
        [first],
        TARGET_FIRST_VIEW_S,
        "switch to upload + upload runs + upload gold, until the numbers, the table by level and the levels "
        "chart are drawn and idle",
    )


def step_levels(b: Bench) -> None:
    """Alternate the highest level between the one next to the default and the default (the first change
    is uncached); done when the caption naming the level has changed."""
    page = b.page
    levels = two_options(page, SEL["level_box"])
    css, has = SEL["level_caption"], SEL["level_caption_has"]

    def change(level: str) -> dict:
        before = text_of(page, css, has)
        return b.timed(
            choose(page, SEL["level_box"], level).click,
            lambda: page.wait_for_function(CHANGED_JS, arg=[css, has, before], timeout=WAIT_MS),
        )

    samples = [change(levels[i % 2]) for i in range(REPEATS)]
    if REPEATS % 2:  # back to the default level
        change(levels[1])
    b.record(
        "change_highest_level",
        samples,
        TARGET_INTERACTION_S,
        f"sidebar 'Highest level' {levels[0]} ⇄ {levels[1]} on Scores by level, until the caption "
        f"'{has} …' changes",
    )
    b.shot("levels_changed")


def step_tree(b: Bench) -> None:
    page = b.page
    t = b.timed(
        lambda: page.locator(SEL["sidebar"]).get_by_role("link", name=SEL["tree_link"]).click(),
        SEL["tree_drawn"],
        SEL["at_root"],
    )
    b.record("open_tree_page", [t], None, "sidebar link to the tree page until the tree and its table show")
    b.shot("tree_root")


def step_run(b: Bench) -> None:
    """Alternate the run between the second and the first; done when the tree's heading names the run."""
    page = b.page
    runs = two_options(page, SEL["run_box"])
    samples = []
    for i in range(REPEATS):
        run = runs[i % 2]
        samples.append(
            b.timed(
                choose(page, SEL["run_box"], run).click, SEL["run_done"].format(run=run), SEL["tree_drawn"]
            )
        )
    b.record(
        "change_run",
        samples,
        TARGET_INTERACTION_S,
        f"sidebar 'Run' {runs[0]} ⇄ {runs[1]} on the tree page, until the page names the run",
    )
    if REPEATS % 2:  # leave the first run selected
        b.timed(choose(page, SEL["run_box"], runs[1]).click, SEL["run_done"].format(run=runs[1]))
    b.shot("tree_run_changed")


def largest_tile(page) -> dict:
    tiles = page.locator(SEL["tiles"]).evaluate_all(TILES_JS)
    # a family's tile has the id "n<node>"; the root's id is a digest, an "Other" tile's "other:…"
    tiles = [t for t in tiles if re.fullmatch(r"n\d+", t["id"])]
    if not tiles:
        raise RuntimeError("no tile to click in the tree")
    return tiles[0]


def tile_surface(page, tile_id: str):
    """The clickable surface of the tile whose plotly id is ``tile_id``."""
    index = page.locator(SEL["tiles"]).evaluate_all(
        "(els, id) => els.findIndex((el) => el.__data__ && String(el.__data__.id) === id)",
        tile_id,
    )
    if index < 0:
        raise RuntimeError(f"tile {tile_id} is no longer drawn")
    return page.locator(SEL["tiles"]).nth(index).locator("path")


def step_focus(b: Bench) -> None:
    page = b.page
    focus, back = [], []
    tile = largest_tile(page)
    label = html.unescape(re.sub(r"<[^>]+>", "", tile["label"])).strip()  # tile labels may carry HTML
    code = label.split(" ")[0]
    for _ in range(REPEATS):
        surface = tile_surface(page, tile["id"])
        focus.append(b.timed(lambda s=surface: s.click(force=True), SEL["focused"].format(code=code)))
        if len(focus) == 1:
            b.shot("tree_focus")
        back.append(
            b.timed(
                lambda: page.get_by_role("button", name=SEL["root_button"], exact=True).click(),
                SEL["at_root"],
                SEL["tree_drawn"],
            )
        )
    b.record(
        "focus_family",
        focus,
        TARGET_INTERACTION_S,
        f"click the largest tile ({label}) until the breadcrumb '› {code}' shows",
    )
    b.record(
        "back_to_all_codes",
        back,
        TARGET_INTERACTION_S,
        "breadcrumb 'All codes' until 'Inside all codes' and the tree show",
    )
    b.shot("tree_back")


def step_ranked(b: Bench) -> None:
    page = b.page
    main = page.locator(SEL["main"])
    if main.get_by_text(SEL["ranked_title"]).count() == 0:
        print("ranked panel: not on the page")
        b.figures["open_ranked_panel"] = {"what": "ranked panel", "error": "not on the page"}
        return
    expander = page.locator(SEL["ranked_expander"])
    if expander.count() == 0:  # a section, not an expander: it is drawn with the page; time nothing
        table = main.locator(f"*:has-text('{SEL['ranked_title']}') ~ * :is({SEL['ranked_table']})")
        present = table.count() > 0
        print(f"ranked panel: a section, not an expander; table {'present' if present else 'not found'}")
        b.figures["open_ranked_panel"] = {
            "what": "ranked panel (section, drawn with the page)",
            "table_present": present,
        }
        return
    expander = expander.first
    summary = expander.locator(SEL["ranked_summary"]).first
    table = expander.locator(SEL["ranked_table"]).first
    samples = []
    for _ in range(REPEATS):
        if expander.evaluate("(e) => !!(e.matches('details[open]') || e.querySelector('details[open]'))"):
            summary.click()  # close it, so that the timed click opens it
            table.wait_for(state="hidden", timeout=WAIT_MS)
        b0 = page.evaluate("performance.now()")
        t0 = time.perf_counter()
        summary.click()
        table.wait_for(state="visible", timeout=WAIT_MS)
        page.wait_for_selector(SEL["idle"], timeout=WAIT_MS)
        samples.append({"s": time.perf_counter() - t0, **b.running_since(b0)})
    b.record(
        "open_ranked_panel",
        samples,
        TARGET_INTERACTION_S,
        f"open the expander '{SEL['ranked_title']}' until a table in it is visible",
    )
    b.shot("ranked_panel")


def step_ranked_focus(b: Bench) -> None:
    """One click on the ranked panel's first family (most extra codes: the first of the codes above its list)
    until the tree is focused on it: its breadcrumb and the documents behind it show."""
    page = b.page
    pill = page.locator(SEL["ranked_expander"]).locator(SEL["ranked_first"]).first
    code = pill.inner_text().strip()
    focus, back = [], []
    for _ in range(REPEATS):
        # a locator's click scrolls the pill into view first: the way back leaves the page scrolled below
        # the panel, where a click at a table's page coordinates met nothing
        focus.append(b.timed(pill.click, SEL["focused"].format(code=code), SEL["focus_detail"]))
        if len(focus) == 1:
            b.shot("ranked_focus")
        back.append(
            b.timed(
                lambda: page.get_by_role("button", name=SEL["root_button"], exact=True).click(),
                SEL["at_root"],
                SEL["tree_drawn"],
            )
        )
    b.record(
        "focus_from_ranked_panel",
        focus,
        TARGET_INTERACTION_S,
        f"click the first family ({code}) of 'Most extra codes' until its breadcrumb and the documents "
        "behind it show",
    )


# -- report ------------------------------------------------------------------------------------


def report(figures: dict, env: dict) -> None:
    print(
        f"\nmachine: {env['nproc']} CPUs (nproc), load average before {env['load_before']} "
        f"after {env['load_after']}"
    )
    print(f"streamlit {env['streamlit']}, {env['browser']}, python {env['python']}")
    print(f"upload: {env['upload']}")
    print(
        f"\n{'step':24} {'median s':>9} {'min s':>7} {'max s':>7} {'to run':>7} {'running':>8} {'server':>7} "
        f"{'cpu':>5} {'after':>6} {'n':>2}  target   met  load (1 min, before–after)"
    )
    for name, f in figures.items():
        if "error" in f:
            print(f"{name:24} {'—':>9} {'':>7} {'':>7} {'':>10} {'':>2}  {f['error']}")
            continue
        if "median_s" not in f:
            continue
        target = f"≤ {f['target_s']:g} s" if f["target_s"] is not None else "—"
        load = "–".join(f"{x:.2f}" for x in f.get("load_1min", []))
        met = {True: "yes", False: "NO", None: ""}[f["met"]]
        part = {
            k: "" if f.get(k) is None else f"{f[k]:.2f}"
            for k in ("to_run_median_s", "after_run_median_s", "server_median_s", "server_cpu_median_s")
        }
        print(
            f"{name:24} {f['median_s']:9.2f} {f['min_s']:7.2f} {f['max_s']:7.2f} {part['to_run_median_s']:>7} "
            f"{f['running_median_s']:8.2f} {part['server_median_s']:>7} {part['server_cpu_median_s']:>5} "
            f"{part['after_run_median_s']:>6} "
            f"{f['n']:>2}  {target:7}  {met:3}  {load}"
        )
    phases = figures.get("shell_with_sample", {}).get("phases_s")
    if phases:
        print(
            "\nfirst visit, s from navigation: "
            + ", ".join(f"{k.replace('_', ' ')} {v}" for k, v in phases.items())
        )
    print(
        "\nmedians in s; to run: from the action until the script starts (the event reaching the server); "
        "running: the script running as the\npage sees it (the server-side rerun, and the browser taking its deltas "
        "meanwhile); server: the script's own run time in the\nserver (with --server-timing); cpu: the CPU time of "
        "the script's thread in those runs (what they cost at any load,\nwith --server-timing); after: "
        "from the script's end until the step's state is drawn\nand seen here (chart rendering and the like). "
        "Composite rows (upload_to_numbers, first_complete_view) sum their parts' running time."
    )
    for name, f in figures.items():
        print(f"  {name}: {f['what']}")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--json", type=Path, help="write the figures to this file")
    ap.add_argument("--keep-screens", type=Path, metavar="DIR", help="save a screenshot after each step here")
    ap.add_argument(
        "--data",
        type=Path,
        metavar="DIR",
        help="folder for the generated upload (default: a temporary folder)",
    )
    ap.add_argument("--log", type=Path, help="keep the streamlit log here")
    ap.add_argument(
        "--server-timing",
        action="store_true",
        help="start the server through a wrapper that times each script run in the server (column "
        "'server'), instead of plain `python -m streamlit`",
    )
    args = ap.parse_args()

    import streamlit
    from playwright.sync_api import Error as PWError
    from playwright.sync_api import sync_playwright

    from benchmarks import mimic_upload

    if not Path(BROWSER).exists():
        sys.exit(f"{BROWSER} is not installed (apt-get install chromium-headless-shell)")
    load_before = os.getloadavg()
    tmp = Path(tempfile.mkdtemp(prefix="cophe_bench_browser_"))
    data_dir = args.data or tmp / "upload"
    files = mimic_upload.write_upload(data_dir)
    info = mimic_upload.check(files)
    upload = (
        f"{info['docs']:,} documents, {info['codes_per_doc']:.1f} gold codes per document, "
        f"{info['families']:,} families; files {', '.join(p.name for p in files.values())}"
        + (f" in {data_dir}" if args.data else "")
    )
    if args.keep_screens:
        args.keep_screens.mkdir(parents=True, exist_ok=True)
    log_path = args.log or tmp / "streamlit.log"
    runs_path = tmp / "script_runs.txt" if args.server_timing else None
    proc, url = start_server(log_path, runs_path)
    env = {
        "nproc": len(os.sched_getaffinity(0)),
        "cpu_count": os.cpu_count(),
        "load_before": [round(x, 2) for x in load_before],
        "streamlit": streamlit.__version__,
        "python": platform.python_version(),
        "upload": upload,
        "url": url,
    }
    figures: dict = {}
    try:
        with sync_playwright() as p:
            browser = p.chromium.launch(executable_path=BROWSER, args=["--no-sandbox"])
            env["browser"] = f"chromium {browser.version}"
            page = browser.new_page(viewport={"width": 1440, "height": 900})
            page.add_init_script(MARKS_JS)
            b = Bench(page, args.keep_screens, runs_path)
            figures = b.figures
            from playwright.sync_api import TimeoutError as PWTimeout

            steps = [
                ("shell_with_sample", lambda: step_shell(b, url)),
                ("first_complete_view", lambda: step_upload(b, files, info["docs"])),
                ("change_highest_level", lambda: step_levels(b)),
                ("open_tree_page", lambda: step_tree(b)),
                ("change_run", lambda: step_run(b)),
                ("focus_family", lambda: step_focus(b)),
                ("open_ranked_panel", lambda: step_ranked(b)),
                ("focus_from_ranked_panel", lambda: step_ranked_focus(b)),
            ]
            for name, step in steps:
                print(f"measuring {name} …", flush=True)
                known, load = set(figures), os.getloadavg()[0]
                try:
                    step()
                except (PWTimeout, RuntimeError) as e:
                    b.fail(name, "step", e)
                    if name in ("shell_with_sample", "first_complete_view"):
                        break  # the rest needs the upload on the page
                finally:
                    for new in set(figures) - known:  # the rows this step recorded: the load it ran under
                        figures[new]["load_1min"] = [round(load, 2), round(os.getloadavg()[0], 2)]
            browser.close()
    except PWError as e:
        proc.terminate()
        sys.exit(f"the browser failed: {e}")
    finally:
        server_died = proc.poll() is not None  # it ran until now, or it failed
        if proc.poll() is None:
            proc.terminate()
            try:
                proc.wait(timeout=20)
            except subprocess.TimeoutExpired:
                proc.kill()
    env["load_after"] = [round(x, 2) for x in os.getloadavg()]
    report(figures, env)
    if args.json:
        args.json.write_text(json.dumps({"env": env, "figures": figures}, indent=1))
        print(f"\nwrote {args.json}")
    if server_died:
        print(f"\nthe streamlit server stopped early; the end of its log:\n{log_path.read_text()[-3000:]}")
    shutil.rmtree(
        tmp, ignore_errors=True
    )  # the generated upload and the default log (--data, --log live elsewhere)
    if server_died:
        sys.exit("the streamlit server failed")


if __name__ == "__main__":
    main()
