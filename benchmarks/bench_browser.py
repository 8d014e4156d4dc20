"""Browser benchmark: the dashboard in a real browser on a MIMIC-III-full-sized upload.

    python benchmarks/bench_browser.py                         # print the figures
    python benchmarks/bench_browser.py --json timings.json     # and write them
    python benchmarks/bench_browser.py --keep-screens shots/   # and a screenshot after each step

Starts ``streamlit run dashboard/app.py`` headless on a free port, opens
chromium-headless-shell at 1440×900 and measures, on a fresh server:

- the app shell with the bundled sample (first visit, cold server) until its
  first metric, chart and table are drawn and the script is idle;
- the first complete view of an upload: switching the source to "Upload files",
  uploading two runs and a scores file (one ``set_input_files``), then the gold
  standard, until Scores by level shows the upload's numbers and is idle;
- then the median, min and max of five for each interaction: the "Highest
  level" selectbox, the sidebar "Run" selectbox (on the tree page, where the run
  shows), focusing a family by clicking the largest tile of the icicle and going
  back through the "All codes" breadcrumb, opening the ranked panel "Where
  this run goes wrong", and focusing the tree from its first row.

The upload is written by ``benchmarks/mimic_upload.py``: 3,372 documents, about
15.9 ICD-9 codes each, in CAML's ``test_full.csv`` shape (no patient text).

Every step waits for a state, never for a time: after an action, for a selector
that only the new state draws (all in :data:`SEL`), then for the script to be
idle. Each timing is split, from marks a MutationObserver takes in the page, into
the time the script was running (server-side rerun and its deltas) and the rest
(sending the event, and the browser drawing after the run ended).

Targets are reported, not tested: first complete view ≤ 5 s, each interaction's
median ≤ 1 s. Asserts nothing; exits 0 unless the server or the browser fails.
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
TARGET_FIRST_VIEW_S = 5.0
TARGET_INTERACTION_S = 1.0

# Every selector the benchmark waits for or acts on. "{…}" fields are filled in per step.
SEL = {
    "idle": "[data-testid=stApp][data-test-script-state=notRunning]",
    "main": "[data-testid=stMain]",
    "sidebar": "[data-testid=stSidebar]",
    # the levels page: numbers drawn (metric cards or a table, whichever the page uses) and the chart
    "numbers": "[data-testid=stMain] :is([data-testid=stMetric], [data-testid=stTable], [data-testid=stDataFrame], "
               "[data-testid=stMarkdown] table)",
    "chart": "[data-testid=stMain] .js-plotly-plot",
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
    "tree_drawn": "[data-testid=stMain] .js-plotly-plot g.slice",
    "tiles": "[data-testid=stMain] .js-plotly-plot g.slice",
    "focused": "[data-testid=stMain] button:has-text('› {code} ')",  # the breadcrumb only a focus draws
    "root_button": "All codes",
    "at_root": "[data-testid=stMain] >> text=Inside all codes",  # the children table's heading at the root
    # the ranked panel: an expander with this title, and its tables
    "ranked_title": "Where this run goes wrong",
    "ranked_expander": "[data-testid=stExpander]:has-text('Where this run goes wrong')",
    "ranked_summary": "summary",
    "ranked_table": "[data-testid=stDataFrame], [data-testid=stTable], table",
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

# The slices of the icicle with their plotly id, label and drawn area (the largest first).
TILES_JS = """
(els) => els.map((el) => {
  const r = el.getBoundingClientRect();
  const d = el.__data__ && el.__data__.data && el.__data__.data.data;
  return {id: d ? String(d.id) : '', label: d ? String(d.label) : (el.textContent || ''),
          area: r.width * r.height};
}).sort((a, b) => b.area - a.area)
"""


# -- the server and the page -------------------------------------------------------------------

def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def start_server(log_path: Path) -> tuple[subprocess.Popen, str]:
    port = free_port()
    log = open(log_path, "w")  # noqa: SIM115 - closed with the process
    proc = subprocess.Popen(
        [sys.executable, "-m", "streamlit", "run", "dashboard/app.py", "--server.headless", "true",
         "--server.address", "127.0.0.1", "--server.port", str(port), "--browser.gatherUsageStats", "false"],
        cwd=ROOT, stdout=log, stderr=subprocess.STDOUT, env={**os.environ, "PYTHONUNBUFFERED": "1"},
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


class Bench:
    """The page, the figures measured on it, and the screenshots."""

    def __init__(self, page, screens: Path | None):
        self.page = page
        self.screens = screens
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
        t0 = time.perf_counter()
        action()
        for state in states:
            if callable(state):
                state()
            else:
                self.page.wait_for_selector(state, timeout=WAIT_MS)
        self.page.wait_for_selector(SEL["idle"], timeout=WAIT_MS)
        total = time.perf_counter() - t0
        return {"s": total, **self.running_since(b0)}

    def running_since(self, b0: float) -> dict:
        """Script-running time and number of runs since browser time ``b0``."""
        marks = self.page.evaluate("(b0) => window.__benchMarks.filter((m) => m.t >= b0)", b0)
        running, runs, started = 0.0, 0, None
        for m in marks:
            busy = m["s"] != "notRunning"
            if busy and started is None:
                started, runs = m["t"], runs + 1
            elif not busy and started is not None:
                running += m["t"] - started
                started = None
        if started is not None:
            running += self.page.evaluate("performance.now()") - started
        return {"running_s": running / 1000, "runs": runs}

    def record(self, name: str, samples: list[dict], target: float | None, what: str) -> None:
        secs = [x["s"] for x in samples]
        self.figures[name] = {
            "what": what, "n": len(secs), "median_s": statistics.median(secs), "min_s": min(secs),
            "max_s": max(secs), "running_median_s": statistics.median(x["running_s"] for x in samples),
            "runs_per_action": max(x["runs"] for x in samples), "samples_s": secs,
            "running_s": [x["running_s"] for x in samples], "target_s": target,
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


CHANGED_JS = """([css, has, before]) => [...document.querySelectorAll(css)]
    .some((e) => e.textContent.includes(has) && e.textContent !== before)"""


def text_of(page, css: str, has: str) -> str:
    return page.evaluate("([css, has]) => ([...document.querySelectorAll(css)]"
                         ".find((e) => e.textContent.includes(has)) || {textContent: ''}).textContent", [css, has])


# -- the steps ---------------------------------------------------------------------------------

def step_shell(b: Bench, url: str) -> None:
    t = b.timed(lambda: b.page.goto(url), SEL["numbers"], SEL["chart"])
    b.record("shell_with_sample", [t], TARGET_FIRST_VIEW_S,
             "first visit, cold server: the app with the bundled sample until its numbers (metrics or table) and chart are drawn")
    b.shot("levels_sample")


def step_upload(b: Bench, files: dict[str, Path], n_docs: int) -> None:
    page = b.page
    switch = b.timed(lambda: page.get_by_text(SEL["upload_radio"], exact=True).click(), SEL["upload_notice"])
    b.shot("upload_page")
    inputs = page.locator(SEL["file_inputs"])
    inputs.nth(1).wait_for(state="attached", timeout=WAIT_MS)
    runs = [files["siblings"], files["overcoder"], files["scores"]]
    # the runs first: their rerun draws a name box per run, a state that says the upload reached the server
    up_runs = b.timed(lambda: inputs.nth(1).set_input_files([str(p) for p in runs]),
                      *(SEL["run_name_box"].format(file=p.name) for p in runs))
    b.shot("runs_uploaded")
    up_gold = b.timed(lambda: inputs.nth(0).set_input_files(str(files["gold"])),
                      SEL["upload_numbers"].format(n_docs=f"{n_docs:,}"), SEL["numbers"], SEL["chart"])
    b.shot("levels_upload")
    b.record("switch_to_upload", [switch], None, "click 'Upload files' until the uploaders and the notice show")
    b.record("upload_runs", [up_runs], None, "3 run files (2 code sets, 1 scores) until a name box per run shows")
    b.record("upload_gold_to_numbers", [up_gold], None, "gold file until Scores by level shows the upload's numbers")
    up = {"s": up_runs["s"] + up_gold["s"], "running_s": up_runs["running_s"] + up_gold["running_s"],
          "runs": up_runs["runs"] + up_gold["runs"]}
    b.record("upload_to_numbers", [up], None, "the two uploads together")
    first = {k: switch[k] + up[k] for k in up}
    b.record("first_complete_view", [first], TARGET_FIRST_VIEW_S,
             "switch to upload + upload runs + upload gold, until the numbers are drawn and idle")


def step_levels(b: Bench) -> None:
    """Alternate the highest level between the one next to the default and the default (the first change
    is uncached); done when the caption naming the level has changed."""
    page = b.page
    levels = two_options(page, SEL["level_box"])
    css, has = SEL["level_caption"], SEL["level_caption_has"]

    def change(level: str) -> dict:
        before = text_of(page, css, has)
        return b.timed(choose(page, SEL["level_box"], level).click, lambda: page.wait_for_function(
            CHANGED_JS, arg=[css, has, before], timeout=WAIT_MS))

    samples = [change(levels[i % 2]) for i in range(REPEATS)]
    if REPEATS % 2:  # back to the default level
        change(levels[1])
    b.record("change_highest_level", samples, TARGET_INTERACTION_S,
             f"sidebar 'Highest level' {levels[0]} ⇄ {levels[1]} on Scores by level, until the caption "
             f"'{has} …' changes")
    b.shot("levels_changed")


def step_tree(b: Bench) -> None:
    page = b.page
    t = b.timed(lambda: page.locator(SEL["sidebar"]).get_by_role("link", name=SEL["tree_link"]).click(),
                SEL["tree_drawn"], SEL["at_root"])
    b.record("open_tree_page", [t], None, "sidebar link to the tree page until the icicle and its table show")
    b.shot("tree_root")


def step_run(b: Bench) -> None:
    """Alternate the run between the second and the first; done when the tree's heading names the run."""
    page = b.page
    runs = two_options(page, SEL["run_box"])
    samples = []
    for i in range(REPEATS):
        run = runs[i % 2]
        samples.append(b.timed(choose(page, SEL["run_box"], run).click, SEL["run_done"].format(run=run),
                               SEL["tree_drawn"]))
    b.record("change_run", samples, TARGET_INTERACTION_S,
             f"sidebar 'Run' {runs[0]} ⇄ {runs[1]} on the tree page, until the page names the run")
    if REPEATS % 2:  # leave the first run selected
        b.timed(choose(page, SEL["run_box"], runs[1]).click, SEL["run_done"].format(run=runs[1]))
    b.shot("tree_run_changed")


def largest_tile(page) -> dict:
    tiles = page.locator(SEL["tiles"]).evaluate_all(TILES_JS)
    tiles = [t for t in tiles if t["id"] not in ("root", "") and not t["id"].startswith("other")]
    if not tiles:
        raise RuntimeError("no tile to click in the icicle")
    return tiles[0]


def tile_surface(page, tile_id: str):
    """The clickable surface of the slice whose plotly id is ``tile_id``."""
    index = page.locator(SEL["tiles"]).evaluate_all(
        "(els, id) => els.findIndex((el) => el.__data__ && el.__data__.data && el.__data__.data.data "
        "&& String(el.__data__.data.data.id) === id)", tile_id)
    if index < 0:
        raise RuntimeError(f"tile {tile_id} is no longer drawn")
    return page.locator(SEL["tiles"]).nth(index).locator("path.surface")


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
        back.append(b.timed(lambda: page.get_by_role("button", name=SEL["root_button"], exact=True).click(),
                            SEL["at_root"], SEL["tree_drawn"]))
    b.record("focus_family", focus, TARGET_INTERACTION_S,
             f"click the largest tile ({label}) until the breadcrumb '› {code}' shows")
    b.record("back_to_all_codes", back, TARGET_INTERACTION_S,
             "breadcrumb 'All codes' until 'Inside all codes' and the icicle show")
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
        b.figures["open_ranked_panel"] = {"what": "ranked panel (section, drawn with the page)",
                                          "table_present": present}
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
    b.record("open_ranked_panel", samples, TARGET_INTERACTION_S,
             f"open the expander '{SEL['ranked_title']}' until a table in it is visible")
    b.shot("ranked_panel")


def step_ranked_focus(b: Bench) -> None:
    """One click on the ranked panel's first family (most extra codes) until the tree is focused on it."""
    page = b.page
    table = page.locator(SEL["ranked_expander"]).locator("[data-testid=stDataFrame]").first
    focus, back = [], []
    for _ in range(REPEATS):
        def click() -> None:
            table.scroll_into_view_if_needed()
            box = table.bounding_box()
            page.mouse.click(box["x"] + 16, box["y"] + 35 + 17)  # the first row's selection cell
        focus.append(b.timed(click, SEL["focus_detail"]))
        if len(focus) == 1:
            b.shot("ranked_focus")
        back.append(b.timed(lambda: page.get_by_role("button", name=SEL["root_button"], exact=True).click(),
                            SEL["at_root"], SEL["tree_drawn"]))
    b.record("focus_from_ranked_panel", focus, TARGET_INTERACTION_S,
             "click the first family of 'Most extra codes' until the documents behind it show")


# -- report ------------------------------------------------------------------------------------

def report(figures: dict, env: dict) -> None:
    print(f"\nmachine: {env['nproc']} CPUs (nproc), load average before {env['load_before']} "
          f"after {env['load_after']}")
    print(f"streamlit {env['streamlit']}, {env['browser']}, python {env['python']}")
    print(f"upload: {env['upload']}")
    print(f"\n{'step':24} {'median s':>9} {'min s':>7} {'max s':>7} {'running s':>10} {'n':>2}  target   met")
    for name, f in figures.items():
        if "error" in f:
            print(f"{name:24} {'—':>9} {'':>7} {'':>7} {'':>10} {'':>2}  {f['error']}")
            continue
        if "median_s" not in f:
            continue
        target = f"≤ {f['target_s']:.0f} s" if f["target_s"] is not None else "—"
        met = {True: "yes", False: "NO", None: ""}[f["met"]]
        print(f"{name:24} {f['median_s']:9.2f} {f['min_s']:7.2f} {f['max_s']:7.2f} {f['running_median_s']:10.2f} "
              f"{f['n']:>2}  {target:7}  {met}")
    print("\nrunning s: median time the script was running (server-side rerun and its deltas) within the step;"
          "\nthe rest is sending the event and the browser drawing once the run ended.")
    for name, f in figures.items():
        print(f"  {name}: {f['what']}")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--json", type=Path, help="write the figures to this file")
    ap.add_argument("--keep-screens", type=Path, metavar="DIR", help="save a screenshot after each step here")
    ap.add_argument("--data", type=Path, metavar="DIR",
                    help="folder for the generated upload (default: a temporary folder)")
    ap.add_argument("--log", type=Path, help="keep the streamlit log here")
    args = ap.parse_args()

    sys.path.insert(0, str(ROOT))
    sys.path.insert(0, str(Path(__file__).resolve().parent))
    import mimic_upload
    import streamlit
    from playwright.sync_api import Error as PWError
    from playwright.sync_api import sync_playwright

    if not Path(BROWSER).exists():
        sys.exit(f"{BROWSER} is not installed (apt-get install chromium-headless-shell)")
    load_before = os.getloadavg()
    tmp = Path(tempfile.mkdtemp(prefix="cophe_bench_browser_"))
    data_dir = args.data or tmp / "upload"
    files = mimic_upload.write_upload(data_dir)
    info = mimic_upload.check(files)
    upload = (f"{info['docs']:,} documents, {info['codes_per_doc']:.1f} gold codes per document, "
              f"{info['families']:,} families; files {', '.join(p.name for p in files.values())} in {data_dir}")
    if args.keep_screens:
        args.keep_screens.mkdir(parents=True, exist_ok=True)
    log_path = args.log or tmp / "streamlit.log"
    proc, url = start_server(log_path)
    env = {"nproc": len(os.sched_getaffinity(0)), "cpu_count": os.cpu_count(),
           "load_before": [round(x, 2) for x in load_before], "streamlit": streamlit.__version__,
           "python": platform.python_version(), "upload": upload, "url": url}
    figures: dict = {}
    try:
        with sync_playwright() as p:
            browser = p.chromium.launch(executable_path=BROWSER, args=["--no-sandbox"])
            env["browser"] = f"chromium {browser.version}"
            page = browser.new_page(viewport={"width": 1440, "height": 900})
            page.add_init_script(MARKS_JS)
            b = Bench(page, args.keep_screens)
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
                try:
                    step()
                except (PWTimeout, RuntimeError) as e:
                    b.fail(name, "step", e)
                    if name in ("shell_with_sample", "first_complete_view"):
                        break  # the rest needs the upload on the page
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
    if not args.log and not args.data:
        shutil.rmtree(tmp, ignore_errors=True)
    if server_died:
        sys.exit(f"the streamlit server failed; see {log_path}")


if __name__ == "__main__":
    main()
