"""Readers: every input format people have → :class:`RawLabels` or :class:`RawScores`.

Formats (SPEC §5), chosen by file extension, else by content:

- long CSV/TSV, one row per (document, code): ``doc_id,code``, MIMIC's
  ``HADM_ID,ICD9_CODE``; delimiter sniffed among ``, \\t | ;``;
- wide CSV with ``;``-joined codes in one column (CAML's ``LABELS``);
- CAML ``preds_test.psv``: lines ``HADM_ID|code|code…`` (no header);
- JSON (a list of ``{"doc_id": …, "codes": […]}`` or a ``{doc_id: [codes]}``
  object) and JSONL (one object per line);
- Parquet and Feather, long or with a list column;
- scores (probabilities): a long table with a score column
  (``doc_id,code,score``), or a wide matrix with one numeric column per code
  (Edin et al.'s feather files with ``_id``, ``target`` and one column per code).

:func:`read_input` parses a file once and decides its **kind** from its columns
(:func:`input_kind`): it holds *scores* when it has a score column
(:data:`SCORE_COLUMNS`, or the ``score_col`` given), or when every column
besides the id columns (:data:`DOC_COLUMNS`, ``target``, ``labels``, ``text``,
``subject_id``) is numeric and named like a code (letters, digits, ``.`` and
``-``, with at least one digit: ``401.9``, ``V45.81``, ``0DTJ4ZZ``); otherwise
it holds *labels*. So ``doc_id,code,is_primary,is_billable`` is labels. Record
formats (JSON, JSONL, CAML ``.psv``) always hold labels.

Score values must be numbers in [0, 1]; other rows (and wide-matrix cells) are
rejected with their reason. A non-numeric cell of a wide matrix scores 0 and is reported too, and
empty cells score 0 and are counted in a warning (a matrix is one when most of its filled cells
are numbers). From a wide
matrix only each document's :data:`WIDE_KEEP` highest non-zero scores are kept,
so a document × code space the size of MIMIC-III-full stays small; every code
not kept scores 0.

Readers do not interpret codes; :mod:`cophe_core.scoring.labels` does. They return
every document seen (a document may have no codes) and every row they could not
read, with file, line, value and reason. Whole-file problems raise
:class:`InputError` with one clear message.
"""

from __future__ import annotations

import csv
import io
import json
import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pandas as pd
from numpy.typing import NDArray

from ..base.files import (
    InputError,
    Reason,
    Source,
    check_width,
    column_list,
    decode_text,
    detect_format,
    excerpt,
    first_line,
    line_numbers,
    load_bytes,
    number_too_long,
    parse_delimited,
    pick_column,
    read_binary_table,
    sniff_separator,
)
from ..base.options import Where, say
from ..ontology.detect import detect_system
from ..ontology.icd10 import normalise_cm

__all__ = [
    "InputError",
    "HeaderUnclear",
    "headerless_columns",
    "RawLabels",
    "RawScores",
    "read_input",
    "read_labels",
    "read_scores",
    "read_frame",
    "label_columns",
    "label_values",
    "LabelValues",
    "input_kind",
    "DOC_COLUMNS",
    "CODE_COLUMNS",
    "SCORE_COLUMNS",
    "MAX_CODE_CHARS",
    "MAX_ID_CHARS",
    "excerpt",
    "load_bytes",
    "decode_text",
    "line_numbers",
]

DOC_COLUMNS = ("doc_id", "document_id", "doc", "hadm_id", "_id", "id", "note_id", "admission_id")
CODE_COLUMNS = (
    "code",
    "codes",
    "icd9_code",
    "icd_code",
    "icd10_code",
    "icd9",
    "icd",
    "label",
    "labels",
    "target",
    "targets",
)
SCORE_COLUMNS = ("score", "scores", "prob", "proba", "probability", "confidence", "pred_score")
# columns a wide score matrix may carry besides one column per code (Edin et al.: ``_id``, ``target``)
# columns a wide score matrix may carry beside its code columns (pandas' to_csv writes "Unnamed: 0")
ID_COLUMNS = (
    *DOC_COLUMNS,
    "subject_id",
    "row_id",
    "seq_num",
    "unnamed: 0",
    "target",
    "targets",
    "labels",
    "text",
)
_KNOWN_COLUMNS = frozenset(
    (*ID_COLUMNS, *CODE_COLUMNS, *SCORE_COLUMNS, "icd10", "icd9_code", "seq_num", "row_id")
)
_CODE_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9.\-]*")
WIDE_KEEP = 100
# more wide-matrix cells than this share (and this many) outside [0, 1]: logits, refused as a whole
LOGIT_SHARE, LOGIT_CELLS = 0.10, 10
LOW_SCORE = 0.05  # the lowest threshold of a default curve
REJECTED_COLUMNS = ["file", "line", "value", "reason", "kind"]


# The longest code (ICD-10-PCS: 7 characters; a user hierarchy's names) and document id accepted: a longer
# value is rejected with its line, so no value's length multiplies the cost of the rows.
MAX_CODE_CHARS, MAX_ID_CHARS = 64, 256


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
    warnings : list of str
        What the reader left out that is not a row (scores beyond a wide matrix's top 100 per document).
    """

    name: str
    docs: np.ndarray
    pairs: pd.DataFrame
    rejected: pd.DataFrame = field(default_factory=lambda: pd.DataFrame(columns=REJECTED_COLUMNS))
    warnings: list[str] = field(default_factory=list)


@dataclass
class RawScores(RawLabels):
    """Scored (document, code) pairs read from one input: :class:`RawLabels` whose ``pairs`` also have
    a ``score`` column (float, in [0, 1]).

    A (document, code) pair may occur more than once; :func:`cophe_core.scoring.labels.encode` keeps its
    highest score and counts the collapsed rows.
    """


def read_input(
    source: Source,
    *,
    name: str | None = None,
    format: str | None = None,
    doc_col: str | None = None,
    code_col: str | None = None,
    score_col: str | None = None,
    joiner: str = ";",
    header: bool | None = None,
) -> RawLabels | RawScores:
    """Read one file once, and return its labels or its scores, as its columns say (:func:`input_kind`).

    Parameters
    ----------
    source : path, bytes or binary file
    name : str, optional
        Name used in messages (defaults to the file name).
    format : {"csv", "tsv", "psv", "json", "jsonl", "parquet", "feather"}, optional
        Overrides detection by extension and content.
    doc_col, code_col, score_col : str, optional
        Override the column detection (matched case-insensitively). A ``score_col`` makes the file
        a long scores file; a ``code_col`` without a score column makes it a labels file.
    joiner : str
        Separator of several codes inside one cell (CAML's ``LABELS``).
    header : bool, optional
        Whether the first row of a CSV/TSV file names its columns; None (default) decides from its
        content (:func:`headerless_columns`): the shared tasks' ``S0004-06142005000700014-1<TAB>q64.4``
        files have none, and their first row is data, on line 1.

    Returns
    -------
    RawLabels or RawScores

    Examples
    --------
    >>> type(read_input(b"doc_id,code,is_primary\\n1,401.9,1\\n")).__name__
    'RawLabels'
    >>> raw = read_input(b"doc_id,code,score\\n1,401.9,0.8\\n")
    >>> type(raw).__name__, raw.pairs.score.tolist()
    ('RawScores', [0.8])
    >>> read_input(b"S1\\tq64.4\\nS1\\tr69\\n", format="tsv").pairs.values.tolist()
    [['S1', 'q64.4', 1], ['S1', 'r69', 2]]
    """
    data, name = load_bytes(source, name)
    parsed = _parse(
        data,
        name,
        _format(format, name, data),
        doc_col,
        code_col,
        joiner,
        header=header,
        score_col=score_col,
    )
    if isinstance(parsed, RawLabels):
        return _bounded(parsed)
    return read_frame(
        parsed, name=name, doc_col=doc_col, code_col=code_col, score_col=score_col, joiner=joiner
    )


def read_frame(
    frame: pd.DataFrame,
    *,
    name: str,
    labels_only: bool = False,
    doc_col: str | None = None,
    code_col: str | None = None,
    score_col: str | None = None,
    joiner: str = ";",
) -> RawLabels | RawScores:
    """A table already parsed, read as :func:`read_input` reads a file (``labels_only``: as
    :func:`read_labels` does): the same column detection, normalisation and rejected rows. ``frame`` is
    indexed by 1-based line (row number for binary formats), which the rejected rows quote; streamed
    scoring (:mod:`cophe_core.scale.pipeline`) reads each chunk of a large input through it.

    Examples
    --------
    >>> frame = pd.DataFrame({"doc_id": ["1", "", "2"], "code": ["401.9", "428.0", " "]}, index=[2, 3, 4])
    >>> raw = read_frame(frame, name="gold.csv")
    >>> raw.pairs.code.tolist(), raw.rejected.line.tolist(), sorted(raw.docs)
    (['401.9'], [3, 4], ['1', '2'])
    """
    if labels_only:
        return _bounded(_from_frame(frame, name, doc_col, code_col, joiner))
    kind, detail = _kind(frame, name, doc_col, code_col, score_col)
    if kind == "long":
        return _bounded(_long_scores(frame, name, doc_col, code_col, detail))
    if kind == "wide":
        return _bounded(_wide_scores(frame, name, doc_col, *detail))
    return _bounded(_from_frame(frame, name, doc_col, code_col, joiner))


def label_columns(
    columns: Sequence[str],
    name: str,
    *,
    labels_only: bool = False,
    doc_col: str | None = None,
    code_col: str | None = None,
) -> tuple[str, str] | None:
    """The document and code columns :func:`read_frame` reads a table with these ``columns`` by, when the
    names alone decide that it holds labels, one code per row (no score column, not possibly a wide matrix
    of scores, no CAML ``labels`` column of joined codes); None when :func:`read_frame` must look at the
    values, or would refuse the names (it then says why). Streamed scoring reads such a table's two columns
    as Arrow arrays (:func:`label_values` on their distinct values).

    >>> label_columns(["HADM_ID", "ICD9_CODE", "is_primary"], "g.parquet")
    ('HADM_ID', 'ICD9_CODE')
    >>> label_columns(["doc_id", "code", "score"], "p.parquet") is None
    True
    """
    cols = [str(c) for c in columns]
    if not labels_only:
        lower = {c.lower().strip(): c for c in cols}
        if any(c in lower for c in SCORE_COLUMNS):
            return None
        if code_col is None or code_col.lower().strip() not in lower:
            ids = {c for c in cols if c.lower().strip() in ID_COLUMNS}
            if doc_col is not None and doc_col.lower().strip() in lower:
                ids.add(lower[doc_col.lower().strip()])
            rest = [c for c in cols if c not in ids]
            if ids and rest and all(_named_like_code(c) for c in rest):
                return None  # perhaps a wide matrix of scores: its values decide
    try:
        doc = pick_column(cols, doc_col, DOC_COLUMNS, "document id", name)
        code = pick_column([c for c in cols if c != doc], code_col, CODE_COLUMNS, "code", name)
    except InputError:
        return None
    if code.lower() in ("labels", "codes", "targets") or len(set(cols)) < len(cols):
        return None
    return doc, code


@dataclass(frozen=True)
class LabelValues:
    """The distinct values of a labels table's document and code columns, normalised as
    :func:`read_frame` normalises every row (:func:`label_values`).

    Attributes
    ----------
    doc : ndarray of str
        Each document id stripped of surrounding blanks (as read for a null: ``"None"``).
    no_doc, long_doc : ndarray of bool
        The id is missing (null, empty, ``nan`` or ``None``: "empty document id"), or longer than
        :data:`MAX_ID_CHARS`.
    code : ndarray of str
        Each code as written (a null: ``""``).
    empty_code, long_code : ndarray of bool
        The code is blank ("empty code"), or longer than :data:`MAX_CODE_CHARS`.
    joined : bool
        Some code holds the ``joiner``: the table is read row by row (:func:`read_frame` splits it).
    """

    doc: np.ndarray
    no_doc: np.ndarray
    long_doc: np.ndarray
    code: np.ndarray
    empty_code: np.ndarray
    long_code: np.ndarray
    joined: bool


def label_values(docs: pd.Series, codes: pd.Series, joiner: str = ";") -> LabelValues:
    """The normalisation of :func:`read_frame` applied to distinct values only (a large table's thousands of
    codes and ids, not its rows), by the same operations on columns of the same type: ids stripped, missing
    and over-long ids and blank and over-long codes marked.

    >>> v = label_values(pd.Series([" 7 ", None, "nan"]), pd.Series(["401.9", " ", None, "4" * 65]))
    >>> v.doc.tolist()[0], v.no_doc.tolist(), v.empty_code.tolist(), v.long_code.tolist()
    ('7', [False, True, True], [False, True, True, False], [False, False, False, True])
    """
    doc = _ids_as_text(docs).str.strip()
    code = _text(codes)
    no_doc = (doc.isna() | doc.isin(["", "nan", "None"])).to_numpy(dtype=bool)
    return LabelValues(
        doc=doc.to_numpy(dtype=object),
        no_doc=no_doc,
        long_doc=~no_doc & (doc.str.len() > MAX_ID_CHARS).to_numpy(dtype=bool),
        code=code.astype(str).to_numpy(dtype=object),
        empty_code=(code.isna() | (code.astype(str).str.strip() == "")).to_numpy(dtype=bool),
        long_code=(code.astype(str).str.len() > MAX_CODE_CHARS).to_numpy(dtype=bool),
        joined=bool(code.str.contains(joiner, regex=False).any()),
    )


def input_kind(source: Source, *, name: str | None = None, **options: Any) -> str:
    """``"labels"`` or ``"scores"``: what :func:`read_input` makes of a file (which it parses).

    Examples
    --------
    >>> input_kind(b"doc_id,code,is_primary,is_billable\\n1,401.9,1,0\\n")
    'labels'
    >>> input_kind(b"_id,401.9,428.0\\n1,0.9,0.1\\n")
    'scores'
    """
    return "scores" if isinstance(read_input(source, name=name, **options), RawScores) else "labels"


def read_scores(
    source: Source,
    *,
    name: str | None = None,
    format: str | None = None,
    doc_col: str | None = None,
    code_col: str | None = None,
    score_col: str | None = None,
    header: bool | None = None,
) -> RawScores:
    """Read a scores file: a long table with a score column, or a wide per-code score matrix.

    As :func:`read_input`, but a file that holds labels is an :class:`InputError`.

    Examples
    --------
    >>> s = read_scores(b"_id,401.9,428.0\\n1,0.9,0\\n2,0.2,0.7\\n")
    >>> sorted(zip(s.pairs.doc_id, s.pairs.code, s.pairs.score))
    [('1', '401.9', 0.9), ('2', '401.9', 0.2), ('2', '428.0', 0.7)]
    """
    raw = read_input(
        source,
        name=name,
        format=format,
        doc_col=doc_col,
        code_col=code_col,
        score_col=score_col,
        header=header,
    )
    if not isinstance(raw, RawScores):
        raise InputError(
            f"{raw.name}: holds code sets, not scores: found no score column ({', '.join(SCORE_COLUMNS)}) and "
            "no per-code score columns; expected doc_id,code,score rows or one numeric column per code"
        )
    return raw


def read_labels(
    source: Source,
    *,
    name: str | None = None,
    format: str | None = None,
    doc_col: str | None = None,
    code_col: str | None = None,
    joiner: str = ";",
    header: bool | None = None,
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
    header : bool, optional
        Whether the first row of a CSV/TSV file names its columns; None (default) decides from its
        content, as :func:`read_input` does.

    Every row is read as a (document, code) pair, whatever other columns the file has; use
    :func:`read_input` to let the columns decide between labels and scores.

    Examples
    --------
    >>> sorted(read_labels(b"doc_id,codes\\n1,401.9;428.0\\n").pairs.code)
    ['401.9', '428.0']
    """
    data, name = load_bytes(source, name)
    parsed = _parse(
        data, name, _format(format, name, data), doc_col, code_col, joiner, labels_only=True, header=header
    )
    if isinstance(parsed, RawLabels):
        return _bounded(parsed)
    return read_frame(parsed, name=name, labels_only=True, doc_col=doc_col, code_col=code_col, joiner=joiner)


class HeaderUnclear(InputError):
    """A delimited file whose first row may name its columns or be its first row of data, which its content
    does not tell (:func:`headerless_columns`). Its ``fix`` names both answers as options
    (:data:`cophe_core.base.options.OPTIONS`: the command line's flags, the dashboard's checkbox). ``file``,
    ``line``, ``row`` and ``value`` say where."""

    file: str = ""
    line: int = 1
    row: str = ""
    value: str = ""

    @classmethod
    def at(cls, file: str, line: int, row: str, value: str) -> HeaderUnclear:
        """The error for ``row`` on ``line`` of ``file``, whose field ``value`` is neither a column name nor
        a code.

        >>> e = HeaderUnclear.at("gold.tsv", 1, "S1\\tx1", "x1")
        >>> print(e)  # doctest: +NORMALIZE_WHITESPACE
        gold.tsv, line 1: cannot tell whether the first row ('S1\\tx1') names the columns or is data: 'x1' is
        neither a column name cophe knows nor a code. If the row is data, pass --no-header; if it names the
        columns, pass --header (and --doc-col and --code-col to say which they are).
        >>> e.words("dashboard").split(". ")[-1]
        'If the row is data, tick "First row is data" beside the uploads; if it names the columns, type the names of its document id and code columns under Reading options.'
        """
        e = cls(
            f"{file}, line {line}: cannot tell whether the first row ({excerpt(row)!r}) names the columns or "
            f"is data: {excerpt(value)!r} is neither a column name cophe knows nor a code.",
            fix="if the row is data, {no_header}; if it names the columns, {header}",
        )
        e.file, e.line, e.row, e.value = file, line, row, value
        return e

    def words(self, where: Where) -> str:
        """The problem, then both answers as a sentence, in the words of ``where``."""
        advice = say(self.fix, where)
        return f"{self.problem} {advice[0].upper()}{advice[1:]}."


HEADERLESS_FIELDS = (2, 3)  # a file without column names: document id, code (and score)


def headerless_columns(
    text: str,
    sep: str,
    name: str,
    *,
    header: bool | None = None,
    doc_col: str | None = None,
    code_col: str | None = None,
    score_col: str | None = None,
) -> list[str] | None:
    """The names of the columns of a delimited file whose first row is data, or None when its first row
    names its columns; the one place where that is decided.

    ``header`` True or False says it; None (the default) decides from the content of the first row that is
    not blank. It names the columns when one of its fields is a column name cophe knows (``doc_id``,
    ``HADM_ID``, ``code``, ``score``, … or ``doc_col``, ``code_col``, ``score_col``), or when it has other
    than two fields, or three whose last is not a number. Otherwise it is data when its second field is a
    code of a code system cophe knows, as :func:`cophe_core.ontology.detect.detect_system` recognises codes
    (the shared tasks' lowercase ``q64.4`` and ``w19.xxx`` are codes), and the columns are named
    ``doc_col`` or ``doc_id``, ``code_col`` or ``code`` (and ``score_col`` or ``score``, which makes the file
    a long scores file). Anything else cannot be decided: :class:`HeaderUnclear`.

    >>> headerless_columns("S0004-06142005000700014-1\\tq64.4\\n", "\\t", "gold.tsv")
    ['doc_id', 'code']
    >>> headerless_columns("case\\tdiagnosis\\n1\\tq64.4\\n", "\\t", "gold.tsv", header=False)
    ['doc_id', 'code']
    >>> headerless_columns("1,401.9,0.8\\n", ",", "run.csv"), headerless_columns("HADM_ID,dx\\n", ",", "g.csv")
    (['doc_id', 'code', 'score'], None)
    """
    if header:
        return None
    line, fields = _first_row(text, sep)
    names = [doc_col or "doc_id", code_col or "code", score_col or "score"][: len(fields)]
    if header is False:
        if len(fields) not in HEADERLESS_FIELDS:
            raise InputError(
                f"{name}, line {line}: read with its first row as data, but the row has {len(fields)} "
                f"fields; a file without column names has two (document id, code) or three (document id, "
                "code, score)"
            )
        return names
    wanted = {c.lower().strip() for c in (doc_col, code_col, score_col) if c}
    named = any(f.lower() in _KNOWN_COLUMNS or f.lower() in wanted for f in fields)
    if named or len(fields) not in HEADERLESS_FIELDS or (len(fields) == 3 and not _is_number(fields[2])):
        return None
    if _is_code(fields[1]):
        return names
    raise HeaderUnclear.at(name, line, sep.join(fields), fields[1])


def _first_row(text: str, sep: str) -> tuple[int, list[str]]:
    """The 1-based line of the first row that is not blank, and its fields (stripped, quotes removed)."""
    found = re.search(r"[^\s]", text)
    if found is None:
        return 1, []
    start = text.rfind("\n", 0, found.start()) + 1
    end = text.find("\n", start)
    line = text[start : end if end >= 0 else len(text)]
    try:
        row = next(csv.reader(io.StringIO(line), delimiter=sep), [])
    except csv.Error:  # a field over the csv module's 128 kB: no code is, so the row is no row of data
        row = line.split(sep)
    return text.count("\n", 0, start) + 1, [f.strip() for f in row]


def _is_code(value: str) -> bool:
    """A code of a code system cophe knows, as detection reads codes (by its form, else by the official code
    lists). ICD-10-CM's form, which holds the V and E codes ICD-9 shares, is looked at first: detection would
    load both code lists for them (seconds), and a first row only asks whether this is a code at all."""
    return normalise_cm(value) is not None or "unknown" not in detect_system([value.upper()]).counts


def _is_number(text: str) -> bool:
    try:
        float(text)
    except ValueError:
        return False
    return True


def _bounded(raw: RawLabels) -> RawLabels:
    """``raw`` without the rows whose code is longer than :data:`MAX_CODE_CHARS` or whose document id is
    longer than :data:`MAX_ID_CHARS` (rejected with their line: no code system has such codes, and one such
    value must not make every later step cost its length times the rows), and with every rejected value cut
    to an :func:`excerpt`.

    >>> raw = read_labels(b"doc_id,code\\n1,401.9\\n2," + b"9" * 100 + b"\\n")
    >>> raw.pairs.code.tolist(), raw.rejected.line.tolist(), raw.rejected.reason.iloc[0]
    (['401.9'], [3], 'longer than 64 characters: not a code')
    >>> raw.rejected.value.iloc[0]
    '999999999999999999999999999999999999999999999999999999999999… (100 characters)'
    """
    pairs = raw.pairs
    long_code = (pairs.code.str.len() > MAX_CODE_CHARS).to_numpy()
    long_doc = (pairs.doc_id.str.len() > MAX_ID_CHARS).to_numpy()
    docs = np.asarray(raw.docs, dtype=object)
    doc_ok = (pd.Series(docs, dtype=object).map(str).str.len() <= MAX_ID_CHARS).to_numpy(dtype=bool)
    rejected = (
        raw.rejected.assign(value=raw.rejected.value.map(excerpt)) if len(raw.rejected) else raw.rejected
    )
    if not (long_code.any() or long_doc.any() or not doc_ok.all()):
        raw.rejected = rejected
        return raw
    bad = long_code | long_doc
    reason = np.where(
        long_doc,
        f"a document id longer than {MAX_ID_CHARS} characters",
        f"longer than {MAX_CODE_CHARS} characters: not a code",
    )
    value = np.where(long_doc, pairs.doc_id.to_numpy(dtype=object), pairs.code.to_numpy(dtype=object))
    rows = pd.DataFrame(
        {
            "file": raw.name,
            "line": pairs.line.to_numpy()[bad],
            "value": [excerpt(v) for v in value[bad]],
            "reason": reason[bad],
            "kind": Reason.TOO_LONG,
        },
        columns=REJECTED_COLUMNS,
    )
    raw.pairs = pairs.loc[~bad].reset_index(drop=True)
    raw.docs = docs[doc_ok]
    raw.rejected = (
        pd.concat([r for r in (rejected, rows) if len(r)], ignore_index=True) if bad.any() else rejected
    )
    return raw


def _format(format: str | None, name: str, data: bytes) -> str:
    return (format or detect_format(name, data)).lower()


def _parse(
    data: bytes,
    name: str,
    fmt: str,
    doc_col: str | None,
    code_col: str | None,
    joiner: str,
    *,
    labels_only: bool = False,
    header: bool | None = None,
    score_col: str | None = None,
) -> pd.DataFrame | RawLabels:
    """Parse a file once: a table (delimited, Parquet, Feather) as a frame of strings or typed columns
    indexed by line (row number for binary formats), or the labels of a record format. With
    ``labels_only``, a wide delimited table is read by its document and code columns only. Whether a
    delimited file's first row names its columns is ``header``, or decided by :func:`headerless_columns`."""
    if fmt in ("parquet", "feather"):
        frame = read_binary_table(data, name, fmt)
        frame = frame.reset_index(drop=True)
        frame.index = frame.index + 1
        frame.columns = [str(c) for c in frame.columns]
        return frame
    if fmt not in ("csv", "tsv", "txt", "psv", "json", "jsonl"):
        raise InputError(
            f"{name}: unknown format {fmt!r}; use csv, tsv, psv, json, jsonl, parquet or feather"
        )
    text = decode_text(data, name)
    if fmt == "json":
        return _from_records(_parse_json(text, name), name, doc_col, code_col, joiner)
    if fmt == "jsonl":
        return _from_records(_parse_jsonl(text, name), name, doc_col, code_col, joiner)
    if fmt == "psv":
        return _read_psv(text, name)
    sep = "\t" if fmt == "tsv" else sniff_separator(text, name)
    check_width(text, name, sep)  # before anything splits the header into one string per column
    if sep == "|" and _looks_headerless_psv(first_line(text)):
        return _read_psv(text, name)
    names = headerless_columns(
        text, sep, name, header=header, doc_col=doc_col, code_col=code_col, score_col=score_col
    )
    wide = labels_only and names is None
    frame = parse_delimited(
        text,
        name,
        sep,
        usecols=_label_columns(text, name, sep, doc_col, code_col) if wide else None,
        names=names,
    )
    if frame.shape[1] < 2 and code_col is None:
        raise InputError(
            f"{name}: found a single column {excerpt(frame.columns[0])!r}; expected a document id and a code "
            "column separated by a comma, tab, | or ;"
        )
    return frame


def _kind(
    frame: pd.DataFrame, name: str, doc_col: str | None, code_col: str | None, score_col: str | None
) -> tuple[str, Any]:
    """The kind of a table, from its columns (see the module docs): ``("long", score column)``,
    ``("wide", (code columns, their values as floats))`` or ``("labels", None)``."""
    cols = list(frame.columns)
    lower = {c.lower().strip(): c for c in cols}
    if score_col is not None:
        if score_col.lower().strip() not in lower:
            raise InputError(f"{name}: no column {excerpt(score_col)!r}; the columns are {column_list(cols)}")
        return "long", lower[score_col.lower().strip()]
    score = next((lower[c] for c in SCORE_COLUMNS if c in lower), None)
    if score is not None:
        return "long", score
    if code_col is not None and code_col.lower().strip() in lower:  # the gold's code column, if this has it
        return "labels", None
    ids = {c for c in cols if c.lower().strip() in ID_COLUMNS}
    if doc_col is not None and doc_col.lower().strip() in lower:
        ids.add(lower[doc_col.lower().strip()])
    rest = [c for c in cols if c not in ids]
    if ids and rest and all(_named_like_code(c) for c in rest):
        block = _numeric_block(frame, rest)
        if block is not None:
            return "wide", (rest, *block)
    return "labels", None


def _named_like_code(column: str) -> bool:
    """``401.9``, ``V45.81``, ``0DTJ4ZZ``: letters, digits, dots and hyphens, with a digit; not a known
    column name (``ICD9_CODE``, ``icd9``)."""
    return (
        _CODE_NAME.fullmatch(column) is not None
        and any(ch.isdigit() for ch in column)
        and column.lower() not in _KNOWN_COLUMNS
    )


def _floats(text: pd.Series) -> NDArray[np.float64]:
    """Numbers from strings, NaN where a cell is not one. Python's float() is exact; pandas before 3.0
    rounds in to_numeric (0.9999999999999999 becomes 1.0, which a threshold of 1.0 then accepts), so
    to_numeric only finds the cells that are not numbers."""
    cells = text.to_numpy(dtype=object)
    try:
        exact: NDArray[np.float64] = cells.astype(float)
        return exact
    except (TypeError, ValueError):
        nums: NDArray[np.float64] = pd.to_numeric(text, errors="coerce").to_numpy(dtype=float, copy=True)
        ok = ~np.isnan(nums)
        nums[ok] = cells[ok].astype(float)
        return nums


def _numeric_block(frame: pd.DataFrame, cols: list[str]) -> tuple[np.ndarray, np.ndarray] | None:
    """The columns as a float matrix (NaN for an empty or non-numeric cell) with the mask of the non-numeric
    cells, when most filled cells are numbers: a score matrix with a few bad cells is still one, and its bad
    cells are reported. None when fewer than half the filled cells, or no cell, are numbers."""
    block = frame[cols]
    # the dtypes at once: a column fetched by name, one at a time, costs a pandas call per code
    if all(pd.api.types.is_numeric_dtype(t) and not pd.api.types.is_bool_dtype(t) for t in block.dtypes):
        values = block.to_numpy(dtype=float)
        return (values, np.zeros(values.shape, dtype=bool)) if not np.isnan(values).all() else None
    cells = block.to_numpy(dtype=object)
    try:  # every cell a number: numpy's C loop, about three times pandas' to_numeric
        values = cells.astype(float)
        if not np.isnan(values).any():
            return values, np.zeros(values.shape, dtype=bool)
    except (TypeError, ValueError):
        pass
    flat = pd.Series(cells.ravel(), dtype=object)
    text = flat.astype(str).str.strip()
    empty = (flat.isna() | (text == "")).to_numpy()
    nums = _floats(text.where(~empty))
    not_number = ~empty & np.isnan(nums)
    filled = int((~empty).sum())
    if filled == 0 or not_number.sum() * 2 > filled:
        return None
    return nums.reshape(block.shape), not_number.reshape(block.shape)


def _long_scores(
    frame: pd.DataFrame, name: str, doc_col: str | None, code_col: str | None, score: str
) -> RawScores:
    cols = [c for c in frame.columns if c != score]
    doc = pick_column(cols, doc_col, DOC_COLUMNS, "document id", name)
    code = pick_column([c for c in cols if c != doc], code_col, CODE_COLUMNS, "code", name)
    _codes_as_text(frame[code], code, name)
    doc_ids = _ids_as_text(frame[doc]).str.strip()
    codes = frame[code].astype(str)
    raw = frame[score]
    values = (
        raw.to_numpy(dtype=float)
        if pd.api.types.is_numeric_dtype(raw)
        else _floats(raw.astype(str).str.strip())
    )
    no_doc = doc_ids.isin(["", "nan", "None"]).to_numpy()
    no_code = (codes.str.strip() == "").to_numpy()
    with np.errstate(invalid="ignore"):
        outside = np.isfinite(values) & ((values < 0) | (values > 1))
    reason = np.select(
        [no_doc, no_code, np.isnan(values), ~np.isfinite(values), outside],
        [
            "empty document id",
            "empty code",
            "the score is not a number",
            "the score is not finite",
            "the score is outside [0, 1]; give probabilities (apply a sigmoid to logits)",
        ],
        default="",
    )
    bad = reason != ""
    kind = np.select([no_doc, no_code], [Reason.EMPTY_ID, Reason.EMPTY_CODE], default=Reason.NOT_A_SCORE)
    value = np.where(no_doc | no_code, codes.to_numpy(dtype=object), raw.astype(str).to_numpy(dtype=object))
    rejected = pd.DataFrame(
        {
            "file": name,
            "line": frame.index[bad],
            "value": value[bad],
            "reason": reason[bad],
            "kind": kind[bad],
        },
        columns=REJECTED_COLUMNS,
    )
    pairs = pd.DataFrame(
        {
            "doc_id": doc_ids[~bad].to_numpy(dtype=object),
            "code": codes[~bad].to_numpy(dtype=object),
            "line": frame.index[~bad].to_numpy(dtype=np.int64),
            "score": values[~bad],
        }
    )
    docs = pd.unique(doc_ids[~no_doc].to_numpy(dtype=object))
    return RawScores(name, docs, pairs, rejected)


def _wide_scores(
    frame: pd.DataFrame,
    name: str,
    doc_col: str | None,
    code_cols: list[str],
    values: np.ndarray,
    not_number: np.ndarray,
) -> RawScores:
    codes = set(code_cols)  # a set: a list's `in` made this quadratic (9,000 code columns took 1.4 s)
    doc = pick_column([c for c in frame.columns if c not in codes], doc_col, DOC_COLUMNS, "document id", name)
    ids = frame[doc]
    doc_ids = _ids_as_text(ids).str.strip().to_numpy(dtype=object)
    lines = frame.index.to_numpy(dtype=np.int64)
    empty = np.isnan(values) & ~not_number
    notes = []
    if empty.any():  # read as 0, and counted: a sparse export holds them by the million
        r, c = (int(i[0]) for i in np.nonzero(empty))
        notes.append(
            f"{name}: {int(empty.sum()):,} empty score cells read as 0 (e.g. line {lines[r]}, "
            f"code {code_cols[c]})"
        )
    values = np.nan_to_num(values, nan=0.0, posinf=np.inf, neginf=-np.inf)
    outside = ~np.isfinite(values) | (values < 0) | (values > 1)
    if (
        outside.mean() > LOGIT_SHARE and outside.sum() >= LOGIT_CELLS
    ):  # not a few bad cells: the whole matrix is on another scale
        raise InputError(
            f"{name}: {outside.mean():.0%} of the scores lie outside [0, 1]; these look like logits "
            "or unnormalised scores. Give probabilities (apply a sigmoid, 1 / (1 + e^-x))."
        )
    # every other cell is used or reported: a bad one scores 0 and is listed with its reason
    reasons = (
        ("the score is outside [0, 1] or not finite; give probabilities", outside),
        ("the score is not a number", not_number),
    )
    # the cells as written, only when some are reported: a copy costs seconds on thousands of columns
    cells = frame[code_cols].to_numpy(dtype=object) if outside.any() or not_number.any() else None
    rejected = []
    for reason, mask in reasons:
        bad_r, bad_c = np.nonzero(mask)
        rejected.append(
            pd.DataFrame(
                {
                    "file": name,
                    "line": lines[bad_r],
                    "value": [f"{code_cols[c]}={excerpt(cells[r, c])}" for r, c in zip(bad_r, bad_c)]
                    if cells is not None
                    else [],
                    "reason": reason,
                    "kind": Reason.NOT_A_SCORE,
                },
                columns=REJECTED_COLUMNS,
            )
        )
        values[bad_r, bad_c] = 0.0
    rejected = [r for r in rejected if len(r)] or rejected[:1]
    no_doc = ids.isna().to_numpy() | np.isin(doc_ids, ["", "nan", "None"])
    if no_doc.any():
        rejected.append(
            pd.DataFrame(
                {
                    "file": name,
                    "line": lines[no_doc],
                    "value": "",
                    "reason": "empty document id",
                    "kind": Reason.EMPTY_ID,
                },
                columns=REJECTED_COLUMNS,
            )
        )
        values, doc_ids, lines = values[~no_doc], doc_ids[~no_doc], lines[~no_doc]
    keep = min(WIDE_KEEP, values.shape[1])
    top = np.argpartition(-values, keep - 1, axis=1)[:, :keep]
    rows = np.repeat(np.arange(len(values)), keep)
    cols = top.ravel()
    picked = values[rows, cols]
    nz = picked > 0
    pairs = pd.DataFrame(
        {
            "doc_id": doc_ids[rows[nz]],
            "code": np.asarray(code_cols, dtype=object)[cols[nz]],
            "line": lines[rows[nz]],
            "score": picked[nz],
        }
    )
    rejected_df = pd.concat(rejected, ignore_index=True) if len(rejected) > 1 else rejected[0]
    # said, not silent: scores a low threshold would have used, beyond each document's top WIDE_KEEP
    beyond = int((values >= LOW_SCORE).sum() - (picked >= LOW_SCORE).sum())
    if beyond:
        notes.insert(
            0,
            f"{name}: {beyond:,} scores of at least {LOW_SCORE} lie beyond their document's {keep} "
            f"highest and were not kept; decisions below each document's {keep}th score, and AUC, count "
            "them as 0",
        )
    return RawScores(name, pd.unique(doc_ids), pairs, rejected_df, notes)


WIDE_HEADER = 64  # a labels file with more columns than this is read by its document and code columns


def _label_columns(
    text: str, name: str, sep: str, doc_col: str | None, code_col: str | None
) -> list[str] | None:
    """The document and code columns of a labels file with more than :data:`WIDE_HEADER` columns and no
    quotes, so that only they are read (pandas builds one array per column: 50,000 columns took seconds).
    None (read every column) otherwise, or when the columns are not found: the full reading says why. A row
    with more fields than the header is an error, as in :func:`parse_delimited`.

    >>> header = ",".join(["doc_id", "code"] + [f"c{i}" for i in range(70)])
    >>> _label_columns(header + "\\n1,401.9" + "," * 70 + "\\n", "w.csv", ",", None, None)
    ['doc_id', 'code']
    """
    found = re.search(r"\S", text)
    if '"' in text or found is None:
        return None
    start = text.rfind("\n", 0, found.start()) + 1  # the header: the first line that is not blank
    end = text.find("\n", start)
    columns = text[start : end if end >= 0 else len(text)].rstrip("\r").split(sep)
    if len(columns) <= WIDE_HEADER or len(set(columns)) < len(columns):
        return None  # an ordinary file: nothing below is done for it
    try:
        doc = pick_column(columns, doc_col, DOC_COLUMNS, "document id", name)
        code = pick_column([c for c in columns if c != doc], code_col, CODE_COLUMNS, "code", name)
    except InputError:
        return None
    header_line = text.count("\n", 0, start) + 1
    for number, line in enumerate(text[end + 1 :].splitlines() if end >= 0 else [], start=header_line + 1):
        if line.count(sep) >= len(columns):
            raise InputError(
                f"{name}: cannot parse as {'tab' if sep == chr(9) else repr(sep)}-separated text "
                f"(line {number} has more fields than the header's {len(columns):,}); quote fields "
                "that contain the delimiter"
            )
    return [doc, code]


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
            rejected.append(
                (name, lineno, excerpt(line), "no document id before the first |", Reason.MALFORMED_ROW)
            )
            continue
        docs.append(doc)
        rows += [(doc, code, lineno) for code in fields[1:] if code]
    return _make(name, docs, rows, rejected)


def _text(values: pd.Series) -> pd.Series:
    """Cells as strings, a null one (Parquet's None, NaN) as the empty string, whatever the pandas version
    (before 3.0, ``astype(str)`` writes ``"None"``)."""
    return values.astype(str).mask(values.isna(), "")


def _codes_as_text(values: pd.Series, column: str, name: str) -> None:
    """Refuse a code column stored as numbers (a typed file's float or integer column, or lists of numbers):
    a number has lost a code's zeros (``250.00`` reads back as ``250.0``, ``038.9`` stored as an integer
    as ``389``), and read as text it would be scored as another code.

    >>> _codes_as_text(pd.Series([250.0], index=[1]), "code", "g.parquet")  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    cophe_core.base.files.InputError: g.parquet, row 1: the code column 'code' holds numbers, not text (250.0); ...
    """
    numeric = pd.api.types.is_numeric_dtype(values) and not pd.api.types.is_bool_dtype(values)
    if values.dtype == object and not numeric:
        lists = values.map(lambda v: isinstance(v, (list, tuple, np.ndarray)))
        if not lists.any():
            return
        inner = values[lists].explode()
        number = inner.map(lambda v: isinstance(v, (int, float, np.number)) and not isinstance(v, bool))
        values = inner[number.to_numpy(dtype=bool)]
        numeric = len(values) > 0
    if not numeric or not values.notna().any():
        return
    shown = values[values.notna().to_numpy()]
    raise InputError(
        f"{name}, row {shown.index[0]}: the code column {excerpt(column)!r} holds numbers, not text "
        f"({excerpt(shown.iloc[0])}); a "
        "number loses a code's zeros (250.00 is read back as 250.0, 038.9 stored as a number as 389), "
        "so it would be scored as another code",
        fix="store the codes as text (a string column) and write the file again",
    )


def _ids_as_text(ids: pd.Series) -> pd.Series:
    """Document ids as text, a missing id as a missing value. A typed file's (Parquet, Feather, JSON) integer
    ids with one missing come as floats, pandas having no integer NaN: they are written as the integers they
    are, ``1`` and not ``1.0``, or they would match no id of the other file.

    >>> ids = _ids_as_text(pd.Series([1.0, None, 20.0]))
    >>> ids.dropna().tolist(), ids.isna().tolist()
    (['1', '20'], [False, True, False])
    >>> _ids_as_text(pd.Series([1.5, 2.0])).tolist()
    ['1.5', '2.0']
    """
    if pd.api.types.is_float_dtype(ids.dtype):
        v = ids.to_numpy(dtype=float)
        known = v[~np.isnan(v)]
        # below 2**53 a float holds its integer exactly; larger ids have lost digits and are left as they read
        if len(known) and (known == np.floor(known)).all() and (np.abs(known) < 2**53).all():
            return ids.astype("Int64").astype(str).where(ids.notna(), None)
    return ids.astype(str)


def _split_codes(frame: pd.DataFrame, doc: str, code: str, joiner: str) -> tuple[pd.DataFrame, bool]:
    """Explode ``;``-joined cells into one row per code; say whether the file is in the joined format, one
    row per document (an empty cell is then a document without codes, not an empty code).

    The format is decided on the whole file: a column named like CAML's (``labels``, ``codes``,
    ``targets``), or joined cells with every document on one row. One ``;`` in a file of one code per row
    only splits its own cell, and the file's empty codes are still reported.
    """
    col = _text(frame[code])
    joined_cells = bool(col.str.contains(joiner, regex=False).any())
    named = code.lower() in ("labels", "codes", "targets")
    if not joined_cells and not named:
        return pd.DataFrame({"doc_id": _ids_as_text(frame[doc]), "code": col, "line": frame.index}), False
    parts = col.str.split(joiner, regex=False)
    out = pd.DataFrame({"doc_id": _ids_as_text(frame[doc]), "code": parts, "line": frame.index}).explode(
        "code"
    )
    out["code"] = out["code"].fillna("")
    return out, named or not frame[doc].duplicated().any()


def _from_frame(
    frame: pd.DataFrame, name: str, doc_col: str | None, code_col: str | None, joiner: str
) -> RawLabels:
    """Labels from a parsed table (indexed by line)."""
    cols = list(frame.columns)
    doc = pick_column(cols, doc_col, DOC_COLUMNS, "document id", name)
    code = pick_column([c for c in cols if c != doc], code_col, CODE_COLUMNS, "code", name)
    _codes_as_text(frame[code], code, name)
    # only an object column can hold lists (Parquet's list columns); a string column is never looked through
    if (
        frame[code].dtype == object
        and frame[code].map(lambda v: isinstance(v, (list, tuple, np.ndarray))).any()
    ):
        exploded = frame[[doc, code]].explode(code)
        pairs = pd.DataFrame(
            {"doc_id": _ids_as_text(exploded[doc]), "code": exploded[code], "line": exploded.index}
        )
        wide = True
    else:
        pairs, wide = _split_codes(frame, doc, code, joiner)
    pairs["doc_id"] = pairs["doc_id"].str.strip()
    no_doc = (pairs["doc_id"].isna() | pairs["doc_id"].isin(["", "nan", "None"])).to_numpy()
    missing = pairs.loc[no_doc]  # a null id (Parquet's None) is no document, never one named "nan"
    rejected = pd.DataFrame(
        {
            "file": name,
            "line": missing["line"],
            "value": missing["code"].fillna("").astype(str),
            "reason": "empty document id",
            "kind": Reason.EMPTY_ID,
        }
    )
    pairs = pairs.loc[~no_doc]
    docs = pairs["doc_id"].unique()
    is_empty = pairs["code"].isna() | (pairs["code"].astype(str).str.strip() == "")
    if not wide:
        empty = pairs.loc[is_empty]
        rejected = pd.concat(
            [
                rejected,
                pd.DataFrame(
                    {
                        "file": name,
                        "line": empty["line"],
                        "value": "",
                        "reason": "empty code",
                        "kind": Reason.EMPTY_CODE,
                    }
                ),
            ]
        )
    pairs = pairs.loc[~is_empty]
    pairs = pairs.assign(code=pairs["code"].astype(str)).reset_index(drop=True)
    return RawLabels(
        name,
        np.asarray(docs, dtype=object),
        pairs[["doc_id", "code", "line"]],
        rejected.reset_index(drop=True)[REJECTED_COLUMNS],
    )


def _parse_json(text: str, name: str) -> list[tuple[Any, int]]:
    try:
        obj = json.loads(text)
    except json.JSONDecodeError as e:
        raise InputError(f"{name}, line {e.lineno}: not valid JSON ({e.msg})") from None
    except ValueError:  # a number longer than Python reads: 4,300 digits
        raise number_too_long(text, name) from None
    except RecursionError:
        raise InputError(
            f'{name}: JSON nested too deeply to read; give a list of {{"doc_id": …, "codes": […]}} objects'
        ) from None
    if isinstance(obj, dict):
        if all(isinstance(v, list) for v in obj.values()):
            return [({"doc_id": k, "codes": v}, 1) for k, v in obj.items()]
        obj = [obj]
    if not isinstance(obj, list):
        raise InputError(f'{name}: expected a list of {{"doc_id": …, "codes": […]}} objects')
    return [(rec, i + 1) for i, rec in enumerate(obj)]


def _parse_jsonl(text: str, name: str) -> list[tuple[Any, int]]:
    records: list[tuple[Any, int]] = []
    for lineno, line in enumerate(text.splitlines(), start=1):
        if not line.strip():
            continue
        try:
            records.append((json.loads(line), lineno))
        except json.JSONDecodeError as e:
            raise InputError(
                f"{name}, line {lineno}: not valid JSON ({e.msg}); each line must be one object"
            ) from None
        except ValueError:  # a number longer than Python reads: 4,300 digits
            raise number_too_long(line, name, lineno) from None
        except RecursionError:
            raise InputError(
                f"{name}, line {lineno}: JSON nested too deeply to read; each line must be one "
                '{"doc_id": …, "codes": […]} object'
            ) from None
    return records


def _from_records(
    records: list[tuple[Any, int]], name: str, doc_col: str | None, code_col: str | None, joiner: str
) -> RawLabels:
    """JSON records → pairs. ``line`` is the JSONL line, or the record number for JSON."""
    if not records:
        raise InputError(f"{name}: the file holds no records")
    keys = sorted({k for rec, _ in records if isinstance(rec, dict) for k in rec})
    doc = pick_column(keys, doc_col, DOC_COLUMNS, "document id", name)
    code = pick_column([k for k in keys if k != doc], code_col, CODE_COLUMNS, "code", name)
    docs, rows, rejected = [], [], []
    for rec, lineno in records:
        if not isinstance(rec, dict) or rec.get(doc) in (None, ""):
            rejected.append((name, lineno, excerpt(rec), f"record has no {doc!r}", Reason.MALFORMED_ROW))
            continue
        d = str(rec[doc]).strip()
        docs.append(d)
        value = rec.get(code, [])
        if isinstance(value, str):
            value = value.split(joiner)
        if not isinstance(value, list):
            rejected.append(
                (name, lineno, excerpt(value), f"{code!r} must be a list of codes", Reason.MALFORMED_ROW)
            )
            continue
        for c in value:
            if isinstance(c, int | float) and not isinstance(c, bool):  # 250.00 arrives as 250.0
                rejected.append(
                    (
                        name,
                        lineno,
                        excerpt(c),
                        f"a number, not a code: write codes as strings "
                        f'("{excerpt(c)}"), since a number loses its zeros (250.00 is read as 250.0)',
                        Reason.NUMBER_NOT_CODE,
                    )
                )
            elif c is not None and str(c).strip():
                rows.append((d, str(c), lineno))
            else:
                rejected.append((name, lineno, "", "empty code", Reason.EMPTY_CODE))
    return _make(name, docs, rows, rejected)


def _make(
    name: str,
    docs: Sequence[str],
    rows: Sequence[tuple[str, str, int]],
    rejected: Sequence[tuple[str, int, str, str, Reason]],
) -> RawLabels:
    pairs = pd.DataFrame(rows, columns=["doc_id", "code", "line"])
    pairs = pairs.astype({"doc_id": str, "code": str, "line": np.int64})
    return RawLabels(
        name,
        pd.unique(np.asarray(docs, dtype=object)),
        pairs,
        pd.DataFrame(rejected, columns=REJECTED_COLUMNS),
    )
