"""AppTest helpers: run the real dashboard script headless."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from streamlit.testing.v1 import AppTest

from cophe_dashboard import pages
from tests.conftest import ROOT, SAMPLE

APP = str(ROOT / "dashboard" / "app.py")


# every page of the dashboard, by its view's file as the tests name them (goto takes these or the url paths)
PAGES = [
    "views/levels.py",
    "views/tree.py",
    "views/compare.py",
    "views/slices.py",
    "views/document.py",
    "views/metrics.py",
    "views/export.py",
    "views/threshold.py",
]


try:  # the hash st.Page gives its url path: BLAKE2b from Streamlit 1.57 or so, MD5 at 1.56 (the floor)
    from streamlit.util import calc_hash as page_hash
except ImportError:
    from streamlit.util import calc_md5 as page_hash


def goto(at: AppTest, page: str) -> AppTest:
    """Switch ``at`` to a page, named by its view ("views/tree.py") or its url path ("tree"); then ``run()``.

    The pages are functions (``st.Page(show, url_path=...)``), and AppTest.switch_page finds file pages only
    (Streamlit 1.67: a callable page registers no script path). A page's hash is its url path's, which is
    what switch_page sets for the next run; the page computes it (the hash function differs between
    Streamlit releases: MD5 at 1.56, BLAKE2b later).
    """
    url_path = Path(page).stem
    assert url_path in pages.PAGES, f"no page {page!r}: {list(pages.PAGES)}"
    at._page_hash = page_hash(url_path)
    return at


def run_app(page: str | None = None, **state) -> AppTest:
    at = AppTest.from_file(APP, default_timeout=120)
    for k, v in state.items():
        at.session_state[k] = v
    at.run()
    if page:
        goto(at, page)
        at.run()
    assert not at.exception, [e.value for e in at.exception]
    return at


def choose_segment(at: AppTest, key: str, value: str) -> AppTest:
    """Choose ``value`` in the segmented control ``key``, then ``run()``. AppTest gained segmented_control
    after Streamlit 1.56 (the lowest version): there, the choice is set as the widget would keep it."""
    if hasattr(at, "segmented_control"):
        return at.segmented_control(key=key).set_value(value).run()
    at.session_state[key] = value
    return at.run()


def upload(at: AppTest, gold: tuple[str, bytes], runs: list[tuple[str, bytes]]) -> AppTest:
    at.radio(key="source").set_value("Upload files").run()
    at.file_uploader(key="gold_file").set_value((gold[0], gold[1], "text/csv"))
    at.file_uploader(key="run_files").set_value([(n, b, "text/csv") for n, b in runs])
    at.run()
    assert not at.exception, [e.value for e in at.exception]
    return at


def upload_with_hierarchy(
    hierarchy: tuple[str, bytes], gold: tuple[str, bytes], runs: list[tuple[str, bytes]]
) -> AppTest:
    """A fresh app with a hierarchy of the user's ("My own hierarchy") and the files scored against it."""
    at = run_app()
    at.radio(key="source").set_value("Upload files").run()
    at.selectbox(key="ontology").set_value("custom").run()
    kind = "application/json" if hierarchy[0].endswith(".json") else "text/csv"
    at.file_uploader(key="hierarchy_file").set_value((hierarchy[0], hierarchy[1], kind))
    return upload(at, gold, runs)


def plotly_specs(at: AppTest) -> list[dict]:
    """The Plotly figure JSON of every chart on the page (charts are unknown elements in AppTest)."""
    return [json.loads(el.proto.spec) for el in at.get("plotly_chart")]


def plotly_array(value) -> list:
    """A figure JSON's array as a list: Plotly writes numeric arrays as ``{"dtype", "bdata"}`` (base64)."""
    if isinstance(value, dict) and "bdata" in value:
        import base64

        import numpy as np

        return np.frombuffer(base64.b64decode(value["bdata"]), dtype=value["dtype"]).tolist()
    return list(value)


def is_tree(trace: dict) -> bool:
    """Whether ``trace`` is the code-family tree's tiles (plotting.tree_figure): one bar per tile, named by its
    id, laid from its start (``base``) down its depth's column."""
    return trace.get("type") == "bar" and "ids" in trace and "base" in trace


@pytest.fixture
def sample_bytes():
    return {p.name: p.read_bytes() for p in SAMPLE.glob("*.csv")}


def asking(at: AppTest) -> list[str]:
    """The words of the buttons that ask for a file to be made (downloads.prepared draws them as pills)."""
    return [g.options[0] for g in at.button_group if g.key and "_make" in g.key]


def ask(at: AppTest, key: str) -> AppTest:
    """Click the pill ``key`` that asks for a file to be made (its one option), then ``run()``."""
    pill = at.button_group(key=key)
    return pill.set_value(pill.options[0]).run()
