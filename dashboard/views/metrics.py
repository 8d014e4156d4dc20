"""The wider metric suite (ICM paper), per run side by side, with what each metric rewards."""

import data
import pandas as pd
import streamlit as st

from cophe_core.suite import PROPERTIES, REWARDS, icm_note, suite

NAMES = {"lb_acc": "Label-based accuracy (LB-ACC)", "lb_f": "Label-based F (LB-F)", "eb_jacc": "Jaccard (EB-JACC)",
         "eb_hamm": "Hamming loss (EB-HAMM) ↓", "eb_subacc": "Subset accuracy (EB-SUBACC)",
         "eb_f": "Example-based F (EB-F)", "prop_f": "Propensity F (PROP-F)", "hf": "Hierarchical F (HF)",
         "icm": "ICM", "icm_norm": "ICM-Norm"}

st.title("More metrics")
ctx = data.require_scoring()
if ctx:
    st.caption("The metric families surveyed by Amigó & Delgado (ACL 2022), computed on the same inputs. "
               "All are higher-is-better except the Hamming loss (↓).")
    runs = ctx.scoring.run_names
    with_ci = st.toggle("95% bootstrap intervals (1,000 document resamples, seed 0)", key="metrics_ci")
    rows, notes = {}, []
    for run in runs:
        ev = ctx.evaluation(run)
        values = suite(ev)
        if (note := icm_note(ev)) and note not in notes:  # documents with no gold code leave ICM out
            notes.append(note)
        if with_ci:
            ci = data.cached(ctx.scoring, ("suite_ci", run, ctx.max_level),
                             lambda ev=ev: data.bootstrap_table(ev, with_suite=True)).set_index("figure")
            rows[run] = {k: (f"{v:.3f}  [{ci.loc[k, 'low']:.3f}, {ci.loc[k, 'high']:.3f}]" if k in ci.index
                             else f"{v:.3f} (label-based: no per-document resampling)") for k, v in values.items()}
        else:
            rows[run] = {k: round(v, 4) for k, v in values.items()}
    table = pd.DataFrame(rows).loc[list(NAMES)].rename(index=NAMES)
    table.insert(0, "rewards", [REWARDS[k] for k in NAMES])
    st.dataframe(table, width="stretch", column_config={"rewards": st.column_config.TextColumn(
        "What it rewards", width="large")})
    for note in notes:
        st.info(note)
    st.subheader("Which metric rewards what", anchor=False)
    st.caption("Table 1 of the ICM paper: the formal properties each metric satisfies. CoPHE, like HF, is "
               "set-based and rewards hierarchical proximity; unlike HF it also counts codes within a family.")
    st.dataframe(PROPERTIES, hide_index=True, width="stretch")
