"""The aggregate analysis (cophe_core.aggregate): every figure a view reads equals the in-memory path's, from
the file written by the in-memory, streamed and multi-run paths, on every code and on each code slice; the
file is checked like any upload."""

from __future__ import annotations

import io
import json
import zipfile

import numpy as np
import pandas as pd
import pytest

from cophe_core import score_files
from cophe_core.aggregate import (
    aggregate_of,
    aggregate_scoring,
    is_aggregate,
    read_aggregate,
    write_aggregate,
)
from cophe_core.analysis import read_analysis
from cophe_core.files import InputError
from cophe_core.slices import code_frequency, code_frequency_slices, codes_in_play, restrict
from cophe_core.stats import bootstrap, compare_runs, paired_bootstrap
from cophe_core.stream import score_dataset
from tests.conftest import SAMPLE

RUNS = ["run_siblings.csv", "run_overcoder.csv", "run_conservative.csv"]
TABLES = ("levels_table", "macro_table", "nodes")


@pytest.fixture(scope="module")
def scoring():
    return score_files(SAMPLE / "gold.csv", {r.removesuffix(".csv"): SAMPLE / r for r in RUNS})


@pytest.fixture(scope="module")
def opened(scoring):
    return read_aggregate(write_aggregate(aggregate_scoring(scoring)), name="sample.cophe")


def same(a: pd.DataFrame, b: pd.DataFrame) -> None:
    pd.testing.assert_frame_equal(a.reset_index(drop=True), b.reset_index(drop=True), check_dtype=False)


@pytest.mark.parametrize("level", ["e0", "block", "chapter"])
def test_every_table_equals_the_in_memory_one(scoring, opened, level):
    for run in scoring.run_names:
        want, got = scoring.evaluation(run, max_level=level), opened.evaluation(run, max_level=level)
        for table in TABLES:
            same(getattr(got, table), getattr(want, table))
        same(got.documents, want.documents)
        assert got.to_dict() == want.to_dict()


def test_the_intervals_and_paired_comparisons_equal_the_in_memory_ones(scoring, opened):
    want = bootstrap(scoring.evaluation("run_siblings"), n_resamples=200, seed=3)
    got = bootstrap(opened.evaluation("run_siblings"), n_resamples=200, seed=3)
    same(got, want)
    evs = {r: scoring.evaluation(r) for r in scoring.run_names}
    back = {r: opened.evaluation(r) for r in opened.run_names}
    same(compare_runs(back, n_resamples=100), compare_runs(evs, n_resamples=100))
    a, b = "run_siblings", "run_overcoder"
    same(
        paired_bootstrap(back[a], back[b], n_resamples=100), paired_bootstrap(evs[a], evs[b], n_resamples=100)
    )


def test_code_slices_equal_restricting_the_matrices(scoring, opened):
    gold = scoring.corpus.gold
    in_play = codes_in_play(gold, *scoring.corpus.runs.values())
    slices = code_frequency_slices(code_frequency(gold), (10, 100), in_play=in_play)
    assert [(s.key, s.size, s.fingerprint) for s in opened.slices] == [
        (s.key, s.size, s.fingerprint) for s in slices
    ]
    for s in slices:
        for run in scoring.run_names:
            want = restrict(scoring.evaluation(run), s)
            got = opened.evaluation(run, slice=opened.slice_named(s.key))
            same(got.levels_table, want.levels_table)
            same(got.nodes, want.nodes)
            with pytest.raises(ValueError, match="counts only"):
                got.documents  # noqa: B018


def test_the_ontology_comes_back_with_its_titles_and_code_sets(scoring, opened):
    o, want = opened.ontology, scoring.corpus.ontology
    assert o.n_nodes == want.n_nodes and o.levels == want.levels and o.code_sets == want.code_sets
    assert (o.titles == want.titles).all() and (o.keys == want.keys).all() and o.codes == want.codes
    assert o.code_system == want.code_system == "icd9"
    assert (o.closure != want.closure).nnz == 0


def test_the_rows_not_scored_and_the_warnings_come_back():
    gold = b"doc_id,code\n1,401.9\n1,XYZ\n2,428.0\n"
    s = score_files(gold, {"A": b"doc_id,code\n1,401.9\n3,250.00\n"})
    agg = read_aggregate(write_aggregate(aggregate_scoring(s)))
    ev = agg.evaluation("A")
    assert (
        ev.rejected[["file", "line", "value"]].values.tolist() == [["gold", 3, "XYZ"]]
        or len(ev.rejected) == 1
    )
    assert ev.rejected.value.tolist() == ["XYZ"] and ev.rejected.line.tolist() == [3]
    assert ev.warnings == list(s.corpus.warnings)


def test_the_streamed_path_writes_the_same_figures_as_memory(tmp_path, scoring):
    previous = None
    evs = {}
    for r in RUNS:  # each run scored with the ontology the previous one returned: their nodes agree
        ev = score_dataset(
            SAMPLE / "gold.csv",
            SAMPLE / r,
            ontology=previous or "auto",
            max_level="chapter",
            chunk_rows=700,
            slice_edges=(10, 100),
        )
        previous = ev.ontology
        evs[r.removesuffix(".csv")] = ev
    path = tmp_path / "streamed.cophe"
    write_aggregate(aggregate_of(evs, max_level="block"), path)
    back = read_aggregate(path)
    memory = read_aggregate(write_aggregate(aggregate_scoring(scoring)))
    for run in back.run_names:
        for level in ("e1", "block"):
            for table in (*TABLES, "documents"):
                same(
                    getattr(back.evaluation(run, max_level=level), table),
                    getattr(memory.evaluation(run, max_level=level), table),
                )
        for s in memory.slices:
            same(
                back.evaluation(run, slice=back.slice_named(s.key)).levels_table,
                memory.evaluation(run, slice=s).levels_table,
            )


def test_runs_with_other_documents_are_aligned_with_zeros_as_in_memory():
    gold = b"doc_id,code\n1,401.9\n2,428.0\n"
    runs = {"A": b"doc_id,code\n1,401.9\n", "B": b"doc_id,code\n2,428.0\n0,250.00\n"}  # 0 sorts first
    s = score_files(gold, runs)
    separate = {r: score_files(gold, {r: runs[r]}).evaluation(r) for r in runs}
    agg = read_aggregate(write_aggregate(aggregate_of(separate)))
    for r in runs:
        same(agg.evaluation(r).documents, s.evaluation(r).documents)
    assert agg.n_documents == 3


def test_runs_on_other_ontologies_are_refused():
    a = score_files(b"doc_id,code\n1,401.9\n", {"A": b"doc_id,code\n1,401.9\n"}).evaluation("A")
    b = score_files(b"doc_id,code\n1,E11.9\n", {"B": b"doc_id,code\n1,E11.9\n"}).evaluation("B")
    with pytest.raises(ValueError, match="different ontologies"):
        aggregate_of({"A": a, "B": b})


def test_the_per_document_table_is_read_only_when_asked(opened):
    agg = read_aggregate(
        write_aggregate(aggregate_scoring(score_files(SAMPLE / "gold.csv", {"A": SAMPLE / RUNS[0]})))
    )
    ev = agg.evaluation("A")
    ev.levels_table  # noqa: B018
    assert "_documents" not in ev.__dict__
    assert ev.to_dict()["documents"] == 1000 and "_documents" not in ev.__dict__
    assert len(ev.documents) == 1000


def test_a_saved_analysis_reader_and_an_aggregate_reader_tell_the_files_apart(opened, scoring):
    data = write_aggregate(aggregate_scoring(scoring))
    assert is_aggregate(data) and not is_aggregate(b"PK\x05\x06" + b"\0" * 18)
    with pytest.raises(InputError, match="format version 2; this cophe opens version 1"):
        read_analysis(data, name="big.cophe")


def rewrite(data: bytes, change) -> bytes:
    """The zip with its members changed by ``change(name, bytes) -> bytes`` (members stored as they were)."""
    src = zipfile.ZipFile(io.BytesIO(data))
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w") as z:
        for info in src.infolist():
            z.writestr(info, change(info.filename, src.read(info)))
    return out.getvalue()


def manifest_edit(edit):
    def change(name, content):
        if name != "manifest.json":
            return content
        m = json.loads(content)
        edit(m)
        return json.dumps(m).encode()

    return change


@pytest.fixture(scope="module")
def small():
    s = score_files(b"doc_id,code\n1,401.9\n2,428.0\n", {"A": b"doc_id,code\n1,401.1\n"})
    return write_aggregate(aggregate_scoring(s, slice_edges=(1,)))


@pytest.mark.parametrize(
    "change, message",
    [
        (manifest_edit(lambda m: m.update(format_version=3)), "format version 3; this cophe opens version 2"),
        (manifest_edit(lambda m: m.update(kind="inputs")), "a saved analysis of inputs, not an aggregate"),
        (manifest_edit(lambda m: m.update(runs=[])), "manifest.json: runs must be a list of 1 to 32 runs"),
        (manifest_edit(lambda m: m.update(documents="many")), "documents must be a whole number"),
        (
            manifest_edit(lambda m: m["options"].update(max_level="galaxy")),
            "manifest.json: options.max_level must be a level of ontology.levels or null, not 'galaxy'",
        ),
        (
            manifest_edit(lambda m: m["slices"].update(edges=[100, 10])),
            "manifest.json: slices.edges must be a list of 1 to 20 increasing",
        ),
        (manifest_edit(lambda m: m["slices"].update(keys=["x"])), "slices.keys do not match"),
        (manifest_edit(lambda m: m["ontology"].update(nodes=3)), "rows; manifest.json says 3"),
        (
            manifest_edit(lambda m: m["members"].pop("counts.parquet")),
            "does not list the member counts.parquet",
        ),
        (
            lambda n, c: c[:-9] + b"123456789" if n == "counts.parquet" else c,
            "does not match its size and SHA-256",
        ),
        (lambda n, c: b"not json" if n == "manifest.json" else c, "manifest.json is not valid JSON"),
    ],
)
def test_a_damaged_or_altered_file_is_refused_naming_what(small, change, message):
    with pytest.raises(InputError, match=f"^big.cophe: .*{message}"):
        read_aggregate(rewrite(small, change), name="big.cophe")


def forged(small, member, frame: pd.DataFrame) -> bytes:
    """The file with one Parquet member replaced by ``frame`` and the manifest's checksum updated to match:
    what only the table checks can catch."""
    import hashlib

    import pyarrow as pa
    import pyarrow.parquet as pq

    sink = io.BytesIO()
    pq.write_table(pa.Table.from_pandas(frame, preserve_index=False), sink)
    table = sink.getvalue()

    def change(name, content):
        if name == member:
            return table
        if name == "manifest.json":
            m = json.loads(content)
            m["members"][member] = {"size": len(table), "sha256": hashlib.sha256(table).hexdigest()}
            return json.dumps(m).encode()
        return content

    return rewrite(small, change)


def counts_frame(small) -> pd.DataFrame:
    import pyarrow.parquet as pq

    return pq.read_table(io.BytesIO(zipfile.ZipFile(io.BytesIO(small)).read("counts.parquet"))).to_pandas()


@pytest.mark.parametrize(
    "edit, message",
    [
        (lambda t: t.assign(node=10**6), "names a node that does not exist"),
        (lambda t: t.assign(run=5), "names a run that does not exist"),
        (lambda t: t.assign(tp=-1), "column tp holds a negative count"),
        (lambda t: pd.concat([t, t.iloc[:1]]), r"a \(run, slice, node\) row is repeated"),
        (lambda t: t.drop(columns="fn"), "lacks the column"),
        (lambda t: t.assign(tp=t.tp.astype(str)), "column tp holds (large_)?string, not int"),
    ],
)
def test_forged_counts_are_refused(small, edit, message):
    with pytest.raises(InputError, match=f"^big.cophe: counts.parquet.*{message}"):
        read_aggregate(forged(small, "counts.parquet", edit(counts_frame(small))), name="big.cophe")


def test_a_forged_ontology_is_refused(small):
    import pyarrow.parquet as pq

    nodes = pq.read_table(
        io.BytesIO(zipfile.ZipFile(io.BytesIO(small)).read("ontology/nodes.parquet"))
    ).to_pandas()
    leaf = int(np.flatnonzero(nodes.level == 0)[0])
    parent = np.where(nodes.parent >= 0, leaf, -1)  # every other node under a leaf code
    parent[leaf] = nodes.parent[leaf]
    bad = nodes.assign(parent=parent)
    with pytest.raises(InputError, match="a node's parent is not above it"):
        read_aggregate(forged(small, "ontology/nodes.parquet", bad), name="big.cophe")


def test_a_zip_that_is_not_one_and_a_path_outside_are_refused(small):
    with pytest.raises(InputError, match="^x.cophe: not a cophe aggregate analysis"):
        read_aggregate(b"doc_id,code\n1,401.9\n", name="x.cophe")
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w") as z:
        z.writestr("../manifest.json", b"{}")
    with pytest.raises(InputError, match="outside the archive"):
        read_aggregate(out.getvalue(), name="x.cophe")


def test_family_changes_and_within_family_from_counts_equal_the_matrices(scoring, opened):
    from cophe_core.families import family_changes, within_family

    a, b = "run_siblings", "run_overcoder"
    for level in ("e0", "block"):
        want = family_changes(scoring.evaluation(a), scoring.evaluation(b), level, n_resamples=50)
        got = family_changes(opened.evaluation(a), opened.evaluation(b), level)
        exact = [
            "node",
            "code",
            "gold",
            "a_extra",
            "a_missed",
            "b_extra",
            "b_missed",
            "change_errors",
            "delta_f1",
        ]
        same(got[exact], want[exact])
        assert got[["low", "high", "p_value", "q_value"]].isna().all().all() and not got.flagged.any()
    for run in scoring.run_names:
        same(within_family(opened.evaluation(run)), within_family(scoring.evaluation(run)))


def test_within_family_equals_a_naive_loop_over_documents(scoring):
    from cophe_core.families import within_family

    ev = scoring.evaluation("run_overcoder")
    X, Y = ev.X.toarray(), ev.Y.toarray()
    level = ev.ontology.level
    got = within_family(ev).set_index("level")
    for i, name in enumerate(ev.levels):
        cols = level == i
        x, y = X[:, cols], Y[:, cols]
        both = (x > 0) & (y > 0)
        row = got.loc[name]
        assert row.shared_families == both.sum()
        assert row.over == np.maximum(x - y, 0)[both].sum() and row.under == np.maximum(y - x, 0)[both].sum()
        assert row.gold_codes == y[both].sum() and row.predicted_codes == x[both].sum()


def test_an_icd10_aggregate_keeps_the_code_systems_and_their_table():
    icd10 = SAMPLE.parent / "icd10"
    s = score_files(icd10 / "gold.csv", {"A": icd10 / "run_overcoder.csv"}, ontology="icd10")
    back = read_aggregate(write_aggregate(aggregate_scoring(s)))
    want, got = s.evaluation("A"), back.evaluation("A")
    assert want.systems_table is not None
    same(got.systems_table, want.systems_table)
    same(got.nodes, want.nodes)
    assert (back.ontology.systems == s.corpus.ontology.systems).all() and got.to_dict() == want.to_dict()


def test_a_run_name_the_reader_would_refuse_is_refused_when_written(scoring):
    ev = scoring.evaluation("run_siblings")
    for bad in ("", "  ", "r" * 256):
        with pytest.raises(ValueError, match="every run needs a name of 1 to 255 characters"):
            aggregate_of({bad: ev})


def test_a_document_count_beyond_int32_is_refused_not_wrapped(small):
    import pyarrow.parquet as pq

    member = "documents/run-00.parquet"
    table = pq.read_table(io.BytesIO(zipfile.ZipFile(io.BytesIO(small)).read(member))).to_pandas()
    bad = table.astype("int64").assign(n_gold=2**32 + 1)
    agg = read_aggregate(forged(small, member, bad), name="big.cophe")
    with pytest.raises(InputError, match=r"column n_gold holds a count below 0 or above 2³¹ − 1"):
        agg.evaluation("A").documents  # noqa: B018 - read when first asked for


def test_a_failed_write_leaves_no_file(tmp_path, scoring, monkeypatch):
    import cophe_core.aggregate as module

    def broken(members, target=None):
        target.write(b"PK half a zip")
        raise OSError("disk full")

    monkeypatch.setattr(module, "write_zip", broken)
    with pytest.raises(OSError, match="disk full"):
        write_aggregate(aggregate_scoring(scoring, slice_edges=None), tmp_path / "x.cophe")
    assert list(tmp_path.iterdir()) == []


def test_counts_not_counted_come_back_as_not_counted(scoring):
    import dataclasses

    agg = aggregate_scoring(scoring, slice_edges=None)
    counts = {r: dataclasses.replace(c, shared_gold=None, docs_over=None) for r, c in agg.counts.items()}
    back = read_aggregate(write_aggregate(dataclasses.replace(agg, counts=counts)))
    c = back.counts["run_siblings"]
    assert c.shared_gold is None and c.docs_over is None and c.shared_predicted is not None
    same(back.evaluation("run_siblings").levels_table, scoring.evaluation("run_siblings").levels_table)


def test_slice_scores_from_counts_equal_the_in_memory_values(scoring, opened):
    from cophe_core.slices import slice_scores

    evs = {r: scoring.evaluation(r) for r in scoring.run_names}
    want = slice_scores(evs, opened.slices, n_resamples=20)
    got = opened.slice_scores()
    keys = [
        "run",
        "slice",
        "key",
        "size",
        "documents",
        "gold_codes",
        "predicted_codes",
        "measure",
        "statistic",
    ]
    same(got[[*keys, "value", "note"]], want[[*keys, "value", "note"]])
    assert got[["low", "high"]].isna().all().all()


def _nodes_frame(small) -> pd.DataFrame:
    import pyarrow.parquet as pq

    member = zipfile.ZipFile(io.BytesIO(small)).read("ontology/nodes.parquet")
    return pq.read_table(io.BytesIO(member)).to_pandas()


def test_a_text_column_that_decodes_out_of_proportion_is_refused_before_it_is_decoded(small, monkeypatch):
    """A 1.2 MB aggregate whose nodes.parquet decoded to 1 GiB peaked at 2.2 GB: one long title, repeated, is a
    dictionary of one value. Its decoded size is read from the dictionary before any title is made."""
    import pyarrow.compute as pc

    from cophe_core import aggregate

    nodes = _nodes_frame(small)
    bomb = forged(small, "ontology/nodes.parquet", nodes.assign(title="x" * 2_000))
    decoded = len(nodes) * 2_000
    assert decoded > aggregate.TABLE_FLOOR and len(bomb) < len(small) + 100_000
    casts: list[object] = []
    real = pc.cast
    monkeypatch.setattr(aggregate.pc, "cast", lambda *a, **k: casts.append(a) or real(*a, **k))
    with pytest.raises(
        InputError, match=r"^big\.cophe: ontology/nodes\.parquet would decode to [\d,]+ bytes from"
    ):
        read_aggregate(bomb, name="big.cophe")
    assert casts == []  # refused before a text column was decoded
    # the same titles at their honest length are read
    assert read_aggregate(
        forged(small, "ontology/nodes.parquet", nodes), name="big.cophe"
    ).ontology.n_nodes == len(nodes)


def test_a_counts_table_declaring_more_rows_than_the_manifest_allows_is_refused(small):
    """A 0.5 MB counts table whose footer declared 20,000,000 identical rows ran out of memory at 2.9 GB. Its
    rows are bounded by runs × slices × nodes, from the manifest, before a column is read."""
    counts = counts_frame(small)
    m = json.loads(zipfile.ZipFile(io.BytesIO(small)).read("manifest.json"))
    allowed = len(m["runs"]) * (2 + len(m["slices"]["edges"])) * m["ontology"]["nodes"]
    many = pd.DataFrame({c: np.zeros(allowed + 1, dtype=np.int64) for c in counts.columns})
    with pytest.raises(
        InputError, match=rf"counts\.parquet declares {allowed + 1:,} rows; manifest\.json allows"
    ):
        read_aggregate(forged(small, "counts.parquet", many), name="big.cophe")


@pytest.mark.parametrize(
    "edit, message",
    [
        (
            lambda m: m["ontology"].update(nodes=3_000_000),
            "ontology.nodes must be a whole number from 0 to 2,000,000",
        ),
        (lambda m: m["ontology"].update(nodes="many"), "ontology.nodes must be a whole number"),
        (lambda m: m.update(documents=10**9), "documents must be a whole number from 0 to 100,000,000"),
    ],
)
def test_counts_in_the_manifest_are_bounded(small, edit, message):
    with pytest.raises(InputError, match=f"^big.cophe: manifest.json: {message}"):
        read_aggregate(rewrite(small, manifest_edit(edit)), name="big.cophe")


def test_a_manifest_listing_too_many_levels_is_refused_naming_the_field(small):
    """A manifest listing 40,000 levels raised an uncaught ValueError."""
    with pytest.raises(
        InputError,
        match=r"^big\.cophe: manifest\.json: ontology\.levels must be a list of 1 to 32,767 distinct level names, not a list of 40,000",
    ):
        read_aggregate(
            rewrite(
                small, manifest_edit(lambda m: m["ontology"].update(levels=[f"l{i}" for i in range(40_000)]))
            ),
            name="big.cophe",
        )
