"""Export: tables as CSV, figures as standalone HTML, and a one-page HTML report."""

import data
import streamlit as st
from figures import delta_bar, levels_bar, tree_figure

from cophe_core.compare import delta_subtree, level_deltas, levels_side_by_side
from cophe_core.families import describe_gaps, within_family
from cophe_core.report import figure_html, html_report
from cophe_core.tree import focused_subtree

st.title("Export")
ctx = data.require_scoring()
if ctx:
    ev = ctx.evaluation()
    runs = ctx.scoring.run_names
    evals = {r: ctx.evaluation(r) for r in runs}
    focus = st.session_state.get("focus")
    focus = focus if focus is not None and focus < ev.ontology.n_nodes else None
    run = ctx.run

    st.subheader("Tables (CSV)", anchor=False)
    a, b, c, d = st.columns(4)
    a.download_button("Scores by level, all runs", lambda: levels_side_by_side(evals).to_csv(index=False),
                      "levels.csv", "text/csv", key="dl_levels")
    b.download_button(f"Per node · {run}", lambda: ev.nodes.to_csv(index=False), f"nodes_{run}.csv", "text/csv",
                      key="dl_nodes")
    c.download_button(f"Per document · {run}", lambda: ev.documents.to_csv(index=False), f"documents_{run}.csv",
                      "text/csv", key="dl_docs")
    d.download_button("Rejected input rows", lambda: ctx.scoring.corpus.rejected.to_csv(index=False),
                      "rejected_rows.csv", "text/csv", key="dl_rej")

    st.subheader("Figures (interactive HTML, works offline)", anchor=False)
    e, f = st.columns(2)
    e.download_button("Levels chart, all runs", lambda: figure_html(levels_bar(levels_side_by_side(evals))),
                      "levels_chart.html", "text/html", key="dl_fig_levels")
    f.download_button(f"Code-family tree · {run} (current focus)",
                      lambda: figure_html(tree_figure(focused_subtree(ev.nodes, ev.ontology, focus))),
                      f"tree_{run}.html", "text/html", key="dl_fig_tree")

    st.subheader("One-page report", anchor=False)

    def run_report() -> str:
        sections = [
            ("Scores by level", [f"{len(ev.docs):,} documents; levels up to {ctx.max_level}.",
                                 levels_bar(levels_side_by_side({run: ev})), ev.levels_table]),
            ("Within families", describe_gaps(ev, run) + [within_family(ev)]),
            ("Code-family tree", [tree_figure(focused_subtree(ev.nodes, ev.ontology, focus))]),
            ("Families with the most errors", [ev.nodes.assign(errors=ev.nodes.fp + ev.nodes.fn)
                                               .nlargest(30, "errors").drop(columns=["node", "parent"])]),
            ("Macro averages", [ev.macro_table]),
        ]
        return html_report(f"cophe report · run {run}", sections)

    g, h = st.columns(2)
    g.download_button(f"Report for run {run}", run_report, f"report_{run}.html", "text/html", key="dl_report")
    if len(runs) >= 2:
        other = h.selectbox("Compare with", [r for r in runs if r != run], key="report_other")

        def compare_report() -> str:
            eb = evals[other]
            deltas = level_deltas(ev, eb)
            sections = [
                ("Both runs", [levels_bar(levels_side_by_side({run: ev, other: eb})),
                               levels_side_by_side({run: ev, other: eb})]),
                (f"Change: {other} − {run}", [delta_bar(deltas, "f1", run, other), deltas]),
                ("Where the change happens", [tree_figure(delta_subtree(ev, eb, focus), "delta_f1", prefix="b_")]),
            ]
            return html_report(f"cophe comparison · {other} vs {run}", sections)

        h.download_button(f"Comparison report: {other} vs {run}", compare_report,
                          f"compare_{other}_vs_{run}.html", "text/html", key="dl_cmp_report")
