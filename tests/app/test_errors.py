"""An error that is ours is not blamed on the user; an input problem is shown as it is."""

from __future__ import annotations

from cophe_core.breakdown.families import within_family  # noqa: E402
from cophe_dashboard import errors
from tests.app.conftest import run_app, upload


def test_an_unexpected_error_says_it_is_a_fault_of_the_tool_and_where_the_log_is(monkeypatch):
    def broken(*args, **kwargs):
        raise RuntimeError("boom in within_family")

    monkeypatch.setattr("cophe_core.breakdown.families.within_family", broken)
    at = run_app()
    assert not at.exception  # a panel, not a traceback
    shown = " ".join(e.value for e in at.error).replace("\\", "")
    assert "This is a fault in cophe, not in your files" in shown
    assert "RuntimeError: boom in within_family" in shown
    assert str(errors.LOG_PATH) in shown
    assert "check the input" not in shown.lower()
    ref = shown.split("error reference `")[1][:8]
    assert ref in errors.LOG_PATH.read_text()  # the traceback is in the log under that reference
    assert within_family is not broken


def test_an_input_problem_is_shown_as_the_users_to_fix():
    at = upload(run_app(), ("gold.csv", b"\x00\x01binary junk"), [("run.csv", b"doc_id,code\n1,401.9\n")])
    shown = " ".join(e.value for e in at.error).replace("\\", "")
    assert "gold.csv: this is not a text file" in shown
    assert "fault in cophe" not in shown


def test_the_fault_message_names_the_error_and_the_log():
    text = errors.fault_message(KeyError("x"), "ab12cd34")
    assert text.startswith("**This is a fault in cophe, not in your files.** KeyError")
    assert "ab12cd34" in text and str(errors.LOG_PATH) in text
