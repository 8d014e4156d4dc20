"""Drawing in a child process (cophe_core.output.drawing): a browser that hangs or dies never holds or ends the
process that asked, and leaves no process behind."""

from __future__ import annotations

import re
import time
import uuid
from pathlib import Path

import plotly.graph_objects as go
import pytest

from cophe_core import InputError
from cophe_core.output import drawing
from cophe_core.output.figures_export import find_browser, publication, render

needs_browser = pytest.mark.skipif(find_browser() is None, reason="no Chrome or Chromium to draw figures")
OPTS = {"format": "svg", "width": 200, "height": 100, "scale": 1}


def processes_named(marker: str) -> list[int]:
    """Processes whose command line holds ``marker`` (Linux /proc)."""
    found = []
    for cmdline in Path("/proc").glob("[0-9]*/cmdline"):
        try:
            if marker.encode() in cmdline.read_bytes():
                found.append(int(cmdline.parent.name))
        except OSError:  # ended while listed
            continue
    return found


@pytest.fixture
def hanging_browser(tmp_path):
    """A "browser" that starts and never answers, under a name no other process has."""
    marker = f"cophe-hang-{uuid.uuid4().hex}"
    path = tmp_path / "chromium"
    path.write_text(f"#!/bin/bash\nexec -a {marker} sleep 600\n")
    path.chmod(0o755)
    return path, marker


@pytest.mark.skipif(not Path("/proc/self/cmdline").exists(), reason="looks for processes left in /proc")
def test_a_browser_that_hangs_is_ended_and_retried_within_the_bound(hanging_browser, monkeypatch):
    """Each child over its time ends its browser and exits when asked: with a minute's grace before the parent
    would end it, each stop is a signal and an exit, well under a second (a child that waited on Kaleido's close
    of a browser that does not answer took about 10 s: 26 s for the two tries), and the hung browser is gone."""
    path, marker = hanging_browser
    monkeypatch.setattr(drawing, "STOP_GRACE", 60.0)
    fig = go.Figure(go.Bar(x=[1], y=["a"]))
    start = time.monotonic()
    with pytest.raises(drawing.DrawingFailed) as e:
        drawing.draw(fig.to_json(), OPTS, str(path), timeout=3, attempts=2)
    took = time.monotonic() - start
    assert str(e.value) == (
        "the browser did not draw the figure within 3 s; then the browser did not draw the figure within 3 s"
    )
    assert took < 2 * 3 + 5  # two tries of 3 s, and at most 2.5 s for each stop
    assert processes_named(marker) == [], "the hung browser was left running"


def test_a_browser_that_is_not_there_is_named(tmp_path):
    with pytest.raises(
        drawing.DrawingFailed, match="^the drawing process ended with code 1: ChromeNotFoundError: "
    ):
        drawing.draw("{}", OPTS, str(tmp_path / "no-chromium"), attempts=1)


@needs_browser
def test_render_says_what_failed_in_words(monkeypatch, tmp_path):
    monkeypatch.setenv("BROWSER_PATH", str(tmp_path / "no-chromium"))
    fig = publication(go.Figure(go.Bar(x=[1], y=["a"])), "one-column", height=2)
    with pytest.raises(InputError, match=r"^drawing the figure as PDF failed: the drawing process ended"):
        render(fig, "pdf")


@needs_browser
def test_a_drawing_is_the_same_as_in_process():
    """The child draws exactly what Kaleido draws in the process itself."""
    import kaleido

    fig = go.Figure(go.Bar(x=[1, 2], y=["a", "b"]), layout={"width": 200, "height": 100})
    kopts = {"path": find_browser(), "mathjax": False}
    here = kaleido.calc_fig_sync(fig, opts=OPTS, kopts=kopts)
    there = drawing.draw(fig.to_json(), OPTS, find_browser())
    assert b"<rect" in here and same_but_ids(there, here)


def same_but_ids(a: bytes, b: bytes) -> bool:
    """Two SVGs of one figure: Plotly names each drawing's clip paths with a random 6-digit hex id."""
    ids = re.compile(rb"(defs-|clip)[0-9a-f]{6}")
    return ids.sub(rb"\1ID", a) == ids.sub(rb"\1ID", b)
