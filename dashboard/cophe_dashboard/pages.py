"""The dashboard's pages: each one's address, title and icon, and the view module whose ``show()`` draws it.

A view links to another page through :func:`page`; the view's module is imported when the page is made, so
that views may link to each other without importing each other.
"""

from __future__ import annotations

import importlib

import streamlit as st
from streamlit.navigation.page import StreamlitPage

# url path (also the view's module in cophe_dashboard.views): title, icon; in the navigation's order
PAGES = {
    "levels": ("Scores by level", ":material/bar_chart:"),
    "tree": ("Code-family tree", ":material/account_tree:"),
    "compare": ("Compare runs", ":material/compare_arrows:"),
    "slices": ("Slices", ":material/filter_alt:"),
    "document": ("One document", ":material/description:"),
    "metrics": ("More metrics", ":material/functions:"),
    "threshold": ("Threshold", ":material/tune:"),
    "export": ("Export", ":material/download:"),
}
DEFAULT = "levels"


def page(url_path: str) -> StreamlitPage:
    """The page at ``url_path``, drawn by ``cophe_dashboard.views.<url_path>.show``."""
    title, icon = PAGES[url_path]
    view = importlib.import_module(f"cophe_dashboard.views.{url_path}")
    return st.Page(view.show, title=title, icon=icon, url_path=url_path, default=url_path == DEFAULT)


def all_pages() -> list[StreamlitPage]:
    """Every page, in the navigation's order."""
    return [page(url_path) for url_path in PAGES]
