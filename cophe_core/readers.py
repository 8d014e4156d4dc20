"""Readers: every input format people have → :class:`RawLabels`.

Formats (SPEC §5), chosen by file extension, else by content:

- long CSV/TSV, one row per (document, code): ``doc_id,code``, MIMIC's
  ``HADM_ID,ICD9_CODE``; delimiter sniffed among ``, \\t | ;``;
- wide CSV with ``;``-joined codes in one column (CAML's ``LABELS``);
- CAML ``preds_test.psv``: lines ``HADM_ID|code|code…`` (no header);
- JSON (a list of ``{"doc_id": …, "codes": […]}`` or a ``{doc_id: [codes]}``
  object) and JSONL (one object per line);
- Parquet, long or with a list column.

Readers do not interpret codes; :mod:`cophe_core.labels` does. They return
every document seen (a document may have no codes) and every row they could not
read, with file, line, value and reason. Whole-file problems raise
:class:`InputError` with one clear message.
"""

from __future__ import annotations

import csv
import io
import json
import warnings
from dataclasses import dataclass, field
from pathlib import Path
from typing import BinaryIO

import numpy as np
import pandas as pd

__all__ = ["InputError", "RawLabels", "read_labels", "DOC_COLUMNS", "CODE_COLUMNS"]

DOC_COLUMNS = ("doc_id", "document_id", "doc", "hadm_id", "_id", "id", "note_id", "admission_id")
CODE_COLUMNS = (
    "code", "codes", "icd9_code", "icd_code", "icd10_code", "icd9", "icd", "label", "labels",
    "target", "targets",
)
REJECTED_COLUMNS = ["file", "line", "value", "reason"]
MAX_BYTES = 200 * 1024 * 1024
Source = str | Path | bytes | BinaryIO


class InputError(ValueError):
    """A whole input cannot be read. The message says what is wrong and what to do."""


@dataclass
class RawLabels:
    """Uninterpreted (document, code) pairs read from one input.

    Attributes
    ----------
    name : str
        The file name, used in messages.
    docs : ndarray of str
        Every document id seen, including documents with no codes.
    pairs : DataFrame
        Columns ``doc_id`` (str), ``code`` (str, as written) and ``line`` (int,
        1-based line of the file, or row number for binary formats).
    rejected : DataFrame
        Columns ``file, line, value, reason``.
    """

    name: str
    docs: np.ndarray
    pairs: pd.DataFrame
    rejected: pd.DataFrame = field(default_factory=lambda: pd.DataFrame(columns=REJECTED_COLUMNS))


def read_labels(
    source: Source,
    *,
    name: str | None = None,
    format: str | None = None,
    doc_col: str | None = None,
    code_col: str | None = None,
    joiner: str = ";",
) -> RawLabels:
    """Read one labels file.

    Parameters
    ----------
    source : path, bytes or binary file
    name : str, optional
        Name used in messages (defaults to the file name).
    format : {"csv", "tsv", "psv", "json", "jsonl", "parquet"}, optional
        Overrides detection by extension and content.
    doc_col, code_col : str, optional
        Override the column detection (matched case-insensitively).
    joiner : str
        Separator of several codes inside one cell (CAML's ``LABELS``).
    """
    data, name = _load_bytes(source, name)
    fmt = (format or _detect_format(name, data)).lower()
    if fmt == "parquet":
        frame = _read_parquet(data, name)
        return _from_frame(frame, name, doc_col, code_col, joiner, line_offset=1)
    text = _decode(data, name)
    if fmt == "json":
        return _from_records(_parse_json(text, name), name, doc_col, code_col, joiner)
    if fmt == "jsonl":
        return _from_records(_parse_jsonl(text, name), name, doc_col, code_col, joiner)
    if fmt == "psv":
        return _read_psv(text, name)
    if fmt in ("csv", "tsv", "txt"):
        return _read_delimited(text, name, doc_col, code_col, joiner, "\t" if fmt == "tsv" else None)
    raise InputError(f"{name}: unknown format {fmt!r}; use csv, tsv, psv, json, jsonl or parquet")


def _load_bytes(source: Source, name: str | None) -> tuple[bytes, str]:
    if isinstance(source, (str, Path)):
        path = Path(source)
        if not path.is_file():
            raise InputError(f"{path}: no such file")
        if path.stat().st_size > MAX_BYTES:
            raise InputError(f"{path}: larger than {MAX_BYTES // 2**20} MB; split the file")
        return path.read_bytes(), name or path.name
    if isinstance(source, bytes):
        return source, name or "<bytes>"
    data = source.read(MAX_BYTES + 1)
    if len(data) > MAX_BYTES:
        raise InputError(f"{name}: larger than {MAX_BYTES // 2**20} MB; split the file")
    return data, name or getattr(source, "name", "<stream>")


def _detect_format(name: str, data: bytes) -> str:
    suffix = Path(name).suffix.lower().lstrip(".")
    if suffix in ("csv", "tsv", "psv", "json", "jsonl", "parquet"):
        return suffix
    if suffix in ("ndjson",):
        return "jsonl"
    if data[:4] == b"PAR1":
        return "parquet"
    head = data.lstrip()[:1]
    if head in (b"[", b"{"):
        first = data.lstrip().split(b"\n", 1)[0].strip()
        return "jsonl" if first.startswith(b"{") and first.endswith(b"}") and data.count(b"\n") > 1 else "json"
    return "csv"


def _decode(data: bytes, name: str) -> str:
    if not data.strip():
        raise InputError(f"{name}: the file is empty; expected one row per document and code")
    if b"\x00" in data[:8192]:
        raise InputError(f"{name}: this is not a text file (it contains NUL bytes); upload CSV, TSV, JSON or Parquet")
    try:
        return data.decode("utf-8-sig")
    except UnicodeDecodeError as e:
        line = data[: e.start].count(b"\n") + 1
        raise InputError(
            f"{name}, line {line}: not valid UTF-8 text (byte {data[e.start]:#04x}); "
            "save the file as UTF-8 CSV"
        ) from None


def _pick(columns: list[str], wanted: str | None, candidates: tuple[str, ...], what: str, name: str) -> str:
    lower = {c.lower().strip(): c for c in columns}
    if wanted is not None:
        if wanted.lower() in lower:
            return lower[wanted.lower()]
        raise InputError(f"{name}: no column {wanted!r}; the columns are {', '.join(map(str, columns))}")
    for cand in candidates:
        if cand in lower:
            return lower[cand]
    raise InputError(
        f"{name}: cannot find the {what} column; looked for {', '.join(candidates)} and found "
        f"{', '.join(map(str, columns))}. Rename the column or pass it explicitly "
        f"(--{'doc' if what == 'document id' else 'code'}-col)."
    )


def _first_line(text: str) -> str:
    lines = text[:65536].splitlines()
    return lines[0] if lines else ""


def sniff_separator(text: str, name: str) -> str:
    """The most frequent of ``, tab | ;`` on the first line; an error naming the line if none occurs."""
    first = _first_line(text)
    counts = {d: first.count(d) for d in (",", "\t", "|", ";")}
    sep = max(counts, key=counts.get)
    if counts[sep] == 0:
        raise InputError(
            f"{name}, line 1: found a single column {first[:60]!r}; expected a document id "
            "and a code column separated by a comma, tab, | or ;"
        )
    return sep


def parse_delimited(text: str, name: str, sep: str) -> pd.DataFrame:
    """All columns as strings, indexed by 1-based line; a row longer than the header is an error."""
    try:
        with warnings.catch_warnings():  # a row longer than the header must not pass silently
            warnings.simplefilter("error", pd.errors.ParserWarning)
            frame = pd.read_csv(
                io.StringIO(text), sep=sep, dtype=str, keep_default_na=False, quoting=csv.QUOTE_MINIMAL,
                skip_blank_lines=True, index_col=False, engine="c",
            )
    except (pd.errors.ParserError, pd.errors.ParserWarning) as e:
        detail = str(e).replace("Error tokenizing data. C error: ", "")
        raise InputError(
            f"{name}: cannot parse as {'tab' if sep == chr(9) else repr(sep)}-separated text ({detail}); "
            "a row has more fields than the header: quote fields that contain the delimiter"
        ) from None
    frame.index = _line_numbers(frame, 2)  # the header is line 1
    return frame


def _read_delimited(text, name, doc_col, code_col, joiner, sep) -> RawLabels:
    if sep is None:
        sep = sniff_separator(text, name)
        if sep == "|" and _looks_headerless_psv(_first_line(text)):
            return _read_psv(text, name)
    frame = parse_delimited(text, name, sep)
    if frame.shape[1] < 2 and code_col is None:
        raise InputError(
            f"{name}: found a single column {frame.columns[0]!r}; expected a document id and a code "
            "column separated by a comma, tab, | or ;"
        )
    return _from_frame(frame, name, doc_col, code_col, joiner, line_offset=None)


def _line_numbers(frame: pd.DataFrame, offset: int) -> pd.Index:
    """1-based line of each row, counting newlines inside quoted fields."""
    extra = np.zeros(len(frame), dtype=np.int64)
    for col in frame.columns:
        extra += frame[col].str.count("\n").to_numpy(dtype=np.int64)
    starts = offset + np.arange(len(frame)) + np.concatenate([[0], np.cumsum(extra)[:-1]])
    return pd.Index(starts)


def _looks_headerless_psv(first: str) -> bool:
    head = first.split("|")[0].strip()
    return head.isdigit()


def _read_psv(text: str, name: str) -> RawLabels:
    """CAML's predictions: ``HADM_ID|code|code…`` per line; a lone id has no codes."""
    docs, rows, rejected = [], [], []
    for lineno, line in enumerate(text.splitlines(), start=1):
        if not line.strip():
            continue
        fields = [f.strip() for f in line.split("|")]
        doc = fields[0]
        if not doc:
            rejected.append((name, lineno, line[:80], "no document id before the first |"))
            continue
        docs.append(doc)
        rows += [(doc, code, lineno) for code in fields[1:] if code]
    return _make(name, docs, rows, rejected)


def _split_codes(frame: pd.DataFrame, doc: str, code: str, joiner: str) -> tuple[pd.DataFrame, bool]:
    """Explode ``;``-joined cells into one row per code."""
    col = frame[code].astype(str)
    if not col.str.contains(joiner, regex=False).any() and code.lower() not in ("labels", "codes", "targets"):
        return pd.DataFrame({"doc_id": frame[doc].astype(str), "code": col, "line": frame.index}), False
    parts = col.str.split(joiner, regex=False)
    out = pd.DataFrame({"doc_id": frame[doc].astype(str), "code": parts, "line": frame.index}).explode("code")
    out["code"] = out["code"].fillna("")
    return out, True


def _from_frame(frame, name, doc_col, code_col, joiner, line_offset) -> RawLabels:
    cols = [str(c) for c in frame.columns]
    frame.columns = cols
    doc = _pick(cols, doc_col, DOC_COLUMNS, "document id", name)
    code = _pick([c for c in cols if c != doc], code_col, CODE_COLUMNS, "code", name)
    if line_offset is not None:
        frame = frame.reset_index(drop=True)
        frame.index = frame.index + line_offset
    if frame[code].map(lambda v: isinstance(v, (list, tuple, np.ndarray))).any():
        exploded = frame[[doc, code]].explode(code)
        pairs = pd.DataFrame({"doc_id": exploded[doc].astype(str), "code": exploded[code],
                              "line": exploded.index})
        wide = True
    else:
        pairs, wide = _split_codes(frame, doc, code, joiner)
    pairs["doc_id"] = pairs["doc_id"].str.strip()
    no_doc = pairs["doc_id"].isin(["", "nan", "None"])
    rejected = pairs.loc[no_doc & pairs["code"].notna()]
    rejected = pd.DataFrame({"file": name, "line": rejected["line"], "value": rejected["code"].astype(str),
                             "reason": "empty document id"})
    pairs = pairs.loc[~no_doc]
    docs = pairs["doc_id"].unique()
    is_empty = pairs["code"].isna() | (pairs["code"].astype(str).str.strip() == "")
    if not wide:
        empty = pairs.loc[is_empty]
        rejected = pd.concat([rejected, pd.DataFrame({"file": name, "line": empty["line"], "value": "",
                                                      "reason": "empty code"})])
    pairs = pairs.loc[~is_empty]
    pairs = pairs.assign(code=pairs["code"].astype(str)).reset_index(drop=True)
    return RawLabels(name, np.asarray(docs, dtype=object), pairs[["doc_id", "code", "line"]],
                     rejected.reset_index(drop=True)[REJECTED_COLUMNS])


def _parse_json(text: str, name: str):
    try:
        obj = json.loads(text)
    except json.JSONDecodeError as e:
        raise InputError(f"{name}, line {e.lineno}: not valid JSON ({e.msg})") from None
    if isinstance(obj, dict):
        if all(isinstance(v, list) for v in obj.values()):
            return [({"doc_id": k, "codes": v}, 1) for k, v in obj.items()]
        obj = [obj]
    if not isinstance(obj, list):
        raise InputError(f"{name}: expected a list of {{\"doc_id\": …, \"codes\": […]}} objects")
    return [(rec, i + 1) for i, rec in enumerate(obj)]


def _parse_jsonl(text: str, name: str):
    records = []
    for lineno, line in enumerate(text.splitlines(), start=1):
        if not line.strip():
            continue
        try:
            records.append((json.loads(line), lineno))
        except json.JSONDecodeError as e:
            raise InputError(f"{name}, line {lineno}: not valid JSON ({e.msg}); each line must be one object") from None
    return records


def _from_records(records, name, doc_col, code_col, joiner) -> RawLabels:
    """JSON records → pairs. ``line`` is the JSONL line, or the record number for JSON."""
    if not records:
        raise InputError(f"{name}: the file holds no records")
    keys = sorted({k for rec, _ in records if isinstance(rec, dict) for k in rec})
    doc = _pick(keys, doc_col, DOC_COLUMNS, "document id", name)
    code = _pick([k for k in keys if k != doc], code_col, CODE_COLUMNS, "code", name)
    docs, rows, rejected = [], [], []
    for rec, lineno in records:
        if not isinstance(rec, dict) or rec.get(doc) in (None, ""):
            rejected.append((name, lineno, str(rec)[:80], f"record has no {doc!r}"))
            continue
        d = str(rec[doc]).strip()
        docs.append(d)
        value = rec.get(code, [])
        if isinstance(value, str):
            value = value.split(joiner)
        if not isinstance(value, list):
            rejected.append((name, lineno, str(value)[:80], f"{code!r} must be a list of codes"))
            continue
        rows += [(d, str(c), lineno) for c in value if str(c).strip()]
    return _make(name, docs, rows, rejected)


def _read_parquet(data: bytes, name: str) -> pd.DataFrame:
    try:
        return pd.read_parquet(io.BytesIO(data))
    except Exception as e:  # pyarrow raises several types for corrupt files
        raise InputError(f"{name}: cannot read as Parquet ({type(e).__name__}: {e})") from None


def _make(name, docs, rows, rejected) -> RawLabels:
    pairs = pd.DataFrame(rows, columns=["doc_id", "code", "line"])
    pairs = pairs.astype({"doc_id": str, "code": str, "line": np.int64})
    return RawLabels(
        name,
        pd.unique(np.asarray(docs, dtype=object)),
        pairs,
        pd.DataFrame(rejected, columns=REJECTED_COLUMNS),
    )
