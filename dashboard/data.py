"""Inputs and shared state: the sidebar, cached scoring, and the problems panel.

Core results are cached by content: uploads are keyed by a SHA-256 digest of
their bytes and options, never by the UploadedFile object (SPEC §7). Each file is
parsed once per session and content (:func:`read_upload`), whatever reruns follow.
"""

from __future__ import annotations

import hashlib
import io
import re
import threading
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import cast

import downloads
import saved
import streamlit as st
import texts
import urlstate

from cophe_core import InputError, Scoring, score_labels
from cophe_core.labels import NothingScorable
from cophe_core.metrics import Evaluation
from cophe_core.ontology import load_ontology
from cophe_core.ontology.custom import load_hierarchy
from cophe_core.readers import RawLabels, RawScores, read_input, read_labels
from cophe_core.report import figure_html
from cophe_core.slices import Slice, restrict
from cophe_core.stats import bootstrap

ROOT = Path(__file__).resolve().parents[1]
SAMPLE = ROOT / "sample_data"
SAMPLES = {  # source label → (folder, ontology, runs); a run named "scores_…" holds probabilities
    "Sample: ICD-9": ("icd9", "icd9", ("siblings", "overcoder", "conservative", "scores_model")),
    "Sample: ICD-10": ("icd10", "icd10", ("siblings", "overcoder")),
}
UPLOAD, OPEN = "Upload files", "Open a saved analysis"  # the sources besides the samples
UPLOAD_TYPES = ["csv", "tsv", "txt", "psv", "json", "jsonl", "ndjson", "parquet", "feather", "arrow"]
MAX_UPLOAD_MB = 50
# A run may be a matrix of probabilities: MIMIC-III full's (3,372 documents × 8,922 codes, float32) is 124 MB
# as Edin et al.'s feather file.
MAX_RUN_UPLOAD_MB = 200
ONTOLOGIES = {
    "auto": "Detect from the codes",
    "icd9": "ICD-9-CM (diagnoses, V/E codes, procedures)",
    "icd10cm": "ICD-10-CM (diagnoses)",
    "icd10pcs": "ICD-10-PCS (procedures)",
    "icd10": "ICD-10-CM + ICD-10-PCS (as in MIMIC-IV)",
    "custom": "My own hierarchy (upload)",
}
SYSTEMS = {
    "auto": "Dotted codes only (reject undotted)",
    "diagnosis": "Diagnoses (401.9 ← 4019)",
    "procedure": "Procedures (40.19 ← 4019)",
}


@dataclass
class Context:
    """What every view needs: the scored inputs and the user's current choices."""

    scoring: Scoring | None
    source: str
    max_level: str | None
    run: str | None
    error: str | None = None
    scored: dict | None = None  # run → ScoredRun, for runs given as probabilities
    rule: tuple | None = None  # ("threshold", t) or ("top_k", k)
    reading: dict | None = None  # the reading options: doc_col, code_col, system
    notice: str | None = None  # an ordinary state, such as nothing uploaded yet (not an error)
    blocked: NothingScorable | None = None  # an input with no scorable row: numbers are withheld
    slice: Slice | None = None  # the part of the data every page shows (None: everything)
    files: dict | None = None  # the inputs as given and how they were read: what Save analysis writes

    def evaluation(self, run: str | None = None, *, max_level: str | None = None) -> Evaluation:
        """The run's evaluation (up to ``max_level``, by default the sidebar's), restricted to the slice: a mask
        on the cached matrices, kept per slice."""
        level = max_level or self.max_level
        name, scoring, part = run or self.run, self.scoring, self.slice
        if scoring is None or name is None:
            raise LookupError("no scored run to evaluate")  # views ask only through require_scoring()
        ev = scoring.evaluation(name, max_level=level)
        if part is None:
            return ev
        return cached(scoring, ("sliced", name, level, part.fingerprint), lambda: restrict(ev, part))

    def evaluations_ahead(self, slices: list[Slice]) -> None:
        """Restrict every run to each of ``slices`` (the other choices of the sidebar's slice) in the
        background, with the tables every page reads first, so that choosing one of them is quick."""
        if self.scoring is None:
            return
        for s in slices:
            if self.slice is not None and s.fingerprint == self.slice.fingerprint:
                continue
            for run in self.scoring.run_names:
                ev = self.scoring.evaluation(run, max_level=self.max_level)
                compute_ahead(
                    self.scoring,
                    ("sliced", run, self.max_level, s.fingerprint),
                    lambda ev=ev, s=s: _warm(restrict(ev, s)),
                )

    @property
    def slice_key(self) -> str | None:
        """What the slice selects (its mask's fingerprint: a key alone may name another file's slice)."""
        return None if self.slice is None else self.slice.fingerprint

    @property
    def key(self) -> tuple:
        """What a result computed from :meth:`evaluation` depends on, besides the runs: part of every cache key."""
        return (self.max_level, self.slice_key)

    @property
    def slice_words(self) -> str:
        """The slice in one sentence, for reports."""
        if self.slice is None:
            return "Every document and code."
        return f"Slice: {self.slice.dimension}: {self.slice.name}. {self.slice.describe()}"


def _warm(ev):
    """``ev`` with the tables that the views read first computed (level scores, per-document counts)."""
    ev.levels_table  # noqa: B018 - cached properties, computed here rather than in the view
    ev.documents  # noqa: B018
    return ev


def md(text: object) -> str:
    """Escape a user string for Markdown (file names, run names, doc ids, codes)."""
    return re.sub(r"([\\`*_{}\[\]()#+\-.!|<>~$])", r"\\\1", str(text))


def label_md(text: object) -> str:
    """A user string for a widget's label: as it is when it holds only letters, digits, spaces, ``.``, ``_``
    and ``-`` (nothing Markdown makes a link, image or markup of), else escaped by :func:`md`. A label's
    raw text is also its accessible name, which backslashes would garble for a screen reader.

    >>> label_md("preds_siblings.csv"), label_md("![x](u)") == md("![x](u)")
    ('preds_siblings.csv', True)
    """
    text = str(text)
    return text if re.fullmatch(r"[\w .\-]*", text) else md(text)


@st.cache_resource(show_spinner="Loading the code set…")
def ontology(name: str):
    """The ontology, built once per server process."""
    return load_ontology(name)


@st.cache_resource(max_entries=4, show_spinner="Reading the hierarchy…")
def _hierarchy(digest: str, _name: str, _data: bytes):
    """A user hierarchy, cached by the digest of its bytes."""
    return load_hierarchy(_named(_name, _data))


DEFAULT_RULE = ("threshold", 0.5)
PARSED_PER_SESSION = 12  # parsed files kept per session (the current inputs, a development split, a few more)
RULES_KEPT = 4  # decided versions of a scoring kept per decision rule (slider positions)


@dataclass(frozen=True)
class Inputs:
    """The parsed gold and runs, with the digest of their bytes, names and reading options."""

    digest: str
    gold: RawLabels
    runs: dict[str, RawLabels | RawScores]

    @property
    def scored(self) -> list[str]:
        """The runs given as probabilities."""
        return [run for run, raw in self.runs.items() if isinstance(raw, RawScores)]


def file_digest(name: str, data: bytes) -> str:
    """SHA-256 of a file's name and bytes."""
    return hashlib.sha256(name.encode() + b"\0" + hashlib.sha256(data).digest()).hexdigest()


def read_upload(
    name: str,
    data: bytes,
    *,
    doc_col: str | None = None,
    code_col: str | None = None,
    digest: str | None = None,
    gold: bool = False,
) -> RawLabels | RawScores:
    """A file parsed once per session and content: labels or scores, as its columns say
    (:func:`cophe_core.readers.read_input`).

    Kept in the session (SPEC §9: cached uploads must not outlive their session) under the digest of
    the file and the reading options, the last :data:`PARSED_PER_SESSION` only; an unreadable file
    is remembered with its error, so no rerun parses it again either.
    """
    key = (digest or file_digest(name, data), doc_col, code_col, gold)
    store = st.session_state.setdefault("_parsed", {})
    if key in store:
        store[key] = store.pop(key)  # most recently used last
    else:
        try:
            read = read_labels if gold else read_input  # a gold standard is code sets, whatever its columns
            with heavy():
                store[key] = read(_named(name, data), doc_col=doc_col, code_col=code_col)
        except InputError as e:
            store[key] = e
        while len(store) > PARSED_PER_SESSION:
            store.pop(next(iter(store)))
    hit = store[key]
    if isinstance(hit, InputError):
        raise InputError(str(hit))
    return hit


def read_inputs(
    gold: tuple[str, bytes],
    runs: list[tuple[str, str, bytes]],
    *,
    doc_col: str | None = None,
    code_col: str | None = None,
) -> Inputs:
    """Parse the gold and the runs (each once per session and content; every byte hashed once per rerun)."""
    gold_digest = file_digest(*gold)
    run_digests = [file_digest(name, data) for _, name, data in runs]
    h = hashlib.sha256(gold_digest.encode())
    for (run, _, _), d in zip(runs, run_digests):
        h.update(run.encode() + b"\0" + d.encode())
    h.update((doc_col or "").encode() + b"\0" + (code_col or "").encode())
    raw_gold = read_upload(*gold, digest=gold_digest, gold=True, doc_col=doc_col, code_col=code_col)
    raw_runs = {
        run: read_upload(name, data, digest=d, doc_col=doc_col, code_col=code_col)
        for (run, name, data), d in zip(runs, run_digests)
    }
    return Inputs(h.hexdigest(), raw_gold, raw_runs)


def _score(inputs: Inputs, onto: str, system: str, hier=None) -> Scoring:
    """Validated inputs; runs given as scores are decided by :data:`DEFAULT_RULE` (see :func:`scoring_for`)."""
    chosen = hier if onto == "custom" else (onto if onto == "auto" else ontology(onto))
    return score_labels(inputs.gold, inputs.runs, ontology=chosen, system=system, threshold=DEFAULT_RULE[1])


@st.cache_resource(max_entries=len(SAMPLES), show_spinner="Scoring the sample…")
def _shared_score(digest: str, _inputs: Inputs, onto: str, system: str) -> Scoring:
    """A bundled sample, scored once for every session (keyed by ``digest``; the underscored argument is
    not hashed)."""
    return _score(_inputs, onto, system)  # no turn taken here: another session may wait on this cache


SCORED_PER_SESSION = 2  # an upload's scoring (and every result cached on it) lives in its session only


def _session_score(digest: str, inputs: Inputs, onto: str, system: str, hier=None) -> Scoring:
    """An upload, scored once per session and content: kept in the session, the last
    :data:`SCORED_PER_SESSION` only, so that it is freed with the session (SPEC §9), never shared."""
    store = st.session_state.setdefault("_scored", {})
    if digest in store:
        store[digest] = store.pop(digest)  # most recently used last
    else:
        with st.spinner("Scoring the runs…"), heavy():
            store[digest] = _score(inputs, onto, system, hier)
        while len(store) > SCORED_PER_SESSION:
            store.pop(next(iter(store)))
    return store[digest]


def _named(name: str, data: bytes) -> io.BytesIO:
    """A binary stream that carries its file name, as the readers accept."""
    stream = io.BytesIO(data)
    stream.name = name
    return stream


def scoring_for(
    inputs: Inputs,
    *,
    onto: str = "icd9",
    system: str = "auto",
    hierarchy: tuple[str, bytes] | None = None,
    rule: tuple = DEFAULT_RULE,
    shared: bool = False,
) -> Scoring:
    """The validated inputs (cached by content), with the runs given as scores decided by ``rule``
    (each rule's decisions are kept on the cached scoring, so moving the slider reads and validates
    nothing again)."""
    h = hashlib.sha256(inputs.digest.encode())
    hier = None
    if onto == "custom":
        if hierarchy is None:
            raise InputError("upload the hierarchy file (CSV child,parent[,title] or CoPHE JSON)")
        hier_digest = file_digest(*hierarchy)  # the name too: it is in the ontology's code_sets
        hier = _hierarchy(hier_digest, *hierarchy)
        h.update(hier_digest.encode())
    for part in (onto, system):
        h.update(part.encode() + b"\0")
    base = (
        _shared_score(h.hexdigest(), inputs, onto, system)
        if shared
        else _session_score(h.hexdigest(), inputs, onto, system, hier)
    )
    if not base.scored or base.rule == tuple(rule):
        return base
    # the decisions of the last few slider positions, on the shared scoring (bounded: it outlives sessions)
    kept = base.__dict__.setdefault("_dashboard_rules", {})
    key = tuple(rule)
    if key not in kept:
        kept[key] = base.with_rule(**{rule[0]: rule[1]})
        while len(kept) > RULES_KEPT:
            kept.pop(next(iter(kept)))
    return kept[key]


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
    source = sb.radio(
        "Source",
        [*SAMPLES, UPLOAD, OPEN],
        key="source",
        help="The samples are synthetic: 1,000 made-up documents and model runs with known "
        "error profiles (see sample_data/README.md).",
    )
    error = notice = blocked = None
    scoring = None
    label = source
    gold: tuple[str, bytes] | None = None
    runs: list[tuple[str, str, bytes]] = []
    scored: list[str] = []
    reading: dict[str, str | None] | None = None
    hierarchy: tuple[str, bytes] | None = None
    if source in SAMPLES:
        gold, runs, onto = sample_inputs(source)
        inputs = read_inputs(gold, runs)
        scored = inputs.scored
        rule = decision_rule(sb, scored)
        scoring = scoring_for(inputs, onto=onto, rule=rule, shared=True)
        reading = {"doc_col": None, "code_col": None, "system": "auto"}
    elif source == OPEN:
        onto = "auto"
        try:
            opened = saved.open_file(sb, saved.MAX_ANALYSIS_MB)
        except InputError as e:
            opened, error = None, str(e)
        if opened is None:
            notice = None if error else "Open a file made with Save analysis (or by cophe score … --save)."
        else:
            o = opened.options
            onto = o.get("ontology") or "auto"
            if opened.hierarchy is not None:
                hierarchy = (opened.hierarchy.name, opened.hierarchy.data)
            reading = {
                "doc_col": o.get("doc_col"),
                "code_col": o.get("code_col"),
                "system": o.get("system") or "auto",
            }
            gold = (opened.gold.name, opened.gold.data)
            runs = [(run, f.name, f.data) for run, f in opened.runs.items()]
            label = f"saved analysis of {opened.created}"
            sb.caption(
                f"Opened: {md(gold[0])} and {len(runs)} run{'s' if len(runs) != 1 else ''}, saved "
                f"{md(opened.created)} with cophe {md(opened.cophe_version)}."
            )
            try:
                inputs = read_inputs(gold, runs, doc_col=reading["doc_col"], code_col=reading["code_col"])
                scored = inputs.scored
                rule = decision_rule(sb, scored)
                scoring = scoring_for(
                    inputs, onto=onto, system=reading["system"] or "auto", hierarchy=hierarchy, rule=rule
                )
            except NothingScorable as e:
                blocked, error = e, str(e)
            except InputError as e:
                error = str(e)
    else:
        onto = sb.selectbox(
            "Code system", list(ONTOLOGIES), format_func=ONTOLOGIES.__getitem__, key="ontology"
        )
        if onto == "custom":
            hfile = sb.file_uploader(
                "Hierarchy",
                type=["csv", "json"],
                key="hierarchy_file",
                max_upload_size=MAX_UPLOAD_MB,
                help="CSV rows child,parent[,title] (an empty parent marks the root; "
                "several rows for a node make a DAG), or the JSON hierarchy files "
                "released with the CoPHE paper.",
            )
            hierarchy = (hfile.name, hfile.getvalue()) if hfile else None
        gold_file = sb.file_uploader(
            "Gold standard",
            type=UPLOAD_TYPES,
            key="gold_file",
            max_upload_size=MAX_UPLOAD_MB,
            help="One row per (document, code), or one row per document with "
            "';'-joined codes; CSV/TSV, CAML .psv, JSON/JSONL or Parquet.",
        )
        run_files = sb.file_uploader(
            "Model runs (one file each)",
            type=UPLOAD_TYPES,
            key="run_files",
            accept_multiple_files=True,
            max_upload_size=MAX_RUN_UPLOAD_MB,
        )
        taken: set[str] = set()
        for i, f in enumerate(run_files or []):
            name = sb.text_input(
                f"Name of run {i + 1} ({label_md(f.name)})",
                value=_run_name(f.name, taken),
                key=f"run_name_{i}_{f.name}",
            )
            name = name.strip() or _run_name(f.name, taken)
            if name in taken:  # two runs never share a name
                name = _run_name(name, taken)
            taken.add(name)
            runs.append((name, f.name, f.getvalue()))
        follow_renames([r[0] for r in runs], [r[1] for r in runs])
        with sb.expander("Reading options"):
            system = st.selectbox(
                "Undotted ICD-9 codes such as 4019 are",
                list(SYSTEMS),
                format_func=SYSTEMS.__getitem__,
                key="system",
                help="MIMIC stores diagnoses and procedures without dots in "
                "separate tables; 4019 is diagnosis 401.9 or procedure 40.19.",
            )
            doc_col = st.text_input("Document id column", key="doc_col", placeholder="detected") or None
            code_col = st.text_input("Code column", key="code_col", placeholder="detected") or None
        reading = {"doc_col": doc_col, "code_col": code_col, "system": system}
        if gold_file is None or not runs:
            notice = "Upload a gold standard and at least one model run, or choose a sample."
        else:
            label = ", ".join([gold_file.name] + [r[1] for r in runs])
            gold = (gold_file.name, gold_file.getvalue())
            try:
                inputs = read_inputs(gold, runs, doc_col=doc_col, code_col=code_col)
                scored = inputs.scored
                rule = decision_rule(sb, scored)
                scoring = scoring_for(inputs, onto=onto, system=system, hierarchy=hierarchy, rule=rule)
            except NothingScorable as e:  # withhold every number until the user answers or fixes the file
                blocked, error = e, str(e)
            except InputError as e:
                error = str(e)
    run = None
    max_level = None
    if scoring is not None:
        tree = scoring.corpus.ontology
        if scoring.detection:
            sb.caption(f"Code system {md(scoring.detection)}")
        sb.caption(
            "Code sets: " + "; ".join(f"{md(k)} ({md(v)})" for k, v in tree.code_sets.items()),
            help="The releases the codes were checked and placed against. Different releases can change "
            "scores, so report them with any number you publish.",
        )
        levels = list(tree.levels)
        urlstate.take_choice("level", f"max_level_{tree.name}", levels)
        max_level = sb.selectbox(
            "Highest level",
            levels,
            index=levels.index(tree.default_level),
            key=f"max_level_{tree.name}",
            format_func=lambda lv: texts.level(tree, lv),
            help="Codes are scored at each level from the exact codes up to this one, and "
            "over all of them together. The CoPHE paper stops at the section.",
        )
        urlstate.take_choice("run", "run", scoring.run_names)
        urlstate.take_runs("levels_runs", scoring.run_names)
        run = sb.selectbox(
            "Run", scoring.run_names, key="run", help="The run shown in the tree and document views."
        )
    files = (
        None
        if gold is None or not runs or reading is None
        else {
            "gold": gold,
            "runs": runs,
            "hierarchy": hierarchy,
            "ontology": onto,
            "max_level": max_level,
            "scored": bool(scored),
            **reading,
        }
    )
    return Context(
        scoring,
        label,
        max_level,
        run,
        error,
        (scoring.scored or None) if scoring else None,
        st.session_state.get("_rule") if scored else None,
        reading,
        notice,
        blocked,
        files=files,
    )


RUN_KEYS = (
    "run",
    "levels_runs",
    "cmp_a",
    "cmp_b",
    "doc_run_b",
    "threshold_run",
)  # widgets that hold run names


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
                    0.05,
                    0.95,
                    step=0.05,
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
                    30,
                    15,
                    key="top_k",
                    help="Each document's k highest-scoring codes; a tie goes to the code that sorts first.",
                ),
            )
    st.session_state["_rule"] = rule
    return rule


def problems_panel(scoring: Scoring) -> None:
    """Rejected and flagged rows, and input warnings: counts, first rows with reasons, downloads."""
    c = scoring.corpus
    if len(c.rejected):
        with st.container(border=True):
            st.error(
                f"**{len(c.rejected):,} input rows were not scored.** Each is listed with its file, line, "
                "value and the reason; fix them and upload again, or accept that they are left out."
            )
            by_reason = (  # one row per file and kind of problem, with the words of its first row
                c.rejected.groupby(["file", "kind"], sort=False)
                .agg(reason=("reason", "first"), rows=("reason", "size"))
                .reset_index()[["file", "reason", "rows"]]
            )
            st.dataframe(by_reason, hide_index=True, width="stretch")
            st.caption("First rejected rows")
            # the reason in words on screen; its kind, for programs, stays in the downloaded CSV
            st.dataframe(c.rejected.head(20).drop(columns="kind"), hide_index=True, width="stretch")
            downloads.table(
                st, "Download all rejected rows (CSV)", c.rejected, "rejected_rows.csv", key="dl_rejected"
            )
            if c.needs_system:
                system_question()
    if len(c.flagged):
        with st.expander(f"{len(c.flagged):,} rows scored with a caveat", expanded=False):
            st.dataframe(c.flagged.head(50).drop(columns="kind"), hide_index=True, width="stretch")
            downloads.table(
                st, "Download flagged rows (CSV)", c.flagged, "flagged_rows.csv", key="dl_flagged"
            )
    if c.notes:  # the rejected and flagged rows are in the tables above
        st.info("\n".join(f"- {md(w)}" for w in c.notes))


def system_question() -> None:
    """Ask which system undotted ICD-9 codes are (never guessed); the answer sets the reading option."""
    st.warning(
        "Some codes have no dot (like **4019**). That can be diagnosis 401.9 or procedure "
        "40.19. Which code system do the files hold?"
    )
    a, b = st.columns(2)
    a.button("They are diagnoses", on_click=_set_system, args=("diagnosis",), key="sys_dx")
    b.button("They are procedures", on_click=_set_system, args=("procedure",), key="sys_proc")


def blocked_panel(blocked: NothingScorable) -> None:
    """An input none of whose rows can be scored: why, its rejected rows, and the question if there is one.
    No number is shown, since a score of nothing would read as a score of zero."""
    with st.container(border=True):
        st.error(f"**No scores yet: {md(blocked.file)} has no row that can be scored.**")
        if blocked.needs_system:
            system_question()
        else:
            st.markdown(
                f"{md(blocked.summary)} Check the code system (sidebar) and, under Reading options, "
                "the document id and code columns."
            )
        if len(blocked.rejected):
            st.caption("First rejected rows")
            st.dataframe(blocked.rejected.head(20).drop(columns="kind"), hide_index=True, width="stretch")


def is_cached(scoring: Scoring, key: tuple) -> bool:
    """Whether :func:`cached` holds ``key`` for this scoring already (so a view can skip a spinner)."""
    return key in scoring.__dict__.get("_dashboard_cache", {})


CACHED_PER_SCORING = (
    256  # results kept per scored input set (tree views, intervals, tables), least recent out
)
# One thread computes what a user is likely to ask for next (the other slices on offer, the family table at
# the other levels), so that choosing it shows it at once; cached() waits for such work rather than repeating it.
_AHEAD = ThreadPoolExecutor(max_workers=1, thread_name_prefix="cophe-ahead")
_LOCK = threading.Lock()


def _stores(scoring: Scoring) -> tuple[dict, dict]:
    with _LOCK:
        return (
            scoring.__dict__.setdefault("_dashboard_cache", {}),
            scoring.__dict__.setdefault("_dashboard_ahead", {}),
        )


def _keep(store: dict, key: tuple, value) -> None:
    with _LOCK:
        store[key] = value
        while len(store) > CACHED_PER_SCORING:
            store.pop(next(iter(store)))


def cached(scoring: Scoring, key: tuple, compute):
    """A result computed once per scored input set (kept on the Scoring itself, the last
    :data:`CACHED_PER_SCORING` used: a sample's is shared by every session, so it is bounded)."""
    store, ahead = _stores(scoring)
    with _LOCK:
        if key in store:
            store[key] = store.pop(key)  # most recently used last
            return store[key]
        future = ahead.get(key)
    if future is not None:
        try:
            return future.result()  # already under way in the background: wait for it
        except Exception:  # noqa: BLE001 - computed again below, where its error reaches the error panel
            pass
    with heavy():
        value = compute()
    _keep(store, key, value)
    return value


# Sessions computing at once. Python runs one thread at a time (the GIL), and every session's script is a
# thread of the one server: ten sessions computing together made each ten times slower, and opening the app
# took half a minute. The rest wait their turn (first come, roughly first served), so a session that only
# draws (opening the app, a rerun on cached results) shares the processor with one computation at most.
HEAVY_AT_ONCE = 1
_HEAVY = threading.Semaphore(HEAVY_AT_ONCE)
_IN_HEAVY = (
    threading.local()
)  # how deep this thread is in heavy(): a computation inside another takes no turn


@contextmanager
def heavy(*, take: bool = True) -> Iterator[None]:
    """Hold one of the :data:`HEAVY_AT_ONCE` turns to compute (at once if this thread holds one already).
    With ``take`` false, go ahead without a turn, and so do the computations inside: a session's opening.
    Work done ahead in the background takes no turn: it is one thread, and a turn held while waiting for it
    would deadlock."""
    depth = getattr(_IN_HEAVY, "depth", 0)
    acquire = depth == 0 and take
    if acquire and not _HEAVY.acquire(blocking=False):
        with st.spinner("Another user's work is running on this server; yours starts when it ends…"):
            _HEAVY.acquire()
    _IN_HEAVY.depth = depth + 1
    try:
        yield
    finally:
        _IN_HEAVY.depth = depth
        if acquire:
            _HEAVY.release()


def compute_ahead(scoring: Scoring, key: tuple, compute) -> None:
    """Start computing a result in the background, once, for :func:`cached` to find. ``compute`` must be
    pure core work: no Streamlit call."""
    store, ahead = _stores(scoring)

    def work():
        try:
            value = compute()
            _keep(store, key, value)
            return value
        finally:
            with _LOCK:
                ahead.pop(key, None)

    with _LOCK:
        if key in store or key in ahead:
            return
        ahead[key] = _AHEAD.submit(work)


def bootstrap_table(ev, *, with_suite: bool = False, n_resamples: int = 1000, seed: int = 0):
    return bootstrap(ev, n_resamples=n_resamples, seed=seed, with_suite=with_suite)


def figure_download(fig, name: str, key: str, table=None) -> None:
    """Small buttons under a chart: the figure as a standalone interactive HTML file (made on request: it
    holds plotly.js), and with ``table`` the numbers it draws as CSV."""
    left, right = st.columns(2) if table is not None else (st.container(), None)
    downloads.prepared(
        left,
        "Download chart as HTML",
        lambda: figure_html(fig),
        f"{name}.html",
        "text/html",
        key=key,
        source=(fig,),
        **downloads.SMALL,
    )
    if right is not None:
        table_download(table, name, f"{key}_csv", label="Download its numbers (CSV)", where=right)


def table_download(
    table, name: str, key: str, *, label: str = "Download the whole table (CSV)", where=None
) -> None:
    """A small button: a table as CSV, cells that a spreadsheet would run as a formula defused."""
    downloads.table(where or st, label, table, f"{name}.csv", key=key, **downloads.SMALL)


def _set_system(system: str) -> None:
    st.session_state["system"] = system


def context() -> Context:
    """The context set by app.py for this rerun."""
    return st.session_state["_ctx"]


class Ready(Context):
    """A :class:`Context` with a scored run to show, as :func:`require_scoring` returns it: the same object,
    with the type checker told that its scoring, run and highest level are set."""

    scoring: Scoring
    max_level: str
    run: str


def require_scoring() -> Ready | None:
    """The context if there is something to show; otherwise draw why not and return None."""
    ctx = context()
    if ctx.blocked is not None:
        blocked_panel(ctx.blocked)
        return None
    if ctx.error:
        st.error(md(ctx.error))
        return None
    if ctx.notice:
        st.info(md(ctx.notice), icon=":material/upload_file:")
        return None
    if ctx.scoring is None or ctx.run is None or ctx.max_level is None:
        st.info("No data yet.")
        return None
    return cast(Ready, ctx)
