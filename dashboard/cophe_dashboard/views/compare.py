"""Compare runs: every run against a baseline at a glance, then two runs in depth: is each difference real,
which families it comes from, where in the tree, and in which documents."""

import pandas as pd
import streamlit as st

from cophe_core.breakdown.compare import (
    HEADLINE_COLUMNS,
    delta_subtree,
    disagreements,
    figure_parts,
    levels_side_by_side,
)
from cophe_core.breakdown.comparison import FAMILY_ROWS, MAX_RUNS, RESAMPLES, Comparison
from cophe_core.breakdown.stats import Outcome
from cophe_core.output.plotting import COLOUR_BY, delta_bar, levels_bar, runs_chart, tree_figure
from cophe_dashboard import components, reports, state, urlstate
from cophe_dashboard.components import keep_choice, label_md, md
from cophe_dashboard.texts import (
    HELP,
    chart_words,
    figure_name,
    labeller,
    level,
    measure,
    number,
    styled,
    term,
)

SIDE_TREE_WIDTH = 260  # px of tiles in each of two trees side by side (beside its colour bar, at 1280 px)
WRAP_ROW = 68  # px: Streamlit wraps a cell's text in rows taller than 4rem (64 px)
SHADES = {
    Outcome.BETTER: "#d9f0d3",
    Outcome.WORSE: "#f8d3d0",
    Outcome.NO_CLEAR: "",
    "": "",
}  # light tints of VERDICT_COLOURS


def choice(name: str, key: str, options: list[str], default: str) -> None:
    """Set the choice ``key`` before it is drawn: from the view (the URL, or the value chosen before the user
    left the page), else ``default`` when it holds no option."""
    urlstate.bind(name, key, options)
    if st.session_state.get(key) not in options:
        st.session_state[key] = default


def short_words(figure: str, onto) -> str:
    """A figure's short name for a column heading: "Right family F1", "Exact codes F1 per code",
    "Right family and count F1, Category (3 digits)"."""
    m, lv, stat = figure_parts(figure)
    name = f"{term(m)} {term('f1')} per code" if stat == "macro_f1" else f"{term(m)} {term(stat)}"
    return name if lv is None or lv == "overall" else f"{name}, {level(onto, lv)}"


def verdict_box(said: Outcome):
    """The box for a verdict: green only for better, red for worse, neutral for no clear difference."""
    if said == Outcome.BETTER:
        return lambda body: st.success(body, icon=":material/trending_up:")
    if said == Outcome.WORSE:
        return lambda body: st.error(body, icon=":material/trending_down:")
    return lambda body: st.info(body, icon=":material/drag_handle:")


def figure_sets(levels: list[str]) -> dict[str, list[str]]:
    """The columns of the runs table, by the question they answer (few enough to fit the page)."""
    return {
        "Headline figures": ["flat f1", "flat macro_f1", "set_based overall f1", "cophe overall f1"],
        "Precision and recall": [
            "flat precision",
            "flat recall",
            "set_based overall precision",
            "set_based overall recall",
            "cophe overall precision",
            "cophe overall recall",
        ],
        "F1 by level": [*(f"cophe {lv} f1" for lv in levels), "cophe overall f1"],
        "Per-code averages by level": ["flat macro_f1", *(f"cophe {lv} macro_f1" for lv in levels)],
    }


def column_heads(shown: str, figs: list[str], onto) -> tuple[dict[str, str], str]:
    """Column headings of a figure set, and what the whole table shows: the by-level sets name only the
    level in each heading, so that the columns fit."""
    if shown in ("F1 by level", "Per-code averages by level"):
        heads = {}
        for f in figs:
            m, lv, _ = figure_parts(f)
            heads[f] = term(m) if lv is None else level(onto, "overall" if lv == "overall" else lv)
        what = f"{term('cophe')} F1" + (" per code" if shown.startswith("Per-code") else "")
        return heads, what + " at each level" + (
            " (first column: exact codes)" if shown.startswith("Per") else ""
        )
    return {f: short_words(f, onto) for f in figs}, ""


def resampling_now(ctx, names: list[str]) -> bool:
    """Whether the page resamples: always for inputs; for a large aggregate analysis, once asked to."""
    if not state.on_request(ctx, min(len(names), MAX_RUNS)):
        return True
    return st.toggle(
        "Compute intervals and tests",
        key="cmp_agg_tests",
        help="Resamples every run's per-document counts 1,000 times: minutes for millions of documents, whose "
        "intervals are narrow.",
    )


def values_only(ctx, cmp: Comparison) -> None:
    """The runs' headline figures without intervals (a large aggregate analysis, until asked)."""
    table = cmp.headlines
    heads = {
        col: f"{measure(m)} {term(stat)}" if stat == "f1" else f"{term(m)}: {term(stat)}"
        for col, (m, stat) in HEADLINE_COLUMNS.items()
    }
    st.dataframe(
        table.rename(columns=heads).rename_axis(index=term("run")),
        width="stretch",
        column_config={h: st.column_config.NumberColumn(h, format="%.3f") for h in heads.values()},
    )
    st.caption(
        f"{ctx.n_documents:,} documents: the 95% intervals and the tests of each difference are computed on "
        "request (Compute intervals and tests, above)."
    )


def runs_section(ctx, names: list[str], onto, resample: bool = True) -> Comparison:
    """Every run's figures with intervals, the best marked, and each run against the baseline; the comparison
    it shows, for the sections below."""
    st.subheader("All runs at a glance", anchor=False)
    if len(names) > MAX_RUNS:
        st.warning(f"Showing the first {MAX_RUNS} of {len(names)} runs.")
    if not resample:
        baseline = st.session_state.get("cmp_baseline", names[0])
        cmp = reports.comparison(
            ctx,
            names,
            baseline if baseline in names else names[0],
            resamples=st.session_state.get("cmp_resamples", RESAMPLES),
        )
        values_only(ctx, cmp)
        return cmp
    c1, c2, c3 = st.columns([2, 4, 2])
    choice("baseline", "cmp_baseline", names, names[0])
    baseline = c1.selectbox(
        "Baseline",
        names[:MAX_RUNS],
        key="cmp_baseline",
        help="Every other run is compared with this one, on the same documents.",
    )
    levels = ctx.evaluation(names[0]).levels
    sets = figure_sets(levels)
    choice("figures", "cmp_figures", list(sets), next(iter(sets)))
    shown = c2.radio("Figures", list(sets), horizontal=True, key="cmp_figures")
    resamples = c3.select_slider(
        "Resamples",
        [200, 500, 1000, 2000],
        value=RESAMPLES,
        key="cmp_resamples",
        help="Bootstrap resamples of the documents (seed 0) for the intervals and tests.",
    )
    cmp = reports.comparison(ctx, names, baseline, resamples=resamples)
    slot = st.empty()
    with slot, st.spinner(f"Resampling {len(cmp.runs)} runs {resamples:,} times…"):
        table = cmp.run_table
    with slot.container():
        figs = sets[shown]
        heads, what = column_heads(shown, figs, onto)
        st.markdown(
            f"**Scores{': ' + what if what else ''}** · 95% interval in brackets · ★ best in its column"
        )
        st.dataframe(scores_grid(table, figs, heads), width="stretch", key="cmp_runs_scores")
        others = [r for r in cmp.runs if r != baseline]
        if others:
            st.markdown(f"**Difference from {md(baseline)}** · run − baseline, 95% interval in brackets")
            # a static table: its cells, "−0.035 (−0.041 to −0.030) worse", wrap to the page's width, where a
            # grid's columns ran past it at 1280 px and cut the last one
            st.table(differences_grid(table, figs, heads, baseline))
            st.caption(
                "Green: better than the baseline; red: worse; no colour: no clear difference. A difference "
                "counts when the paired bootstrap's p-value, corrected for comparing several runs (Holm), "
                "is below 0.05 and its interval leaves out 0. Per-code averages resample the codes, the "
                "other figures the documents."
            )
        keep_choice("cmp_runs_chart_figure", figs)
        pick = st.selectbox(
            "Chart", figs, format_func=labeller(lambda f: short_words(f, onto)), key="cmp_runs_chart_figure"
        )
        fig = runs_chart(table, pick, title=short_words(pick, onto), baseline=baseline)
        st.plotly_chart(fig, key="cmp_runs_chart")
        components.figure_download(fig, "runs_chart", "dl_cmp_runs_chart", table=readable_runs(table, onto))
    return cmp


def scores_grid(table: pd.DataFrame, figs: list[str], heads: dict[str, str]):
    """Runs × figures as text, "0.612 (0.598–0.627)", the best of each column starred and bold."""
    rows = table[table.figure.isin(figs)]
    text = rows.assign(
        cell=[
            f"{'★ ' if b else ''}{v:.3f} ({lo:.3f}–{hi:.3f})"
            for v, lo, hi, b in zip(rows.value, rows.low, rows.high, rows.best)
        ]
    )
    grid = text.pivot(index="run", columns="figure", values="cell").loc[list(dict.fromkeys(rows.run)), figs]
    grid = grid.rename(columns=heads).rename_axis(index=term("run"), columns=None)
    return grid.style.map(lambda v: "font-weight: bold" if str(v).startswith("★") else "")


def differences_grid(table: pd.DataFrame, figs: list[str], heads: dict[str, str], baseline: str):
    """Runs × figures of run − baseline as text with its interval, tinted by the verdict."""
    rows = table[table.figure.isin(figs) & (table.run != baseline)]

    def cell(d: float, lo: float, hi: float, said: str) -> str:
        return (
            f"{d:+.3f} ({lo:+.3f} to {hi:+.3f}) {said if said != Outcome.NO_CLEAR else ''}".rstrip().replace(
                "-", "−"
            )
        )

    text = rows.assign(
        cell=[cell(*r) for r in zip(rows.delta, rows.delta_low, rows.delta_high, rows.verdict)]
    )
    order = list(dict.fromkeys(rows.run))
    grid = text.pivot(index="run", columns="figure", values="cell").loc[order, figs]
    said = rows.pivot(index="run", columns="figure", values="verdict").loc[order, figs]
    grid = grid.rename(columns=heads).rename_axis(index=term("run"), columns=None)
    tints = said.map(lambda v: f"background-color: {SHADES[v]}" if SHADES[v] else "")
    tints.columns, tints.index = grid.columns, grid.index
    return grid.style.apply(lambda _: tints, axis=None)


def readable_runs(table: pd.DataFrame, onto) -> pd.DataFrame:
    """The runs table for a CSV: the figure in words beside its id."""
    return table.assign(figure_name=[figure_name(f, onto) for f in table.figure])


def pair_section(cmp: Comparison, names: list[str], onto, resample: bool = True) -> Comparison | None:
    """Run A against run B: headline tiles, the change by level, and whether each headline change is real;
    the comparison with that pair, for the sections below."""
    st.subheader("Two runs in depth", anchor=False)
    a_col, b_col = st.columns(2)
    base = st.session_state.get("cmp_baseline", names[0])
    choice("a", "cmp_a", names, base if base in names else names[0])
    a = a_col.selectbox("Run A", names, key="cmp_a")
    choice("b", "cmp_b", names, names[1] if names[0] == a else names[0])
    b = b_col.selectbox("Run B", names, key="cmp_b")
    if a == b:
        st.warning("Pick two different runs.")
        return None
    cmp = cmp.with_pair(a, b)
    deltas = cmp.deltas
    overall = deltas[(deltas.level == "overall") & (deltas.measure == "cophe")].iloc[0]
    flat = deltas[deltas.measure == "flat"].iloc[0]
    c1, c2, c3 = st.columns(3)
    c1.metric(f"{term('cophe')} F1 · {label_md(a)}", f"{overall.a_f1:.3f}", help=HELP["cophe"])
    c2.metric(
        f"{term('cophe')} F1 · {label_md(b)}",
        f"{overall.b_f1:.3f}",
        delta=f"{overall.delta_f1:+.3f}",
        help=HELP["cophe"],
    )
    c3.metric(
        f"{term('flat')} F1: change ({label_md(b)} − {label_md(a)})",
        number(flat.delta_f1, "signed"),
        help=HELP["flat"],
    )
    significance(cmp, onto, resample)
    by_level(deltas, cmp, onto)
    return cmp


def significance(cmp: Comparison, onto, resample: bool = True) -> None:
    a, b = cmp.a, cmp.b
    st.markdown(f"**Is the difference real?** {md(b)} − {md(a)}")
    if not resample:
        st.caption("Tested on request: Compute intervals and tests, at the top of the page.")
        return
    st.caption(
        "Documents are resampled: a paired bootstrap gives a 95% interval for the change, and an "
        "approximate randomisation test (each document's outputs swapped between the runs at random) "
        "a p-value."
    )
    # The placeholder replaces the last verdicts as soon as the rerun reaches it, so no old p-value stays on
    # screen while new ones are computed.
    slot = st.empty()
    with slot, st.spinner("Testing the difference…"):
        paired, verdicts = cmp.paired, cmp.headline_verdicts
    with slot.container():
        for v in verdicts:
            verdict_box(v.outcome)(md(v.describe(a, b, figure=figure_name(v.figure, onto))))
        with st.expander("All figures, with intervals and p-values"):
            parts = pd.DataFrame(
                [
                    (measure(m), level(onto, lv or "leaf"), term(stat))
                    for m, lv, stat in map(figure_parts, paired.figure)
                ],
                columns=["measure", "level", "statistic"],
            )
            table = pd.concat([parts, paired.drop(columns="figure")], axis=1)
            st.dataframe(
                styled(
                    table,
                    **dict.fromkeys(("a", "b", "low", "high", "p_value", "p_bootstrap"), ("decimal", 4)),
                    delta=("signed", 4),
                ),
                hide_index=True,
                width="stretch",
                column_config={
                    **{k: st.column_config.TextColumn(term(k)) for k in ("measure", "level", "statistic")},
                    "a": st.column_config.NumberColumn(a),
                    "b": st.column_config.NumberColumn(b),
                    "delta": st.column_config.NumberColumn(f"Change ({b} − {a})"),
                    **{k: st.column_config.NumberColumn(term(k)) for k in ("low", "high")},
                    **{
                        k: st.column_config.NumberColumn(term(k), help=HELP[k])
                        for k in ("p_value", "p_bootstrap")
                    },
                },
            )


def by_level(deltas: pd.DataFrame, cmp: Comparison, onto) -> None:
    a, b = cmp.a, cmp.b
    level_names = {lv: level(onto, lv) for lv in dict.fromkeys(deltas.level)}
    left, right = st.columns(2)
    with left:
        st.markdown(f"**Change by level ({md(b)} − {md(a)})**")
        keep_choice("cmp_metric", ["f1", "precision", "recall"])
        metric = (
            st.segmented_control(
                term("statistic"),
                ["f1", "precision", "recall"],
                default="f1",
                key="cmp_metric",
                format_func=labeller(term),
            )
            or "f1"
        )
        fig = delta_bar(deltas, metric, a, b, levels=level_names, words=chart_words())
        st.plotly_chart(fig, key="cmp_delta_chart")
        components.figure_download(fig, "delta_chart", "dl_cmp_delta", table=deltas)
    with right:
        st.markdown("**Both runs**")
        both = levels_side_by_side({a: cmp.evals[a], b: cmp.evals[b]})
        fig = levels_bar(both, metric, levels=level_names, words=chart_words())
        st.plotly_chart(fig, key="cmp_levels_chart")
        components.figure_download(fig, "both_runs_chart", "dl_cmp_levels", table=both)


@st.fragment
def families_section(ctx, cmp: Comparison, onto) -> None:
    """Families ranked by the change in errors, each with its change in F1, interval and an FDR flag. A
    fragment: choosing another level or order reruns this section only, not the page's charts and tree."""
    st.subheader("Which families changed", anchor=False)
    a, b = cmp.a, cmp.b
    levels = cmp.evals[a].levels
    default = levels.index(cmp.family_level)
    f1, f2 = st.columns([2, 3])
    keep_choice("cmp_family_level", levels)
    lv = f1.selectbox(
        "Families at", levels, index=default, key="cmp_family_level", format_func=labeller(level, onto)
    )
    order = f2.radio(
        "Show first",
        ["Largest changes", f"Where {b} makes more errors", f"Where {b} makes fewer errors"],
        horizontal=True,
        key="cmp_family_order",
    )
    slot = st.empty()
    with slot, st.spinner("Testing every family…"):
        table = cmp.families(lv)
    for other in levels:  # the other levels in the background: choosing one then shows it at once
        if other != lv:
            reports.compute_families_ahead(ctx, cmp, other)
    with slot.container():
        shown = table
        if order.endswith("more errors"):
            shown = table[table.change_errors > 0].sort_values(
                "change_errors", ascending=False, kind="stable"
            )
        elif order.endswith("fewer errors"):
            shown = table[table.change_errors < 0].sort_values("change_errors", kind="stable")
        flagged = int(table.flagged.sum())
        tested = (
            f"{flagged:,} differ beyond chance between the runs (Benjamini–Hochberg: at most 5% of the flagged "
            "families are expected to be false alarms)"
            if table.p_value.notna().any() or table.empty
            else "no test: an aggregate analysis's family counts are summed over the documents"
        )
        st.caption(
            f"**A** is {md(a)}, **B** is {md(b)}. {len(table):,} families with codes at this level; "
            f"{tested}. Change in errors: B's extra plus missed codes minus A's; below 0, B makes fewer."
        )
        st.dataframe(
            family_grid(shown.head(FAMILY_ROWS), a, b),
            hide_index=True,
            width="stretch",
            key="cmp_family_table",
            row_height=WRAP_ROW,  # a family's title on up to three lines: cut, it could not be read
            column_config=family_columns(a, b),
        )
        components.table_download(table, f"family_changes_{b}_vs_{a}", "dl_cmp_families")


def family_grid(t: pd.DataFrame, a: str, b: str):
    """The family table with the verdict of each flagged family in words and a tint: worse is never green."""
    said = [(Outcome.BETTER if d > 0 else Outcome.WORSE) if f else "" for d, f in zip(t.delta_f1, t.flagged)]
    shown = t[
        ["code", "title", "a_extra", "a_missed", "b_extra", "b_missed", "change_errors", "delta_f1"]
    ].assign(
        interval=[f"{lo:+.3f} to {hi:+.3f}".replace("-", "−") for lo, hi in zip(t.low, t.high)],
        verdict=[f"B {s}" if s else "no clear difference" for s in said],
    )
    tint = pd.Series([SHADES.get(s, "") for s in said], index=shown.index)

    def paint(col: pd.Series) -> list[str]:
        return [f"background-color: {c}" if c and col.name in ("delta_f1", "verdict") else "" for c in tint]

    numbers = dict.fromkeys(("a_extra", "a_missed", "b_extra", "b_missed"), "count")
    return styled(shown, **numbers, change_errors=("signed", 0), delta_f1=("signed", 3)).apply(paint)


def family_columns(a: str, b: str) -> dict:
    num = st.column_config.NumberColumn
    return {
        "code": st.column_config.TextColumn(term("code"), pinned=True),
        "title": st.column_config.TextColumn(term("title"), width="medium", pinned=True),
        "a_extra": num(f"{term('fp')} A", help=f"{term('fp')} codes of {a}"),
        "a_missed": num(f"{term('fn')} A", help=f"{term('fn')} codes of {a}"),
        "b_extra": num(f"{term('fp')} B", help=f"{term('fp')} codes of {b}"),
        "b_missed": num(f"{term('fn')} B", help=f"{term('fn')} codes of {b}"),
        "change_errors": num(
            "Change in errors",
            help=f"({term('fp')} + {term('fn')} of {b}) − ({term('fp')} + {term('fn')} of {a})",
        ),
        "delta_f1": num(
            "Change in F1",
            help=f"F1 of {b} − F1 of {a} in the family (right family and count)",
        ),
        "interval": st.column_config.TextColumn(term("interval")),
        "verdict": st.column_config.TextColumn(
            "Verdict",
            help="Flagged when the change in F1 is beyond chance "
            "once every family is tested (Benjamini–Hochberg q below 0.05; the "
            "q-values are in the CSV).",
        ),
    }


def tree_section(ctx, cmp: Comparison, onto) -> None:
    st.subheader("Where the change happens", anchor=False)
    a, b = cmp.a, cmp.b
    ea, eb = cmp.evals[a], cmp.evals[b]
    t0, t1, t2 = st.columns([1, 1, 1])
    layout = t0.radio("Tree", ["Change", "Side by side"], key="cmp_tree_layout", horizontal=True)
    colours = ["delta_f1", "delta_balance"] if layout == "Change" else ["balance", "f1", "set_f1"]
    keep_choice(f"cmp_colour_{layout}", colours)  # its labels name the runs compared
    colour = t1.selectbox(
        "Colour by",
        colours,
        format_func=lambda k: COLOUR_BY[k][0].replace("B − A", f"{b} − {a}"),
        key=f"cmp_colour_{layout}",
    )
    depth = t2.slider("Levels shown", 1, 3, 2, key="cmp_depth")
    focus = st.session_state.get("focus")
    if focus is not None and focus >= onto.n_nodes:
        focus = None
    sub = state.memo(delta_subtree, ea, eb, focus, depth=depth, max_nodes=2000)
    tree_words = {k: term(k) for k in ("gold", "predicted", "tp", "fp", "fn", "f1", "set_f1")}
    where = "All codes" if focus is None else md(f"{onto.keys[focus]} {onto.titles[focus]}")
    if layout == "Change":
        more = "higher F1" if colour == "delta_f1" else "relatively more extra codes"
        st.caption(
            f"Focus: {where} (set it in the code-family tree). Purple: {md(b)} has {more} than "
            f"{md(a)} in that family; orange: the opposite. The scale is fitted to the families shown; "
            "hover a family for both runs' counts."
        )
        fig = tree_figure(sub, colour, prefix="b_", words=tree_words, runs=(a, b))
        st.plotly_chart(fig, key=f"cmp_tree_{a}_{b}_{focus}_{colour}_{depth}")
        components.figure_download(
            fig, f"delta_tree_{b}_vs_{a}", "dl_cmp_tree", table=sub.drop(columns="merged")
        )
    else:
        st.caption(f"Focus: {where} (set it in the code-family tree).")
        for col, run, prefix in zip(st.columns(2), (a, b), ("a_", "b_")):
            with col:
                st.markdown(f"**{md(run)}**")
                side = sub.assign(**{c: sub[prefix + c] for c in ("balance", "f1", "set_f1")})
                st.plotly_chart(
                    # half the page each, beside its own colour bar: labels wrapped for that width
                    tree_figure(side, colour, prefix=prefix, words=tree_words, width=SIDE_TREE_WIDTH),
                    key=f"cmp_side_{run}_{focus}_{colour}_{depth}",
                )


def documents_section(cmp: Comparison, onto) -> None:
    st.subheader("Documents where the runs disagree most", anchor=False)
    a, b = cmp.a, cmp.b
    ea, eb = cmp.evals[a], cmp.evals[b]
    keep_choice("cmp_doc_level", ea.levels)
    at = st.selectbox(
        f"{term('cophe')} F1 at",
        ea.levels,
        index=min(2, len(ea.levels) - 1),
        key="cmp_doc_level",
        format_func=labeller(level, onto),
    )
    dis = disagreements(ea, eb, level=at, top=100)
    components.document_table(
        styled(
            dis, codes_disagreed="count", a_f1=("decimal", 2), b_f1=("decimal", 2), delta_f1=("signed", 2)
        ),
        f"cmp_docs_{at}",
        dis.doc_id.astype(str).tolist(),
        row_height=WRAP_ROW,  # the codes only one run wrote, on up to three lines: cut, they could not be read
        column_config={
            "doc_id": term("doc_id"),
            "codes_disagreed": st.column_config.NumberColumn("Codes in dispute"),
            "only_a": st.column_config.TextColumn(f"Only {a}", width="large"),
            "only_b": st.column_config.TextColumn(f"Only {b}", width="large"),
            "a_f1": st.column_config.NumberColumn(f"{term('f1')} · {a}"),
            "b_f1": st.column_config.NumberColumn(f"{term('f1')} · {b}"),
            "delta_f1": st.column_config.NumberColumn(f"{b} − {a}"),
        },
    )
    st.caption(components.CLICK_DOC)


def show() -> None:
    """Draw the page."""
    st.title("Compare runs")
    ctx = state.require_scoring()
    if ctx:
        names = ctx.scoring.run_names
        if len(names) < 2:
            st.info("Upload two or more runs to compare them.")
            st.stop()
        if ctx.aggregate is not None and ctx.slice is not None:
            st.info(
                "**Comparing runs on a slice of an aggregate analysis is not available.** Its intervals and tests "
                "resample documents, and an aggregate analysis holds each slice's counts summed over them. Choose "
                "Show everything to compare the runs on every code.",
                icon=":material/info:",
            )
            st.stop()
        onto = ctx.ontology
        resample = resampling_now(ctx, names)
        comparison = runs_section(ctx, names, onto, resample)
        st.divider()
        pair = pair_section(comparison, names, onto, resample)
        if pair:
            families_section(ctx, pair, onto)
            tree_section(ctx, pair, onto)
            if ctx.aggregate is None:
                documents_section(pair, onto)
