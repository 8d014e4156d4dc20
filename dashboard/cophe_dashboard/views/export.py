"""Export: tables as CSV, figures as standalone HTML, and a one-page HTML report.

The CSV files keep cophe_core's column names (``tp``, ``e0``), so that scripts can read them; the charts and
the reports use the words the page shows."""

import functools

import streamlit as st

from cophe_core.breakdown.compare import levels_side_by_side
from cophe_core.breakdown.families import describe_gaps, within_family
from cophe_core.breakdown.tree import focused_subtree
from cophe_core.output.coder_report import coder_report
from cophe_core.output.paper_tables import write_table
from cophe_core.output.plotting import levels_bar, tree_figure
from cophe_core.output.report import figure_html, html_report, safe_csv
from cophe_dashboard import components, downloads, reports, state
from cophe_dashboard.components import label_md
from cophe_dashboard.texts import chart_words, level, term


def show() -> None:
    """Draw the page."""
    st.title("Export")
    ctx = state.require_scoring()
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
        st.caption(
            "The files keep cophe's own column names and level ids, so that scripts read them the same way "
            "whatever this page shows."
        )
        a, b, c, d = st.columns(4)
        runs_now = tuple(evals.values())
        now = {"icon": ":material/download:"}  # ready at once; the files below are made when asked for
        downloads.file(
            a,
            "Scores by level, all runs",
            lambda: safe_csv(levels_side_by_side(evals)),
            "levels.csv",
            "text/csv",
            key="dl_levels",
            source=runs_now,
            **now,
        )
        downloads.table(
            b, f"Every code and family · {label_md(run)}", ev.nodes, f"nodes_{run}.csv", key="dl_nodes", **now
        )
        downloads.table(
            c,
            f"Document by document · {label_md(run)}",
            ev.documents,
            f"documents_{run}.csv",
            key="dl_docs",
            **now,
        )
        downloads.table(
            d,
            "Rows that were not scored",
            components.Problems.of(ctx.scoring).rejected,
            "rejected_rows.csv",
            key="dl_rej",
            **now,
        )

        st.subheader("Tables for a paper", anchor=False)
        baseline = runs[0]
        st.caption(
            f"Every run's F1 by level and measure to 3 decimals with its 95% interval; * where a run differs from "
            f"the first run, {label_md(baseline)} (paired test, Holm-adjusted); the best run of each row in bold. "
            "Each file is made when you ask for it (1,000 resamples: a few seconds)."
        )
        paper_formats = {
            "tex": ("LaTeX", "application/x-tex"),
            "md": ("Markdown", "text/markdown"),
            "csv": ("Spreadsheet (CSV)", "text/csv"),
            "html": ("Web page", "text/html"),
            "pdf": ("PDF", "application/pdf"),
        }
        for where, (fmt, (label, mime)) in zip(st.columns(len(paper_formats)), paper_formats.items()):
            downloads.prepared(
                where,
                label,
                functools.partial(write_table, evals, fmt, baseline=baseline, n_resamples=1000),
                f"scores_by_level.{fmt}",
                mime,
                key=f"dl_paper_{fmt}",
                source=runs_now,
            )

        st.subheader("Report for coding managers", anchor=False)
        if not all(ev.has_codes for ev in evals.values()):
            st.caption(
                "This analysis holds counts, not each document's codes: the report for coding managers needs the "
                "gold standard and the runs themselves. Open them as files to make it."
            )
        else:
            with_codes = {r: ev.with_codes() for r, ev in evals.items()}
            st.caption(
                "For each run: the code families it adds codes to and misses codes in, per 100 gold codes (families "
                "with at least 10 gold codes), the codes it writes instead of the right ones, and example documents. "
                "Prints on A4."
            )
            g, h = st.columns(2)
            for where, (fmt, label, mime) in zip(
                (g, h),
                (
                    ("pdf", "Coding report (PDF)", "application/pdf"),
                    ("html", "Coding report (web page)", "text/html"),
                ),
            ):
                downloads.prepared(
                    where,
                    label,
                    functools.partial(coder_report, with_codes, fmt),
                    f"coding_report.{fmt}",
                    mime,
                    key=f"dl_coder_{fmt}",
                    source=runs_now,
                )

        st.subheader("Figures (interactive HTML, works offline)", anchor=False)
        st.caption(
            "Each figure file holds plotly.js (about 5 MB), so that it opens without a network: it is made "
            "when you ask for it."
        )
        e, f = st.columns(2)
        downloads.prepared(
            e,
            "Levels chart, all runs",
            lambda: figure_html(levels_bar(levels_side_by_side(evals), levels=names, words=chart_words())),
            "levels_chart.html",
            "text/html",
            key="dl_fig_levels",
            source=runs_now,
        )
        downloads.prepared(
            f,
            f"Code-family tree · {label_md(run)} (current focus)",
            lambda: figure_html(tree_figure(focused_subtree(ev.nodes, ev.ontology, focus), words=tree_words)),
            f"tree_{run}.html",
            "text/html",
            key="dl_fig_tree",
            source=(ev, focus),
        )

        st.subheader("One-page report", anchor=False)
        st.caption(
            "A report is made when you ask for it (a few seconds), then downloaded with the next click."
        )

        top = ctx.max_level

        def run_report() -> str:
            errors = ev.nodes.assign(errors=ev.nodes.fp + ev.nodes.fn).nlargest(30, "errors")
            sections = [
                ("Settings", reports.settings_lines(ctx, 1000)[:3]),
                (
                    "Scores by level",
                    [
                        f"{len(ev.docs):,} documents; levels up to {level(onto, top)}.",
                        levels_bar(levels_side_by_side({run: ev}), levels=names, words=chart_words()),
                        reports.readable(ev.levels_table, onto),
                    ],
                ),
                (
                    "Within families",
                    describe_gaps(ev, run, level_name=lambda lv: level(onto, lv))
                    + [reports.readable(within_family(ev), onto)],
                ),
                (
                    "Code-family tree",
                    [tree_figure(focused_subtree(ev.nodes, ev.ontology, focus), words=tree_words)],
                ),
                (
                    "Families with the most errors",
                    [
                        reports.readable(
                            errors[
                                [
                                    "code",
                                    "title",
                                    "level",
                                    "gold",
                                    "predicted",
                                    "tp",
                                    "fp",
                                    "fn",
                                    "precision",
                                    "recall",
                                    "f1",
                                    "errors",
                                ]
                            ],
                            onto,
                        )
                    ],
                ),
                ("Per-code averages", [reports.readable(ev.macro_table, onto)]),
            ]
            return html_report(f"cophe report · run {run}", sections)

        row = st.container(horizontal=True, gap="medium")  # each button as wide as its words, wrapping
        downloads.prepared(
            row,
            f"Report for run {label_md(run)}",
            run_report,
            f"report_{run}.html",
            "text/html",
            key="dl_report",
            source=(ev, focus),
        )
        if len(runs) >= 2:
            run_a, run_b = reports.compare_pair(runs, st.session_state)
            resamples = st.session_state.get("cmp_resamples", 1000)
            downloads.prepared(
                row,
                f"Comparison report: {label_md(run_b)} − {label_md(run_a)}",
                lambda: reports.compare_report(
                    ctx, reports.comparison(ctx, runs, run_a, run_a, run_b, resamples=resamples), focus=focus
                ),
                f"compare_{run_b}_vs_{run_a}.html",
                "text/html",
                key="dl_cmp_report",
                source=(*runs_now, run_a, run_b, resamples, focus),
                help=f"Runs A and B as chosen on the Compare page ({label_md(run_a)} and {label_md(run_b)}), "
                f"with every run against {label_md(run_a)}.",
            )
