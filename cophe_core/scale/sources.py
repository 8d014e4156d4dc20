"""The sources of streamed scoring: the files of a dataset (a Parquet file, a folder of Parquet files,
hive-partitioned or not, a glob, a CSV/TSV file), read in chunks of rows: Parquet by pyarrow's dataset scanner,
one record batch at a time; CSV/TSV in blocks of whole lines, each parsed by the readers' own parser.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.dataset as ds

from ..base.files import (
    InputError,
    Reason,
    binary_as_text,
    check_width,
    decode_text,
    excerpt,
    parse_delimited,
    sniff_separator,
)
from ..inputs.datasets import dataset_files, glob_root
from ..inputs.readers import (
    MAX_CODE_CHARS,
    MAX_ID_CHARS,
    REJECTED_COLUMNS,
    LabelValues,
    headerless_columns,
    label_columns,
    label_values,
)

__all__ = [
    "STREAMED_FORMATS",
    "ColumnNames",
    "LabelChunk",
    "SourceFile",
]  # the functions serve scale/pipeline.py

STREAMED_FORMATS = {".parquet": "parquet", ".pq": "parquet", ".csv": "csv", ".tsv": "tsv", ".txt": "csv"}


# ------------------------------------------------------------------ sources


@dataclass(frozen=True)
class SourceFile:
    path: Path
    name: str  # in messages and the rejected table
    fmt: str  # "parquet", "csv" or "tsv"
    partition: dict[str, str] = field(default_factory=dict)  # hive keys of its folder


def source_files(source: str | os.PathLike[str]) -> list[SourceFile]:
    text = os.fspath(source)
    root = glob_root(text)
    single = Path(text).is_file()
    out = []
    for p in dataset_files(text):
        fmt = STREAMED_FORMATS.get(p.suffix.lower())
        if fmt is None:
            with open(p, "rb") as f:
                fmt = "parquet" if f.read(4) == b"PAR1" else None
        if fmt is None:
            raise InputError(
                f"{p}: streamed scoring reads Parquet (.parquet) and CSV/TSV (.csv, .tsv) files; convert "
                "this one, or score it in memory"
            )
        rel = p.relative_to(root) if not single else Path(p.name)
        name = p.name if single else str(Path(root.name) / rel) if root.name else str(rel)
        keys = dict(part.split("=", 1) for part in rel.parts[:-1] if "=" in part)
        out.append(SourceFile(p, name, fmt, keys))
    return out


def source_name(source: str | os.PathLike[str]) -> str:
    text = os.fspath(source)
    return Path(text).name if Path(text).is_file() else text


def source_frames(f: SourceFile, chunk_rows: int, names: ColumnNames) -> Iterator[pd.DataFrame]:
    """The file's rows in chunks, each a frame indexed by 1-based line (row number for Parquet), as the
    readers parse a whole file (``names``: the options that name the columns of a CSV/TSV file)."""
    if f.fmt == "parquet":
        yield from _parquet_frames(f, chunk_rows)
    else:
        yield from _delimited_frames(f, chunk_rows, names)


@dataclass(frozen=True)
class ColumnNames:
    """The reading options that say whether a CSV/TSV file's first row names its columns, and which."""

    header: bool | None = None
    doc_col: str | None = None
    code_col: str | None = None


def _parquet_frames(f: SourceFile, chunk_rows: int) -> Iterator[pd.DataFrame]:
    try:
        fragments = list(ds.dataset(str(f.path), format="parquet").get_fragments())
        start = 1
        for fragment in fragments:
            for batch in fragment.to_batches(batch_size=chunk_rows):
                frame = batch.to_pandas()
                frame.columns = [str(c) for c in frame.columns]
                frame = binary_as_text(frame, f.name, first_row=start)
                for key, value in f.partition.items():  # a hive partition's key, a column of its rows
                    if key not in frame.columns:
                        frame[key] = value
                frame.index = pd.RangeIndex(start, start + len(frame))
                start += len(frame)
                yield frame
    except (pa.ArrowException, OSError) as e:
        detail = " ".join(str(e).split())[:160]
        raise InputError(f"{f.name}: cannot read as Parquet ({type(e).__name__}: {detail})") from None


@dataclass(frozen=True)
class LabelChunk:
    """A chunk of a labels file read on Arrow arrays (:func:`label_chunks`): its scored rows as numbers into
    its distinct values, and the rows the readers reject, as :func:`cophe_core.inputs.readers.read_frame`
    would read the same rows.

    ``docs`` are the distinct document ids (normalised, Arrow large strings: they are hashed and spilled as
    Arrow strings, never made Python objects), ``codes`` the distinct codes; per kept row,
    ``doc_at`` and ``code_at`` index them and ``lines`` holds its line; ``alone`` indexes the documents
    without a kept row (their rows have empty or over-long codes: evaluated documents all the same).
    """

    docs: pa.Array
    doc_at: np.ndarray
    codes: np.ndarray
    code_at: np.ndarray
    lines: np.ndarray
    alone: np.ndarray
    rejected: pd.DataFrame


def label_chunks(
    f: SourceFile, chunk_rows: int, *, labels_only: bool, doc_col: str | None, code_col: str | None
) -> Iterator[LabelChunk | pd.DataFrame] | None:
    """A Parquet file of labels in chunks read on Arrow arrays, each a :class:`LabelChunk`, or None when its
    schema does not say it is one (:func:`cophe_core.inputs.readers.label_columns`: read it by
    :func:`source_frames`). The document and code columns alone are read, dictionary-encoded, and only their
    distinct values are normalised (:func:`cophe_core.inputs.readers.label_values`). A chunk whose codes are
    joined in cells (``401.9;428.0``) comes as the frame :func:`cophe_core.inputs.readers.read_frame` reads
    (its two columns, named ``doc_id`` and ``code``, indexed by row number)."""
    if f.fmt != "parquet":
        return None
    try:
        schema = ds.dataset(str(f.path), format="parquet").schema
    except (pa.ArrowException, OSError):
        return None  # source_frames says why
    names = [str(n) for n in schema.names]
    if any(pa.types.is_binary(t) or pa.types.is_large_binary(t) for t in schema.types):
        return None  # the readers check every text column's UTF-8
    columns = names + [k for k in f.partition if k not in names]
    found = label_columns(columns, f.name, labels_only=labels_only, doc_col=doc_col, code_col=code_col)
    if found is None or not all(c in names for c in found) or len(set(names)) < len(names):
        return None
    doc_type, code_type = (_value_type(schema.field(c).type) for c in found)
    # integer ids only plain (pandas writes a dictionary column's integers as a categorical's, unlike Arrow's)
    doc_raw = schema.field(found[0]).type
    if not (_is_text(code_type) and (_is_text(doc_type) or pa.types.is_integer(doc_raw))):
        return None
    return _label_chunks(f, chunk_rows, found, [c for c in found if _is_text(schema.field(c).type)])


def frame_label_chunk(
    frame: pd.DataFrame, name: str, *, labels_only: bool, doc_col: str | None, code_col: str | None
) -> LabelChunk | None:
    """A pandas table of labels (a partition of a Dask DataFrame, its rows numbered from 1) read on Arrow
    arrays as :func:`label_chunks` reads a chunk of a Parquet file, or None when its column names or types
    do not say it holds labels one code a row (read it by :func:`cophe_core.inputs.readers.read_frame`).

    >>> chunk = frame_label_chunk(pd.DataFrame({"doc_id": ["1", "1", ""], "code": ["401.9", "428.0", "250.00"]}),
    ...                           "g", labels_only=True, doc_col=None, code_col=None)
    >>> chunk.docs.take(chunk.doc_at).to_pylist(), chunk.codes[chunk.code_at].tolist(), chunk.rejected.reason.tolist()
    (['1', '1'], ['401.9', '428.0'], ['empty document id'])
    """
    found = label_columns(
        [str(c) for c in frame.columns], name, labels_only=labels_only, doc_col=doc_col, code_col=code_col
    )
    if found is None:
        return None
    try:
        # through a Table: a column pandas holds as Arrow in several chunks (a Parquet file's row groups, as
        # Dask reads them) is one array of a batch only once its chunks are joined
        table = pa.Table.from_pandas(frame[list(found)], preserve_index=False, nthreads=1)
    except (pa.ArrowException, ValueError, TypeError):
        return None  # a column of mixed values: the readers' rules, row by row
    batch = pa.RecordBatch.from_arrays([c.combine_chunks() for c in table.columns], names=table.column_names)
    if any(pa.types.is_null(t) for t in batch.schema.types):  # a column of missing values only: text
        columns = [c.cast(pa.string()) if pa.types.is_null(c.type) else c for c in batch.columns]
        batch = pa.RecordBatch.from_arrays(columns, names=batch.schema.names)
    doc_raw, code_raw = batch.schema.types
    if not (_is_text(code_raw) and (_is_text(doc_raw) or pa.types.is_integer(doc_raw))):
        return None
    chunk = _label_chunk(batch, name, 1, found)
    return chunk if isinstance(chunk, LabelChunk) else None


def _value_type(t: pa.DataType) -> pa.DataType:
    return t.value_type if pa.types.is_dictionary(t) else t


def _is_text(t: pa.DataType) -> bool:
    return bool(pa.types.is_string(_value_type(t)) or pa.types.is_large_string(_value_type(t)))


def _label_chunks(
    f: SourceFile, chunk_rows: int, columns: tuple[str, str], text: list[str]
) -> Iterator[LabelChunk | pd.DataFrame]:
    options = ds.ParquetReadOptions(dictionary_columns=set(text))
    try:
        fragments = list(
            ds.dataset(str(f.path), format=ds.ParquetFileFormat(read_options=options)).get_fragments()
        )
        start = 1
        for fragment in fragments:
            for batch in fragment.to_batches(columns=list(columns), batch_size=chunk_rows):
                yield _label_chunk(batch, f.name, start, columns)
                start += batch.num_rows
    except (pa.ArrowException, OSError) as e:
        detail = " ".join(str(e).split())[:160]
        raise InputError(f"{f.name}: cannot read as Parquet ({type(e).__name__}: {detail})") from None


def _encoded(values: pa.Array) -> tuple[pa.Array, np.ndarray]:
    """Distinct values and each row's index into them; a null is a value of its own (the last)."""
    if not pa.types.is_dictionary(values.type):
        values = pc.dictionary_encode(values)
    distinct, at = values.dictionary, values.indices
    if at.null_count:
        at = pc.fill_null(at, len(distinct))
        distinct = pa.concat_arrays([distinct, pa.nulls(1, distinct.type)])
    return distinct, at.to_numpy().astype(np.int32, copy=False)  # Arrow's dictionary indices as they are


def _label_chunk(
    batch: pa.RecordBatch, name: str, start: int, columns: tuple[str, str]
) -> LabelChunk | pd.DataFrame:
    """One record batch of a labels file, as :func:`cophe_core.inputs.readers.read_frame` reads it (see
    ``_from_frame`` and ``_bounded`` there: the rows with an empty id, then those with an empty code, then
    the over-long ones are rejected), on the distinct values."""
    (doc_values, di), (code_values, ci) = (_encoded(batch.column(i)) for i in range(2))
    doc_plain = (
        _plain(doc_values, MAX_ID_CHARS, ["nan", "None"])
        if _is_text(doc_values.type)
        else np.zeros(len(doc_values), bool)  # integer ids: all by the readers' rule
    )
    code_plain = _plain(code_values, MAX_CODE_CHARS, [])
    line = np.arange(start, start + batch.num_rows, dtype=np.int64)
    if doc_plain.all() and code_plain.all():  # every distinct value is kept as it is (most chunks): every row
        # is scored, with no row-by-row masks
        codes = code_values.to_numpy(zero_copy_only=False).astype(object)
        return LabelChunk(doc_values.cast(pa.large_string()), di, codes, ci, line, di[:0], _NO_ROWS)
    values = _label_values(doc_values, code_values, doc_plain, code_plain)
    if values.joined:  # cells of several codes: split by the readers, row by row
        frame = pa.table(
            [pc.cast(c, c.type.value_type) if pa.types.is_dictionary(c.type) else c for c in batch.columns],
            names=["doc_id", "code"],
        ).to_pandas()
        frame.index = pd.RangeIndex(start, start + len(frame))
        return frame
    no_doc = values.no_doc[di]
    empty = ~no_doc & values.empty_code[ci]
    kept = ~no_doc & ~empty
    long_doc = kept & values.long_doc[di]
    bad = long_doc | (kept & values.long_code[ci])
    scored = kept & ~bad
    if values.stripped:
        doc_of, docs = pd.factorize(values.doc)  # ids equal once stripped are one document
    else:
        doc_of, docs = np.arange(len(values.doc)), values.doc
    nd = doc_of[di]
    listed = np.bincount(nd[~no_doc & ~values.long_doc[di]], minlength=len(docs)) > 0
    alone = np.flatnonzero(listed & ~(np.bincount(nd[scored], minlength=len(docs)) > 0))
    return LabelChunk(
        pa.array(np.asarray(docs, dtype=object), pa.large_string()),
        nd[scored],
        values.code,
        ci[scored],
        line[scored],
        alone,
        _chunk_rejected(name, line, values, (di, ci), no_doc, empty, long_doc, bad),
    )


@dataclass(frozen=True)
class _Values(LabelValues):
    """:class:`~cophe_core.inputs.readers.LabelValues` of a chunk, and whether stripping changed an id."""

    stripped: bool


def _label_values(docs: pa.Array, codes: pa.Array, doc_plain: np.ndarray, code_plain: np.ndarray) -> _Values:
    """:func:`cophe_core.inputs.readers.label_values` of the distinct ids and codes, the plain ones (``doc_plain``,
    ``code_plain``: found by :func:`_plain`) kept as they are; integer ids are all read by the readers' rule (as
    text they are written by pandas)."""
    doc = docs.to_numpy(zero_copy_only=False).astype(object) if doc_plain.all() else None
    code = codes.to_numpy(zero_copy_only=False).astype(object)
    odd_doc, odd_code = np.flatnonzero(~doc_plain), np.flatnonzero(~code_plain)
    ruled = label_values(
        (docs.take(pa.array(odd_doc)) if doc is not None else docs).to_pandas(),
        codes.take(pa.array(odd_code)).to_pandas(),
    )
    no_doc, long_doc = np.zeros(len(docs), bool), np.zeros(len(docs), bool)
    if doc is None:  # every id by the rule (integers, or a chunk of odd ids)
        doc, no_doc, long_doc = ruled.doc, ruled.no_doc, ruled.long_doc
        stripped = True
    else:
        stripped = False
    empty_code, long_code = np.zeros(len(codes), bool), np.zeros(len(codes), bool)
    code[odd_code], empty_code[odd_code], long_code[odd_code] = ruled.code, ruled.empty_code, ruled.long_code
    return _Values(doc, no_doc, long_doc, code, empty_code, long_code, ruled.joined, stripped)


def _plain(values: pa.Array, max_bytes: int, missing: list[str]) -> np.ndarray:
    """Which values (Arrow strings) are plain: they begin and end with an ASCII letter or digit, hold no ``;``,
    are at most ``max_bytes`` long and are not one of ``missing``. The readers' normalisation leaves such a
    value as it is (nothing to strip, not blank, "nan" or "None", not too long, no joiner), so only the other
    distinct values go through it (:func:`cophe_core.inputs.readers.label_values`). Read from the strings'
    Arrow buffers (their first and last bytes, their lengths, where a ``;`` lies): a regular expression costs
    as much as reading the column.

    >>> _plain(pa.array(["401.9", " 401.9", "a;b", "", None, "nan", "V" * 65]), 64, ["nan"]).tolist()
    [True, False, False, False, False, False, False]
    """
    if not (pa.types.is_string(values.type) or pa.types.is_large_string(values.type)):
        raise TypeError(f"plain values are found among strings, not {values.type}")
    width = np.int64 if pa.types.is_large_string(values.type) else np.int32
    offsets = np.frombuffer(values.buffers()[1], width)[values.offset : values.offset + len(values) + 1]
    offsets = offsets.astype(np.int64)
    data = values.buffers()[2]
    raw = np.frombuffer(data, np.uint8) if data is not None and data.size else np.zeros(1, np.uint8)
    lengths = np.diff(offsets)
    filled = lengths > 0
    ends = np.where(filled, [offsets[:-1], offsets[1:] - 1], 0)  # a value's first and last byte
    plain: np.ndarray = filled & (lengths <= max_bytes) & _ALNUM[raw[ends[0]]] & _ALNUM[raw[ends[1]]]
    semicolons = np.flatnonzero(raw[offsets[0] : offsets[-1]] == ord(";")) + offsets[0]
    if len(semicolons):
        plain[np.searchsorted(offsets, semicolons, side="right") - 1] = False
    if values.null_count:
        plain &= np.asarray(values.is_valid().to_numpy(zero_copy_only=False), dtype=bool)
    if missing:
        found = pc.is_in(values, pa.array(missing, values.type)).fill_null(False)
        plain &= ~np.asarray(found.to_numpy(zero_copy_only=False), dtype=bool)
    return plain


# which bytes are ASCII letters and digits
_ALNUM = np.zeros(256, dtype=bool)
_ALNUM[[ord(c) for c in "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"]] = True


def _chunk_rejected(
    name: str,
    line: np.ndarray,
    values: _Values,
    at: tuple[np.ndarray, np.ndarray],
    no_doc: np.ndarray,
    empty: np.ndarray,
    long_doc: np.ndarray,
    bad: np.ndarray,
) -> pd.DataFrame:
    """The rejected rows of a chunk, in the readers' order and words: empty ids, empty codes, then the
    over-long values (the id's reason first)."""
    if not (no_doc.any() or empty.any() or bad.any()):
        return _NO_ROWS
    di, ci = at
    parts = [
        _rows(
            name,
            line[no_doc],
            [excerpt(c) for c in values.code[ci[no_doc]]],
            "empty document id",
            Reason.EMPTY_ID,
        ),
        _rows(name, line[empty], [""] * int(empty.sum()), "empty code", Reason.EMPTY_CODE),
    ]
    if bad.any():
        is_doc = long_doc[bad]
        shown = np.where(is_doc, values.doc[di[bad]], values.code[ci[bad]])
        reason = np.where(
            is_doc,
            f"a document id longer than {MAX_ID_CHARS} characters",
            f"longer than {MAX_CODE_CHARS} characters: not a code",
        )
        parts.append(_rows(name, line[bad], [excerpt(v) for v in shown], reason, Reason.TOO_LONG))
    full = [p for p in parts if len(p)]
    return pd.concat(full, ignore_index=True) if full else pd.DataFrame(columns=REJECTED_COLUMNS)


_NO_ROWS = pd.DataFrame(columns=REJECTED_COLUMNS)


def _rows(
    name: str, line: np.ndarray, value: list[str], reason: str | np.ndarray, kind: Reason
) -> pd.DataFrame:
    return pd.DataFrame(
        {"file": name, "line": line, "value": value, "reason": reason, "kind": kind}, columns=REJECTED_COLUMNS
    )


def _delimited_frames(f: SourceFile, chunk_rows: int, names: ColumnNames) -> Iterator[pd.DataFrame]:
    """Blocks of whole lines (never inside a quoted field), each parsed by the readers' parser below the
    file's header, their line numbers shifted to the file's. A file without a header
    (:func:`cophe_core.inputs.readers.headerless_columns`) has its first row read as data, on its own line."""
    block = max(16, chunk_rows * 24)  # bytes: about chunk_rows rows of a long doc_id,code file
    with open(f.path, "rb") as fh:
        head = fh.read(1 << 16)
        if head[:2] in (b"\xff\xfe", b"\xfe\xff"):
            raise InputError(f"{f.name}: streamed reading takes UTF-8 text; save the file as UTF-8 CSV")
        if head.startswith(b"\xef\xbb\xbf"):
            fh.seek(3)
            head = head[3:]
        else:
            fh.seek(0)
        header, line_no = b"", 0
        while not header.strip():  # blank lines before the header, as pandas skips them
            header = fh.readline()
            line_no += 1
            if not header:
                raise InputError(f"{f.name}: the file is empty; expected one row per document and code")
        header_text = decode_text(header, f.name).rstrip("\r\n")
        sep = "\t" if f.fmt == "tsv" else sniff_separator(header_text, f.name)
        check_width(header_text, f.name, sep, first=line_no)
        columns = headerless_columns(
            header_text, sep, f.name, header=names.header, doc_col=names.doc_col, code_col=names.code_col
        )
        carry = b"" if columns is None else header  # the first row is data: read in the first block
        first_line = line_no + (columns is None)  # the file's line number of the first line of the next block
        while True:
            data = fh.read(block)
            buf = carry + data
            if not buf:
                break
            cut = len(buf) if not data else _last_cut(buf)
            if cut <= 0:  # no line end outside quotes yet: read on
                carry = buf
                continue
            chunk, carry = buf[:cut], buf[cut:]
            if chunk.strip():
                try:
                    text = chunk.decode("utf-8")
                except UnicodeDecodeError as e:
                    line = first_line + chunk[: e.start].count(b"\n")
                    raise InputError(
                        f"{f.name}, line {line}: not valid UTF-8 text (byte {chunk[e.start]:#04x}); save the "
                        "file as UTF-8 CSV"
                    ) from None
                if columns is None:
                    frame = parse_delimited(header_text + "\n" + text, f.name, sep, offset=first_line - 2)
                else:
                    frame = parse_delimited(text, f.name, sep, names=columns, offset=first_line - 1)
                if frame.shape[1] < 2:
                    raise InputError(
                        f"{f.name}: found a single column {excerpt(frame.columns[0])!r}; expected a document id and a "
                        "code column separated by a comma, tab, | or ;"
                    )
                frame.index = frame.index + (first_line - (1 if columns is not None else 2))
                yield frame
            first_line += chunk.count(b"\n")
            if not data:
                break


def _last_cut(buf: bytes) -> int:
    """The end of the last whole line of ``buf`` that is not inside a quoted field (an even number of
    quotes before it; doubled quotes inside a field keep the count even), 0 when there is none."""
    end = buf.rfind(b"\n") + 1
    if b'"' not in buf[:end]:
        return end
    arr = np.frombuffer(buf, dtype=np.uint8)
    newlines = np.flatnonzero(arr == ord("\n"))
    quotes = np.cumsum(arr == ord('"'))
    even = newlines[quotes[newlines] % 2 == 0]
    return int(even[-1]) + 1 if len(even) else 0


def estimate_rows(f: SourceFile) -> int:
    if f.fmt == "parquet":
        try:
            return int(ds.dataset(str(f.path), format="parquet").count_rows())
        except (pa.ArrowException, OSError):
            return 0
    size = f.path.stat().st_size
    with open(f.path, "rb") as fh:
        head = fh.read(1 << 20)
    return int(size / max(len(head) / max(head.count(b"\n"), 1), 1))
