"""Export: tables as CSV, figures as standalone HTML, and a one-page HTML report.

The CSV files keep cophe_core's column names (``tp``, ``e0``), so that scripts can read them; the charts and
the reports use the words the page shows."""

import data
import pandas as pd
import streamlit as st
from figures import delta_bar, levels_bar, tree_figure
from texts import MEASURES, TERMS, columns, level, measure, term

from cophe_core.compare import delta_subtree, level_deltas, levels_side_by_side
from cophe_core.families import describe_gaps, within_family
from cophe_core.report import figure_html, html_report
from cophe_core.tree import focused_subtree


def words() -> dict[str, str]:
    """The chart words in the user's vocabulary."""
    return {**{k: term(k) for k in TERMS}, **{m: measure(m) for m in MEASURES}}


def readable(df: pd.DataFrame, onto, extra: dict | None = None) -> pd.DataFrame:
    """A table for a report: measures and levels by name, columns in words (``extra`` names others)."""
    out = df.copy()
    if "measure" in out:
        out["measure"] = out.measure.map(measure)
    if "level" in out:
        out["level"] = [level(onto, lv) for lv in out.level]
    return columns(out, {"errors": f"{term('fp')} + {term('fn')}", **(extra or {})})


st.title("Export")
ctx = data.require_scoring()
if ctx:
    ev = ctx.evaluation()
    onto = ev.ontology
    runs = ctx.scoring.run_names
    evals = {r: ctx.evaluation(r) for r in runs}
    focus = st.session_state.get("focus")
    focus = focus if focus is not None and focus < ev.ontology.n_nodes else None
    run = ctx.run
    names = {lv: level(onto, lv) for lv in ("leaf", *onto.levels, "overall")}
    tree_words = {k: term(k) for k in ("gold", "predicted", "tp", "fp", "fn", "f1", "set_f1")}

    st.subheader("Tables (CSV)", anchor=False)
    st.caption("The files keep cophe's own column names and level ids, so that scripts read them the same way "
               "whatever this page shows.")
    a, b, c, d = st.columns(4)
    a.download_button("Scores by level, all runs", lambda: levels_side_by_side(evals).to_csv(index=False),
                      "levels.csv", "text/csv", key="dl_levels")
    b.download_button(f"Every code and family · {run}", lambda: ev.nodes.to_csv(index=False), f"nodes_{run}.csv",
                      "text/csv", key="dl_nodes")
    c.download_button(f"Document by document · {run}", lambda: ev.documents.to_csv(index=False),
                      f"documents_{run}.csv", "text/csv", key="dl_docs")
    d.download_button("Rows that were not scored", lambda: ctx.scoring.corpus.rejected.to_csv(index=False),
                      "rejected_rows.csv", "text/csv", key="dl_rej")

    st.subheader("Figures (interactive HTML, works offline)", anchor=False)
    e, f = st.columns(2)
    e.download_button("Levels chart, all runs",
                      lambda: figure_html(levels_bar(levels_side_by_side(evals), levels=names, words=words())),
                      "levels_chart.html", "text/html", key="dl_fig_levels")
    f.download_button(f"Code-family tree · {run} (current focus)",
                      lambda: figure_html(tree_figure(focused_subtree(ev.nodes, ev.ontology, focus),
                                                      words=tree_words)),
                      f"tree_{run}.html", "text/html", key="dl_fig_tree")

    st.subheader("One-page report", anchor=False)

    def run_report() -> str:
        errors = ev.nodes.assign(errors=ev.nodes.fp + ev.nodes.fn).nlargest(30, "errors")
        sections = [
            ("Scores by level", [f"{len(ev.docs):,} documents; levels up to {level(onto, ctx.max_level)}.",
                                 levels_bar(levels_side_by_side({run: ev}), levels=names, words=words()),
                                 readable(ev.levels_table, onto)]),
            ("Within families", describe_gaps(ev, run, level_name=lambda lv: level(onto, lv))
             + [readable(within_family(ev), onto)]),
            ("Code-family tree", [tree_figure(focused_subtree(ev.nodes, ev.ontology, focus), words=tree_words)]),
            ("Families with the most errors", [readable(errors[["code", "title", "level", "gold", "predicted", "tp",
                                                                "fp", "fn", "precision", "recall", "f1", "errors"]],
                                                        onto)]),
            ("Per-code averages", [readable(ev.macro_table, onto)]),
        ]
        return html_report(f"cophe report · run {run}", sections)

    g, h = st.columns(2)
    g.download_button(f"Report for run {run}", run_report, f"report_{run}.html", "text/html", key="dl_report")
    if len(runs) >= 2:
        other = h.selectbox("Compare with", [r for r in runs if r != run], key="report_other")

        def compare_report() -> str:
            eb = evals[other]
            deltas = level_deltas(ev, eb)
            both = levels_side_by_side({run: ev, other: eb})
            who = {"a": run, "b": other, "delta": f"{other} − {run}"}
            change = readable(deltas, onto, {c: f"{term(c.split('_')[1])} · {who[c.split('_')[0]]}"
                                             for c in deltas.columns if "_" in c})
            sections = [
                ("Both runs", [levels_bar(both, levels=names, words=words()), readable(both, onto)]),
                (f"Change: {other} − {run}", [delta_bar(deltas, "f1", run, other, levels=names, words=words()),
                                              change]),
                ("Where the change happens", [tree_figure(delta_subtree(ev, eb, focus), "delta_f1", prefix="b_",
                                                          words=tree_words)]),
            ]
            return html_report(f"cophe comparison · {other} vs {run}", sections)

        h.download_button(f"Comparison report: {other} vs {run}", compare_report,
                          f"compare_{other}_vs_{run}.html", "text/html", key="dl_cmp_report")
