"""The Spark recipe of cophe_core.scale.cluster: ``count_batches`` (a ``mapInPandas`` function) yields plain rows
that ``combine_counted`` turns back into the counts, summed by Spark first or not; every figure equals the
in-memory path's. The pandas tests run everywhere; the last one runs the recipe on a local Spark session
when ``pyspark`` (and Java) are installed, which the test command does not do."""

from __future__ import annotations

import shutil
import sys
import time

import numpy as np
import pandas as pd
import pyarrow as pa
import pytest

from cophe_core.ontology import icd9_ontology, load_ontology
from cophe_core.scale.cluster import (
    COUNT_FIELDS,
    COUNTED_SCHEMA,
    SUMMED_COLUMNS,
    SUMMED_KEYS,
    SUMMED_KINDS,
    combine_counted,
    count_batches,
)
from cophe_core.scale.pipeline import StreamedEvaluation
from cophe_core.scoring.kernel import PartitionCounts, count_partition, resolve_tables
from tests.core.test_stream import ICD9, ICD10, assert_same, in_memory, sorted_rows

SAMPLES = [
    (ICD9, "run_siblings.csv", "icd9"),
    (ICD9, "run_overcoder.csv", "icd9"),
    (ICD10, "run_siblings.csv", "icd10"),
]


def sample_rows(folder, run) -> pd.DataFrame:
    """Both sides' rows in one frame, a ``side`` column (0 gold, 1 predicted), the predictions first."""
    gold = pd.read_csv(folder / "gold.csv", dtype=str).assign(side=0)
    pred = pd.read_csv(folder / run, dtype=str).assign(side=1)
    return pd.concat([pred, gold], ignore_index=True)


def tables_of(rows: pd.DataFrame, ontology: str):
    return resolve_tables([rows.code[rows.side == s].dropna() for s in (0, 1)], load_ontology(ontology))


def map_in_pandas(rows: pd.DataFrame, tables, n_parts: int, **kw) -> pd.DataFrame:
    """mapInPandas simulated: rows partitioned by document, each partition handed over as an iterator of
    small batches, the yielded frames through Arrow as Spark collects them (``toPandas()``: integer columns
    with nulls come back as floats, the lists as arrays)."""
    part = pd.util.hash_array(rows.doc_id.to_numpy(dtype=object)) % n_parts
    out = []
    for k in range(n_parts):
        mine = rows[part == k]
        batches = (mine.iloc[i : i + 300] for i in range(0, len(mine), 300))
        out += list(count_batches(batches, tables, **kw))
    out += list(count_batches(iter([]), tables))  # an empty partition yields nothing
    frame = pd.concat(out, ignore_index=True)
    return pa.Table.from_pandas(frame, preserve_index=False).to_pandas()


def spark_sum(collected: pd.DataFrame) -> pd.DataFrame:
    """What the recipe's ``groupBy(*SUMMED_KEYS).agg(sum ...)`` leaves: the summed kinds one row per key
    (the columns summed only, as Spark's aggregation), the others as they were; rows in any order."""
    summed = collected[collected.kind.isin(SUMMED_KINDS)]
    keys = summed[list(SUMMED_KEYS)].astype(object).fillna(-1)
    sums = summed[list(SUMMED_COLUMNS)].groupby([keys[k] for k in SUMMED_KEYS]).sum(min_count=1)
    sums = sums.reset_index().replace({"node": {-1: None}})
    listed = collected[~collected.kind.isin(SUMMED_KINDS)]
    return pd.concat([listed, sums], ignore_index=True).sample(frac=1.0, random_state=3)


def assert_same_counts(a: PartitionCounts, b: PartitionCounts) -> None:
    for f in COUNT_FIELDS:
        x, y = getattr(a.counts, f), getattr(b.counts, f)
        assert (x is None) == (y is None), f
        if x is not None:
            np.testing.assert_array_equal(x, y, err_msg=f)

    def docs(d: pd.DataFrame) -> pd.DataFrame:
        return d.astype({"doc_id": object}).sort_values("doc_id", ignore_index=True)

    pd.testing.assert_frame_equal(docs(a.documents), docs(b.documents))
    for x, y in ((a.rejected, b.rejected), (a.flagged, b.flagged)):
        pd.testing.assert_frame_equal(sorted_rows(x), sorted_rows(y))
    assert (a.duplicates, a.only_gold, a.only_pred, a.scored) == (
        b.duplicates,
        b.only_gold,
        b.only_pred,
        b.scored,
    )


# ------------------------------------------------------------------ pandas: the function Spark maps


@pytest.mark.parametrize(("folder", "run", "ontology"), SAMPLES, ids=[f"{f.name}-{r}" for f, r, _ in SAMPLES])
@pytest.mark.parametrize("n_parts", [1, 6])
def test_sample_counted_in_partitions_equals_in_memory(folder, run, ontology, n_parts):
    ev, _, _ = in_memory(folder / "gold.csv", folder / run)
    rows = sample_rows(folder, run)
    tables = tables_of(rows, ontology)
    collected = map_in_pandas(rows, tables, n_parts)
    assert list(collected.columns) == [c.split()[0] for c in COUNTED_SCHEMA.split(", ")]
    assert (collected.kind == "columns").sum() == n_parts  # one row a partition: every partition yielded
    for rows_back in (collected, spark_sum(collected)):  # raw, or summed by Spark first: the same
        sv = StreamedEvaluation.of(combine_counted(rows_back), tables[0].ontology, ev.max_level)
        assert_same(ev, sv)


BAD = pd.DataFrame(
    [  # side, doc_id, code, line
        (0, "1", "401.9", 2),
        (0, "1", "XYZ", 3),  # malformed: rejected
        (0, "2", None, 5),  # a document without a gold code
        (0, "4", "250.00", 9),
        (0, "4", "250.00", 10),  # a duplicate
        (0, "5", "401.35", 11),  # unlisted: flagged
        (1, "1", "401.1", 2),
        (1, "3", "250.01", 3),  # a document predicted only
        (1, "6", "428.0", 4),
        (1, "7", "E999.9", 6),  # unlisted: flagged
        (1, "7", "QQQ", 7),  # malformed: rejected
    ],
    columns=["side", "doc_id", "code", "line"],
).assign(file=lambda d: np.where(d.side == 0, "gold.csv", "pred.csv"))


@pytest.mark.parametrize("keep_documents", [True, False])
def test_every_row_comes_back_scored_rejected_or_flagged(keep_documents):
    """The plain rows carry every part of the partitions' counts: the sum of count_partition over the same
    partitions, field by field (node counts, documents, rejected and flagged rows, the totals)."""
    tables = tables_of(BAD, "icd9")
    direct = count_partition(
        BAD[BAD.side == 0].drop(columns="side"),
        BAD[BAD.side == 1].drop(columns="side"),
        tables,
        documents=keep_documents,
    )
    assert len(direct.rejected) == 2 and len(direct.flagged) == 2 and direct.duplicates == (1, 0)
    assert (direct.only_gold, direct.only_pred) == (3, 3)
    for n_parts in (1, 3, 7):
        collected = map_in_pandas(BAD, tables, n_parts, keep_documents=keep_documents)
        for rows_back in (collected, spark_sum(collected)):
            assert_same_counts(combine_counted(rows_back), direct)


def test_only_nodes_with_counts_travel_and_the_last_node_gives_the_size():
    tables = resolve_tables([["401.9"], ["401.9"]], icd9_ontology())
    batch = pd.DataFrame({"side": [0, 1], "doc_id": ["1", "1"], "code": ["401.9", "401.9"]})
    (out,) = count_batches([batch], tables)
    assert set(out.dtypes.astype(str)) == {
        "object"
    }  # PySpark 4.3 refuses pandas 3's Arrow-backed str columns
    nodes = out[out.kind == "node"]
    n_nodes = tables[0].ontology.n_nodes
    assert nodes.node.max() == n_nodes - 1 and len(nodes) < 20  # 401.9, its ancestors, the last node
    counts = combine_counted(out).counts
    assert counts.n_nodes == n_nodes and int(counts.tp.sum()) == len(nodes) - 1


def test_no_rows_is_an_error():
    with pytest.raises(ValueError, match="no counted partitions"):
        combine_counted(pd.DataFrame(columns=["kind"]))


# ------------------------------------------------------------------ a real Spark session


@pytest.fixture(scope="module")
def spark():
    pytest.importorskip("pyspark")
    if shutil.which("java") is None:
        pytest.skip("Spark needs a Java runtime")
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("PYSPARK_PYTHON", sys.executable)  # the workers import cophe_core as this process does
        session = (
            pytest.importorskip("pyspark.sql")
            .SparkSession.builder.master("local[2]")
            .appName("cophe-test")
            .config("spark.ui.enabled", "false")
            .config("spark.sql.shuffle.partitions", "4")
            .config("spark.sql.execution.arrow.pyspark.enabled", "true")
            .getOrCreate()
        )
        yield session
        session.stop()


@pytest.mark.parametrize(
    ("folder", "run", "ontology"), SAMPLES[1:], ids=[f"{f.name}-{r}" for f, r, _ in SAMPLES[1:]]
)
def test_the_recipe_on_a_local_spark_session(spark, folder, run, ontology):
    """The README's recipe, as written, on a local Spark: Spark sums the counts by node, and the raw rows
    collected give the same evaluation; both equal the in-memory one."""
    F = pytest.importorskip("pyspark.sql.functions")  # noqa: N806 (Spark's own spelling)
    started = time.perf_counter()
    ev, _, _ = in_memory(folder / "gold.csv", folder / run)
    gold = spark.read.csv(str(folder / "gold.csv"), header=True)
    pred = spark.read.csv(str(folder / run), header=True)
    rows = gold.withColumn("side", F.lit(0)).unionByName(pred.withColumn("side", F.lit(1)))
    codes = rows.select("side", "code").where("code is not null").distinct().collect()
    tables = resolve_tables([[r.code for r in codes if r.side == s] for s in (0, 1)], load_ontology(ontology))
    counted = rows.repartition(4, "doc_id").mapInPandas(
        lambda b: count_batches(b, tables), schema=COUNTED_SCHEMA
    )
    summed = (
        counted.where(F.col("kind").isin(*SUMMED_KINDS))
        .groupBy(*SUMMED_KEYS)
        .agg(*[F.sum(c).alias(c) for c in SUMMED_COLUMNS])
    )
    listed = counted.where(~F.col("kind").isin(*SUMMED_KINDS))
    by_spark = combine_counted(pd.concat([summed.toPandas(), listed.toPandas()], ignore_index=True))
    raw = counted.toPandas()
    assert (raw.kind == "columns").sum() == 4  # four partitions counted
    for found in (by_spark, combine_counted(raw)):
        assert_same(ev, StreamedEvaluation.of(found, tables[0].ontology, ev.max_level))
    assert len(summed.where("kind = 'node'").toPandas()) < len(raw[raw.kind == "node"])  # Spark summed them
    print(f"spark recipe on {folder.name}/{run}: {time.perf_counter() - started:.1f} s")
