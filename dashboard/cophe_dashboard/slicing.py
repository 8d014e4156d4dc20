"""The slice the user looks at: the sidebar section that chooses it, and the banner that says so on every page.

A slice is a mask on the cached matrices (:mod:`cophe_core.breakdown.slices`): choosing one re-reads nothing. Its
choices live in the session state under the keys below, so that a saved analysis can restore them.
"""

from __future__ import annotations

import contextlib

import streamlit as st

from cophe_core import InputError
from cophe_core.breakdown.slices import (
    MAX_EDGES,
    Slice,
    code_frequency,
    code_frequency_slices,
    codes_in_play,
    gold_count_slices,
    metadata_columns,
    metadata_slices,
    read_metadata,
    training_frequency,
)
from cophe_core.breakdown.slices import parse_edges as core_parse_edges
from cophe_core.scale.aggregate import Aggregate, counts_only
from cophe_dashboard import loading, saved, state, urlstate
from cophe_dashboard.components import md
from cophe_dashboard.errors import said

NONE = "none"
FREQUENCY = "code_frequency"
GOLD_COUNT = "gold_codes"
META = "meta:"  # + a metadata column
DIMENSION_KEY, SLICE_KEY, EDGES_KEY = "slice_dimension", "slice_name", "slice_edges"
META_FILE_KEY, TRAINING_FILE_KEY = "metadata_file", "training_file"
DEFAULT_EDGES = "10, 100"
DIMENSIONS = {
    NONE: "Everything",
    FREQUENCY: "Codes, by how often they occur",
    GOLD_COUNT: "Documents, by their number of gold codes",
}


def parse_edges(text: str) -> tuple[int, ...]:
    """Bin edges typed as "10, 100": increasing whole numbers of documents, at most
    :data:`~cophe_core.breakdown.slices.MAX_EDGES` of them, else InputError saying so (the core's own check, so a saved
    view is held to the same bound as the box)."""
    return core_parse_edges(text)


def uploaded(key: str) -> tuple[str, bytes] | None:
    """The file of an optional uploader, or the one that came with an opened analysis."""
    f = st.session_state.get(key)
    limit = loading.MAX_RUN_UPLOAD_MB if key == TRAINING_FILE_KEY else loading.MAX_UPLOAD_MB
    return (f.name, loading.content(f, limit)) if f is not None else saved.saved_file(key)


def sidebar(scoring, system: str = "auto") -> Slice | None:
    """The "Slice" section of the sidebar; returns the chosen slice (None: everything)."""
    if counts_only(scoring):  # its slices are counted already
        return _aggregate_sidebar(scoring)
    sb = st.sidebar
    active = st.session_state.get(DIMENSION_KEY, NONE) != NONE
    with sb.expander("Slice: look at part of the data", expanded=active, icon=":material/filter_alt:"):
        meta = _metadata(scoring)
        options = [*DIMENSIONS, *(META + c for c in (metadata_columns(meta) if meta is not None else []))]
        urlstate.bind("slice_by", DIMENSION_KEY, options)  # a link's or an opened analysis's slice
        if st.session_state.get(DIMENSION_KEY) not in options:
            st.session_state[DIMENSION_KEY] = NONE
        dimension = st.selectbox(
            "Look at",
            options,
            key=DIMENSION_KEY,
            format_func=dimension_words,
            help="Every page then shows only that part: the rare codes, the long documents, "
            "one admission type… Upload a table of document details below to slice by them.",
        )
        slices = _slices(scoring, dimension, meta, system)
        st.session_state["_slices"] = slices  # the Slices page scores them all
        st.file_uploader(
            "Document details (optional)",
            type=["csv", "tsv", "txt", "parquet"],
            key=META_FILE_KEY,
            max_upload_size=loading.MAX_UPLOAD_MB,
            help="A table with a doc_id column and any others (length, admission type, hospital, "
            "year); each column becomes a way to slice. Numbers are cut into quarters.",
        )
        if not slices:
            return None
        keys = [s.key for s in slices]
        urlstate.bind("slice", SLICE_KEY, keys)
        if st.session_state.get(SLICE_KEY) not in keys:
            st.session_state[SLICE_KEY] = keys[0]
        by_key = {s.key: s for s in slices}
        chosen = st.radio(
            "Show only", keys, key=SLICE_KEY, format_func=lambda k: f"{by_key[k].name} ({by_key[k].size:,})"
        )
        return by_key[chosen]


def _aggregate_sidebar(agg: Aggregate) -> Slice | None:
    """An aggregate analysis's slices: the code-frequency slices counted when it was written, nothing else
    (the documents' details and codes are not in it)."""
    options = [NONE, FREQUENCY] if agg.slices else [NONE]
    active = st.session_state.get(DIMENSION_KEY, NONE) != NONE
    with st.sidebar.expander(
        "Slice: look at part of the data", expanded=active, icon=":material/filter_alt:"
    ):
        if st.session_state.get(DIMENSION_KEY) not in options:
            st.session_state[DIMENSION_KEY] = NONE
        dimension = st.selectbox("Look at", options, key=DIMENSION_KEY, format_func=dimension_words)
        edges = ", ".join(map(str, agg.slice_edges or []))
        st.caption(
            f"An aggregate analysis holds the slices counted when it was written (codes by how often they "
            f"occur, edges {edges} documents)."
            if agg.slices
            else "This aggregate analysis was written without slices (cophe aggregate --slice-edges)."
        )
        st.session_state["_slices"] = list(agg.slices)
        if dimension == NONE:
            return None
        keys = [s.key for s in agg.slices]
        if st.session_state.get(SLICE_KEY) not in keys:
            st.session_state[SLICE_KEY] = keys[0]
        by_key = {s.key: s for s in agg.slices}
        chosen = st.radio(
            "Show only", keys, key=SLICE_KEY, format_func=lambda k: f"{by_key[k].name} ({by_key[k].size:,})"
        )
        return by_key[chosen]


def shown_slices(scoring) -> list[Slice]:
    """The slices of the dimension chosen in the sidebar; with none chosen, codes by frequency (10, 100)."""
    if counts_only(scoring):
        return list(scoring.slices)
    return st.session_state.get("_slices") or state.memo(frequency_slices, scoring.corpus, (10, 100))


def dimension_words(option: str) -> str:
    return f"Documents, by {option.removeprefix(META)}" if option.startswith(META) else DIMENSIONS[option]


def _metadata(scoring):
    """The uploaded document details, parsed once per content (None when none, or unreadable: said)."""
    file = uploaded(META_FILE_KEY)
    if file is None:
        return None
    try:
        return state.memo(_read_metadata, loading.file_digest(*file), file)
    except InputError as e:
        st.error(md(said(e)))
        return None


def _slices(scoring, dimension: str, meta, system: str) -> list[Slice]:
    """The slices of ``dimension`` (``system``: how undotted ICD-9 codes of a training file read)."""
    corpus = scoring.corpus
    if dimension == FREQUENCY:
        if (linked := urlstate.take("edges")) is not None:  # a link's edges, if the box would take them
            with contextlib.suppress(InputError):  # edges the box would refuse: it keeps its own
                st.session_state[EDGES_KEY] = ", ".join(map(str, parse_edges(linked)))
        st.session_state.setdefault(
            EDGES_KEY, DEFAULT_EDGES
        )  # in the state, so an opened analysis can set it
        st.text_input(
            "Bin edges (documents)",
            key=EDGES_KEY,
            help="Codes seen in fewer documents than the first edge are rare, and so on up. "
            f"Up to {MAX_EDGES} edges, separated by commas, such as 10, 100.",
        )
        st.file_uploader(
            "Training labels (optional)",
            type=loading.UPLOAD_TYPES,
            key=TRAINING_FILE_KEY,
            max_upload_size=loading.MAX_RUN_UPLOAD_MB,
            help="Papers call a code rare by its frequency in the training split: upload "
            "its labels (doc_id,code) to count there instead of in the gold standard.",
        )
        try:
            edges = parse_edges(st.session_state.get(EDGES_KEY) or DEFAULT_EDGES)
        except InputError as e:
            st.error(md(said(e)))
            return []
        file = uploaded(TRAINING_FILE_KEY)
        if file is None:
            return state.memo(frequency_slices, corpus, edges)
        try:
            return state.memo(_training_slices, corpus, loading.file_digest(*file), edges, system, file)
        except InputError as e:
            st.error(md(said(e)))
            return []
    if dimension == GOLD_COUNT:
        return state.memo(gold_count_slices, corpus.gold)
    file = uploaded(META_FILE_KEY)
    if dimension.startswith(META) and meta is not None and file is not None:
        column = dimension.removeprefix(META)
        return state.memo(metadata_slices, meta, corpus.docs, column)
    return []


def frequency_slices(corpus, edges: tuple[int, ...]) -> list[Slice]:
    """The codes by their number of gold documents, cut at ``edges``."""
    return code_frequency_slices(code_frequency(corpus.gold), edges, in_play=in_play(corpus))


def _read_metadata(digest: str, _file: tuple[str, bytes]):
    """A table of document details (kept under the digest of its name and bytes)."""
    return read_metadata(_file[1], name=_file[0])


def _training_slices(
    corpus, digest: str, edges: tuple[int, ...], system: str, _file: tuple[str, bytes]
) -> list[Slice]:
    """The codes by their frequency in the training labels ``_file`` (named by ``digest``)."""
    raw = loading.read_upload(*_file, gold=True)
    freq = training_frequency(raw, corpus, system=system).frequency
    return code_frequency_slices(freq, edges, in_play=in_play(corpus), source="the training labels")


def in_play(corpus):
    """The label columns with a gold or predicted code in any run."""
    return codes_in_play(corpus.gold, *corpus.runs.values())


def banner(ctx, page_title: str) -> None:
    """Above every page: the slice shown, and a way back to everything."""
    s = ctx.slice
    if s is None:
        return
    with st.container(border=True):
        left, right = st.columns([5, 1])
        left.markdown(
            f":material/filter_alt: **Showing only {md(s.name)}** · {md(s.dimension)}. {md(s.describe())}"
        )
        right.button("Show everything", key="slice_clear", on_click=clear, type="tertiary")
        if page_title == "Threshold":
            st.caption(
                "The threshold curve and the ranking figures use every document and code: they do not "
                "follow the slice."
            )


def clear() -> None:
    st.session_state[DIMENSION_KEY] = NONE
