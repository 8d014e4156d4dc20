"""The view in one object, in the URL (issue 25): the Compare page's choices outlive a visit to another page
and travel in a link, and a link that named uploaded files says so."""

from __future__ import annotations

from streamlit.testing.v1 import AppTest

from tests.app.conftest import APP, goto, run_app

CHOSEN = {
    "cmp_baseline": "overcoder",
    "cmp_figures": "F1 by level",
    "cmp_a": "conservative",
    "cmp_b": "model",
}
IN_URL = {"baseline": "overcoder", "figures": "F1 by level", "a": "conservative", "b": "model"}


def _compare_choices(at) -> dict[str, str]:
    return {"cmp_figures": at.radio(key="cmp_figures").value} | {
        k: at.selectbox(key=k).value for k in ("cmp_baseline", "cmp_a", "cmp_b")
    }


def _choose(at) -> None:
    at.selectbox(key="cmp_baseline").set_value(CHOSEN["cmp_baseline"]).run()
    at.radio(key="cmp_figures").set_value(CHOSEN["cmp_figures"]).run()
    at.selectbox(key="cmp_a").set_value(CHOSEN["cmp_a"]).run()
    at.selectbox(key="cmp_b").set_value(CHOSEN["cmp_b"]).run()
    assert not at.exception, [e.value for e in at.exception]


def test_the_compare_choices_outlive_a_visit_to_another_page():
    at = run_app("views/compare.py")
    _choose(at)
    goto(at, "views/levels.py").run()
    goto(at, "views/tree.py").run()  # two runs away: Streamlit has forgotten the page's widgets
    goto(at, "views/compare.py").run()
    assert not at.exception, [e.value for e in at.exception]
    assert _compare_choices(at) == CHOSEN


def test_the_compare_choices_are_in_the_url_and_a_link_restores_them():
    at = run_app("views/compare.py")
    _choose(at)
    # AppTest of Streamlit 1.56 (the declared floor) gives each query value as a list of one
    got = {k: at.query_params[k] for k in IN_URL}
    assert {k: v[0] if isinstance(v, list) and len(v) == 1 else v for k, v in got.items()} == IN_URL
    linked = AppTest.from_file(APP, default_timeout=120)
    for k, v in {"data": "icd9", **IN_URL}.items():
        linked.query_params[k] = v
    linked.run()
    goto(linked, "views/compare.py").run()
    assert not linked.exception, [e.value for e in linked.exception]
    assert _compare_choices(linked) == CHOSEN


def test_a_link_to_a_run_no_longer_there_falls_back_to_the_default():
    linked = AppTest.from_file(APP, default_timeout=120)
    linked.query_params["a"] = "gone"
    linked.query_params["figures"] = "<b>no such</b>"
    linked.run()
    goto(linked, "views/compare.py").run()
    assert not linked.exception, [e.value for e in linked.exception]
    assert linked.selectbox(key="cmp_a").value == "siblings"
    assert linked.radio(key="cmp_figures").value == "Headline figures"


def test_a_link_to_uploaded_files_says_so_and_offers_a_saved_analysis():
    linked = AppTest.from_file(APP, default_timeout=120)
    linked.query_params["data"] = "upload"
    linked.query_params["run"] = "my_model"
    linked.run()
    assert not linked.exception, [e.value for e in linked.exception]
    said = " ".join(i.value for i in linked.info).replace("\\", "")
    assert "This link pointed at uploaded files, which a link cannot carry" in said, said
    assert "a .cophe file" in said
    linked.button(key="open_from_link").click().run()
    assert linked.radio(key="source").value == "Open a saved analysis"
    assert "Open a file made with Save analysis." in " ".join(i.value for i in linked.info).replace("\\", "")


def test_choosing_upload_by_hand_says_nothing_of_a_link():
    at = run_app()
    at.radio(key="source").set_value("Upload files").run()
    said = " ".join(i.value for i in at.info).replace("\\", "")
    assert "Upload a gold standard and at least one model run" in said and "link" not in said
    assert not [b for b in at.button if b.key == "open_from_link"]


def _one(value):
    """AppTest of Streamlit 1.56 (the declared floor) gives each query value as a list of one."""
    return value[0] if isinstance(value, list) and len(value) == 1 else value


def test_the_slice_is_in_the_url_and_a_link_restores_it():
    at = run_app("views/levels.py")
    at.selectbox(key="slice_dimension").set_value("code_frequency").run()
    at.text_input(key="slice_edges").set_value("5, 50").run()
    keys = [
        s.key for s in at.session_state["_slices"]
    ]  # the radio's options are its labels at Streamlit 1.56
    at.radio(key="slice_name").set_value(keys[-1]).run()
    assert not at.exception, [e.value for e in at.exception]
    chosen = at.radio(key="slice_name").value
    url = {k: _one(at.query_params[k]) for k in ("slice_by", "slice", "edges")}
    assert url == {"slice_by": "code_frequency", "slice": chosen, "edges": "5, 50"}, keys
    linked = AppTest.from_file(APP, default_timeout=120)
    for k, v in {"data": "icd9", **url}.items():
        linked.query_params[k] = v
    linked.run()
    goto(linked, "views/tree.py").run()  # the slice holds on every page
    assert not linked.exception, [e.value for e in linked.exception]
    assert linked.selectbox(key="slice_dimension").value == "code_frequency"
    assert linked.text_input(key="slice_edges").value == "5, 50"
    assert linked.radio(key="slice_name").value == chosen
    # back to everything: the slice leaves the URL
    linked.selectbox(key="slice_dimension").set_value("none").run()
    assert "slice_by" not in linked.query_params and "slice" not in linked.query_params


def test_a_link_to_a_slice_the_box_would_refuse_keeps_the_default():
    linked = AppTest.from_file(APP, default_timeout=120)
    for k, v in {"data": "icd9", "slice_by": "code_frequency", "edges": "100, 10"}.items():
        linked.query_params[k] = v
    linked.run()
    assert not linked.exception, [e.value for e in linked.exception]
    assert linked.text_input(key="slice_edges").value == "10, 100"
