"""The view, in one typed object read from the URL and written back to it here only: a link reproduces what the
user sees on a bundled sample, a reload keeps it, and a choice outlives the page that offers it.

:class:`View` holds every choice of the view by a stable name (a run's name, a level's id, a family's code),
never a node number: the page is the URL's path (``/tree``), the rest its query (see :data:`PARAMS`).

:func:`restore` reads the URL once per session, before any widget is drawn. The values wait in the View until
the code that knows the valid choices draws the widget: :func:`bind` sets the widget from the View when the URL
(or an opened analysis, :func:`offer`) gave the value, or when the widget was not on screen (the user left its
page: Streamlit forgets the value of a widget not drawn), so a stale or hand-edited link never raises.
After each run, :func:`publish` takes the values of the widgets on screen into the View and writes the URL.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, fields

import numpy as np
import streamlit as st

SAMPLE_PARAM = {"icd9": "Sample: ICD-9", "icd10": "Sample: ICD-10"}  # ?data= value → sidebar source
UPLOAD_SOURCE, OPEN_SOURCE = (
    "Upload files",
    "Open a saved analysis",
)  # sidebar sources (loading.UPLOAD, .OPEN)
# what the page says when a link (a bookmark, a shared URL) named uploaded files, which it cannot carry
LINKED_UPLOAD = (
    "This link pointed at uploaded files, which a link cannot carry: only the page and its choices came with "
    "it. Upload the gold standard and the runs again, or open the analysis saved from them (a .cophe file, "
    "made with Save analysis), which holds the files and the view."
)
_VIEW = "_view_state"


@dataclass
class View:
    """What the user looks at, by stable names. ``data``: ``icd9`` or ``icd10`` for a bundled sample, ``upload``
    for the user's files, which no link can carry; ``runs``: the runs on Scores by level, comma-separated;
    ``focus``: the focused family by its node name (the code, or ``level:key`` for a section or chapter);
    ``baseline``, ``a``, ``b``, ``figures``: the Compare page's choices; ``slice_by``, ``slice``, ``edges``: the
    sidebar's slice (what is sliced, the part shown, the bin edges), on every page while a slice is chosen.

    >>> v = View.from_query({"data": "icd9", "focus": "428", "a": "siblings", "node": "7"})
    >>> v.focus, v.a, sorted(v.given)
    ('428', 'siblings', ['a', 'data', 'focus'])
    >>> View(data="icd9", run="siblings", a="overcoder", b="siblings").query("compare")
    {'data': 'icd9', 'run': 'siblings', 'a': 'overcoder', 'b': 'siblings'}
    """

    data: str | None = None
    run: str | None = None
    level: str | None = None
    runs: str | None = None
    focus: str | None = None
    colour: str | None = None
    doc: str | None = None
    baseline: str | None = None
    a: str | None = None
    b: str | None = None
    figures: str | None = None
    slice_by: str | None = None
    slice: str | None = None
    edges: str | None = None
    given: set[str] = field(default_factory=set)  # values from the URL or an opened analysis, not yet applied

    @classmethod
    def from_query(cls, query: Mapping[str, str]) -> View:
        """The view a URL's query names (unknown parameters ignored)."""
        values = {k: str(query[k]) for k in PARAMS if k in query}
        return cls(**values, given=set(values))

    def query(self, page: str) -> dict[str, str]:
        """The URL's query for ``page``: the values it shows, those not taken yet kept too."""
        shown = {"data", "run", "level", "slice_by", "slice", "edges", *PAGE_PARAMS.get(page, ())}
        return {
            k: v for k in PARAMS if (v := getattr(self, k)) is not None and (k in shown or k in self.given)
        }


PARAMS = tuple(f.name for f in fields(View) if f.name != "given")  # the URL's parameters, in order
PAGE_PARAMS = {  # the parameters a page shows beside data, run and level
    "levels": ("runs",),
    "tree": ("focus", "colour"),
    "document": ("doc",),
    "compare": ("baseline", "figures", "a", "b"),
}
WIDGETS = {  # a View field → the key of the widget that chooses it (its value is the field's, as text)
    "run": "run",
    "runs": "levels_runs",
    "colour": "tree_colour",
    "baseline": "cmp_baseline",
    "figures": "cmp_figures",
    "a": "cmp_a",
    "b": "cmp_b",
    "slice_by": "slice_dimension",  # the keys of slicing.py's widgets
    "slice": "slice_name",
    "edges": "slice_edges",
}
NO_SLICE = "none"  # slice_by when everything is shown: then no slice is in the URL


def view() -> View:
    """The session's view."""
    if _VIEW not in st.session_state:
        st.session_state[_VIEW] = View()
    return st.session_state[_VIEW]


def restore() -> None:
    """Read the URL into the session's view once (on the first run of a session, so also after a reload); the
    data source goes straight into its widget."""
    if _VIEW in st.session_state:
        return
    v = st.session_state[_VIEW] = View.from_query(st.query_params)
    if v.data in SAMPLE_PARAM:
        st.session_state["source"] = SAMPLE_PARAM[v.data]
    elif v.data == "upload":
        st.session_state["source"] = UPLOAD_SOURCE


def offer(values: dict[str, str]) -> None:
    """Values to be taken like the URL's (a saved analysis's view), replacing what the view had."""
    v = view()
    for k, value in values.items():
        setattr(v, k, value)
    v.given |= set(values)


def take(name: str) -> str | None:
    """The URL's (or an opened analysis's) value for ``name``, once; None when there was none or it was taken."""
    v = view()
    if name not in v.given:
        return None
    v.given.discard(name)
    return getattr(v, name)


def bind(name: str, key: str, options: Sequence[str]) -> None:
    """Set widget ``key`` from the view's ``name`` (before the widget is drawn), if the value is one of
    ``options``: when the URL or an opened analysis gave it, or when the widget is not in the session (its page
    was left, and Streamlit forgot its value)."""
    v = view()
    given = name in v.given
    v.given.discard(name)
    value = getattr(v, name)
    if (given or key not in st.session_state) and value in options:
        st.session_state[key] = value


def take_choice(name: str, key: str, options: Sequence[str]) -> None:
    """Set widget ``key`` from the view's ``name`` if the URL or an opened analysis gave it and it is one of
    ``options``: the sidebar's run and level, always on screen, which the data's own defaults set otherwise."""
    value = take(name)
    if value in options:
        st.session_state[key] = value


def bind_runs(key: str, runs: list[str]) -> None:
    """Set a multiselect of runs from the view's comma-separated ``runs``, keeping the valid names."""
    v = view()
    given = "runs" in v.given
    v.given.discard("runs")
    if v.runs is not None and (given or key not in st.session_state):
        picked = [r for r in v.runs.split(",") if r in runs]
        if picked:
            st.session_state[key] = picked


def resolve_focus(onto) -> None:
    """Turn the URL's ``focus`` (a node name) into the focused node id of ``onto``."""
    name = take("focus")
    if name:
        hits = np.flatnonzero(onto.node_names == name)
        if len(hits):
            st.session_state["focus"] = int(hits[0])
            view().focus = name  # the family by name (state.check_focus)


def linked_upload() -> bool:
    """Whether the URL named uploaded files that are not there: a link cannot carry them."""
    return "data" in view().given and view().data == "upload"


def publish(page: str, ctx) -> None:
    """Take the view from the widgets on screen and the context, and write it into the URL (replaces the query).
    A widget not on screen leaves its value in the view: the Compare page's runs, when the user is elsewhere."""
    v = view()
    source = st.session_state.get("source")
    v.data = next((k for k, s in SAMPLE_PARAM.items() if s == source), "upload")
    if source != UPLOAD_SOURCE or (ctx is not None and ctx.scoring is not None):
        v.given.discard("data")  # the upload the link named is given, or the user chose other data
    if ctx is not None and ctx.scoring is not None:
        v.run, v.level = ctx.run, ctx.max_level
        for name, key in WIDGETS.items():
            value = st.session_state.get(key)
            if value is not None and name not in v.given:
                setattr(v, name, ",".join(value) if isinstance(value, list) else str(value))
        if v.slice_by in (None, NO_SLICE):
            v.slice_by = v.slice = v.edges = None
        elif v.slice_by != "code_frequency":
            v.edges = None  # bin edges cut code frequencies only
        if page == "levels" and v.runs is not None and v.runs.split(",") == list(ctx.scoring.run_names):
            v.runs = None  # every run: nothing to say
        if page == "tree":
            v.colour = v.colour or "balance"
        if st.session_state.get("doc_id"):
            v.doc = str(st.session_state["doc_id"])
    q = v.query(page)
    if dict(st.query_params) != q:
        st.query_params.from_dict(q)
