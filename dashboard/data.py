"""Inputs and shared state: the sidebar, cached scoring, and the problems panel.

Core results are cached by content: uploads are keyed by a SHA-256 digest of
their bytes and options, never by the UploadedFile object (SPEC §7).
"""

from __future__ import annotations

import hashlib
import io
import logging
import re
from dataclasses import dataclass
from pathlib import Path

import pandas as pd
import streamlit as st

from cophe_core import InputError, Scoring, read_labels, score_labels
from cophe_core.api import read_prediction_scores
from cophe_core.ontology import load_ontology
from cophe_core.ontology.custom import load_hierarchy
from cophe_core.report import figure_html
from cophe_core.scores import decide
from cophe_core.stats import bootstrap, paired_bootstrap, randomisation_test

ROOT = Path(__file__).resolve().parents[1]
SAMPLE = ROOT / "sample_data"
SAMPLES = {  # source label → (folder, ontology, runs); a run named "scores_…" holds probabilities
    "Sample: ICD-9": ("icd9", "icd9", ("siblings", "overcoder", "conservative", "scores_model")),
    "Sample: ICD-10": ("icd10", "icd10", ("siblings", "overcoder")),
}
UPLOAD_TYPES = ["csv", "tsv", "txt", "psv", "json", "jsonl", "ndjson", "parquet"]
MAX_UPLOAD_MB = 50
ONTOLOGIES = {"auto": "Detect from the codes", "icd9": "ICD-9-CM (diagnoses, V/E codes, procedures)",
              "icd10cm": "ICD-10-CM (diagnoses)", "icd10pcs": "ICD-10-PCS (procedures)",
              "icd10": "ICD-10-CM + ICD-10-PCS (as in MIMIC-IV)", "custom": "My own hierarchy (upload)"}
SYSTEMS = {"auto": "Dotted codes only (reject undotted)", "diagnosis": "Diagnoses (401.9 ← 4019)",
           "procedure": "Procedures (40.19 ← 4019)"}
log = logging.getLogger("cophe.dashboard")


@dataclass
class Context:
    """What every view needs: the scored inputs and the user's current choices."""

    scoring: Scoring | None
    source: str
    max_level: str
    run: str | None
    error: str | None = None
    scored: dict | None = None  # run → RawScores, for runs given as probabilities
    rule: tuple | None = None  # ("threshold", t) or ("top_k", k)
    gold: tuple[str, bytes] | None = None  # the gold file (name, bytes)

    def evaluation(self, run: str | None = None):
        return self.scoring.evaluation(run or self.run, max_level=self.max_level)


def md(text: object) -> str:
    """Escape a user string for Markdown (file names, run names, doc ids, codes)."""
    return re.sub(r"([\\`*_{}\[\]()#+\-.!|<>~$])", r"\\\1", str(text))


@st.cache_resource(show_spinner=False)
def ontology(name: str):
    """The ontology, built once per server process."""
    return load_ontology(name)


@st.cache_resource(max_entries=4, show_spinner="Reading the hierarchy…")
def _hierarchy(digest: str, _name: str, _data: bytes):
    """A user hierarchy, cached by the digest of its bytes."""
    return load_hierarchy(_named(_name, _data))


@st.cache_resource(max_entries=16, show_spinner="Scoring the runs…")
def _score(digest: str, _gold: tuple[str, bytes], _runs: tuple[tuple[str, str, bytes], ...],
           onto: str, system: str, doc_col: str | None, code_col: str | None, rule: tuple, _hier=None) -> Scoring:
    """Scored inputs, cached by ``digest`` (the content hash) and the decision rule for score files;
    the underscored arguments are not hashed."""
    chosen = _hier if onto == "custom" else (onto if onto == "auto" else ontology(onto))
    kw = {"doc_col": doc_col, "code_col": code_col}
    gold = read_labels(_named(*_gold), **kw)
    runs = {}
    for run, name, data in _runs:
        scores = read_prediction_scores(_named(name, data))
        runs[run] = decide(scores, **{rule[0]: rule[1]}) if scores is not None else read_labels(_named(name, data), **kw)
    return score_labels(gold, runs, ontology=chosen, system=system)


@st.cache_resource(max_entries=16, show_spinner=False)
def scored_runs(digest: str, _gold: tuple[str, bytes], _runs: tuple[tuple[str, str, bytes], ...]) -> dict:
    """The runs given as probabilities: run → RawScores (cached by content)."""
    out = {}
    for run, name, data in _runs:
        scores = read_prediction_scores(_named(name, data))
        if scores is not None:
            out[run] = scores
    return out


def _named(name: str, data: bytes) -> io.BytesIO:
    """A binary stream that carries its file name, as the readers accept."""
    stream = io.BytesIO(data)
    stream.name = name
    return stream


def digest_of(gold: tuple[str, bytes], runs: list[tuple[str, str, bytes]]) -> str:
    h = hashlib.sha256(gold[0].encode() + b"\0" + hashlib.sha256(gold[1]).digest())
    for run, name, data in runs:
        h.update(run.encode() + b"\0" + name.encode() + b"\0" + hashlib.sha256(data).digest())
    return h.hexdigest()


def scoring_for(gold: tuple[str, bytes], runs: list[tuple[str, str, bytes]], *, onto: str = "icd9",
                system: str = "auto", doc_col: str | None = None, code_col: str | None = None,
                hierarchy: tuple[str, bytes] | None = None, rule: tuple = ("threshold", 0.5)) -> Scoring:
    h = hashlib.sha256(digest_of(gold, runs).encode())
    hier = None
    if onto == "custom":
        if hierarchy is None:
            raise InputError("upload the hierarchy file (CSV child,parent[,title] or CoPHE JSON)")
        hier_digest = hashlib.sha256(hierarchy[1]).hexdigest()
        hier = _hierarchy(hier_digest, *hierarchy)
        h.update(hier_digest.encode())
    for part in (onto, system, doc_col or "", code_col or ""):
        h.update(part.encode() + b"\0")
    return _score(h.hexdigest(), gold, tuple(runs), onto, system, doc_col, code_col, rule, hier)


def sample_inputs(source: str) -> tuple[tuple[str, bytes], list[tuple[str, str, bytes]], str]:
    folder, onto, names = SAMPLES[source]
    gold = ("gold.csv", (SAMPLE / folder / "gold.csv").read_bytes())
    files = {run: (run if run.startswith("scores_") else f"run_{run}") + ".csv" for run in names}
    runs = [(run.removeprefix("scores_"), f, (SAMPLE / folder / f).read_bytes()) for run, f in files.items()]
    return gold, runs, onto


def _run_name(file_name: str, taken: set[str]) -> str:
    base = Path(file_name).stem or "run"
    name, i = base, 2
    while name in taken:
        name, i = f"{base}-{i}", i + 1
    return name


def sidebar() -> Context:
    """Draw the data-input sidebar and return the current :class:`Context`."""
    sb = st.sidebar
    sb.markdown("### Data")
    source = sb.radio("Source", [*SAMPLES, "Upload files"], key="source",
                      help="The samples are synthetic: 1,000 made-up documents and model runs with known "
                      "error profiles (see sample_data/README.md).")
    error = None
    scoring = None
    label = source
    gold, runs, scored = None, [], {}
    if source in SAMPLES:
        gold, runs, onto = sample_inputs(source)
        rule, scored = decision_rule(sb, gold, runs)
        scoring = scoring_for(gold, runs, onto=onto, rule=rule)
    else:
        onto = sb.selectbox("Code system", list(ONTOLOGIES), format_func=ONTOLOGIES.get, key="ontology")
        hierarchy = None
        if onto == "custom":
            hfile = sb.file_uploader("Hierarchy", type=["csv", "json"], key="hierarchy_file",
                                     max_upload_size=MAX_UPLOAD_MB,
                                     help="CSV rows child,parent[,title] (an empty parent marks the root; "
                                     "several rows for a node make a DAG), or the JSON hierarchy files "
                                     "released with the CoPHE paper.")
            hierarchy = (hfile.name, hfile.getvalue()) if hfile else None
        gold_file = sb.file_uploader("Gold standard", type=UPLOAD_TYPES, key="gold_file",
                                     max_upload_size=MAX_UPLOAD_MB,
                                     help="One row per (document, code), or one row per document with "
                                     "';'-joined codes; CSV/TSV, CAML .psv, JSON/JSONL or Parquet.")
        run_files = sb.file_uploader("Model runs (one file each)", type=UPLOAD_TYPES, key="run_files",
                                     accept_multiple_files=True, max_upload_size=MAX_UPLOAD_MB)
        runs: list[tuple[str, str, bytes]] = []
        taken: set[str] = set()
        for i, f in enumerate(run_files or []):
            name = sb.text_input(f"Name for {f.name}", value=_run_name(f.name, taken), key=f"run_name_{i}_{f.name}")
            name = name.strip() or _run_name(f.name, taken)
            taken.add(name)
            runs.append((name, f.name, f.getvalue()))
        with sb.expander("Reading options"):
            system = st.selectbox("Undotted ICD-9 codes such as 4019 are", list(SYSTEMS), format_func=SYSTEMS.get,
                                  key="system", help="MIMIC stores diagnoses and procedures without dots in "
                                  "separate tables; 4019 is diagnosis 401.9 or procedure 40.19.")
            doc_col = st.text_input("Document id column", key="doc_col", placeholder="detected") or None
            code_col = st.text_input("Code column", key="code_col", placeholder="detected") or None
        if gold_file is None or not runs:
            error = "Upload a gold standard and at least one model run, or choose a sample."
        else:
            label = ", ".join([gold_file.name] + [r[1] for r in runs])
            gold = (gold_file.name, gold_file.getvalue())
            try:
                rule, scored = decision_rule(sb, gold, runs)
                scoring = scoring_for(gold, runs, onto=onto, system=system, doc_col=doc_col, code_col=code_col,
                                      hierarchy=hierarchy, rule=rule)
            except InputError as e:
                error = str(e)
    run = None
    max_level = None
    if scoring is not None:
        tree = scoring.corpus.ontology
        if scoring.detection:
            sb.caption(f"Code system {md(scoring.detection)}")
        levels = list(tree.levels)
        max_level = sb.selectbox("Highest level", levels, index=levels.index(tree.default_level),
                                 key=f"max_level_{tree.name}",
                                 help="Levels are scored from the leaf codes up to this level; 'overall' sums "
                                 "them. The CoPHE paper stops at block (its 'c').")
        run = sb.selectbox("Run", scoring.run_names, key="run", help="The run shown in the tree and document views.")
    return Context(scoring, label, max_level, run, error, scored or None,
                   st.session_state.get("_rule") if scored else None, gold)


def decision_rule(sb, gold: tuple[str, bytes], runs: list[tuple[str, str, bytes]]) -> tuple[tuple, dict]:
    """The threshold slider (or top-k) for runs given as probabilities, which every view follows,
    and those runs' scores."""
    scored = scored_runs(digest_of(gold, runs), gold, tuple(runs))
    rule: tuple = ("threshold", 0.5)
    if scored:
        st.session_state.setdefault("threshold", 0.5)  # defaults live in the state, so the Threshold page
        st.session_state.setdefault("rule_kind", "codes above a threshold")  # may set them without a clash
        sb.markdown("### Decisions")
        kind = sb.radio("From scores, predict", ["codes above a threshold", "each document's top k"],
                        key="rule_kind", help=f"For {', '.join(scored)}: probabilities become code sets.")
        if kind.startswith("codes"):
            rule = ("threshold", sb.slider("Threshold", 0.05, 0.95, step=0.05, key="threshold",
                                           help="A code is predicted when its score is at least this. Tune it "
                                           "on a development split (page Threshold), not on the test set."))
        else:
            rule = ("top_k", sb.slider("k", 1, 30, 15, key="top_k"))
    st.session_state["_rule"] = rule
    return rule, scored


def problems_panel(scoring: Scoring) -> None:
    """Rejected and flagged rows, and input warnings: counts, first rows with reasons, downloads."""
    c = scoring.corpus
    if len(c.rejected):
        with st.container(border=True):
            st.error(f"**{len(c.rejected):,} input rows were not scored.** Each is listed with its file, line, "
                     "value and the reason; fix them and upload again, or accept that they are left out.")
            by_reason = (c.rejected.assign(reason=c.rejected.reason.str.split(";").str[0])
                         .groupby(["file", "reason"]).size().rename("rows").reset_index())
            st.dataframe(by_reason, hide_index=True, width="stretch")
            st.caption("First rejected rows")
            st.dataframe(c.rejected.head(20), hide_index=True, width="stretch")
            st.download_button("Download all rejected rows (CSV)", c.rejected.to_csv(index=False),
                               "rejected_rows.csv", "text/csv", key="dl_rejected")
            if c.rejected.reason.str.contains("ambiguous").any():
                st.warning("Some codes have no dot (like **4019**). That can be diagnosis 401.9 or procedure "
                           "40.19. Which code system do the files hold?")
                a, b = st.columns(2)
                a.button("They are diagnoses", on_click=_set_system, args=("diagnosis",), key="sys_dx")
                b.button("They are procedures", on_click=_set_system, args=("procedure",), key="sys_proc")
    if len(c.flagged):
        with st.expander(f"{len(c.flagged):,} rows scored with a caveat", expanded=False):
            st.dataframe(c.flagged.head(50), hide_index=True, width="stretch")
            st.download_button("Download flagged rows (CSV)", c.flagged.to_csv(index=False),
                               "flagged_rows.csv", "text/csv", key="dl_flagged")
    other = [w for w in c.warnings if "not scored" not in w and "with a caveat" not in w]
    if other:
        st.info("\n".join(f"- {md(w)}" for w in other))


def cached(scoring: Scoring, key: tuple, compute):
    """A result computed once per scored input set (kept on the cached Scoring itself)."""
    store = scoring.__dict__.setdefault("_dashboard_cache", {})
    if key not in store:
        store[key] = compute()
    return store[key]


def bootstrap_table(ev, *, with_suite: bool = False, n_resamples: int = 1000, seed: int = 0):
    return bootstrap(ev, n_resamples=n_resamples, seed=seed, with_suite=with_suite)


def significance(a, b, n_resamples: int, seed: int):
    """Paired bootstrap intervals with the randomisation test's p-values (B − A)."""
    paired = paired_bootstrap(a, b, n_resamples=n_resamples, seed=seed)
    rand = randomisation_test(a, b, n_permutations=n_resamples, seed=seed)
    return paired.drop(columns="p_value").assign(p_value=rand.p_value.to_numpy(),
                                                 p_bootstrap=paired.p_value.to_numpy())


def figure_download(fig, name: str, key: str) -> None:
    """A small button under a chart: the figure as a standalone interactive HTML file."""
    st.download_button("Download chart as HTML", lambda: figure_html(fig), f"{name}.html", "text/html",
                       key=key, type="tertiary", icon=":material/download:")


def guarded(render):
    """Run a view function; show an error panel instead of a traceback if it fails."""
    def wrapper(*args, **kwargs):
        try:
            return render(*args, **kwargs)
        except Exception as exc:
            log.exception("unexpected error in %s", render.__name__)
            st.error(f"Something went wrong: {md(type(exc).__name__)}: {md(exc)}.")
    wrapper.__name__ = render.__name__
    return wrapper


def _set_system(system: str) -> None:
    st.session_state["system"] = system


def context() -> Context:
    """The context set by app.py for this rerun."""
    return st.session_state["_ctx"]


def require_scoring() -> Context | None:
    """The context if there is something to show; otherwise draw why not and return None."""
    ctx = context()
    if ctx.error:
        st.error(md(ctx.error))
        return None
    if ctx.scoring is None:
        st.info("No data yet.")
        return None
    return ctx


def nice_levels(table: pd.DataFrame) -> pd.DataFrame:
    """Readable measure names for display."""
    names = {"flat": "Flat (leaf codes)", "set_based": "Set-based", "cophe": "CoPHE"}
    return table.assign(measure=table.measure.map(names))
