"""Code-family tree: where the model over-codes or misses, family by family.

Click a tile to focus on it; the path above the chart leads back. The browser
only ever receives the focused subtree (depth-limited, small siblings folded
into "Other"), never the whole ontology.
"""

import data
import errors
import streamlit as st
from figures import COLOUR_BY, tree_figure
from texts import HELP

from cophe_core.tree import focused_subtree

MAX_NODES = 2000  # the browser never gets more tiles than this (SPEC §6)
MAX_CHILDREN = 24  # per parent, largest first; the rest fold into "Other"


def titled(ev, codes: list[str]) -> str:
    onto = ev.ontology
    return "; ".join(f"{c} {onto.titles[onto.codes[c]]}" for c in codes)


def set_focus(node: int | None) -> None:
    st.session_state["focus"] = node


@st.fragment
@errors.guarded
def tree_area(ctx, colour: str, depth: int) -> None:
    ev = ctx.evaluation()
    onto = ev.ontology
    nodes = ev.nodes
    focus = st.session_state.get("focus")
    if focus is not None and focus not in set(nodes.node):
        focus = None
    path = onto.path(focus) if focus is not None else []

    crumbs = st.columns(min(len(path) + 1, 6), gap="small")
    crumbs[0].button("All codes", key="crumb_root", on_click=set_focus, args=(None,), type="tertiary")
    for col, n in zip(crumbs[1:], path[-5:]):
        label = f"› {onto.keys[n]} {onto.titles[n]}"[:60]
        col.button(label, key=f"crumb_{n}", on_click=set_focus, args=(n,), type="tertiary", help=onto.titles[n])

    sub = focused_subtree(nodes, onto, focus, depth=depth, max_children=MAX_CHILDREN, max_nodes=MAX_NODES)
    left, right = st.columns([1, 1])
    with left:
        fig = tree_figure(sub, colour)
        event = st.plotly_chart(fig, key=f"tree_{ctx.run}_{focus}_{colour}_{depth}",
                                on_select="rerun", selection_mode="points")
        st.caption(f"{len(sub):,} tiles. Size: gold + predicted codes. "
                   f"Colour: {COLOUR_BY[colour][0].lower()}. Click a tile to focus on it.")
        data.figure_download(fig, f"tree_{ctx.run}", f"dl_tree_{focus}")
    points = event.selection.get("points", []) if event else []
    if points:
        clicked = str(points[0].get("id", ""))
        if clicked.startswith("n"):
            node = int(clicked[1:])
            st.session_state["focus"] = onto.parent[node] if node == focus and onto.parent[node] >= 0 else node
            if node == focus and onto.parent[node] < 0:
                st.session_state["focus"] = None
            st.rerun(scope="fragment")
        elif clicked == "root":
            pass
        else:
            st.toast("“Other” groups the smaller families; pick one in the table on the right.")

    with right:
        head = "All codes" if focus is None else f"{onto.keys[focus]} {onto.titles[focus]}"
        st.markdown(f"**Inside {data.md(head)}**")
        parent_key = focus if focus is not None else -1
        top = nodes.level == onto.levels[len(ev.levels) - 1]
        kids = nodes[top] if focus is None else nodes[nodes.parent == parent_key]
        kids = kids.assign(mass=kids.gold + kids.predicted).sort_values("mass", ascending=False)
        picked = st.dataframe(
            kids[["code", "title", "gold", "predicted", "tp", "fp", "fn", "precision", "recall", "f1",
                  "balance", "docs_over", "docs_under", "node"]],
            hide_index=True, height=520, key=f"kids_{focus}", on_select="rerun", selection_mode="single-row",
            column_order=["code", "title", "gold", "predicted", "fp", "fn", "f1", "balance", "tp", "precision",
                          "recall", "docs_over", "docs_under"],
            column_config={
                "code": st.column_config.TextColumn("Code"), "title": st.column_config.TextColumn("Title", width="medium"),
                "gold": st.column_config.NumberColumn("Gold", help="Gold-standard codes in this family"),
                "predicted": st.column_config.NumberColumn("Predicted", help="Predicted codes in this family"),
                "tp": st.column_config.NumberColumn("Matched", help=HELP["tp"]),
                "fp": st.column_config.NumberColumn("Over-coded", help=HELP["fp"]),
                "fn": st.column_config.NumberColumn("Missed", help=HELP["fn"]),
                "precision": st.column_config.NumberColumn("P", help=HELP["precision"], format="%.2f"),
                "recall": st.column_config.NumberColumn("R", help=HELP["recall"], format="%.2f"),
                "f1": st.column_config.NumberColumn("F1", help=HELP["f1"], format="%.2f"),
                "balance": st.column_config.NumberColumn("Balance", help=HELP["balance"], format="%+.2f"),
                "docs_over": st.column_config.NumberColumn("Docs over", help=HELP["docs_over"]),
                "docs_under": st.column_config.NumberColumn("Docs missed", help=HELP["docs_under"]),
            },
        )
        rows = picked.selection.get("rows", []) if picked else []
        if rows:
            st.session_state["focus"] = int(kids.iloc[rows[0]].node)
            st.rerun(scope="fragment")

    if focus is not None:
        detail(ev, focus)


def detail(ev, focus: int) -> None:
    onto = ev.ontology
    row = ev.nodes.set_index("node").loc[focus]
    docs = ev.node_documents(focus)
    st.subheader(f"Documents behind {onto.keys[focus]} {onto.titles[focus]}", anchor=False)
    st.markdown(
        f"Gold standard: **{row.gold:,}** codes · predicted: **{row.predicted:,}** · "
        f"matched **{row.tp:,}**, over-coded **{row.fp:,}**, missed **{row.fn:,}**. "
        f"The model codes too many in **{row.docs_over:,}** documents and too few in **{row.docs_under:,}**."
    )
    which = st.segmented_control("Show", ["over-coded", "missed", "all"], default="over-coded" if row.fp >= row.fn else "missed",
                                 key=f"detail_kind_{focus}")
    if which == "over-coded":
        docs = docs[docs.difference > 0]
    elif which == "missed":
        docs = docs[docs.difference < 0].sort_values("difference")
    shown = docs.head(200).assign(
        gold_codes=lambda d: d.gold_codes.map(lambda c: titled(ev, c)),
        predicted_codes=lambda d: d.predicted_codes.map(lambda c: titled(ev, c)),
    )
    picked = st.dataframe(
        shown, hide_index=True, key=f"detail_{focus}_{which}", on_select="rerun", selection_mode="single-row",
        column_config={
            "doc_id": st.column_config.TextColumn("Document"),
            "gold": st.column_config.NumberColumn("Gold codes"),
            "predicted": st.column_config.NumberColumn("Predicted codes"),
            "difference": st.column_config.NumberColumn("Difference", help="Predicted − gold in this family",
                                                        format="%+d"),
            "gold_codes": st.column_config.TextColumn("Gold-standard codes in this family", width="large"),
            "predicted_codes": st.column_config.TextColumn("Predicted codes in this family", width="large"),
        },
    )
    st.caption(f"{len(docs):,} documents; the first 200 are listed. Select one to open it in the document view.")
    rows = picked.selection.get("rows", []) if picked else []
    if rows:
        st.session_state["doc_id"] = str(shown.iloc[rows[0]].doc_id)
        st.page_link("views/document.py", label=f"Open document {shown.iloc[rows[0]].doc_id} →", icon="📄")


st.title("Code-family tree")
ctx = data.require_scoring()
if ctx:
    st.caption(f"Run **{data.md(ctx.run)}** · red: over-coded, blue: missed, white: balanced. "
               "Hover a tile for its counts.")
    a, b, c = st.columns([2, 2, 3])
    colour = a.selectbox("Colour by", ["balance", "f1", "set_f1"], format_func=lambda k: COLOUR_BY[k][0],
                         key="tree_colour", help=HELP["balance"])
    depth = b.slider("Levels shown below the focus", 1, 3, 2, key="tree_depth")
    query = c.text_input("Find a code or family", key="tree_find", placeholder="e.g. 428 or 428.2 or 401-405")
    if query:
        onto = ctx.evaluation().ontology
        q = query.strip().upper()
        hits = [n for n, k in enumerate(onto.keys) if k == q]
        if hits:
            if st.session_state.get("_last_find") != q:
                st.session_state["focus"] = hits[-1] if len(hits) == 1 else hits[0]
                st.session_state["_last_find"] = q
        else:
            c.caption(f"No code {data.md(q)} in this ontology.")
    tree_area(ctx, colour, depth)
