"""Opening an aggregate analysis (:mod:`cophe_core.scale.aggregate`), checked like any upload: the zip's
bounds and paths, each member's size and SHA-256, the tables' columns and types, node ids in range, counts
whole and not negative; never a pickle. The per-document tables are read, and checked, when a figure first
needs them.
"""

from __future__ import annotations

import hashlib
import io
import json
import os
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq

from ..base.files import InputError
from ..breakdown.slices import Slice
from ..inputs.archive import Archive, open_archive, show
from ..inputs.readers import REJECTED_COLUMNS
from ..metrics import NodeCounts
from ..ontology import Ontology
from ..output.manifest import AGGREGATE, check_manifest
from .aggregate import (
    COUNT_FIELDS,
    EVALUATED,
    FORMAT,
    FORMAT_VERSION,
    KIND,
    MAX_BYTES,
    MAX_EXPANSION,
    MAX_MANIFEST,
    MAX_MEMBERS,
    MAX_ROWS_NOT_SCORED,
    MAX_WARNING,
    MAX_WARNINGS,
    OPTIONAL_FIELDS,
    TABLE_FLOOR,
    Aggregate,
    frequency_slices,
)

__all__ = ["is_aggregate", "read_aggregate"]


# ------------------------------------------------------------------ reading


def is_aggregate(data: bytes) -> bool:
    """Whether ``data`` is a zip whose manifest says it is an aggregate analysis (no other check).

    >>> is_aggregate(b"doc_id,code\\n")
    False
    """
    try:
        archive = open_archive(data, name="file", not_zip="", max_members=MAX_MEMBERS, max_bytes=MAX_BYTES)
        if (
            archive.members.get("manifest.json") is None
            or archive.members["manifest.json"].file_size > MAX_MANIFEST
        ):
            return False
        manifest = json.loads(archive.read("manifest.json"))
    except (InputError, ValueError, RecursionError):
        return False
    return isinstance(manifest, dict) and manifest.get("kind") == KIND


def read_aggregate(source: bytes | str | os.PathLike[str], *, name: str | None = None) -> Aggregate:
    """Open an aggregate analysis (bytes, or a path), checking it like any upload (see the module docs). The
    per-document tables are read, and checked, when a figure first needs them.

    Raises :class:`~cophe_core.base.files.InputError` naming the file and the member or field at fault.

    >>> read_aggregate(b"doc_id,code\\n", name="big.cophe")
    Traceback (most recent call last):
    cophe_core.base.files.InputError: big.cophe: not a cophe aggregate analysis (a zip with manifest.json); write one with `cophe aggregate`
    """
    if isinstance(source, bytes | bytearray | memoryview):
        data, label = bytes(source), name or "analysis.cophe"
    else:
        label = name or Path(source).name
        data = Path(source).read_bytes()
    archive = open_archive(
        data,
        name=label,
        not_zip=f"{label}: not a cophe aggregate analysis (a zip with manifest.json); write one with "
        "`cophe aggregate`",
        max_members=MAX_MEMBERS,
        max_bytes=MAX_BYTES,
    )
    return _Reader(archive, label).aggregate()


class _Reader:
    """Reads one opened archive, each problem an :class:`InputError` naming the file and what is at fault."""

    def __init__(self, archive: Archive, name: str):
        self.archive, self.name = archive, name

    def fail(self, what: str) -> InputError:
        return InputError(f"{self.name}: {what}")

    def manifest(self) -> dict[str, Any]:
        info = self.archive.members.get("manifest.json")
        if info is None:
            raise self.fail("no manifest.json; not a cophe analysis file")
        if info.file_size > MAX_MANIFEST:
            raise self.fail(f"manifest.json inflates to more than {MAX_MANIFEST:,} bytes")
        try:
            m = json.loads(self.archive.read("manifest.json"))
        except (ValueError, RecursionError):
            raise self.fail("manifest.json is not valid JSON") from None
        if not isinstance(m, dict) or m.get("format") != FORMAT:
            raise self.fail(f"manifest.json does not describe a cophe analysis (format {FORMAT!r})")
        version = m.get("format_version")
        if isinstance(version, bool) or not isinstance(version, int) or version < 1:
            raise self.fail(f"manifest.json: format_version must be a whole number, not {show(version)}")
        if version > FORMAT_VERSION:
            raise self.fail(
                f"format version {version}; this cophe opens version {FORMAT_VERSION} or older: update cophe"
            )
        if m.get("kind") != KIND:
            raise self.fail("a saved analysis of inputs, not an aggregate; open it as a saved analysis")
        # every option, count and value of the manifest as its schema allows (the field named otherwise)
        check_manifest(m, AGGREGATE, name=self.name)
        return m

    def field(self, m: dict[str, Any], key: str, kind: type | tuple[type, ...], what: str) -> Any:
        value = m.get(key)
        if not isinstance(value, kind) or isinstance(value, bool) and kind is not bool:
            raise self.fail(f"manifest.json: {key} must be {what}, not {show(value)}")
        return value

    def table(self, path: str, columns: Mapping[str, str], *, rows: int | range) -> pd.DataFrame:
        """:meth:`arrow_table` as a DataFrame (a forged pandas note in the footer refused, naming the member)."""
        table = self.arrow_table(path, columns, rows=rows)
        try:
            return table.to_pandas()
        except (KeyError, TypeError, ValueError) as e:  # the footer's pandas metadata is JSON pandas trusts
            raise self.fail(
                f"{path} is not a readable Parquet table ({type(e).__name__}); write the file again"
            ) from None

    def arrow_table(self, path: str, columns: Mapping[str, str], *, rows: int | range) -> pa.Table:
        """A Parquet member checked against its size and SHA-256 in the manifest, with these columns of
        these kinds (``int``, ``bool``, ``str``) and ``rows`` rows (a number, or a range of them), whose decoded
        size is in proportion to its stored size (:data:`MAX_EXPANSION`). Every bound is checked from the footer
        and the text columns' dictionaries before anything is decoded."""
        entry = self.members.get(path)
        if not isinstance(entry, dict):
            raise self.fail(f"manifest.json does not list the member {path}")
        data = self.archive.read(path)
        if len(data) != entry.get("size") or hashlib.sha256(data).hexdigest() != entry.get("sha256"):
            raise self.fail(
                f"{path} does not match its size and SHA-256 in manifest.json; the file was altered"
            )
        text = [c for c, kind in columns.items() if kind == "str"]
        try:
            f = pq.ParquetFile(io.BytesIO(data), read_dictionary=text)
            self._check_footer(path, f, columns, rows, len(data))
            table = f.read(columns=[c for c in columns if c in f.schema_arrow.names])
            table = self._decoded_text(path, table, text, len(data))
        except InputError:
            raise
        except (pa.ArrowException, OSError, ValueError, KeyError, MemoryError) as e:  # KeyError: forged names
            raise self.fail(
                f"{path} is not a readable Parquet table ({type(e).__name__}); write the file again"
            ) from None
        missing = [c for c in columns if c not in table.column_names]
        if missing:
            raise self.fail(f"{path} lacks the column(s) {', '.join(missing)}")
        for c, kind in columns.items():
            t = table.schema.field(c).type
            ok = {
                "int": pa.types.is_integer(t),
                "bool": pa.types.is_boolean(t),
                "str": pa.types.is_string(t) or pa.types.is_large_string(t),
            }[kind]
            if not ok:
                raise self.fail(f"{path}: column {c} holds {t}, not {kind}")
            if kind != "str" and table[c].null_count and c != "line":
                raise self.fail(f"{path}: column {c} has empty cells")
        return table.select(list(columns))

    def _check_footer(
        self, path: str, f: pq.ParquetFile, columns: Mapping[str, str], rows: int | range, stored: int
    ) -> None:
        """The footer's row count against the manifest's, and the numbers' decoded size against the stored."""
        n = f.metadata.num_rows
        if isinstance(rows, int) and n != rows:
            raise self.fail(f"{path} declares {n:,} rows; manifest.json says {rows:,}")
        if isinstance(rows, range) and n not in rows:
            raise self.fail(f"{path} declares {n:,} rows; manifest.json allows at most {rows.stop - 1:,}")
        widths = {"int": 8, "bool": 1, "str": 4}  # text: its dictionary indices, its values checked after
        numbers = n * sum(widths[kind] for kind in columns.values())
        self._in_proportion(path, numbers, stored)

    def _decoded_text(self, path: str, table: pa.Table, text: list[str], stored: int) -> pa.Table:
        """``table`` with its text columns decoded from their dictionaries, once their decoded size is known to
        be in proportion (a dictionary of one long value, repeated, decodes to any size)."""
        decoded = 0
        for c in text:
            if c not in table.column_names:
                continue
            column = table.column(c)
            if not pa.types.is_dictionary(column.type):  # not text: the column check names it
                continue
            for chunk in column.chunks:
                lengths = pc.binary_length(chunk.dictionary)
                decoded += int(pc.sum(pc.take(lengths, chunk.indices)).as_py() or 0)
        self._in_proportion(path, decoded + table.num_rows * 8 * len(text), stored)
        for c in text:
            if c in table.column_names and pa.types.is_dictionary(table.column(c).type):
                i = table.column_names.index(c)
                table = table.set_column(i, c, pc.cast(table.column(c), pa.large_string()))
        return table

    def _in_proportion(self, path: str, decoded: int, stored: int) -> None:
        if decoded > max(TABLE_FLOOR, MAX_EXPANSION * stored):
            raise self.fail(
                f"{path} would decode to {decoded:,} bytes from {stored:,} stored, more than {MAX_EXPANSION} times "
                "its size; cophe's tables never expand so far: the file was not written by cophe aggregate"
            )

    def aggregate(self) -> Aggregate:
        m = self.manifest()
        self.members = self.field(m, "members", dict, "an object")
        onto = self.ontology(m)
        # the counts, names and types of the manifest's values are those of its schema (manifest.AGGREGATE)
        runs: list[dict[str, Any]] = m["runs"]
        names = [r["name"] for r in runs]
        n_docs: int = m["documents"]
        options: dict[str, Any] = m["options"] if isinstance(m.get("options"), dict) else {}
        try:
            max_level = onto.top_level(options.get("max_level"))
        except ValueError:
            shown = show(options.get("max_level"))
            raise self.fail(f"manifest.json: max_level {shown} is not a level of the ontology") from None
        edges = self.slice_edges(m)
        counted = self.counts(onto.n_nodes, len(names), 1 + (len(edges) + 1 if edges else 0))
        whole = {r: counted(i, 0) for i, r in enumerate(names)}
        slices: list[Slice] = []
        slice_counts: dict[tuple[str, str], NodeCounts] = {}
        if edges:
            slices = frequency_slices(whole, edges, onto.n_nodes)
            keys = (m.get("slices") or {}).get("keys")
            if keys != [x.key for x in slices]:
                raise self.fail("manifest.json: slices.keys do not match the slices of slices.edges")
            for i, r in enumerate(names):
                for j, x in enumerate(slices):
                    slice_counts[(r, x.key)] = counted(i, j + 1)
        rows = {k: self.rows(f"{k}.parquet", names) for k in ("rejected", "flagged")}
        columns = m.get("document_columns") or []
        has_docs = (
            all(isinstance(r.get("documents"), str) for r in runs) and "documents/ids.parquet" in self.members
        )
        return Aggregate(
            onto,
            whole,
            n_docs,
            max_level,
            slices,
            slice_counts,
            rows["rejected"],
            rows["flagged"],
            {r["name"]: self.texts(r.get("warnings")) for r in runs},
            {r["name"]: self.texts(r.get("notes")) for r in runs},
            {k: v for k, v in options.items() if isinstance(v, str | int | float | type(None))},
            {r["name"]: self.sources(r.get("sources")) for r in runs},
            str(m.get("created") or "")[:100],
            str(m.get("cophe_version") or "")[:100],
            self.document_loader(
                {r["name"]: r["documents"] for r in runs},
                columns,
                n_docs,
                {r["name"]: self.run_documents(r, n_docs) for r in runs},
            )
            if has_docs
            else None,
            {r["name"]: self.run_documents(r, n_docs) for r in runs},
        )

    def run_documents(self, run: dict[str, Any], n_docs: int) -> int:
        """A run's own documents (files written before runs kept their own: every document)."""
        n = run.get("n_documents", n_docs)
        if not isinstance(n, int) or isinstance(n, bool) or not 0 <= n <= n_docs:
            raise self.fail(f"manifest.json: run {show(run['name'])}: n_documents must be 0 to {n_docs:,}")
        return n

    def sources(self, value: object) -> dict[str, str]:
        """A run's sources' names (``{"gold": "gold.csv", …}``) as text; anything else in their place refused."""
        if value is None:
            return {}
        if not isinstance(value, dict):
            raise self.fail(f"manifest.json: a run's sources must be names by role, not {show(value)}")
        return {str(k): str(v) for k, v in value.items()}

    def texts(self, values: Any) -> list[str]:
        if not isinstance(values, list):
            return []
        return [str(v)[:MAX_WARNING] for v in values[:MAX_WARNINGS]]

    def ontology(self, m: dict[str, Any]) -> Ontology:
        about = self.field(m, "ontology", dict, "an object")
        levels, n = about["levels"], about["nodes"]  # as the schema allows (manifest.AGGREGATE)
        nodes = self.table(
            "ontology/nodes.parquet",
            {
                "key": "str",
                "title": "str",
                "level": "int",
                "parent": "int",
                "listed": "bool",
                "system": "str",
            },
            rows=n,
        )
        level = nodes["level"].to_numpy(np.int64)
        parent = nodes["parent"].to_numpy(np.int64)
        if n and (level.min() < 0 or level.max() >= len(levels)):
            raise self.fail("ontology/nodes.parquet: a node's level is not one of the ontology's levels")
        if n and (parent.min() < -1 or parent.max() >= n or (parent == np.arange(n)).any()):
            raise self.fail("ontology/nodes.parquet: a node's parent is not a node")
        has_parent = parent >= 0
        if (level[parent[has_parent]] <= level[has_parent]).any():
            raise self.fail("ontology/nodes.parquet: a node's parent is not above it")
        # a node is named by a few codes at most (its forms with and without a dot); a DAG's extra edges are few
        # per node (a layered DAG of 100 nodes a layer, each below every node above: 100)
        codes = self.table("ontology/codes.parquet", {"code": "str", "node": "int"}, rows=range(8 * n + 1))
        code_nodes = codes["node"].to_numpy(np.int64)
        if len(codes) and (code_nodes.min() < 0 or code_nodes.max() >= n):
            raise self.fail("ontology/codes.parquet: a code names a node that does not exist")
        edges = self.table(
            "ontology/edges.parquet", {"child": "int", "parent": "int"}, rows=range(200 * n + 1)
        )
        child, up = edges["child"].to_numpy(np.int64), edges["parent"].to_numpy(np.int64)
        if len(edges) and (
            min(child.min(), up.min()) < 0
            or max(child.max(), up.max()) >= n
            or (level[up] <= level[child]).any()
        ):
            raise self.fail(
                "ontology/edges.parquet: an edge joins nodes that do not exist, or does not go up"
            )
        system = nodes["system"].to_numpy(dtype=object)
        systems = None if not n or (system == "").all() else system  # "": an ontology of one code system
        code_sets: dict[str, Any] = m["code_sets"] if isinstance(m.get("code_sets"), dict) else {}
        default = about.get("default_max_level")
        return Ontology(
            name=str(about.get("name") or "ontology")[:100],
            levels=tuple(levels),
            keys=nodes["key"].to_numpy(dtype=object).astype(str),
            titles=nodes["title"].to_numpy(dtype=object).astype(str),
            level=level.astype(np.int16),
            parent=parent.astype(np.int32),
            listed=nodes["listed"].to_numpy(bool),
            codes=dict(zip(codes["code"].astype(str), code_nodes.tolist())),
            default_max_level=default if default in levels else None,
            systems=systems,
            extra_edges=(child.astype(np.int32), up.astype(np.int32)) if len(edges) else None,
            code_sets={str(k): str(v)[:200] for k, v in code_sets.items()},
            code_system=about.get("code_system") if isinstance(about.get("code_system"), str) else None,
        )

    def slice_edges(self, m: dict[str, Any]) -> list[int] | None:
        about = m.get("slices") or {}
        edges = about.get("edges") if isinstance(about, dict) else None
        if edges is None:
            return None
        if (
            not isinstance(edges, list)
            or not edges
            or len(edges) > 20
            or not all(isinstance(e, int) and not isinstance(e, bool) and e > 0 for e in edges)
            or edges != sorted(set(edges))
        ):
            raise self.fail("manifest.json: slices.edges must be increasing whole numbers, such as [10, 100]")
        return edges

    def counts(self, n: int, n_runs: int, n_slices: int) -> Callable[[int, int], NodeCounts]:
        """The per-node counts of ``counts.parquet``, checked: a function of (run, slice) positions."""
        columns = {"run": "int", "slice": "int", "node": "int", **dict.fromkeys(COUNT_FIELDS, "int")}
        t = self.table("counts.parquet", columns, rows=range(n_runs * n_slices * n + 1))
        run, sl, node = (t[c].to_numpy(np.int64) for c in ("run", "slice", "node"))
        for values, top, what in ((run, n_runs, "run"), (sl, n_slices, "slice"), (node, n, "node")):
            if len(values) and (values.min() < 0 or values.max() >= top):
                raise self.fail(f"counts.parquet: a row names a {what} that does not exist")
        flat = (run * n_slices + sl) * n + node
        if len(np.unique(flat)) != len(flat):
            raise self.fail("counts.parquet: a (run, slice, node) row is repeated")
        values = {f: t[f].to_numpy(np.int64) for f in COUNT_FIELDS}
        for f, v in values.items():
            if len(v) and v.min() < (-1 if f in OPTIONAL_FIELDS else 0):
                raise self.fail(f"counts.parquet: column {f} holds a negative count")

        def counted(i: int, j: int) -> NodeCounts:
            rows = (run == i) & (sl == j)
            at = node[rows]
            arrays: dict[str, Any] = {}
            for f, v in values.items():
                mine = v[rows]
                if f in OPTIONAL_FIELDS and (mine < 0).any():
                    arrays[f] = None  # not counted
                    continue
                full = np.zeros(n, dtype=np.int64)
                full[at] = mine
                arrays[f] = full
            return NodeCounts(**arrays)

        return counted

    def rows(self, path: str, runs: list[str]) -> pd.DataFrame:
        t = self.table(
            path,
            {"run": "int", "file": "str", "line": "int", "value": "str", "reason": "str", "kind": "str"},
            rows=range(MAX_ROWS_NOT_SCORED * (len(runs) + 1) + 1),
        )
        run = t["run"].to_numpy(np.int64)
        if len(t) and (run.min() < 0 or run.max() >= len(runs)):
            raise self.fail(f"{path}: a row names a run that manifest.json does not list")
        t["run"] = np.asarray(runs, dtype=object)[run] if len(t) else pd.Series([], dtype=object)
        t["line"] = pd.array(t["line"], dtype="Int64")
        return t[["run", *REJECTED_COLUMNS]]

    def document_loader(
        self, members: dict[str, str], columns: list[str], n_docs: int, n_own: dict[str, int]
    ) -> Callable[[str], tuple[pd.Index, np.ndarray, list[str]]]:
        kept: dict[str, Any] = {}  # each member read and checked once

        def load(run: str) -> tuple[pd.Index, np.ndarray, list[str]]:
            if "ids" not in kept:
                ids = (
                    self.arrow_table("documents/ids.parquet", {"doc_id": "str"}, rows=n_docs)
                    .column("doc_id")
                    .combine_chunks()
                )
                ascending = len(ids) < 2 or pc.all(pc.greater(ids[1:], ids[:-1])).as_py()
                if len(ids) != n_docs or ids.null_count or not ascending:
                    raise self.fail("documents/ids.parquet must hold the documents' ids, sorted, each once")
                kept["ids"] = pd.Index(ids.to_numpy(zero_copy_only=False), dtype=object)
            if run not in kept:
                partial = n_own[run] != n_docs  # the run's own documents are marked among the file's
                wanted = dict.fromkeys(columns, "int") | ({EVALUATED: "bool"} if partial else {})
                table = self.arrow_table(members[run], wanted, rows=n_docs)
                if table.num_rows != n_docs:
                    raise self.fail(f"{members[run]} has {table.num_rows:,} rows for {n_docs:,} documents")
                values = np.empty((n_docs, len(columns)), dtype=np.int32)
                for j, c in enumerate(columns):
                    column = table.column(c).to_numpy()
                    if column.size and (column.min() < 0 or column.max() > np.iinfo(np.int32).max):
                        raise self.fail(f"{members[run]}: column {c} holds a count below 0 or above 2³¹ − 1")
                    values[:, j] = column
                ids = kept["ids"]
                if partial:
                    mine = table.column(EVALUATED)
                    if (pc.sum(mine).as_py() or 0) != n_own[run]:
                        raise self.fail(f"{members[run]}: {EVALUATED} must mark the run's n_documents rows")
                    at = np.flatnonzero(mine.to_numpy(zero_copy_only=False))
                    ids, values = ids[at], values[at]
                kept[run] = ids, values
            return *kept[run], list(columns)

        return load
