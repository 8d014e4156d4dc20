"""Streamed counting on Arrow arrays and integers (issue 28): the integer kernel (count_ids) gives the counts of
the sparse evaluation, and a Parquet labels file read on its dictionary-encoded columns gives the figures, the
rejected rows (in the same order, with the same lines) and the notes of the readers' row-by-row reading."""

from __future__ import annotations

import dataclasses

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq
import pytest
import scipy.sparse as sp
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from cophe_core import score_files
from cophe_core.inputs.readers import InputError, label_columns, label_values
from cophe_core.metrics import evaluate
from cophe_core.ontology import icd9_ontology
from cophe_core.ontology.base import Ontology
from cophe_core.ontology.custom import hierarchy_from_edges
from cophe_core.scale import pipeline
from cophe_core.scale.pipeline import score_dataset
from cophe_core.scale.sources import LabelChunk, label_chunks, source_files
from cophe_core.scoring import kernel
from cophe_core.scoring.kernel import count_ids
from tests.conftest import examples
from tests.core.test_stream import assert_same, sorted_rows

ICD9 = icd9_ontology()
# a small tree of three levels, where a label may sit at any level
TREE = hierarchy_from_edges(
    [("r", "", "", 1), ("a", "r", "", 2), ("b", "r", "", 3), ("a1", "a", "", 4), ("a2", "a", "", 5)]
    + [("b1", "b", "", 6), ("a11", "a1", "", 7), ("a12", "a1", "", 8), ("b11", "b1", "", 9)]
)


# ------------------------------------------------------------------ the integer kernel


def _matrix(doc: np.ndarray, node: np.ndarray, n_docs: int, n_nodes: int) -> sp.csr_matrix:
    m = sp.csr_matrix((np.ones(len(doc), np.int32), (doc, node)), shape=(n_docs, n_nodes))
    m.sum_duplicates()
    return m


def _rows(n_docs: int, nodes: list[int]) -> st.SearchStrategy:
    pair = st.tuples(st.integers(0, n_docs - 1), st.sampled_from(nodes))
    return st.lists(pair, max_size=60).map(
        lambda r: (np.array([d for d, _ in r], int), np.array([n for _, n in r], int))
    )


ICD9_NODES = [
    int(ICD9.codes[c]) for c in ("401.9", "401.1", "401", "428.0", "428", "250.00", "250.01", "V45.81")
]
ICD9_NODES += [int(n) for n in np.flatnonzero(ICD9.level == ICD9.level.max())[:2]]  # top-level nodes too


@settings(
    max_examples=examples(60), deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(
    data=st.data(),
    n_docs=st.integers(1, 6),
    tree=st.sampled_from(["icd9", "tree"]),
    documents=st.booleans(),
    sum_bits=st.sampled_from([26, 1]),
)
def test_count_ids_gives_the_counts_of_the_sparse_evaluation(
    monkeypatch, data, n_docs, tree, documents, sum_bits
):
    """Every node count, the per-document table and the repeated rows equal evaluate()'s (label matrices times
    the ancestor closure), at every maximum level, whatever the rows (repeats, labels at any level); with each
    level's counts and sums per node packed in one pass, or (``sum_bits`` 1: sums that do not fit) in two."""
    monkeypatch.setattr(kernel, "_SUM_BITS", sum_bits)
    onto = ICD9 if tree == "icd9" else TREE
    nodes = ICD9_NODES if tree == "icd9" else list(range(TREE.n_nodes))
    gold, pred = data.draw(_rows(n_docs, nodes)), data.draw(_rows(n_docs, nodes))
    max_level = data.draw(st.sampled_from([None, *onto.levels]))
    g, p = _matrix(gold[0], gold[1], n_docs, onto.n_nodes), _matrix(pred[0], pred[1], n_docs, onto.n_nodes)
    ev = evaluate(g, p, onto, max_level=max_level)
    got = count_ids(gold, pred, n_docs, onto, max_level=max_level, documents=documents)
    for f in dataclasses.fields(ev.node_counts):
        assert np.array_equal(getattr(ev.node_counts, f.name), getattr(got.counts, f.name)), f.name
    assert got.duplicates == (len(gold[0]) - g.nnz, len(pred[0]) - p.nnz)
    assert got.columns == list(ev.documents.columns[1:])
    if documents:
        assert got.documents is not None
        assert np.array_equal(got.documents, ev.documents[got.columns].to_numpy())
    else:
        assert got.documents is None


# a deeper tree (five levels) with wide fan-out, so that a document's groups merge level after level: a
# label's ancestors at the finer levels are the label's own group, and a label at an inner node passes the
# finer levels by (it has no ancestor there) and joins its own level's group
DEEP = hierarchy_from_edges(
    [("R", "", "", 1)]
    + [(f"c{i}", "R", "", 2) for i in range(3)]
    + [(f"c{i}b{j}", f"c{i}", "", 3) for i in range(3) for j in range(3)]
    + [(f"c{i}b{j}k{k}", f"c{i}b{j}", "", 4) for i in range(3) for j in range(3) for k in range(2)]
    + [
        (f"c{i}b{j}k{k}x{m}", f"c{i}b{j}k{k}", "", 5)
        for i in range(3)
        for j in range(3)
        for k in range(2)
        for m in range(2)
    ]
)


@settings(max_examples=examples(80), deadline=None)
@given(data=st.data(), n_docs=st.integers(1, 4), documents=st.booleans())
def test_level_groups_merged_from_finer_levels_give_the_sparse_counts(data, n_docs, documents):
    """count_ids merges each level's (document, node) groups from the finer level's: on a five-level tree,
    with many labels per document under one node (x and y well above 1) at every depth, every node count
    and the per-document table equal evaluate()'s, at every maximum level."""
    nodes = list(range(DEEP.n_nodes))
    rows = st.lists(st.tuples(st.integers(0, n_docs - 1), st.sampled_from(nodes)), max_size=150).map(
        lambda r: (np.array([d for d, _ in r], int), np.array([n for _, n in r], int))
    )
    gold, pred = data.draw(rows), data.draw(rows)
    max_level = data.draw(st.sampled_from([None, *DEEP.levels]))
    g, p = _matrix(gold[0], gold[1], n_docs, DEEP.n_nodes), _matrix(pred[0], pred[1], n_docs, DEEP.n_nodes)
    ev = evaluate(g, p, DEEP, max_level=max_level)
    got = count_ids(gold, pred, n_docs, DEEP, max_level=max_level, documents=documents)
    for f in dataclasses.fields(ev.node_counts):
        assert np.array_equal(getattr(ev.node_counts, f.name), getattr(got.counts, f.name)), f.name
    if documents:
        assert got.documents is not None
        assert np.array_equal(got.documents, ev.documents[got.columns].to_numpy())


def test_a_level_nested_in_itself_is_merged_as_evaluate_counts_it():
    """The finest level's groups are counted from the units alone only when no node of that level lies under
    another of it (true of every ontology the builders make). An ontology made by hand with a leaf-level node
    under another (B under A, both "leaf") is merged instead: A's group holds A's and B's rows, as the sparse
    evaluation counts it (A: 2 gold rows and 1 predicted in document 0, 1 and 2 in document 1)."""
    onto = Ontology(
        name="nested",
        levels=("leaf", "top"),
        keys=np.array(["T", "A", "B"], dtype=object),
        titles=np.array(["T", "A", "B"], dtype=object),
        level=np.array([1, 0, 0], np.int16),
        parent=np.array([-1, 0, 1], np.int32),
        listed=np.ones(3, bool),
        codes={"T": 0, "A": 1, "B": 2},
    )
    gold, pred = (np.array([0, 0, 1]), np.array([1, 2, 2])), (np.array([0, 1, 1]), np.array([2, 1, 2]))
    g, p = _matrix(gold[0], gold[1], 2, 3), _matrix(pred[0], pred[1], 2, 3)
    ev = evaluate(g, p, onto, max_level="top")
    got = count_ids(gold, pred, 2, onto, max_level="top")
    assert got.counts.tp.tolist() == [2, 2, 0]  # A: min(2, 1) + min(1, 2) at "leaf"; T: the same at "top"
    for f in dataclasses.fields(ev.node_counts):
        assert np.array_equal(getattr(ev.node_counts, f.name), getattr(got.counts, f.name)), f.name
    assert got.documents is not None
    assert np.array_equal(got.documents, ev.documents[got.columns].to_numpy())


def test_count_ids_by_hand():
    """One document, gold 401.9 and 428.0, predicted 401.1 twice: at e0 (category) 401 is a hit and 428 a
    miss; at e1 401.1 and 401.9 differ; the repeated prediction is collapsed."""
    o = ICD9
    gold = (np.array([0, 0]), np.array([o.codes["401.9"], o.codes["428.0"]]))
    pred = (np.array([0, 0]), np.array([o.codes["401.1"], o.codes["401.1"]]))
    got = count_ids(gold, pred, 1, o, max_level="e0")
    assert got.documents is not None
    row = dict(zip(got.columns, got.documents[0].tolist()))
    assert (row["e0_tp"], row["e0_fp"], row["e0_fn"]) == (1, 0, 1)
    assert (row["e1_tp"], row["e1_fp"], row["e1_fn"]) == (0, 1, 2)
    assert (row["n_gold"], row["n_predicted"], row["flat_tp"]) == (2, 1, 0)
    assert got.duplicates == (0, 1)
    under, shared = got.counts.docs_under, got.counts.shared_gold
    assert under is not None and shared is not None
    assert under[o.codes["428"]] == 1 and shared[o.codes["401"]] == 1


def test_count_ids_refuses_a_dag():
    dag = hierarchy_from_edges(
        [("r", "", "", 1), ("a", "r", "", 2), ("b", "r", "", 3), ("x", "a", "", 4), ("x", "b", "", 5)]
    )
    with pytest.raises(ValueError, match="tree"):
        count_ids((np.array([0]), np.array([1])), (np.array([0]), np.array([1])), 1, dag)


# ------------------------------------------------------------------ Parquet read on Arrow arrays


def test_the_names_alone_decide_a_labels_table():
    assert label_columns(["HADM_ID", "ICD9_CODE"], "g.parquet") == ("HADM_ID", "ICD9_CODE")
    assert label_columns(["doc_id", "code", "score"], "p.parquet") is None  # scores
    assert label_columns(["doc_id", "code", "score"], "g.parquet", labels_only=True) == ("doc_id", "code")
    assert label_columns(["_id", "401.9", "428.0"], "p.parquet") is None  # perhaps a wide matrix
    assert label_columns(["doc_id", "labels"], "g.parquet") is None  # CAML's joined codes
    assert label_columns(["doc_id", "text"], "g.parquet") is None  # no code column: the readers say so
    assert label_columns(["id", "code"], "g.parquet", doc_col="nope") is None


def test_distinct_values_are_normalised_as_rows_are():
    v = label_values(
        pd.Series([" d1 ", "", "None", "nan", None, "x" * 257]), pd.Series(["401.9", " ", None, "4" * 65])
    )
    assert v.doc.tolist()[0] == "d1"
    assert v.no_doc.tolist() == [False, True, True, True, True, False]
    assert v.long_doc.tolist() == [False, False, False, False, False, True]
    assert v.empty_code.tolist() == [False, True, True, False] and v.long_code.tolist() == [False] * 3 + [
        True
    ]
    assert not v.joined and label_values(pd.Series(["1"]), pd.Series(["401.9;428.0"])).joined


PLAIN_PATTERN = r"(?s)^[0-9A-Za-z]([^;]*[0-9A-Za-z])?$"
TEXT = st.one_of(
    st.none(),
    st.text(alphabet=st.sampled_from(list("aZ09 .;\t\né-")), max_size=8),
    st.sampled_from(["nan", "None", "401.9", "a;b", "V" * 9]),
)


@settings(max_examples=examples(200), deadline=None)
@given(
    values=st.lists(TEXT, max_size=12),
    large=st.booleans(),
    start=st.integers(0, 3),
    max_bytes=st.integers(1, 9),
    missing=st.sampled_from([[], ["nan", "None"]]),
)
def test_plain_values_found_on_the_buffers_are_those_the_pattern_finds(
    values, large, start, max_bytes, missing
):
    """The plain values (first and last byte an ASCII letter or digit, no ``;``, at most ``max_bytes``, not a
    missing word) read from the Arrow buffers are those the regular expression finds, in sliced arrays of
    either string type with nulls, empty and non-ASCII values."""
    from cophe_core.scale import sources

    array = pa.array(values, pa.large_string() if large else pa.string()).slice(min(start, len(values)))
    found = sources._plain(array, max_bytes, missing)
    # against the rule as a regular expression (what the reading used before)
    pattern = pc.and_(
        pc.match_substring_regex(array, PLAIN_PATTERN), pc.less_equal(pc.binary_length(array), max_bytes)
    )
    if missing:
        pattern = pc.and_(pattern, pc.invert(pc.is_in(array, pa.array(missing, array.type))))
    assert found.tolist() == pattern.fill_null(False).to_pylist()
    # and against Python's own reading of the rule
    expected = [
        v is not None
        and 0 < len(v.encode()) <= max_bytes
        and v[0].isascii()
        and v[0].isalnum()
        and v[-1].isascii()
        and v[-1].isalnum()
        and ";" not in v
        and v not in missing
        for v in array.to_pylist()
    ]
    assert found.tolist() == expected


def _write(path, rows: list[tuple], *, dictionary: bool, int_docs: bool, row_group: int) -> None:
    docs = [d for d, _ in rows]
    if int_docs:
        doc_array = pa.array([None if d is None else int(d) for d in docs], pa.int64())
    else:
        doc_array = pa.array(docs, pa.string())
    table = pa.table(
        {
            "doc_id": doc_array,
            "code": pa.array([c for _, c in rows], pa.string()),
            "extra": pa.array(range(len(rows))),
        }
    )
    if dictionary:
        table = table.set_column(1, "code", pc_dictionary(table["code"]))
    pq.write_table(table, path, row_group_size=max(row_group, 1))


def pc_dictionary(column: pa.ChunkedArray) -> pa.ChunkedArray:
    import pyarrow.compute as pc

    return pc.dictionary_encode(column)


def _row_by_row(monkeypatch, *args, **kw):
    """The streamed scoring with every file read by the readers row by row (no Arrow reading)."""
    with monkeypatch.context() as m:
        m.setattr(pipeline, "label_chunks", lambda *a, **k: None)
        return score_dataset(*args, **kw)


HOSTILE_DOCS = st.sampled_from(
    ["d0", "d1", "d2", "d3", " d1 ", "d1 ", "", "  ", "nan", "None", None, "x" * 300]
)
HOSTILE_CODES = st.sampled_from(
    [
        "401.9",
        "428.0",
        "4019",
        "v45.81",
        "25000",
        "XYZ",
        "888.8",
        "",
        " ",
        None,
        "9" * 70,
        "401.9;428.0",
        "684",
    ]
)
INT_DOCS = st.sampled_from(["1", "2", "3", "12", None])


@settings(
    max_examples=examples(30), deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(
    int_docs=st.booleans(),
    data=st.data(),
    dictionary=st.booleans(),
    row_group=st.integers(1, 12),
    chunk=st.integers(1, 20),
)
def test_parquet_read_on_arrow_arrays_equals_the_row_by_row_reading(
    tmp_path_factory, monkeypatch, int_docs, data, dictionary, row_group, chunk
):
    """Blank, null, padded, "nan" and over-long ids; blank, null, over-long, joined, lowercase and undotted
    codes; integer ids with and without nulls; dictionary columns; row groups and chunks of any size: the same
    figures, rejected and flagged rows (in the same order) and notes as the readers' reading, and the figures of
    the in-memory path."""
    docs = INT_DOCS if int_docs else HOSTILE_DOCS
    gold = data.draw(st.lists(st.tuples(docs, HOSTILE_CODES), min_size=1, max_size=25))
    pred = data.draw(st.lists(st.tuples(docs, HOSTILE_CODES), max_size=25))
    root = tmp_path_factory.mktemp("arrow")
    for name, rows in (("g.parquet", gold), ("p.parquet", pred)):
        _write(root / name, rows, dictionary=dictionary, int_docs=int_docs, row_group=row_group)
    g, p = root / "g.parquet", root / "p.parquet"
    try:
        reference = _row_by_row(monkeypatch, g, p, ontology="icd9", chunk_rows=chunk)
    except InputError as e:
        with pytest.raises(InputError) as streamed:
            score_dataset(g, p, ontology="icd9", chunk_rows=chunk)
        assert str(streamed.value) == str(e)
        return
    sv = score_dataset(g, p, ontology="icd9", chunk_rows=chunk)
    assert_same(reference, sv)  # (a streamed evaluation has every table assert_same reads)
    pd.testing.assert_frame_equal(sv.rejected, reference.rejected)
    pd.testing.assert_frame_equal(sv.flagged, reference.flagged)
    assert sv.warnings == reference.warnings and sv.rows == reference.rows
    if int_docs and any(d is None for d, _ in gold + pred):
        return  # a chunk's integer ids with a null read as floats (1.0), the whole file's in memory too
    if any(c is not None and ";" in c for _, c in gold + pred):
        return  # streamed, each chunk decides alone whether its cells join codes (as before the Arrow reading)
    s = score_files(g, {"pred": p}, ontology="icd9")
    assert_same(s.evaluation("pred"), sv)
    pd.testing.assert_frame_equal(sorted_rows(sv.rejected), sorted_rows(s.corpus.rejected))


# values the readers leave as they are: chunks of them are read without row-by-row masks (sources.py)
PLAIN_DOCS = st.sampled_from(["d0", "d1", "d2", "d3", "7"])
PLAIN_CODES = st.sampled_from(["401.9", "428.0", "4019", "v45.81", "XYZ", "999.99", "E849.7", "V45.81"])


@settings(
    max_examples=examples(25), deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(
    gold=st.lists(st.tuples(PLAIN_DOCS, PLAIN_CODES), min_size=1, max_size=30),
    pred=st.lists(st.tuples(PLAIN_DOCS, PLAIN_CODES), max_size=30),
    chunk=st.integers(1, 12),
)
def test_chunks_of_plain_values_list_rejected_and_flagged_rows_at_their_lines(
    tmp_path_factory, monkeypatch, gold, pred, chunk
):
    """Every value plain (nothing for the readers to strip or refuse), so every chunk takes the quick path: the
    rows refused or flagged by the code table (unknown, malformed, lowercase, undotted codes) are listed at
    the lines the row-by-row reading gives them, in chunks of any size, with the same figures."""
    root = tmp_path_factory.mktemp("plain")
    for name, rows in (("g.parquet", gold), ("p.parquet", pred)):
        _write(root / name, rows, dictionary=False, int_docs=False, row_group=5)
    g, p = root / "g.parquet", root / "p.parquet"
    try:
        reference = _row_by_row(monkeypatch, g, p, ontology="icd9", chunk_rows=chunk)
    except InputError as e:  # nothing scorable on one side: the same error
        with pytest.raises(InputError) as streamed:
            score_dataset(g, p, ontology="icd9", chunk_rows=chunk)
        assert str(streamed.value) == str(e)
        return
    sv = score_dataset(g, p, ontology="icd9", chunk_rows=chunk)
    assert_same(reference, sv)
    pd.testing.assert_frame_equal(sv.rejected, reference.rejected)
    pd.testing.assert_frame_equal(sv.flagged, reference.flagged)
    assert sv.rows == reference.rows


def test_a_plain_labels_file_is_read_on_arrow_arrays_and_others_are_not(tmp_path):
    pq.write_table(pa.table({"doc_id": ["1", "2"], "code": ["401.9", " "]}), tmp_path / "g.parquet")
    (f,) = source_files(tmp_path / "g.parquet")
    chunks = label_chunks(f, 10, labels_only=True, doc_col=None, code_col=None)
    assert chunks is not None
    (chunk,) = list(chunks)
    assert isinstance(chunk, LabelChunk)
    assert chunk.lines.tolist() == [1] and chunk.rejected.line.tolist() == [2]
    assert chunk.docs.take(chunk.alone).to_pylist() == [
        "2"
    ]  # its only row has an empty code: still a document
    pq.write_table(pa.table({"doc_id": ["1"], "code": [b"401.9"]}), tmp_path / "b.parquet")  # bytes
    pq.write_table(pa.table({"doc_id": ["1"], "code": ["401.9"], "score": [0.5]}), tmp_path / "s.parquet")
    pq.write_table(pa.table({"doc_id": ["1"], "code": [4019]}), tmp_path / "n.parquet")  # numbers
    for name in ("b.parquet", "s.parquet", "n.parquet"):
        (f,) = source_files(tmp_path / name)
        assert label_chunks(f, 10, labels_only=False, doc_col=None, code_col=None) is None, name
