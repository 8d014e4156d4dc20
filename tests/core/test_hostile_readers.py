"""Every reader, given deep nesting, huge integers, undecodable bytes and binary Parquet columns, raises
InputError naming the file (and its line, row or column): never a RecursionError, ValueError or
UnicodeDecodeError (issue 29, point 3)."""

from __future__ import annotations

import io
import json
import re
import zipfile

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from cophe_core import InputError, score_files
from cophe_core.breakdown.documents import read_notes
from cophe_core.breakdown.slices import read_metadata
from cophe_core.inputs.readers import read_input, read_labels, read_scores
from cophe_core.ontology.custom import load_hierarchy
from cophe_core.output.analysis import Analysis, InputFile, read_analysis, score_analysis, write_analysis
from cophe_core.scale.aggregate import aggregate_scoring, write_aggregate
from cophe_core.scale.aggregate_reader import read_aggregate

DEEP = "[" * 100_000 + "]" * 100_000
HUGE = "9" * 5_000


def parquet(**columns) -> bytes:
    out = io.BytesIO()
    pq.write_table(pa.table({k: pa.array(v) for k, v in columns.items()}), out)
    return out.getvalue()


BINARY = parquet(doc_id=[b"1", b"2"], code=[b"401.9", b"\xff\xfe401"], text=[b"a", b"b"], length=[b"1", b"2"])


def scored(data: bytes, name: str):
    """The reader of a saved analysis's inputs: the analysis opened, then its inputs scored."""
    a = Analysis(InputFile(name, data), {"A": InputFile("a.csv", b"doc_id,code\n1,401.9\n")})
    return score_analysis(read_analysis(write_analysis(a), name="shared.cophe"))


READERS = {
    "labels": lambda d, n: read_labels(d, name=n),
    "scores": lambda d, n: read_scores(d, name=n),
    "input": lambda d, n: read_input(d, name=n),
    "notes": lambda d, n: read_notes(d, name=n),
    "metadata": lambda d, n: read_metadata(d, name=n),
    "saved analysis input": scored,
}

# (file name, bytes, where the message must point: a line, a row and column, or none beyond the file)
HOSTILE = [
    ("deep.jsonl", f'{{"doc_id": "1", "codes": {DEEP}, "text": {DEEP}}}\n'.encode(), r"line 1"),
    ("deep.json", f'[{{"doc_id": "1", "codes": {DEEP}}}]'.encode(), None),
    (
        "huge.jsonl",
        f'{{"doc_id": "1", "codes": ["401.9"], "text": "x"}}\n{{"doc_id": {HUGE}}}\n'.encode(),
        "line 2",
    ),
    ("huge.json", f'[{{"doc_id": {HUGE}, "codes": ["401.9"]}}]'.encode(), "line 1"),
    ("bytes.csv", b"doc_id,code,text,length\n1,401.9,a,1\n2,\xff401,b,2\n", "line 3"),
    ("bytes.tsv", b"doc_id\tcode\ttext\tlength\n1\t\xff401\ta\t1\n", "line 2"),
    ("bytes.jsonl", b'{"doc_id": "1", "codes": ["\xff"], "text": "\xff"}\n', "line 1"),
]


@pytest.mark.parametrize("reader", list(READERS))
@pytest.mark.parametrize("name, data, where", HOSTILE, ids=[h[0] for h in HOSTILE])
def test_every_reader_refuses_hostile_text_naming_the_file(reader, name, data, where):
    try:
        READERS[reader](data, name)
    except InputError as e:
        assert name in str(e), str(e)[:300]
        if where is not None and reader != "saved analysis input":
            assert where in str(e) or "not UTF-8" not in str(e) and reader == "metadata", str(e)[:300]
    # a reader may also take what it can, as text; any other exception fails the test


@pytest.mark.parametrize("reader", ["labels", "scores", "input", "metadata", "saved analysis input"])
def test_a_binary_parquet_column_that_is_not_text_is_refused_naming_its_row_and_column(reader):
    with pytest.raises(
        InputError, match=r"codes\.parquet, row 2, column 'code': b'\\xff\\xfe401' is not UTF-8"
    ):
        READERS[reader](BINARY, "codes.parquet")


def test_a_binary_parquet_column_of_utf8_text_is_read_as_text():
    raw = read_labels(parquet(doc_id=[b"1", b"2"], code=[b"401.9", b"428.0"]), name="codes.parquet")
    assert sorted(zip(raw.pairs.doc_id, raw.pairs.code)) == [("1", "401.9"), ("2", "428.0")]


def test_a_streamed_dataset_refuses_a_binary_column_naming_its_row_and_column(tmp_path):
    (tmp_path / "gold.parquet").write_bytes(parquet(doc_id=["1", "2"], code=["401.9", "428.0"]))
    (tmp_path / "run.parquet").write_bytes(BINARY)
    from cophe_core.scale.pipeline import score_dataset

    with pytest.raises(InputError, match=r"run\.parquet, row 2, column 'code': .* is not UTF-8"):
        score_dataset(tmp_path / "gold.parquet", tmp_path / "run.parquet", ontology="icd9")


@pytest.mark.parametrize(
    "name, data",
    [
        ("deep.json", f'{{"a": {DEEP}}}'.encode()),
        ("huge.json", f'{{"{HUGE}": {HUGE}}}'.encode()),
        ("bytes.csv", b"child,parent\n\xff,\n"),
    ],
)
def test_a_hierarchy_file_refuses_hostile_text_naming_the_file(name, data):
    with pytest.raises(InputError, match=f"^{re.escape(name)}"):
        load_hierarchy(data, name=name)


def _with_manifest(archive: bytes, manifest: bytes) -> bytes:
    src = zipfile.ZipFile(io.BytesIO(archive))
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w") as z:
        for info in src.infolist():
            z.writestr(info, manifest if info.filename == "manifest.json" else src.read(info))
    return out.getvalue()


@pytest.fixture(scope="module")
def archives() -> dict[str, bytes]:
    s = score_files(b"doc_id,code\n1,401.9\n2,428.0\n", {"A": b"doc_id,code\n1,401.1\n"})
    gold = InputFile("gold.csv", b"doc_id,code\n1,401.9\n")
    saved = write_analysis(Analysis(gold, {"A": InputFile("a.csv", b"doc_id,code\n1,401.9\n")}))
    return {"saved": saved, "aggregate": write_aggregate(aggregate_scoring(s))}


@pytest.mark.parametrize("kind", ["saved", "aggregate"])
@pytest.mark.parametrize(
    "manifest",
    [
        DEEP.encode(),
        ('{"format": "cophe-analysis", "format_version": ' + HUGE + "}").encode(),
        b'{"format": "\xff"}',
        json.dumps({"format": "cophe-analysis", "options": {"max_level": [[[[[]]]]]}}).encode(),
    ],
    ids=["deep", "huge", "bytes", "nested-option"],
)
def test_a_hostile_manifest_is_refused_naming_the_file(archives, kind, manifest):
    reader = read_analysis if kind == "saved" else read_aggregate
    with pytest.raises(InputError, match="^shared.cophe: "):
        reader(_with_manifest(archives[kind], manifest), name="shared.cophe")
