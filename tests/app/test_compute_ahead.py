"""Work done ahead in the background: found by the one cache, never repeated, and an error in it is not lost."""

from __future__ import annotations

import threading

import pytest

import tests.app.conftest  # noqa: F401 - puts the dashboard's folder on the path, as streamlit run does
from cophe_core.breakdown.slices import restrict
from cophe_dashboard import memo


def _never(level):
    raise AssertionError("computed twice")


def test_a_result_computed_ahead_is_found_and_not_computed_again():
    m, gate, calls = memo.Memo(), threading.Event(), []

    def families(level):
        gate.wait(10)
        calls.append(level)
        return f"families at {level}"

    m.ahead(families, "e1")
    m.ahead(families, "e1")  # already under way: not started twice
    asked: list[str] = []
    view = threading.Thread(target=lambda: asked.append(m.get(families, "e1")))
    view.start()  # asks while the work is under way
    gate.set()
    view.join(10)
    for work in m.pending():
        work.result(10)
    assert asked == ["families at e1"] and calls == ["e1"]  # it waited for the background work
    assert m.get(families, "e1") == "families at e1" and calls == ["e1"]
    m.ahead(families, "e1")  # already there: nothing to do
    assert m.has(families, "e1") and not m.has(families, "e2")


def test_an_error_ahead_is_raised_again_where_the_view_asks():
    m, fixed = memo.Memo(), []

    def broken(level):
        if not fixed:
            raise ValueError("boom")
        return "fixed"

    m.ahead(broken, "e1")
    with pytest.raises(
        ValueError, match="boom"
    ):  # computed again in the foreground: the error panel shows it
        m.get(broken, "e1")
    fixed.append(1)
    assert m.get(broken, "e1") == "fixed"


def test_the_default_slices_are_restricted_ahead_once_the_page_is_drawn():
    from cophe_dashboard import slicing
    from tests.app.conftest import run_app

    at = run_app()
    ctx, kept = at.session_state["_ctx"], at.session_state["_memo"]
    for future in kept.pending():
        future.result(timeout=120)
    slices = kept.get(slicing.frequency_slices, ctx.scoring.corpus, (10, 100), around=_never)
    assert [s.name.split(":")[0] for s in slices] == ["Rare", "Medium", "Frequent"]
    for s in slices:
        for run in ctx.scoring.run_names:
            whole = ctx.scoring.evaluation(run, max_level=ctx.max_level)
            assert kept.has(restrict, whole, s)
            ev = kept.get(restrict, whole, s, around=_never)
            assert (
                "levels_table" in ev.__dict__ and "documents" in ev.__dict__
            )  # the tables too, not only the mask


def _busy_thread(gate: threading.Event) -> memo.Memo:
    """The background thread held by a first guess until ``gate`` is set (by the test, or at worst a minute
    later, so that a broken build fails instead of hanging)."""
    m, started = memo.Memo(), threading.Event()

    def blocker(_):
        started.set()
        gate.wait(60)
        return "done"

    m.ahead(blocker, "first")
    started.wait(60)
    threading.Timer(60, gate.set).start()
    return m


def test_a_view_never_waits_behind_work_still_queued_ahead():
    # another session's guesses hold the one background thread: a view asking for its own queued guess
    # computes it at once instead of waiting for them (a full test run once stalled for minutes there)
    gate, calls = threading.Event(), []
    m = _busy_thread(gate)

    def families(level):
        calls.append(level)
        return f"families at {level}"

    m.ahead(families, "e2")
    assert m.get(families, "e2") == "families at e2"
    assert not gate.is_set()  # answered while the thread was still busy
    gate.set()
    for work in m.pending():
        work.result(60)
    assert calls == ["e2"]  # the queued copy was dropped, not computed a second time
    assert m.get(families, "e2") == "families at e2" and calls == ["e2"]


def test_work_waiting_ahead_is_bounded_and_the_newest_is_kept():
    gate, done = threading.Event(), []
    m = _busy_thread(gate)
    n = memo.MAX_WAITING_AHEAD + 4
    for i in range(n):
        m.ahead(done.append, i)
    gate.set()
    for work in m.pending():
        work.result(60)
    assert done == list(range(4, n))  # the four oldest guesses were dropped, the rest computed in order
    m.ahead(done.append, 0)  # a dropped guess can be asked for again
    for work in m.pending():
        work.result(60)
    assert done[-1] == 0
