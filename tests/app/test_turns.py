"""Sessions take turns to compute (state.heavy): one at a time, a nested computation takes no second turn, a
session's opening (take=False) goes ahead, and a session whose browser has gone gives up its place."""

from __future__ import annotations

import sys
import threading

import pytest
from streamlit.runtime.scriptrunner import get_script_run_ctx
from streamlit.testing.v1 import AppTest

from tests.app.conftest import ROOT

sys.path.insert(0, str(ROOT / "dashboard"))
import state


def test_one_turn_at_a_time_and_a_nested_computation_takes_none():
    held, release, second_in = threading.Event(), threading.Event(), threading.Event()

    def first():
        with state.heavy(), state.heavy():  # nested: the same turn, no deadlock
            held.set()
            release.wait(timeout=60)

    def second():
        with state.heavy():
            second_in.set()

    a = threading.Thread(target=first)
    a.start()
    assert held.wait(timeout=60)
    assert not state._HEAVY.acquire(blocking=False)  # the one turn is taken
    b = threading.Thread(target=second)
    b.start()
    release.set()
    assert second_in.wait(timeout=60)  # the second session computes once the first is done
    a.join(timeout=60)
    b.join(timeout=60)
    assert state._HEAVY.acquire(blocking=False)  # and every turn was given back
    state._HEAVY.release()


def test_an_opening_goes_ahead_while_another_session_holds_the_turn():
    held, release = threading.Event(), threading.Event()

    def other_session():
        with state.heavy():
            held.set()
            release.wait(timeout=60)

    t = threading.Thread(target=other_session)
    t.start()
    assert held.wait(timeout=60)
    try:
        with state.heavy(take=False), state.heavy():  # the opening and a computation inside it: no waiting
            done = True
    finally:
        release.set()
        t.join(timeout=60)
    assert done and not t.is_alive()


WAITING_PAGE = """
import state
import streamlit as st

with state.heavy():
    st.write("computed")
"""


class TurnHeldElsewhere:
    """The turn, held by another session for ``polls`` waits; on the first, this tab is closed (when
    ``closed``): Streamlit's disconnect asks the script to stop, as it does with a real browser."""

    def __init__(self, closed: bool, polls: int = 20):
        self.closed, self.polls, self.waits = closed, polls, 0

    def acquire(self, blocking: bool = True, timeout: float | None = None) -> bool:
        if not blocking:
            return False
        assert timeout is not None, "a wait Streamlit cannot interrupt"
        self.waits += 1
        if self.closed and self.waits == 1:
            ctx = get_script_run_ctx()
            assert ctx is not None and ctx.script_requests is not None
            ctx.script_requests.request_stop()
        return self.waits > self.polls

    def release(self) -> None:
        pass


@pytest.mark.parametrize("closed", [True, False])
def test_a_session_waiting_for_its_turn_stops_when_its_tab_is_closed(tmp_path, monkeypatch, closed):
    """A closed tab's queued work used to compute for nobody while the others waited behind it."""
    page = tmp_path / "page.py"
    page.write_text(WAITING_PAGE)
    turn = TurnHeldElsewhere(closed)
    monkeypatch.setattr(state, "_HEAVY", turn)
    at = AppTest.from_file(str(page), default_timeout=60).run()
    assert not at.exception
    assert [m.value for m in at.markdown] == ([] if closed else ["computed"])
    assert turn.waits == (1 if closed else turn.polls + 1)  # stopped at the element call after the request


def test_arrow_memory_is_given_back_once_at_the_end_of_a_script_run(monkeypatch):
    """Arrow's allocator keeps freed memory for reuse: 0.9 GB after scoring an 82 MB upload. It is released when
    the outermost turn ends (a script run), not inside it."""
    released = []

    class Pool:
        def release_unused(self) -> None:
            released.append(getattr(state._IN_HEAVY, "depth", 0))

    monkeypatch.setattr(state.pa, "default_memory_pool", Pool)
    with state.heavy(take=False):
        with state.heavy():
            pass
        assert released == []
    assert released == [0]
    with state.heavy():
        pass
    assert released == [0, 0]
