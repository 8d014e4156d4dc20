"""The coding manager's report (cophe_core.output.coder_report): families ranked by rate per gold code with a
minimum support, the codes written instead, example documents, escaped, on A4."""

from __future__ import annotations

import re

import pytest

from cophe_core import score_files
from cophe_core.cli import main
from cophe_core.output.coder_report import coder_report, coder_report_html, example_documents, ranked_families
from cophe_core.output.figures_export import find_browser
from tests.conftest import long_csv

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
    assert tables and all(t.startswith("<thead><tr><th") for t in tables)
    breaking = re.findall(r"([^{}]+)\{[^}]*overflow-wrap:\s*anywhere", page)
    assert [s.strip() for s in breaking] == ["td"]  # cells may break long codes anywhere; headers may not
