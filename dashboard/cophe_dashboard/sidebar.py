"""The data sidebar: the source (a sample, uploads or a saved analysis), the reading options, the decision
rule for runs given as scores, the highest level and the run; it returns the :class:`~state.Context`."""

from __future__ import annotations

import importlib.util
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path

import streamlit as st

from cophe_core import InputError, Scoring
from cophe_core.output.analysis import Analysis
from cophe_core.scale.aggregate import Aggregate
from cophe_core.scoring.labels import TooManyRejected
from cophe_dashboard import saved, texts, urlstate
from cophe_dashboard.components import ANYWAY, READING_SYSTEM, keep_choice, label_md, md, score_anyway
from cophe_dashboard.errors import said
from cophe_dashboard.loading import (
    DEFAULT_RULE,
    FIRST_ROW_IS_DATA,
    MAX_ANALYSIS_MB,
    MAX_RUN_UPLOAD_MB,
    MAX_UPLOAD_MB,
    MB_HELP,
    ONTOLOGIES,
    OPEN,
    SAMPLES,
    SYSTEMS,
    UPLOAD,
    UPLOAD_TYPES,
    Inputs,
    content,
    read_ahead,
    read_inputs,
    sample_read,
    scoring_for,
)
from cophe_dashboard.state import Context


def when(created: str) -> str:
    """An ISO 8601 time as people read it ("25 Nov 2026, 04:33 UTC"); anything else as it is.

    >>> when("2026-11-25T04:33:41+00:00"), when("yesterday")
    ('25 Nov 2026, 04:33 UTC', 'yesterday')
    """
    try:
        t = datetime.fromisoformat(created).astimezone(UTC)
    except ValueError:
        return created
    return t.strftime("%d %b %Y, %H:%M UTC")


def aggregate_caption(agg: Aggregate) -> str:
    """What an opened aggregate analysis holds, in one line (every user string escaped)."""
    n = len(agg.run_names)
    sources = sorted({v for src in agg.sources.values() for v in src.values()})
    shown = ", ".join(md(x) for x in sources[:4]) + (" …" if len(sources) > 4 else "")
    return (
        f"Opened: an aggregate analysis (counts) of {n} run{'s' if n != 1 else ''} on "
        f"{agg.n_documents:,} documents, written {md(when(agg.created))} with cophe {md(agg.cophe_version)}"
        + (f", from {shown}" if shown else "")
        + ". Pages that need each document's codes are not available."
    )


def _run_name(file_name: str, taken: set[str]) -> str:
    base = Path(file_name).stem or "run"
    name, i = base, 2
    while name in taken:
        name, i = f"{base}-{i}", i + 1
    return name


NO_UPLOAD = "Upload a gold standard and at least one model run, or choose a sample."


Reading = dict[str, str | bool | None]  # doc_col, code_col, system (text), header


@dataclass
class Source:
    """What a source of data gives the sidebar, whichever it is: the scored runs (or an aggregate analysis),
    the files and how they were read (what Save analysis writes), and what to say instead of figures."""

    label: str  # what the data are called on the pages
    onto: str = "auto"  # the code system chosen or saved
    scoring: Scoring | Aggregate | None = None
    inputs: Inputs | None = None  # the parsed files (none for an aggregate analysis)
    gold: tuple[str, bytes] | None = None
    runs: list[tuple[str, str, bytes]] = field(default_factory=list)  # (run name, file name, bytes)
    reading: Reading | None = None
    hierarchy: tuple[str, bytes] | None = None  # a hierarchy of the user's: file name, bytes
    error: str | None = None
    notice: str | None = None  # an ordinary state, such as nothing uploaded yet
    blocked: TooManyRejected | None = None  # too little can be scored: every number withheld

    @property
    def scored(self) -> list[str]:
        """The runs given as probabilities, which the decision rule turns into codes."""
        return self.inputs.scored if self.inputs is not None else []


def sidebar() -> Context:
    """Draw the data-input sidebar and return the current :class:`Context`."""
    sb = st.sidebar
    sb.markdown("### Data")
    source = sb.radio(
        "Source",
        [*SAMPLES, UPLOAD, OPEN],
        key="source",
        help="The samples are synthetic: 1,000 made-up documents and model runs with known "
        "error profiles (see sample_data/README.md).",
    )
    if source in SAMPLES:
        src = sample_source(sb, source)
    elif source == OPEN:
        src = opened_source(sb, source)
    else:
        src = upload_source(sb, source)
    max_level, run = level_and_run(sb, src.scoring) if src.scoring is not None else (None, None)
    return context(src, max_level, run)


def sample_source(sb, name: str) -> Source:
    """A bundled sample: its gold standard and runs, scored with the sample's code system."""
    gold, runs, onto, inputs = sample_read(name)
    rule = decision_rule(sb, inputs.scored)
    return Source(
        name,
        onto,
        scoring_for(inputs, onto=onto, rule=rule, shared=True),
        inputs,
        gold,
        runs,
        reading={"doc_col": None, "code_col": None, "system": "auto", "header": None},
    )


def opened_source(sb, name: str) -> Source:
    """A file made with Save analysis, or a run in MLflow that holds one: an analysis (its files read again)
    or an aggregate analysis (counts, scored already)."""
    try:
        opened = saved.open_file(sb, MAX_ANALYSIS_MB) or from_mlflow(sb)
    except InputError as e:
        return Source(name, error=said(e))
    if opened is None:
        return Source(name, notice="Open a file made with Save analysis.")
    if isinstance(opened, Analysis):
        return analysis_source(sb, opened)
    return aggregate_source(sb, opened)


def aggregate_source(sb, agg: Aggregate) -> Source:
    """An opened aggregate analysis: its counts, as they were written."""
    sb.caption(aggregate_caption(agg))
    return Source(f"aggregate analysis written {when(agg.created)}", scoring=agg)


def analysis_source(sb, opened: Analysis) -> Source:
    """An opened analysis: its files read and scored again with its settings, and its view restored."""
    o = opened.options
    src = Source(
        f"saved analysis of {opened.created}",
        o.get("ontology") or "auto",
        gold=(opened.gold.name, opened.gold.data),
        runs=[(run, f.name, f.data) for run, f in opened.runs.items()],
        reading={
            "doc_col": o.get("doc_col"),
            "code_col": o.get("code_col"),
            "system": o.get("system") or "auto",
            "header": o.get("header"),
        },
        hierarchy=(opened.hierarchy.name, opened.hierarchy.data) if opened.hierarchy is not None else None,
    )
    n = len(src.runs)
    sb.caption(
        f"Opened: {md(opened.gold.name)} and {n} run{'s' if n != 1 else ''}, saved "
        f"{md(opened.created)} with cophe {md(opened.cophe_version)}."
    )
    try:
        src.inputs = read_inputs(
            (opened.gold.name, opened.gold.data),
            src.runs,
            doc_col=o.get("doc_col"),
            code_col=o.get("code_col"),
            header=o.get("header"),
            sha256=[opened.gold.sha256, *(f.sha256 for f in opened.runs.values())],  # hashed as it was read
        )
        if o.get("score_anyway"):  # saved after "Score anyway": the same rows scored, and said so
            score_anyway(src.inputs.digest)
            sb.caption(
                "Scored anyway: rows that cannot be scored were left out, as when it was saved. The "
                "figures describe part of the files: say so wherever you report them."
            )
        rule = decision_rule(sb, src.scored)
        src.scoring = scoring_for(
            src.inputs, onto=src.onto, system=o.get("system") or "auto", hierarchy=src.hierarchy, rule=rule
        )
        saved.restore_view(sb, src.scoring)  # its view, checked against the data read
    except TooManyRejected as e:
        src.blocked, src.error = e, said(e)
    except InputError as e:
        src.error = said(e)
    return src


def upload_source(sb, name: str) -> Source:
    """Uploaded files: a gold standard, runs (each named), a hierarchy for "My own hierarchy", and the
    reading options; scored once the gold standard and a run are there."""
    src = Source(
        name,
        sb.selectbox("Code system", list(ONTOLOGIES), format_func=ONTOLOGIES.__getitem__, key="ontology"),
    )
    if src.onto == "custom":
        hierarchy_upload(sb, src)
    gold_file = sb.file_uploader(
        "Gold standard",
        type=UPLOAD_TYPES,
        key="gold_file",
        max_upload_size=MAX_UPLOAD_MB,
        help="One row per (document, code), or one row per document with "
        "';'-joined codes; CSV/TSV, CAML .psv, JSON/JSONL or Parquet. " + MB_HELP,
    )
    run_files = sb.file_uploader(
        "Model runs (one file each)",
        type=UPLOAD_TYPES,
        key="run_files",
        accept_multiple_files=True,
        max_upload_size=MAX_RUN_UPLOAD_MB,
        help=f"Each file up to {MAX_RUN_UPLOAD_MB} MB. " + MB_HELP,
    )
    first_row_data = sb.checkbox(
        FIRST_ROW_IS_DATA,
        key="first_row_data",
        help="Tick when the files have no column names, so that their first row is already a document "
        "and a code (as in the CodiEsp and CLEF eHealth files). Left unticked, cophe tells from the "
        "first row of each file.",
    )
    header = False if first_row_data else None
    named_runs(sb, run_files or [], src)
    follow_renames([r[0] for r in src.runs], [r[1] for r in src.runs])
    system, doc_col, code_col = reading_options(sb)
    src.reading = {"doc_col": doc_col, "code_col": code_col, "system": system, "header": header}
    if gold_file is None or not src.runs:
        src.notice = (
            None if src.error else (urlstate.LINKED_UPLOAD if urlstate.linked_upload() else NO_UPLOAD)
        )
        if not src.error:  # parsed while the user picks the other files
            read_ahead(gold_ahead(gold_file), src.runs, doc_col=doc_col, code_col=code_col, header=header)
    elif not src.error:  # a file over its uploader's limit is said, and nothing is scored without it
        src.label = ", ".join([gold_file.name] + [r[1] for r in src.runs])
        try:
            src.gold = (gold_file.name, content(gold_file, MAX_UPLOAD_MB))
            src.inputs = read_inputs(src.gold, src.runs, doc_col=doc_col, code_col=code_col, header=header)
            rule = decision_rule(sb, src.scored)
            src.scoring = scoring_for(
                src.inputs, onto=src.onto, system=system, hierarchy=src.hierarchy, rule=rule
            )
        except TooManyRejected as e:  # withhold every number until the user answers or fixes the file
            src.blocked, src.error = e, said(e)
        except InputError as e:
            src.error = said(e)
    return src


def gold_ahead(gold_file) -> tuple[str, bytes] | None:
    """The gold standard uploaded so far, to parse ahead: None when there is none, or when it is over its
    uploader's limit (said once a run is there too, as before)."""
    if gold_file is None:
        return None
    try:
        return gold_file.name, content(gold_file, MAX_UPLOAD_MB)
    except InputError:
        return None


def hierarchy_upload(sb, src: Source) -> None:
    """The uploader of a hierarchy of the user's; its file kept in ``src``, or its error said."""
    hfile = sb.file_uploader(
        "Hierarchy",
        type=["csv", "json"],
        key="hierarchy_file",
        max_upload_size=MAX_UPLOAD_MB,
        help="CSV rows child,parent[,title] (an empty parent marks the root; "
        "several rows for a node make a DAG), or the JSON hierarchy files "
        "released with the CoPHE paper.",
    )
    try:
        src.hierarchy = (hfile.name, content(hfile, MAX_UPLOAD_MB)) if hfile else None
    except InputError as e:
        src.error = said(e)


def named_runs(sb, files: list, src: Source) -> None:
    """A name for each uploaded run (two runs never share one); each run's file kept in ``src``, or, over its
    uploader's limit, said and left out."""
    taken: set[str] = set()
    for i, f in enumerate(files):
        name = sb.text_input(
            f"Name of run {i + 1} ({label_md(f.name)})",
            value=_run_name(f.name, taken),
            key=f"run_name_{i}_{f.name}",
        )
        name = name.strip() or _run_name(f.name, taken)
        if name in taken:  # two runs never share a name
            name = _run_name(name, taken)
        taken.add(name)
        try:
            src.runs.append((name, f.name, content(f, MAX_RUN_UPLOAD_MB)))
        except InputError as e:  # over this uploader's limit: said, and the file left out
            src.error = said(e)


def reading_options(sb) -> tuple[str, str | None, str | None]:
    """The uploads' reading options: the code system of the codes, the document id and code columns."""
    with sb.expander("Reading options"):
        system = st.selectbox(
            READING_SYSTEM,
            list(SYSTEMS),
            format_func=SYSTEMS.__getitem__,
            key="system",
            help="MIMIC stores diagnoses and procedures without dots in "
            "separate tables; 4019 is diagnosis 401.9 or procedure 40.19.",
        )
        doc_col = st.text_input("Document id column", key="doc_col", placeholder="detected") or None
        code_col = st.text_input("Code column", key="code_col", placeholder="detected") or None
    return system, doc_col, code_col


def level_and_run(sb, scoring: Scoring | Aggregate) -> tuple[str, str]:
    """The code sets' captions, then the highest level and the run shown, as chosen."""
    tree, default = scoring.ontology, scoring.max_level
    if scoring.detection:
        sb.caption(f"Code system {md(scoring.detection)}")
    sb.caption(
        "Code sets: " + "; ".join(f"{md(k)} ({md(v)})" for k, v in tree.code_sets.items()),
        help="The releases the codes were checked and placed against. Different releases can change "
        "scores, so report them with any number you publish.",
    )
    levels = list(tree.levels)
    urlstate.take_choice("level", f"max_level_{tree.name}", levels)
    keep_choice(f"max_level_{tree.name}", levels)  # its labels follow Technical terms
    max_level = sb.selectbox(
        "Highest level",
        levels,
        index=levels.index(default),
        key=f"max_level_{tree.name}",
        format_func=texts.labeller(texts.level, tree),
        help="Codes are scored at each level from the exact codes up to this one, and "
        "over all of them together. The CoPHE paper stops at the section.",
    )
    urlstate.take_choice("run", "run", scoring.run_names)
    urlstate.bind_runs("levels_runs", scoring.run_names)
    run = sb.selectbox(
        "Run", scoring.run_names, key="run", help="The run shown in the tree and document views."
    )
    return max_level, run


def context(src: Source, max_level: str | None, run: str | None) -> Context:
    """The :class:`Context` of a source and the choices made on it."""
    scored = src.scored
    files = (
        None
        if src.gold is None or not src.runs or src.reading is None
        else {
            "gold": src.gold,
            "runs": src.runs,
            "hierarchy": src.hierarchy,
            "ontology": src.onto,
            "max_level": max_level,
            "scored": bool(scored),
            "score_anyway": src.inputs is not None
            and src.inputs.digest in st.session_state.get(ANYWAY, set()),
            **src.reading,
        }
    )
    return Context(
        src.scoring,
        src.label,
        max_level,
        run,
        src.error,
        (dict(src.scoring.scored) or None) if src.scoring is not None else None,
        st.session_state.get("_rule") if scored else None,
        src.reading,
        src.notice,
        src.blocked,
        files=files,
        upload=src.inputs.digest if src.inputs is not None else None,
    )


# widgets that hold run names
RUN_KEYS = ("run", "levels_runs", "cmp_a", "cmp_b", "doc_run_b", "threshold_run")


def follow_renames(names: list[str], files: list[str]) -> None:
    """When the user renames a run, every widget that had it selected keeps it under its new name."""
    before = st.session_state.get("_run_files")
    st.session_state["_run_files"] = (names, files)
    if before is None or before[1] != files or before[0] == names:
        return
    renamed = {old: new for old, new in zip(before[0], names) if old != new}
    for key in RUN_KEYS:
        value = st.session_state.get(key)
        if isinstance(value, str) and value in renamed:
            st.session_state[key] = renamed[value]
        elif isinstance(value, list):
            st.session_state[key] = [renamed.get(v, v) for v in value]


def from_mlflow(sb) -> Analysis | None:
    """The saved analysis of a run in MLflow (logged by cophe's ``log_evaluation``): a tracking address or
    folder, then an experiment, then one of its runs that holds one; its settings applied once."""
    where = sb.text_input(
        "Or a run in MLflow: tracking address or folder",
        key="mlflow_uri",
        help="An MLflow server's address (http://…) or an mlruns folder. The runs that hold predictions "
        "saved by cophe are listed.",
    ).strip()
    if not where:
        return None
    if importlib.util.find_spec("mlflow") is None:
        raise InputError("MLflow is not installed with this dashboard: install cophe with its MLflow extra")
    from cophe_core.integrations.mlflow import analysis_runs, experiments, run_analysis, tracking_uri

    uri = tracking_uri(where)
    found = experiments(uri)
    if not len(found):
        raise InputError(f"{where}: no MLflow experiment there")
    name = sb.selectbox("Experiment", found.name.tolist(), key="mlflow_experiment")
    runs = analysis_runs(uri, found.experiment_id[found.name == name].iloc[0])
    if not len(runs):
        raise InputError(f"{where}: no run of experiment {name!r} holds predictions saved by cophe")
    names = [f"{r.run_name} ({r.artifact})" for r in runs.itertuples()]
    i = sb.selectbox("Run", range(len(runs)), format_func=names.__getitem__, key="mlflow_run")
    run = (uri, runs.run_id.iloc[i], runs.artifact.iloc[i])
    store = st.session_state.setdefault("_mlflow_runs", {})
    if run not in store:
        store.clear()  # one opened run per session
        store[run] = run_analysis(*run)
        saved.apply(store[run])
    return store[run]


def decision_rule(sb, scored: list[str]) -> tuple:
    """The threshold slider (or top-k) for the runs given as probabilities (``scored``), which every
    view follows: ``("threshold", t)`` or ``("top_k", k)``."""
    rule: tuple = DEFAULT_RULE
    if scored:
        st.session_state.setdefault("threshold", 0.5)  # defaults live in the state, so the Threshold page
        st.session_state.setdefault("rule_kind", "codes above a threshold")  # may set them without a clash
        sb.markdown("### Decisions")
        kind = sb.radio(
            "From scores, predict",
            ["codes above a threshold", "each document's top k"],
            key="rule_kind",
            help=f"For {', '.join(scored)}: probabilities become code sets.",
        )
        if kind.startswith("codes"):
            rule = (
                "threshold",
                sb.slider(
                    "Threshold",
                    st.session_state.get(saved.THRESHOLD_MIN_KEY, 0.01),  # below for a saved one below
                    1.0,
                    step=0.01,  # every threshold in (0, 1] the CLI, the Threshold page or a saved file gives
                    key="threshold",
                    help="A code is predicted when its score is at least this. Tune it "
                    "on a development split (page Threshold), not on the test set.",
                ),
            )
        else:
            rule = (
                "top_k",
                sb.slider(
                    "k",
                    1,
                    st.session_state.get(saved.TOP_K_MAX_KEY, 30),  # above 30 for a saved k above 30
                    15,
                    key="top_k",
                    help="Each document's k highest-scoring codes; a tie goes to the code that sorts first.",
                ),
            )
    st.session_state["_rule"] = rule
    return rule
