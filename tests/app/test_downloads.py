"""Downloads exist before their buttons are drawn: a file is bytes in the page, never made on click."""

from __future__ import annotations

import re

import pandas as pd
import pytest
from streamlit.proto.WidgetStates_pb2 import WidgetStates
from streamlit.runtime.scriptrunner import RerunData, get_script_run_ctx
from streamlit.runtime.state import SafeSessionState

from cophe_dashboard import downloads
from tests.app.conftest import ask, asking, run_app


def download_labels(at) -> list[str]:
    return [b.label for b in at.get("download_button")]


def test_no_download_is_made_on_click():
    """Every download button of every page carries its file (a URL), none a deferred maker."""
    for page in ("views/export.py", "views/levels.py", "views/tree.py", "views/compare.py"):
        at = run_app(page)
        buttons = at.get("download_button")
        assert buttons, page
        for b in buttons:
            assert b.proto.url and not b.proto.deferred_file_id, (page, b.label)


def test_a_report_is_made_on_request_then_downloaded_and_kept():
    at = run_app("views/export.py")
    assert "Report for run siblings" in asking(at)
    ask(at, "dl_report_make")
    assert not at.exception
    label = next(x for x in download_labels(at) if x.startswith("Report for run siblings"))
    assert re.fullmatch(r"Report for run siblings · (\d[\d,]* KB|\d+\.\d MB)", label), label
    at.run()  # a rerun with the same inputs keeps the file: no second click
    assert label in download_labels(at)
    at.selectbox(key="run").set_value("overcoder").run()  # another run: its report is made on request again
    assert "Report for run overcoder" in asking(at)
    assert not any(x.startswith("Report for run") for x in download_labels(at))


def test_kept_files_are_bounded_per_session(monkeypatch):
    monkeypatch.setattr(downloads.st, "session_state", {})
    for i in range(downloads.KEPT_PER_SESSION + 5):
        downloads._keep(f"k{i}", (i,), "x")
    store = downloads.st.session_state[downloads.STORE]
    assert len(store) == downloads.KEPT_PER_SESSION and "k0" not in store and f"k{i}" in store


@pytest.mark.parametrize(
    "a, b, same",
    [
        ((1, "x", None), (1, "x", None), True),
        ((1,), (1.0,), False),  # a type change is a change
        ((1,), (1, 2), False),
    ],
)
def test_sources_compare_plain_values_by_equality(a, b, same):
    assert downloads._same(a, b) is same


def test_sources_compare_objects_by_identity():
    t = pd.DataFrame({"a": [1]})
    assert downloads._same((t,), (t,)) and not downloads._same((t,), (t.copy(),))


def second_click_at_run_start(arrived: list):
    """``SafeSessionState.on_script_will_rerun`` with another click of the same browser reaching the server as the
    run of a first click starts (before the widgets' values are applied), as it did under load. The browser
    sends every widget's value with it, and not the first click of a plain button (sent once, with its own
    request)."""
    real = SafeSessionState.on_script_will_rerun

    def will_rerun(session_state, widget_states, *args, **kwargs):
        ctx = get_script_run_ctx()
        assert ctx is not None and ctx.script_requests is not None  # the script's thread, under a runner
        if widget_states is not None and not arrived:
            arrived.append(True)
            values = WidgetStates()
            values.widgets.extend(
                w for w in widget_states.widgets if w.WhichOneof("value") != "trigger_value"
            )
            ctx.script_requests.request_rerun(
                RerunData(
                    widget_states=values, page_script_hash=ctx.page_script_hash, query_string=ctx.query_string
                )
            )
        return real(session_state, widget_states, *args, **kwargs)

    return will_rerun


def test_a_click_is_kept_when_another_arrives_as_its_run_starts(monkeypatch):
    """Streamlit restarts a run whose request is followed at once by another, dropping the first request's
    one-off values: a plain button's click was lost so (a second file asked for while the first was being made,
    under load). The pill that asks for a file is a value, sent again with the second request."""
    at = run_app("views/export.py")
    arrived: list = []
    monkeypatch.setattr(SafeSessionState, "on_script_will_rerun", second_click_at_run_start(arrived))
    ask(at, "dl_report_make")
    assert arrived and not at.exception
    assert any(x.startswith("Report for run siblings · ") for x in download_labels(at)), download_labels(at)


def test_a_file_whose_inputs_change_is_made_again_only_when_asked_for():
    """The pill that asked for a file is a value: once the file is made, a file made from other inputs (another
    run) waits for its own pill to be chosen."""
    at = run_app("views/export.py")
    ask(at, "dl_report_make")
    at.selectbox(key="run").set_value("overcoder").run()  # the report of another run: not made yet
    assert not any(x.startswith("Report for run overcoder") for x in download_labels(at)), download_labels(at)
    pill = next(g for g in at.button_group if g.options == ["Report for run overcoder"])
    assert pill.value is None and pill.key
    ask(at, pill.key)
    assert any(x.startswith("Report for run overcoder · ") for x in download_labels(at)), download_labels(at)


A_CLICK_WHILE_MAKING = """
import streamlit as st
from streamlit.runtime.scriptrunner import RerunData, get_script_run_ctx
from cophe_dashboard import downloads

st.session_state.setdefault("makes", 0)


def make():
    st.session_state["makes"] += 1
    if st.session_state["makes"] == 1:  # the session clicks elsewhere on the page: its rerun reaches the server now
        ctx = get_script_run_ctx()
        ctx.script_requests.request_rerun(
            RerunData(page_script_hash=ctx.page_script_hash, query_string=ctx.query_string)
        )
    st.session_state.get("_memo")  # the making reads the session (its memo, the page's words), as a report does
    return "<html>report</html>"


downloads.prepared(st, "Report", make, "report.html", "text/html", key="dl_report")
"""


def test_a_file_being_made_is_made_once_whatever_the_session_clicks_meanwhile():
    """A rerun asked for while a file was being made (a second file asked for, a page switched) cut the making
    short at its next look at the session, and the next run made the file again from the start: the turn was
    held twice for one file, and under load the second file came after every other session's. The file is now
    made to its end, kept, and the rerun finds it ready."""
    from streamlit.testing.v1 import AppTest

    at = AppTest.from_string(A_CLICK_WHILE_MAKING, default_timeout=60).run()
    ask(at, "dl_report_make")
    assert not at.exception, [e.value for e in at.exception]
    assert at.session_state["makes"] == 1
    assert download_labels(at) == ["Report · 1 KB"]
    assert at.session_state[downloads.ASKED] == set()  # its request is done, not left to make it again
