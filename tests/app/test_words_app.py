"""Issue 24: the dashboard's errors are for a person. Whatever is wrong with an upload, the panels say what is
wrong and which control to use, never a command-line flag and never pandas' wording."""

from __future__ import annotations

import io
import re

import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from tests.app.conftest import run_app, upload

GOLD = ("gold.csv", b"doc_id,code\n1,401.9\n2,428.0\n")
RUN = ("run.csv", b"doc_id,code\n1,401.9\n2,428.0\n")
FLAG = re.compile(r"(?<![\w-])--[a-z]")
PANDAS = ("Expected ", " saw ", "No columns to parse", "Error tokenizing", "C error")


def _parquet(codes: pa.Array) -> bytes:
    out = io.BytesIO()
    pq.write_table(pa.table({"doc_id": pa.array(["1", "2"]), "code": codes}), out)
    return out.getvalue()


def _everything_shown(at) -> str:
    """The words of every panel, caption and text on the page and in the sidebar (Markdown escapes undone)."""
    parts = [
        e.value for kind in ("error", "warning", "info", "markdown", "caption") for e in getattr(at, kind)
    ]
    parts += [str(v) for df in at.dataframe for v in df.value.astype(str).to_numpy().ravel()]
    return " ".join(map(str, parts)).replace("\\", "")


@pytest.mark.parametrize(
    "gold, said",
    [
        (("cols.csv", b"hadm,icd\n1,401.9\n"), "cols.csv: cannot find the document id column"),
        (("cols2.csv", b"doc_id,foo\n1,401.9\n"), "cols2.csv: cannot find the code column"),
        (("rows.csv", b"doc_id,code\n1,401.9\n2,428.0,x,y\n"), "rows.csv, line 3: this row has 4 fields"),
        (("quote.csv", b'doc_id,code\n1,"401.9\n2,428.0\n'), "quote.csv: cannot read it as comma-separated"),
        (
            ("undotted.csv", b"HADM_ID,ICD9_CODE\n1,4019\n2,331\n"),
            "undotted.csv has no row that can be scored",
        ),
        (("float.parquet", _parquet(pa.array([401.9, 250.0]))), "float.parquet, row 1: the code column"),
        (("int.parquet", _parquet(pa.array([4019, 389]))), "int.parquet, row 1: the code column"),
        (("big.jsonl", b'{"doc_id": ' + b"9" * 5000 + b', "codes": ["4"]}\n'), "big.jsonl, line 1: a number"),
    ],
)
def test_an_upload_error_names_no_flag_and_no_pandas_words(gold, said):
    at = upload(run_app(), gold, [RUN])
    assert not at.exception, [e.value for e in at.exception]
    shown = _everything_shown(at)
    assert said in shown, shown[:800]
    assert not FLAG.search(shown), FLAG.search(shown) and shown[FLAG.search(shown).start() - 200 :][:400]
    assert not any(p in shown for p in PANDAS), shown[:800]


def test_a_missing_column_says_which_box_to_fill():
    at = upload(run_app(), ("cols.csv", b"hadm,icd9_code\n1,401.9\n"), [RUN])
    shown = _everything_shown(at)
    assert "give its name in Reading options › Document id column (sidebar)" in shown, shown[:800]


def test_a_typed_column_that_is_not_there_says_which_box_to_correct():
    at = run_app()
    at.radio(key="source").set_value("Upload files").run()
    at.text_input(key="code_col").set_value("icd")
    at = upload(at, GOLD, [RUN])
    shown = _everything_shown(at)
    assert "gold.csv: no column 'icd'" in shown and "Reading options › Code column" in shown, shown[:800]
    assert not FLAG.search(shown)


def _display(element) -> pd.DataFrame:
    """The cells of a dataframe element as the page shows them (the Styler's display values)."""
    return pa.ipc.open_stream(element.proto.arrow_data.styler.display_values).read_pandas()


def test_a_level_holding_no_code_shows_a_dash_in_the_levels_table():
    """Codes with one digit after the dot only: the 5th-digit level holds no gold and no predicted code."""
    gold = ("gold.csv", b"doc_id,code\n1,401.9\n2,428.0\n")
    run = ("run.csv", b"doc_id,code\n1,401.9\n2,428.1\n")
    at = upload(run_app(), gold, [run])
    table = at.dataframe[0]
    data, shown = table.value.reset_index(drop=True), _display(table)
    empty = (data.tp + data.fp + data.fn == 0).to_numpy()
    assert set(data.level[empty]) == {"Specific code (5th digit)"}, data
    for column in ("precision", "recall", "f1"):
        cells = shown[column].astype(str)
        assert (cells[empty] == "–").all() and not cells[~empty].str.contains("–").any(), cells
    one = (data.level == "Subcategory (4th digit)") & data.measure.str.contains("CoPHE")
    assert shown.f1[one.to_numpy()].tolist() == ["0.500"]  # 1 of 2 right, by hand


def test_opening_a_file_that_is_not_an_analysis_says_what_to_click_not_the_command():
    at = run_app()
    at.radio(key="source").set_value("Open a saved analysis").run()
    at.file_uploader(key="analysis_file").set_value(
        ("gold.cophe", b"doc_id,code\n1,401.9\n", "application/zip")
    )
    at.run()
    shown = _everything_shown(at)
    assert (
        "gold.cophe: not a cophe analysis file (a zip with manifest.json); make one with Save analysis"
        in shown
    )
    assert not FLAG.search(shown), shown[:800]
