"""Scoring on Dask (cophe_core.scale.cluster) on a local cluster of two worker processes: every figure equals the
in-memory path's, whatever the partitions and the document order; every row is scored or rejected. The Spark
recipe's tests are in test_spark.py."""

from __future__ import annotations

import sys
import types

import dask
import dask.dataframe as dd
import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from distributed import Client, LocalCluster
from hypothesis import given, settings
from hypothesis import strategies as st

from cophe_core import InputError, NothingScorable, score_files
from cophe_core.inputs.readers import RawLabels, read_frame
from cophe_core.inputs.synthetic import generate_gold, generate_run
from cophe_core.metrics import NodeCounts
from cophe_core.ontology import icd9_ontology
from cophe_core.ontology.custom import load_hierarchy
from cophe_core.scale.cluster import score_dask
from cophe_core.scale.pipeline import StreamedEvaluation, score_dataset
from cophe_core.scale.sources import frame_label_chunk
from tests.conftest import examples, long_csv
from tests.core.test_stream import (
    BAD_GOLD,
    BAD_PRED,
    ICD9,
    UNLISTED,
    assert_same,
    in_memory,
    sorted_rows,
    write_parquet,
)


@pytest.fixture(scope="module")
def client():
    # Worker processes are spawned, and a spawned process first runs the parent's __main__ module. In a
    # pytest worker that has run the dashboard under AppTest, __main__ is the dashboard's app.py, which
    # cannot run there: the workers start with a bare __main__ instead.
    main = sys.modules["__main__"]
    sys.modules["__main__"] = types.ModuleType("__main__")
    try:
        with (
            LocalCluster(
                n_workers=2, threads_per_worker=1, processes=True, dashboard_address=None, memory_limit="1GiB"
            ) as cluster,
            Client(cluster) as c,
        ):
            yield c
    finally:
        sys.modules["__main__"] = main


def shuffled(frame: pd.DataFrame, seed: int, npartitions: int):
    """The rows in another order, as a Dask DataFrame of many partitions."""
    order = np.random.default_rng(seed).permutation(len(frame))
    return dd.from_pandas(frame.iloc[order].reset_index(drop=True), npartitions=npartitions, sort=False)


@pytest.mark.parametrize("run", ["run_siblings.csv", "run_overcoder.csv"])
def test_the_sample_on_two_workers_equals_in_memory(client, run):
    ev, rejected, _ = in_memory(ICD9 / "gold.csv", ICD9 / run)
    gold = pd.read_csv(ICD9 / "gold.csv", dtype=str)
    pred = pd.read_csv(ICD9 / run, dtype=str)
    sv = score_dask(shuffled(gold, 0, 7), shuffled(pred, 1, 4), client=client)
    assert_same(ev, sv)
    assert len(sv.rejected) == len(rejected) == 0
    small = score_dask(shuffled(gold, 2, 1), shuffled(pred, 3, 1), client=client, max_level="e0")
    ev_small, _, _ = in_memory(ICD9 / "gold.csv", ICD9 / run, max_level="e0")
    assert_same(ev_small, small)


def test_unlisted_codes_in_many_partitions_extend_the_ontology_once(client):
    rng = np.random.default_rng(1)
    listed = ["401.9", "428.0", "250.00", "V45.81", "E849.7", "38.93", "364.3"]
    gold = [(f"d{i}", str(rng.choice(listed + UNLISTED))) for i in range(300) for _ in range(3)]
    pred = [(d, c if rng.random() < 0.6 else str(rng.choice(listed + UNLISTED))) for d, c in gold]
    gold.append(("d299", "016.95"))  # once, in the last document
    gold.append(("d7", "401.77"))  # unlisted, once: in one partition only, its node id set by all the codes
    g, p = (pd.DataFrame(rows, columns=["doc_id", "code"]) for rows in (gold, pred))
    s = score_files(long_csv(gold), {"pred": long_csv(pred)})
    ev = s.evaluation("pred")
    assert ev.ontology.n_nodes > icd9_ontology().n_nodes
    sv = score_dask(shuffled(g, 4, 9), shuffled(p, 5, 6), client=client, npartitions=5)
    assert_same(ev, sv)
    assert sv.ontology.keys.tolist() == ev.ontology.keys.tolist()
    assert len(sv.flagged) == len(s.corpus.flagged) > 0


def rows_of(table: pd.DataFrame) -> list[tuple[str, str, str]]:
    return sorted(zip(table.value.astype(str), table.reason.astype(str), table.kind.astype(str)))


def test_every_row_is_scored_or_rejected(client, tmp_path):
    g, p = tmp_path / "gold.csv", tmp_path / "pred.csv"
    g.write_text(BAD_GOLD)
    p.write_text(BAD_PRED)
    s = score_files(g, {"pred": p})
    read = {"dtype": str, "keep_default_na": False, "skip_blank_lines": True}
    sv = score_dask(
        dd.from_pandas(pd.read_csv(g, **read), npartitions=3),
        dd.from_pandas(pd.read_csv(p, **read), npartitions=2),
        client=client,
    )
    assert_same(s.evaluation("pred"), sv)
    assert rows_of(sv.rejected) == rows_of(s.corpus.rejected) and len(sv.rejected) == 7
    assert rows_of(sv.flagged) == rows_of(s.corpus.flagged)
    assert set(sv.rejected.file) <= {f"gold (partition {i})" for i in range(3)} | {"pred (partition 1)"}
    assert any("duplicate" in n for n in sv.notes) and any("not in the gold standard" in n for n in sv.notes)


def test_parquet_datasets_by_path(client, tmp_path):
    ev, _, _ = in_memory(ICD9 / "gold.csv", ICD9 / "run_siblings.csv")
    rng = np.random.default_rng(6)
    for side, file, k in (("gold", "gold.csv", 3), ("pred", "run_siblings.csv", 4)):
        frame = pd.read_csv(ICD9 / file, dtype=str)
        frame = frame.iloc[rng.permutation(len(frame))]
        for i, part in frame.groupby(np.arange(len(frame)) % k):
            write_parquet(part, tmp_path / side / f"part-{i}.parquet")
    sv = score_dask(str(tmp_path / "gold"), tmp_path / "pred", client=client)
    assert_same(ev, sv)
    bare = score_dask(str(tmp_path / "gold"), tmp_path / "pred", client=client, keep_documents=False)
    assert bare.to_dict() == ev.to_dict() and bare.document_values is None


def test_a_hive_key_is_a_column_of_text_as_the_streamed_path_reads_it(client, tmp_path):
    # Gold partitioned by its document ids, 07 and 10: read as numbers (Dask's own way), "07" became 7 and
    # matched no prediction; the streamed path reads the directory's text.
    gold = pd.DataFrame({"doc_id": ["07", "07", "10"], "code": ["250.00", "401.9", "428.0"]})
    gold.to_parquet(tmp_path / "gold", partition_cols=["doc_id"])
    write_parquet(
        pd.DataFrame({"doc_id": ["07", "10"], "code": ["250.00", "428.0"]}), tmp_path / "pred" / "p.parquet"
    )
    streamed = score_dataset(tmp_path / "gold", tmp_path / "pred")
    on_dask = score_dask(str(tmp_path / "gold"), str(tmp_path / "pred"), client=client)
    flat = on_dask.score("flat")
    assert flat == streamed.score("flat") and (flat.tp, flat.fp, flat.fn) == (2, 0, 1)
    assert sorted(on_dask.docs) == ["07", "10"]
    # a key beside a document column is an ordinary column of text, and changes no figure
    sharded = pd.read_csv(ICD9 / "gold.csv", dtype=str)
    sharded.assign(shard=sharded["doc_id"].str[-1]).to_parquet(tmp_path / "sharded", partition_cols=["shard"])
    ev, _, _ = in_memory(ICD9 / "gold.csv", ICD9 / "run_siblings.csv")
    write_parquet(pd.read_csv(ICD9 / "run_siblings.csv", dtype=str), tmp_path / "run" / "run.parquet")
    assert_same(ev, score_dask(str(tmp_path / "sharded"), str(tmp_path / "run"), client=client))


def test_a_side_with_nothing_scorable_is_the_same_error(client):
    gold = dd.from_pandas(
        pd.DataFrame({"doc_id": ["1", "2", ""], "code": ["XYZ", "QQQ", "401.9"]}), npartitions=2
    )
    pred = dd.from_pandas(pd.DataFrame({"doc_id": ["1"], "code": ["401.9"]}), npartitions=1)
    with pytest.raises(NothingScorable, match=r"^gold: none of its 3 rows can be scored") as e:
        score_dask(gold, pred, client=client, ontology="icd9")
    assert sorted(e.value.rejected.value) == ["401.9", "QQQ", "XYZ"]  # the reader's (no id), then the codes
    empty = dd.from_pandas(
        pd.DataFrame({"doc_id": pd.Series(dtype=str), "code": pd.Series(dtype=str)}), npartitions=1
    )
    with pytest.raises(NothingScorable, match="the gold standard holds no codes"):
        score_dask(empty, pred, client=client, ontology="icd9")
    undotted = dd.from_pandas(pd.DataFrame({"doc_id": ["1"], "code": ["4019"]}), npartitions=1)
    with pytest.raises(NothingScorable, match="system='diagnosis'") as e:
        score_dask(undotted, pred, client=client, ontology="icd9")
    assert e.value.needs_system
    # a run without rows predicts nothing
    sv = score_dask(pred, empty, client=client, ontology="icd9")
    assert sv.score("flat").fn == 1


def test_without_dask_the_message_says_what_to_install(monkeypatch):
    monkeypatch.setitem(sys.modules, "dask", None)
    with pytest.raises(ImportError, match=r'pip install "\.\[dask\]" in the folder of a cophe checkout'):
        score_dask("gold/", "pred/")


def test_a_dask_job_writes_an_aggregate_the_dashboard_reads(client):
    from cophe_core.scale.aggregate import aggregate_of, write_aggregate
    from cophe_core.scale.aggregate_reader import read_aggregate

    gold = pd.read_csv(ICD9 / "gold.csv", dtype=str)
    pred = pd.read_csv(ICD9 / "run_siblings.csv", dtype=str)
    sv = score_dask(shuffled(gold, 0, 3), shuffled(pred, 1, 2), client=client, max_level="chapter")
    back = read_aggregate(
        write_aggregate(aggregate_of({"siblings": sv}, max_level="block", slice_edges=None))
    )
    ev, _, _ = in_memory(ICD9 / "gold.csv", ICD9 / "run_siblings.csv", max_level="block")
    got = back.evaluation("siblings")
    for table in ("levels_table", "nodes", "documents"):
        pd.testing.assert_frame_equal(
            getattr(got, table).reset_index(drop=True),
            getattr(ev, table).reset_index(drop=True),
            check_dtype=False,
        )


# ------------------------------------------------------------------ the streamed path's reading and kernel


class Recording:
    """A client that hands every call on to a real one and keeps what the cluster sends back to it."""

    def __init__(self, client: Client):
        self.client = client
        self.received: list[object] = []

    def scatter(self, *args, **kw):
        return self.client.scatter(*args, **kw)

    def compute(self, *args, **kw):
        return self.client.compute(*args, **kw)

    def nthreads(self):
        return self.client.nthreads()

    def persist(self, *args, **kw):  # the results stay on the workers: nothing reaches the client
        return self.client.persist(*args, **kw)

    def gather(self, futures):
        got = self.client.gather(futures)
        self.received.append(got)
        return got


def leaves(found):
    if isinstance(found, list | tuple):
        for item in found:
            yield from leaves(item)
    else:
        yield found


def test_only_plain_columns_reach_the_client(client):
    """The counts come back as plain columns (data frames of numbers and text, numbers, text), never a
    pickled object of cophe's (a PartitionCounts, a NodeCounts, a code table)."""
    ev, _, _ = in_memory(ICD9 / "gold.csv", ICD9 / "run_siblings.csv")
    gold = pd.read_csv(ICD9 / "gold.csv", dtype=str)
    pred = pd.read_csv(ICD9 / "run_siblings.csv", dtype=str)
    recording = Recording(client)
    sv = score_dask(shuffled(gold, 0, 5), shuffled(pred, 1, 3), client=recording, npartitions=4)
    assert_same(ev, sv)
    received = list(leaves(recording.received))
    odd = {
        type(x).__name__
        for x in received
        if not isinstance(x, pd.DataFrame | np.ndarray | np.generic | int | str)
    }
    assert not odd
    for frame in (x for x in received if isinstance(x, pd.DataFrame)):
        for column in frame.columns:  # text (the rejected rows' kind is a str too), numbers, or missing
            values = frame[column].to_numpy(dtype=object)
            assert all(v is None or isinstance(v, str | int | float | np.generic) for v in values), column
    assert any(isinstance(x, pd.DataFrame) and "tp" in x.columns for x in received)  # the summed counts


def tiles(folder, n_tiles: int, seed: int) -> None:
    """A small dataset as the benchmark writes it: a synthetic gold standard and run tiled with fresh ids
    into hive partitions, the predictions shuffled within each tile."""
    gold = generate_gold(150, seed=seed)
    pred = generate_run(gold, "siblings", seed=seed + 1)
    rng = np.random.default_rng(seed)
    for k in range(n_tiles):
        for side, frame in (("gold", gold), ("pred", pred)):
            f = frame.iloc[rng.permutation(len(frame))] if side == "pred" else frame
            f = f[["doc_id", "code"]].assign(doc_id=f"T{k}-" + f["doc_id"].astype(str))
            write_parquet(f, folder / side / f"tile={k}" / "part.parquet")


def assert_same_counts(a: NodeCounts, b: NodeCounts) -> None:
    for name in ("gold", "predicted", "tp", "set_tp", "flat_tp", "docs_over", "docs_under", "shared_gold"):
        np.testing.assert_array_equal(getattr(a, name), getattr(b, name), err_msg=name)


def test_a_tiled_dataset_counts_as_the_streamed_path_to_the_last_count(client, tmp_path):
    """The benchmark's kind of data, read from Parquet by both: every per-node count, every document's
    counts and the documents themselves equal the streamed path's, shuffled into more and fewer partitions
    than there are files."""
    tiles(tmp_path, 4, seed=3)
    streamed = score_dataset(tmp_path / "gold", tmp_path / "pred", chunk_rows=1_000)
    assert streamed.n_documents == 600
    for npartitions in (3, 11):
        on_dask = score_dask(
            str(tmp_path / "gold"), str(tmp_path / "pred"), client=client, npartitions=npartitions
        )
        assert_same_counts(on_dask.node_counts, streamed.node_counts)
        pd.testing.assert_frame_equal(on_dask.documents, streamed.documents)
        assert on_dask.to_dict() == streamed.to_dict()


def test_integer_and_padded_ids_and_joined_codes_as_in_memory(client):
    """Partitions the Arrow reading takes (integer ids; ids equal once stripped are one document) and one
    it leaves to the readers (codes joined in a cell), in one run: the in-memory figures."""
    gold = pd.DataFrame(
        {"doc_id": [7, 7, 8, 9, 10, 10], "code": ["401.9", "428.0", "250.00", "XYZ", "401.35", "401.9"]}
    )
    pred = pd.DataFrame(
        {"doc_id": [" 7", "7 ", "8", "10", "11"], "code": ["401.9", "428.1", "250.01", "401.9", "V45.81"]}
    )
    joined = pd.DataFrame({"doc_id": ["9", "12"], "code": ["401.9;428.0", "250.00"]})
    s = score_files(
        long_csv(list(zip(gold.doc_id.astype(str), gold.code))),
        {"pred": long_csv(list(zip(pred.doc_id, pred.code)) + list(zip(joined.doc_id, joined.code)))},
    )
    both = dd.concat([dd.from_pandas(pred, npartitions=2), dd.from_pandas(joined, npartitions=1)])
    sv = score_dask(dd.from_pandas(gold, npartitions=2), both, client=client)
    assert_same(s.evaluation("pred"), sv)
    assert sorted(sv.docs) == ["10", "11", "12", "7", "8", "9"]
    assert sorted(sv.rejected.value) == sorted(s.corpus.rejected.value) == ["XYZ"]
    assert sorted(sv.flagged.value) == ["401.35"]


def test_a_dag_hierarchy_is_counted_as_in_memory(client):
    """A user's hierarchy with a shared child (no tree: the integer kernel does not count it) is counted by
    the in-memory evaluation of the same rows."""
    dag = load_hierarchy(
        b"child,parent\nroot,\nA,root\nB,root\na1,A\nab,A\nab,B\nb1,B\nx,ab\n", name="dag.csv"
    )
    gold = [("d1", "x"), ("d1", "a1"), ("d2", "b1"), ("d3", "x"), ("d3", "x")]
    pred = [("d1", "x"), ("d2", "a1"), ("d3", "ab"), ("d4", "b1")]
    ev = score_files(long_csv(gold), {"r": long_csv(pred)}, ontology=dag).evaluation("r")
    frames = [
        dd.from_pandas(pd.DataFrame(rows, columns=["doc_id", "code"]), npartitions=2) for rows in (gold, pred)
    ]
    sv = score_dask(*frames, client=client, ontology=dag, npartitions=3)
    pd.testing.assert_frame_equal(ev.levels_table, sv.levels_table)
    pd.testing.assert_frame_equal(ev.nodes, sv.nodes)
    pd.testing.assert_frame_equal(ev.documents, sv.documents)
    assert ev.to_dict() == sv.to_dict() and ev.score("cophe").tp == 7


IDS = st.sampled_from(["1", "2", " 1", "1 ", "", " ", "nan", "None", None, "x" * 257, "d;3"])
CODES = st.sampled_from(["401.9", "428.0", " 401.9", "", "  ", None, "XYZ", "9" * 65, "V45.81 "])


@settings(max_examples=examples(150), deadline=None)
@given(st.lists(st.tuples(IDS, CODES), min_size=1, max_size=12), st.booleans())
def test_a_partition_read_on_arrow_arrays_is_read_as_the_readers_read_it(rows, labels_only):
    """frame_label_chunk (how a Dask partition is read) against the readers' own reading of the same
    frame: the same scored rows with their lines, the same documents, the same rejected rows."""
    frame = pd.DataFrame(rows, columns=["doc_id", "code"], dtype=object)
    frame.index = pd.RangeIndex(1, len(frame) + 1)
    chunk = frame_label_chunk(frame, "p", labels_only=labels_only, doc_col=None, code_col=None)
    assert chunk is not None
    raw = read_frame(frame.copy(), name="p", labels_only=labels_only)
    assert isinstance(raw, RawLabels)
    got = sorted(
        zip(chunk.docs.take(chunk.doc_at).to_pylist(), chunk.codes[chunk.code_at], chunk.lines.tolist())
    )
    want = sorted(zip(raw.pairs.doc_id, raw.pairs.code, raw.pairs.line.tolist()))
    assert got == want
    assert set(chunk.docs.take(chunk.doc_at).to_pylist()) | set(
        chunk.docs.take(chunk.alone).to_pylist()
    ) == set(raw.docs)
    pd.testing.assert_frame_equal(sorted_rows(chunk.rejected), sorted_rows(raw.rejected))


@settings(max_examples=examples(60), deadline=None)
@given(st.lists(st.tuples(st.integers(-3, 10**15), CODES), min_size=1, max_size=12))
def test_integer_ids_read_on_arrow_arrays_as_the_readers_read_them(rows):
    frame = pd.DataFrame(rows, columns=["doc_id", "code"]).astype({"doc_id": np.int64})
    frame.index = pd.RangeIndex(1, len(frame) + 1)
    chunk = frame_label_chunk(frame, "g", labels_only=True, doc_col=None, code_col=None)
    raw = read_frame(frame.copy(), name="g", labels_only=True)
    assert chunk is not None and isinstance(raw, RawLabels)
    got = sorted(
        zip(chunk.docs.take(chunk.doc_at).to_pylist(), chunk.codes[chunk.code_at], chunk.lines.tolist())
    )
    assert got == sorted(zip(raw.pairs.doc_id, raw.pairs.code, raw.pairs.line.tolist()))
    assert set(chunk.docs.take(chunk.doc_at).to_pylist()) | set(
        chunk.docs.take(chunk.alone).to_pylist()
    ) == set(raw.docs)


@settings(max_examples=examples(80), deadline=None)
@given(st.lists(st.tuples(IDS, CODES), min_size=2, max_size=12), st.data())
def test_arrow_columns_in_several_chunks_are_read_on_arrow_arrays(rows, data):
    """Dask reads a Parquet file's row groups into Arrow-backed columns of several chunks: such a partition
    is read on Arrow arrays all the same (not left to the readers' row-by-row rules, several times slower),
    with the readers' rows, documents and rejected rows."""
    cut = data.draw(st.integers(1, len(rows) - 1))
    columns = {
        name: pd.arrays.ArrowStringArray(
            pa.chunked_array([[r[i] for r in rows[:cut]], [r[i] for r in rows[cut:]]], pa.string())
        )
        for i, name in enumerate(("doc_id", "code"))
    }
    frame = pd.DataFrame(columns, index=pd.RangeIndex(1, len(rows) + 1))
    chunk = frame_label_chunk(frame, "p", labels_only=True, doc_col=None, code_col=None)
    assert chunk is not None
    raw = read_frame(
        pd.DataFrame(rows, columns=["doc_id", "code"], dtype=object, index=frame.index), name="p"
    )
    assert isinstance(raw, RawLabels)
    got = sorted(
        zip(chunk.docs.take(chunk.doc_at).to_pylist(), chunk.codes[chunk.code_at], chunk.lines.tolist())
    )
    assert got == sorted(zip(raw.pairs.doc_id, raw.pairs.code, raw.pairs.line.tolist()))
    assert set(chunk.docs.take(chunk.doc_at).to_pylist()) | set(
        chunk.docs.take(chunk.alone).to_pylist()
    ) == set(raw.docs)
    pd.testing.assert_frame_equal(sorted_rows(chunk.rejected), sorted_rows(raw.rejected))


def test_each_partition_is_read_once():
    """Pass 1's reading of a partition (its encoded rows) stays in memory for pass 2, which places those rows
    rather than reading the partition again; the figures are the in-memory path's."""
    ev, _, _ = in_memory(ICD9 / "gold.csv", ICD9 / "run_siblings.csv")
    reads: list[tuple[str, int]] = []

    def part(frame: pd.DataFrame, side: str, i: int) -> pd.DataFrame:
        reads.append((side, i))
        return frame

    sides = []
    for side, path in (("gold", ICD9 / "gold.csv"), ("pred", ICD9 / "run_siblings.csv")):
        frame = pd.read_csv(path, dtype=str)
        pieces = np.array_split(np.arange(len(frame)), 3)
        sides.append(
            dd.from_delayed(
                [dask.delayed(part)(frame.iloc[p], side, i) for i, p in enumerate(pieces)],
                meta=frame.iloc[:0],
            )
        )
    # in this process (a shuffle of tasks: with a distributed client about, Dask would pick its peer-to-peer one)
    with dask.config.set({"scheduler": "sync", "dataframe.shuffle.method": "tasks"}):
        sv = score_dask(*sides)
    assert_same(ev, sv)
    assert sorted(reads) == [(s, i) for s in ("gold", "pred") for i in range(3)]


# ------------------------------------------------------------------ few tasks, few results (issue 28.2)


def test_pass_two_places_each_workers_partitions_in_one_task_where_they_are(client, tmp_path):
    """The partitions are placed and dealt in one task per worker (not one per partition: the scheduler and
    the transfers then handle partitions times count tasks pieces), each run by the worker that holds its
    partitions (none fetched from the other); the figures are the streamed path's."""
    from distributed import get_task_stream

    tiles(tmp_path, 12, seed=5)
    streamed = score_dataset(tmp_path / "gold", tmp_path / "pred", chunk_rows=1_000)
    with get_task_stream(client) as stream:
        on_dask = score_dask(str(tmp_path / "gold"), str(tmp_path / "pred"), client=client, npartitions=5)
    assert on_dask.to_dict() == streamed.to_dict()
    pd.testing.assert_frame_equal(on_dask.documents, streamed.documents)
    prepared = [t for t in stream.data if str(t["key"]).startswith("_prepare")]
    assert 1 <= len(prepared) <= 2  # 24 partitions, two workers
    assert not [s for t in prepared for s in t["startstops"] if s["action"] == "transfer"]
    assert len(stream.data) < 24 * 4 + 5 * 6  # (it was about 24 * 5 + 5 * 30)


def test_the_client_receives_a_summary_a_side_and_the_documents_in_order(client):
    """Pass 1's codes come back as one summary a side (a tree of tasks joins the partitions'); the count
    tasks deal the documents by ranges of their ids, about as many each, and send them sorted, so that
    the client's table is in order as it arrives."""
    gold = pd.read_csv(ICD9 / "gold.csv", dtype=str)
    pred = pd.read_csv(ICD9 / "run_siblings.csv", dtype=str)
    recording = Recording(client)
    sv = score_dask(shuffled(gold, 0, 9), shuffled(pred, 1, 7), client=recording, npartitions=4)
    ev, _, _ = in_memory(ICD9 / "gold.csv", ICD9 / "run_siblings.csv")
    assert_same(ev, sv)
    received = [x for got in recording.received for x in got]
    summaries = [x for x in received if isinstance(x, tuple) and len(x) == 2 and isinstance(x[1], list)]
    assert len(summaries) == 2 and sum(len(s[1]) for s in summaries) == 16  # a side each, 16 partitions
    tables = [x for x in received if isinstance(x, tuple) and len(x) == 3 and isinstance(x[2], list)]
    ids = [t[0]["doc_id"].astype(str).tolist() for t in tables]
    assert len(ids) == 4 and all(len(i) == len(t[1]) for i, t in zip(ids, tables))
    assert all(200 <= len(i) <= 300 for i in ids)  # 1,000 documents, four count tasks
    assert all(i == sorted(i) for i in ids)
    firsts = sorted(ids, key=lambda i: i[0])
    assert all(a[-1] < b[0] for a, b in zip(firsts, firsts[1:]))  # ranges one after another


def test_a_document_with_hundreds_of_codes_keeps_its_counts(client):
    """Per-document counts travel in the narrowest integers that hold them: a document with more than 255
    codes keeps its counts, equal to the in-memory path's."""
    codes = [c for c in icd9_ontology().keys.astype(str) if "." in c][:1_000]
    gold = [("big", c) for c in codes] + [("small", "401.9")]
    pred = [("big", c) for c in codes[300:700]] + [("small", "401.9")]
    ev = score_files(long_csv(gold), {"pred": long_csv(pred)}).evaluation("pred")
    frames = [
        dd.from_pandas(pd.DataFrame(rows, columns=["doc_id", "code"]), npartitions=3) for rows in (gold, pred)
    ]
    sv = score_dask(*frames, client=client, npartitions=2)
    assert_same(ev, sv)
    assert sv.documents.set_index("doc_id").to_numpy().max() > 255


# ------------------------------------------------------------------ a Parquet dataset read file by file (issue 28.2)

GOLD_ROWS = [
    ("1", "401.9"),
    ("1", "XYZ"),  # malformed
    ("", "428.0"),  # no document
    ("2", ""),  # an empty code: document 2 is evaluated, with no gold code
    ("3", "4019"),  # undotted
    ("4", "9" * 70),  # too long
    ("4", "250.00"),
    ("4", "250.00"),  # duplicate
    ("5", "401.35"),  # unlisted: flagged
    ("1", "250.00"),  # document 1 again, in another row group
    ("6", "428.0"),
    ("6", "XYZ"),
    ("", "401.9"),
    ("9", ""),  # document 9's only row, in the last row group: evaluated, with no gold code
]
PRED_ROWS = [("1", "401.1"), ("3", "250.01"), ("6", "428.0"), ("6", ""), ("7", "E999.9"), ("1", "401.9")]
JOINED_ROWS = [("8", "401.9;428.0"), ("2", "250.00")]  # codes joined in a cell: the readers split them


def write_groups(rows, path, group_rows: int) -> None:
    """Rows as a Parquet file of row groups of ``group_rows`` rows (each one chunk of the reading)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    table = pa.table({"doc_id": [r[0] for r in rows], "code": [r[1] for r in rows]})
    pq.write_table(table, path, row_group_size=group_rows)


def bad_dataset(root) -> None:
    """The rows every check rejects or flags, as the benchmark's data lays them out (a hive folder beside a
    plain file), in files of several row groups, one of them of joined codes."""
    write_groups(GOLD_ROWS[:7], root / "gold" / "a.parquet", 3)
    write_groups(GOLD_ROWS[7:], root / "gold" / "tile=1" / "b.parquet", 2)
    write_groups(PRED_ROWS + JOINED_ROWS, root / "pred" / "p.parquet", 3)


def assert_as_streamed(on_dask: StreamedEvaluation, streamed: StreamedEvaluation) -> None:
    """Every figure, document, rejected and flagged row (file and line), and note, of the streamed path."""
    assert on_dask.to_dict() == streamed.to_dict()
    assert_same_counts(on_dask.node_counts, streamed.node_counts)
    pd.testing.assert_frame_equal(on_dask.documents, streamed.documents)
    for table in ("rejected", "flagged"):
        pd.testing.assert_frame_equal(
            sorted_rows(getattr(on_dask, table)), sorted_rows(getattr(streamed, table))
        )
    assert sorted(on_dask.warnings) == sorted(streamed.warnings)


def test_a_parquet_dataset_is_read_file_by_file_as_the_streamed_path_reads_it(client, tmp_path):
    """Each file of a local Parquet dataset is read by the workers on Arrow arrays (no Dask DataFrame),
    its row groups one after another: the rejected rows quote the file and its row, as the streamed path
    quotes them, and a row group of joined codes goes through the readers."""
    from distributed import get_task_stream

    bad_dataset(tmp_path)
    streamed = score_dataset(tmp_path / "gold", tmp_path / "pred")
    with get_task_stream(client) as stream:
        on_dask = score_dask(str(tmp_path / "gold"), tmp_path / "pred", client=client, npartitions=3)
    assert_as_streamed(on_dask, streamed)
    # worked out by hand: a row's number in its file, counted across its row groups
    rejected = [("gold/a.parquet", n) for n in (2, 3, 4, 5, 6)] + [
        ("gold/tile=1/b.parquet", n) for n in (5, 6, 7)
    ]
    assert sorted(zip(on_dask.rejected.file, on_dask.rejected.line)) == [*rejected, ("pred/p.parquet", 4)]
    assert sorted(zip(on_dask.flagged.file, on_dask.flagged.line)) == [
        ("gold/tile=1/b.parquet", 2),
        ("pred/p.parquet", 5),
    ]
    assert {"8", "9"} <= set(on_dask.docs)  # the joined codes' document; a document without a code
    keys = [str(t["key"]) for t in stream.data]
    assert sum(k.startswith("_read_files") for k in keys) == 3  # a task a file (for so few: 4 batches a side)
    assert not [k for k in keys if "parquet" in k.lower()]  # nothing read by Dask's reader


def test_files_of_the_same_name_on_both_sides_are_told_apart(client, tmp_path):
    """Two folders of the same name hold files of the same names: the rejected rows say which side's file,
    as the streamed path says it."""
    write_groups(GOLD_ROWS, tmp_path / "a" / "data" / "x.parquet", 4)
    write_groups(PRED_ROWS, tmp_path / "b" / "data" / "x.parquet", 4)
    streamed = score_dataset(tmp_path / "a" / "data", tmp_path / "b" / "data")
    on_dask = score_dask(tmp_path / "a" / "data", tmp_path / "b" / "data", client=client)
    assert_as_streamed(on_dask, streamed)
    assert set(on_dask.rejected.file) == {"data/x.parquet (gold standard)", "data/x.parquet (run pred)"}


def test_a_file_of_scores_is_refused_by_name(client, tmp_path):
    """A file the readers read as scores (a score column) is refused, naming it, as the streamed path does."""
    write_groups(GOLD_ROWS, tmp_path / "gold" / "g.parquet", 5)
    scores = pd.DataFrame({"doc_id": ["1", "1"], "code": ["401.9", "428.0"], "score": [0.9, 0.2]})
    write_parquet(scores, tmp_path / "pred" / "s.parquet")
    with pytest.raises(InputError, match=r"^pred/s\.parquet: holds scores"):
        score_dask(tmp_path / "gold", tmp_path / "pred", client=client)


def test_files_read_in_batches_keep_their_names_and_rows(client, tmp_path):
    """A task of pass 1 reads a batch of files (nine files a side: four batches): each rejected row still
    quotes its own file and row, and a side with nothing scorable lists each file's codes under its name,
    as the streamed path does."""
    ids = [f"d{k}" for k in range(9)]
    for k, doc in enumerate(ids):
        rows = [(doc, "401.9"), (doc, "428.0")]
        rows.insert(k % 3, (doc, f"XYZ{k}"))  # rejected, at row 1, 2 or 3 of file k
        write_groups(rows, tmp_path / "gold" / f"g{k}.parquet", 2)
        write_groups([(doc, "401.9"), (doc, "250.00")], tmp_path / "pred" / f"p{k}.parquet", 2)
        write_groups([(doc, f"QQ{k}"), (doc, "XYZ")], tmp_path / "bad" / f"b{k}.parquet", 2)
    streamed = score_dataset(tmp_path / "gold", tmp_path / "pred")
    on_dask = score_dask(tmp_path / "gold", tmp_path / "pred", client=client)
    assert_as_streamed(on_dask, streamed)
    assert sorted(zip(on_dask.rejected.file, on_dask.rejected.line, on_dask.rejected.value)) == [
        (f"gold/g{k}.parquet", k % 3 + 1, f"XYZ{k}") for k in range(9)
    ]
    with pytest.raises(NothingScorable) as streamed_error:
        score_dataset(tmp_path / "gold", tmp_path / "bad", ontology="icd9")
    with pytest.raises(NothingScorable) as dask_error:
        score_dask(tmp_path / "gold", tmp_path / "bad", client=client, ontology="icd9")
    listed = sorted(zip(dask_error.value.rejected.file, dask_error.value.rejected.value))
    assert listed == sorted(zip(streamed_error.value.rejected.file, streamed_error.value.rejected.value))
    assert ("bad/b4.parquet", "QQ4") in listed and len(listed) == 18
