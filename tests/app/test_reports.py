"""The comparison report says what the Compare page says: the same direction, tests, intervals, family table
and slice, with the cophe version and the code-set releases."""

from __future__ import annotations

import re
import sys

import pytest

from cophe_core import __version__, score_files
from cophe_core.slices import code_frequency, code_frequency_slices
from tests.app.conftest import ROOT, SAMPLE

sys.path.insert(0, str(ROOT / "dashboard"))
import reports  # noqa: E402
import state

RUNS = ["siblings", "overcoder", "conservative"]


@pytest.fixture(scope="module")
def scoring():
    return score_files(SAMPLE / "gold.csv", {r: SAMPLE / f"run_{r}.csv" for r in RUNS})


def report(scoring, slice_=None) -> str:
    ctx = state.Context(scoring, "Sample: ICD-9", "block", "siblings", slice=slice_)
    return reports.compare_report(
        ctx, reports.comparison(ctx, RUNS, "siblings", "siblings", "overcoder", resamples=200)
    )


def test_the_report_keeps_the_pages_direction_tests_and_tables(scoring):
    page = report(scoring)
    text = re.sub(r"<[^>]+>", " ", page)
    assert "cophe comparison · overcoder − siblings" in page
    assert "siblings − overcoder" not in page  # one direction throughout: B − A
    assert "overcoder − siblings = −0.035" in text and "overcoder is worse, beyond resampling noise" in text
    assert "corrected for comparing several runs (Holm)" in text and "p-value, Holm" in text
    assert "Which families changed, at Category (3 digits)" in text and "Benjamini–Hochberg" in text
    assert f"cophe {__version__}" in text and "ICD-9-CM (CMS v32" in text
    assert "Every document and code." in text
    assert text.count("Essential hypertension") >= 1  # a family of the family table, by its title


def test_the_report_states_the_slice_it_was_made_on(scoring):
    rare = code_frequency_slices(code_frequency(scoring.corpus.gold), (10, 100))[0]
    text = re.sub(r"<[^>]+>", " ", report(scoring, rare))
    assert "Slice: Code frequency in the gold standard: Rare: fewer than 10 documents." in text


def test_compare_pair_follows_the_compare_page():
    assert reports.compare_pair(RUNS, {}) == ("siblings", "overcoder")
    assert reports.compare_pair(RUNS, {"cmp_baseline": "conservative"}) == ("conservative", "siblings")
    assert reports.compare_pair(RUNS, {"cmp_a": "overcoder", "cmp_b": "conservative"}) == (
        "overcoder",
        "conservative",
    )
    assert reports.compare_pair(RUNS, {"cmp_a": "overcoder", "cmp_b": "overcoder"}) == (
        "overcoder",
        "siblings",
    )
