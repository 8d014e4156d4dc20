"""Files in: the I/O layer every reader of user files shares.

Loading bytes from a path, bytes or a binary stream (bounded: :data:`MAX_BYTES`), telling the format,
decoding text, sniffing the delimiter, parsing delimited text with each row's line number, picking a
column by its usual names, and reading Parquet or Feather. Each failure is an :class:`InputError` whose
message names the file (and the line and value where there is one) and says what to do.

Used by the label and score readers (:mod:`cophe_core.readers`), the hierarchy files
(:mod:`cophe_core.ontology.custom`), the document and slice tables; none of them interprets codes.
"""

from __future__ import annotations

import codecs
import csv
import io
import re
import warnings
from enum import StrEnum
from pathlib import Path
from typing import BinaryIO

import numpy as np
import pandas as pd

__all__ = [
    "InputError",
    "Reason",
    "Source",
    "MAX_BYTES",
    "excerpt",
    "load_bytes",
    "detect_format",
    "decode_text",
    "pick_column",
    "first_line",
    "sniff_separator",
    "parse_delimited",
    "line_numbers",
    "read_binary_table",
]

MAX_BYTES = 200 * 1024 * 1024
EXCERPT_CHARS = 60  # of a rejected value, in messages and the rejected table
Source = str | Path | bytes | BinaryIO


class InputError(ValueError):
    """A whole input cannot be read. The message says what is wrong and what to do."""


class Reason(StrEnum):
    """Why a row or a score cell was not scored, or was scored with a caveat: the ``kind`` column of the
    rejected and flagged tables, beside the ``reason`` in words. Programs branch on the kind, people read
    the reason."""

    EMPTY_ID = "empty_id"  # no document id
    EMPTY_CODE = "empty_code"
    TOO_LONG = "too_long"  # a code or id longer than any code system's (MAX_CODE_CHARS, MAX_ID_CHARS)
    NOT_A_SCORE = "not_a_score"  # not a number, not finite, or outside [0, 1]
    MALFORMED_ROW = "malformed_row"  # a row or record the reader cannot take apart
    NUMBER_NOT_CODE = "number_not_code"  # a JSON number, which has lost its zeros
    MALFORMED_CODE = "malformed_code"  # not a well-formed code of the code system
    NOT_IN_HIERARCHY = "not_in_hierarchy"  # a user hierarchy has no such node
    UNPLACED = "unplaced"  # well-formed, but no family in the code set to place it under
    AMBIGUOUS = "ambiguous"  # two readings (undotted ICD-9, CM or PCS): the user must say which
    OTHER_SYSTEM = "other_system"  # a code of a code system the chosen ontology does not hold
    # caveats of the flagged table: the row is scored
    NOT_BILLABLE = "not_billable"  # a category or other non-billable code
    PLACED_BY_STRUCTURE = "placed_by_structure"  # not in the code set; placed under its family
    ZERO_STRIPPED = "zero_stripped"  # read as a procedure, may be a diagnosis that lost its leading zero


def excerpt(value: object, limit: int = EXCERPT_CHARS) -> str:
    """A value as a message may show it: at most ``limit`` characters, then its length.

    >>> excerpt("401.9"), excerpt("x" * 70, 5)
    ('401.9', 'xxxxx… (70 characters)')
    """
    text = str(value)
    return text if len(text) <= limit else f"{text[:limit]}… ({len(text):,} characters)"


def load_bytes(source: Source, name: str | None) -> tuple[bytes, str]:
    """The bytes of a path, bytes or binary file (at most ``MAX_BYTES``), and the name messages give it.

    >>> load_bytes(b"doc_id,code\\n", "gold.csv")
    (b'doc_id,code\\n', 'gold.csv')
    """
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
    return data, name or str(getattr(source, "name", "<stream>"))


def detect_format(name: str, data: bytes) -> str:
    """The format of a file: by its extension (``csv tsv psv json jsonl parquet feather``), else by its
    first bytes (Parquet's and Arrow's magic, JSON's bracket); ``csv`` otherwise.

    >>> detect_format("gold.ndjson", b""), detect_format("upload", b"PAR1..."), detect_format("x", b"[{}]")
    ('jsonl', 'parquet', 'json')
    """
    suffix = Path(name).suffix.lower().lstrip(".")
    if suffix in ("csv", "tsv", "psv", "json", "jsonl", "parquet", "feather"):
        return suffix
    if suffix in ("ndjson",):
        return "jsonl"
    if suffix == "arrow":
        return "feather"
    if data[:4] == b"PAR1":
        return "parquet"
    if data[:6] == b"ARROW1":
        return "feather"
    head = data.lstrip()[:1]
    if head in (b"[", b"{"):
        first = data.lstrip().split(b"\n", 1)[0].strip()
        return (
            "jsonl" if first.startswith(b"{") and first.endswith(b"}") and data.count(b"\n") > 1 else "json"
        )
    return "csv"


def decode_text(data: bytes, name: str) -> str:
    """A file's text: UTF-8 (with or without a BOM) or UTF-16 with a BOM; anything else is an ``InputError``
    naming the file and the line of the first bad byte.

    >>> decode_text("doc_id,code\\n".encode("utf-16"), "gold.csv")
    'doc_id,code\\n'
    """
    if not data.strip():
        raise InputError(f"{name}: the file is empty; expected one row per document and code")
    if data[:2] in (codecs.BOM_UTF16_LE, codecs.BOM_UTF16_BE):  # Excel's "Unicode text"
        try:
            return data.decode("utf-16")
        except UnicodeDecodeError:
            raise InputError(
                f"{name}: starts as UTF-16 text but is not; save the file as UTF-8 CSV"
            ) from None
    if b"\x00" in data[:8192]:
        raise InputError(
            f"{name}: this is not a text file (it contains NUL bytes); upload CSV, TSV, JSON or Parquet"
        )
    try:
        return data.decode("utf-8-sig")
    except UnicodeDecodeError as e:
        line = data[: e.start].count(b"\n") + 1
        raise InputError(
            f"{name}, line {line}: not valid UTF-8 text (byte {data[e.start]:#04x}); "
            "save the file as UTF-8 CSV"
        ) from None


def pick_column(
    columns: list[str], wanted: str | None, candidates: tuple[str, ...], what: str, name: str
) -> str:
    """The column of ``columns`` named ``wanted`` (any case), else the first of ``candidates`` present; an
    ``InputError`` naming the file, the columns found and the option to pass otherwise.

    >>> pick_column(["HADM_ID", "ICD9_CODE"], None, ("doc_id", "hadm_id"), "document id", "gold.csv")
    'HADM_ID'
    """
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


def first_line(text: str) -> str:
    """The first line of ``text`` (looking at its first 64 KB only).

    >>> first_line("doc_id,code\\r\\n1,401.9\\n")
    'doc_id,code'
    """
    lines = text[:65536].splitlines()
    return lines[0] if lines else ""


def sniff_separator(text: str, name: str) -> str:
    """The most frequent of ``, tab | ;`` on the first line; an error naming the line if none occurs.

    >>> sniff_separator("doc_id\\tcode\\n1\\t401.9\\n", "gold.tsv")
    '\\t'
    """
    first = first_line(text)
    counts = {d: first.count(d) for d in (",", "\t", "|", ";")}
    sep = max(counts, key=counts.__getitem__)
    if counts[sep] == 0:
        raise InputError(
            f"{name}, line 1: found a single column {first[:60]!r}; expected a document id "
            "and a code column separated by a comma, tab, | or ;"
        )
    return sep


def parse_delimited(
    text: str,
    name: str,
    sep: str,
    *,
    usecols: list[str] | None = None,
    names: list[str] | None = None,
) -> pd.DataFrame:
    """All columns as strings (or only ``usecols``), indexed by 1-based line; a row longer than the header
    is an error. With ``names``, the text has no header: its first row is data, on line 1, and these name
    its columns.

    >>> parse_delimited("doc_id,code\\n\\n1,401.9\\n", "gold.csv", ",").to_dict("index")
    {3: {'doc_id': '1', 'code': '401.9'}}
    >>> parse_delimited("1,401.9\\n2,428.0\\n", "gold.csv", ",", names=["doc_id", "code"]).to_dict("index")
    {1: {'doc_id': '1', 'code': '401.9'}, 2: {'doc_id': '2', 'code': '428.0'}}
    """
    try:
        with warnings.catch_warnings():  # a row longer than the header must not pass silently
            warnings.simplefilter("error", pd.errors.ParserWarning)
            frame = pd.read_csv(
                io.StringIO(text),
                sep=sep,
                dtype=str,
                keep_default_na=False,
                quoting=csv.QUOTE_MINIMAL,
                skip_blank_lines=True,
                index_col=False,
                engine="c",
                usecols=usecols,
                header=None if names else "infer",
                names=names,
            )
    except (pd.errors.ParserError, pd.errors.ParserWarning) as e:
        detail = str(e).replace("Error tokenizing data. C error: ", "")
        raise InputError(
            f"{name}: cannot parse as {'tab' if sep == chr(9) else repr(sep)}-separated text ({detail}); "
            f"a row has more fields than {'the header' if names is None else f'its first row ({len(names)})'}: "
            "quote fields that contain the delimiter"
        ) from None
    frame.index = line_numbers(frame, text, sep, header=names is None)
    return frame


def line_numbers(frame: pd.DataFrame, text: str, sep: str, *, header: bool = True) -> pd.Index:
    """1-based line of each row of ``frame`` (``text`` parsed with ``sep``, its first record the column names
    unless ``header`` is false), counting the newlines inside quoted fields and the blank lines the parser
    skips.

    Without blank lines, one vectorised count of the newlines in every cell (none when the text has no
    quote); with blank lines, the csv module's reading of the same text, record by record.

    >>> line_numbers(pd.DataFrame({"a": ["1", "x\\ny", "3"]}), 'a\\n1\\n"x\\ny"\\n3\\n', ",").tolist()
    [2, 3, 5]
    >>> text = "a,b\\n1,2\\n\\n  \\n3,4\\n"
    >>> line_numbers(pd.DataFrame({"a": ["1", "3"], "b": ["2", "4"]}), text, ",").tolist()
    [2, 5]
    """
    blank = _BLANK_LINE_TAB if sep == "\t" else _BLANK_LINE
    if blank.search(text.rstrip()):
        found = _lines_by_csv(text, sep)
        if len(found) == len(frame) + header:
            return pd.Index(found[header:])
    first = 2 + sum(str(c).count("\n") for c in frame.columns) if header else 1
    extra = np.zeros(len(frame), dtype=np.int64)
    if '"' in text and len(frame):  # only a quoted field can hold a newline
        cells = pd.Series(frame.to_numpy(dtype=object).ravel(), dtype=object)
        counts = cells.str.count("\n").fillna(0).to_numpy(dtype=np.int64)
        extra = counts.reshape(frame.shape).sum(axis=1)
    starts = first + np.arange(len(frame)) + np.concatenate([[0], np.cumsum(extra)[:-1]])
    return pd.Index(starts.astype(np.int64))


# a line of nothing but whitespace, which pandas skips (a tab is a field separator in TSV, not whitespace)
_BLANK_LINE = re.compile(r"(?:^|\n)[ \t\r\f\v]*\n")
_BLANK_LINE_TAB = re.compile(r"(?:^|\n)[ \r\f\v]*\n")


def _lines_by_csv(text: str, sep: str) -> list[int]:
    """The first line of each record, as the csv module reads ``text``: whitespace-only lines are skipped, as
    pandas skips them."""
    reader = csv.reader(io.StringIO(text), delimiter=sep)
    starts: list[int] = []
    previous = 0
    for record in reader:
        if any(field.strip(" \r\f\v" if sep == "\t" else " \t\r\f\v") for field in record) or len(record) > 1:
            starts.append(previous + 1)
        previous = reader.line_num
    return starts


def read_binary_table(data: bytes, name: str, fmt: str) -> pd.DataFrame:
    """A Parquet (``fmt="parquet"``) or Feather file as a DataFrame; a corrupt file is an ``InputError``
    naming it, with the library's message on one line.

    >>> read_binary_table(b"PAR1 not really", "runs.parquet", "parquet")  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    cophe_core.files.InputError: runs.parquet: cannot read as Parquet (...)
    """
    reader, what = (pd.read_feather, "Feather") if fmt == "feather" else (pd.read_parquet, "Parquet")
    try:
        return reader(io.BytesIO(data))
    except Exception as e:  # pyarrow raises several types for corrupt files
        detail = excerpt(" ".join(str(e).split()), 160)  # one line: the message of a library can span several
        raise InputError(f"{name}: cannot read as {what} ({type(e).__name__}: {detail})") from None
