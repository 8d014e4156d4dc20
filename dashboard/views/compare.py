"""Compare runs: levels side by side, B − A deltas, a delta tree, and where the runs disagree."""

import data
import pandas as pd
import streamlit as st
from figures import COLOUR_BY, delta_bar, levels_bar, tree_figure
from texts import HELP, MEASURES, TERMS, level, measure, term

from cophe_core.compare import delta_subtree, disagreements, figure_parts, level_deltas, levels_side_by_side
from cophe_core.stats import describe_difference

HEADLINES = ["flat f1", "set_based overall f1", "cophe overall f1"]  # the figures given a verdict in words


def words() -> dict[str, str]:
    """The chart words in the user's vocabulary."""
    return {**{k: term(k) for k in TERMS}, **{m: measure(m) for m in MEASURES}}


def figure_words(figure: str, onto) -> str:
    """A bootstrap figure id such as ``set_based e0 f1`` in words: "Right family (Set-based) F1 at Category"."""
    m, lv, stat = figure_parts(figure)
    name = f"{measure(m)} {term(stat)}"
    return name if lv in (None, "overall") else f"{name} at {level(onto, lv)}"


def verdict(text: str):
    """The box for a verdict: green only for better, red for worse, neutral for noise."""
    if text.endswith("is better, beyond resampling noise."):
        return lambda body: st.success(body, icon=":material/trending_up:")
    if text.endswith("is worse, beyond resampling noise."):
        return lambda body: st.error(body, icon=":material/trending_down:")
    return lambda body: st.info(body, icon=":material/drag_handle:")


DELTA_WORDS = {"delta_f1": "Purple: run B's F1 is higher than run A's in that family; orange: lower.",
               "delta_balance": "Purple: run B writes relatively more extra codes than run A in that family; "
                                "orange: relatively more missed codes."}

st.title("Compare runs")
ctx = data.require_scoring()
if ctx:
    names = ctx.scoring.run_names
    if len(names) < 2:
        st.info("Upload two or more runs to compare them.")
        st.stop()
    a_col, b_col, lv_col = st.columns(3)
    a = a_col.selectbox("Run A", names, index=0, key="cmp_a")
    b = b_col.selectbox("Run B", names, index=1, key="cmp_b")
    if a == b:
        st.warning("Pick two different runs.")
        st.stop()
    ea, eb = ctx.evaluation(a), ctx.evaluation(b)
    onto = ctx.scoring.corpus.ontology

    deltas = level_deltas(ea, eb)
    overall = deltas[(deltas.level == "overall") & (deltas.measure == "cophe")].iloc[0]
    flat = deltas[deltas.measure == "flat"].iloc[0]
    c1, c2, c3 = st.columns(3)
    c1.metric(f"{term('cophe')} F1 · {a}", f"{overall.a_f1:.3f}", help=HELP["cophe"])
    c2.metric(f"{term('cophe')} F1 · {b}", f"{overall.b_f1:.3f}", delta=f"{overall.delta_f1:+.3f}", help=HELP["cophe"])
    c3.metric(f"{term('flat')} F1: change (B − A)", f"{flat.delta_f1:+.3f}", help=HELP["flat"])

    level_names = {lv: level(onto, lv) for lv in dict.fromkeys(deltas.level)}
    left, right = st.columns(2)
    with left:
        st.markdown("**Change by level (B − A)**")
        metric = st.segmented_control(term("statistic"), ["f1", "precision", "recall"], default="f1",
                                      key="cmp_metric", format_func=term) or "f1"
        fig = delta_bar(deltas, metric, a, b, levels=level_names, words=words())
        st.plotly_chart(fig, key="cmp_delta_chart")
        data.figure_download(fig, "delta_chart", "dl_cmp_delta")
    with right:
        st.markdown("**Both runs**")
        st.plotly_chart(levels_bar(levels_side_by_side({a: ea, b: eb}), metric, levels=level_names, words=words()),
                        key="cmp_levels_chart")
    who = {"a": a, "b": b, "delta": "B − A"}
    st.dataframe(deltas.assign(measure=deltas.measure.map(measure), level=deltas.level.map(level_names)),
                 hide_index=True, width="stretch", column_config={
                     "measure": st.column_config.TextColumn(term("measure")),
                     "level": st.column_config.TextColumn(term("level"), help=HELP["level"]), **{
                         c: st.column_config.NumberColumn(f"{term(c.split('_')[1])} · {who[c.split('_')[0]]}",
                                                          format="%+.3f" if c.startswith("delta") else "%.3f")
                         for c in deltas.columns if c not in ("measure", "level")}})

    st.subheader("Is the difference real?", anchor=False)
    st.caption("Documents are resampled: a paired bootstrap gives a 95% interval for B − A, and an approximate "
               "randomisation test (each document's outputs swapped between the runs at random) a p-value.")
    n1, n2 = st.columns(2)
    resamples = n1.select_slider("Resamples", [200, 500, 1000, 2000, 5000], value=1000, key="cmp_resamples")
    seed = n2.number_input("Seed", 0, 2**31 - 1, 0, key="cmp_seed")
    # The test takes 0.2 s (1,000 resamples) to 1 s (5,000) on 1,000 documents. The placeholder replaces the
    # last verdicts as soon as the rerun reaches it, so no old p-value stays on screen while new ones are computed.
    slot = st.empty()
    with slot, st.spinner("Testing the difference…"):
        paired = data.cached(ctx.scoring, ("paired", a, b, ctx.max_level, resamples, seed),
                             lambda: data.significance(ea, eb, resamples, seed))
    with slot.container():
        for row in paired.set_index("figure").loc[HEADLINES].reset_index().itertuples():
            text = describe_difference(row._replace(figure=figure_words(row.figure, onto)), a, b)
            verdict(text)(data.md(text))
        with st.expander("All figures, with intervals and p-values"):
            parts = pd.DataFrame([(measure(m), level(onto, lv or "leaf"), term(stat))
                                  for m, lv, stat in map(figure_parts, paired.figure)],
                                 columns=["measure", "level", "statistic"])
            table = pd.concat([parts, paired.drop(columns="figure")], axis=1)
            st.dataframe(table, hide_index=True, width="stretch", column_config={
                **{k: st.column_config.TextColumn(term(k)) for k in ("measure", "level", "statistic")},
                "a": st.column_config.NumberColumn(a, format="%.4f"),
                "b": st.column_config.NumberColumn(b, format="%.4f"),
                "delta": st.column_config.NumberColumn(term("delta"), format="%+.4f"),
                **{k: st.column_config.NumberColumn(term(k), format="%.4f") for k in ("low", "high")},
                **{k: st.column_config.NumberColumn(term(k), format="%.4f", help=HELP[k])
                   for k in ("p_value", "p_bootstrap")}})

    st.subheader("Where the change happens", anchor=False)
    t0, t1, t2 = st.columns([1, 1, 1])
    layout = t0.radio("Tree", ["Change (B − A)", "Side by side"], key="cmp_tree_layout", horizontal=True)
    colour = t1.selectbox("Colour by", ["delta_f1", "delta_balance"] if layout.startswith("Change") else
                          ["balance", "f1", "set_f1"], format_func=lambda k: COLOUR_BY[k][0], key=f"cmp_colour_{layout}")
    depth = t2.slider("Levels shown", 1, 3, 2, key="cmp_depth")
    focus = st.session_state.get("focus")
    onto = ea.ontology
    if focus is not None and focus >= onto.n_nodes:
        focus = None
    sub = delta_subtree(ea, eb, focus, depth=depth, max_nodes=2000)
    tree_words = {k: term(k) for k in ("gold", "predicted", "tp", "fp", "fn", "f1", "set_f1")}
    st.caption("Focus: " + ("All codes" if focus is None else data.md(f"{onto.keys[focus]} {onto.titles[focus]}"))
               + " (set it in the code-family tree). " + DELTA_WORDS.get(colour, ""))
    if layout.startswith("Change"):
        fig = tree_figure(sub, colour, prefix="b_", words=tree_words)
        st.plotly_chart(fig, key=f"cmp_tree_{a}_{b}_{focus}_{colour}_{depth}")
        st.caption(f"Hover shows the counts of {data.md(b)}.")
        data.figure_download(fig, f"delta_tree_{b}_vs_{a}", "dl_cmp_tree")
    else:
        for col, run, prefix in zip(st.columns(2), (a, b), ("a_", "b_")):
            with col:
                st.markdown(f"**{data.md(run)}**")
                side = sub.assign(**{c: sub[prefix + c] for c in ("balance", "f1", "set_f1")})
                st.plotly_chart(tree_figure(side, colour, prefix=prefix, words=tree_words), key=f"cmp_side_{run}_{focus}_{colour}_{depth}")

    st.subheader("Documents where the runs disagree most", anchor=False)
    at = st.selectbox(f"{term('cophe')} F1 at", ea.levels, index=min(2, len(ea.levels) - 1), key="cmp_doc_level",
                      format_func=lambda lv: level(onto, lv))
    dis = disagreements(ea, eb, level=at, top=100)
    st.dataframe(dis, hide_index=True, width="stretch", column_config={
        "doc_id": term("doc_id"), "codes_disagreed": st.column_config.NumberColumn("Codes in dispute"),
        "only_a": st.column_config.TextColumn(f"Only {a}", width="large"),
        "only_b": st.column_config.TextColumn(f"Only {b}", width="large"),
        "a_f1": st.column_config.NumberColumn(f"{term('f1')} · {a}", format="%.2f"),
        "b_f1": st.column_config.NumberColumn(f"{term('f1')} · {b}", format="%.2f"),
        "delta_f1": st.column_config.NumberColumn("B − A", format="%+.2f")})
