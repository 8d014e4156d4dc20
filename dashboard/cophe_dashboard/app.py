"""cophe dashboard: flat, set-based and CoPHE scores of ICD coding runs, by level and by family.

:func:`main` sets up the page, draws the data sidebar and runs the chosen view (``views/``, listed in
:mod:`cophe_dashboard.pages`); all numbers come from ``cophe_core``. Streamlit runs it through the checkout's
``dashboard/app.py`` (``streamlit run dashboard/app.py``) or, installed, through this file as the script
(``cophe dashboard``), with the ``.streamlit/config.toml`` beside each.
"""

from __future__ import annotations

import contextlib
import gc

import streamlit as st
from streamlit.navigation.page import StreamlitPage
from streamlit.runtime.scriptrunner import get_script_run_ctx
from streamlit.runtime.scriptrunner_utils.exceptions import StopException

from cophe_dashboard import downloads, errors, pages, saved, sidebar, slicing, state, texts, uploads, urlstate
from cophe_dashboard.components import md

# Button and metric labels wrap rather than end in "…" (a run's name makes them as long as it is), and
# results still on screen from the last run are hidden once they have been stale for 0.3 s: a slow
# recomputation shows its spinner, never old numbers that look current (a quick rerun does not flicker).
STALE_CSS = """<style>
[data-testid=stMain] .stElementContainer[data-stale=true] {visibility: hidden; transition: visibility 0s linear 0.3s;}
[data-testid=stMain] .stMarkdownEllipsis, [data-testid=stMain] .stMarkdownEllipsis p
  {white-space: normal; overflow: visible; text-overflow: clip;}
</style>"""


def saved_view(page: StreamlitPage, every: list[StreamlitPage]) -> None:
    """After opening an analysis, a link to the page it was saved on (st.switch_page would reset every widget,
    the opened file included), until the user is there."""
    goto = st.session_state.get("_goto_page")
    target = next((p for p in every if p.url_path == goto), None)
    if target is None or target.url_path == page.url_path:
        st.session_state.pop("_goto_page", None)
        return
    with st.container(border=True):
        st.page_link(
            target,
            label=f"Go to the view the analysis was saved on: {target.title}",
            icon=":material/arrow_forward:",
        )


# Streamlit collects the garbage after every script run (runner.postScriptGC), and a full collection walks every
# object the collector tracks: the modules of Streamlit, pandas, Plotly and cophe made most of 0.07 s of CPU
# after each click, during which the server's event loop could not send the run's last changes. They live as long
# as the process, so they are moved out of the collector's sight once, here, when the app's modules are first
# imported (before any session's data); objects made later are collected as before.
gc.freeze()


def main() -> None:
    """One run of the dashboard's script: the page set up, the sidebar, the chosen view."""
    downloads.keep_offered()  # first: the files this session's page offers stay referenced while it reruns
    errors.setup_logging()
    uploads.install()  # uploaded bytes bounded per session and for the server, once per process
    st.set_page_config(
        page_title="cophe · hierarchical evaluation", page_icon=":material/account_tree:", layout="wide"
    )
    every = pages.all_pages()
    page = st.navigation(every)
    st.html(STALE_CSS)
    urlstate.restore()
    if (doc := urlstate.take("doc")) is not None:
        st.session_state["doc_id"] = doc
    try:
        # A session's first run, its opening, goes ahead at once, its computations included (state.heavy with take
        # false). Later runs take the turn around each heavy computation only (state.memo, loading's parsing and
        # scoring, a file made for download), never around the whole run: Streamlit drops a session's references to
        # its download files when its run starts and deletes unreferenced files when any session's run ends, so a
        # run that waited for the turn before drawing anything lost the files its page still offered, and the
        # downloads asked for meanwhile were cancelled.
        with state.heavy(take=False) if "_ctx" not in st.session_state else contextlib.nullcontext():
            ctx = data_sidebar(page)
            st.session_state["_ctx"] = ctx
            if ctx.scoring is not None and (note := state.check_focus(ctx.ontology)):
                st.info(md(note), icon=":material/filter_center_focus:")
            sidebar_foot(ctx, page)
            saved_view(page, every)
            slicing.banner(ctx, page.title)
            page.run()
            urlstate.publish(page.url_path, ctx)
            if ctx.scoring is not None and ctx.blocked is None:  # once the page is drawn, not before
                # by default the rare and frequent codes
                ctx.evaluations_ahead(slicing.shown_slices(ctx.scoring))
    except StopException:
        # A closed page: Streamlit stops its run at the run's next element call, a file being made is made to
        # its end first (state.to_the_end), and every turn the run took is given back on the way out
        # (state.heavy). Said in the log, so that a turn kept by a page that left would show.
        run_ctx = get_script_run_ctx(suppress_warning=True)
        errors.log.info(
            "session %s: its run was stopped (its page closed, or the page ended early); it holds %s",
            run_ctx.session_id[:8] if run_ctx is not None else "-",
            "the turn to compute still (a fault)" if state.holds_turn() else "no turn to compute",
        )
        raise
    except Exception as exc:  # the user sees a panel, never a traceback: theirs to fix, or ours to report
        errors.show_error(exc, page.title)


def data_sidebar(page: StreamlitPage) -> state.Context:
    """The data sidebar and the slice: the context every page reads. The first run of a session loads the code
    sets and scores the sample: that is said, under the page's title, until it is done. A later run says so
    in the same place only while it reads or scores files (state.said_while_working): a run that finds its
    files kept draws nothing above the page, which then does not move under the pointer."""
    loading = st.empty()  # empty once the first run is done, and on every later run unless files are scored
    words = "Reading and scoring the files…"
    if "_ctx" in st.session_state:
        with state.said_while_working(words, loading):
            return _data()
    with loading.container():
        st.title(page.title)
        st.caption(
            "Loading the code sets and scoring the runs. The first view of a session takes a few "
            "seconds; later views reuse the work."
        )
        with st.spinner(words):
            ctx = _data()
    loading.empty()
    return ctx


def _data() -> state.Context:
    """The sidebar's data and slice."""
    ctx = sidebar.sidebar()
    if ctx.scoring is not None and ctx.blocked is None:
        ctx.slice = slicing.sidebar(ctx.scoring, (ctx.reading or {}).get("system") or "auto")
    return ctx


def sidebar_foot(ctx: state.Context, page: StreamlitPage) -> None:
    """Below the data: the Technical terms switch, the credit line and Save analysis."""
    st.sidebar.toggle(
        "Technical terms",
        key=texts.TECHNICAL_KEY,
        help="Show TP / FP / FN, flat, set-based and level ids such as e0, as in papers, instead "
        "of Correct / Extra / Missed and the levels' names.",
    )
    st.sidebar.caption(
        "cophe · CoPHE: Falis et al., EMNLP 2021. Every figure comes from the cophe scoring core."
    )
    if ctx.files is not None and ctx.scoring is not None:
        saved.save_button(st.sidebar, ctx.files, page.url_path, ctx.ontology)


if __name__ == "__main__":  # the script `cophe dashboard` runs, installed
    main()
