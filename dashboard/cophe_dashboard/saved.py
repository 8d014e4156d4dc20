"""Save an analysis to one file, and open it again: the inputs as given, the reading options, run names, the
decision rule, the slice and the view (:mod:`cophe_core.output.analysis`).

Opening a file re-reads and re-validates every input like an upload; the options and view it holds are put
into the session state before the widgets that show them are drawn, once per opened file.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable

import streamlit as st

from cophe_core import InputError, Scoring, __version__
from cophe_core.output.analysis import Analysis, InputFile, creation_time, read_analysis, write_analysis
from cophe_core.output.plotting import COLOUR_BY
from cophe_core.scale.aggregate import Aggregate
from cophe_core.scale.aggregate_reader import is_aggregate, read_aggregate
from cophe_dashboard import downloads, loading, urlstate
from cophe_dashboard.components import md
from cophe_dashboard.texts import MEASURES

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
PENDING_KEY = "_analysis_view"  # the opened analysis's view and slice, until the data are read
DROPPED_KEY = "_analysis_dropped"  # the notes of the saved values left out
TOP_K_MAX_KEY = "_top_k_max"  # the k slider's end: 30, or a larger k an opened analysis holds
THRESHOLD_MIN_KEY = "_threshold_min"  # the threshold slider's start: 0.01, or a smaller saved threshold
#: the choices of the Compare page's "Figures" and "Resamples" (the page's own lists; a test keeps them equal)
FIGURE_SETS = ("Headline figures", "Precision and recall", "F1 by level", "Per-code averages by level")
RESAMPLE_CHOICES = (200, 500, 1000, 2000)


def open_file(sb, max_mb: int) -> Analysis | Aggregate | None:
    """The "Open a saved analysis" uploader; the analysis it holds, checked (its settings applied once), or
    the aggregate analysis (counts of runs too large to upload, written by ``cophe aggregate``)."""
    f = sb.file_uploader(
        "Saved analysis (.cophe)",
        type=["cophe", "zip"],
        key=FILE_KEY,
        max_upload_size=max_mb,
        help="A file made with Save analysis, by `cophe score … --save`, or by `cophe aggregate` (the counts "
        "of runs too large to upload). " + loading.MB_HELP,
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
    if not isinstance(found, Analysis):  # an aggregate analysis
        if st.session_state.get(OPENED_KEY) != digest:
            st.session_state[OPENED_KEY] = digest
            urlstate.offer({"level": found.max_level})
        return found
    if st.session_state.get(OPENED_KEY) != digest:
        st.session_state[OPENED_KEY] = digest
        apply(found)
    return found


def apply(a: Analysis) -> None:
    """Put the analysis's rule into the session, before the widgets are drawn; its slice and view wait for
    :func:`restore_view`, which checks them against the data once it is read."""
    state = st.session_state
    if a.rule:
        kind, value = a.rule
        state["rule_kind"] = "codes above a threshold" if kind == "threshold" else "each document's top k"
        state["threshold" if kind == "threshold" else "top_k"] = value
        # the CLI takes any k and any threshold in (0, 1]: the sliders reach it (and stay so, not to jump)
        if kind == "top_k":
            state[TOP_K_MAX_KEY] = max(state.get(TOP_K_MAX_KEY, 30), value)
        else:
            state[THRESHOLD_MIN_KEY] = min(state.get(THRESHOLD_MIN_KEY, 0.01), value)
    state[PENDING_KEY] = {**dict(a.view or {}), **{"slice": dict(a.slice or {})}}
    state[DROPPED_KEY] = []
    state[FILES_KEY] = {
        k: (f.name, f.data)
        for k, f in (("metadata_file", a.metadata), ("training_file", a.training))
        if f is not None
    }
    if a.options.get("max_level"):
        urlstate.offer({"level": a.options["max_level"]})


def _shown(value: object) -> str:
    """A saved value as JSON, cut short, for a note (escaped for Markdown by the caller)."""
    try:
        text = json.dumps(value, ensure_ascii=False)
    except (TypeError, ValueError):
        text = type(value).__name__
    return text if len(text) <= 40 else f"{text[:37]}..."


def _is_text(value: object) -> bool:
    return isinstance(value, str)


def check_view(view: dict, runs: list[str], levels: list[str]) -> tuple[dict, list[str]]:
    """The saved view's values that fit the data (``runs``, the code system's ``levels``), and a one-line
    note for each one left out. A view is a JSON object anyone can edit: each key has its type and its
    allowed values here, in one place, so no forged value reaches a widget or a page.

    Keys not listed are ignored (a later cophe may save more); the slice is under ``"slice"``.

    >>> check_view({"run": "A", "cmp_b": None, "cmp_resamples": 500}, ["A", "B"], ["e0"])
    ({'run': 'A', 'cmp_resamples': 500}, ['Not restored from the saved analysis: run B on Compare runs (null), which is not one of its runs.'])
    """
    from cophe_dashboard import slicing  # here: slicing imports this module

    run_set, level_set = set(runs), set(levels)
    one_run = (lambda v: _is_text(v) and v in run_set, "one of its runs")
    rules: dict[str, tuple[str, Callable[[object], bool], str]] = {
        "run": ("the run shown", *one_run),
        "levels_runs": (
            "the runs shown on Levels",
            lambda v: isinstance(v, list) and all(_is_text(r) and r in run_set for r in v),
            "a list of its runs",
        ),
        "cmp_baseline": ("the baseline on Compare runs", *one_run),
        "cmp_a": ("run A on Compare runs", *one_run),
        "cmp_b": ("run B on Compare runs", *one_run),
        "cmp_figures": (
            "the figures on Compare runs",
            lambda v: _is_text(v) and v in FIGURE_SETS,
            "one of " + ", ".join(FIGURE_SETS),
        ),
        "cmp_family_level": (
            "the family level on Compare runs",
            lambda v: _is_text(v) and v in level_set,
            "a level of its code system",
        ),
        "cmp_resamples": (
            "the resamples on Compare runs",
            lambda v: type(v) is int and v in RESAMPLE_CHOICES,
            "one of " + ", ".join(map(str, RESAMPLE_CHOICES)),
        ),
        "slices_measure": (
            "the measure on Slices",
            lambda v: _is_text(v) and v in MEASURES,
            "one of the measures",
        ),
        "focus": ("the family in focus on the tree", _is_text, "a code"),
        "colour": (
            "the tree's colours",
            lambda v: _is_text(v) and v in COLOUR_BY,
            "one of the tree's colours",
        ),
        "doc": ("the document shown", lambda v: _is_text(v) or type(v) is int, "a document id"),
        "page": ("the page", _is_text, "a page"),
    }
    slice_rules: dict[str, tuple[str, Callable[[object], bool], str]] = {
        "slice_dimension": (
            "what the slice looks at",
            lambda v: isinstance(v, str) and (v in slicing.DIMENSIONS or v.startswith(slicing.META)),
            "a way to slice",
        ),
        "slice_edges": ("the bin edges", _is_text, "text such as 10, 100"),
        "slice_name": ("the slice shown", _is_text, "a slice"),
    }
    kept, notes = {}, []
    saved_slice = view.get("slice")
    for values, table in ((view, rules), (saved_slice if isinstance(saved_slice, dict) else {}, slice_rules)):
        for key, (words, fits, wanted) in table.items():
            if key not in values:
                continue
            if fits(values[key]):
                kept[key] = values[key]
            else:
                notes.append(
                    f"Not restored from the saved analysis: {words} ({_shown(values[key])}), which is not "
                    f"{wanted}."
                )
    return kept, notes


def restore_view(sb, scoring: Scoring) -> None:
    """Once the opened analysis is scored: its slice and view, checked against the data
    (:func:`check_view`), into the session before the widgets are drawn; each value left out is said in a
    note while the analysis stays open."""
    state = st.session_state
    pending = state.pop(PENDING_KEY, None)
    if pending is not None:
        kept, notes = check_view(pending, scoring.run_names, list(scoring.corpus.ontology.levels))
        for key in (*VIEW_KEYS, *SLICE_KEYS):
            if key in kept:
                state[key] = kept[key]
        urlstate.offer({k: str(kept[k]) for k in ("focus", "colour", "doc") if k in kept})
        if kept.get("page"):
            state["_goto_page"] = kept["page"]
        state[DROPPED_KEY] = notes
    for note in state.get(DROPPED_KEY, []):
        sb.caption(f":material/info: {md(note)}")


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
            # the bound lifted ("Score anyway"): reopened, the same rows are scored
            **({"score_anyway": True} if files.get("score_anyway") else {}),
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
