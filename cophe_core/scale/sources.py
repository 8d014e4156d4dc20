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
import pyarrow.dataset as ds

from ..base.files import (
    InputError,
    binary_as_text,
    check_width,
    decode_text,
    excerpt,
    parse_delimited,
    sniff_separator,
)
from ..inputs.datasets import dataset_files, glob_root
from ..inputs.readers import headerless_columns

__all__ = ["STREAMED_FORMATS", "ColumnNames", "SourceFile"]  # the functions serve scale/pipeline.py

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
