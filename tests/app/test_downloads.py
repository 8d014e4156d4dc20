"""Downloads exist before their buttons are drawn: a file is bytes in the page, never made on click."""

from __future__ import annotations

import re

import pandas as pd
import pytest

from cophe_dashboard import downloads
from tests.app.conftest import run_app


def download_labels(at) -> list[str]:
    return [b.label for b in at.get("download_button")]


def test_no_download_is_made_on_click():
    """Every download button of every page carries its file (a URL), none a deferred maker."""
    for page in ("views/export.py", "views/levels.py", "views/tree.py", "views/compare.py"):
        at = run_app(page)
        if page == "views/levels.py":  # its downloads are the chart's, drawn on request
            at.toggle(key="levels_chart_on").set_value(True).run()
        buttons = at.get("download_button")
        assert buttons, page
        for b in buttons:
            assert b.proto.url and not b.proto.deferred_file_id, (page, b.label)


def test_a_report_is_made_on_request_then_downloaded_and_kept():
    at = run_app("views/export.py")
    assert "Report for run siblings" in [b.label for b in at.button]
    at.button(key="dl_report_make").click().run()
    assert not at.exception
    label = next(x for x in download_labels(at) if x.startswith("Report for run siblings"))
    assert re.fullmatch(r"Report for run siblings · (\d[\d,]* KB|\d+\.\d MB)", label), label
    at.run()  # a rerun with the same inputs keeps the file: no second click
    assert label in download_labels(at)
    at.selectbox(key="run").set_value("overcoder").run()  # another run: its report is made on request again
    assert "Report for run overcoder" in [b.label for b in at.button]
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
