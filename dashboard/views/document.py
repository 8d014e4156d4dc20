"""One document, for clinical coders: codes grouped by family, each matched, over-coded or missed."""

import data
import pandas as pd
import streamlit as st

from cophe_core.documents import STATUS, document_codes, document_families

COLOURS = {"matched": "#d9f0d3", "over-coded": "#fddbc7", "missed": "#d1e5f0"}


def paint(status: str) -> str:
    key = "matched" if status == "matched" else "over-coded" if status.startswith("over") else "missed"
    return f"background-color: {COLOURS[key]}"


st.title("One document")
ctx = data.require_scoring()
if ctx:
    ev = ctx.evaluation()
    docs = list(ev.docs)
    wanted = st.session_state.get("doc_id")
    index = docs.index(wanted) if wanted in docs else 0
    doc = st.selectbox("Document", docs, index=index, key="doc_pick", help="Type to search.")
    st.session_state["doc_id"] = doc
    codes = document_codes(ev, doc)
    counts = codes.status.value_counts()
    st.markdown(
        f"Run **{data.md(ctx.run)}** · gold standard **{(codes.status != 'over-coded').sum()}** codes · "
        f"model **{(codes.status != 'missed').sum()}** codes · "
        f":material/check_circle: matched **{counts.get('matched', 0)}** · "
        f":material/add_circle: over-coded **{counts.get('over-coded', 0)}** · "
        f":material/do_not_disturb_on: missed **{counts.get('missed', 0)}**",
        help=" ".join(f"{k.capitalize()}: {v}." for k, v in STATUS.items()))
    if codes.empty:
        st.info("This document has no codes in the gold standard or the predictions.")
        st.stop()

    st.subheader("Codes by family", anchor=False)
    shown = codes.assign(family=codes.family + " " + codes.family_title)[["family", "code", "title", "status"]]
    st.dataframe(shown.style.map(paint, subset=["status"]), hide_index=True, width="stretch",
                 column_config={"family": st.column_config.TextColumn("Family (category)", width="medium"),
                                "code": "Code", "title": st.column_config.TextColumn("Title", width="large"),
                                "status": st.column_config.TextColumn("Status", help=" ".join(
                                    f"{k}: {v}." for k, v in STATUS.items()))})

    st.subheader("Families at each level", anchor=False)
    st.caption("Matched when the model gives a family as many codes as the gold standard; otherwise "
               "how many it over-codes or misses (the CoPHE view).")
    fams = document_families(ev, doc)
    levels = [lv for lv in ev.levels if lv in set(fams.level)]
    tabs = st.tabs(levels)
    for tab, lv in zip(tabs, levels):
        part = fams[fams.level == lv].drop(columns="level")
        tab.dataframe(part.style.map(paint, subset=["status"]), hide_index=True, width="stretch",
                      column_config={"code": "Code", "title": st.column_config.TextColumn("Title", width="large"),
                                     "gold": "Gold codes", "predicted": "Predicted codes", "status": "Status"})
    st.download_button("Download this document's codes (CSV)",
                       pd.concat([codes.assign(section="codes"), fams.assign(section="families")]).to_csv(index=False),
                       f"document_{doc}.csv", "text/csv", key="dl_doc")
