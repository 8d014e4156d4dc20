"""A focused family is a family, not a node number: switching data keeps it when the family is there and drops it,
with a note, when it is not. The ICD-9 sample's 428 once stayed focused after a switch to the ICD-10 sample as
another node (focus=E13.3393), and carried into an upload's Compare tree and its exported report."""

from __future__ import annotations

from tests.app.conftest import goto, upload


def _focused(at) -> str | None:
    node = at.session_state["focus"] if "focus" in at.session_state else None  # noqa: SIM401 (no .get)
    return None if node is None else str(at.session_state["_ctx"].ontology.node_names[node])


def _focused_by_link(code: str):
    """The tree page opened from a link that focuses ``code`` (as a bookmark or a shared URL does)."""
    from streamlit.testing.v1 import AppTest

    from tests.app.conftest import APP

    at = AppTest.from_file(APP, default_timeout=120)
    at.query_params["focus"] = code
    at.run()
    goto(at, "views/tree.py").run()
    assert not at.exception, [e.value for e in at.exception]
    assert _focused(at) == code
    return at


def test_a_focus_absent_from_the_new_data_is_dropped_with_a_note():
    at = _focused_by_link("428")
    at.radio(key="source").set_value("Sample: ICD-10").run()
    assert not at.exception, [e.value for e in at.exception]
    assert _focused(at) is None
    assert any("The family in focus, 428, is not in these data" in i.value for i in at.info), [
        i.value for i in at.info
    ]


def test_a_focus_present_in_the_new_data_stays_on_the_same_family():
    at = _focused_by_link("401.9")
    at.radio(key="source").set_value("Upload files").run()  # nothing uploaded yet: no data, focus kept
    gold = b"doc_id,code\n1,401.9\n2,V10.3\n"
    upload(at, ("gold.csv", gold), [("run.csv", gold)])
    assert _focused(at) == "401.9"  # the same family in these data
