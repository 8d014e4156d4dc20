"""Eight sessions at once on one server, on 127.0.0.1 only: each uploads its own files and sees only its own
runs, and every download it asks for arrives whole while the other sessions rerun. Among them (issue 29,
point 7), two close their tab while the server makes a file for them, and two switch page and change a
widget while theirs is made: every session still reaches its final state (the closers' tabs opened again
draw the first page), so no turn is kept by a session that left or moved on.

Bounded: 8 browser contexts in one Chromium, up to 6 downloads each, one upload each; every wait is for a state.
"""

from __future__ import annotations

import contextlib
import re
from urllib.parse import urlparse

import pandas as pd
import pytest

from tests.browser.helpers import ARTIFACTS, ROOT, WAIT_MS, asking, choose, expect, settle

SESSIONS = 8
SAMPLE = ROOT / "sample_data" / "icd9"
TABLES = ("Scores by level, all runs", "Rows that were not scored")  # plus the run's codes and documents
MADE = ("Report for run", "Levels chart, all runs")  # made on request, then downloaded
CLOSE = (5, 6)  # sessions that close their tab while their report is made
CLICK = (4, 7)  # sessions that switch page and change a widget while their report is made
DOWNLOAD = tuple(i for i in range(SESSIONS) if i not in CLOSE + CLICK)  # sessions that download every file


def session_files(folder, i: int):
    """Session i's gold standard and run: the sample's, its document ids prefixed ``s{i}-``."""
    gold, run = (pd.read_csv(SAMPLE / name, dtype=str) for name in ("gold.csv", "run_siblings.csv"))
    paths = []
    for frame, name in ((gold, f"gold{i}.csv"), (run, f"session{i}.csv")):
        frame.assign(doc_id=f"s{i}-" + frame.doc_id).to_csv(folder / name, index=False)
        paths.append(folder / name)
    return paths


def all_at_once(pages, act, sessions=None) -> None:
    """``act(i, page)`` for every session (of ``sessions``) before waiting on any: the server works on them
    together."""
    for i, pg in enumerate(pages):
        if sessions is None or i in sessions:
            act(i, pg)


def button(pg, label: str):
    return pg.get_by_role("button", name=re.compile("^" + re.escape(label)))


def test_eight_sessions_are_isolated_and_every_download_arrives(page, server, tmp_path):
    assert urlparse(server).hostname == "127.0.0.1"
    files = [session_files(tmp_path, i) for i in range(SESSIONS)]
    contexts = [
        page.context.browser.new_context(viewport={"width": 1440, "height": 900}, accept_downloads=True)
        for _ in range(SESSIONS)
    ]
    for c in contexts:  # a page opened on a loaded machine: the suite's bound, not the 30 s default
        c.set_default_navigation_timeout(WAIT_MS)
    pages = [c.new_page() for c in contexts]
    try:
        run_sessions(pages, server, files)
    except Exception:
        for i, pg in enumerate(pages):  # each session as it stood: which one was still waiting, and for what
            with contextlib.suppress(Exception):  # a page that cannot be drawn must not hide the failure
                pg.screenshot(path=ARTIFACTS / f"failure_load_session{i}.png", full_page=True)
        raise
    finally:
        for c in contexts:
            c.close()


def run_sessions(pages, server: str, files) -> None:
    all_at_once(pages, lambda i, pg: pg.goto(server))
    all_at_once(pages, lambda i, pg: settle(pg, "[data-testid=stTable]"))
    all_at_once(pages, lambda i, pg: pg.get_by_text("Upload files").click())
    all_at_once(pages, lambda i, pg: settle(pg, "text=Upload a gold standard"))
    inputs = [pg.locator("[data-testid=stFileUploader] input[type=file]") for pg in pages]
    all_at_once(pages, lambda i, pg: inputs[i].nth(1).set_input_files(str(files[i][1])))
    all_at_once(pages, lambda i, pg: settle(pg, f"text=Name of run 1 (session{i}.csv)"))
    all_at_once(pages, lambda i, pg: inputs[i].nth(0).set_input_files(str(files[i][0])))
    all_at_once(pages, lambda i, pg: settle(pg, f"[data-testid=stMain] >> text=session{i}"))

    for i, pg in enumerate(pages):  # isolation: a session shows its run and no other session's
        expect(pg.get_by_text("Upload a gold standard")).to_have_count(0)
        for j in range(SESSIONS):
            if j != i:
                expect(pg.get_by_text(f"session{j}")).to_have_count(0)
    pages[0].screenshot(path=ARTIFACTS / "20_load_session0.png", full_page=True)

    all_at_once(pages, lambda i, pg: pg.get_by_role("link", name="Export").click())
    all_at_once(pages, lambda i, pg: settle(pg, "text=Tables (CSV)"))
    # mid-computation: the closers and clickers ask for their report, then close the tab or move on at once
    all_at_once(pages, lambda i, pg: asking(pg, MADE[0]).click(timeout=WAIT_MS), CLOSE + CLICK)
    all_at_once(pages, lambda i, pg: pg.close(), CLOSE)
    all_at_once(pages, lambda i, pg: pg.get_by_role("link", name="Code-family tree").click(), CLICK)
    all_at_once(pages, lambda i, pg: settle(pg, "text=Colour by"), CLICK)
    all_at_once(pages, lambda i, pg: choose(pg, "Colour by", "Extra codes").click(), CLICK)
    all_at_once(pages, lambda i, pg: settle(pg, "text=Extra codes"), CLICK)
    all_at_once(pages, lambda i, pg: pg.get_by_role("link", name="Export").click(), CLICK)
    all_at_once(pages, lambda i, pg: settle(pg, "text=Tables (CSV)"), CLICK)
    arrived: list[list] = [[] for _ in pages]
    all_at_once(pages, lambda i, pg: pg.on("download", lambda d, i=i: arrived[i].append(d)), DOWNLOAD + CLICK)
    for label in MADE:  # every session asks for its files to be made, one after the other
        all_at_once(pages, lambda i, pg, label=label: asking(pg, label).click(timeout=WAIT_MS), DOWNLOAD)
        # each file's button shows its size before the next is asked for: with the second file asked for while
        # the first is being made, the second's button did not show within the bound in 2 of 3 full runs of
        # the test command (issue 29 stays open on it; tests/app/test_downloads.py holds the race it fixed)
        all_at_once(pages, lambda i, pg, label=label: made(pg, label).wait_for(timeout=WAIT_MS), DOWNLOAD)
    tables = (*TABLES, "Every code and family · session", "Document by document · session")
    for label in tables:
        all_at_once(pages, lambda i, pg, label=label: button(pg, label).click(timeout=WAIT_MS), DOWNLOAD)
    for label in MADE:  # the same words, now with the file's size
        all_at_once(pages, lambda i, pg, label=label: made(pg, label).click(timeout=WAIT_MS), DOWNLOAD)
    all_at_once(pages, lambda i, pg: fetch_report(pg), CLICK)
    wanted = {i: len(tables) + len(MADE) if i in DOWNLOAD else 1 for i in DOWNLOAD + CLICK}
    for i in wanted:
        while len(arrived[i]) < wanted[i]:
            pages[i].wait_for_event("download", timeout=WAIT_MS)
    for i in DOWNLOAD:
        check_downloads(i, arrived[i], wanted[i])
    for i in CLICK:  # its report, made while it was away or asked for again, is its own
        (report,) = arrived[i]
        assert report.failure() is None and report.suggested_filename == f"report_session{i}.html"
        assert f"session{i}" in report.path().read_text(encoding="utf-8")
    # the closers' tabs, opened again, draw the first page: their closed sessions hold nothing up
    reopened = {i: pages[i].context.new_page() for i in CLOSE}
    for pg in reopened.values():
        pg.goto(server)
    for pg in reopened.values():
        settle(pg, "[data-testid=stTable]")


def made(pg, label: str):
    """The download button of a file made on request: its words, then the file's size."""
    return pg.get_by_role("button", name=re.compile(re.escape(label) + ".* · [0-9.,]+ [KM]B"))


def fetch_report(pg) -> None:
    """The report's download, back on Export: made while the session was away (its button shows the
    file's size) or asked for again."""
    sized = made(pg, MADE[0])
    if not sized.count():
        asking(pg, MADE[0]).click(timeout=WAIT_MS)
    sized.click(timeout=WAIT_MS)


def check_downloads(i: int, got: list, wanted: int) -> None:
    """Every download of session i completed, with its own data only."""
    assert len(got) == wanted, [d.suggested_filename for d in got]
    by_name = {}
    for d in got:
        assert d.failure() is None, (i, d.suggested_filename, d.failure())
        by_name[d.suggested_filename] = d.path().read_text(encoding="utf-8")
    assert set(by_name) == {
        "levels.csv",
        "rejected_rows.csv",
        f"nodes_session{i}.csv",
        f"documents_session{i}.csv",
        f"report_session{i}.html",
        "levels_chart.html",
    }
    docs = pd.read_csv(pd.io.common.StringIO(by_name[f"documents_session{i}.csv"]), dtype=str)
    assert len(docs) and docs.iloc[:, 0].str.startswith(f"s{i}-").all()
    for j in range(SESSIONS):
        seen = f"session{j}" in by_name[f"report_session{i}.html"] or f"session{j}" in by_name["levels.csv"]
        assert seen is (j == i), (i, j)
    assert by_name["levels_chart.html"].lstrip().lower().startswith("<!doctype html>")


pytestmark = pytest.mark.browser
