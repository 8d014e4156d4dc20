"""Work done ahead in the background: found by cached(), never repeated, and an error in it is not lost."""

from __future__ import annotations

import sys
import threading
from types import SimpleNamespace

import pytest

from tests.app.conftest import ROOT

sys.path.insert(0, str(ROOT / "dashboard"))
import state


def _never():
    raise AssertionError("computed twice")


def test_a_result_computed_ahead_is_found_and_not_computed_again():
    scoring, gate, calls = SimpleNamespace(), threading.Event(), []

    def slow():
        gate.wait(10)
        calls.append(1)
        return "families at e1"

    state.compute_ahead(scoring, ("k",), slow)
    state.compute_ahead(scoring, ("k",), _never)  # already under way: not started twice
    gate.set()
    assert state.cached(scoring, ("k",), _never) == "families at e1"  # waits for the background work
    assert state.cached(scoring, ("k",), _never) == "families at e1" and calls == [1]
    state.compute_ahead(scoring, ("k",), _never)  # already there: nothing to do
    assert state.is_cached(scoring, ("k",))


def test_an_error_ahead_is_raised_again_where_the_view_asks():
    scoring = SimpleNamespace()

    def broken():
        raise ValueError("boom")

    state.compute_ahead(scoring, ("bad",), broken)
    with pytest.raises(
        ValueError, match="boom"
    ):  # computed again in the foreground: the error panel shows it
        state.cached(scoring, ("bad",), broken)
    assert state.cached(scoring, ("bad",), lambda: "fixed") == "fixed"


def test_the_default_slices_are_restricted_ahead_once_the_page_is_drawn():
    from tests.app.conftest import run_app

    at = run_app()
    ctx = at.session_state["_ctx"]
    scoring = ctx.scoring
    for future in list(scoring.__dict__.get("_dashboard_ahead", {}).values()):
        future.result(timeout=120)
    store = scoring.__dict__["_dashboard_cache"]
    slices = store[("slices", "code_frequency", (10, 100))]
    assert [s.name.split(":")[0] for s in slices] == ["Rare", "Medium", "Frequent"]
    for s in slices:
        for run in scoring.run_names:
            ev = store[("sliced", run, ctx.max_level, s.fingerprint)]
            assert (
                "levels_table" in ev.__dict__ and "documents" in ev.__dict__
            )  # the tables too, not only the mask
