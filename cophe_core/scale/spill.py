"""The spill of streamed scoring (pass 1): rows hashed by document id into buckets, so that every row of a
document, gold and predicted, lands in the same bucket; and a bucket read back as the gold and predicted frames
the counting kernel takes. The buckets are held in memory up to a bound (:data:`HELD_BYTES`), beyond which
they go to Arrow IPC files in a temporary folder: memory stays bounded whatever the input's size, and inputs
of a few million rows are not written to disk and read back.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import NamedTuple

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.compute as pc

__all__ = [
    "GATHERED_ROWS",
    "HELD_BYTES",
    "MAX_LINE",
    "SPILL_SCHEMA",
    "Bucket",
    "Dealt",
    "Spill",
    "bucket_documents",
    "deal_rows",
]  # the functions serve scale/pipeline.py

# the spilled rows held in memory (12 bytes a row, and each chunk's ids: about 20M rows) before every bucket
# goes to its file
HELD_BYTES = 256 << 20

_ROW_BYTES = 12  # a spilled row: its document's number, code and line, 32 bits each

# the rows gathered before they are written to the bucket files, over all the buckets (about 48 MB): each
# chunk deals a few thousand rows to each of ~100 buckets at 10^8 rows, and a write costs ~60 µs however small
GATHERED_ROWS = 4 << 20

# a spilled row's line in its file, 32 bits (its file and side are its batch's, kept beside the batches)
MAX_LINE = (1 << 32) - 1


def arrow_strings(values: pd.Series | np.ndarray) -> pa.Array:
    """Strings as one Arrow array (a pandas column backed by Arrow may hold several chunks, or none)."""
    found = pa.array(values, pa.large_string())
    return found.combine_chunks() if isinstance(found, pa.ChunkedArray) else found


class Dealt(NamedTuple):
    """Rows dealt into groups by their value's group (:func:`deal_rows`)."""

    by_group: np.ndarray  # the used values (their places in ``used``) in group order
    value_bounds: np.ndarray  # group k's used values: ``by_group[value_bounds[k] : value_bounds[k + 1]]``
    within: np.ndarray  # each row's value, numbered among its group's values
    order: np.ndarray  # the rows in group order (stable)
    bounds: np.ndarray  # group k's rows: ``order[bounds[k] : bounds[k + 1]]``


def deal_rows(group: np.ndarray, used: np.ndarray, n_values: int, at: np.ndarray, n_groups: int) -> Dealt:
    """Deal rows into ``n_groups`` groups by their value's group: ``at`` is each row's value (a number below
    ``n_values``), ``used`` the values some row holds and ``group`` the group of each of those. Each group's
    values are numbered from 0 in their order in ``used``, so that a group's rows name their values by a small
    number into the group's own list. Stable sorts throughout (on 16-bit groups, a radix sort).

    >>> d = deal_rows(np.array([1, 0, 1], np.uint16), np.array([0, 2, 3]), 4, np.array([3, 0, 2, 3]), 2)
    >>> d.by_group.tolist(), d.value_bounds.tolist(), d.within.tolist(), d.order.tolist(), d.bounds.tolist()
    ([1, 0, 2], [0, 1, 3], [1, 0, 0, 1], [2, 0, 1, 3], [0, 1, 4])
    """
    by_group = np.argsort(group, kind="stable")
    value_bounds = _bounds(group, n_groups)
    numbered = np.empty(len(group), dtype=np.int32)
    numbered[by_group] = np.arange(len(group)) - value_bounds[group[by_group]]
    # per value (the unused ones never looked up): its group and its number there
    value_group = np.zeros(n_values, dtype=group.dtype)
    value_group[used] = group
    value_within = np.zeros(n_values, dtype=np.int32)
    value_within[used] = numbered
    row_group = value_group[at]
    order = np.argsort(row_group, kind="stable")
    return Dealt(by_group, value_bounds, value_within[at], order, _bounds(row_group, n_groups))


def _bounds(group: np.ndarray, n_groups: int) -> np.ndarray:
    """Where each group's items begin and end once sorted by group: the cumulative counts per group."""
    bounds = np.zeros(n_groups + 1, dtype=np.int64)
    np.cumsum(np.bincount(group, minlength=n_groups), out=bounds[1:])
    return bounds


# ------------------------------------------------------------------ pass 1: spill into buckets

# a batch's document ids are numbers into a dictionary of its own distinct ids (an IPC stream replaces it
# batch by batch): the ids are written once per chunk and bucket, not once per row; a batch's rows come from
# one file of one side (Spill.sources), so 12 bytes a row
SPILL_SCHEMA = pa.schema(
    [
        ("doc_id", pa.dictionary(pa.int32(), pa.large_string())),
        ("code", pa.int32()),
        ("line", pa.uint32()),
    ]
)


class Bucket(NamedTuple):
    """A bucket's rows read back: the spilled columns (``doc_id``, ``code``, ``line``: the row's line in its
    file), each row's side (0 gold, 1 predicted), and where each batch begins (``starts``, one more than
    the batches) with the file it came from (``files``, an index into the sources' files)."""

    rows: pa.Table
    side: np.ndarray
    starts: np.ndarray
    files: np.ndarray

    def file_of(self, at: np.ndarray) -> np.ndarray:
        """The file index of the rows ``at``.

        >>> b = Bucket(pa.table({"line": pa.array([1, 2, 1], pa.uint32())}), np.array([0, 0, 1], np.int8),
        ...            np.array([0, 2, 3]), np.array([4, 7]))
        >>> b.file_of(np.array([2, 0, 1])).tolist()
        [7, 4, 4]
        """
        files: np.ndarray = self.files[np.searchsorted(self.starts, at, side="right") - 1]
        return files

    def lines(self, at: np.ndarray) -> np.ndarray:
        """The lines (in their files) of the rows ``at``, as int64."""
        return np.asarray(self.rows["line"].take(pa.array(at)).to_numpy(), dtype=np.int64)


class Spill:
    """Rows hashed by document into bucket files (Arrow IPC), and the distinct codes seen."""

    def __init__(
        self,
        folder: str,
        n_buckets: int,
        n_files: int,
        held_bytes: int = HELD_BYTES,
        gathered_rows: int = GATHERED_ROWS,
    ):
        self.folder = Path(folder)
        self.n_buckets = n_buckets
        self.held: dict[int, list[pa.RecordBatch]] | None = {}  # None once the buckets are in files
        self.sources: dict[int, list[tuple[int, int, int]]] = {}  # per bucket, each batch's side, file, rows
        self.held_bytes, self.room = 0, held_bytes
        self.writers: dict[int, pa.ipc.RecordBatchFileWriter] = {}
        # per bucket, the batches not yet written, and how many rows they hold at most before they are
        self.gathered: dict[int, list[pa.RecordBatch]] = {}
        self.gathered_rows: dict[int, int] = {}
        self.write_rows = min(max(gathered_rows // n_buckets, 1), 1 << 18)
        self.book: dict[str, int] = {}
        self.known: pa.Array | None = None  # the book's codes, to look a chunk's codes up in by Arrow
        self.found: list[list[np.ndarray]] = [[] for _ in range(n_files)]  # per file, its chunks' codes
        self.joined: dict[int, np.ndarray] = {}  # per file, its distinct codes (once its last chunk is in)
        self.rows = np.zeros(n_files, dtype=np.int64)  # code rows per file
        self.docs = [False, False]  # has the side any document

    def add(self, side: int, file_index: int, pairs: pd.DataFrame, docs: np.ndarray) -> None:
        """Spill one chunk's rows (a reader's ``pairs``) and its documents without a code row. String work
        is done on the distinct values (codes, document ids), which pandas finds; rows are only indexed."""
        code_at, distinct = pd.factorize(pairs["code"])
        doc_at, doc_distinct = pd.factorize(pairs["doc_id"])
        doc_distinct = np.asarray(doc_distinct, dtype=object)
        # documents without a code row in this chunk (an empty code): kept as rows without a code, since
        # they are evaluated documents; the reader's docs hold every pair's document, so equal sizes say none
        alone = (
            docs[~pd.Index(docs, dtype=object).isin(doc_distinct)]
            if len(docs) > len(doc_distinct)
            else docs[:0]
        )
        self.add_ids(
            side,
            file_index,
            arrow_strings(np.concatenate([doc_distinct, np.asarray(alone, dtype=object)])),
            doc_at,
            np.asarray(distinct, dtype=object),
            code_at,
            pairs["line"].to_numpy(dtype=np.int64),
            np.arange(len(doc_distinct), len(doc_distinct) + len(alone)),
        )

    def add_ids(
        self,
        side: int,
        file_index: int,
        doc_values: pa.Array,
        doc_at: np.ndarray,
        code_values: np.ndarray,
        code_at: np.ndarray,
        lines: np.ndarray,
        alone: np.ndarray,
    ) -> None:
        """Spill one chunk's rows given as numbers: each row's document (``doc_at``, in the distinct
        ``doc_values``, Arrow large strings), code (``code_at``, in ``code_values``) and line, and the documents without a code
        row (``alone``, in ``doc_values``). Strings are only hashed and looked up as distinct values; the rows'
        ids are gathered by Arrow."""
        used = np.flatnonzero(np.bincount(code_at, minlength=len(code_values)))  # the codes of some row
        book = np.full(len(code_values), -1, dtype=np.int32)
        book[used] = self._book_ids(code_values[used])
        self.found[file_index].append(book[used])
        self.rows[file_index] += len(code_at)
        if len(alone):  # rows without a code for the documents without a kept row
            at = np.concatenate([doc_at, alone]).astype(np.int64)
            code = np.concatenate([book[code_at], np.full(len(alone), -1, np.int32)])
            lines = np.concatenate([lines, np.zeros(len(alone), np.int64)])
        else:
            at, code = doc_at, book[code_at]
        if not len(at):
            return
        self.docs[side] = True
        if lines.max() > MAX_LINE:
            raise ValueError(f"a file of more than {MAX_LINE:,} lines: split it into smaller files")
        line = lines.astype(np.uint32)
        n_buckets = np.uint64(self.n_buckets)
        used_docs = np.flatnonzero(np.bincount(at, minlength=len(doc_values)))
        ids = doc_values.take(pa.array(used_docs))
        doc_bucket = _small(_string_hashes(ids) % n_buckets, self.n_buckets)
        dealt = deal_rows(doc_bucket, used_docs, len(doc_values), at, self.n_buckets)
        order, bounds = dealt.order, dealt.bounds
        doc_col, code_col, line_col = dealt.within[order], code[order], line[order]
        by_bucket = ids.take(pa.array(dealt.by_group))  # the ids in bucket order: a slice a bucket
        if self.held is not None:
            self.held_bytes += by_bucket.nbytes
        for b in np.flatnonzero(np.diff(bounds)).tolist():
            rows = slice(bounds[b], bounds[b + 1])
            names = by_bucket.slice(dealt.value_bounds[b], dealt.value_bounds[b + 1] - dealt.value_bounds[b])
            self.sources.setdefault(b, []).append((side, file_index, int(bounds[b + 1] - bounds[b])))
            batch = pa.record_batch(
                [
                    # the numbers index this bucket's ids by construction: not checked again (a tenth of a
                    # million small batches at 10^8 rows)
                    pa.DictionaryArray.from_arrays(pa.array(doc_col[rows]), names, safe=False),
                    pa.array(code_col[rows]),
                    pa.array(line_col[rows]),
                ],
                schema=SPILL_SCHEMA,
            )
            self._put(b, batch)

    def _put(self, b: int, batch: pa.RecordBatch) -> None:
        """Hold a batch of bucket ``b``, or write it to the bucket's file once the held batches outgrow the
        bound (every held batch is written then, in order)."""
        if self.held is not None:
            self.held.setdefault(b, []).append(batch)
            self.held_bytes += batch.num_rows * _ROW_BYTES  # its ids: a slice of the chunk's, counted once
            if self.held_bytes <= self.room:
                return
            held, self.held = self.held, None
            for k, batches in held.items():
                for one in batches:
                    self._write(k, one)
            return
        self._write(b, batch)

    def _write(self, b: int, batch: pa.RecordBatch) -> None:
        """Gather a batch of bucket ``b``, and write the bucket's gathered batches as one once they hold
        :attr:`write_rows` rows."""
        self.gathered.setdefault(b, []).append(batch)
        self.gathered_rows[b] = self.gathered_rows.get(b, 0) + batch.num_rows
        if self.gathered_rows[b] >= self.write_rows:
            self._flush(b)

    def _flush(self, b: int) -> None:
        batches = self.gathered.pop(b, [])
        self.gathered_rows.pop(b, None)
        if not batches:
            return
        if b not in self.writers:
            self.writers[b] = pa.ipc.new_stream(str(self.folder / f"bucket-{b:05d}.arrow"), SPILL_SCHEMA)
        self.writers[b].write_batch(_joined(batches))

    def _book_ids(self, distinct: np.ndarray) -> np.ndarray:
        """The code book's number of each distinct code of a chunk, new codes numbered on (looked up in one
        vectorised call: after the first chunks, new codes are rare)."""
        if self.known is None or len(self.known) != len(self.book):
            self.known = pa.array(list(self.book), pa.large_string())
        try:
            values = pa.array(distinct, pa.large_string())
        except (pa.ArrowInvalid, pa.ArrowTypeError):  # not all strings: looked up as their text
            values = pa.array([str(v) for v in distinct], pa.large_string())
        found = (
            pc.index_in(values, value_set=self.known)
            if len(self.known)
            else pa.nulls(len(values), pa.int32())
        )
        at = np.asarray(found.fill_null(-1).to_numpy(zero_copy_only=False), dtype=np.int64)
        for i in np.flatnonzero(at < 0).tolist():
            at[i] = self.book.setdefault(str(distinct[i]), len(self.book))
        return at.astype(np.int32)

    def close(self) -> None:
        for b in list(self.gathered):
            self._flush(b)
        for w in self.writers.values():
            w.close()

    def codes(self) -> list[str]:
        return list(self.book)

    def file_codes(self, file_index: int) -> np.ndarray:
        """The distinct codes of a file's rows, as their numbers in the book (:meth:`codes`), sorted."""
        if file_index not in self.joined:  # joined once, on the first call after the file's last chunk
            found = self.found[file_index]
            seen = (
                np.bincount(np.concatenate(found)) if found else np.zeros(0, np.int64)
            )  # book numbers: small
            self.joined[file_index] = np.flatnonzero(seen)
        return self.joined[file_index].astype(np.int64)

    def buckets(self) -> Iterator[Bucket]:
        """Each bucket's rows, its batches' dictionaries of document ids unified into one."""
        for b in sorted(self.sources):
            side, file, n = (np.array(column, dtype=np.int64) for column in zip(*self.sources[b]))
            starts = np.zeros(len(n) + 1, dtype=np.int64)
            np.cumsum(n, out=starts[1:])
            sides = np.repeat(side.astype(np.int8), n)
            if self.held is not None:
                rows = pa.Table.from_batches(self.held[b], SPILL_SCHEMA)
                yield Bucket(rows.unify_dictionaries(), sides, starts, file)
                continue
            with pa.memory_map(str(self.folder / f"bucket-{b:05d}.arrow")) as source:
                yield Bucket(pa.ipc.open_stream(source).read_all().unify_dictionaries(), sides, starts, file)


def _joined(batches: list[pa.RecordBatch]) -> pa.RecordBatch:
    """Spilled batches as one, in order, their dictionaries of document ids unified (an id in several is
    one value of the joined dictionary)."""
    if len(batches) == 1:  # (a dictionary that is a slice of a larger array: Arrow writes the slice alone)
        return batches[0]
    table = pa.Table.from_batches(batches, SPILL_SCHEMA).unify_dictionaries()
    ids = table["doc_id"]
    indices = pa.concat_arrays([c.indices for c in ids.chunks])
    return pa.record_batch(
        [
            pa.DictionaryArray.from_arrays(indices, ids.chunk(0).dictionary),
            table["code"].combine_chunks(),
            table["line"].combine_chunks(),
        ],
        schema=SPILL_SCHEMA,
    )


def bucket_documents(bucket: pa.Table) -> tuple[pa.Array, np.ndarray]:
    """A bucket's distinct document ids and each row's number among them (its dictionaries unified).

    >>> ids = pa.DictionaryArray.from_arrays(pa.array([1, 0, 1], pa.int32()), pa.array(["a", "b"], pa.large_string()))
    >>> found, at = bucket_documents(pa.table({"doc_id": ids}))
    >>> found.to_pylist(), at.tolist()
    (['a', 'b'], [1, 0, 1])
    """
    column = bucket["doc_id"]
    if not column.num_chunks:
        return pa.array([], pa.large_string()), np.zeros(0, np.int64)
    at = np.concatenate([c.indices.to_numpy() for c in column.chunks]).astype(np.int64)
    return column.chunk(0).dictionary, at


def _small(values: np.ndarray, n_buckets: int) -> np.ndarray:
    """Bucket numbers as 16 bits when they fit, where numpy's stable sort is a radix sort."""
    return values.astype(np.uint16 if n_buckets <= 1 << 16 else np.int64)


def _string_hashes(values: pa.Array) -> np.ndarray:
    """A 64-bit hash of each string (no nulls) from its UTF-8 bytes, by array arithmetic over Arrow's buffers:
    each string read as 8-byte words (an unaligned view of the bytes, the last word's bytes past the string's
    end masked off), each word mixed into the string's hash in turn, starting from its length. A word per
    string at a time, not a byte: document ids are a few words long.

    >>> h = _string_hashes(pa.array(["a", "ab", "", "ab", "abcdefgh", "abcdefgh\\x00"], pa.large_string()))
    >>> bool(h[1] == h[3]), len(set(h.tolist()))
    (True, 5)
    """
    offsets = np.frombuffer(values.buffers()[1], np.int64)[values.offset : values.offset + len(values) + 1]
    data = values.buffers()[2]
    raw = (
        np.frombuffer(data, np.uint8)[offsets[0] : offsets[-1]] if data is not None else np.zeros(0, np.uint8)
    )
    padded = np.concatenate([raw, np.zeros(8, np.uint8)])  # the last string's word reads 7 bytes past it
    words = np.ndarray(shape=(len(raw) + 1,), dtype="<u8", buffer=padded.data, strides=(1,))  # bytes i..i+7
    left = np.diff(offsets)  # bytes of each string not yet mixed in
    at = offsets[:-1] - offsets[0]
    h = np.multiply(left.astype(np.uint64), np.uint64(0x9E3779B97F4A7C15))
    which = np.arange(len(values))
    while len(which):
        word = words[at]
        short = left < 8
        if short.any():  # the bytes past the string's end (the next string's) masked off
            word[short] &= np.left_shift(np.uint64(1), (left[short] * 8).astype(np.uint64)) - np.uint64(1)
        mixed = np.multiply(np.bitwise_xor(h[which], word), np.uint64(0xBF58476D1CE4E5B9))
        h[which] = np.bitwise_xor(mixed, np.right_shift(mixed, np.uint64(31)))
        more = left > 8
        which, at, left = which[more], at[more] + 8, left[more] - 8
    h = np.multiply(np.bitwise_xor(h, np.right_shift(h, np.uint64(29))), np.uint64(0x94D049BB133111EB))
    return np.asarray(np.bitwise_xor(h, np.right_shift(h, np.uint64(32))), dtype=np.uint64)


def bucket_frames(
    bucket: Bucket, to_table: Sequence[np.ndarray], categories: Sequence[pd.Index], file_names: list[str]
) -> tuple[pd.DataFrame, pd.DataFrame]:
    """A spilled bucket as the gold and predicted frames :func:`count_partition` takes, each side's codes
    categories of its own code table."""
    frames = []
    file = np.repeat(bucket.files, np.diff(bucket.starts))
    for side in (0, 1):
        mine = bucket.side == side
        rows = bucket.rows.filter(pa.array(mine))
        code = rows["code"].to_numpy()
        line = rows["line"].to_numpy().astype(np.int64)
        frames.append(
            pd.DataFrame(
                {
                    "doc_id": rows["doc_id"].cast(pa.large_string()).to_pandas(),
                    "code": pd.Categorical.from_codes(
                        np.where(code >= 0, to_table[side][np.maximum(code, 0)], -1), categories[side]
                    ),
                    "line": line,
                    "file": pd.Categorical.from_codes(file[mine], file_names),
                }
            )
        )
    return frames[0], frames[1]
