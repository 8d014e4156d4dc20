"""Scores by level: the headline figures of each run with their intervals, then exact-code, right-family and
right-family-and-count scores level by level, with the within-family gaps in words."""

import numpy as np
import pandas as pd
import streamlit as st

from cophe_core.breakdown.compare import HEADLINE_COLUMNS, figure_parts, headlines, levels_side_by_side
from cophe_core.breakdown.families import gap_statement
from cophe_core.breakdown.stats import bootstrap_runs
from cophe_core.output.level_chart import levels_chart_spec, levels_points
from cophe_core.output.plotting import levels_bar
from cophe_dashboard import components, state
from cophe_dashboard.components import md
from cophe_dashboard.texts import (
    HELP,
    MEASURES,
    chart_words,
    helps,
    level,
    measure,
    styled,
    technical,
    term,
)

RESAMPLES, SEED = 1000, 0
GAP = 0.005  # a level is described when right family and count falls this far below right family
PENDING = "…"  # an interval cell while the intervals are computed
# Above this many documents × runs without intervals, the values are drawn first and the intervals after
# them (1,000 resamples of 3,372 documents for five runs take about 0.2 s: drawing twice would cost more).
PENDING_ABOVE = 50_000


def run_interval(ev, run: str) -> pd.DataFrame:
    """The run's headline figures with their 95% intervals (the same for a run resampled alone or with others:
    the resamples are drawn from the seed)."""
    return bootstrap_runs({run: ev}, n_resamples=RESAMPLES, seed=SEED)[run]


def interval(low: float, high: float) -> str:
    return "–" if pd.isna(low) else f"{low:.3f}–{high:.3f}"


def headline_table(t: pd.DataFrame, *, ready: bool, pending: str = PENDING):
    """The runs × headline figures table as shown: F1 of each measure with its 95% interval, then the
    precision and recall of right family and count; the best value of each column in bold."""
    shown = pd.DataFrame({term("run"): t.index})
    numbers = []
    for col, (m, stat) in HEADLINE_COLUMNS.items():
        name = f"{measure(m)} {term(stat)}" if stat == "f1" else f"{term(m)}: {term(stat)}"
        shown[name] = t[col].to_numpy()
        numbers.append(name)
        if stat == "f1":  # the intervals of precision and recall are in the full table below
            shown[f"{term(m)}: {term('interval')}"] = (
                [interval(lo, hi) for lo, hi in zip(t[f"{col}_low"], t[f"{col}_high"])]
                if ready
                else [pending] * len(t)
            )

    def bold_best(values: pd.Series) -> list[str]:
        best = values.round(3) == values.round(3).max()
        return ["font-weight: bold" if b and len(values) > 1 else "" for b in best]

    intervals = [c for c in shown.columns if c not in numbers and c != term("run")]
    return (
        shown.style.format("{:.3f}", subset=numbers)
        .format(md, subset=[term("run")])
        .apply(bold_best, subset=numbers)
        .set_properties(subset=intervals, **{"white-space": "nowrap"})
    )


def levels_figure(table: pd.DataFrame, points: pd.DataFrame | None, names: dict, words: dict):
    """F1 by level as bars, one panel per run, each with its 95% interval when ``points`` holds them (the
    rows of :func:`levels_points`, in the table's order): the figure the page's files hold."""
    if points is not None:
        table = table.assign(low=points.low.to_numpy(), high=points.high.to_numpy())
    return levels_bar(table, "f1", levels=names, words=words)


def gap_line(ev, run: str, onto, technical: bool) -> str | None:
    """Where right family and count falls below right family, ranked, in one sentence (:func:`gap_statement`).
    ``technical``: whether the words are the technical ones (:func:`texts.technical`), which the sentence is
    worded in: part of the key under which :func:`state.memo` keeps it."""
    line = gap_statement(
        ev,
        run,
        threshold=GAP,
        level_name=lambda lv: level(onto, lv),
        measures=(term("cophe").lower(), term("set_based").lower()),
    )
    return None if line is None else md(line)


def show() -> None:
    """Draw the page."""
    st.title("Scores by level")
    ctx = state.require_scoring()
    if ctx:
        components.problems_panel(ctx.scoring)
        onto = ctx.ontology
        st.caption(
            f"Data: {md(ctx.source)} · {ctx.n_documents:,} documents · "
            f"levels up to **{md(level(onto, ctx.max_level))}**"
        )
        runs = st.multiselect("Runs", ctx.scoring.run_names, default=ctx.scoring.run_names, key="levels_runs")
        evals = {r: ctx.evaluation(r) for r in runs}
        if not evals:
            st.info("Choose at least one run.")
            st.stop()

        # An aggregate analysis's slices hold counts summed over their documents: nothing to resample
        counts_only = ctx.aggregate is not None and ctx.slice is not None
        large = state.on_request(ctx, len(evals))
        slot = st.empty()
        cis: dict[str, pd.DataFrame] = {}
        if (
            large
            and not counts_only
            and not st.toggle(
                "Compute 95% intervals",
                key="levels_agg_ci",
                help="Reads each run's per-document counts from the file and resamples them 1,000 times: "
                "minutes for millions of documents, whose intervals are narrow.",
            )
        ):
            slot.table(
                headline_table(state.memo(headlines, evals), ready=False, pending="on request"),
                hide_index=True,
            )
            st.caption(
                f"All levels up to {md(level(onto, ctx.max_level))} together. **Bold**: the best run in each "
                f"column. {ctx.n_documents:,} documents: the 95% intervals are computed on request (above)."
            )
        elif counts_only:
            slot.table(
                headline_table(state.memo(headlines, evals), ready=False, pending="–"), hide_index=True
            )
            st.caption(
                f"All levels up to {md(level(onto, ctx.max_level))} together. **Bold**: the best run in each "
                "column. No intervals: an aggregate analysis holds a slice's counts summed over its documents."
            )
        else:
            # Headlines with their intervals, every run missing them on the same resamples; on large inputs the
            # values are shown first, while the intervals are computed
            missing = {r: ev for r, ev in evals.items() if not state.is_kept(run_interval, ev, r)}
            if missing:
                if len(missing) * ctx.n_documents > PENDING_ABOVE:
                    slot.table(headline_table(state.memo(headlines, evals), ready=False), hide_index=True)
                with st.spinner("Computing 95% intervals…"):
                    for r, table in bootstrap_runs(missing, n_resamples=RESAMPLES, seed=SEED).items():
                        state.put(table, run_interval, missing[r], r)
            cis = {r: state.memo(run_interval, ev, r) for r, ev in evals.items()}
            slot.table(headline_table(state.memo(headlines, evals, cis), ready=True), hide_index=True)
            st.caption(
                f"All levels up to {md(level(onto, ctx.max_level))} together. **Bold**: the best run in each "
                "column. 95% interval: 1,000 bootstrap resamples of the documents, seed 0."
            )
        # The levels at a glance, shown at once: F1 by level per run with its interval. Drawn by Vega-Lite, which
        # the page has already, so that the first view needs no plotly.js (4.7 MB of script).
        points = state.memo(levels_points, evals, cis or None)
        data, spec = levels_chart_spec(
            points,
            level_name=lambda lv: level(onto, lv),
            measure_name=measure,
            words={"run": term("run"), "level": term("level"), "measure": term("measure"), "f1": term("f1")},
            columns=min(3, len(evals)),
        )
        st.vega_lite_chart(data, spec, key="levels_overview", width="content")
        st.caption(
            f"{term('f1')} by level, run by run: a dot for each way of scoring, its line the 95% interval"
            + ("." if cis else " (intervals not computed).")
            + " The files below draw the same figures as bars, for a paper or a slide."
        )
        table = state.memo(levels_side_by_side, evals)
        names = {lv: level(onto, lv) for lv in dict.fromkeys(table.level)}
        # The chart shown is Vega-Lite (the first view loads no plotly.js); its files are drawn by Plotly on
        # the server, only when asked for: no switch, no second chart of the same figures.
        fig = state.memo(levels_figure, table, points if cis else None, names, chart_words())
        components.figure_download(fig, "levels_chart", "dl_levels_chart", table=table)
        with st.expander("What the columns mean"):
            st.markdown("\n".join(f"- {md(HELP[k])}" for k in (*MEASURES, "precision", "recall", "interval")))
        gaps = [
            line for run, ev in evals.items() if (line := state.memo(gap_line, ev, run, onto, technical()))
        ]
        if gaps:
            st.markdown(
                f"**Where {md(term('cophe').lower())} falls below {md(term('set_based').lower())}**: "
                "the model gets the families right but not the number of codes in them."
            )
            st.markdown("\n".join(f"- {line}" for line in gaps))

        shown = table.assign(measure=table.measure.map(measure), level=table.level.map(names))
        # A level holding no code at all (no gold, no predicted code) has nothing to score: its figures are
        # shown "–", not the 0 the SPEC gives an empty denominator (which the CSV and JSON keep).
        nothing = (shown.tp + shown.fp + shown.fn == 0).to_numpy()
        shown.loc[nothing, ["precision", "recall", "f1"]] = np.nan
        st.dataframe(
            styled(  # counts with separators, figures to 3 decimals, "–" where there is none
                shown,
                **dict.fromkeys(("tp", "fp", "fn"), "count"),
                **dict.fromkeys(("precision", "recall", "f1"), "decimal"),
            ),
            hide_index=True,
            width="stretch",
            column_config={
                "run": st.column_config.TextColumn(term("run")),
                "measure": st.column_config.TextColumn(term("measure"), help=helps(list(MEASURES))),
                "level": st.column_config.TextColumn(term("level"), help=HELP["level"]),
                **{k: st.column_config.NumberColumn(term(k), help=HELP[k]) for k in ("tp", "fp", "fn")},
                **{  # the Styler's 3 decimals or "–" (a format here would override it)
                    k: st.column_config.NumberColumn(term(k), help=HELP[k], width="small")
                    for k in ("precision", "recall")
                },
                # a number, not a bar: a bar's figure vanished beside MIMIC-sized counts; the chart above draws it
                "f1": st.column_config.NumberColumn(term("f1"), help=HELP["f1"], width="small"),
            },
        )
        if cis and st.toggle("95% intervals of every figure (bootstrap over documents)", key="levels_ci"):
            st.caption(
                "1,000 resamples of the documents, seed 0; the percentile interval of each figure. "
                "Two runs whose intervals overlap may still differ: use Compare runs for a paired test."
            )
            rows = []
            for run in evals:
                for r in cis[run].itertuples():
                    m, lv, s = figure_parts(r.figure)
                    rows.append(
                        {
                            "run": run,
                            "measure": measure(m),
                            "level": level(onto, lv or "leaf"),
                            "statistic": term(s),
                            "value": r.value,
                            "low": r.low,
                            "high": r.high,
                        }
                    )
            st.dataframe(
                pd.DataFrame(rows),
                hide_index=True,
                width="stretch",
                column_config={
                    **{
                        k: st.column_config.TextColumn(term(k))
                        for k in ("run", "measure", "level", "statistic")
                    },
                    **{
                        k: st.column_config.NumberColumn(term(k), format="%.3f")
                        for k in ("value", "low", "high")
                    },
                },
            )
        with st.expander("Per-code averages (two definitions)"):
            st.caption(
                HELP["macro_f1"]
                + " "
                + HELP["macro_f1_of_means"]
                + " Averages run over the codes present in the gold standard or the predictions."
            )
            macro = pd.concat(
                [ev.macro_table.assign(run=run) for run, ev in evals.items()], ignore_index=True
            )
            macro = macro[["run", *macro.columns.drop("run")]]
            st.dataframe(
                styled(
                    macro.assign(measure=macro.measure.map(measure), level=macro.level.map(names)),
                    n_codes="count",
                ),
                hide_index=True,
                width="stretch",
                column_config={
                    **{k: st.column_config.TextColumn(term(k)) for k in ("run", "measure", "level")},
                    "n_codes": st.column_config.NumberColumn(term("n_codes"), help=HELP["n_codes"]),
                    **{
                        k: st.column_config.NumberColumn(term(k), format="%.3f", help=HELP.get(k))
                        for k in ("macro_precision", "macro_recall", "macro_f1", "macro_f1_of_means")
                    },
                },
            )
