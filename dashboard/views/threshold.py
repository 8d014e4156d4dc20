"""Probability outputs: the F1-versus-threshold curve, ranking metrics, and tuning on a development split."""

import data
import pandas as pd
import streamlit as st
from figures import threshold_curve

from cophe_core import read_labels
from cophe_core.scores import read_scores, score_run, tune_threshold

SAMPLE_DEV = (data.SAMPLE / "icd9" / "dev_gold.csv", data.SAMPLE / "icd9" / "dev_scores.csv")


def use_threshold(t: float) -> None:
    st.session_state["rule_kind"] = "codes above a threshold"
    st.session_state["threshold"] = t


st.title("Threshold")
ctx = data.require_scoring()
if ctx:
    if not ctx.scored:
        st.info("No run holds probabilities. Upload a scores file (doc_id,code,score rows, or one score column per "
                "code as in Edin et al.'s feather files), or choose Sample: ICD-9, whose run **model** does.")
        st.stop()
    run = st.selectbox("Run with scores", list(ctx.scored), key="threshold_run")
    onto = ctx.scoring.corpus.ontology
    gold = data.cached(ctx.scoring, ("gold_raw",), lambda: read_labels(data._named(*ctx.gold)))
    scored = data.cached(ctx.scoring, ("scored_run", run, ctx.max_level),
                         lambda: score_run(gold, ctx.scored[run], onto, max_level=ctx.max_level))
    curve = data.cached(ctx.scoring, ("curve", run, ctx.max_level), scored.curve)

    st.subheader("Tune on a development split", anchor=False)
    st.caption("Choosing the threshold on the test set overstates every score. Pick it on held-out "
               "development data, then read the test scores at that threshold.")
    dev = None
    if ctx.source.startswith("Sample: ICD-9"):
        if st.toggle("Use the sample's development split (500 other synthetic documents)", key="use_dev"):
            dev = tuple((p.name, p.read_bytes()) for p in SAMPLE_DEV)
    else:
        c1, c2 = st.columns(2)
        dg = c1.file_uploader("Development gold standard", type=data.UPLOAD_TYPES, key="dev_gold",
                              max_upload_size=data.MAX_UPLOAD_MB)
        ds = c2.file_uploader("Development scores", type=data.UPLOAD_TYPES, key="dev_scores",
                              max_upload_size=data.MAX_UPLOAD_MB)
        if dg and ds:
            dev = ((dg.name, dg.getvalue()), (ds.name, ds.getvalue()))
    tuned = None
    if dev is not None:
        dev_curve = data.cached(ctx.scoring, ("dev_curve", dev[0][0], dev[1][0], ctx.max_level), lambda: score_run(
            read_labels(data._named(*dev[0])), read_scores(data._named(*dev[1])), onto,
            max_level=ctx.max_level).curve())
        tuned = tune_threshold(dev_curve, "cophe")
        st.success(f"On the development split, CoPHE overall F1 peaks at threshold **{tuned:.2f}**.")
        st.button(f"Use threshold {tuned:.2f} in every view", on_click=use_threshold, args=(tuned,), key="use_tuned")

    st.subheader("F1 against the threshold (test set)", anchor=False)
    current = ctx.rule[1] if ctx.rule and ctx.rule[0] == "threshold" else None
    fig = threshold_curve(curve, current, tuned)
    st.plotly_chart(fig, key="threshold_curve")
    data.figure_download(fig, f"threshold_curve_{run}", "dl_threshold_curve")
    st.caption("Read the curve to see how the measures respond; do not pick the test set's peak.")

    st.subheader("Threshold-free metrics", anchor=False)
    ranking = data.cached(ctx.scoring, ("ranking", run), scored.ranking)
    st.dataframe(pd.DataFrame([ranking]), hide_index=True, width="stretch",
                 column_config={k: st.column_config.NumberColumn(format="%.3f") for k in ranking})
    st.caption("P@k: share of each document's k best-scored codes that are right; R@k: share of its gold codes "
               "among them. AUC: how often a gold (document, code) pair outscores a wrong one (micro: all pairs; "
               "macro: per code, averaged). Codes with no score count as 0.")
