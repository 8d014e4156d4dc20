"""How results look in Jupyter (``_repr_html_``): the figures shown are the results' own, and user strings
are escaped."""

from __future__ import annotations

from cophe_core import score_files
from tests.conftest import SAMPLE, long_csv


def test_evaluation_shows_its_levels_table():
    ev = score_files(SAMPLE / "gold.csv", {"A": SAMPLE / "run_siblings.csv"}).evaluation("A")
    page = ev._repr_html_()
    assert page.startswith("<p><b>Evaluation</b>: 1,000 documents, ontology icd9, levels up to block")
    cophe = ev.score("cophe")
    assert f"<td>{cophe.f1:.4f}</td>" in page and f"<td>{cophe.tp}</td>" in page


def test_scoring_shows_each_run_and_escapes_its_name():
    s = score_files(long_csv([("1", "401.9")]), {"<b>x</b>": long_csv([("1", "401.1"), ("1", "oops")])})
    page = s._repr_html_()
    assert "&lt;b&gt;x&lt;/b&gt;" in page and "<b>x</b>" not in page
    assert "1 row(s) not scored" in page
    f1 = s.evaluation("<b>x</b>").score("cophe").f1
    assert f"<td>{f1:.4f}</td>" in page
