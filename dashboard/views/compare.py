"""Compare runs: levels side by side, B − A deltas, a delta tree, and where the runs disagree."""

import data
import streamlit as st
from figures import COLOUR_BY, delta_bar, levels_bar, tree_figure
from texts import MEASURE

from cophe_core.compare import delta_subtree, disagreements, level_deltas, levels_side_by_side
from cophe_core.stats import describe_difference

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

    deltas = level_deltas(ea, eb)
    overall = deltas[(deltas.level == "overall") & (deltas.measure == "cophe")].iloc[0]
    flat = deltas[deltas.measure == "flat"].iloc[0]
    c1, c2, c3 = st.columns(3)
    c1.metric(f"CoPHE F1 · {a}", f"{overall.a_f1:.3f}")
    c2.metric(f"CoPHE F1 · {b}", f"{overall.b_f1:.3f}", delta=f"{overall.delta_f1:+.3f}")
    c3.metric("Flat F1 change (B − A)", f"{flat.delta_f1:+.3f}")

    left, right = st.columns(2)
    with left:
        st.markdown("**Change by level (B − A)**")
        metric = st.segmented_control("Metric", ["f1", "precision", "recall"], default="f1", key="cmp_metric",
                                      format_func={"f1": "F1", "precision": "Precision", "recall": "Recall"}.get)
        fig = delta_bar(deltas, metric or "f1", a, b)
        st.plotly_chart(fig, key="cmp_delta_chart")
        data.figure_download(fig, "delta_chart", "dl_cmp_delta")
    with right:
        st.markdown("**Both runs**")
        st.plotly_chart(levels_bar(levels_side_by_side({a: ea, b: eb}), metric or "f1"), key="cmp_levels_chart")
    names = {"a": a, "b": b, "delta": "B − A"}
    st.dataframe(deltas.assign(measure=deltas.measure.map(MEASURE)), hide_index=True, width="stretch",
                 column_config={"measure": "Measure", "level": "Level", **{
                     c: st.column_config.NumberColumn(
                         f"{c.split('_')[1].capitalize() if c.split('_')[1] != 'f1' else 'F1'} · {names[c.split('_')[0]]}",
                         format="%+.3f" if c.startswith("delta") else "%.3f")
                     for c in deltas.columns if c not in ("measure", "level")}})

    st.subheader("Is the difference real?", anchor=False)
    st.caption("Documents are resampled: a paired bootstrap gives a 95% interval for B − A, and an approximate "
               "randomisation test (each document's outputs swapped between the runs at random) a p-value.")
    n1, n2 = st.columns(2)
    resamples = n1.select_slider("Resamples", [200, 500, 1000, 2000, 5000], value=1000, key="cmp_resamples")
    seed = n2.number_input("Seed", 0, 2**31 - 1, 0, key="cmp_seed")
    paired = data.cached(ctx.scoring, ("paired", a, b, ctx.max_level, resamples, seed),
                         lambda: data.significance(ea, eb, resamples, seed))
    for row in paired[paired.figure.isin(["flat f1", "set_based overall f1", "cophe overall f1"])].itertuples():
        text = describe_difference(row, a, b)
        (st.success if "beyond" in text else st.info)(data.md(text))
    with st.expander("All figures, with intervals and p-values"):
        st.dataframe(paired, hide_index=True, width="stretch", column_config={
            c: st.column_config.NumberColumn(format="%.4f") for c in ("a", "b", "delta", "low", "high", "p_value")})

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
    st.caption("Focus: " + ("All codes" if focus is None else data.md(f"{onto.keys[focus]} {onto.titles[focus]}"))
               + " (set it in the code-family tree). Purple: B better / more over-coding; orange: B worse / less.")
    if layout.startswith("Change"):
        fig = tree_figure(sub, colour, prefix="b_")
        st.plotly_chart(fig, key=f"cmp_tree_{a}_{b}_{focus}_{colour}_{depth}")
        st.caption(f"Hover shows the counts of {data.md(b)}.")
        data.figure_download(fig, f"delta_tree_{b}_vs_{a}", "dl_cmp_tree")
    else:
        for col, run, prefix in zip(st.columns(2), (a, b), ("a_", "b_")):
            with col:
                st.markdown(f"**{data.md(run)}**")
                side = sub.assign(**{c: sub[prefix + c] for c in ("balance", "f1", "set_f1")})
                st.plotly_chart(tree_figure(side, colour, prefix=prefix), key=f"cmp_side_{run}_{focus}_{colour}_{depth}")

    st.subheader("Documents where the runs disagree most", anchor=False)
    level = st.selectbox("F1 at level", ea.levels, index=min(2, len(ea.levels) - 1), key="cmp_doc_level")
    dis = disagreements(ea, eb, level=level, top=100)
    st.dataframe(dis, hide_index=True, width="stretch", column_config={
        "doc_id": "Document", "codes_disagreed": st.column_config.NumberColumn("Codes in dispute"),
        "only_a": st.column_config.TextColumn(f"Only {a}", width="large"),
        "only_b": st.column_config.TextColumn(f"Only {b}", width="large"),
        "a_f1": st.column_config.NumberColumn(f"F1 {a}", format="%.2f"),
        "b_f1": st.column_config.NumberColumn(f"F1 {b}", format="%.2f"),
        "delta_f1": st.column_config.NumberColumn("B − A", format="%+.2f")})
