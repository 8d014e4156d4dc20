"""Sessions take turns to compute (state.heavy): one at a time, a nested computation takes no second turn, a
session's opening (take=False) goes ahead, and a session whose browser has gone gives up its place."""

from __future__ import annotations

import logging
import threading

import pytest
from streamlit.runtime.scriptrunner import get_script_run_ctx
from streamlit.testing.v1 import AppTest

from cophe_dashboard import state
from cophe_dashboard.turns import Turn


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
    assert not state._TURN.free  # the one turn is taken
    b = threading.Thread(target=second)
    b.start()
    release.set()
    assert second_in.wait(timeout=60)  # the second session computes once the first is done
    a.join(timeout=60)
    b.join(timeout=60)
    assert state._TURN.free  # and the turn was given back


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
from cophe_dashboard import state
from cophe_dashboard.turns import Turn
import streamlit as st

with state.heavy():
    st.write("computed")
"""


class TurnHeldElsewhere(Turn):
    """The turn, held by another session for ``polls`` waits; on the first, this tab is closed (when
    ``closed``): Streamlit's disconnect asks the script to stop, as it does with a real browser."""

    def __init__(self, closed: bool, polls: int = 20):
        super().__init__(max_hold_s=3600)
        self.closed, self.polls, self.waits = closed, polls, 0

    def take(self, *, timeout: float) -> bool:
        if timeout == 0 and self.waits == 0:
            return False
        assert timeout > 0, "a wait Streamlit cannot interrupt"
        self.waits += 1
        if self.closed and self.waits == 1:
            ctx = get_script_run_ctx()
            assert ctx is not None and ctx.script_requests is not None
            ctx.script_requests.request_stop()
        return self.waits > self.polls and super().take(timeout=0)


@pytest.mark.parametrize("closed", [True, False])
def test_a_session_waiting_for_its_turn_stops_when_its_tab_is_closed(tmp_path, monkeypatch, closed):
    """A closed tab's queued work used to compute for nobody while the others waited behind it."""
    page = tmp_path / "page.py"
    page.write_text(WAITING_PAGE)
    turn = TurnHeldElsewhere(closed)
    monkeypatch.setattr(state, "_TURN", turn)
    at = AppTest.from_file(str(page), default_timeout=60).run()
    assert not at.exception
    assert [m.value for m in at.markdown] == ([] if closed else ["computed"])
    assert turn.waits == (1 if closed else turn.polls + 1)  # stopped at the element call after the request
    assert turn.free


# A page that waits for the turn (held elsewhere for two polls) and computes with it, and asks Streamlit to stop
# or rerun the script at its element call number AT (every call goes through ctx.enqueue): the wait's beats,
# the spinner's show and clearing, the computation's own output.
INTERRUPTED_PAGE = """
from cophe_dashboard import state
from cophe_dashboard.turns import Turn
import streamlit as st
from streamlit.runtime.scriptrunner import RerunData, get_script_run_ctx

ctx = get_script_run_ctx()
calls = st.session_state.setdefault("calls", [])
send = ctx._enqueue


def counted(msg):
    calls.append(len(calls) + 1)
    if len(calls) == AT:
        if KIND == "stop":
            ctx.script_requests.request_stop()
        else:
            ctx.script_requests.request_rerun(RerunData())
    send(msg)


ctx._enqueue = counted
with state.heavy():
    st.write("computed")
    st.write("and shown")
"""


class HeldForTwoPolls(Turn):
    """Held by another session until this one has polled twice, then free."""

    def __init__(self) -> None:
        super().__init__(max_hold_s=3600)
        self.polls = 0

    def take(self, *, timeout: float) -> bool:
        self.polls += 1
        return self.polls > 2 and super().take(timeout=0)


@pytest.mark.parametrize("kind", ["stop", "rerun"])
def test_the_turn_is_free_after_a_stop_or_rerun_at_any_element_call(tmp_path, monkeypatch, kind):
    """Streamlit raises its stop or rerun at any element call. One raised at the waiting spinner's exit, after
    the turn was taken but before the ``try`` that gave it back, kept the turn for good: every session on the
    server then waited behind it."""
    calls = 0
    for at_call in range(1, 12):
        page = tmp_path / f"page_{kind}_{at_call}.py"
        page.write_text(f"AT = {at_call}\nKIND = {kind!r}\n" + INTERRUPTED_PAGE)
        turn = HeldForTwoPolls()
        monkeypatch.setattr(state, "_TURN", turn)
        at = AppTest.from_file(str(page), default_timeout=60).run()
        assert not at.exception, (at_call, [e.value for e in at.exception])
        assert turn.free, f"the turn was kept after a {kind} at element call {at_call}"
        calls = max(calls, len(at.session_state["calls"]) if "calls" in at.session_state else 0)
    assert calls >= 4  # the beats, the spinner's clearing and the page's output were all interrupted once


def test_a_turn_whose_holder_ended_without_giving_it_back_is_taken_over(caplog):
    turn = Turn(max_hold_s=3600)
    t = threading.Thread(target=lambda: turn.take(timeout=0))
    t.start()
    t.join()
    assert not turn.free  # held by a thread that has ended: it can never give it back
    with caplog.at_level(logging.WARNING, logger="cophe.dashboard"):
        assert turn.take(timeout=0)
    assert turn.held_by_me
    assert "its thread has ended" in caplog.text


def test_a_turn_held_past_its_bound_is_taken_over_and_the_old_holder_gives_back_nothing(caplog):
    turn = Turn(max_hold_s=0.0)
    taken, leave = threading.Event(), threading.Event()

    def holder():
        turn.take(timeout=0)
        taken.set()
        leave.wait(timeout=60)
        turn.give_back()  # no longer the holder: must not free the turn of the one who took it over

    t = threading.Thread(target=holder)
    t.start()
    assert taken.wait(timeout=60)
    with caplog.at_level(logging.WARNING, logger="cophe.dashboard"):
        assert turn.take(timeout=0)
    assert "longer than the bound" in caplog.text
    leave.set()
    t.join(timeout=60)
    assert turn.held_by_me
    turn.give_back()
    assert turn.free


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


def test_a_rerun_that_computes_nothing_takes_no_turn_and_keeps_its_downloads(monkeypatch):
    """Streamlit drops a session's download files from its run's start, and deletes the unreferenced ones when any
    session's run ends. A run that waited for the turn at the top of the script, before drawing anything, lost
    the files its page still offered (the load test's cancelled downloads). A run on cached results draws at
    once, while another session holds the turn; only a computation waits."""
    from tests.app.conftest import run_app

    at = run_app("views/export.py")  # the opening, then the Export page: every table computed once
    assert not at.exception
    before = [b.proto.url for b in at.get("download_button")]
    assert before
    held, release = threading.Event(), threading.Event()

    def other_session():
        with state.heavy():
            held.set()
            release.wait(timeout=120)

    t = threading.Thread(target=other_session)
    t.start()
    try:
        assert held.wait(timeout=60)
        at.run(timeout=30)  # waited until the other session ended, before: a timeout
        assert not at.exception, [e.value for e in at.exception]
        assert [b.proto.url for b in at.get("download_button")] == before
        assert not state._TURN.free  # the other session's turn, untouched
    finally:
        release.set()
        t.join(timeout=60)


OFFERING_PAGE = """
from cophe_dashboard import downloads
import streamlit as st
from streamlit import runtime

downloads.keep_offered()
files = runtime.get_instance().media_file_mgr
if "url" in st.session_state:  # a rerun, before it draws its button again: two other sessions' runs end
    files.remove_orphaned_files()
    files.remove_orphaned_files()
    file_id = st.session_state["url"].rsplit("/", 1)[-1].split(".")[0]
    read = getattr(files, "read_file", None)  # public from Streamlit 1.6x; 1.56, the floor, has no lookup
    st.session_state["alive"] = None if read is None else read(file_id) is not None
downloads.file(st, "Table", lambda: "a,b\\n1,2\\n", "table.csv", "text/csv", key="table")
"""


def test_a_download_offered_by_the_last_run_survives_the_start_of_the_next(tmp_path):
    """Streamlit drops a session's file references when its run starts, and deletes unreferenced download files
    at the second run end of any session after that: a click on a button drawn by the last run, while this run
    had not drawn it yet, found its file deleted ("canceled" in the load test)."""
    page = tmp_path / "offering.py"
    page.write_text(OFFERING_PAGE)
    at = AppTest.from_file(str(page), default_timeout=60).run()
    url = at.get("download_button")[0].proto.url
    assert url
    at.session_state["url"] = url
    at.run()
    assert not at.exception, [e.value for e in at.exception]
    assert at.get("download_button")[0].proto.url == url  # the same file, under the same address
    if at.session_state["alive"] is None:
        pytest.skip("this Streamlit cannot look a media file up by its id (read_file came after 1.56)")
    assert at.session_state["alive"]


WORK_TO_THE_END = """
import streamlit as st
from cophe_dashboard import state


def inner():
    with state.heavy():  # a computation inside the file being made (a memo): in the caller's turn
        return state._TURN.free


with state.heavy():
    st.session_state["free_inside"] = state.to_the_end(inner)
st.session_state["free_after"] = state._TURN.free
"""


def test_work_run_to_the_end_computes_in_its_callers_turn_and_takes_none_of_its_own(monkeypatch):
    """``state.to_the_end`` runs the making of a file in a helper thread while its caller holds the turn: a
    computation inside it takes no turn (it would wait behind its own caller until the turn's bound), and the
    turn is given back once."""
    turn = Turn(max_hold_s=3600)
    monkeypatch.setattr(state, "_TURN", turn)
    at = AppTest.from_string(WORK_TO_THE_END, default_timeout=30).run()
    assert not at.exception, [e.value for e in at.exception]
    assert at.session_state["free_inside"] is False and at.session_state["free_after"] is True
