"""A session's context and the work kept for it.

- :class:`Context`: the scored inputs and the user's choices, which every view reads through
  :func:`require_scoring`;
- :func:`memo`: a result kept per session, keyed by the function and its arguments (:mod:`memo`, the one
  cache), and :func:`ahead`, work started before it is asked for;
- :func:`heavy`: one session's heavy work at a time, so that opening the app is never starved.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any, TypeVar, cast

import numpy as np
import pyarrow as pa
import streamlit as st
from streamlit.runtime.scriptrunner import add_script_run_ctx, get_script_run_ctx

from cophe_core import Scoring
from cophe_core.breakdown.slices import Slice, restrict
from cophe_core.metrics import Figures
from cophe_core.ontology import Ontology
from cophe_core.scale.aggregate import Aggregate, counts_only
from cophe_core.scoring.labels import TooManyRejected
from cophe_dashboard import memo as one_cache
from cophe_dashboard import urlstate
from cophe_dashboard.components import blocked_panel, md, refused_panel
from cophe_dashboard.turns import Turn

T = TypeVar("T")


@dataclass
class Context:
    """What every view needs: the scored inputs (or an aggregate analysis: counts only) and the user's
    current choices."""

    scoring: Scoring | Aggregate | None
    source: str
    max_level: str | None
    run: str | None
    error: str | None = None
    scored: dict | None = None  # run → ScoredRun, for runs given as probabilities
    rule: tuple | None = None  # ("threshold", t) or ("top_k", k)
    reading: dict | None = None  # the reading options: doc_col, code_col, system, header
    notice: str | None = None  # an ordinary state, such as nothing uploaded yet (not an error)
    blocked: TooManyRejected | None = None  # an input too little of which can be scored: numbers are withheld
    slice: Slice | None = None  # the part of the data every page shows (None: everything)
    files: dict | None = None  # the inputs as given and how they were read: what Save analysis writes
    upload: str | None = None  # the digest of the parsed inputs: what "Score anyway" lifts the bound for

    @property
    def aggregate(self) -> Aggregate | None:
        """The opened aggregate analysis, if that is what is shown (counts, no document's codes)."""
        return self.scoring if self.scoring is not None and counts_only(self.scoring) else None

    @property
    def ontology(self) -> Ontology:
        s = self.scoring
        if s is None:
            raise LookupError("no scored run")
        return s.ontology

    @property
    def n_documents(self) -> int:
        s = self.scoring
        if s is None:
            return 0
        return s.n_documents

    def evaluation(self, run: str | None = None, *, max_level: str | None = None) -> Figures:
        """The run's evaluation (up to ``max_level``, by default the sidebar's), restricted to the slice: a mask
        on the cached matrices, kept per slice. For an aggregate analysis, the same figures from its counts
        (an :class:`~cophe_core.scale.aggregate.AggregateEvaluation`, which offers what the views read of an
        Evaluation but its matrices)."""
        level = max_level or self.max_level
        name, scoring, part = run or self.run, self.scoring, self.slice
        if scoring is None or name is None:
            raise LookupError("no scored run to evaluate")  # views ask only through require_scoring()
        if counts_only(scoring):  # its slices are counted already
            return scoring.evaluation(name, max_level=level, slice=part)
        ev = scoring.evaluation(name, max_level=level)
        return ev if part is None else memo(restrict, ev.with_codes(), part)

    def evaluations_ahead(self, slices: list[Slice]) -> None:
        """Restrict every run to each of ``slices`` (the other choices of the sidebar's slice) in the
        background, with the tables every page reads first, so that choosing one of them is quick."""
        if self.scoring is None or counts_only(self.scoring):
            return  # an aggregate's slices are counted already
        for s in slices:
            if self.slice is not None and s.fingerprint == self.slice.fingerprint:
                continue
            for run in self.scoring.run_names:
                ahead(restrict, self.scoring.evaluation(run, max_level=self.max_level), s, then=_warm)

    @property
    def slice_key(self) -> str | None:
        """What the slice selects (its mask's fingerprint: a key alone may name another file's slice)."""
        return None if self.slice is None else self.slice.fingerprint

    @property
    def slice_words(self) -> str:
        """The slice in one sentence, for reports."""
        if self.slice is None:
            return "Every document and code."
        return f"Slice: {self.slice.dimension}: {self.slice.name}. {self.slice.describe()}"


def _warm(ev):
    """``ev`` with the tables that the views read first computed (level scores, per-document counts)."""
    ev.levels_table  # noqa: B018 - cached properties, computed here rather than in the view
    ev.documents  # noqa: B018
    return ev


def memo(fn: Callable[..., T], *args: Any, **kwargs: Any) -> T:
    """``fn(*args, **kwargs)``, computed once per session (:mod:`memo`: keyed by the function and its
    arguments), in the turn to compute (:func:`heavy`); found at once when :func:`ahead` computed it. While it
    is computed or waited for, the words of :func:`said_while_working` show, if any."""
    return one_cache.session().get(fn, *args, around=_computing, waiting=_saying, **kwargs)


@contextmanager
def _computing() -> Iterator[None]:
    with _saying(), heavy():
        yield


# what to say while this thread's script computes (said_while_working): the words and where, or None
_SAID = threading.local()


@contextmanager
def said_while_working(words: str, where: Any) -> Iterator[None]:
    """Within this block, ``words`` show in a spinner in ``where`` (a placeholder, ``st.empty()``) while
    :func:`memo` computes or waits for work started ahead, and a run that finds everything kept draws nothing.

    A spinner around the whole block, in a container above the page, was drawn on every run: the container
    took its place above the page as the run started and gave it back as it ended, and the spinner too when
    the run took longer than its half-second delay (under load, most runs). The page moved down and up under
    the pointer, and a click pressed before a move and released after it reached nothing: in the 8-session
    load test, the second file asked for while the first was made (issue 29, point 7).
    """
    before = getattr(_SAID, "said", None)
    _SAID.said = (words, where)
    try:
        yield
    finally:
        _SAID.said = before


@contextmanager
def _saying() -> Iterator[None]:
    """The spinner of :func:`said_while_working`, once: a computation inside another adds none. The placeholder
    is emptied again once the work is done."""
    said = getattr(_SAID, "said", None)
    if said is None or get_script_run_ctx(suppress_warning=True) is None:
        yield
        return
    words, where = said
    _SAID.said = None
    try:
        with where.container(), st.spinner(words):
            yield
        where.empty()
    finally:
        _SAID.said = said


def is_kept(fn: Callable[..., Any], *args: Any, **kwargs: Any) -> bool:
    """Whether :func:`memo` holds ``fn(*args, **kwargs)`` already (so a view can skip a spinner)."""
    return one_cache.session().has(fn, *args, **kwargs)


def put(value: Any, fn: Callable[..., Any], *args: Any, **kwargs: Any) -> None:
    """Keep ``value`` for :func:`memo` as the result of ``fn(*args, **kwargs)`` (computed with others)."""
    one_cache.session().put(value, fn, *args, **kwargs)


def ahead(fn: Callable[..., T], *args: Any, then: Callable[[T], object] | None = None, **kwargs: Any) -> None:
    """Start computing ``fn(*args, **kwargs)`` in the background, once, for :func:`memo` to find. ``fn`` must be
    pure core work: no Streamlit call. Work done ahead takes no turn: it is one thread, and a turn held while
    waiting for it would deadlock."""
    one_cache.session().ahead(fn, *args, then=then, **kwargs)


# Sessions computing at once: one. Python runs one thread at a time (the GIL), and every session's script is a
# thread of the one server: ten sessions computing together made each ten times slower, and opening the app
# took half a minute. The rest wait their turn (first come, roughly first served), so a session that only
# draws (opening the app, a rerun on cached results) shares the processor with one computation at most.
# A turn held longer than this is taken over (and logged): the longest computation measured, 1,000 resamples
# of a MIMIC-IV-sized aggregate on request, takes about a minute.
TURN_MAX_HOLD_S = 300.0

_TURN = Turn(max_hold_s=TURN_MAX_HOLD_S)


# how deep this thread is in heavy(): a computation inside another takes no turn
_IN_HEAVY = threading.local()


@contextmanager
def heavy(*, take: bool = True) -> Iterator[None]:
    """Hold the turn to compute (at once if this thread holds it already).
    With ``take`` false, go ahead without a turn, and so do the computations inside: a session's opening.
    Work done ahead in the background takes no turn: it is one thread, and a turn held while waiting for it
    would deadlock.

    The turn is taken inside the ``try`` whose ``finally`` gives it back: Streamlit raises its stop or rerun
    at any element call, the waiting spinner's own exit included, and a turn taken before such a call and given
    back only after it was kept for good, every other session waiting behind it.
    """
    depth = getattr(_IN_HEAVY, "depth", 0)
    try:
        if depth == 0 and take:
            _take_turn()
        _IN_HEAVY.depth = depth + 1
        yield
    finally:
        _IN_HEAVY.depth = depth
        if depth == 0:
            _TURN.give_back()  # a no-op unless this thread holds the turn
            return_freed_memory()


def to_the_end(fn: Callable[[], T]) -> T:
    """``fn()`` run to its end whatever the session is asked meanwhile, in this thread's turn (:func:`heavy`).

    Streamlit acts on a rerun (a click elsewhere on the page) at the script's next element call or session-state
    access, so a file being made was dropped half made whenever its session clicked again: its request was
    kept, and the file was made from the start on the next run, holding the turn twice (in the 8-session load
    test, a report was made again whenever its second file was asked for meanwhile: 8 to 10 reports made for
    8 asked for, every one a turn the other sessions waited behind). Here ``fn`` runs in a helper thread of the session (where Streamlit acts on
    nothing) while this thread waits for it; the rerun is acted on at the first element call after.
    ``fn`` must draw nothing. Outside a Streamlit script, ``fn()`` is simply called.
    """
    ctx = get_script_run_ctx(suppress_warning=True)
    if ctx is None:
        return fn()
    outcome: list[Any] = []  # [value] or [None, the exception]
    depth = getattr(_IN_HEAVY, "depth", 0)

    def run() -> None:
        add_script_run_ctx(threading.current_thread(), ctx)  # the session's state and memo
        _IN_HEAVY.depth = depth  # in the caller's turn: what fn computes takes none of its own
        try:
            outcome.append(fn())
        except BaseException as e:  # noqa: BLE001 - raised again in the caller's thread
            outcome[:] = [None, e]

    helper = threading.Thread(target=run, name=f"{threading.current_thread().name}-to-the-end", daemon=True)
    helper.start()
    helper.join()  # no element call while waiting: nothing can stop it half way
    if len(outcome) == 2:
        raise outcome[1]
    return cast(T, outcome[0])


def holds_turn() -> bool:
    """Whether this thread holds the turn to compute (a run that has left :func:`heavy` never does)."""
    return _TURN.held_by_me


def return_freed_memory() -> None:
    """Give the memory that Arrow's allocator keeps for reuse back to the system, at the end of each script run.

    pandas holds text in Arrow arrays, and Arrow's allocator (mimalloc or jemalloc) keeps the memory they free:
    scoring an 82 MB upload left 0.9 GB held once its arrays were gone, and a closed session's uploads, dropped
    by Streamlit, stayed held the same way. Releasing takes about 4 ms after such a run, microseconds otherwise.
    """
    pa.default_memory_pool().release_unused()


# How often a session waiting for its turn lets Streamlit stop or restart it (a poll while it waits, not a delay).
TURN_POLL_S = 0.5


def _take_turn() -> None:
    """Take the turn, and give up the place when Streamlit asks the script to stop or rerun.

    Streamlit asks at once when a tab is closed or a click restarts the page, but it acts on the request only
    at the script's next element call, and a thread blocked waiting makes none: the old script stayed queued
    and, when its turn came, computed for nobody while the others waited behind it. The wait makes an element
    call every :data:`TURN_POLL_S`.
    """
    if _TURN.take(timeout=0):
        return
    if get_script_run_ctx(suppress_warning=True) is None:  # not in a Streamlit script: nothing can ask
        while not _TURN.take(timeout=TURN_POLL_S):
            pass
        return
    with st.spinner("Another user's work is running on this server; yours starts when it ends…"):
        beat = st.empty()
        while not _TURN.take(timeout=TURN_POLL_S):
            beat.empty()  # Streamlit raises its stop or rerun here when asked


FOCUS = (
    "focus"  # the focused family's node id in the data shown; its name, which outlives data, is the view's
)


def focus_on(node: int | None, onto: Ontology) -> None:
    """Focus the tree on ``node`` of ``onto`` (None: every code), remembering the family by its name."""
    st.session_state[FOCUS] = node
    urlstate.view().focus = None if node is None else str(onto.node_names[node])


def check_focus(onto: Ontology) -> str | None:
    """Keep the focus on the same family when the data change, and return a note when it cannot be kept.

    A focus is kept as a node id, and node ids are per ontology: after a switch from the ICD-9 sample to the
    ICD-10 one, 428's id named E13.3393. The family's name is kept beside its id; when the id no longer names
    it, the family is looked up by name (the same code in other data), or the focus is dropped, with a note.
    """
    node, name = st.session_state.get(FOCUS), urlstate.view().focus
    if node is None or name is None:
        return None
    names = onto.node_names
    if 0 <= node < len(names) and names[node] == name:
        return None
    hits = np.flatnonzero(names == name)
    if len(hits):
        st.session_state[FOCUS] = int(hits[0])
        return None
    focus_on(None, onto)
    return f"The family in focus, {name}, is not in these data: the tree shows every code."


def context() -> Context:
    """The context set by app.py for this rerun."""
    return st.session_state["_ctx"]


class Ready(Context):
    """A :class:`Context` with a scored run to show, as :func:`require_scoring` returns it: the same object,
    with the type checker told that its scoring, run and highest level are set."""

    scoring: Scoring | Aggregate
    max_level: str
    run: str


# An aggregate analysis of more documents × runs than this resamples on request (levels, compare): 1,000
# resamples of millions of documents take minutes, and would hold the server's turn to compute meanwhile.
ON_REQUEST_ABOVE = 2_000_000


def on_request(ctx: Context, n_runs: int) -> bool:
    """Whether intervals and tests wait to be asked for: an aggregate analysis of more than
    :data:`ON_REQUEST_ABOVE` documents × runs (its per-document tables are then read and resampled only then)."""
    return ctx.aggregate is not None and ctx.n_documents * n_runs > ON_REQUEST_ABOVE


def documents_needed(ctx: Context, what: str) -> bool:
    """With an aggregate analysis, say that ``what`` needs the documents' own codes and return True (the view
    then stops); otherwise False."""
    if ctx.aggregate is None:
        return False
    st.info(
        f"**{what} is not available for an aggregate analysis.** The file holds counts (per code, per family "
        "and per document), not each document's codes. Open the gold standard and the runs themselves "
        "(Source: Upload files) to see it.",
        icon=":material/info:",
    )
    return True


def _open_saved() -> None:
    st.session_state["source"] = urlstate.OPEN_SOURCE


def require_scoring() -> Ready | None:
    """The context if there is something to show; otherwise draw why not and return None."""
    ctx = context()
    if ctx.blocked is not None:
        blocked_panel(ctx.blocked, ctx.upload)
        return None
    if ctx.error:
        st.error(md(ctx.error))
        return None
    if ctx.notice:
        st.info(md(ctx.notice), icon=":material/upload_file:")
        if urlstate.linked_upload():
            st.button(
                "Open a saved analysis",
                key="open_from_link",
                icon=":material/folder_open:",
                on_click=_open_saved,
            )
        return None
    if ctx.scoring is None or ctx.run is None or ctx.max_level is None:
        st.info("No data yet.")
        return None
    if ctx.scoring.refused:  # runs left out, the others shown
        refused_panel(list(ctx.scoring.refused.values()), ctx.upload)
    return cast(Ready, ctx)
