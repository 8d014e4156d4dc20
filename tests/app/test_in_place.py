"""A rerun that finds everything kept draws every element in place: each place on the page gets one element, of
the kind it held after the last run (issue 29, point 7).

In a browser, a click is a press and a release on the same element. An element that a rerun takes off the page
and puts back (a placeholder first, then the element), or that moves because something above it appears and
goes away, lets the press fall on it and the release on something else: the click reaches nothing. In the
8-session load test, the second file asked for while the first was being made was lost that way in 3 of 19
runs: its pill was pressed, the page above it moved, and the release fell on the caption above the pill."""

from __future__ import annotations

import pytest
from streamlit.runtime.scriptrunner_utils.script_run_context import ScriptRunContext

from cophe_dashboard import downloads
from tests.app.conftest import ask, run_app


def kind(msg) -> str | None:
    """What a forward message puts at its place: an element's type, a block, a transient (a spinner)."""
    if not msg.HasField("delta"):
        return None
    delta = msg.delta
    what = delta.WhichOneof("type")
    if what == "new_element":
        return delta.new_element.WhichOneof("type")
    if what == "add_block":
        return "block"
    return what


def drawn(monkeypatch, at) -> dict[tuple[int, ...], list[str]]:
    """Run ``at`` once more, and return each place's elements in the order the run sent them."""
    sent: dict[tuple[int, ...], list[str]] = {}
    real = ScriptRunContext.enqueue

    def enqueue(self, msg):
        if (k := kind(msg)) is not None:
            sent.setdefault(tuple(msg.metadata.delta_path), []).append(k)
        return real(self, msg)

    monkeypatch.setattr(ScriptRunContext, "enqueue", enqueue)
    at.run()
    monkeypatch.setattr(ScriptRunContext, "enqueue", real)
    assert not at.exception, [e.value for e in at.exception]
    return sent


@pytest.mark.parametrize("asked", [(), ("dl_report_make",)])
def test_a_rerun_that_finds_everything_kept_draws_every_element_in_place(monkeypatch, asked):
    at = run_app("views/export.py")
    for key in asked:  # a file made: its download in the pill's place
        ask(at, key)
    before = drawn(monkeypatch, at)
    after = drawn(monkeypatch, at)
    moved = {place: kinds for place, kinds in after.items() if len(kinds) != 1}
    assert not moved, moved  # a placeholder first, then the element: taken off and put back
    changed = {p: (before[p][-1], k[0]) for p, k in after.items() if p in before and before[p][-1] != k[0]}
    assert not changed, changed
    assert set(after) == set(before)


def boxes(node, parent=None, out=None) -> list[tuple[str, str, int]]:
    """(kind, key, height in pixels of the block that holds it) of each pill asking for a file and each download
    button (AppTest before Streamlit 1.57 gives a download button no key: "")."""
    out = [] if out is None else out
    children = getattr(node, "children", None) or {}
    for child in children.values() if isinstance(children, dict) else children:
        boxes(child, node, out)
    kind = getattr(node, "type", "")
    if (kind == "button_group" and "_make" in (node.key or "")) or kind == "download_button":
        height = getattr(getattr(parent, "proto", None), "height_config", None)
        out.append((kind, node.key or "", height.pixel_height if height is not None else 0))
    return out


def test_a_costly_file_has_a_box_of_one_height_for_its_pill_its_spinner_and_its_download():
    """A pill leaving its place for the spinner shortened the page by its height: a page scrolled to its end then
    moved down under the pointer (the browser keeps the end in view), and a click elsewhere was lost."""
    at = run_app("views/export.py")
    ask(at, "dl_report_make")
    held = boxes(at._tree)
    keyed = [px for kind, key, px in held if kind == "download_button" and key == "dl_report"]
    keyless = [px for kind, key, px in held if kind == "download_button" and not key]  # Streamlit 1.56
    # made: its download in the box, where its pill was
    assert keyed == [downloads.BOX_PX] or (not keyed and downloads.BOX_PX in keyless), held
    pills = {key: px for kind, key, px in held if kind == "button_group"}
    assert "dl_report_make" not in pills
    assert "dl_fig_levels_make" in pills and set(pills.values()) == {downloads.BOX_PX}, pills


SAID = """
import operator

import streamlit as st
from cophe_dashboard import state

slot = st.empty()
with state.said_while_working("Reading and scoring the files…", slot):
    st.write(state.memo(operator.mul, st.session_state.get("x", 1), 2))
"""


def test_words_are_said_above_the_page_only_while_something_is_computed(monkeypatch):
    """state.said_while_working: the placeholder takes a container (for the spinner) while memo computes, is
    emptied after, and a run that finds the value kept sends the placeholder alone."""
    from streamlit.testing.v1 import AppTest

    at = AppTest.from_string(SAID, default_timeout=30)
    assert drawn(monkeypatch, at)[(0, 0)] == ["empty", "block", "empty"]  # computed: said
    assert drawn(monkeypatch, at)[(0, 0)] == ["empty"]  # kept: nothing drawn
    at.session_state["x"] = 2  # another value: computed, and said again
    assert drawn(monkeypatch, at)[(0, 0)] == ["empty", "block", "empty"]
    assert at.markdown[0].value == "`4`"
