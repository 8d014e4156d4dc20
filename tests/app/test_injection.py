"""No user string is rendered as Markdown: a hierarchy title, a code, a run name or a document id written as
a Markdown image must reach the page escaped, or every viewer's browser would fetch the image."""

from __future__ import annotations

import pytest

from tests.app.conftest import goto, upload_with_hierarchy

BEACON = "http://beacon.invalid"
HIERARCHY = (
    f"child,parent,title\nroot,,All ![t]({BEACON}/root.png)\n"
    f"A,root,Alpha ![t]({BEACON}/a.png) **bold**\n"
    f"B,root,Beta [link]({BEACON}/b)\n"
    f"a1,A,first ![t]({BEACON}/a1.png)\na2,A,\nb1,B,\n"
).encode()
DOC = f"![d]({BEACON}/d.png)"
GOLD = f'doc_id,code\n"{DOC}",a1\n2,b1\n3,a1\n'.encode()
RUN = f'doc_id,code\n"{DOC}",a2\n2,b1\n3,a1\n3,a2\n'.encode()
RUN_FILE = f"![r]({BEACON}/r.png).csv"
RUN_NAME = f"![n]({BEACON}/n.png)"  # typed as the run's name: a file name cannot hold its slashes
PLAIN = {
    "arrow_data_frame",
    "dataframe",
    "table",
    "plotly_chart",
    "vega_lite_chart",  # its text is drawn as SVG text by Vega, which renders no Markdown and no link
    "json",
    "deck_gl_json_chart",
    "code",
}  # not rendered as Markdown (cells, figure JSON: escaped as HTML, tested in test_figures)
LABELS_ONLY = {"text_input", "selectbox", "multiselect"}  # their values and options are plain text


def _texts(node, out: list[tuple[str, str]]) -> None:
    children = getattr(node, "children", None)
    if children is not None:
        for child in children.values():
            _texts(child, out)
        return
    kind, proto = getattr(node, "type", ""), getattr(node, "proto", None)
    if proto is None or kind in PLAIN:
        return
    out.append((kind, f"{proto.label}\n{proto.help}" if kind in LABELS_ONLY else str(proto)))


def _unescaped(at) -> list[tuple[str, str]]:
    found: list[tuple[str, str]] = []
    _texts(at._tree, found)
    return [(kind, text[:300]) for kind, text in found if f"]({BEACON}" in text]


@pytest.fixture(scope="module")
def hostile():
    at = upload_with_hierarchy(
        ("tree.csv", HIERARCHY), ("gold.csv", GOLD), [(RUN_FILE, RUN), ("plain.csv", GOLD)]
    )
    at.text_input(key=f"run_name_0_{RUN_FILE}").set_value(RUN_NAME).run()
    assert not at.error, [e.value for e in at.error]
    assert at.session_state["_ctx"].scoring.run_names[0] == RUN_NAME
    return at


@pytest.mark.parametrize(
    "page, state",
    [
        ("views/levels.py", {}),
        ("views/tree.py", {"focus": None}),
        ("views/compare.py", {}),
        ("views/slices.py", {}),
        ("views/document.py", {"doc_id": DOC}),
        ("views/metrics.py", {}),
        ("views/export.py", {}),
        ("views/threshold.py", {}),
    ],
)
def test_no_page_renders_a_user_string_as_markdown(hostile, page, state):
    at = hostile
    for k, v in state.items():
        at.session_state[k] = v
    goto(at, page).run()
    assert not at.exception, [e.value for e in at.exception]
    assert _unescaped(at) == []


def test_the_tree_focused_on_a_hostile_title_escapes_it(hostile):
    at = hostile
    goto(at, "views/tree.py").run()
    onto = at.session_state["_ctx"].scoring.corpus.ontology
    at.session_state["focus"] = onto.codes["a1"]
    at.run()
    assert not at.exception, [e.value for e in at.exception]
    assert _unescaped(at) == []
