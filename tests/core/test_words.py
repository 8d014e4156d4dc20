"""Messages for a person (issue 24): the command line names the flag and the dashboard the control, from one
table of options; no pandas wording; quoted values cut; numbers refused where codes belong."""

from __future__ import annotations

import io
import json

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from cophe_core import InputError, score_files
from cophe_core.base.files import excerpt
from cophe_core.base.options import OPTIONS, say
from cophe_core.cli import main
from cophe_core.inputs.readers import read_input, read_labels
from cophe_core.scoring.labels import NothingScorable

PANDAS_WORDS = ("Expected", "saw", "No columns to parse", "Error tokenizing", "C error")
GOLD = b"doc_id,code\n1,401.9\n2,250.00\n"


def _error(data: bytes, name: str, **options) -> InputError:
    with pytest.raises(InputError) as e:
        read_input(data, name=name, **options)
    return e.value


def test_a_row_longer_than_the_header_is_said_in_our_words_with_its_line():
    e = _error(b"doc_id,code\n1,401.9\n\n2,250.00,x,y\n", "g.csv")
    assert str(e).startswith("g.csv, line 4: this row has 4 fields where the header has 2; put quotes")
    assert not any(w in str(e) for w in PANDAS_WORDS)


def test_a_quote_left_open_is_said_in_our_words():
    e = _error(b'doc_id,code\n1,401.9\n2,"250.00\n3,4\n', "g.csv")
    assert "g.csv: cannot read it as comma-separated text; a quote near line 3" in str(e)
    assert not any(w in str(e) for w in PANDAS_WORDS)


@pytest.mark.parametrize(
    "data, options, option",
    [
        (b"hadm,icd9_code\n1,401.9\n", {}, "doc_col"),
        (b"doc_id,foo\n1,401.9\n", {}, "code_col"),
        (b"doc_id,code\n1,401.9\n", {"code_col": "icd"}, "code_col"),
    ],
)
def test_a_missing_column_names_the_flag_on_the_command_line_and_the_control_in_the_dashboard(
    data, options, option
):
    e = _error(data, "g.csv", **options)
    flag, control = OPTIONS[option]
    assert flag in str(e) and control not in str(e)
    shown = e.words("dashboard")
    assert control in shown and "--" not in shown
    assert shown.split("; ")[0] == str(e).split("; ")[0]  # the same problem, only the fix differs


def test_every_option_has_a_flag_and_a_control_without_a_flag():
    for key, (flag, control) in OPTIONS.items():
        assert "--" in flag and "--" not in control, key
        assert say("{" + key + "}", "cli") == flag and say("{" + key + "}", "dashboard") == control


def test_undotted_codes_name_the_system_flag_and_the_rejected_reasons_name_none(tmp_path):
    gold = b"HADM_ID,ICD9_CODE\n1,4019\n1,331\n"
    with pytest.raises(NothingScorable) as e:
        score_files(gold, {"run": gold})
    assert "--system diagnosis" in str(e.value) and "--" not in e.value.words("dashboard")
    assert OPTIONS["system"].dashboard in e.value.words("dashboard")
    reasons = " ".join(e.value.rejected.reason)
    assert "ambiguous" in reasons and "--" not in reasons


def test_the_command_line_still_names_the_column_flag(tmp_path, capsys):
    gold, pred = tmp_path / "gold.csv", tmp_path / "pred.csv"
    gold.write_text("hadm,code\n1,401.9\n")
    pred.write_text("doc_id,code\n1,401.9\n")
    assert main(["score", "--gold", str(gold), "--pred", str(pred)]) == 2
    err = capsys.readouterr().err
    assert "gold.csv: cannot find the document id column" in err and "--doc-col" in err


def test_scores_without_a_rule_name_the_flags_on_the_command_line_only():
    from cophe_core.api import decide_run

    with pytest.raises(InputError) as e:
        decide_run(GOLD, b"doc_id,code,score\n1,401.9,0.8\n")
    assert "--threshold T, --top-k K or --tune-on" in str(e.value)
    assert "--" not in e.value.words("dashboard") and "Threshold" in e.value.words("dashboard")


# --- values cut in messages ---------------------------------------------------------------------------

BIG = "4" * 10_000_000


@pytest.mark.parametrize(
    "data, name",
    [
        (f"a,x{BIG}\n1,2\n".encode(), "header.csv"),  # the columns listed
        (f"h{BIG}\n1\n".encode(), "one.csv"),  # a single column
        (f"doc_id,code\n1,401.9\n2,{BIG}\n".encode(), "code.csv"),  # a code (a rejected row)
        (b'[{"doc_id": 1, "codes": 5' + b"0" * 4000 + b"}]", "codes.json"),  # not a list
    ],
)
def test_a_10_mb_value_makes_a_message_under_1_kb_that_names_the_file(data, name):
    try:
        s = score_files(GOLD, {name: data})
        said = s.corpus.warnings
    except InputError as e:
        said = [str(e), e.words("dashboard")]
    assert said and all(len(m) < 1000 and name in m for m in said), [m[:200] for m in said]
    assert any("line" in m for m in said) or "header" in name or "one" in name


def test_a_10_mb_code_yields_a_short_message_naming_its_line():
    s = score_files(GOLD, {"run.csv": f"doc_id,code\n1,401.9\n2,{BIG}\n".encode()})
    (warning,) = [w for w in s.corpus.warnings if "not scored" in w]
    assert len(warning) < 1000 and "line 3" in warning and "10,000,000 characters" in warning


def test_excerpt_does_not_cut_twice():
    once = excerpt("x" * 100)
    assert excerpt(once) == once == "x" * 60 + "… (100 characters)"


# --- codes stored as numbers ----------------------------------------------------------------------------


def _parquet(table: pa.Table) -> bytes:
    out = io.BytesIO()
    pq.write_table(table, out)
    return out.getvalue()


@pytest.mark.parametrize(
    "codes, shown",
    [
        (pa.array([401.9, 250.00], pa.float64()), "401.9"),  # 250.00 reads back as 250.0
        (pa.array([4019, 389], pa.int64()), "4019"),  # 038.9 stored as 389
        (pa.array([[401.9], [250.0]], pa.list_(pa.float64())), "401.9"),
    ],
)
@pytest.mark.parametrize("gold", [True, False])
def test_parquet_codes_stored_as_numbers_are_refused_with_a_hint(codes, shown, gold):
    data = _parquet(pa.table({"doc_id": pa.array(["1", "2"]), "code": codes}))
    with pytest.raises(InputError) as e:
        (read_labels if gold else read_input)(data, name="g.parquet")
    said = str(e.value)
    assert said.startswith(f"g.parquet, row 1: the code column 'code' holds numbers, not text ({shown})")
    assert "store the codes as text" in said


def test_parquet_scores_with_a_numeric_code_column_are_refused():
    table = pa.table({"doc_id": ["1"], "code": pa.array([389], pa.int64()), "score": [0.7]})
    with pytest.raises(InputError, match="holds numbers, not text"):
        read_input(_parquet(table), name="s.parquet")


def test_parquet_codes_stored_as_text_are_read():
    data = _parquet(pa.table({"doc_id": pa.array([1, 2], pa.int64()), "code": ["038.9", "250.00"]}))
    assert read_labels(data, name="g.parquet").pairs.code.tolist() == ["038.9", "250.00"]


# --- numbers longer than Python reads -------------------------------------------------------------------

HUGE = "9" * 5000


@pytest.mark.parametrize(
    "data, name, line",
    [
        (f'{{"doc_id": "1", "codes": ["401.9"]}}\n{{"doc_id": {HUGE}, "codes": ["401.9"]}}\n', "g.jsonl", 2),
        (f'[{{"doc_id": "1", "codes": ["401.9"]}},\n {{"doc_id": {HUGE}, "codes": ["4"]}}]', "g.json", 2),
        (f'[{{"doc_id": "1", "codes": [{HUGE}]}}]', "g.json", 1),
    ],
)
def test_a_5000_digit_number_is_an_input_error_naming_the_file_and_line(data, name, line):
    with pytest.raises(InputError) as e:
        read_input(data.encode(), name=name)
    assert str(e.value).startswith(f"{name}, line {line}: a number of 5,000 digits")
    assert len(str(e.value)) < 400 and "sys.set_int_max_str_digits" not in str(e.value)


def test_a_5000_digit_id_in_csv_and_parquet_is_a_rejected_row_not_a_crash():
    csv = read_input(f"doc_id,code\n{HUGE},401.9\n1,401.9\n".encode(), name="g.csv")
    pqt = read_input(
        _parquet(pa.table({"doc_id": [HUGE, "1"], "code": ["401.9", "401.9"]})), name="g.parquet"
    )
    for raw in (csv, pqt):
        assert raw.rejected.kind.tolist() == ["too_long"] and raw.pairs.doc_id.tolist() == ["1"]


def test_notes_and_hierarchies_with_a_5000_digit_number_are_input_errors():
    from cophe_core.breakdown.documents import read_notes
    from cophe_core.ontology.custom import load_hierarchy

    with pytest.raises(InputError, match=r"notes.jsonl, line 1: a number of 5,000 digits"):
        read_notes(f'{{"doc_id": {HUGE}, "text": "x"}}\n'.encode(), name="notes.jsonl")
    with pytest.raises(InputError, match=r"h.json, line 1: a number of 5,000 digits"):
        load_hierarchy(json.dumps({"x": 1}).replace("1", HUGE).encode(), name="h.json")


def test_notes_with_a_long_row_are_said_in_our_words():
    from cophe_core.breakdown.documents import read_notes

    with pytest.raises(InputError) as e:
        read_notes(b"doc_id,text\n1,fine\n2,a,b,c\n", name="notes.csv")
    assert str(e.value).startswith("notes.csv, line 3: this row has 4 fields where the header has 2")
    assert not any(w in str(e.value) for w in PANDAS_WORDS)


# --- a level that holds no code -------------------------------------------------------------------------


def test_a_level_holding_no_code_prints_a_dash_not_zero_and_json_keeps_the_spec_zeros(tmp_path, capsys):
    """Every code here has one digit after the dot, so the five-digit level (e2) holds no gold and no
    predicted code: its P, R and F1 are printed "–"; the JSON keeps SPEC's 0 for an empty denominator."""
    gold, pred = tmp_path / "gold.csv", tmp_path / "pred.csv"
    gold.write_text("doc_id,code\n1,401.9\n2,428.0\n")
    pred.write_text("doc_id,code\n1,401.9\n2,428.1\n")
    assert main(["score", "--gold", str(gold), "--pred", str(pred)]) == 0
    rows = {tuple(line.split()[:2]): line.split()[2:] for line in capsys.readouterr().out.splitlines()}
    assert rows[("set_based", "e2")] == ["0", "0", "0", "–", "–", "–"]
    assert rows[("cophe", "e2")] == ["0", "0", "0", "–", "–", "–"]
    assert rows[("set_based", "e1")] == ["1", "1", "1", "0.500", "0.500", "0.500"]  # 0.5 by hand: 1 of 2
    assert main(["score", "--gold", str(gold), "--pred", str(pred), "--format", "json"]) == 0
    e2 = json.loads(capsys.readouterr().out)["set_based"]["levels"]["e2"]
    assert e2 == {"tp": 0, "fp": 0, "fn": 0, "precision": 0.0, "recall": 0.0, "f1": 0.0}


def test_a_hierarchy_with_a_quote_left_open_is_said_in_our_words():
    from cophe_core.ontology.custom import load_hierarchy

    with pytest.raises(InputError) as e:
        load_hierarchy(b'a,\nb,a\n"c,b\nd,c\n', name="h.csv")
    assert str(e.value).startswith("h.csv: cannot read it as comma-separated text; a quote near line 3")
    assert not any(w in str(e.value) for w in PANDAS_WORDS)


def test_some_undotted_codes_left_out_the_command_line_names_the_system_flag(tmp_path, capsys):
    gold = tmp_path / "gold.csv"
    gold.write_text("doc_id,code\n1,401.9\n2,4019\n")
    assert (
        main(["score", "--gold", str(gold), "--pred", str(gold), "--max-rejected", "1"]) == 0
    )  # scored anyway
    err = capsys.readouterr().err
    assert "value '4019': undotted code 4019 is ambiguous" in err and "--system diagnosis" in err


def test_a_streamed_file_names_the_files_line_of_a_long_row_in_a_later_block(tmp_path):
    from cophe_core.scale.pipeline import score_dataset

    gold, pred = tmp_path / "gold.csv", tmp_path / "pred.csv"
    gold.write_text("doc_id,code\n" + "".join(f"{i},401.9\n" for i in range(1, 201)))
    pred.write_text("doc_id,code\n" + "".join(f"{i},401.9\n" for i in range(1, 150)) + "150,401.9,x\n")
    with pytest.raises(InputError) as e:
        score_dataset(gold, pred, chunk_rows=16)  # blocks of about 384 bytes: line 151 is in a later one
    assert str(e.value).startswith("pred.csv, line 151: this row has 3 fields where the header has 2")
