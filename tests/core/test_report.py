"""The standalone HTML report: a complete page, the run's numbers, B − A for a comparison, escaping."""

from __future__ import annotations

import re
from html.parser import HTMLParser

import plotly.graph_objects as go
import pytest

from cophe_core import score_files
from cophe_core.breakdown.compare import level_deltas
from cophe_core.output.report import figure_html, html_report
from tests.conftest import long_csv

# One document. Gold {401.9, 428.0}; A {401.9, 401.1, 428.0} over-codes 401; B {401.9} misses 428.0.
GOLD = [("d1", "401.9"), ("d1", "428.0")]
RUN_A = [("d1", "401.9"), ("d1", "401.1"), ("d1", "428.0")]
RUN_B = [("d1", "401.9")]

XSS_RUN = "<img src=x onerror=alert(1)>"
XSS_DOC = "<script>alert(1)</script>"


class _Cells(HTMLParser):
    """Text of each element of interest, and the cells of each table row."""

    def __init__(self):
        super().__init__()
        self.rows, self.text, self._tag = [], {}, None

    def handle_starttag(self, tag, attrs):
        if tag == "tr":
            self.rows.append([])
        if tag in ("td", "th", "title", "h1", "h2", "p"):
            self._tag = tag

    def handle_endtag(self, tag):
        self._tag = None

    def handle_data(self, data):
        if self._tag in ("td", "th"):
            self.rows[-1].append(data)
        elif self._tag:
            self.text.setdefault(self._tag, []).append(data)


def parse(page: str) -> _Cells:
    p = _Cells()
    p.feed(page)
    return p


@pytest.fixture(scope="module")
def runs():
    s = score_files(long_csv(GOLD), {"A": long_csv(RUN_A), "B": long_csv(RUN_B)}, ontology="icd9")
    return s.evaluation("A"), s.evaluation("B")


def test_run_report_is_a_complete_page_with_the_run_numbers(runs):
    """A run's report is a whole HTML document whose levels table shows the Evaluation's counts and rates."""
    ev = runs[0]
    page = html_report(
        "cophe report · run A", [("Scores by level", [f"{len(ev.docs)} documents.", ev.levels_table])]
    )
    assert page.startswith("<!doctype html><html><head>") and page.endswith("</body></html>")
    doc = parse(page)
    assert doc.text["title"] == ["cophe report · run A"] and doc.text["h2"] == ["Scores by level"]
    assert "1 documents." in doc.text["p"]
    rows = {(r[0], r[1]): r[2:] for r in doc.rows[1:]}
    assert doc.rows[0] == ["measure", "level", "tp", "fp", "fn", "precision", "recall", "f1"]
    # A, all codes at e1: CoPHE e1/e0/block each TP 2, FP 1, FN 0 -> overall 6/3/0, P 2/3, R 1, F1 0.8
    assert rows[("cophe", "overall")] == ["6", "3", "0", "0.667", "1.000", "0.800"]
    # set-based: e0 and block have no FP -> overall 6/1/0, P 6/7, F1 12/13
    assert rows[("set_based", "overall")] == ["6", "1", "0", "0.857", "1.000", "0.923"]
    assert rows[("flat", "leaf")] == ["2", "1", "0", "0.667", "1.000", "0.800"]
    assert rows[("cophe", "e2")] == ["0", "0", "0", "0.000", "0.000", "0.000"]


def test_comparison_report_states_b_minus_a(runs):
    """A comparison's table shows the difference as B − A, with level_deltas' sign."""
    deltas = level_deltas(*runs)
    page = html_report("cophe comparison · B vs A", [("Change: B − A", [deltas])])
    doc = parse(page)
    head, body = doc.rows[0], {(r[0], r[1]): r for r in doc.rows[1:]}
    col = {name: head.index(name) for name in ("a_f1", "b_f1", "delta_precision", "delta_recall", "delta_f1")}
    # CoPHE overall: A P 2/3, R 1, F1 0.8; B TP 3, FN 3 -> P 1, R 1/2, F1 2/3.
    # B − A: precision +1/3, recall -1/2, F1 -2/15
    row = body[("cophe", "overall")]
    assert [row[col[k]] for k in col] == ["0.800", "0.667", "0.333", "-0.500", "-0.133"]
    # the sign printed matches level_deltas everywhere
    for r in deltas.itertuples():
        printed = float(body[(r.measure, r.level)][col["delta_f1"]])
        assert (printed > 0) == (r.delta_f1 > 5e-4) and (printed < 0) == (r.delta_f1 < -5e-4)


def test_user_strings_are_escaped(runs):
    """A run name or document id holding HTML appears escaped in title, headings, text and tables."""
    s = score_files(
        long_csv([(XSS_DOC, "401.9")]), {XSS_RUN: long_csv([(XSS_DOC, "401.1")])}, ontology="icd9"
    )
    ev = s.evaluation(XSS_RUN)
    page = html_report(f"run {XSS_RUN}", [(f"Run {XSS_RUN}", [f"Document {XSS_DOC}", ev.documents])])
    assert "<script" not in page and "<img" not in page
    assert f"<title>run {XSS_RUN.replace('<', '&lt;').replace('>', '&gt;')}</title>" in page
    assert "<h1>run &lt;img src=x onerror=alert(1)&gt;</h1>" in page
    assert "<h2>Run &lt;img src=x onerror=alert(1)&gt;</h2>" in page
    assert "<p>Document &lt;script&gt;alert(1)&lt;/script&gt;</p>" in page
    assert "<td>&lt;script&gt;alert(1)&lt;/script&gt;</td>" in page
    # round trip: the parsed text is the original string
    doc = parse(page)
    assert doc.text["h2"] == [f"Run {XSS_RUN}"] and doc.rows[1][0] == XSS_DOC


def test_figures_inline_plotly_once():
    """Figures are embedded with plotly.js inlined once (offline); figure_html is a whole page."""
    fig = go.Figure(go.Bar(x=["e1", "e0"], y=[0.8, 0.667]))
    page = html_report("figures", [("One", [fig]), ("Two", [fig])])
    # one plotly.js bundle (whose own text may mention newPlot), and one plot container per figure
    assert page.count("* plotly.js v") == 1 and page.count('class="plotly-graph-div"') == 2
    assert not re.search(r"<script[^>]*\ssrc=", page)  # nothing fetched from a network
    alone = figure_html(fig)
    assert alone.lstrip().lower().startswith("<!doctype html>") and alone.rstrip().endswith("</html>")
    assert alone.count("* plotly.js v") == 1 and not re.search(r"<script[^>]*\ssrc=", alone)
