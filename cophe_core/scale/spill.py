"""The disk spill of streamed scoring (pass 1): rows hashed by document id into buckets, Arrow IPC files in a
temporary folder, so that every row of a document, gold and predicted, lands in the same bucket; and a bucket
read back as the gold and predicted frames the counting kernel takes.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from pathlib import Path

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.compute as pc

__all__ = ["FILE_SHIFT", "LINE_MASK", "SPILL_SCHEMA", "Spill"]  # the functions serve scale/pipeline.py

# a spilled row's line holds its file's index in the high bits: one int64 column says file and line
FILE_SHIFT = 40
LINE_MASK = (1 << FILE_SHIFT) - 1


def arrow_strings(values: pd.Series | np.ndarray) -> pa.Array:
    """Strings as one Arrow array (a pandas column backed by Arrow may hold several chunks, or none)."""
    found = pa.array(values, pa.large_string())
    return found.combine_chunks() if isinstance(found, pa.ChunkedArray) else found


# ------------------------------------------------------------------ pass 1: spill into buckets

SPILL_SCHEMA = pa.schema(
    [("side", pa.int8()), ("doc_id", pa.large_string()), ("code", pa.int32()), ("line", pa.int64())]
)


class Spill:
    """Rows hashed by document into bucket files (Arrow IPC), and the distinct codes seen."""

    def __init__(self, folder: str, n_buckets: int, n_files: int):
        self.folder = Path(folder)
        self.n_buckets = n_buckets
        self.writers: dict[int, pa.ipc.RecordBatchFileWriter] = {}
        self.book: dict[str, int] = {}
        self.index: pd.Index | None = None
        self.file_codes: list[set[int]] = [set() for _ in range(n_files)]
        self.rows = np.zeros(n_files, dtype=np.int64)  # code rows per file
        self.docs = [False, False]  # has the side any document

    def add(self, side: int, file_index: int, pairs: pd.DataFrame, docs: np.ndarray) -> None:
        """Spill one chunk's rows (a reader's ``pairs``) and its documents without a code row. String work
        is done on the distinct values (codes, document ids), which pyarrow finds; rows are only indexed."""
        code_at, distinct = pd.factorize(pairs["code"])
        ids = self._book_ids(np.asarray(distinct, dtype=object))
        self.file_codes[file_index].update(ids.tolist())
        self.rows[file_index] += len(pairs)
        doc_at, doc_distinct = pd.factorize(pairs["doc_id"])
        doc_distinct = np.asarray(doc_distinct, dtype=object)
        # documents without a code row in this chunk (an empty code): kept as rows without a code, since
        # they are evaluated documents; the reader's docs hold every pair's document, so equal sizes say none
        alone = (
            docs[~pd.Index(docs, dtype=object).isin(doc_distinct)]
            if len(docs) > len(doc_distinct)
            else docs[:0]
        )
        doc = pa.concat_arrays([arrow_strings(pairs["doc_id"]), arrow_strings(alone)])
        code = np.concatenate([ids[code_at], np.full(len(alone), -1, np.int32)])
        lines = pairs["line"].to_numpy(dtype=np.int64)
        line = np.concatenate([lines, np.zeros(len(alone), np.int64)]) | (np.int64(file_index) << FILE_SHIFT)
        if not len(doc):
            return
        self.docs[side] = True
        buckets = np.uint64(self.n_buckets)
        bucket = np.concatenate(
            [
                (pd.util.hash_array(doc_distinct) % buckets)[doc_at],
                pd.util.hash_array(np.asarray(alone, dtype=object)) % buckets,
            ]
        )
        order = np.argsort(bucket, kind="stable")
        bounds = np.searchsorted(bucket[order], np.arange(self.n_buckets + 1, dtype=np.uint64))
        batch = pa.record_batch(
            [
                pa.array(np.full(len(doc), side, np.int8)),
                doc.take(pa.array(order)),
                pa.array(code[order]),
                pa.array(line[order]),
            ],
            schema=SPILL_SCHEMA,
        )
        for b in np.flatnonzero(np.diff(bounds)).tolist():
            if b not in self.writers:
                self.writers[b] = pa.ipc.new_file(str(self.folder / f"bucket-{b:05d}.arrow"), SPILL_SCHEMA)
            self.writers[b].write_batch(batch.slice(bounds[b], bounds[b + 1] - bounds[b]))

    def _book_ids(self, distinct: np.ndarray) -> np.ndarray:
        """The code book's number of each distinct code of a chunk, new codes numbered on (looked up in one
        vectorised call: after the first chunks, new codes are rare)."""
        if self.index is None or len(self.index) != len(self.book):
            self.index = pd.Index(list(self.book), dtype=object)
        at = self.index.get_indexer(distinct) if len(self.index) else np.full(len(distinct), -1)
        for i in np.flatnonzero(at < 0).tolist():
            at[i] = self.book.setdefault(str(distinct[i]), len(self.book))
        return at.astype(np.int32)

    def close(self) -> None:
        for w in self.writers.values():
            w.close()

    def codes(self) -> list[str]:
        return list(self.book)

    def buckets(self) -> Iterator[pa.Table]:
        for b in sorted(self.writers):
            with pa.memory_map(str(self.folder / f"bucket-{b:05d}.arrow")) as source:
                yield pa.ipc.open_file(source).read_all()


def bucket_frames(
    bucket: pa.Table, to_table: Sequence[np.ndarray], categories: Sequence[pd.Index], file_names: list[str]
) -> tuple[pd.DataFrame, pd.DataFrame]:
    """A spilled bucket as the gold and predicted frames :func:`count_partition` takes, each side's codes
    categories of its own code table."""
    frames = []
    for side in (0, 1):
        rows = bucket.filter(pc.equal(bucket["side"], side))
        code = rows["code"].to_numpy()
        line = rows["line"].to_numpy()
        frames.append(
            pd.DataFrame(
                {
                    "doc_id": rows["doc_id"].to_pandas(),
                    "code": pd.Categorical.from_codes(
                        np.where(code >= 0, to_table[side][np.maximum(code, 0)], -1), categories[side]
                    ),
                    "line": line & LINE_MASK,
                    "file": pd.Categorical.from_codes(line >> FILE_SHIFT, file_names),
                }
            )
        )
    return frames[0], frames[1]
