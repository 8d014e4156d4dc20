"""Reading and scoring the inputs: the samples, uploads and saved analyses.

Core results are cached by content: uploads are keyed by a SHA-256 digest of their bytes and options, never
by the UploadedFile object (SPEC §7). Each file is parsed once per session and content (:func:`read_upload`),
whatever reruns follow; an upload's parse and scoring live in its session, a sample's are shared by every
session (:func:`sample_read`, :func:`_shared_score`).
"""

from __future__ import annotations

import hashlib
import io
from dataclasses import dataclass
from pathlib import Path

import streamlit as st

from cophe_core import InputError, Scoring, score_labels
from cophe_core.base.files import MB
from cophe_core.inputs.readers import RawLabels, RawScores, read_input, read_labels
from cophe_core.ontology import REGISTRY, load_ontology
from cophe_core.ontology.custom import load_hierarchy
from cophe_core.output.analysis import INPUT_MB
from cophe_core.scoring.labels import RowBound, TooManyRejected
from cophe_dashboard import urlstate
from cophe_dashboard.components import ANYWAY
from cophe_dashboard.memo import bounded
from cophe_dashboard.state import ahead, memo

# The bundled samples: beside the dashboard when installed (cophe_dashboard/sample_data), else the source
# checkout's top-level folder.
HERE = Path(__file__).resolve().parent
SAMPLE = next(
    (p for p in (HERE / "sample_data", HERE.parents[1] / "sample_data") if p.is_dir()), HERE / "sample_data"
)


SAMPLES = {  # source label → (folder, ontology, runs); a run named "scores_…" holds probabilities
    "Sample: ICD-9": ("icd9", "icd9", ("siblings", "overcoder", "conservative", "scores_model")),
    "Sample: ICD-10": ("icd10", "icd10", ("siblings", "overcoder")),
}


UPLOAD, OPEN = urlstate.UPLOAD_SOURCE, urlstate.OPEN_SOURCE  # the sources besides the samples


UPLOAD_TYPES = ["csv", "tsv", "txt", "psv", "json", "jsonl", "ndjson", "parquet", "feather", "arrow"]


# The same limits as a saved analysis's inputs (a file costs the same uploaded or inside an analysis). A run may
# be a matrix of probabilities: MIMIC-III full's (3,372 documents × 8,922 codes, float32) is 124 MB as Edin et
# al.'s feather file.
MAX_UPLOAD_MB = INPUT_MB["gold"]
MAX_RUN_UPLOAD_MB = INPUT_MB["run"]


# The uploaders' help: which megabyte their limits count (the browser shows "Limit 50MB per file").
MB_HELP = "A megabyte (MB) here is 1,000,000 bytes."


FIRST_ROW_IS_DATA = "First row is data"  # the checkbox beside the uploads: files without column names


# A saved analysis holds its inputs, an aggregate analysis the counts of runs too large to upload (58 MB for
# 10⁸ label rows): the largest upload, and so the server's own limit (server.maxUploadSize in
# .streamlit/config.toml, which a test keeps equal to this).
MAX_ANALYSIS_MB = 500


# The code system chooser: detection, each built-in code system in its own words, a user hierarchy.
ONTOLOGIES = {
    "auto": "Detect from the codes",
    **{name: system.description for name, system in REGISTRY.items()},
    "custom": "My own hierarchy (upload)",
}


SYSTEMS = {
    "auto": "Dotted codes only (reject undotted)",
    "diagnosis": "Diagnoses (401.9 ← 4019)",
    "procedure": "Procedures (40.19 ← 4019)",
}


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


def content(f, max_mb: int) -> bytes:
    """An uploaded file's bytes, refused (:class:`InputError` naming it and its size) above its uploader's
    limit: the browser keeps to each uploader's ``max_upload_size``, but the server takes any file up to the
    largest limit (``server.maxUploadSize``, :data:`MAX_ANALYSIS_MB`), so a request sent by other means is
    checked here, per uploader."""
    if f.size > max_mb * MB:
        raise InputError(
            f"{f.name}: {f.size / MB:,.1f} MB; this upload takes files of at most {max_mb} MB. Give a smaller "
            "file, or score large inputs with cophe aggregate and open the file it writes"
        )
    return f.getvalue()


def file_digest(name: str, data: bytes, sha256: str | None = None) -> str:
    """SHA-256 of a file's name and bytes; ``sha256``: the bytes' own SHA-256 (hex) when it is known already
    (an opened analysis's inputs, checked against it: :attr:`~cophe_core.output.analysis.InputFile.sha256`),
    so that the same bytes are not hashed twice."""
    inner = bytes.fromhex(sha256) if sha256 is not None else hashlib.sha256(data).digest()
    return hashlib.sha256(name.encode() + b"\0" + inner).hexdigest()


def read_upload(
    name: str,
    data: bytes,
    *,
    doc_col: str | None = None,
    code_col: str | None = None,
    digest: str | None = None,
    gold: bool = False,
    header: bool | None = None,
    kept: bool = True,
) -> RawLabels | RawScores:
    """A file parsed once per session and content: labels or scores, as its columns say
    (:func:`cophe_core.inputs.readers.read_input`).

    Kept in the session (SPEC §9: cached uploads must not outlive their session) under the digest of
    the file and the reading options, the last :data:`PARSED_PER_SESSION` only; an unreadable file
    is remembered with its error, so no rerun parses it again either. ``header``: whether the first row
    of a CSV/TSV file names its columns (None: told from its content; False when "First row is data" is
    ticked). ``kept`` false: parsed now, kept by the caller (a sample's, :func:`sample_read`).
    """
    key = (digest or file_digest(name, data), doc_col, code_col, gold, header, name, data)
    hit = memo(_parsed, *key) if kept else _parsed(*key)
    if isinstance(hit, InputError):
        raise hit
    return hit


@bounded(PARSED_PER_SESSION)
def _parsed(
    digest: str,
    doc_col: str | None,
    code_col: str | None,
    gold: bool,
    header: bool | None,
    _name: str,
    _data: bytes,
) -> RawLabels | RawScores | InputError:
    """A file parsed (kept by :func:`memo` under its digest and the reading options), or its error."""
    read = read_labels if gold else read_input  # a gold standard is code sets, whatever its columns
    try:
        return read(_named(_name, _data), doc_col=doc_col, code_col=code_col, header=header)
    except InputError as e:
        return e


def read_ahead(
    gold: tuple[str, bytes] | None,
    runs: list[tuple[str, str, bytes]],
    *,
    doc_col: str | None = None,
    code_col: str | None = None,
    header: bool | None = None,
) -> None:
    """Start parsing the files uploaded so far in the background (:func:`state.ahead`), while the user picks
    the others: :func:`read_inputs` then finds them parsed, or waits for them, under the same keys as
    :func:`read_upload`'s. Parsing the runs of a MIMIC-sized upload (a scores file among them) took a third of
    the time from the gold standard's upload to its numbers."""
    files = [(*gold, True)] if gold is not None else []
    for name, data, is_gold in files + [(name, data, False) for _, name, data in runs]:
        ahead(_parsed, file_digest(name, data), doc_col, code_col, is_gold, header, name, data)


def read_inputs(
    gold: tuple[str, bytes],
    runs: list[tuple[str, str, bytes]],
    *,
    doc_col: str | None = None,
    code_col: str | None = None,
    header: bool | None = None,
    sha256: list[str] | None = None,
    kept: bool = True,
) -> Inputs:
    """Parse the gold and the runs (each once per session and content; every byte hashed once per rerun, or
    not at all when ``sha256`` gives the SHA-256 of the gold's and each run's bytes, in that order: an opened
    analysis's inputs, hashed as it was read). ``kept`` false: parsed now, not kept in the session
    (:func:`read_upload`)."""
    known: list[str | None] = list(sha256) if sha256 is not None else [None] * (1 + len(runs))
    gold_digest = file_digest(*gold, sha256=known[0])
    run_digests = [
        file_digest(name, data, sha256=k) for (_, name, data), k in zip(runs, known[1:], strict=True)
    ]
    h = hashlib.sha256(gold_digest.encode())
    for (run, _, _), d in zip(runs, run_digests):
        h.update(run.encode() + b"\0" + d.encode())
    h.update((doc_col or "").encode() + b"\0" + (code_col or "").encode() + b"\0" + repr(header).encode())
    raw_gold = read_upload(
        *gold, digest=gold_digest, gold=True, doc_col=doc_col, code_col=code_col, header=header, kept=kept
    )
    raw_runs = {
        run: read_upload(name, data, digest=d, doc_col=doc_col, code_col=code_col, header=header, kept=kept)
        for (run, name, data), d in zip(runs, run_digests)
    }
    return Inputs(h.hexdigest(), raw_gold, raw_runs)


def _bound(inputs: Inputs) -> RowBound | None:
    """The command line's default bound (:class:`cophe_core.scoring.labels.RowBound`), unless lifted for this upload."""
    return None if inputs.digest in st.session_state.get(ANYWAY, set()) else RowBound()


def _score(inputs: Inputs, onto: str, system: str, hier=None) -> Scoring:
    """Validated inputs; runs given as scores are decided by :data:`DEFAULT_RULE` (see :func:`scoring_for`).
    A file too much of which cannot be scored is refused (a run: left out, the others scored), unless the
    user chose to score this upload anyway."""
    chosen = hier if onto == "custom" else (onto if onto == "auto" else ontology(onto))
    return score_labels(
        inputs.gold,
        inputs.runs,
        ontology=chosen,
        system=system,
        threshold=DEFAULT_RULE[1],
        bound=_bound(inputs),
    )


@st.cache_resource(max_entries=len(SAMPLES), show_spinner="Scoring the sample…")
def _shared_score(digest: str, _inputs: Inputs, onto: str, system: str) -> Scoring:
    """A bundled sample, scored once for every session (keyed by ``digest``; the underscored argument is
    not hashed)."""
    return _score(_inputs, onto, system)  # no turn taken here: another session may wait on this cache


SCORED_PER_SESSION = 2  # an upload's scoring (and every result cached on it) lives in its session only


def _session_score(digest: str, inputs: Inputs, onto: str, system: str, hier=None) -> Scoring:
    """An upload, scored once per session and content: kept in the session, the last
    :data:`SCORED_PER_SESSION` only, so that it is freed with the session (SPEC §9), never shared."""
    hit = memo(scored_upload, digest, inputs, onto, system, hier)
    if isinstance(hit, TooManyRejected):
        raise hit
    return hit


@bounded(SCORED_PER_SESSION)
def scored_upload(
    digest: str, _inputs: Inputs, _onto: str, _system: str, _hier=None
) -> Scoring | TooManyRejected:
    """An upload scored (kept by :func:`memo` under ``digest``, which names the inputs and options), or why it
    was refused: a refused upload is not read again on every rerun either."""
    with st.spinner("Scoring the runs…"):
        try:
            return _score(_inputs, _onto, _system, _hier)
        except TooManyRejected as e:
            return e


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
    for part in (onto, system, "anyway" if _bound(inputs) is None else "bounded"):
        h.update(part.encode() + b"\0")
    base = (
        _shared_score(h.hexdigest(), inputs, onto, system)
        if shared
        else _session_score(h.hexdigest(), inputs, onto, system, hier)
    )
    if not base.scored or base.rule == tuple(rule):
        return base
    return memo(_decided, base, tuple(rule))  # the decisions of the last few slider positions


@bounded(RULES_KEPT)
def _decided(base: Scoring, rule: tuple) -> Scoring:
    """``base`` with its runs given as scores decided by ``rule``: ("threshold", t) or ("top_k", k)."""
    return base.with_rule(**{rule[0]: rule[1]})


Sample = tuple[tuple[str, bytes], list[tuple[str, str, bytes]], str, Inputs]


@st.cache_resource(max_entries=len(SAMPLES), show_spinner="Reading the sample…")
def sample_read(source: str) -> Sample:
    """A bundled sample's files (:func:`sample_inputs`) and their parse, read once for every session as its
    scoring is (:func:`_shared_score`): they hold no user's data, and every new session opens on a sample,
    whose parse took 0.3 s of each session's first run. The parse is not changed by what reads it (a test
    scores it in two sessions and compares it with a new one)."""
    gold, runs, onto = sample_inputs(source)
    return gold, runs, onto, read_inputs(gold, runs, kept=False)


def sample_inputs(source: str) -> tuple[tuple[str, bytes], list[tuple[str, str, bytes]], str]:
    folder, onto, names = SAMPLES[source]
    gold = ("gold.csv", (SAMPLE / folder / "gold.csv").read_bytes())
    files = {run: (run if run.startswith("scores_") else f"run_{run}") + ".csv" for run in names}
    runs = [(run.removeprefix("scores_"), f, (SAMPLE / folder / f).read_bytes()) for run, f in files.items()]
    return gold, runs, onto
