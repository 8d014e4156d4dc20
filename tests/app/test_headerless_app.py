"""Files without column names in the dashboard (the shared tasks' case_id<TAB>code TSV): told from their first
row, with "First row is data" beside the uploads to say it, and a panel naming that choice when the first row
cannot tell."""

from __future__ import annotations

import pytest

from tests.app.conftest import run_app, upload
from tests.core.test_headerless import GOLD, RUN

UNCLEAR = "case\tdiagnosis\n" + GOLD  # a first row that is neither column names nor a code


def _shown(at) -> str:
    return " ".join(e.value for e in at.error).replace("\\", "")


def _flat(at) -> tuple:
    """TP, FP, FN and F1 of exact codes, from the levels table."""
    table = next(d.value for d in at.dataframe if "measure" in d.value.columns)
    row = table[table.measure == "Exact codes (Flat)"].iloc[0]
    return int(row.tp), int(row.fp), int(row.fn), float(row.f1)


def test_headerless_uploads_are_read_from_their_first_row():
    at = upload(run_app(), ("gold.tsv", GOLD.encode()), [("run.tsv", RUN.encode())])
    assert not at.error, _shown(at)
    assert _flat(at) == (4, 3, 2, pytest.approx(8 / 13))  # worked out in tests/core/test_headerless.py


def test_an_unclear_first_row_names_the_checkbox_and_ticking_it_reads_the_row_as_data():
    at = upload(run_app(), ("gold.tsv", UNCLEAR.encode()), [("run.tsv", RUN.encode())])
    shown = _shown(at)
    assert "gold.tsv, line 1: cannot tell whether the first row" in shown, shown[:500]
    assert 'tick "First row is data" beside the uploads' in shown and "Reading options" in shown
    assert "--" not in shown  # no command-line options on screen
    at.checkbox(key="first_row_data").check().run()
    assert not at.exception
    assert "too many rows of gold.tsv cannot be scored" in _shown(
        at
    )  # its first row, read as data, is no case
    at.button(key="score_anyway").click().run()
    # the first row is a case of its own, 'case', whose code 'diagnosis' is listed as not scored, on line 1
    assert _shown(at).startswith("**1 input row was not scored.**")
    rejected = next(d.value for d in at.dataframe if "line" in d.value.columns)
    assert rejected[["file", "line", "value"]].values.tolist() == [["gold.tsv", 1, "diagnosis"]]
    assert _flat(at) == (4, 3, 2, pytest.approx(8 / 13))
