"""cophe dashboard: flat, set-based and CoPHE scores of ICD coding runs, by level and by family.

    streamlit run dashboard/app.py

This file sets up the page, draws the data sidebar and runs the chosen view.
Views live in ``views/``; all numbers come from ``cophe_core``.
"""

from __future__ import annotations

import sys
from pathlib import Path

import streamlit as st

HERE = Path(__file__).resolve().parent
for p in (HERE, HERE.parent):  # the dashboard modules, and cophe_core in a source checkout
    if str(p) not in sys.path:
        sys.path.insert(0, str(p))

import data  # noqa: E402
import errors  # noqa: E402

errors.setup_logging()

st.set_page_config(page_title="cophe · hierarchical evaluation", page_icon=":material/account_tree:", layout="wide")

PAGES = [
    st.Page(HERE / "views" / "levels.py", title="Scores by level", icon=":material/bar_chart:", default=True, url_path="levels"),
    st.Page(HERE / "views" / "tree.py", title="Code-family tree", icon=":material/account_tree:", url_path="tree"),
    st.Page(HERE / "views" / "compare.py", title="Compare runs", icon=":material/compare_arrows:", url_path="compare"),
    st.Page(HERE / "views" / "document.py", title="One document", icon=":material/description:", url_path="document"),
    st.Page(HERE / "views" / "metrics.py", title="More metrics", icon=":material/functions:", url_path="metrics"),
    st.Page(HERE / "views" / "threshold.py", title="Threshold", icon=":material/tune:", url_path="threshold"),
    st.Page(HERE / "views" / "export.py", title="Export", icon=":material/download:", url_path="export"),
]

page = st.navigation(PAGES)
try:
    st.session_state["_ctx"] = data.sidebar()
    st.sidebar.caption("cophe · CoPHE: Falis et al., EMNLP 2021. All figures are computed by cophe_core.")
    page.run()
except Exception as exc:  # the user sees a panel, never a traceback: theirs to fix, or ours to report
    errors.show_error(exc, page.title)
