"""Probability outputs: the F1-versus-threshold curve, ranking metrics, and tuning on a development split.

The curve and the ranking metrics come from the scoring's own run (read with the sidebar's reading
options and validated with the other inputs) and its one decision rule (cophe_core.scoring.scores); a
development split is read with the same options.
"""

import pandas as pd
import streamlit as st

from cophe_core import InputError
from cophe_core.inputs.readers import RawScores
from cophe_core.ontology import Ontology
from cophe_core.output.plotting import threshold_curve
from cophe_core.scoring.labels import RowBound, TooManyRejected
from cophe_core.scoring.scores import score_run, tune_threshold
from cophe_dashboard import components, loading, state
from cophe_dashboard.components import md
from cophe_dashboard.texts import chart_words, technical, term

SAMPLE_DEV = (loading.SAMPLE / "icd9" / "dev_gold.csv", loading.SAMPLE / "icd9" / "dev_scores.csv")


def ranking_name(key: str) -> str:
    """A threshold-free metric's name: ``p@5`` reads "Precision, top 5" (with the technical terms, "P@5")."""
    if "@" in key:
        stat, k = key.split("@")
        if technical():
            return f"{stat.upper()}@{k}"
        return f"{term('precision' if stat == 'p' else 'recall')}, top {k}"
    kind = key.removeprefix("auc_")
    if technical():
        return f"AUC ({kind})"
    return "AUC, all document-code pairs" if kind == "micro" else "AUC, per-code average"


def use_threshold(t: float) -> None:
    st.session_state["rule_kind"] = "codes above a threshold"
    st.session_state["threshold"] = t


def dev_curve(
    onto: Ontology,
    reading_options: tuple,
    max_level: str,
    digests: tuple[str, str],
    anyway: bool,
    _dev: tuple[tuple[str, bytes], tuple[str, bytes]],
) -> tuple[pd.DataFrame, list[str]]:
    """The development split's threshold curve and input warnings, read as the test inputs were
    (``reading_options``: their items; ``digests``: the two files', which name ``_dev``) and held to the same
    bound on rows not scored, unless ``anyway`` (the user chose to score it anyway)."""
    reading, dev = dict(reading_options), _dev
    doc_col, code_col, header = reading.get("doc_col"), reading.get("code_col"), reading.get("header")
    gold = loading.read_upload(*dev[0], doc_col=doc_col, code_col=code_col, gold=True, header=header)
    scores = loading.read_upload(*dev[1], doc_col=doc_col, code_col=code_col, header=header)
    if not isinstance(scores, RawScores):
        raise InputError(
            f"{dev[1][0]}: holds code sets, not scores; tuning needs the development split's scores "
            "(doc_id,code,score rows, or one score column per code)"
        )
    run = score_run(
        gold,
        scores,
        onto,
        system=reading.get("system") or "auto",
        max_level=max_level,
        bound=None if anyway else RowBound(),
    )
    return run.curve(), run.corpus.warnings if run.corpus is not None else []


def show() -> None:
    """Draw the page."""
    st.title("Threshold")
    ctx = state.require_scoring()
    if ctx and state.documents_needed(ctx, "Choosing a threshold"):
        ctx = None
    if ctx:
        if not ctx.scored:
            st.info(
                "No run holds probabilities. Upload a scores file (doc_id,code,score rows, or one score column per "
                "code as in Edin et al.'s feather files), or choose Sample: ICD-9, whose run **model** does."
            )
            st.stop()
        run = st.selectbox("Run with scores", list(ctx.scored), key="threshold_run")
        scored = ctx.scored[run]
        with st.spinner("Computing the curve…"):  # 0.4 s on the sample's 1,000 documents
            curve = state.memo(scored.curve, max_level=ctx.max_level)

        st.subheader("Tune on a development split", anchor=False)
        st.caption(
            "Choosing the threshold on the test set overstates every score. Pick it on held-out "
            "development data, then read the test scores at that threshold."
        )
        dev = None
        if ctx.source.startswith("Sample: ICD-9"):
            if st.toggle("Use the sample's development split (500 other synthetic documents)", key="use_dev"):
                dev = (
                    (SAMPLE_DEV[0].name, SAMPLE_DEV[0].read_bytes()),
                    (SAMPLE_DEV[1].name, SAMPLE_DEV[1].read_bytes()),
                )
        else:
            c1, c2 = st.columns(2)
            dg = c1.file_uploader(
                "Development gold standard",
                type=loading.UPLOAD_TYPES,
                key="dev_gold",
                max_upload_size=loading.MAX_UPLOAD_MB,
            )
            ds = c2.file_uploader(
                "Development scores",
                type=loading.UPLOAD_TYPES,
                key="dev_scores",
                max_upload_size=loading.MAX_RUN_UPLOAD_MB,
            )
            if dg and ds:
                dev = (
                    (dg.name, loading.content(dg, loading.MAX_UPLOAD_MB)),
                    (ds.name, loading.content(ds, loading.MAX_RUN_UPLOAD_MB)),
                )
        tuned = None
        if dev is not None:
            digests = (loading.file_digest(*dev[0]), loading.file_digest(*dev[1]))
            upload = "dev:" + ":".join(digests)  # what "Score anyway" lifts the bound for: this split only
            anyway = upload in st.session_state.get(components.ANYWAY, set())
            options = tuple(sorted((ctx.reading or {}).items()))
            try:
                with st.spinner("Reading the development split and computing its curve…"):
                    tuning, dev_warnings = state.memo(
                        dev_curve, ctx.ontology, options, ctx.max_level, digests, anyway, dev
                    )
            except TooManyRejected as e:  # as the other inputs: the panel, its fix and "Score anyway"
                components.refused_panel(e.each, upload, nothing_else=True)
            except InputError as e:
                st.error(f"Development split: {md(e)}")
            else:
                if dev_warnings:
                    st.warning("Development split:\n" + "\n".join(f"- {md(w)}" for w in dev_warnings))
                tuned = tune_threshold(tuning, "cophe")
                st.success(
                    f"On the development split, {md(term('cophe'))} F1 (all levels together) peaks at "
                    f"threshold **{tuned:.2f}**."
                )
                st.button(
                    f"Use threshold {tuned:.2f} in every view",
                    on_click=use_threshold,
                    args=(tuned,),
                    key="use_tuned",
                )

        st.subheader("F1 against the threshold (test set)", anchor=False)
        current = ctx.rule[1] if ctx.rule and ctx.rule[0] == "threshold" else None
        fig = threshold_curve(curve, current, tuned, words=chart_words())
        st.plotly_chart(fig, key="threshold_curve")
        components.figure_download(fig, f"threshold_curve_{run}", "dl_threshold_curve", table=curve)
        st.caption(
            "Read the curve to see how the measures respond; do not pick the test set's peak. A code is "
            "predicted when its score is at least the threshold."
        )

        st.subheader("Threshold-free metrics", anchor=False)
        with st.spinner("Computing the ranking metrics…"):  # 0.3 s on the sample
            ranking = state.memo(scored.ranking)
        st.dataframe(
            pd.DataFrame([ranking]),
            hide_index=True,
            width="stretch",
            column_config={k: st.column_config.NumberColumn(ranking_name(k), format="%.3f") for k in ranking},
        )
        st.caption(
            f"{ranking_name('p@5').replace('5', 'k')}: the share of each document's k best-scored codes that "
            "are right (the codes of the top-k rule; a tie goes to the code that sorts first); "
            f"{ranking_name('r@5').replace('5', 'k')}: the share of its gold codes among them. AUC: how often a "
            "gold (document, code) pair outscores a wrong one (over all pairs, or code by code and averaged). "
            "Codes with no score count as 0."
        )
