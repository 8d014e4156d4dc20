"""The coding manager's report (cophe_core.output.coder_report): families ranked by rate per gold code with a
minimum support, the codes written instead, example documents, escaped, on A4."""

from __future__ import annotations

import re
import shutil
import subprocess

import pytest
from hypothesis import given
from hypothesis import strategies as st

from cophe_core import score_files
from cophe_core.cli import main
from cophe_core.output.coder_report import (
    coder_report,
    coder_report_html,
    example_documents,
    instead_pairs,
    marked_codes,
    ranked_families,
)
from cophe_core.output.figures_export import find_browser
from tests.conftest import SAMPLE, long_csv

# 401: 20 gold codes, 4 extra (20 per 100); 428: 2 gold codes, 2 extra (100 per 100, below the support);
# 250: 10 gold codes, 3 missed, of which 2 written as 250.01 instead
GOLD = [(f"d{i}", "401.9") for i in range(20)] + [(f"d{i}", "428.0") for i in range(2)]
GOLD += [(f"d{i}", "250.00") for i in range(10)]
PRED = [(f"d{i}", "401.9") for i in range(20)] + [(f"d{i}", "401.1") for i in range(4)]
PRED += [(f"d{i}", "428.0") for i in range(2)] + [(f"d{i}", "428.1") for i in range(2)]
PRED += [(f"d{i}", "250.00") for i in range(7)] + [("d8", "250.01"), ("d9", "250.01")]


@pytest.fixture(scope="module")
def ev():
    return score_files(long_csv(GOLD), {"<b>run</b>": long_csv(PRED)}, ontology="icd9").evaluation(
        "<b>run</b>"
    )


def test_families_are_ranked_by_rate_per_gold_code_with_a_minimum_support(ev):
    over, under = ranked_families(ev, min_support=10)
    assert over[["code", "gold", "fp", "extra_per_100"]].values.tolist() == [["401", 20, 4, 20.0]]
    assert under[["code", "gold", "fn", "missed_per_100"]].values.tolist() == [["250", 10, 1, 10.0]]
    # without the support, 428 (2 extra of 2 gold codes) tops the list though it has fewer extra codes than 401
    over_all, _ = ranked_families(ev, min_support=1)
    assert list(over_all.code) == ["428", "401"]


def test_examples_are_the_documents_of_the_family_over_or_under_coded(ev):
    node = ev.ontology.codes["401"]
    ex = example_documents(ev, node, "over")
    assert len(ex) == 3 and set(ex.doc_id) <= {"d0", "d1", "d2", "d3"} and (ex.difference > 0).all()
    under = example_documents(ev, ev.ontology.codes["250"], "under")
    # d7 has no 250 code written; d8 and d9 have 250.01 for 250.00, the right count: not under-coded
    assert under.doc_id.tolist() == ["d7"] and under.gold_codes.tolist() == [["250.00"]]


def test_the_page_names_codes_escapes_names_and_prints_on_a4(ev):
    page = coder_report_html({"<b>run</b>": ev})
    assert "&lt;b&gt;run&lt;/b&gt;" in page and "<b>run</b>" not in page
    assert "Essential hypertension" in page and "250.01" in page  # titles, and the code written instead
    assert "size: A4" in page and "NaN" not in page and "True" not in page
    assert re.search(r"<td class='n'>20</td><td class='n'>4</td><td class='n'>20</td>", page)


@pytest.mark.skipif(find_browser() is None, reason="no Chrome or Chromium to print the PDF")
def test_cli_writes_the_coder_report(tmp_path, capsys, ev):
    gold, pred = tmp_path / "gold.csv", tmp_path / "pred.csv"
    gold.write_bytes(long_csv(GOLD))
    pred.write_bytes(long_csv(PRED))
    out = tmp_path / "coder.pdf"
    args = ["report", "--kind", "coder", "--gold", str(gold), "--run", f"A={pred}", "--out", str(out)]
    assert main(args) == 0
    data = out.read_bytes()
    assert data[:5] == b"%PDF-" and data == data  # a PDF
    assert main([*args[:-1], str(tmp_path / "coder.tex")]) == 2
    assert ".html, .pdf" in capsys.readouterr().err
    assert coder_report({"A": ev}, "html").startswith(b"<!doctype html>")


def test_headers_repeat_on_every_page_and_never_break_inside_a_word(ev):
    """Printed, a table that runs onto the next page repeats its header there (a <thead>), and a header's
    words wrap between words only: "Documents" once broke as "Docume / nts" in a narrow column."""
    page = coder_report_html({"run": ev})
    tables = re.findall(r"<table>(.*?)</table>", page, flags=re.S)
    assert tables and all(re.match(r"<colgroup>.*?</colgroup><thead><tr><th", t) for t in tables)
    breaking = re.findall(r"([^{}]+)\{[^}]*overflow-wrap:\s*anywhere", page)
    assert [s.strip() for s in breaking] == ["td"]  # cells may break long codes anywhere; headers may not


def _text(page: str) -> str:
    """The page as a reader sees it: tags gone, spaces collapsed."""
    return re.sub(r"\s+", " ", re.sub(r"<[^>]+>", " ", page))


def test_example_documents_say_which_codes_are_extra_missed_or_right_in_words(ev):
    """Not by colour alone: each code of an example document carries the word EXTRA (written, not in the gold
    standard), MISSED (in the gold standard, not written) or RIGHT (in both), and the note says what they mean."""
    page = coder_report_html({"run": ev})
    text = _text(page)
    # d0: 401.9 in both, 401.1 written only; d7: 250.00 in the gold standard only
    assert re.search(
        r"Document d0: Extra 401\.1 Benign essential hypertension ; Right 401\.9 Unspecified", text
    )
    assert "Document d7: Missed 250.00 Diabetes" in text
    assert "EXTRA (written by the run, not in the gold standard)" in text
    assert "MISSED (in the gold standard, not written)" in text and "RIGHT (in both)" in text
    # the word is drawn, not only a colour: a capitalised tag in the printed text
    assert ".tag { font-weight: bold; font-size: 7.5pt; text-transform: uppercase;" in page


@given(
    st.lists(st.sampled_from(["401.1", "401.9", "401.0", "428.0"]), max_size=4),
    st.lists(st.sampled_from(["401.1", "401.9", "401.0", "428.0"]), max_size=4),
)
def test_marked_codes_follow_membership(gold, written):
    marks = dict(marked_codes(gold, written))
    assert set(marks) == set(gold) | set(written)
    for code, mark in marks.items():  # a naive reading of each code
        assert mark == (
            "right" if code in gold and code in written else "extra" if code in written else "missed"
        )


def test_written_instead_pairs_need_the_minimum_support_and_the_report_says_so(ev):
    """250.01 written for 250.00 in 2 of the 10 documents that have 250.00: listed with a support of 10, left
    out (and counted) with 11, as the ranked families need their gold codes."""
    pairs, left = instead_pairs(ev, min_support=10)
    assert pairs[["gold_code", "written_code", "documents", "gold_documents"]].values.tolist() == [
        ["250.00", "250.01", 2, 10]
    ]
    assert left == 0  # the only pair: 401.9 and 428.0 are never missed
    assert instead_pairs(ev, min_support=11)[0].empty and instead_pairs(ev, min_support=11)[1] == 1
    text = _text(coder_report_html({"run": ev}, min_support=11))
    assert "No code of the gold standard in at least 11 documents was written as another code" in text
    assert "1 pair whose gold code is in fewer than 11 documents of the gold standard is left out" in text
    shown = _text(coder_report_html({"run": ev}, min_support=10))
    assert (
        "Pairs whose gold code is in at least 10 documents of the gold standard, most documents first"
        in shown
    )


def test_each_run_opens_with_its_codes_right_extra_and_missed_in_words_and_numbers(ev):
    """By hand: the gold standard has 32 codes (20 + 2 + 10), the run wrote 37 (20 + 4 + 2 + 2 + 7 + 2): 29
    exactly right (401.9 ×20, 428.0 ×2, 250.00 ×7), 8 extra (401.1 ×4, 428.1 ×2, 250.01 ×2), 3 missed (250.00)."""
    flat = ev.score("flat", "leaf")
    assert (flat.tp, flat.fp, flat.fn) == (29, 8, 3)  # the evaluation agrees with the hand count
    page = coder_report_html({"run": ev})
    text = _text(page)
    section = text.split("Run run", 1)[1]
    head = section.split("Run run:", 1)[0]  # before the first table: the summary
    assert (
        "The gold standard has 32 codes and the run wrote 37: 29 right (91% of the gold standard's codes)"
        in head
    )
    assert (
        "8 extra (written but not in the gold standard) and 3 missed (in the gold standard but not written)"
        in head
    )
    assert "Extra codes 8 22% of the codes the run wrote" in head and "Missed codes 3 9%" in head


def test_every_table_names_its_run_in_a_header_that_repeats_and_keeps_its_last_rows_together(ev):
    page = coder_report_html({"A": ev, "B": ev}, min_support=1)
    heads = re.findall(r"<thead><tr><th class='part' colspan='5'>([^<]*)</th>", page)
    assert heads == [
        f"Run {r}: {part}"
        for r in "AB"
        for part in (
            "families where the run adds codes the gold standard does not have",
            "families where the run misses codes of the gold standard",
            "right family, wrong code: what the run writes instead",
        )
    ]
    assert "tr, .summary { break-inside: avoid;" in page and "tbody.last { break-inside: avoid;" in page
    for table in re.findall(r"<table>(.*?)</table>", page, flags=re.S):
        last = re.findall(r"<tbody class='last'>(.*?)</tbody>", table, flags=re.S)
        assert len(last) == 1 and (table.count("<tr>") - 2 <= 2 or last[0].count("<tr>") == 2)


@pytest.mark.skipif(
    find_browser() is None or shutil.which("pdftotext") is None, reason="no browser or pdftotext"
)
def test_every_printed_page_names_the_run_it_is_about(tmp_path):
    """Printed, a page in the middle of a run's section still says whose it is (the sample's runs take several
    A4 pages each)."""
    s = score_files(SAMPLE / "gold.csv", {r: SAMPLE / f"run_{r}.csv" for r in ("overcoder", "siblings")})
    pdf = tmp_path / "r.pdf"
    pdf.write_bytes(coder_report({r: s.evaluation(r) for r in ("overcoder", "siblings")}, "pdf"))
    pages = subprocess.run(["pdftotext", "-layout", str(pdf), "-"], capture_output=True, text=True).stdout
    pages = [p for p in pages.split("\f") if p.strip()]
    assert len(pages) >= 4
    for i, text in enumerate(pages):
        assert "Run overcoder" in text or "Run siblings" in text, f"page {i + 1} names no run"
