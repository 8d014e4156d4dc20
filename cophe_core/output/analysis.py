"""A saved analysis: one file with the inputs as given and everything needed to see them again the same way.

The file (``.cophe``) is a zip of

- ``manifest.json``: the format and its version, the cophe version, when it was made (``SOURCE_DATE_EPOCH``
  when set, for reproducible files; see :func:`creation_time`), a checksum of everything but that time, the
  reading options
  (code system, ICD-9 system, document and code columns, highest level), the decision rule for runs given as
  scores, the slice, the view (page, run, focused family…), the code-set releases, and the list of inputs,
  each with its role, run name, original file name, member path, size and SHA-256;
- ``inputs/``: the gold standard, each run, and the optional hierarchy, document details and training
  labels, byte for byte as the user gave them (CSV, JSON, Parquet…);
- ``README.txt``: what the file is.

Nothing in it is trusted but bytes and options: opening it re-reads and re-validates every input exactly as an
upload, with the saved reading options (:func:`score_analysis` does it outside the dashboard).
:func:`read_analysis` never extracts to disk, bounds the size of the zip's directory, the number of members
and their inflated sizes (whatever the headers claim), refuses member names that leave the archive, checks
every input against its size and SHA-256, and takes only known values for the options that choose what is
read (a code system is a name, never a path: a user hierarchy travels as an input). It never unpickles or
evaluates anything. The format is described in ``docs/analysis-format.md``.

An :class:`Analysis` checks itself when made (:class:`ValueError` naming the field at fault);
:func:`read_analysis` reports every problem of a file as :class:`~cophe_core.base.files.InputError` naming it.
"""

from __future__ import annotations

import hashlib
import io
import json
import os
import re
import zipfile
from collections.abc import Mapping
from dataclasses import dataclass, field
from functools import cached_property
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..base.files import MB, InputError
from ..inputs.archive import open_archive, read_member, show, write_zip, zip_member
from ..scoring.labels import RowBound
from .manifest import (
    ANALYSIS,
    MAX_NAME,
    MAX_TEXT,
    ONTOLOGIES,
    ROLES,
    SYSTEMS,
    check_manifest,
    is_level_of,
    parse_rule,
)

if TYPE_CHECKING:
    from ..api import Scoring
    from ..scoring.decisions import Rule

__all__ = [
    "InputFile",
    "Analysis",
    "write_analysis",
    "read_analysis",
    "creation_time",
    "analysis_checksum",
    "analysis_from_files",
    "score_analysis",
    "FORMAT",
    "FORMAT_VERSION",
    "MAX_BYTES",
    "MAX_MEMBERS",
    "MAX_MANIFEST",
    "INPUT_MB",
]

FORMAT = "cophe-analysis"
FORMAT_VERSION = 1
MAX_BYTES = 500 * MB  # total inflated size read from one file
MAX_MEMBERS = 64
MAX_MANIFEST = MB  # bytes of manifest.json
# The largest input of each role a saved analysis may hold: the dashboard's upload limits for the same files, so
# that an input zipped small (a 199 MB gold standard deflates to 0.3 MB) costs no more than its upload would.
# Megabytes of 10**6 bytes (files.MB), as everywhere in cophe.
INPUT_MB = {"gold": 50, "run": 200, "hierarchy": 50, "metadata": 50, "training": 200}
README = """This is a saved cophe analysis (cophe: hierarchical evaluation of clinical coding). Open it in the
cophe dashboard (Source: Open a saved analysis). It holds the input files exactly as they were given
(inputs/), and manifest.json says how they were read and what was on screen. It contains the inputs
themselves: share it as you would share them. The format is described in docs/analysis-format.md.
"""


@dataclass(frozen=True)
class InputFile:
    """A file as the user gave it: its name (not a path on this machine) and its bytes.

    >>> InputFile("gold.csv", b"doc_id,code\\n")
    InputFile(name='gold.csv', size=12)
    """

    name: str
    data: bytes = field(repr=False)

    def __post_init__(self) -> None:
        if not isinstance(self.name, str) or not self.name.strip() or len(self.name) > MAX_NAME:
            raise ValueError(f"a file name must be text of 1 to {MAX_NAME} characters, not {show(self.name)}")
        if not isinstance(self.data, bytes):
            raise ValueError(f"{self.name}: the contents must be bytes, not {type(self.data).__name__}")

    def __repr__(self) -> str:
        return f"InputFile(name={self.name!r}, size={len(self.data)})"

    @cached_property
    def sha256(self) -> str:
        """The SHA-256 of the bytes, in hex, computed once: :func:`read_analysis` checks each input against
        its manifest with it, and whoever reads the file next (the dashboard keys its caches by it) need
        not hash the same bytes again. The bytes are immutable and the class frozen, so it cannot go stale.

        >>> InputFile("gold.csv", b"doc_id,code\\n").sha256[:12]
        '0d04c24c0512'
        """
        return hashlib.sha256(self.data).hexdigest()


@dataclass(frozen=True)
class Analysis:
    """Inputs as given, how they were read, and what was on screen.

    ``runs`` maps each run's name to its file, in order. ``options`` holds ``ontology`` (``"auto"``,
    ``"icd9"``, ``"icd10cm"``, ``"icd10pcs"``, ``"icd10"``, or ``"custom"`` with ``hierarchy``), ``system``
    (``"auto"``, ``"diagnosis"``, ``"procedure"``), ``doc_col``, ``code_col`` and ``max_level`` (text or
    ``None``) and ``header`` (true, false or ``None``: whether the first row of a CSV/TSV input names its
    columns, None to decide from its content) and ``score_anyway`` (true when the user chose to score files
    too much of which cannot be scored: :class:`~cophe_core.scoring.labels.RowBound` lifted); other keys are kept. ``rule`` is ``("threshold", t)`` with t in [0, 1] or ``("top_k", k)``
    with k ≥ 1, for runs that hold scores. ``slice`` and ``view`` are JSON objects the dashboard reads back.
    Made with a value of the wrong type or out of range, it raises :class:`ValueError`.

    >>> a = Analysis(InputFile("g.csv", b"doc_id,code\\n"), {"A": InputFile("a.csv", b"doc_id,code\\n")},
    ...              rule=["top_k", 5])
    >>> a.rule
    ('top_k', 5)
    >>> Analysis(a.gold, a.runs, options={"ontology": "/etc/hierarchy.csv"})
    Traceback (most recent call last):
    ValueError: options: ontology must be one of auto, icd9, icd10cm, icd10pcs, icd10, custom, not '/etc/hierarchy.csv'
    """

    gold: InputFile
    runs: dict[str, InputFile]
    options: dict[str, Any] = field(default_factory=dict)
    rule: Rule | None = None
    slice: dict[str, Any] | None = None
    view: dict[str, Any] = field(default_factory=dict)
    hierarchy: InputFile | None = None
    metadata: InputFile | None = None
    training: InputFile | None = None
    created: str = ""
    cophe_version: str = ""
    code_sets: dict[str, str] = field(default_factory=dict)

    def __post_init__(self) -> None:
        _check(self)

    def inputs(self) -> list[tuple[str, str | None, InputFile]]:
        """(role, run name, file) for every input, gold first."""
        out: list[tuple[str, str | None, InputFile]] = [("gold", None, self.gold)]
        out += [("run", name, f) for name, f in self.runs.items()]
        out += [
            (role, None, f)
            for role, f in (
                ("hierarchy", self.hierarchy),
                ("metadata", self.metadata),
                ("training", self.training),
            )
            if f is not None
        ]
        return out


def _check(a: Analysis) -> None:
    """Every field of ``a`` of the right type and in range (:class:`ValueError` naming it otherwise); the
    rule made a tuple and the dictionaries copied, so that later changes to the caller's do not reach it."""
    if not isinstance(a.gold, InputFile):
        raise ValueError(f"gold must be an InputFile, not {type(a.gold).__name__}")
    if not isinstance(a.runs, Mapping) or not a.runs:
        raise ValueError("an analysis needs at least one run")
    for run, f in a.runs.items():
        if not isinstance(run, str) or not run.strip() or len(run) > MAX_NAME:
            raise ValueError(
                f"every run needs a name of its own, text of 1 to {MAX_NAME} characters, not {show(run)}"
            )
        if not isinstance(f, InputFile):
            raise ValueError(f"run {run!r} must be an InputFile, not {type(f).__name__}")
    for role in ("hierarchy", "metadata", "training"):
        if not isinstance(getattr(a, role), InputFile | None):
            raise ValueError(f"{role} must be an InputFile or None, not {type(getattr(a, role)).__name__}")
    _check_options(a.options, a.hierarchy)
    if not isinstance(a.slice, dict | None):
        raise ValueError(f"slice must be an object (a dict) or None, not {type(a.slice).__name__}")
    if not isinstance(a.view, dict):
        raise ValueError(f"view must be an object (a dict), not {type(a.view).__name__}")
    if not isinstance(a.code_sets, Mapping) or not all(
        isinstance(k, str) and isinstance(v, str) for k, v in a.code_sets.items()
    ):
        raise ValueError(f"code_sets must map text to text, not {show(a.code_sets)}")
    for key in ("created", "cophe_version"):
        value = getattr(a, key)
        if not isinstance(value, str) or len(value) > MAX_TEXT:
            raise ValueError(f"{key} must be text of at most {MAX_TEXT} characters, not {show(value)}")
    try:
        json.dumps([a.options, a.slice, a.view], allow_nan=False)
    except (TypeError, ValueError, RecursionError) as e:
        raise ValueError(f"options, slice and view must be plain JSON values ({str(e)[:80]})") from None
    for key in ("runs", "options", "view", "code_sets"):
        object.__setattr__(a, key, dict(getattr(a, key)))
    object.__setattr__(a, "slice", None if a.slice is None else dict(a.slice))
    object.__setattr__(a, "rule", parse_rule(a.rule))


def _check_options(options: Any, hierarchy: InputFile | None) -> None:
    if not isinstance(options, Mapping) or not all(isinstance(k, str) for k in options):
        raise ValueError(f"options must be an object with text keys, not {show(options)}")
    onto = options.get("ontology", "auto")
    if not isinstance(onto, str) or onto not in ONTOLOGIES:
        # a path here would make whoever opens the file read a file of their own machine
        raise ValueError(f"options: ontology must be one of {', '.join(ONTOLOGIES)}, not {show(onto)}")
    if onto == "custom" and hierarchy is None:
        raise ValueError("options: ontology is 'custom' but there is no hierarchy input")
    system = options.get("system", "auto")
    if not isinstance(system, str) or system not in SYSTEMS:
        raise ValueError(f"options: system must be one of {', '.join(SYSTEMS)}, not {show(system)}")
    if not is_level_of(options.get("max_level"), onto):
        raise ValueError(
            f"options: max_level must be a level of the code system {onto} or null, not "
            f"{show(options.get('max_level'))}"
        )
    for key in ("doc_col", "code_col", "max_level"):
        value = options.get(key)
        if value is not None and (not isinstance(value, str) or not value or len(value) > MAX_NAME):
            raise ValueError(
                f"options: {key} must be text of 1 to {MAX_NAME} characters or null, not {show(value)}"
            )
    if not isinstance(options.get("header"), bool | None):
        raise ValueError(f"options: header must be true, false or null, not {show(options.get('header'))}")
    if not isinstance(options.get("score_anyway", False), bool):
        raise ValueError(
            f"options: score_anyway must be true or false, not {show(options.get('score_anyway'))}"
        )


def _safe(name: str) -> str:
    """A member file name from a user's file name: letters, digits and ``._-`` only, never empty."""
    base = re.sub(r"[^A-Za-z0-9._-]+", "_", Path(name.replace("\\", "/")).name).strip("._") or "file"
    return base[:80]


def creation_time(environ: Mapping[str, str] | None = None) -> str:
    """The ``created`` time of a file written now: ``SOURCE_DATE_EPOCH`` (seconds since 1970-01-01 UTC, the
    reproducible-builds convention) when the environment sets it, so that the same inputs and settings give
    the same bytes; else the current time. ISO 8601, UTC, to the second. Raises :class:`ValueError` when
    ``SOURCE_DATE_EPOCH`` is set but not a whole number of seconds.

    >>> creation_time({"SOURCE_DATE_EPOCH": "1700000000"})
    '2023-11-14T22:13:20+00:00'
    >>> creation_time({})[:2], creation_time({"SOURCE_DATE_EPOCH": ""})[:2]  # empty counts as unset
    ('20', '20')
    """
    from datetime import UTC, datetime

    epoch = (os.environ if environ is None else environ).get("SOURCE_DATE_EPOCH", "").strip()
    if not epoch:
        return datetime.now(UTC).isoformat(timespec="seconds")
    if not re.fullmatch(r"[0-9]{1,12}", epoch):
        raise ValueError(
            f"SOURCE_DATE_EPOCH is {show(epoch)}; set it to a whole number of seconds since 1970-01-01 UTC, "
            "or unset it to record the current time"
        )
    return datetime.fromtimestamp(int(epoch), UTC).isoformat(timespec="seconds")


def _manifest(analysis: Analysis) -> tuple[dict[str, Any], list[tuple[zipfile.ZipInfo, bytes]]]:
    """The manifest without ``created`` and ``checksum``, and the input members."""
    inputs = analysis.inputs()
    if len(inputs) + 2 > MAX_MEMBERS:
        raise ValueError(f"{len(inputs)} inputs; a saved analysis holds at most {MAX_MEMBERS - 2}")
    for role, _, f in inputs:
        if len(f.data) > INPUT_MB[role] * MB:
            raise ValueError(
                f"the {role} input {show(f.name)} is larger than {INPUT_MB[role]} MB; a saved analysis could "
                "not be opened: score it with cophe aggregate instead"
            )
    if sum(len(f.data) for _, _, f in inputs) > MAX_BYTES - MAX_MANIFEST:
        raise ValueError(
            f"the inputs are larger than {(MAX_BYTES - MAX_MANIFEST) // MB} MB in all; a saved "
            "analysis could not be opened"
        )
    entries, members = [], []
    for i, (role, run, f) in enumerate(inputs):
        path = f"inputs/{i:02d}-{role}-{_safe(f.name)}"
        entries.append(
            {
                "role": role,
                "run": run,
                "file": f.name,
                "member": path,
                "size": len(f.data),
                "sha256": f.sha256,
            }
        )
        members.append(zip_member(path, f.data))
    manifest = {
        "format": FORMAT,
        "format_version": FORMAT_VERSION,
        "cophe_version": analysis.cophe_version,
        "options": analysis.options,
        "rule": list(analysis.rule) if analysis.rule else None,
        "slice": analysis.slice,
        "view": analysis.view,
        "code_sets": analysis.code_sets,
        "inputs": entries,
    }
    return manifest, members


def _json(manifest: dict[str, Any]) -> bytes:
    return json.dumps(manifest, indent=1, sort_keys=True, allow_nan=False).encode()


def analysis_checksum(analysis: Analysis) -> str:
    """``"sha256:"`` and the SHA-256 of the manifest without its ``created`` time (and without this
    checksum): the same for the same inputs (each named by its own SHA-256), options, rule, slice, view,
    code sets and cophe version, whenever the file was written. ``manifest.json`` carries it as
    ``checksum``.

    >>> a = Analysis(InputFile("g.csv", b"doc_id,code\\n"), {"A": InputFile("a.csv", b"doc_id,code\\n")})
    >>> b = Analysis(a.gold, a.runs, created="2026-01-01T00:00:00+00:00")
    >>> analysis_checksum(a) == analysis_checksum(b), analysis_checksum(a)[:7]
    (True, 'sha256:')
    """
    return "sha256:" + hashlib.sha256(_json(_manifest(analysis)[0])).hexdigest()


def write_analysis(analysis: Analysis) -> bytes:
    """The analysis as the bytes of a ``.cophe`` file (a zip; see the module docs). The same analysis
    always gives the same bytes (member times are fixed; the ``created`` time is the analysis's own: see
    :func:`creation_time`). Raises :class:`ValueError` for an analysis that :func:`read_analysis`
    would refuse (a field changed since it was made, too many inputs, inputs too large).

    >>> a = Analysis(InputFile("gold.csv", b"doc_id,code\\n1,401.9\\n"), {"A": InputFile("a.csv", b"doc_id,code\\n")},
    ...              options={"ontology": "icd9"}, rule=("threshold", 0.5), view={"page": "tree"})
    >>> data = write_analysis(a)
    >>> data[:2], data == write_analysis(a)
    (b'PK', True)
    >>> read_analysis(data) == a
    True
    """
    _check(analysis)
    manifest, members = _manifest(analysis)
    checksum = "sha256:" + hashlib.sha256(_json(manifest)).hexdigest()  # as analysis_checksum
    text = _json({**manifest, "created": analysis.created, "checksum": checksum})
    if len(text) > MAX_MANIFEST:
        raise ValueError(f"the manifest would be larger than {MAX_MANIFEST // MB} MB: make the view smaller")
    data = write_zip([zip_member("manifest.json", text), zip_member("README.txt", README.encode()), *members])
    assert data is not None
    return data


def read_analysis(
    data: bytes, *, name: str = "analysis.cophe", max_bytes: int = MAX_BYTES, max_members: int = MAX_MEMBERS
) -> Analysis:
    """Open a ``.cophe`` file, checking it like any upload (see the module docs and
    ``docs/analysis-format.md``). Only bytes and options are taken from it: score the inputs again
    (:func:`score_analysis`) to validate them.

    Raises :class:`~cophe_core.base.files.InputError` naming the file (``name``), and the member, input or
    field at fault, for a file that is not a saved analysis, is damaged or altered, or exceeds the bounds:
    at most ``max_members`` members inflating to ``max_bytes`` in all.

    >>> a = Analysis(InputFile("gold.csv", b"doc_id,code\\n1,401.9\\n"), {"B": InputFile("b.csv", b"doc_id,code\\n")},
    ...              slice={"slice_dimension": "gold_codes"}, view={"page": "compare", "cmp_baseline": "B"})
    >>> back = read_analysis(write_analysis(a), name="shared.cophe")
    >>> back.runs["B"].data, back.slice, back.view["cmp_baseline"]
    (b'doc_id,code\\n', {'slice_dimension': 'gold_codes'}, 'B')
    >>> read_analysis(b"doc_id,code\\n", name="shared.cophe")
    Traceback (most recent call last):
    cophe_core.base.files.InputError: shared.cophe: not a cophe analysis file (a zip with manifest.json); make one with Save analysis in the dashboard or `cophe score … --save`
    """
    if isinstance(data, bytearray | memoryview):
        data = bytes(data)
    if not isinstance(data, bytes):
        raise TypeError(f"read_analysis takes the file's bytes, not {type(data).__name__}")
    not_zip = f"{name}: not a cophe analysis file (a zip with manifest.json)"
    archive = open_archive(
        data,
        name=name,
        not_zip=not_zip,
        not_zip_fix="make one with {save}",
        max_members=max_members,
        max_bytes=max_bytes,
    )
    by_name = archive.members

    def member(info: zipfile.ZipInfo, limit: int | None = None) -> bytes:
        return read_member(archive.zip, info, info.file_size if limit is None else limit, name)

    if "manifest.json" not in by_name:
        raise InputError(f"{name}: no manifest.json; not a cophe analysis file")
    if by_name["manifest.json"].file_size > MAX_MANIFEST:
        raise InputError(
            f"{name}: manifest.json inflates to more than {MAX_MANIFEST:,} bytes; not a cophe analysis file"
        )
    text = member(by_name["manifest.json"])
    try:
        manifest = json.loads(text)
    except (ValueError, RecursionError):
        raise InputError(f"{name}: manifest.json is not valid JSON") from None
    if not isinstance(manifest, dict) or manifest.get("format") != FORMAT:
        raise InputError(f"{name}: manifest.json does not describe a cophe analysis (format {FORMAT!r})")
    version = manifest.get("format_version")
    if isinstance(version, bool) or not isinstance(version, int) or version < 1:
        raise InputError(f"{name}: manifest.json: format_version must be a whole number, not {show(version)}")
    if version > FORMAT_VERSION:
        raise InputError(
            f"{name}: format version {version}; this cophe opens version {FORMAT_VERSION} or older: "
            "update cophe"
        )
    # every option, count and value of the manifest as its schema allows (the field named otherwise)
    check_manifest(manifest, ANALYSIS, name=name)
    fields = {
        k: manifest.get(k) for k in ("options", "view", "slice", "code_sets", "created", "cophe_version")
    }
    rule = parse_rule(manifest.get("rule"))
    files = _inputs(manifest.get("inputs"), by_name, member, name, max_members)
    golds = [f for role, _, f in files if role == "gold"]
    runs = {str(run): f for role, run, f in files if role == "run"}
    if len(golds) != 1 or not runs:
        raise InputError(f"{name}: an analysis needs one gold standard and at least one run")
    extra = {role: f for role, _, f in files if role not in ("gold", "run")}
    try:
        return Analysis(
            gold=golds[0],
            runs=runs,
            options=fields["options"] or {},
            rule=rule,
            slice=fields["slice"],
            view=fields["view"] or {},
            hierarchy=extra.get("hierarchy"),
            metadata=extra.get("metadata"),
            training=extra.get("training"),
            created=fields["created"] or "",
            cophe_version=fields["cophe_version"] or "",
            code_sets=fields["code_sets"] or {},
        )
    except ValueError as e:
        raise InputError(f"{name}: manifest.json: {e}") from None


def _bounded_input(
    size: Any, role: str, file_name: str, path: str, info: zipfile.ZipInfo, member: Any, name: str
) -> bytes:
    """An input's bytes, once its size listed in manifest.json is known to be within its role's bound
    (:data:`INPUT_MB`) and to agree with the zip's own header: nothing is inflated beyond the listed size."""
    if isinstance(size, bool) or not isinstance(size, int) or size < 0:
        raise InputError(f"{name}: manifest.json: the size of {show(path)} must be a whole number")
    limit = INPUT_MB[role] * MB
    if size > limit:
        raise InputError(
            f"{name}: the {role} input {show(file_name)} is {size / MB:,.1f} MB; a saved analysis holds "
            f"inputs of at most {INPUT_MB[role]} MB for a {role}, as an upload does: score it with cophe aggregate "
            "and open the file it writes"
        )
    if info.file_size != size:
        raise InputError(
            f"{name}: {show(path)} holds {info.file_size:,} bytes, not the {size:,} manifest.json "
            "lists; the file was altered or damaged"
        )
    return bytes(member(info, size))


def _inputs(
    entries: Any, by_name: dict[str, zipfile.ZipInfo], member: Any, name: str, max_members: int
) -> list[tuple[str, str | None, InputFile]]:
    """The declared inputs, each present once, within bounds and matching its size and SHA-256."""
    if not isinstance(entries, list) or len(entries) > max_members:
        raise InputError(f"{name}: manifest.json: inputs must be a list of at most {max_members} entries")
    out: list[tuple[str, str | None, InputFile]] = []
    seen_runs: set[str] = set()
    seen_members: set[str] = set()
    for e in entries:
        if not isinstance(e, dict) or e.get("role") not in ROLES or not isinstance(e.get("member"), str):
            raise InputError(
                f"{name}: manifest.json: an input entry needs a role ({', '.join(ROLES)}) and a member"
            )
        role, path = e["role"], e["member"]
        if role != "run" and any(r == role for r, _, _ in out):
            raise InputError(f"{name}: manifest.json: two inputs have the role {role}; there is one at most")
        if path not in by_name or path in ("manifest.json", "README.txt"):
            raise InputError(f"{name}: the input {show(path)} is listed in manifest.json but missing")
        if path in seen_members:
            raise InputError(f"{name}: manifest.json: the input {show(path)} is listed twice")
        seen_members.add(path)
        run = e.get("run")
        if role == "run":
            if not isinstance(run, str) or not run.strip() or run in seen_runs:
                raise InputError(f"{name}: manifest.json: every run needs a name of its own, not {show(run)}")
            seen_runs.add(run)
        else:
            run = None
        file_name = e.get("file", Path(path).name)
        if not isinstance(file_name, str):
            raise InputError(f"{name}: manifest.json: the file name of {show(path)} must be text")
        content = _bounded_input(e.get("size"), role, file_name, path, by_name[path], member, name)
        try:
            f = InputFile(file_name, content)
        except ValueError as err:
            raise InputError(f"{name}: manifest.json: {err}") from None
        if f.sha256 != e.get("sha256"):  # kept on the file: its reader need not hash it again
            raise InputError(
                f"{name}: {path[:80]} does not match its SHA-256 in manifest.json; the file was "
                "altered or damaged"
            )
        out.append((role, run, f))
    return out


def analysis_from_files(
    gold: str | Path,
    runs: Mapping[str, str | Path],
    *,
    options: dict[str, Any],
    rule: Rule | None = None,
    hierarchy: str | Path | None = None,
    view: dict[str, Any] | None = None,
    created: str = "",
    cophe_version: str = "",
    code_sets: Mapping[str, str] | None = None,
) -> Analysis:
    """An analysis of files on disk (what ``cophe score … --save`` writes): each read as bytes, kept as given
    under its file name; ``view`` is ``{"page": "levels"}`` unless given.

    >>> import tempfile
    >>> with tempfile.TemporaryDirectory() as tmp:
    ...     g, p = Path(tmp, "gold.csv"), Path(tmp, "model.csv")
    ...     _ = g.write_bytes(b"doc_id,code\\n1,401.9\\n"), p.write_bytes(b"doc_id,code\\n1,401.1\\n")
    ...     a = analysis_from_files(g, {"model": p}, options={"ontology": "icd9"})
    >>> a.runs, a.view
    ({'model': InputFile(name='model.csv', size=20)}, {'page': 'levels'})
    """

    def file(p: str | Path) -> InputFile:
        return InputFile(Path(p).name, Path(p).read_bytes())

    return Analysis(
        file(gold),
        {k: file(v) for k, v in runs.items()},
        options=dict(options),
        rule=rule,
        view=dict(view or {"page": "levels"}),
        hierarchy=file(hierarchy) if hierarchy else None,
        created=created,
        cophe_version=cophe_version,
        code_sets=dict(code_sets or {}),
    )


def score_analysis(analysis: Analysis) -> Scoring:
    """Read and validate the analysis's inputs again, with its reading options and decision rule, as the
    dashboard does on opening it: :func:`~cophe_core.score_files` on the bytes as given (each under its file
    name), held to the default bound on rows not scored (a refused run is left out, as it was on screen)
    unless the analysis was scored anyway (``options["score_anyway"]``). Evaluate with
    ``.evaluation(run, max_level=analysis.options.get("max_level"))``.

    >>> a = Analysis(InputFile("gold.csv", b"doc_id,code\\n1,401.9\\n"),
    ...              {"A": InputFile("a.csv", b"doc_id,code\\n1,401.1\\n")}, options={"ontology": "icd9"})
    >>> ev = score_analysis(a).evaluation("A")
    >>> round(ev.score("cophe", "e0").f1, 3), round(ev.score("flat").f1, 3)  # the same family, another code
    (1.0, 0.0)
    """
    from ..api import score_files
    from ..ontology import load_hierarchy

    def stream(f: InputFile) -> io.BytesIO:
        s = io.BytesIO(f.data)
        s.name = f.name  # the readers take a stream's name for messages and format
        return s

    o = analysis.options
    ontology: Any = o.get("ontology") or "auto"
    if ontology == "custom" and analysis.hierarchy is not None:
        ontology = load_hierarchy(analysis.hierarchy.data, name=analysis.hierarchy.name)
    kind, value = analysis.rule or ("", 0)
    scoring = score_files(
        stream(analysis.gold),
        {run: stream(f) for run, f in analysis.runs.items()},
        ontology=ontology,
        system=o.get("system") or "auto",
        doc_col=o.get("doc_col"),
        code_col=o.get("code_col"),
        header=o.get("header"),
        bound=None if o.get("score_anyway") else RowBound(),
        threshold=float(value) if kind == "threshold" else None,
        top_k=int(value) if kind == "top_k" else None,
    )
    levels = scoring.corpus.ontology.levels
    if o.get("max_level") is not None and o["max_level"] not in levels:
        raise InputError(
            f"manifest.json: options.max_level {show(o['max_level'])} is not a level of the ontology the inputs "
            f"were scored with ({', '.join(levels)}); the file was altered"
        )
    return scoring
