"""Readers: every format, every bad-input case, and the row accounting of encode()."""

from __future__ import annotations

import io
import json

import numpy as np
import pandas as pd
import pytest

from cophe_core import InputError, read_labels, score_files, score_labels
from cophe_core.inputs.readers import RawScores, input_kind, read_input, read_scores
from cophe_core.scoring.labels import NothingScorable, encode

EXPECTED = {("1", "401.9"), ("1", "428.0"), ("2", "V45.81")}


def as_set(raw) -> set[tuple[str, str]]:
    return set(zip(raw.pairs.doc_id, raw.pairs.code))


@pytest.mark.parametrize(
    "name,data",
    [
        ("long.csv", b"doc_id,code\n1,401.9\n1,428.0\n2,V45.81\n3,\n"),
        ("long.tsv", b"doc_id\tcode\n1\t401.9\n1\t428.0\n2\tV45.81\n"),
        ("semi.csv", b"doc_id;code\n1;401.9\n1;428.0\n2;V45.81\n"),
        (
            "mimic.csv",
            b'"ROW_ID","SUBJECT_ID","HADM_ID","SEQ_NUM","ICD9_CODE"\n1,9,1,1,"401.9"\n2,9,1,2,"428.0"\n3,9,2,1,"V45.81"\n',
        ),
        (
            "caml.csv",
            b'SUBJECT_ID,HADM_ID,TEXT,LABELS\n9,1,"note, with\nnewline",401.9;428.0\n9,2,text,V45.81\n9,3,empty,\n',
        ),
        ("preds_test.psv", b"1|401.9|428.0\n2|V45.81\n3\n"),
        (
            "x.json",
            json.dumps(
                [
                    {"doc_id": "1", "codes": ["401.9", "428.0"]},
                    {"doc_id": 2, "codes": ["V45.81"]},
                    {"doc_id": "3", "codes": []},
                ]
            ).encode(),
        ),
        ("map.json", json.dumps({"1": ["401.9", "428.0"], "2": ["V45.81"], "3": []}).encode()),
        (
            "x.jsonl",
            b'{"doc_id": "1", "codes": ["401.9", "428.0"]}\n{"doc_id": "2", "codes": ["V45.81"]}\n{"doc_id": "3", "codes": []}\n',
        ),
    ],
)
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


@pytest.mark.parametrize(
    "data,fragment",
    [
        (b"", "empty"),
        (b"   \n\n", "empty"),
        (b"\x00\x01\x02PK\x03\x04binary", "not a text file"),
        (b"doc_id,code\n1,\xff\xfe401.9\n", "line 2: not valid UTF-8"),
        (b"hadm,icd\n1,401.9\n", "cannot find the document id column"),
        (b"doc_id,foo\n1,401.9\n", "cannot find the code column"),
        (b"doc_id code\n1 401.9\n", "single column"),
        (b"doc_id,code\n1,401.9,extra,fields\n", "line 2: this row has 4 fields where the header has 2"),
    ],
)
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
    import cophe_core.base.files as f

    monkeypatch.setattr(f, "MAX_BYTES", 10)
    with pytest.raises(InputError, match="larger than"):
        read_labels(io.BytesIO(b"doc_id,code\n1,401.9\n"), name="big.csv")


def test_every_row_is_scored_or_rejected(icd9):
    gold = read_labels(
        b"doc_id,code\n1,401.9\n1,401.9\n1,4019\n2,zz\n,428.0\n2,\n3,364.99\n", name="gold.csv"
    )
    pred = read_labels(b"doc_id,code\n1,401.1\n4,38.9\n", name="pred.csv")
    corpus = encode(gold, {"A": pred}, icd9)
    rej = corpus.rejected
    assert sorted(zip(rej.file, rej.line)) == [
        ("gold.csv", 4),
        ("gold.csv", 5),
        ("gold.csv", 6),
        ("gold.csv", 7),
    ]
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
    assert "pred.csv: 1 document is not in the gold standard" in text
    assert list(corpus.docs) == ["1", "2", "3", "4"]


def test_undotted_codes_need_a_system():
    gold, pred = b"doc_id,code\n1,4019\n", b"doc_id,code\n1,4011\n"
    with pytest.raises(NothingScorable, match="none of its 1 rows can be scored") as err:
        score_files(gold, {"A": pred}, ontology="icd9")
    assert err.value.needs_system and err.value.file == "gold"
    assert err.value.rejected[["line", "value"]].values.tolist() == [[2, "4019"]]
    s = score_files(gold, {"A": pred}, ontology="icd9", system="diagnosis")
    assert s.evaluation("A").score("cophe", "e0").tp == 1
    s = score_files(gold, {"A": pred}, ontology="icd9", system="procedure")
    assert s.evaluation("A").score("cophe", "e0").tp == 1
    assert s.corpus.ontology.keys[s.corpus.gold.indices[0]] == "40.19"


# --- the kind of a file (labels or scores), decided once from its columns ---------------------------------


def _binary(frame: pd.DataFrame, kind: str) -> bytes:
    buf = io.BytesIO()
    frame.to_feather(buf) if kind == "feather" else frame.to_parquet(buf)
    return buf.getvalue()


EDIN = pd.DataFrame(
    {"_id": ["1", "2"], "target": [["401.9"], ["428.0"]], "401.9": [0.9, 0.1], "428.0": [0.2, 0.8]}
)


@pytest.mark.parametrize(
    "name,data,kind",
    [
        ("flags.csv", b"doc_id,code,is_primary,is_billable\n1,401.9,1,0\n1,428.0,0,1\n", "labels"),
        ("seq.csv", b"doc_id,code,seq_num\n1,401.9,1\n1,428.0,2\n", "labels"),
        ("mimic.csv", b"ROW_ID,SUBJECT_ID,HADM_ID,SEQ_NUM,ICD9_CODE\n1,9,1,1,4019\n2,9,1,2,4280\n", "labels"),
        ("mimic_short.csv", b"HADM_ID,ICD9_CODE\n1,4019\n1,4280\n", "labels"),
        ("caml.csv", b"SUBJECT_ID,HADM_ID,TEXT,LABELS\n9,1,text,401.9;428.0\n", "labels"),
        ("x.jsonl", b'{"doc_id": "1", "codes": ["401.9"]}\n{"doc_id": "2", "codes": []}\n', "labels"),
        ("long.csv", b"doc_id,code,score\n1,401.9,0.9\n1,428.0,0.2\n", "scores"),
        ("prob.tsv", b"HADM_ID\tICD9_CODE\tprobability\n1\t401.9\t0.9\n", "scores"),
        ("wide.csv", b"doc_id,401.9,428.0,V45.81\n1,0.9,0.2,0\n2,0.1,,0.7\n", "scores"),
        ("undotted.csv", b"hadm_id,4019,4280\n1,0.9,0.2\n", "scores"),
        ("edin.feather", _binary(EDIN, "feather"), "scores"),
        ("edin.parquet", _binary(EDIN, "parquet"), "scores"),
    ],
)
def test_the_kind_of_a_file_comes_from_its_columns(name, data, kind):
    raw = read_input(data, name=name)
    assert isinstance(raw, RawScores) == (kind == "scores")
    assert ("score" in raw.pairs) == (kind == "scores")
    assert input_kind(data, name=name) == kind


def test_a_label_file_with_numeric_flags_keeps_its_codes():
    raw = read_input(b"doc_id,code,is_primary,is_billable\n1,401.9,1,0\n1,428.0,0,1\n", name="flags.csv")
    assert as_set(raw) == {("1", "401.9"), ("1", "428.0")}


def test_wide_matrix_scores_and_bad_cells():
    raw = read_input(b"doc_id,401.9,428.0\n1,0.9,\n2,1.5,0.3\n3,0.4,0\n", name="wide.csv")
    assert sorted(zip(raw.pairs.doc_id, raw.pairs.code, raw.pairs.score, raw.pairs.line)) == [
        ("1", "401.9", 0.9, 2),
        ("2", "428.0", 0.3, 3),
        ("3", "401.9", 0.4, 4),
    ]
    assert list(raw.docs) == ["1", "2", "3"]
    # every cell is scored or reported (issue 12): the empty cell is read as 0 and counted in a warning
    assert raw.rejected[["file", "line", "value"]].values.tolist() == [["wide.csv", 3, "401.9=1.5"]]
    assert "outside [0, 1]" in raw.rejected.reason[0]
    assert raw.warnings == ["wide.csv: 1 empty score cells read as 0 (e.g. line 2, code 428.0)"]


def test_a_text_cell_of_a_wide_matrix_is_reported_not_the_whole_column():
    raw = read_input(b"_id,401.9,428.0,250.00\n1,0.9,0.1,0.2\n2,0.1,x,0.3\n3,0.5,0.4,0.5\n", name="w.csv")
    assert isinstance(raw, RawScores)
    assert raw.rejected[["line", "value", "reason"]].values.tolist() == [
        [3, "428.0=x", "the score is not a number"]
    ]
    assert sorted(raw.pairs.code[raw.pairs.doc_id == "1"]) == ["250.00", "401.9", "428.0"]
    assert len(raw.pairs) == 8  # 9 cells, one reported


def test_mostly_text_code_named_columns_are_not_a_score_matrix():
    with pytest.raises(InputError, match="flags.csv: cannot find the code column"):
        read_input(b"doc_id,401.9,428.0\n1,yes,no\n2,no,0.3\n", name="flags.csv")


def test_score_column_override_and_reading_options():
    raw = read_input(
        b"adm,dx,p_model\n1,401.9,0.4\n", name="s.csv", doc_col="adm", code_col="dx", score_col="p_model"
    )
    assert isinstance(raw, RawScores) and raw.pairs.score.tolist() == [0.4]
    labels = read_input(b"adm,dx,401.9\n1,428.0,1\n", name="l.csv", code_col="dx", doc_col="adm")
    assert not isinstance(labels, RawScores) and as_set(labels) == {("1", "428.0")}
    with pytest.raises(InputError, match="s.csv: no column 'p'"):
        read_input(b"doc_id,code,score\n1,401.9,0.4\n", name="s.csv", score_col="p")


def test_read_scores_on_a_labels_file_says_so():
    with pytest.raises(InputError, match=r"^l.csv: holds code sets, not scores"):
        read_scores(b"doc_id,code,is_primary\n1,401.9,1\n", name="l.csv")


def test_each_file_is_parsed_once(monkeypatch):
    import cophe_core.inputs.readers as readers

    calls = []
    parse = readers._parse

    def counting(data, *args, **kwargs):
        calls.append(data)
        return parse(data, *args, **kwargs)

    monkeypatch.setattr(readers, "_parse", counting)
    for data in (
        b"doc_id,code,is_primary\n1,401.9,1\n",
        b"doc_id,code,score\n1,401.9,0.5\n",
        b"doc_id,401.9,428.0\n1,0.5,0.1\n",
    ):
        read_input(data)
    assert len(calls) == 3


def test_cli_scores_a_label_file_with_numeric_columns(tmp_path, capsys):
    """Such a file was taken for a score matrix, and the CLI asked for a threshold."""
    from cophe_core.cli import main

    g, p = tmp_path / "gold.csv", tmp_path / "pred.csv"
    g.write_text("doc_id,code\n1,401.9\n1,428.0\n")
    p.write_text("doc_id,code,is_primary,is_billable\n1,401.9,1,0\n1,428.0,0,1\n")
    assert main(["score", "--gold", str(g), "--pred", str(p), "--format", "json"]) == 0
    assert json.loads(capsys.readouterr().out)["flat"]["f1"] == 1.0


def test_a_run_with_no_scorable_row_is_an_error_not_a_zero():
    gold = b"doc_id,code\n1,401.9\n2,428.0\n"
    with pytest.raises(NothingScorable, match="run.csv: none of its 2 rows can be scored") as err:
        score_labels(
            read_labels(gold),
            {"A": read_labels(b"doc_id,code\n1,zz9\n2,qq1\n", name="run.csv")},
            ontology="icd9",
        )
    assert not err.value.needs_system and "chosen code system" in str(err.value)


def test_some_undotted_rows_are_scored_and_the_rest_need_the_system():
    """One scorable row is enough to score; the corpus says a question is open, from structure not words."""
    s = score_files(b"doc_id,code\n1,401.9\n1,4280\n", {"A": b"doc_id,code\n1,401.9\n"}, ontology="icd9")
    assert len(s.corpus.rejected) == 1 and s.corpus.needs_system
    s = score_files(b"doc_id,code\n1,401.9\n1,zz9\n", {"A": b"doc_id,code\n1,401.9\n"}, ontology="icd9")
    assert len(s.corpus.rejected) == 1 and not s.corpus.needs_system
    s = score_files(
        b"doc_id,code\n1,401.9\n1,4280\n",
        {"A": b"doc_id,code\n1,401.9\n"},
        ontology="icd9",
        system="diagnosis",
    )
    assert len(s.corpus.rejected) == 0 and not s.corpus.needs_system


def test_a_run_with_no_code_row_predicts_nothing():
    s = score_files(b"doc_id,code\n1,401.9\n", {"A": b"doc_id,code\n"}, ontology="icd9")
    assert s.evaluation("A").score("flat").fn == 1


def test_nothing_scorable_quotes_its_own_rows_when_files_share_a_name():
    gold = read_labels(b"doc_id,code\n1,401.9\n1,zzz\n", name="test.csv")
    run = read_labels(b"doc_id,code\n1,qqq\n1,rrr\n", name="test.csv")
    with pytest.raises(NothingScorable, match="none of its 2 rows.*line 2, value 'qqq'") as err:
        score_labels(gold, {"A": run}, ontology="icd9")
    assert err.value.rejected.value.tolist() == ["qqq", "rrr"]


def test_a_gold_standard_is_code_sets_whatever_its_columns():
    s = score_files(
        b"doc_id,code,confidence\n1,401.9,high\n2,428.0,0.9\n",
        {"A": b"doc_id,code\n1,401.9\n"},
        ontology="icd9",
    )
    assert s.corpus.gold.nnz == 2 and s.evaluation("A").score("flat").tp == 1


def test_a_wide_matrix_written_by_pandas_with_its_index_is_scores():
    frame = pd.DataFrame({"_id": ["1", "2"], "401.9": [0.9, 0.1], "428.0": [0.2, 1.4]})
    raw = read_input(frame.to_csv().encode(), name="w.csv")  # adds an "Unnamed: 0" index column
    assert isinstance(raw, RawScores)
    assert raw.rejected[["line", "value"]].values.tolist() == [[3, "428.0=1.4"]]  # one bad cell, listed


def test_logits_in_a_wide_matrix_are_refused_as_a_whole():
    values = np.random.default_rng(0).normal(size=(30, 10))
    frame = pd.DataFrame(values, columns=[f"{400 + i}.1" for i in range(10)]).assign(_id=range(30))
    with pytest.raises(InputError, match="look like logits.*sigmoid"):
        read_input(frame.to_csv(index=False).encode(), name="logits.csv")


def test_the_golds_code_column_does_not_turn_a_wide_matrix_into_labels():
    gold = b"note,dx\n1,401.9\n2,428.0\n"
    wide = b"note,401.9,428.0\n1,0.9,0.2\n2,0.1,0.8\n"
    s = score_files(gold, {"A": wide}, ontology="icd9", doc_col="note", code_col="dx", threshold=0.5)
    assert s.evaluation("A").score("flat").f1 == 1.0


def test_scores_beyond_a_wide_matrixs_top_100_are_counted_in_a_warning():
    codes = [f"{400 + i}.1" for i in range(105)]
    frame = pd.DataFrame([np.linspace(0.99, 0.01, 105)], columns=codes).assign(_id="1")
    raw = read_input(frame.to_csv(index=False).encode(), name="w.csv")
    assert len(raw.pairs) == 100
    # the five lowest are 0.01 … 0.0477: below 0.05, nothing a default threshold would use
    assert raw.warnings == []
    frame.loc[0, codes[:101]] = 0.5  # 101 scores of 0.5: one of them falls beyond the 100 kept
    frame.loc[0, codes[-1]] = 0.06  # and 0.06, below all 100 kept: 2 scores of at least 0.05 left out
    raw = read_input(frame.to_csv(index=False).encode(), name="w.csv")
    assert len(raw.warnings) == 1 and raw.warnings[0].startswith("w.csv: 2 scores of at least 0.05")
    s = score_files(b"doc_id,code\n1,401.1\n", {"A": frame.to_csv(index=False).encode()}, threshold=0.5)
    assert any("not kept" in w for w in s.corpus.warnings)


def test_scores_are_read_exactly():
    """0.9999999999999999 stays below a threshold of 1.0: pandas before 3.0 rounds it to 1.0 in to_numeric."""
    from cophe_core.inputs.readers import read_input

    text = b"doc_id,code,score\n1,401.9,0.9999999999999999\n1,428.0,0.1\n"
    assert read_input(text, name="s.csv").pairs.score.tolist() == [0.9999999999999999, 0.1]
    # a bad cell elsewhere in the column leaves the good ones exact
    bad = read_input(text + b"2,250.00,abc\n", name="s.csv")
    assert 0.9999999999999999 in bad.pairs.score.tolist()


def test_two_files_of_one_name_keep_their_own_warnings():
    gold = read_labels(b"doc_id,code\n1,401.9\n1,401.9\n2,not-a-code\n", name="test.csv")
    run = read_labels(b"doc_id,code\n1,401.9\n1,zzz\n", name="test.csv")
    corpus = score_labels(gold, {"B": run}, ontology="icd9").corpus
    assert set(corpus.rejected.file) == {"test.csv (gold standard)", "test.csv (run B)"}
    said = [w for w in corpus.warnings if "not scored" in w]
    assert len(said) == 2 and said[0].startswith("test.csv (gold standard): 1 row not scored")
    assert said[1].startswith("test.csv (run B): 1 row not scored")


def _wide_labels(rows: list[str]) -> bytes:
    header = ",".join(["doc_id", "code"] + [f"c{i}" for i in range(100)])
    return (header + "\n" + "\n".join(rows) + "\n").encode()


def test_a_wide_labels_file_reads_its_two_columns_with_their_lines():
    """Read by its document and code columns only (50,000 columns took seconds), with the same result."""
    rows = ["1,401.9" + ",x" * 100, "", "2,428.0" + ",y" * 100, "3," + "," * 100]
    raw = read_labels(_wide_labels(rows), name="wide.csv")
    assert list(zip(raw.pairs.doc_id, raw.pairs.code, raw.pairs.line)) == [
        ("1", "401.9", 2),
        ("2", "428.0", 4),
    ]
    assert raw.rejected[["line", "reason"]].values.tolist() == [[5, "empty code"]]


def test_a_wide_labels_file_with_a_row_longer_than_its_header_is_refused():
    rows = ["1,401.9" + ",x" * 100, "2,428.0" + ",y" * 101]
    with pytest.raises(InputError, match="wide.csv: .*line 3 has more fields than the header's 102"):
        read_labels(_wide_labels(rows), name="wide.csv")


def test_a_wide_labels_file_with_a_blank_line_names_the_long_rows_line():
    rows = ["1,401.9" + ",x" * 100, "", "2,428.0" + ",y" * 101]
    with pytest.raises(InputError, match="wide.csv: .*line 4 has more fields than the header's 102"):
        read_labels(_wide_labels(rows), name="wide.csv")


def test_a_stream_over_the_size_limit_is_named_in_the_refusal(monkeypatch):
    """A too-large stream was refused as "None: larger than 200 MB": the name was taken after the check."""
    import io

    from cophe_core.base import files

    monkeypatch.setattr(files, "MAX_BYTES", 10)
    stream = io.BytesIO(b"doc_id,code\n1,401.9\n")
    stream.name = "gold.csv"
    with pytest.raises(InputError, match=r"^gold\.csv: larger than"):
        files.load_bytes(stream, None)


@pytest.mark.parametrize("mark", [b"\xef\xbb\xbf", b"\xff\xfe", b"\xfe\xff", b"\xef\xbb\xbf \n"])
def test_a_file_holding_only_a_byte_order_mark_is_empty(mark):
    """A .tsv holding only a byte-order mark gave pandas' "No columns to parse from file"."""
    with pytest.raises(
        InputError, match=r"^bom\.tsv: the file is empty; expected one row per document and code$"
    ):
        read_labels(mark, name="bom.tsv")
