"""Files in: the I/O layer every reader of user files shares.

Loading bytes from a path, bytes or a binary stream (bounded: :data:`MAX_BYTES`), telling the format,
decoding text, sniffing the delimiter, parsing delimited text with each row's line number, picking a
column by its usual names, and reading Parquet or Feather. Each failure is an :class:`InputError` whose
message names the file (and the line and value where there is one) and says what to do.

Used by the label and score readers (:mod:`cophe_core.inputs.readers`), the hierarchy files
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
import pyarrow as pa

from cophe_core.base.options import Where, say

__all__ = [
    "InputError",
    "Reason",
    "Source",
    "MAX_BYTES",
    "MAX_EDGES",
    "MB",
    "MAX_COLUMNS",
    "excerpt",
    "load_bytes",
    "detect_format",
    "decode_text",
    "pick_column",
    "first_line",
    "sniff_separator",
    "check_width",
    "parse_delimited",
    "unparsable",
    "number_too_long",
    "column_list",
    "line_numbers",
    "read_binary_table",
    "binary_as_text",
]

# One megabyte everywhere in cophe: 10**6 bytes, the unit the dashboard's uploaders show and check in the browser
# (Streamlit's browser code counts 1,000-based units on most systems), so a limit means the same bytes in the
# browser, on the server, in a saved analysis and on the command line.
MB = 10**6
MAX_BYTES = 200 * MB
#: At most this many bin edges (21 bins) for slices by code frequency (:mod:`cophe_core.breakdown.slices`): each
#: bin is a slice scored with intervals, and 2,000 edges on the sample took 20 s and 4.6 GB. Twenty is finer than
#: any banding of code frequency in the papers (2 or 3). Kept here, with the other bounds on what a user gives,
#: so that checking a saved analysis's manifest needs none of the slicing code (30 ms of imports).
MAX_EDGES = 20
# The widest delimited table read: pandas builds a few objects per column (about 0.1 ms each), so a 10 MB line
# of commas (10 million columns) ran for minutes and took gigabytes. A score matrix of one column per code has
# a few thousand (MIMIC-III-full: 8,921 codes), at most all of ICD-10-CM's ~75,000.
MAX_COLUMNS = 100_000
EXCERPT_CHARS = 60  # of a rejected value, in messages and the rejected table
Source = str | Path | bytes | BinaryIO


class InputError(ValueError):
    """A whole input cannot be read. The message says what is wrong and what to do.

    ``problem`` says what is wrong (naming the file, and the line and value where there is one); ``fix``,
    when given, says what to do, naming options as ``{field}`` of :data:`cophe_core.base.options.OPTIONS`:
    ``str()`` gives the command line's words (the flag), :meth:`words` those of another place.

    >>> e = InputError("g.csv: no document id column", fix="rename it doc_id or name it with {doc_col}")
    >>> str(e)
    'g.csv: no document id column; rename it doc_id or name it with --doc-col'
    >>> e.words("dashboard")
    'g.csv: no document id column; rename it doc_id or name it with Reading options › Document id column (sidebar)'
    """

    def __init__(self, problem: str, *, fix: str = "") -> None:
        self.problem = problem
        self.fix = fix
        super().__init__(self.words("cli"))

    def words(self, where: Where) -> str:
        """The message as ``where`` (``"cli"`` or ``"dashboard"``) says it."""
        return f"{self.problem}; {say(self.fix, where)}" if self.fix else self.problem


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
    if len(text) <= limit or (len(text) <= limit + 30 and _CUT.fullmatch(text)):  # cut already
        return text
    return f"{text[:limit]}… ({len(text):,} characters)"


_CUT = re.compile(r"(?s).*… \([\d,]+ characters\)")


def counted(n: int, noun: str) -> str:
    """``n`` and ``noun``, in the plural (an ``s``) unless ``n`` is 1, with thousands separators.

    >>> counted(1, "row"), counted(2_000, "document")
    ('1 row', '2,000 documents')
    """
    return f"{n:,} {noun}" + ("" if n == 1 else "s")


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
            raise InputError(f"{path}: larger than {MAX_BYTES // MB} MB; split the file")
        return path.read_bytes(), name or path.name
    if isinstance(source, bytes):
        return source, name or "<bytes>"
    name = name or str(getattr(source, "name", "<stream>"))
    data = source.read(MAX_BYTES + 1)
    if len(data) > MAX_BYTES:
        raise InputError(f"{name}: larger than {MAX_BYTES // MB} MB; split the file")
    return data, name


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
    bare = data.removeprefix(codecs.BOM_UTF8)  # a byte-order mark alone is an empty file too
    if not bare.strip() or bare in (codecs.BOM_UTF16_LE, codecs.BOM_UTF16_BE):
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
    option = "{doc_col}" if what == "document id" else "{code_col}"
    if wanted is not None:
        if wanted.lower() in lower:
            return lower[wanted.lower()]
        raise InputError(
            f"{name}: no column {excerpt(wanted)!r}; the columns are {column_list(columns)}",
            fix=f"correct the {what} column's name in {option}, or leave it empty to have it found",
        )
    for cand in candidates:
        if cand in lower:
            return lower[cand]
    raise InputError(
        f"{name}: cannot find the {what} column; looked for {', '.join(candidates)} and found "
        f"{column_list(columns)}",
        fix=f"rename the column, or give its name in {option}",
    )


def column_list(columns: list[str], limit: int = 12) -> str:
    """Column names as a message lists them: the first ``limit``, each an :func:`excerpt`.

    >>> column_list(["doc_id", "x" * 80, "c", "d"], limit=3)
    'doc_id, xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx… (80 characters), c and 1 more'
    """
    shown = ", ".join(excerpt(c) for c in columns[:limit])
    return shown + (f" and {len(columns) - limit:,} more" if len(columns) > limit else "")


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
            f"{name}, line 1: found a single column {excerpt(first)!r}; expected a document id "
            "and a code column separated by a comma, tab, | or ;"
        )
    return sep


def check_width(text: str, name: str, sep: str, *, limit: int | None = None, first: int = 1) -> None:
    """Refuse a table whose first non-blank line (the header) has more than ``limit`` fields
    (:data:`MAX_COLUMNS`), before a parser builds objects for each of its columns: an ``InputError`` naming
    the file, the line, its field count and the limit. ``first`` is the line number of ``text``'s first line.

    One count of the delimiter on that line, without splitting it, so a 10 MB line costs one pass over it;
    quoted delimiters count too (an upper bound). A later row longer than the header is the parser's error.

    >>> check_width("\\ndoc_id,code\\n1,401.9\\n", "gold.csv", ",", limit=2)
    >>> check_width("\\n,,,\\n", "gold.csv", ",", limit=2)  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    cophe_core.base.files.InputError: gold.csv, line 2: 4 fields; cophe reads at most 2 columns ...
    """
    limit = MAX_COLUMNS if limit is None else limit
    found = (_FILLED_TAB if sep == "\t" else _FILLED).search(text)
    if found is None:
        return
    start = text.rfind("\n", 0, found.start()) + 1
    end = text.find("\n", start)
    fields = text.count(sep, start, end if end >= 0 else len(text)) + 1
    if fields <= limit:
        return
    line = first + text.count("\n", 0, start)
    delimiter = {"\t": "tab", ",": "comma", ";": "semicolon", "|": "|"}.get(sep, repr(sep))
    raise InputError(
        f"{name}, line {line}: {fields:,} fields; cophe reads at most {limit:,} columns (a score matrix of one "
        f"column per code has a few thousand: MIMIC-III-full has 8,921 codes). Check that the {delimiter} is "
        "the file's delimiter and that its first line is the header; give one row per document and code, or "
        f"at most {limit:,} code columns."
    )


# the first character of a line pandas does not skip as blank (a tab is a field separator in TSV)
_FILLED = re.compile(r"[^ \t\r\n\f\v]")
_FILLED_TAB = re.compile(r"[^ \r\n\f\v]")


def parse_delimited(
    text: str,
    name: str,
    sep: str,
    *,
    usecols: list[str] | None = None,
    names: list[str] | None = None,
    offset: int = 0,
) -> pd.DataFrame:
    """All columns as strings (or only ``usecols``), indexed by 1-based line; a row longer than the header
    is an error (:func:`unparsable`; ``offset`` is added to the line it names, for a block of a file), and so
    is a header wider than :data:`MAX_COLUMNS` (:func:`check_width`). With ``names``, the text has no header:
    its first row is data, on line 1, and these name its columns.

    >>> parse_delimited("doc_id,code\\n\\n1,401.9\\n", "gold.csv", ",").to_dict("index")
    {3: {'doc_id': '1', 'code': '401.9'}}
    >>> parse_delimited("1,401.9\\n2,428.0\\n", "gold.csv", ",", names=["doc_id", "code"]).to_dict("index")
    {1: {'doc_id': '1', 'code': '401.9'}, 2: {'doc_id': '2', 'code': '428.0'}}
    """
    check_width(text, name, sep, first=offset + 1)
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
    except (pd.errors.ParserError, pd.errors.ParserWarning):
        raise unparsable(text, name, sep, offset=offset, header=names is None) from None
    frame.index = line_numbers(frame, text, sep, header=names is None)
    return frame


def unparsable(text: str, name: str, sep: str, *, offset: int = 0, header: bool = True) -> InputError:
    """The error for delimited ``text`` the parser refused, in our words: the first row with more fields
    than the header (or, without one, than the first row), its line and the counts, or a quote left open;
    what to do.

    Only on the error path: the csv module reads the text again, record by record, to find the row.

    >>> print(unparsable("doc_id,code\\n1,401.9\\n2,250.00,x\\n", "g.csv", ","))
    g.csv, line 3: this row has 3 fields where the header has 2; put quotes around a value that contains a comma, or remove the extra comma
    """
    what = {",": "comma", "\t": "tab", "|": "|", ";": ";"}.get(sep, repr(sep))
    reader = csv.reader(io.StringIO(text), delimiter=sep)
    width, start = None, 1
    try:
        for record in reader:
            if width is None:
                width = len(record) if any(f.strip() for f in record) or len(record) > 1 else None
            elif len(record) > width:
                return InputError(
                    f"{name}, line {start + offset}: this row has {len(record):,} fields where the "
                    f"{'header' if header else 'first row'} has {width:,}",
                    fix=f"put quotes around a value that contains a {what}, or remove the extra {what}",
                )
            start = reader.line_num + 1
    except csv.Error:
        pass
    quote = text.rfind('"')  # the parser's other refusal: a quote opened and never closed
    line = text.count("\n", 0, quote) + 1 if quote >= 0 else 1
    return InputError(
        f"{name}: cannot read it as {what}-separated text; a quote near line {line + offset} may be "
        "left open",
        fix='close each quoted value with a second " and write a " inside a value as ""',
    )


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
    if _has_blank_line(text, sep):
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


# a line of nothing but whitespace, which pandas skips (a tab is a field separator in TSV, not whitespace):
# the first line, else one after a newline; two patterns, as one with (?:^|\n) tries every character of the
# text where one starting with \n looks for newlines only (ten times faster on a large file)
_BLANK_LINE = (re.compile(r"[ \t\r\f\v]*\n"), re.compile(r"\n[ \t\r\f\v]*\n"))
_BLANK_LINE_TAB = (re.compile(r"[ \r\f\v]*\n"), re.compile(r"\n[ \r\f\v]*\n"))


def _has_blank_line(text: str, sep: str) -> bool:
    """``text`` holds a line of nothing but whitespace before its last non-blank character.

    >>> _has_blank_line("a,b\\n\\n1,2\\n", ","), _has_blank_line("a,b\\n1,2\\n\\n", ","), _has_blank_line("a\\n\\t\\nb", "\\t")
    (True, False, False)
    """
    first, inner = _BLANK_LINE_TAB if sep == "\t" else _BLANK_LINE
    body = text.rstrip()
    return bool(first.match(body) or inner.search(body))


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
    cophe_core.base.files.InputError: runs.parquet: cannot read as Parquet (...)
    """
    reader, what = (pd.read_feather, "Feather") if fmt == "feather" else (pd.read_parquet, "Parquet")
    try:
        frame = reader(io.BytesIO(data))
    except Exception as e:  # pyarrow raises several types for corrupt files
        detail = excerpt(" ".join(str(e).split()), 160)  # one line: the message of a library can span several
        raise InputError(f"{name}: cannot read as {what} ({type(e).__name__}: {detail})") from None
    return binary_as_text(frame, name)


def binary_as_text(frame: pd.DataFrame, name: str, first_row: int = 1) -> pd.DataFrame:
    """``frame`` with its columns of bytes (Parquet or Feather ``binary``) decoded as UTF-8 text; bytes that are
    not UTF-8 are an ``InputError`` naming the file, the row (counted from ``first_row``) and the column.

    >>> binary_as_text(pd.DataFrame({"code": [b"401.9", None]}), "g.parquet").code.tolist()
    ['401.9', None]
    >>> binary_as_text(pd.DataFrame({"code": [b"401.9", b"\\xff"]}), "g.parquet")
    Traceback (most recent call last):
    ...
    cophe_core.base.files.InputError: g.parquet, row 2, column 'code': b'\\xff' is not UTF-8 text; store the column as text (a UTF-8 string column)
    """
    for column in frame.columns:
        values = frame[column]
        if values.dtype != object or pd.api.types.infer_dtype(values, skipna=True) not in ("bytes", "mixed"):
            continue
        is_bytes = values.map(type).eq(bytes)  # a "mixed" column may hold bytes among other values
        if not is_bytes.any():
            continue
        raw = values[is_bytes]
        try:  # Arrow checks the UTF-8 of the whole column at once
            text = pa.array(raw.to_numpy(), type=pa.binary()).cast(pa.string())
        except pa.ArrowInvalid:
            at = next(i for i, b in enumerate(raw.tolist()) if not _is_utf8(b))  # on the way out only
            raise InputError(
                f"{name}, row {first_row + int(np.flatnonzero(is_bytes.to_numpy())[at])}, column {str(column)!r}: "
                f"{excerpt(repr(raw.iloc[at]))} is not UTF-8 text",
                fix="store the column as text (a UTF-8 string column)",
            ) from None
        decoded = pd.Series(text.to_numpy(zero_copy_only=False), index=raw.index, dtype=object)
        frame = frame.assign(**{str(column): values.where(~is_bytes, decoded)})
    return frame


def _is_utf8(value: bytes) -> bool:
    try:
        value.decode("utf-8")
    except UnicodeDecodeError:
        return False
    return True


def number_too_long(text: str, name: str, line: int | None = None) -> InputError:
    """The error for JSON ``text`` holding a number of more digits than Python reads (4,300): the file, the
    line (``line``, else the first such number's) and the number, cut; what to do.

    >>> print(number_too_long('[{"doc_id": ' + "9" * 5000 + "}]", "g.json"))
    g.json, line 1: a number of 5,000 digits (999999999999999999999999999999999999999999999999999999999999… (5,000 characters)), more than a number may have; write document ids and codes as text, in quotes
    """
    found = re.search(r"\d{4301,}", text)
    if found is None:
        return InputError(f"{name}: holds a number of more than 4,300 digits", fix=_AS_TEXT)
    at = line if line is not None else text.count("\n", 0, found.start()) + 1
    digits = found.group()
    return InputError(
        f"{name}, line {at}: a number of {len(digits):,} digits ({excerpt(digits)}), more than a number "
        "may have",
        fix=_AS_TEXT,
    )


_AS_TEXT = "write document ids and codes as text, in quotes"
