"""A saved analysis: one file with the inputs as given and everything needed to see them again the same way.

The file (``.cophe``) is a zip of

- ``manifest.json``: the format and its version, the cophe version, when it was made, the reading options
  (code system, ICD-9 system, document and code columns, highest level), the decision rule for runs given as
  scores, the slice, the view (page, run, focused family…), the code-set releases, and the list of inputs,
  each with its role, run name, original file name, member path, size and SHA-256;
- ``inputs/``: the gold standard, each run, and the optional hierarchy, document details and training
  labels, byte for byte as the user gave them (CSV, JSON, Parquet…);
- ``README.txt``: what the file is.

Nothing in it is trusted but bytes and options: opening it re-reads and re-validates every input exactly as an
upload, with the saved reading options. :func:`read_analysis` never extracts to disk, bounds the number of
members and their inflated sizes (whatever the headers claim), refuses member names that leave the archive,
and checks every input against its SHA-256. It never unpickles or evaluates anything. See
``docs/analysis-format.md``.
"""

from __future__ import annotations

import hashlib
import io
import json
import math
import re
import zipfile
import zlib
from dataclasses import dataclass, field
from pathlib import Path

from .readers import InputError

__all__ = ["InputFile", "Analysis", "write_analysis", "read_analysis", "analysis_from_files", "FORMAT",
           "FORMAT_VERSION", "MAX_BYTES", "MAX_MEMBERS"]

FORMAT = "cophe-analysis"
FORMAT_VERSION = 1
MAX_BYTES = 500 * 2**20  # total inflated size read from one file
MAX_MEMBERS = 64
MAX_MANIFEST = 2**20
ROLES = ("gold", "run", "hierarchy", "metadata", "training")
RULES = ("threshold", "top_k")
_ZIP_TIME = (2020, 1, 1, 0, 0, 0)  # fixed member times: the same analysis gives the same bytes
README = """This is a saved cophe analysis (cophe: hierarchical evaluation of clinical coding).

Open it in the cophe dashboard: Source -> Open a saved analysis. It holds the input files exactly as they
were given (inputs/), and manifest.json says how they were read and what was on screen. It contains the
inputs themselves: share it as you would share them. The format is described in docs/analysis-format.md.
"""


@dataclass(frozen=True)
class InputFile:
    """A file as the user gave it: its name and bytes."""

    name: str
    data: bytes


@dataclass(frozen=True)
class Analysis:
    """Inputs as given, how they were read, and what was on screen.

    ``runs`` maps each run's name to its file, in order. ``options`` holds ``ontology`` (``"auto"``,
    ``"icd9"``, ``"icd10"``… or ``"custom"`` with ``hierarchy``), ``system``, ``doc_col``, ``code_col`` and
    ``max_level``. ``rule`` is ``("threshold", t)`` or ``("top_k", k)`` when a run holds scores. ``slice``
    and ``view`` are JSON objects the dashboard reads back (unknown keys are kept and ignored).
    """

    gold: InputFile
    runs: dict[str, InputFile]
    options: dict = field(default_factory=dict)
    rule: tuple | None = None
    slice: dict | None = None
    view: dict = field(default_factory=dict)
    hierarchy: InputFile | None = None
    metadata: InputFile | None = None
    training: InputFile | None = None
    created: str = ""
    cophe_version: str = ""
    code_sets: dict = field(default_factory=dict)

    def inputs(self) -> list[tuple[str, str | None, InputFile]]:
        """(role, run name, file) for every input, gold first."""
        out: list[tuple[str, str | None, InputFile]] = [("gold", None, self.gold)]
        out += [("run", name, f) for name, f in self.runs.items()]
        out += [(role, None, f) for role, f in (("hierarchy", self.hierarchy), ("metadata", self.metadata),
                                                 ("training", self.training)) if f is not None]
        return out


def _safe(name: str) -> str:
    """A member file name from a user's file name: letters, digits and ``._-`` only, never empty."""
    base = re.sub(r"[^A-Za-z0-9._-]+", "_", Path(name.replace("\\", "/")).name).strip("._") or "file"
    return base[:80]


def _check_rule(rule, where: str) -> tuple | None:
    if rule is None:
        return None
    if not isinstance(rule, (list, tuple)) or len(rule) != 2 or rule[0] not in RULES:
        raise InputError(f"{where}: the decision rule must be [\"threshold\", t] or [\"top_k\", k], not {str(rule)[:60]}")
    kind, value = rule
    if kind == "threshold":
        if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value) \
                or not 0 <= value <= 1:
            raise InputError(f"{where}: the threshold must be a number from 0 to 1, not {str(value)[:30]}")
        return ("threshold", float(value))
    if isinstance(value, bool) or not isinstance(value, int) or value < 1:
        raise InputError(f"{where}: top_k must be a whole number of at least 1, not {str(value)[:30]}")
    return ("top_k", value)


def write_analysis(analysis: Analysis) -> bytes:
    """The analysis as the bytes of a ``.cophe`` file (a zip; see the module docs). The same analysis
    always gives the same bytes.

    >>> a = Analysis(InputFile("gold.csv", b"doc_id,code\\n1,401.9\\n"), {"A": InputFile("a.csv", b"doc_id,code\\n")},
    ...              options={"ontology": "icd9"}, rule=("threshold", 0.5), view={"page": "tree"})
    >>> back = read_analysis(write_analysis(a))
    >>> back.runs["A"].data, back.rule, back.view["page"]
    (b'doc_id,code\\n', ('threshold', 0.5), 'tree')
    """
    rule = _check_rule(analysis.rule, "analysis")
    if not analysis.runs or any(not str(r).strip() for r in analysis.runs):
        raise ValueError("an analysis needs at least one run, each with a name that is not blank")
    entries, members = [], []
    for i, (role, run, f) in enumerate(analysis.inputs()):
        path = f"inputs/{i:02d}-{role}-{_safe(f.name)}"
        entries.append({"role": role, "run": run, "file": f.name, "member": path, "size": len(f.data),
                        "sha256": hashlib.sha256(f.data).hexdigest()})
        members.append((path, f.data))
    manifest = {
        "format": FORMAT, "format_version": FORMAT_VERSION, "cophe_version": analysis.cophe_version,
        "created": analysis.created, "options": dict(analysis.options), "rule": list(rule) if rule else None,
        "slice": analysis.slice, "view": dict(analysis.view), "code_sets": dict(analysis.code_sets),
        "inputs": entries,
    }
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w", zipfile.ZIP_DEFLATED) as z:
        for path, content in [("manifest.json", json.dumps(manifest, indent=1, sort_keys=True).encode()),
                              ("README.txt", README.encode()), *members]:
            z.writestr(zipfile.ZipInfo(path, date_time=_ZIP_TIME), content, compress_type=zipfile.ZIP_DEFLATED)
    return out.getvalue()


def _read_member(z: zipfile.ZipFile, info: zipfile.ZipInfo, limit: int, name: str) -> bytes:
    """A member's bytes, inflated at most ``limit`` bytes whatever its header says."""
    try:
        with z.open(info) as f:
            data = f.read(limit + 1)
    except (zipfile.BadZipFile, zlib.error, EOFError, OSError, NotImplementedError, RuntimeError) as e:
        raise InputError(f"{name}: {info.filename[:80]} is damaged ({type(e).__name__}); save the analysis "
                         "again") from None
    if len(data) > limit:
        raise InputError(f"{name}: {info.filename} inflates beyond {limit:,} bytes; this file is not a cophe "
                         "analysis or is too large to open")
    return data


def read_analysis(data: bytes, *, name: str = "analysis.cophe", max_bytes: int = MAX_BYTES,
                  max_members: int = MAX_MEMBERS) -> Analysis:
    """Open a ``.cophe`` file, checking it like any upload (see the module docs); raises
    :class:`~cophe_core.readers.InputError` naming the file, and the member where there is one."""
    try:
        z = zipfile.ZipFile(io.BytesIO(data))
        infos = z.infolist()
    except (zipfile.BadZipFile, ValueError, OSError):
        raise InputError(f"{name}: not a cophe analysis file (a zip with manifest.json); make one with Save "
                         "analysis or `cophe score … --save`") from None
    if len(infos) > max_members:
        raise InputError(f"{name}: {len(infos)} members; a cophe analysis has at most {max_members}")
    for info in infos:
        n = info.filename
        if n.startswith(("/", "\\")) or "\\" in n or ".." in n.split("/") or re.match(r"^[A-Za-z]:", n):
            raise InputError(f"{name}: member {n[:80]!r} has a path outside the archive; the file is refused")
    if sum(i.file_size for i in infos) > max_bytes:
        raise InputError(f"{name}: its members inflate to more than {max_bytes:,} bytes")
    by_name = {i.filename: i for i in infos}
    if "manifest.json" not in by_name:
        raise InputError(f"{name}: no manifest.json; not a cophe analysis file")
    try:
        manifest = json.loads(_read_member(z, by_name["manifest.json"], MAX_MANIFEST, name))
    except (ValueError, RecursionError):
        raise InputError(f"{name}: manifest.json is not valid JSON") from None
    if not isinstance(manifest, dict) or manifest.get("format") != FORMAT:
        raise InputError(f"{name}: manifest.json does not describe a cophe analysis (format {FORMAT!r})")
    version = manifest.get("format_version")
    if not isinstance(version, int) or version > FORMAT_VERSION or version < 1:
        raise InputError(f"{name}: format version {str(version)[:20]}; this cophe opens version "
                         f"{FORMAT_VERSION} or older: update cophe")
    files = _inputs(z, by_name, manifest.get("inputs"), name, max_bytes)
    golds = [f for role, _, f in files if role == "gold"]
    runs = {run: f for role, run, f in files if role == "run"}
    if len(golds) != 1 or not runs:
        raise InputError(f"{name}: an analysis needs one gold standard and at least one run")
    extra = {role: f for role, _, f in files if role in ("hierarchy", "metadata", "training")}
    options, view, sl = (manifest.get(k) for k in ("options", "view", "slice"))
    for key, value, kinds in (("options", options, (dict, type(None))), ("view", view, (dict, type(None))),
                              ("slice", sl, (dict, type(None)))):
        if not isinstance(value, kinds):
            raise InputError(f"{name}: manifest.json: {key} must be an object")
    return Analysis(
        gold=golds[0], runs=runs, options=dict(options or {}), rule=_check_rule(manifest.get("rule"), name),
        slice=sl, view=dict(view or {}), hierarchy=extra.get("hierarchy"), metadata=extra.get("metadata"),
        training=extra.get("training"), created=str(manifest.get("created", ""))[:40],
        cophe_version=str(manifest.get("cophe_version", ""))[:40],
        code_sets={str(k)[:80]: str(v)[:200] for k, v in dict(manifest.get("code_sets") or {}).items()},
    )


def _inputs(z: zipfile.ZipFile, by_name: dict, entries, name: str, max_bytes: int) -> list:
    """The declared inputs, each present, within bounds and matching its SHA-256."""
    if not isinstance(entries, list):
        raise InputError(f"{name}: manifest.json: inputs must be a list")
    out, seen_runs = [], set()
    for e in entries:
        if not isinstance(e, dict) or e.get("role") not in ROLES or not isinstance(e.get("member"), str):
            raise InputError(f"{name}: manifest.json: an input entry needs a role ({', '.join(ROLES)}) and a member")
        member = e["member"]
        if member not in by_name:
            raise InputError(f"{name}: the input {member[:80]!r} is listed in manifest.json but missing")
        content = _read_member(z, by_name[member], max_bytes, name)
        if hashlib.sha256(content).hexdigest() != e.get("sha256"):
            raise InputError(f"{name}: {member[:80]} does not match its SHA-256 in manifest.json; the file was "
                             "altered or damaged")
        run = e.get("run")
        if e["role"] == "run":
            if not isinstance(run, str) or not run.strip() or run in seen_runs:
                raise InputError(f"{name}: manifest.json: every run needs a name of its own ({str(run)[:40]!r})")
            seen_runs.add(run)
        out.append((e["role"], run, InputFile(str(e.get("file") or Path(member).name)[:200], content)))
    return out


def analysis_from_files(gold: str | Path, runs: dict[str, str | Path], *, options: dict,
                        rule: tuple | None = None, hierarchy: str | Path | None = None, view: dict | None = None,
                        created: str = "", cophe_version: str = "", code_sets: dict | None = None) -> Analysis:
    """An analysis of files on disk (what ``cophe score … --save`` writes): each read as bytes, kept as given."""
    def file(p: str | Path) -> InputFile:
        return InputFile(Path(p).name, Path(p).read_bytes())

    return Analysis(file(gold), {k: file(v) for k, v in runs.items()}, options=dict(options), rule=rule,
                    view=dict(view or {"page": "levels"}), hierarchy=file(hierarchy) if hierarchy else None,
                    created=created, cophe_version=cophe_version, code_sets=dict(code_sets or {}))
