"""Scores by level: flat, set-based and CoPHE P/R/F1 per run, with the within-family gaps in words."""

import data
import pandas as pd
import streamlit as st
from figures import levels_bar
from texts import HELP, MEASURE

from cophe_core.compare import levels_side_by_side
from cophe_core.families import describe_gaps

st.title("Scores by level")
ctx = data.require_scoring()
if ctx:
    data.problems_panel(ctx.scoring)
    st.caption(f"Data: {data.md(ctx.source)} · {len(ctx.scoring.corpus.docs):,} documents · "
               f"levels up to **{ctx.max_level}**")
    runs = st.multiselect("Runs", ctx.scoring.run_names, default=ctx.scoring.run_names, key="levels_runs")
    evals = {r: ctx.evaluation(r) for r in runs}
    if not evals:
        st.info("Choose at least one run.")
        st.stop()

    cols = st.columns(len(evals))
    for col, (run, ev) in zip(cols, evals.items()):
        with col.container(border=True):
            st.markdown(f"**{data.md(run)}** · F1")
            a, b, c = st.columns(3)
            a.metric("Flat", f"{ev.score('flat')['f1']:.3f}", help=HELP["flat"])
            b.metric("Set-based", f"{ev.score('set_based')['f1']:.3f}",
                     help=HELP["set_based"] + f" Overall, levels up to {ctx.max_level}.")
            c.metric("CoPHE", f"{ev.score('cophe')['f1']:.3f}",
                     help=HELP["cophe"] + f" Overall, levels up to {ctx.max_level}.")

    table = levels_side_by_side(evals)
    metric = st.segmented_control("Metric", ["f1", "precision", "recall"], default="f1", key="levels_metric",
                                  format_func=lambda m: {"f1": "F1", "precision": "Precision", "recall": "Recall"}[m])
    fig = levels_bar(table, metric or "f1")
    st.plotly_chart(fig, key="levels_chart")
    data.figure_download(fig, "levels_chart", "dl_levels_chart")

    gaps = [line for run, ev in evals.items() for line in describe_gaps(ev, run)]
    if gaps:
        st.markdown("**Where CoPHE falls below set-based** — the model gets families right but not the "
                    "number of codes in them:")
        st.markdown("\n".join(f"- {data.md(line)}" for line in gaps))

    shown = table.assign(measure=table.measure.map(MEASURE))
    st.dataframe(
        shown, hide_index=True, width="stretch",
        column_config={
            "run": st.column_config.TextColumn("Run"),
            "measure": st.column_config.TextColumn("Measure", help=" ".join(HELP[k] for k in MEASURE)),
            "level": st.column_config.TextColumn("Level", help=HELP["level"]),
            "tp": st.column_config.NumberColumn("TP", help=HELP["tp"]),
            "fp": st.column_config.NumberColumn("FP", help=HELP["fp"]),
            "fn": st.column_config.NumberColumn("FN", help=HELP["fn"]),
            "precision": st.column_config.NumberColumn("Precision", help=HELP["precision"], format="%.3f"),
            "recall": st.column_config.NumberColumn("Recall", help=HELP["recall"], format="%.3f"),
            "f1": st.column_config.NumberColumn("F1", help=HELP["f1"], format="%.3f"),
        },
    )
    if st.toggle("95% confidence intervals (bootstrap over documents)", key="levels_ci"):
        st.caption("1,000 resamples of the documents, seed 0; the percentile interval of each figure. "
                   "Two runs whose intervals overlap may still differ: use Compare runs for a paired test.")
        ci = pd.concat([data.cached(ctx.scoring, ("ci", run, ctx.max_level), lambda ev=ev: data.bootstrap_table(ev))
                        .assign(run=run) for run, ev in evals.items()], ignore_index=True)
        st.dataframe(ci[["run", "figure", "value", "low", "high"]], hide_index=True, width="stretch",
                     column_config={k: st.column_config.NumberColumn(format="%.3f") for k in ("value", "low", "high")})
    with st.expander("Macro averages (two definitions)"):
        st.caption(HELP["macro_f1"] + " " + HELP["macro_f1_of_means"] +
                   " Averages run over the codes present in the gold standard or the predictions.")
        macro = [ev.macro_table.assign(run=run) for run, ev in evals.items()]
        st.dataframe(pd.concat(macro, ignore_index=True).assign(
            measure=lambda d: d.measure.map(MEASURE)), hide_index=True, width="stretch",
            column_config={k: st.column_config.NumberColumn(format="%.3f") for k in
                           ("macro_precision", "macro_recall", "macro_f1", "macro_f1_of_means")})
