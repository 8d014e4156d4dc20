"""Readers: every format, every bad-input case, and the row accounting of encode()."""

from __future__ import annotations

import io
import json

import pandas as pd
import pytest

from cophe_core import InputError, read_labels, score_files
from cophe_core.labels import encode

EXPECTED = {("1", "401.9"), ("1", "428.0"), ("2", "V45.81")}


def as_set(raw) -> set[tuple[str, str]]:
    return set(zip(raw.pairs.doc_id, raw.pairs.code))


@pytest.mark.parametrize("name,data", [
    ("long.csv", b"doc_id,code\n1,401.9\n1,428.0\n2,V45.81\n3,\n"),
    ("long.tsv", b"doc_id\tcode\n1\t401.9\n1\t428.0\n2\tV45.81\n"),
    ("semi.csv", b"doc_id;code\n1;401.9\n1;428.0\n2;V45.81\n"),
    ("mimic.csv", b'"ROW_ID","SUBJECT_ID","HADM_ID","SEQ_NUM","ICD9_CODE"\n1,9,1,1,"401.9"\n2,9,1,2,"428.0"\n3,9,2,1,"V45.81"\n'),
    ("caml.csv", b'SUBJECT_ID,HADM_ID,TEXT,LABELS\n9,1,"note, with\nnewline",401.9;428.0\n9,2,text,V45.81\n9,3,empty,\n'),
    ("preds_test.psv", b"1|401.9|428.0\n2|V45.81\n3\n"),
    ("x.json", json.dumps([{"doc_id": "1", "codes": ["401.9", "428.0"]}, {"doc_id": 2, "codes": ["V45.81"]},
                           {"doc_id": "3", "codes": []}]).encode()),
    ("map.json", json.dumps({"1": ["401.9", "428.0"], "2": ["V45.81"], "3": []}).encode()),
    ("x.jsonl", b'{"doc_id": "1", "codes": ["401.9", "428.0"]}\n{"doc_id": "2", "codes": ["V45.81"]}\n{"doc_id": "3", "codes": []}\n'),
])
def test_formats(name, data):
    raw = read_labels(data, name=name)
    assert as_set(raw) == EXPECTED
    if name not in ("long.tsv", "semi.csv", "mimic.csv"):
        assert "3" in set(raw.docs)  # a document with no codes is still evaluated


def test_parquet_long_and_list_column():
    long = pd.DataFrame({"doc_id": ["1", "1", "2"], "code": ["401.9", "428.0", "V45.81"]})
    wide = pd.DataFrame({"HADM_ID": [1, 2, 3], "labels": [["401.9", "428.0"], ["V45.81"], []]})
    for frame in (long, wide):
        buf = io.BytesIO()
        frame.to_parquet(buf)
        raw = read_labels(buf.getvalue(), name="x.parquet")
        assert as_set(raw) == EXPECTED


def test_line_numbers_count_quoted_newlines():
    data = b'SUBJECT_ID,HADM_ID,TEXT,LABELS\n9,1,"a\nb\nc",401.9\n9,2,t,zz\n'
    raw = read_labels(data, name="caml.csv")
    assert dict(zip(raw.pairs.code, raw.pairs.line)) == {"401.9": 2, "zz": 5}


def test_column_overrides():
    data = b"adm,dx,other\n1,401.9,x\n"
    raw = read_labels(data, name="f.csv", doc_col="ADM", code_col="dx")
    assert as_set(raw) == {("1", "401.9")}


@pytest.mark.parametrize("data,fragment", [
    (b"", "empty"),
    (b"   \n\n", "empty"),
    (b"\x00\x01\x02PK\x03\x04binary", "not a text file"),
    (b"doc_id,code\n1,\xff\xfe401.9\n", "line 2: not valid UTF-8"),
    (b"hadm,icd\n1,401.9\n", "cannot find the document id column"),
    (b"doc_id,foo\n1,401.9\n", "cannot find the code column"),
    (b"doc_id code\n1 401.9\n", "single column"),
    (b"doc_id,code\n1,401.9,extra,fields\n", "cannot parse"),
])
def test_bad_files_give_one_clear_error(data, fragment):
    with pytest.raises(InputError, match=fragment) as e:
        read_labels(data, name="bad.csv")
    assert str(e.value).startswith("bad.csv")


def test_bad_json():
    with pytest.raises(InputError, match=r"x.json, line 1: not valid JSON"):
        read_labels(b"[{oops", name="x.json")
    with pytest.raises(InputError, match=r"x.jsonl, line 2"):
        read_labels(b'{"doc_id": 1, "codes": []}\n{bad\n', name="x.jsonl")


def test_corrupt_parquet():
    with pytest.raises(InputError, match="cannot read as Parquet"):
        read_labels(b"PAR1garbage", name="x.parquet")


def test_too_large(monkeypatch):
    import cophe_core.readers as r
    monkeypatch.setattr(r, "MAX_BYTES", 10)
    with pytest.raises(InputError, match="larger than"):
        read_labels(io.BytesIO(b"doc_id,code\n1,401.9\n"), name="big.csv")


def test_every_row_is_scored_or_rejected(icd9):
    gold = read_labels(b"doc_id,code\n1,401.9\n1,401.9\n1,4019\n2,zz\n,428.0\n2,\n3,364.99\n", name="gold.csv")
    pred = read_labels(b"doc_id,code\n1,401.1\n4,38.9\n", name="pred.csv")
    corpus = encode(gold, {"A": pred}, icd9)
    rej = corpus.rejected
    assert sorted(zip(rej.file, rej.line)) == [("gold.csv", 4), ("gold.csv", 5), ("gold.csv", 6), ("gold.csv", 7)]
    reasons = dict(zip(rej.line, rej.reason))
    assert "ambiguous" in reasons[4] and "well-formed" in reasons[5]
    assert reasons[6] == "empty document id" and reasons[7] == "empty code"
    # scored: 401.9 (twice, collapsed) and 364.99 (placed by structure, flagged)
    assert corpus.gold.nnz == 2
    flags = dict(zip(corpus.flagged.value, corpus.flagged.reason))
    assert "not a billable CMS v32 code" in flags["364.99"]
    assert "038.9" in flags["38.9"]
    text = "\n".join(corpus.warnings)
    assert "gold.csv: 1 duplicate" in text
    assert "pred.csv: 2 gold documents have no predictions row" in text
    assert "pred.csv: 1 documents are not in the gold standard" in text
    assert list(corpus.docs) == ["1", "2", "3", "4"]


def test_undotted_codes_need_a_system():
    gold, pred = b"doc_id,code\n1,4019\n", b"doc_id,code\n1,4011\n"
    s = score_files(gold, {"A": pred}, ontology="icd9")
    assert len(s.corpus.rejected) == 2 and s.corpus.gold.nnz == 0
    s = score_files(gold, {"A": pred}, ontology="icd9", system="diagnosis")
    assert s.evaluation("A").score("cophe", "e0")["tp"] == 1
    s = score_files(gold, {"A": pred}, ontology="icd9", system="procedure")
    assert s.evaluation("A").score("cophe", "e0")["tp"] == 1
    assert s.corpus.ontology.keys[s.corpus.gold.indices[0]] == "40.19"
