"""Streamed scoring (cophe_core.scale.pipeline): every figure equals the in-memory path's, whatever the split of the
inputs into files, partitions, chunks and buckets; every row is scored or rejected; the CLI streams folders
and globs with the same JSON."""

from __future__ import annotations

import functools
import json
import pickle

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from cophe_core import NothingScorable, score_files
from cophe_core.breakdown.stats import bootstrap
from cophe_core.cli import main
from cophe_core.inputs.datasets import dataset_files, is_dataset
from cophe_core.inputs.readers import InputError
from cophe_core.metrics import Evaluation
from cophe_core.ontology import icd9_ontology
from cophe_core.scale import pipeline
from cophe_core.scale.pipeline import StreamedEvaluation, score_dataset
from cophe_core.scale.spill import GATHERED_ROWS, HELD_BYTES, Spill
from cophe_core.scoring.kernel import PartitionCounts, count_partition, resolve_table
from tests.conftest import ROOT, examples, long_csv

ICD9, ICD10 = ROOT / "sample_data" / "icd9", ROOT / "sample_data" / "icd10"
SAMPLES = [
    (ICD9, "run_siblings.csv"),
    (ICD9, "run_overcoder.csv"),
    (ICD10, "run_overcoder.csv"),  # one ICD-10 run: loading that ontology takes seconds
]


def in_memory(gold, pred, **kw) -> tuple[Evaluation, pd.DataFrame, list[str]]:
    max_level = kw.pop("max_level", None)
    s = score_files(gold, {"pred": pred}, **kw)
    return s.evaluation("pred", max_level=max_level), s.corpus.rejected, s.corpus.warnings


def sorted_rows(table: pd.DataFrame) -> pd.DataFrame:
    return (
        table.astype({"line": np.int64, "value": str, "file": str, "reason": str, "kind": str})
        .sort_values(["file", "line", "value"])
        .reset_index(drop=True)
    )


def assert_same(ev: Evaluation, sv: StreamedEvaluation, *, by_code: bool = False) -> None:
    """Every figure of the streamed evaluation equals the in-memory one's."""
    pd.testing.assert_frame_equal(ev.levels_table, sv.levels_table)
    pd.testing.assert_frame_equal(ev.macro_table, sv.macro_table)
    if ev.systems_table is not None or sv.systems_table is not None:
        pd.testing.assert_frame_equal(ev.systems_table, sv.systems_table)
    a, b = ev.nodes, sv.nodes
    if by_code:  # node ids of unlisted codes are allowed to differ; everything else must not
        a, b = (t.drop(columns=["node", "parent"]).sort_values("code", ignore_index=True) for t in (a, b))
    pd.testing.assert_frame_equal(a, b)
    pd.testing.assert_frame_equal(
        ev.documents.sort_values("doc_id", ignore_index=True),
        sv.documents.sort_values("doc_id", ignore_index=True),
    )
    assert ev.to_dict() == sv.to_dict()
    for measure, level in (("cophe", "overall"), ("set_based", "e0"), ("flat", "leaf")):
        assert ev.score(measure, level) == sv.score(measure, level)
        a_c, b_c = ev.document_counts(measure, level), sv.document_counts(measure, level)
        order = np.argsort(ev.docs)
        assert (a_c.tp[order] == b_c.tp).all() and (a_c.fn[order] == b_c.fn).all()
    assert ev.macro("cophe", "e0") == sv.macro("cophe", "e0")


# ------------------------------------------------------------------ the bundled samples


def holding(monkeypatch, held_bytes: int, gathered_rows: int = GATHERED_ROWS):
    """Streamed scoring whose spill holds at most ``held_bytes`` in memory (0: every bucket in its file from
    the first row; a few kB: held, then every held batch written to the files midway), and gathers
    ``gathered_rows`` rows over all its buckets before it writes them."""
    spill = functools.partial(Spill, held_bytes=held_bytes, gathered_rows=gathered_rows)
    monkeypatch.setattr(pipeline, "Spill", spill)


@pytest.mark.parametrize(
    ("held_bytes", "gathered_rows"),
    [(0, GATHERED_ROWS), (0, 2_000), (40_000, GATHERED_ROWS), (HELD_BYTES, GATHERED_ROWS)],
    ids=["in-files", "in-files-written-often", "written-midway", "held"],
)
@pytest.mark.parametrize(("folder", "run"), SAMPLES, ids=[f"{f.name}-{r}" for f, r in SAMPLES])
def test_a_sample_streamed_in_many_buckets_equals_in_memory(
    monkeypatch, folder, run, held_bytes, gathered_rows
):
    gold, pred = folder / "gold.csv", folder / run
    ev, rejected, warnings = in_memory(gold, pred)
    holding(monkeypatch, held_bytes, gathered_rows)
    sv = score_dataset(gold, pred, chunk_rows=2_000)  # about 20 buckets, blocks of a few hundred lines
    assert_same(ev, sv)
    assert sv.warnings == warnings
    assert len(sv.rejected) == len(rejected) == 0


def test_the_spill_holds_rows_up_to_its_bound_then_writes_every_bucket_to_its_file(tmp_path):
    """Chunks of three files (gold, gold, predicted) spilled, held or written: every row comes back once, with
    its document, side, file and line. Each file lists the ids in another order, so that each chunk's
    dictionary of a bucket's ids differs."""
    ids = [pa.array([f"d{(i + 7 * f) % 50}" for i in range(50)], pa.large_string()) for f in range(3)]
    rows = np.arange(50)
    codes = np.array(["401.9"], dtype=object)

    def spilled(held_bytes: int, gathered_rows: int = GATHERED_ROWS) -> tuple[Spill, list[str], list[tuple]]:
        folder = tmp_path / f"{held_bytes}-{gathered_rows}"
        folder.mkdir()
        spill = Spill(str(folder), 4, 3, held_bytes=held_bytes, gathered_rows=gathered_rows)
        for side, file in ((0, 0), (0, 1), (1, 2)):
            spill.add_ids(
                side, file, ids[file], rows, codes, np.zeros(50, np.int64), rows + 70_000 * file + 1, rows[:0]
            )
        spill.close()
        found = []
        for b in spill.buckets():
            at = np.arange(b.rows.num_rows)
            names = b.rows["doc_id"].cast(pa.large_string()).to_pylist()
            found += zip(names, b.side.tolist(), b.file_of(at).tolist(), b.lines(at).tolist())
        return spill, sorted(p.name for p in folder.iterdir()), sorted(found)

    expected = sorted(
        (f"d{(i + 7 * file) % 50}", side, file, i + 70_000 * file + 1)
        for i in range(50)
        for side, file in ((0, 0), (0, 1), (1, 2))
    )
    held, files, found = spilled(1 << 20)
    assert held.held is not None and files == [] and found == expected  # held: nothing written
    one_chunk = held.held_bytes // 3
    # outgrown by the third chunk: all written, each bucket's batches gathered and written together at the
    # end, written as they come (a bound of one row), or gathered in part (a few rows)
    for gathered_rows in (GATHERED_ROWS, 1, 60):
        written, files, found = spilled(one_chunk * 2, gathered_rows)
        assert written.held is None and len(files) == 4 and found == expected, gathered_rows
    with pytest.raises(ValueError, match="split it into smaller files"):  # a line past 32 bits
        held.add_ids(0, 0, ids[0], rows, codes, np.zeros(50, np.int64), rows + (1 << 32) - 10, rows[:0])


@settings(max_examples=examples(200), deadline=None)
@given(values=st.lists(st.text(max_size=30), min_size=1, max_size=12), start=st.integers(0, 3))
@example(
    values=["", "\x00", "\x00" * 8, "\x00" * 9, "a" * 8, "a" * 16], start=0
)  # zero bytes: told apart by length
def test_an_id_hashes_the_same_wherever_it_lies_in_an_arrow_array(values, start):
    """A document's bucket is its id's hash: the same id must hash alike in any chunk, gold or predicted,
    whatever bytes lie around it in the buffers (the words past its end are masked off) and wherever the array
    begins (a slice); ids of different lengths or bytes hash apart."""
    from cophe_core.scale import spill

    array = pa.array(values, pa.large_string()).slice(min(start, len(values) - 1))
    together = spill._string_hashes(array).tolist()
    alone = [spill._string_hashes(pa.array([v], pa.large_string()))[0] for v in array.to_pylist()]
    assert together == alone
    distinct = {v: h for v, h in zip(array.to_pylist(), together)}
    assert len(set(distinct.values())) == len(distinct)


def test_max_level_and_ontology_are_passed_on():
    gold, pred = ICD9 / "gold.csv", ICD9 / "run_siblings.csv"
    for level in ("e0", "chapter"):
        ev, _, _ = in_memory(gold, pred, ontology="icd9", max_level=level)
        sv = score_dataset(gold, pred, ontology="icd9", max_level=level, chunk_rows=5_000)
        assert sv.levels == ev.levels
        assert_same(ev, sv)


# ------------------------------------------------------------------ datasets: files, partitions, globs


def write_parquet(frame: pd.DataFrame, path) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    pq.write_table(pa.Table.from_pandas(frame, preserve_index=False), path)


@pytest.fixture(scope="module")
def split_sample(tmp_path_factory):
    """The ICD-9 sample split into Parquet files: gold hive-partitioned by a key of its own, in shuffled
    document order; predictions as plain files in another order, with a _SUCCESS marker and a hidden file."""
    root = tmp_path_factory.mktemp("split")
    gold = pd.read_csv(ICD9 / "gold.csv", dtype=str)
    pred = pd.read_csv(ICD9 / "run_siblings.csv", dtype=str)
    rng = np.random.default_rng(0)
    g = gold.iloc[rng.permutation(len(gold))]
    for k, part in g.groupby(np.arange(len(g)) % 3):
        write_parquet(part, root / "gold" / f"shard={k}" / "part-0.parquet")
    p = pred.iloc[rng.permutation(len(pred))].reset_index(drop=True)
    for k in range(4):
        write_parquet(p.iloc[k * len(p) // 4 : (k + 1) * len(p) // 4], root / "pred" / f"run-{k}.parquet")
    (root / "pred" / "_SUCCESS").write_text("")
    (root / "pred" / ".hidden").write_text("x")
    return root


def test_a_partitioned_dataset_equals_in_memory(split_sample):
    ev, _, _ = in_memory(ICD9 / "gold.csv", ICD9 / "run_siblings.csv")
    for chunk in (100_000, 700):
        sv = score_dataset(split_sample / "gold", split_sample / "pred", chunk_rows=chunk)
        assert_same(ev, sv)


def test_a_glob_and_a_mixed_source(split_sample):
    ev, _, _ = in_memory(ICD9 / "gold.csv", ICD9 / "run_siblings.csv")
    sv = score_dataset(
        str(split_sample / "gold" / "*" / "*.parquet"), str(split_sample / "pred" / "run-*.parquet")
    )
    assert_same(ev, sv)
    sv = score_dataset(ICD9 / "gold.csv", split_sample / "pred", chunk_rows=3_000)  # CSV against Parquet
    assert_same(ev, sv)


def test_dataset_files_and_is_dataset(split_sample):
    assert [p.name for p in dataset_files(split_sample / "pred")] == [f"run-{k}.parquet" for k in range(4)]
    assert is_dataset(split_sample / "gold") and is_dataset(str(split_sample / "*.parquet"))
    assert not is_dataset(ICD9 / "gold.csv") and not is_dataset(b"doc_id,code\n")
    with pytest.raises(InputError, match="no file matches"):
        dataset_files(str(split_sample / "nothing-*.parquet"))
    empty = split_sample / "empty"
    empty.mkdir()
    with pytest.raises(InputError, match="holds no data files"):
        dataset_files(empty)


def test_a_hive_key_can_be_the_document_column(tmp_path):
    """A dataset partitioned by document id: the key is a column of every row of its folder."""
    rows = [("1", "401.9"), ("1", "428.0"), ("2", "250.00")]
    for d, c in rows:
        write_parquet(pd.DataFrame({"code": [c]}), tmp_path / "gold" / f"doc_id={d}" / f"{c}.parquet")
    (tmp_path / "pred.csv").write_bytes(long_csv([("1", "401.1"), ("2", "250.00")]))
    ev, _, _ = in_memory(long_csv(rows), tmp_path / "pred.csv")
    assert_same(ev, score_dataset(tmp_path / "gold", tmp_path / "pred.csv"))


# ------------------------------------------------------------------ unlisted codes, rejected rows, lines

UNLISTED = ["401.3", "401.35", "999.99", "V99.1", "E999.9", "016.99", "888.8"]


def test_unlisted_codes_anywhere_extend_the_ontology_once(tmp_path):
    """Unlisted codes spread over documents hashed into many buckets, one of them in a single late document:
    node ids and the node table equal the in-memory path's."""
    rng = np.random.default_rng(1)
    listed = ["401.9", "428.0", "250.00", "V45.81", "E849.7", "38.93", "364.3"]
    gold = [(f"d{i}", str(rng.choice(listed + UNLISTED))) for i in range(300) for _ in range(3)]
    pred = [(d, c if rng.random() < 0.6 else str(rng.choice(listed + UNLISTED))) for d, c in gold]
    gold.append(("d299", "016.95"))  # once, in the last document
    (tmp_path / "g.csv").write_bytes(long_csv(gold))
    (tmp_path / "p.csv").write_bytes(long_csv(pred))
    ev, _, warnings = in_memory(tmp_path / "g.csv", tmp_path / "p.csv")
    assert ev.ontology.n_nodes > icd9_ontology().n_nodes
    sv = score_dataset(tmp_path / "g.csv", tmp_path / "p.csv", chunk_rows=50)
    assert_same(ev, sv)
    assert sv.ontology.keys.tolist() == ev.ontology.keys.tolist()
    assert sv.warnings == warnings


BAD_GOLD = (
    "doc_id,code\n"
    "1,401.9\n"
    "1,XYZ\n"  # malformed
    ",428.0\n"  # no document
    "2,\n"  # an empty code: document 2 is evaluated, with no gold code
    "\n"  # a blank line, skipped
    '3,"401\n.9"\n'  # a quoted newline inside a field: rejected, and the next line numbers shift
    "3,4019\n"  # undotted: ambiguous without --system
    "4," + "9" * 70 + "\n"  # too long
    "4,250.00\n"
    "4,250.00\n"  # duplicate
    "5,401.35\n"  # unlisted: flagged
)
BAD_PRED = "doc_id,code\n1,401.1\n3,250.01\n6,428.0\n6,\n7,E999.9\n"


def test_every_row_is_scored_or_rejected_with_its_line(tmp_path):
    g, p = tmp_path / "gold.csv", tmp_path / "pred.csv"
    g.write_text("\ufeff" + BAD_GOLD, encoding="utf-8")  # a BOM too
    p.write_text(BAD_PRED)
    s = score_files(g, {"pred": p})
    ev = s.evaluation("pred")
    for chunk in (1, 3, 1_000):  # one line per block: every cut tried
        sv = score_dataset(g, p, chunk_rows=chunk)
        assert_same(ev, sv)
        pd.testing.assert_frame_equal(sorted_rows(sv.rejected), sorted_rows(s.corpus.rejected))
        pd.testing.assert_frame_equal(sorted_rows(sv.flagged), sorted_rows(s.corpus.flagged))
        assert sorted(sv.warnings) == sorted(s.corpus.warnings)
    assert len(sv.rejected) == 7  # 6 gold rows, one predicted
    assert set(sv.rejected.kind) >= {"malformed_code", "empty_id", "empty_code", "too_long", "ambiguous"}


def test_blocks_of_a_csv_are_never_cut_inside_a_quoted_field(tmp_path):
    """Quoted document ids holding line breaks on every other row, read in blocks of a few dozen bytes: each
    block ends outside quotes, and the rejected rows keep the file's line numbers."""
    rows = "".join(
        f'"doc\n{i % 7}",{"401.9" if i % 3 else "XYZ"}\n' if i % 2 else f"d{i % 5},428.0\n" for i in range(60)
    )
    g, p = tmp_path / "g.csv", tmp_path / "p.csv"
    g.write_text("doc_id,code\n" + rows)
    p.write_text('doc_id,code\n"doc\n1",401.1\nd2,428.0\n')
    s = score_files(g, {"pred": p})
    for chunk in (1, 2, 3, 5):
        sv = score_dataset(g, p, chunk_rows=chunk)
        assert_same(s.evaluation("pred"), sv)
        pd.testing.assert_frame_equal(sorted_rows(sv.rejected), sorted_rows(s.corpus.rejected))


def test_a_source_with_nothing_scorable_is_an_error_naming_it(tmp_path):
    (tmp_path / "g").mkdir()
    (tmp_path / "g" / "a.csv").write_bytes(long_csv([("1", "XYZ"), ("", "401.9")]))
    (tmp_path / "g" / "b.csv").write_bytes(long_csv([("2", "XYZ"), ("3", "QQQ")]))
    (tmp_path / "p.csv").write_bytes(long_csv([("1", "401.9")]))
    with pytest.raises(
        NothingScorable,
        match=r"g: none of its 4 rows can be scored, so no score is given; e.g. g/a\.csv, line 3",
    ) as e:
        score_dataset(tmp_path / "g", tmp_path / "p.csv")
    assert e.value.file == str(tmp_path / "g")
    assert e.value.rejected[["file", "value"]].values.tolist() == [
        ["g/a.csv", "401.9"],  # the reader's: no document id
        ["g/a.csv", "XYZ"],
        ["g/b.csv", "QQQ"],
        ["g/b.csv", "XYZ"],
    ]
    (tmp_path / "g" / "c.csv").write_bytes(
        long_csv([("4", "428.0")])
    )  # one scorable row in the dataset: scored
    assert len(score_dataset(tmp_path / "g", tmp_path / "p.csv").rejected) == 4
    (tmp_path / "g.csv").write_bytes(long_csv([("1", "4019")]))
    with pytest.raises(NothingScorable, match=r"g\.csv: none of its 1 rows.*--system diagnosis") as e:
        score_dataset(tmp_path / "g.csv", tmp_path / "p.csv", ontology="icd9")
    assert e.value.needs_system
    (tmp_path / "empty.csv").write_text("doc_id,code\n")
    with pytest.raises(NothingScorable, match="the gold standard holds no codes"):
        score_dataset(tmp_path / "empty.csv", tmp_path / "p.csv")
    (tmp_path / "scores.csv").write_text("doc_id,code,score\n1,401.9,0.5\n")
    with pytest.raises(InputError, match="holds scores; streamed scoring takes code sets"):
        score_dataset(tmp_path / "p.csv", tmp_path / "scores.csv")
    (tmp_path / "x.json").write_text("[]")
    with pytest.raises(InputError, match="streamed scoring reads Parquet"):
        score_dataset(tmp_path / "x.json", tmp_path / "p.csv")


def test_the_same_file_on_both_sides_is_told_apart(tmp_path):
    (tmp_path / "t.csv").write_bytes(long_csv([("1", "401.9"), ("1", "XYZ")]))
    s = score_files(tmp_path / "t.csv", {"pred": tmp_path / "t.csv"})
    sv = score_dataset(tmp_path / "t.csv", tmp_path / "t.csv")
    assert (
        sorted(sv.rejected.file)
        == sorted(s.corpus.rejected.file)
        == ["t.csv (gold standard)", "t.csv (run pred)"]
    )


# ------------------------------------------------------------------ the partition function


def test_count_partition_is_additive_and_picklable():
    gold = pd.read_csv(ICD9 / "gold.csv", dtype=str)
    pred = pd.read_csv(ICD9 / "run_overcoder.csv", dtype=str)
    ev, _, _ = in_memory(ICD9 / "gold.csv", ICD9 / "run_overcoder.csv")
    table = pickle.loads(pickle.dumps(resolve_table(pd.concat([gold.code, pred.code]), icd9_ontology())))
    key = lambda f: pd.util.hash_array(f.doc_id.to_numpy(dtype=object)) % 5  # noqa: E731
    parts = [
        pickle.loads(pickle.dumps(count_partition(gold[key(gold) == b], pred[key(pred) == b], table)))
        for b in range(5)
    ]
    whole = PartitionCounts.combine(parts)
    for name in ("tp", "set_fp", "flat_fn", "docs_over", "docs_under"):
        assert (getattr(whole.counts, name) == getattr(ev.node_counts, name)).all(), name
    assert (parts[0] + parts[1]).counts.tp.sum() == parts[0].counts.tp.sum() + parts[1].counts.tp.sum()
    pd.testing.assert_frame_equal(
        whole.documents.sort_values("doc_id", ignore_index=True),
        ev.documents.sort_values("doc_id", ignore_index=True),
    )
    small = resolve_table(["401.9"], icd9_ontology())
    with pytest.raises(ValueError, match="'401.1' is not in the code table"):
        count_partition(pd.DataFrame({"doc_id": ["1"], "code": ["401.1"]}), pred.iloc[:0], small)


def test_bootstrap_of_the_streamed_evaluation_is_the_in_memory_one():
    ev, _, _ = in_memory(ICD9 / "gold.csv", ICD9 / "run_siblings.csv")
    sv = score_dataset(ICD9 / "gold.csv", ICD9 / "run_siblings.csv", chunk_rows=4_000)
    pd.testing.assert_frame_equal(sv.bootstrap(n_resamples=50, seed=3), bootstrap(ev, n_resamples=50, seed=3))


def test_without_the_per_document_table_the_figures_are_the_same():
    ev, _, _ = in_memory(ICD9 / "gold.csv", ICD9 / "run_siblings.csv")
    sv = score_dataset(ICD9 / "gold.csv", ICD9 / "run_siblings.csv", chunk_rows=4_000, keep_documents=False)
    assert sv.to_dict() == ev.to_dict() and sv.document_values is None
    pd.testing.assert_frame_equal(sv.nodes, ev.nodes)
    assert (sv.docs == np.sort(ev.docs)).all()
    for needs_the_table in (
        lambda: sv.documents,
        lambda: sv.document_counts(),
        lambda: sv.bootstrap(n_resamples=5),
    ):
        with pytest.raises(ValueError, match="per-document table was not kept"):
            needs_the_table()


# ------------------------------------------------------------------ a property: any input, any split

DOCS = st.sampled_from([f"d{i}" for i in range(12)] + ["", " d1 "])
CODES = st.sampled_from(
    ["401.9", "401.1", "428.0", "250.00", "V45.81", "38.93", "401.3", "888.8", "XYZ", "", "4019"]
)
# each side in a format of its own: dotted, undotted (MIMIC's, where 684 and 428 are ambiguous), or mixed;
# 401.99 / 40199 and 888.8 / 8888 are unlisted codes that extend the ontology
DOTTED = st.sampled_from(["401.9", "684", "428", "250.00", "401.99", "V45.81", "38.93", "888.8", "XYZ"])
UNDOTTED = st.sampled_from(["4019", "6840", "684", "428", "25000", "40199", "V4581", "3893", "8888", ""])
SIDE = st.sampled_from([CODES, DOTTED, UNDOTTED]).flatmap(
    lambda codes: st.lists(st.tuples(DOCS, codes), max_size=30)
)


@settings(
    max_examples=examples(25), deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(gold=SIDE.filter(len), pred=SIDE, chunk=st.integers(2, 40), held=st.sampled_from([0, 300, HELD_BYTES]))
def test_streamed_equals_in_memory_on_any_small_input(tmp_path, monkeypatch, gold, pred, chunk, held):
    holding(monkeypatch, held)
    g, p = tmp_path / "g.csv", tmp_path / "p.csv"
    g.write_bytes(long_csv(gold))
    p.write_bytes(long_csv(pred))
    try:
        s = score_files(g, {"pred": p}, ontology="icd9")
    except InputError as e:  # nothing scorable in memory: nothing scorable streamed, naming the same file
        with pytest.raises(InputError) as streamed:
            score_dataset(g, p, ontology="icd9", chunk_rows=chunk)
        assert str(streamed.value).split(":")[0] == str(e).split(":")[0]
        return
    sv = score_dataset(g, p, ontology="icd9", chunk_rows=chunk)
    assert_same(s.evaluation("pred"), sv)
    pd.testing.assert_frame_equal(sorted_rows(sv.rejected), sorted_rows(s.corpus.rejected))
    assert sorted(sv.warnings) == sorted(s.corpus.warnings)


@settings(
    max_examples=examples(15), deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(
    gold=st.lists(st.tuples(DOCS, CODES), min_size=1, max_size=30),
    pred=st.lists(st.tuples(DOCS, CODES), max_size=30),
    files=st.tuples(st.integers(1, 3), st.integers(1, 3)),
    seed=st.integers(0, 2**16),
    chunk=st.integers(2, 40),
)
def test_any_split_into_parquet_files_gives_the_same_figures(
    tmp_path_factory, gold, pred, files, seed, chunk
):
    """Rows shuffled and dealt into several Parquet files per side: the same figures and as many rejected rows
    (their lines are row numbers of each file, so only their count is compared)."""
    root = tmp_path_factory.mktemp("split")
    rng = np.random.default_rng(seed)
    for side, rows, k in (("g", gold, files[0]), ("p", pred, files[1])):
        frame = pd.DataFrame(rows, columns=["doc_id", "code"], dtype=str).iloc[rng.permutation(len(rows))]
        deal = rng.integers(0, k, len(frame))
        for i in range(k):
            write_parquet(frame[deal == i], root / side / f"part-{i}.parquet")
    try:
        s = score_files(long_csv(gold), {"pred": long_csv(pred)}, ontology="icd9")
    except InputError:  # nothing scorable in memory: nothing scorable streamed, naming the source
        with pytest.raises(InputError, match=f"^{root}/[gp]: "):
            score_dataset(root / "g", root / "p", ontology="icd9", chunk_rows=chunk)
        return
    sv = score_dataset(root / "g", root / "p", ontology="icd9", chunk_rows=chunk)
    assert_same(s.evaluation("pred"), sv)
    assert len(sv.rejected) == len(s.corpus.rejected)


# ------------------------------------------------------------------ the command line


def run_cli(capsys, *args: str) -> tuple[int, dict | None, str]:
    code = main(["score", *args])
    out, err = capsys.readouterr()
    return code, (json.loads(out) if code == 0 and out.startswith("{") else None), err


def test_the_cli_streams_a_folder_with_the_same_json(capsys, split_sample, tmp_path):
    g, p = ICD9 / "gold.csv", ICD9 / "run_siblings.csv"
    code, memory, _ = run_cli(capsys, "--gold", str(g), "--pred", str(p), "--format", "json")
    assert code == 0
    code, streamed, _ = run_cli(
        capsys,
        "--gold",
        str(split_sample / "gold"),
        "--pred",
        str(split_sample / "pred" / "*.parquet"),
        "--format",
        "json",
        "--documents",
        str(tmp_path / "d.csv"),
        "--nodes",
        str(tmp_path / "n.csv"),
    )
    # the same rows counted per source, named by the folder streamed rather than the file
    assert list(streamed.pop("rows").values()) == list(memory["rows"].values())
    assert code == 0 and streamed == {k: v for k, v in memory.items() if k != "rows"}
    assert len(pd.read_csv(tmp_path / "d.csv")) == 1000 and len(pd.read_csv(tmp_path / "n.csv"))
    code, forced, _ = run_cli(
        capsys,
        "--gold",
        str(g),
        "--pred",
        str(p),
        "--stream",
        "--chunk-rows",
        "999",
        "--format",
        "json",
        "--bootstrap",
        "20",
    )
    assert code == 0 and {k: v for k, v in forced.items() if k != "intervals"} == memory
    assert forced["intervals"]["resamples"] == 20
    assert main(["score", "--gold", str(g), "--pred", str(p), "--stream"]) == 0
    assert "cophe      overall" in capsys.readouterr().out  # the table


@pytest.mark.parametrize(
    ("extra", "said"),
    [
        (["--metrics", "suite", "--bootstrap", "5"], "--metrics suite with --bootstrap is not available"),
        (["--threshold", "0.5"], "--threshold, --top-k and --tune-on are not available for streamed scoring"),
        (["--save", "x.cophe"], "--save is not available for streamed scoring"),
    ],
)
def test_the_cli_refuses_what_it_does_not_stream_naming_the_option(capsys, split_sample, extra, said):
    code, _, err = run_cli(
        capsys, "--gold", str(split_sample / "gold"), "--pred", str(split_sample / "pred"), *extra
    )
    assert code == 2 and said in err and len(err.strip().splitlines()) == 1


def test_the_cli_says_what_is_wrong_with_a_dataset_in_one_line(capsys, tmp_path, split_sample):
    code, _, err = run_cli(
        capsys, "--gold", str(tmp_path / "nope-*.parquet"), "--pred", str(split_sample / "pred")
    )
    assert code == 2 and "no file matches this pattern" in err and len(err.strip().splitlines()) == 1
    (tmp_path / "bad.parquet").write_bytes(b"PAR1 not really")
    code, _, err = run_cli(
        capsys, "--gold", str(tmp_path / "bad.parquet"), "--pred", str(split_sample / "pred")
    )
    assert code == 2 and "cannot read as Parquet" in err and len(err.strip().splitlines()) == 1


def test_the_cli_writes_the_rejected_rows_of_a_dataset_with_nothing_scorable(capsys, tmp_path, split_sample):
    (tmp_path / "g").mkdir()
    (tmp_path / "g" / "bad.csv").write_bytes(long_csv([("1", "XYZ"), ("2", "QQQ")]))
    (tmp_path / "g" / "empty.csv").write_text("doc_id,code\n")  # an empty partition is no error
    out = tmp_path / "rejected.csv"
    code, _, err = run_cli(
        capsys, "--gold", str(tmp_path / "g"), "--pred", str(split_sample / "pred"), "--rejected", str(out)
    )
    assert code == 2 and "g: none of its 2 rows can be scored" in err
    assert pd.read_csv(out).value.tolist() == ["QQQ", "XYZ"]


@pytest.mark.parametrize(
    ("folder", "run", "ontology"), [(ICD9, "run_siblings.csv", "auto"), (ICD10, "run_overcoder.csv", "icd10")]
)
def test_the_icm_suite_in_two_passes_equals_the_in_memory_suite(folder, run, ontology):
    from cophe_core.scoring.suite import suite

    # a prediction-only document and a gold document whose only code is rejected: both left out of ICM
    gold = (folder / "gold.csv").read_bytes() + b"gold-only,NOT-A-CODE\n"
    pred = (
        (folder / run).read_bytes()
        + b"pred-only,"
        + (folder / run).read_bytes().splitlines()[1].split(b",")[1]
        + b"\n"
    )
    s = score_files(gold, {"A": pred}, ontology=ontology)
    want = suite(s.evaluation("A"))
    import tempfile
    from pathlib import Path

    with tempfile.TemporaryDirectory() as tmp:
        g, p = Path(tmp, "gold.csv"), Path(tmp, "pred.csv")
        g.write_bytes(gold)
        p.write_bytes(pred)
        ev = score_dataset(g, p, ontology=ontology, chunk_rows=900, suite=True)
    assert ev.suite is not None and set(ev.suite) == set(want)
    for k, v in want.items():  # sums over buckets: equal up to the last bits of a float
        assert ev.suite[k] == pytest.approx(v, rel=1e-12, abs=1e-15), k
    assert ev.icm_left_out == 2 and "leave out 2 documents" in (ev.icm_note or "")


def test_the_cli_streams_the_suite_with_the_in_memory_figures(capsys, split_sample):
    code, out, _ = run_cli(
        capsys,
        "--gold",
        str(ICD9 / "gold.csv"),
        "--pred",
        str(ICD9 / "run_siblings.csv"),
        "--metrics",
        "suite",
        "--format",
        "json",
    )
    memory = out
    code, out, _ = run_cli(
        capsys,
        "--gold",
        str(split_sample / "gold"),
        "--pred",
        str(split_sample / "pred"),
        "--metrics",
        "suite",
        "--format",
        "json",
    )
    assert code == 0 and out is not None and memory is not None
    assert out["suite"] == pytest.approx(memory["suite"], rel=1e-12)
