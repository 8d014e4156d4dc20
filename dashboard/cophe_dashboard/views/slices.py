"""Slices: every run's scores on each part of the data (rare or frequent codes, short or long documents, a
metadata column), with intervals; choosing one in the sidebar restricts every page to it."""

import streamlit as st

from cophe_core.breakdown.slices import slice_scores
from cophe_core.output.plotting import slices_chart
from cophe_dashboard import components, slicing, state
from cophe_dashboard.components import keep_choice, md
from cophe_dashboard.texts import HELP, MEASURES, labeller, measure, term

RESAMPLES = 200  # per slice and run; the intervals of a slice need not be as fine as the headline's


def show() -> None:
    """Draw the page."""
    st.title("Slices")
    ctx = state.require_scoring()
    if ctx:
        slices = slicing.shown_slices(ctx.scoring)
        dim = slices[0].dimension if slices else ""
        st.caption(
            f"Scores on each part of the data: {md(dim)}. Choose how to slice under **Slice** in the sidebar, "
            "and pick one slice there to restrict every page to it."
        )
        c1, c2 = st.columns(2)
        keep_choice("slices_measure", list(MEASURES))
        keep_choice("slices_stat", ["f1", "precision", "recall"])
        m = c1.selectbox(
            term("measure"),
            list(MEASURES),
            index=2,
            key="slices_measure",
            format_func=labeller(measure),
            help=HELP["cophe"],
        )
        stat = (
            c2.segmented_control(
                term("statistic"),
                ["f1", "precision", "recall"],
                default="f1",
                key="slices_stat",
                format_func=labeller(term),
            )
            or "f1"
        )
        names = ctx.scoring.run_names[:10]
        agg = ctx.aggregate
        if not slices:
            st.info(
                "This aggregate analysis holds no slices: write it again with cophe aggregate --slice-edges."
            )
            st.stop()
        if agg is not None:  # counts only: the values, without intervals
            table = state.memo(agg.slice_scores, names, max_level=ctx.max_level)
        else:
            scoring = ctx.scoring
            evals = {  # the whole data, then masks
                r: scoring.evaluation(r, max_level=ctx.max_level).with_codes() for r in names
            }
            with st.spinner(f"Scoring {len(slices)} slices of {len(names)} runs, with intervals…"):
                table = state.memo(slice_scores, evals, slices, n_resamples=RESAMPLES, seed=0)
        rows = table[(table.measure == m) & (table.statistic == stat)]
        title = f"{measure(m)} {term(stat)}"
        fig = slices_chart(rows, title=title)
        st.plotly_chart(fig, key="slices_chart")
        components.figure_download(fig, "slices_chart", "dl_slices_chart", table=table)
        wide = rows.pivot(index="slice", columns="run", values="value").loc[
            list(dict.fromkeys(rows.slice)), names
        ]
        sizes = rows.drop_duplicates("slice").set_index("slice")
        shown = wide.assign(**{"Documents": sizes.documents, "Gold codes": sizes.gold_codes})
        st.dataframe(
            shown.rename_axis(index="Slice"),
            width="stretch",
            key="slices_table",
            column_config={r: st.column_config.NumberColumn(r, format="%.3f") for r in names},
        )
        st.caption(
            (
                "No intervals: an aggregate analysis holds each slice's counts summed over the documents. "
                if agg is not None
                else f"Intervals: {RESAMPLES} bootstrap resamples of each slice's documents (seed 0), 95%. "
            )
            + "A code slice keeps every document and only the slice's codes, at every level."
        )
