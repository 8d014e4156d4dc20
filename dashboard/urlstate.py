"""The view in the URL: a link reproduces what the user sees on a bundled sample, and a reload keeps it.

The page is the URL's path (``/tree``); the rest lives in its query: ``data`` (``icd9`` or ``icd10`` for a
bundled sample, ``upload`` for the user's files, which no link can carry), ``run``, ``level`` (the highest
level scored), ``runs`` (the runs on the levels page), ``focus`` (the focused family, by its node name:
the code, or ``level:key`` for a section or chapter), ``colour`` (the tree's colour) and ``doc`` (the
document shown).

:func:`restore` reads the URL once per session, before any widget is drawn: what it can check at once (the
data source) goes straight into the widget state; the rest waits in a pending dict until the code that
knows the valid choices takes it (:func:`take`), so a stale or hand-edited link never raises. After each
run, :func:`publish` writes the current view back.
"""

from __future__ import annotations

import numpy as np
import streamlit as st

SAMPLE_PARAM = {"icd9": "Sample: ICD-9", "icd10": "Sample: ICD-10"}  # ?data= value → sidebar source
_PENDING = "_url_pending"


def restore() -> None:
    """Read the URL into the session once (on the first run of a session, so also after a reload)."""
    if "_url_read" in st.session_state:
        return
    st.session_state["_url_read"] = True
    q = st.query_params
    if q.get("data") in SAMPLE_PARAM:
        st.session_state["source"] = SAMPLE_PARAM[q["data"]]
    elif q.get("data") == "upload":
        st.session_state["source"] = "Upload files"
    st.session_state[_PENDING] = {
        k: q[k] for k in ("run", "level", "runs", "focus", "colour", "doc") if k in q
    }


def offer(values: dict[str, str]) -> None:
    """Values to be taken like the URL's (a saved analysis's view), replacing what the URL left."""
    st.session_state.setdefault(_PENDING, {}).update(values)


def take(name: str) -> str | None:
    """The URL's value for ``name``, once; None when the URL had none or it was taken already."""
    return st.session_state.get(_PENDING, {}).pop(name, None)


def take_choice(name: str, key: str, options: list[str]) -> None:
    """Set widget ``key`` from the URL's ``name`` if it is one of ``options`` (before the widget is drawn)."""
    value = take(name)
    if value in options:
        st.session_state[key] = value


def take_runs(key: str, runs: list[str]) -> None:
    """Set a multiselect of runs from the URL's comma-separated ``runs``, keeping the valid names."""
    value = take("runs")
    if value is not None:
        picked = [r for r in value.split(",") if r in runs]
        if picked:
            st.session_state[key] = picked


def resolve_focus(onto) -> None:
    """Turn the URL's ``focus`` (a node name) into the focused node id of ``onto``."""
    name = take("focus")
    if name:
        hits = np.flatnonzero(onto.node_names == name)
        if len(hits):
            st.session_state["focus"] = int(hits[0])
            st.session_state["focus_name"] = name  # the family by name too (state.check_focus)


def publish(page: str, ctx) -> None:
    """Write the view's state into the URL (only what differs from nothing; replaces the query)."""
    source = st.session_state.get("source")
    data = next((k for k, v in SAMPLE_PARAM.items() if v == source), "upload")
    q: dict[str, str] = {"data": data}
    if ctx is not None and ctx.scoring is not None:
        q["run"] = ctx.run
        q["level"] = ctx.max_level
        runs = st.session_state.get("levels_runs")
        if page == "levels" and runs is not None and list(runs) != list(ctx.scoring.run_names):
            q["runs"] = ",".join(runs)
        if page == "tree":
            focus = st.session_state.get("focus")
            onto = ctx.ontology
            if focus is not None and 0 <= focus < onto.n_nodes:
                q["focus"] = str(onto.node_names[focus])
            q["colour"] = st.session_state.get("tree_colour", "balance")
        if page == "document" and st.session_state.get("doc_id"):
            q["doc"] = str(st.session_state["doc_id"])
    pending = st.session_state.get(_PENDING, {})
    q.update({k: v for k, v in pending.items() if k not in q})  # not yet taken: keep them in the link
    if dict(st.query_params) != q:
        st.query_params.from_dict(q)
