"""Sessions take turns to compute (state.heavy): one at a time, a nested computation takes no second turn, and a
session's opening (take=False) goes ahead."""

from __future__ import annotations

import sys
import threading

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
