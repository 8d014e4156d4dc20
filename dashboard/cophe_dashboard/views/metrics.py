"""The wider metric suite (ICM paper), per run side by side, with what each metric rewards."""

import pandas as pd
import streamlit as st

from cophe_core.breakdown.stats import bootstrap
from cophe_core.scoring.suite import PROPERTIES, REWARDS, icm_note, suite
from cophe_dashboard import state
from cophe_dashboard.texts import styled

NAMES = {
    "lb_acc": "Label-based accuracy (LB-ACC)",
    "lb_f": "Label-based F (LB-F)",
    "eb_jacc": "Jaccard (EB-JACC)",
    "eb_hamm": "Hamming loss (EB-HAMM) ↓",
    "eb_subacc": "Subset accuracy (EB-SUBACC)",
    "eb_f": "Example-based F (EB-F)",
    "prop_f": "Propensity F (PROP-F)",
    "hf": "Hierarchical F (HF)",
    "icm": "ICM",
    "icm_norm": "ICM-Norm",
}


def show() -> None:
    """Draw the page."""
    st.title("More metrics")
    ctx = state.require_scoring()
    if ctx and state.documents_needed(ctx, "The ICM paper's metrics"):
        ctx = None
    if ctx:
        st.caption(
            "The metric families surveyed by Amigó & Delgado (ACL 2022), computed on the same inputs. "
            "All are higher-is-better except the Hamming loss (↓)."
        )
        runs = ctx.scoring.run_names
        with_ci = st.toggle("95% bootstrap intervals (1,000 document resamples, seed 0)", key="metrics_ci")
        rows, notes = {}, []

        def cells(run: str, ev) -> dict:
            values = suite(ev)
            if not with_ci:
                return dict(values)  # shown to 3 decimals, as with intervals (texts.styled)
            ci = state.memo(bootstrap, ev, with_suite=True).set_index("figure")
            return {
                k: (
                    f"{v:.3f} ({ci.loc[k, 'low']:.3f}–{ci.loc[k, 'high']:.3f})"
                    if k in ci.index
                    else f"{v:.3f}"
                )
                for k, v in values.items()
            }

        with st.spinner(
            "Computing 95% intervals…" if with_ci else "Computing the metrics…"
        ):  # 0.1 s a run with
            for run in runs:  # intervals on 1,000 documents
                ev = ctx.evaluation(run).with_codes()  # the suite reads each document's codes
                if (note := icm_note(ev)) and note not in notes:  # documents with no gold code leave ICM out
                    notes.append(note)
                rows[run] = cells(run, ev)
        table = pd.DataFrame(rows).loc[list(NAMES)].rename(index=NAMES)
        table.insert(0, "rewards", [REWARDS[k] for k in NAMES])
        st.dataframe(
            table if with_ci else styled(table, **dict.fromkeys(runs, "decimal")),
            width="stretch",
            row_height=68,  # what each metric rewards, on up to three lines (Streamlit wraps above 4rem)
            column_config={
                "_index": st.column_config.TextColumn("Metric", pinned=True),  # the runs scroll beside it
                "rewards": st.column_config.TextColumn("What it rewards", width="large"),
                **{
                    run: st.column_config.Column(
                        run,
                        width="medium" if with_ci else "small",
                        help="The value, with its 95% interval in brackets" if with_ci else None,
                    )
                    for run in runs
                },
            },
        )
        if with_ci:
            st.caption(
                "The label-based metrics (LB-ACC, LB-F) average over codes, not documents, so resampling the "
                "documents gives them no interval."
            )
        for note in notes:
            st.info(note)
        st.subheader("Which metric rewards what", anchor=False)
        st.caption(
            "Table 1 of the ICM paper: the formal properties each metric satisfies. CoPHE, like HF, is "
            "set-based and rewards hierarchical proximity; unlike HF it also counts codes within a family."
        )
        st.dataframe(
            PROPERTIES,
            hide_index=True,
            width="stretch",
            column_config={
                c: st.column_config.TextColumn(c[:1].upper() + c[1:], pinned=i == 0)
                for i, c in enumerate(PROPERTIES.columns)
            },
        )
