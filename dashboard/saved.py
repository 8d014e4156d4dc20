"""Save an analysis to one file, and open it again: the inputs as given, the reading options, run names, the
decision rule, the slice and the view (:mod:`cophe_core.analysis`).

Opening a file re-reads and re-validates every input like an upload; the options and view it holds are put
into the session state before the widgets that show them are drawn, once per opened file.
"""

from __future__ import annotations

import hashlib

import downloads
import loading
import streamlit as st
import urlstate

from cophe_core import InputError, __version__
from cophe_core.aggregate import Aggregate, is_aggregate, read_aggregate
from cophe_core.analysis import Analysis, InputFile, creation_time, read_analysis, write_analysis

FILE_KEY = "analysis_file"
OPENED_KEY = "_analysis_opened"  # digest of the file whose settings were applied
# widget key of an optional upload → (name, bytes) it held in the saved analysis
FILES_KEY = "_analysis_files"
#: session keys saved as the view (when set): the pages' choices that are not in the URL
VIEW_KEYS = (
    "run",
    "levels_runs",
    "cmp_baseline",
    "cmp_figures",
    "cmp_a",
    "cmp_b",
    "cmp_family_level",
    "cmp_resamples",
    "slices_measure",
)
SLICE_KEYS = ("slice_dimension", "slice_edges", "slice_name")


def open_file(sb, max_mb: int) -> Analysis | Aggregate | None:
    """The "Open a saved analysis" uploader; the analysis it holds, checked (its settings applied once), or
    the aggregate analysis (counts of runs too large to upload, written by ``cophe aggregate``)."""
    f = sb.file_uploader(
        "Saved analysis (.cophe)",
        type=["cophe", "zip"],
        key=FILE_KEY,
        max_upload_size=max_mb,
        help="A file made with Save analysis, by `cophe score … --save`, or by `cophe aggregate` (the counts "
        "of runs too large to upload).",
    )
    if f is None:
        return None
    content = loading.content(f, max_mb)
    digest = hashlib.sha256(content).hexdigest()
    store = st.session_state.setdefault("_analyses", {})
    if digest not in store:
        try:
            store.clear()  # one opened analysis per session
            if is_aggregate(content):
                store[digest] = read_aggregate(content, name=f.name)
            else:
                store[digest] = read_analysis(content, name=f.name)
        except InputError as e:
            store[digest] = e
    found = store[digest]
    if isinstance(found, InputError):
        raise InputError(found.problem, fix=found.fix)
    if isinstance(found, Aggregate):
        if st.session_state.get(OPENED_KEY) != digest:
            st.session_state[OPENED_KEY] = digest
            urlstate.offer({"level": found.max_level})
        return found
    if st.session_state.get(OPENED_KEY) != digest:
        st.session_state[OPENED_KEY] = digest
        apply(found)
    return found


def apply(a: Analysis) -> None:
    """Put the analysis's rule, slice and view into the session, before the widgets are drawn."""
    state = st.session_state
    if a.rule:
        kind, value = a.rule
        state["rule_kind"] = "codes above a threshold" if kind == "threshold" else "each document's top k"
        state["threshold" if kind == "threshold" else "top_k"] = value
    for key, value in (a.slice or {}).items():
        if key in SLICE_KEYS:
            state[key] = value
    view = dict(a.view or {})
    for key in VIEW_KEYS:
        if key in view:
            state[key] = view[key]
    state[FILES_KEY] = {
        k: (f.name, f.data)
        for k, f in (("metadata_file", a.metadata), ("training_file", a.training))
        if f is not None
    }
    pending = {k: str(view[k]) for k in ("focus", "colour", "doc") if view.get(k) is not None}
    if a.options.get("max_level"):
        pending["level"] = a.options["max_level"]
    urlstate.offer(pending)
    if view.get("page"):
        state["_goto_page"] = view["page"]


def saved_file(key: str) -> tuple[str, bytes] | None:
    """A metadata or training file that came with the opened analysis (for the widget ``key``)."""
    return st.session_state.get(FILES_KEY, {}).get(key)


def snapshot() -> dict:
    """The session values an analysis saves, taken when the Save button is drawn."""
    state = st.session_state
    keys = ("_rule", "focus", "tree_colour", *VIEW_KEYS, *SLICE_KEYS)
    out = {k: state.get(k) for k in keys}
    for key in ("metadata_file", "training_file"):
        f = state.get(key)
        out[key] = (f.name, loading.content(f, loading.MAX_UPLOAD_MB)) if f is not None else saved_file(key)
    return out


def build(files: dict, page: str, onto, state: dict) -> Analysis:
    """The analysis of the current session: ``files`` as the sidebar read them (gold, runs, hierarchy and
    reading options), with the rule, the slice and the view from ``state`` (:func:`snapshot`)."""
    rule = state.get("_rule") if files.get("scored") else None
    extras = {k: InputFile(*state[k]) if state.get(k) else None for k in ("metadata_file", "training_file")}
    focus = state.get("focus")
    view = {k: state[k] for k in VIEW_KEYS if state.get(k) is not None}
    view["page"] = page
    if focus is not None and 0 <= focus < onto.n_nodes:
        view["focus"] = str(onto.node_names[focus])
    if state.get("tree_colour"):
        view["colour"] = state["tree_colour"]
    return Analysis(
        gold=InputFile(*files["gold"]),
        runs={run: InputFile(name, content) for run, name, content in files["runs"]},
        hierarchy=InputFile(*files["hierarchy"]) if files.get("hierarchy") else None,
        metadata=extras["metadata_file"],
        training=extras["training_file"],
        options={
            "ontology": files["ontology"],
            "system": files["system"],
            "doc_col": files["doc_col"],
            "code_col": files["code_col"],
            "header": files.get("header"),
            "max_level": files.get("max_level"),
        },
        rule=tuple(rule) if rule else None,
        slice={k: state[k] for k in SLICE_KEYS if state.get(k) is not None} or None,
        view=view,
        created=creation_time(),
        cophe_version=__version__,
        code_sets=dict(onto.code_sets),
    )


def save_button(sb, files: dict, page: str, onto) -> None:
    """The "Save analysis" download: one file that Open analysis restores."""
    state = snapshot()
    downloads.prepared(
        sb,
        "Save analysis",
        lambda: write_analysis(build(files, page, onto, state)),
        "analysis.cophe",
        "application/zip",
        key="save_analysis",
        source=(object(),),
        icon=":material/save:",
        help="One file with your inputs as given, the reading options, run names, decision rule, "
        "slice and view. Open it here later, or hand it to a colleague (Source: Open a saved "
        "analysis). It holds your files: share it as you would share them.",
    )
