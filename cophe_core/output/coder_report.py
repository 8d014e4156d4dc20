"""A report for a coding manager, who never opens the app: for each run, the code families it over- and
under-codes, ranked by rate per gold code, the codes it writes instead of the right ones, and example
documents, in coders' words, as an HTML page that prints on A4 (or its PDF).

Definitions (CoPHE counts at the family level, summed over documents; SPEC "Families"):

- *extra codes per 100 gold codes* of a family = 100 · FP / gold, its over-coding rate;
- *missed codes per 100 gold codes* = 100 · FN / gold, its under-coding rate;
- a family is ranked only with at least ``min_support`` gold codes, so that a family seen twice does not top
  the list on one mistake; ties go to the larger count, then the code.

    >>> from cophe_core import score_files
    >>> gold = b"doc_id,code\\n1,401.9\\n2,401.9\\n3,428.0\\n"
    >>> pred = b"doc_id,code\\n1,401.9\\n1,401.1\\n2,401.9\\n3,250.00\\n"
    >>> over, under = ranked_families(score_files(gold, {"A": pred}).evaluation("A"), min_support=1)
    >>> over[["code", "gold", "fp", "extra_per_100"]].values.tolist()
    [['401', 2, 1, 50.0]]
    >>> under[["code", "gold", "fn", "missed_per_100"]].values.tolist()
    [['428', 1, 1, 100.0]]
"""

from __future__ import annotations

import html
from collections.abc import Mapping
from typing import Any

import pandas as pd

from ..breakdown.comparison import families_level
from ..breakdown.families import MIN_SUPPORT, family_errors, per_gold_rates
from ..breakdown.substitutions import substitution_table
from ..metrics import Evaluation
from ..ontology.levels import level_name

__all__ = ["MIN_SUPPORT", "ranked_families", "example_documents", "coder_report_html", "coder_report"]

TOP = 10  # families listed per list
EXAMPLES = 3  # documents shown per family


def ranked_families(
    ev: Evaluation, *, level: str | None = None, min_support: int = MIN_SUPPORT, top: int = TOP
) -> tuple[pd.DataFrame, pd.DataFrame]:
    """(over-coded, under-coded): the ``top`` families with at least ``min_support`` gold codes and at least
    one extra (missed) code, by extra (missed) codes per 100 gold codes, highest first. Columns of
    :func:`cophe_core.breakdown.families.family_errors` plus ``extra_per_100`` and ``missed_per_100``.

    >>> from cophe_core import score_files
    >>> gold = b"doc_id,code\\n1,401.9\\n2,401.9\\n3,428.0\\n"
    >>> pred = b"doc_id,code\\n1,401.9\\n1,401.1\\n2,401.9\\n3,250.00\\n"
    >>> ev = score_files(gold, {"A": pred}).evaluation("A")
    >>> over, under = ranked_families(ev, min_support=1)
    >>> over[["code", "fp", "extra_per_100"]].values.tolist(), under[["code", "fn", "missed_per_100"]].values.tolist()
    ([['401', 1, 50.0]], [['428', 1, 100.0]])
    """
    t = family_errors(ev, level or families_level(ev))
    t = per_gold_rates(t, min_support)
    t = t[t.gold >= max(min_support, 1)]
    over = t[t.fp > 0].sort_values(["extra_per_100", "fp", "code"], ascending=[False, False, True])
    under = t[t.fn > 0].sort_values(["missed_per_100", "fn", "code"], ascending=[False, False, True])
    return over.head(top).reset_index(drop=True), under.head(top).reset_index(drop=True)


def example_documents(ev: Evaluation, node: int, kind: str, n: int = EXAMPLES) -> pd.DataFrame:
    """Up to ``n`` documents where family ``node`` is over-coded (``kind="over"``: more codes written than
    in the gold standard) or under-coded (``"under"``), the largest differences first, with the family's gold
    and written codes of each (:meth:`Evaluation.node_documents`).

    >>> from cophe_core import score_files
    >>> gold = b"doc_id,code\\n1,401.9\\n2,401.9\\n3,428.0\\n"
    >>> pred = b"doc_id,code\\n1,401.9\\n1,401.1\\n2,401.9\\n3,250.00\\n"
    >>> ev = score_files(gold, {"A": pred}).evaluation("A")
    >>> over, _ = ranked_families(ev, min_support=1)
    >>> example_documents(ev, over.node[0], "over")[["doc_id", "gold_codes", "predicted_codes"]].values.tolist()
    [['1', ['401.9'], ['401.1', '401.9']]]
    """
    docs = ev.node_documents(node)
    if kind == "over":
        return docs[docs.difference > 0].head(n)
    return docs[docs.difference < 0].sort_values(["difference", "doc_id"]).head(n)


_STYLE = """
@page { size: A4; margin: 14mm 14mm 16mm 14mm; }
body { font-family: Arial, Helvetica, 'Liberation Sans', sans-serif; font-size: 10pt; color: #000;
       max-width: 182mm; margin: 0 auto; }
h1 { font-size: 16pt; } h2 { font-size: 13pt; margin-top: 18pt; border-bottom: 1px solid #999; }
h3 { font-size: 11pt; margin-bottom: 4pt; page-break-after: avoid; }
table { border-collapse: collapse; width: 100%; table-layout: fixed; margin: 4pt 0 10pt; }
th, td { border-bottom: 0.5pt solid #bbb; padding: 2pt 4pt; text-align: left; vertical-align: top; }
td { overflow-wrap: anywhere; }
th { background: #f0f0f0; font-size: 9pt; }
td.n, th.n { text-align: right; width: 20mm; }
thead { display: table-header-group; }
.examples { font-size: 8.5pt; color: #333; }
section.run { page-break-before: always; } section.run:first-of-type { page-break-before: auto; }
tr { page-break-inside: avoid; }
p.note { font-size: 9pt; color: #333; }
"""


def _codes(ev: Evaluation, codes: list[str]) -> str:
    o = ev.ontology
    return "; ".join(f"<b>{html.escape(c)}</b> {html.escape(o.titles[o.codes[c]])}" for c in codes) or "none"


def _examples(ev: Evaluation, node: int, kind: str) -> str:
    rows = example_documents(ev, node, kind)
    return "<br>".join(
        f"Document {html.escape(str(r.doc_id))}: in the gold standard {_codes(ev, r.gold_codes)}; "
        f"written {_codes(ev, r.predicted_codes)}"
        for r in rows.itertuples()
    )


def _family_table(ev: Evaluation, t: pd.DataFrame, kind: str) -> str:
    if t.empty:
        return "<p>No family with enough gold codes has this problem.</p>"
    rate, count, what = (
        ("extra_per_100", "fp", "Extra codes") if kind == "over" else ("missed_per_100", "fn", "Missed codes")
    )
    # a header row in <thead>: printed again at the top of every page the table runs onto
    head = (
        "<thead><tr><th style='width:52mm'>Family</th><th class='n'>Per 100 gold codes</th>"
        f"<th class='n'>{what}</th><th class='n'>Gold codes</th><th>Example documents</th></tr></thead>"
    )
    rows = "".join(
        f"<tr><td><b>{html.escape(r.code)}</b> {html.escape(r.title)}</td><td class='n'>{getattr(r, rate):.0f}"
        f"</td><td class='n'>{getattr(r, count):,}</td><td class='n'>{r.gold:,}</td>"
        f"<td class='examples'>{_examples(ev, r.node, kind)}</td></tr>"
        for r in t.itertuples()
    )
    return f"<table>{head}{rows}</table>"


def _instead_table(ev: Evaluation, level: str, top: int) -> str:
    t = substitution_table(ev, level=level).head(top)
    if t.empty:
        return "<p>The run never wrote another code of the right family in place of a missed one.</p>"
    head = (
        "<thead><tr><th>Gold standard has</th><th>Written instead</th><th class='n'>Documents</th>"
        "<th class='n'>Share of the gold code's documents</th><th style='width:30mm'>Examples</th></tr></thead>"
    )
    rows = "".join(
        f"<tr><td><b>{html.escape(r.gold_code)}</b> {html.escape(r.gold_title)}</td>"
        f"<td><b>{html.escape(r.written_code)}</b> {html.escape(r.written_title)}</td>"
        f"<td class='n'>{r.documents:,}</td><td class='n'>{r.rate:.0%}</td>"
        f"<td class='examples'>{html.escape(r.examples)}</td></tr>"
        for r in t.itertuples()
    )
    return f"<table>{head}{rows}</table>"


def coder_report_html(
    evals: Mapping[str, Evaluation],
    *,
    level: str | None = None,
    min_support: int = MIN_SUPPORT,
    top: int = TOP,
    title: str = "Coding report",
) -> str:
    """The report as one HTML page that prints on A4; every code title, run name and document id escaped.

    >>> from cophe_core import score_files
    >>> ev = score_files(b"doc_id,code\\n1,401.9\\n", {"A": b"doc_id,code\\n1,401.1\\n"}).evaluation("A")
    >>> page = coder_report_html({"A": ev}, min_support=1, title="R&D <draft>")
    >>> page.startswith("<!doctype html>"), "<h1>R&amp;D &lt;draft&gt;</h1>" in page
    (True, True)
    """
    parts = [
        f"<!doctype html><html><head><meta charset='utf-8'><title>{html.escape(title)}</title>"
        f"<style>{_STYLE}</style></head><body><h1>{html.escape(title)}</h1>"
    ]
    first = next(iter(evals.values()))
    lv = level or families_level(first)
    family = level_name(first.ontology, lv).lower()
    parts.append(
        f"<p class='note'>Families are codes grouped by {html.escape(family)}. A family is listed when the "
        f"gold standard holds at least {min_support} of its codes. <i>Per 100 gold codes</i>: how many codes "
        "the run added (or missed) in the family for every 100 codes the gold standard gives it, so that "
        "large and small families compare fairly; the counts are beside it. Example documents show the "
        "family's codes in the gold standard and as written.</p>"
    )
    for run, ev in evals.items():
        over, under = ranked_families(ev, level=lv, min_support=min_support, top=top)
        parts.append(
            f"<section class='run'><h2>Run {html.escape(run)}</h2>"
            f"<p>{len(ev.docs):,} documents.</p>"
            "<h3>Families where the run adds codes the gold standard does not have</h3>"
            + _family_table(ev, over, "over")
            + "<h3>Families where the run misses codes of the gold standard</h3>"
            + _family_table(ev, under, "under")
            + "<h3>Right family, wrong code: what the run writes instead</h3>"
            + _instead_table(ev, lv, top)
            + "</section>"
        )
    parts.append("</body></html>")
    return "".join(parts)


def coder_report(evals: Mapping[str, Evaluation], fmt: str, **kw: Any) -> bytes:
    """:func:`coder_report_html` as the bytes of an ``html`` or ``pdf`` file (A4).

    >>> from cophe_core import score_files
    >>> ev = score_files(b"doc_id,code\\n1,401.9\\n", {"A": b"doc_id,code\\n1,401.1\\n"}).evaluation("A")
    >>> coder_report({"A": ev}, "html")[:15], coder_report({"A": ev}, "pdf")[:5]
    (b'<!doctype html>', b'%PDF-')
    """
    from .paper_tables import html_to_pdf

    if fmt not in ("html", "pdf"):
        raise ValueError(f"format {fmt!r}: the coder report is html or pdf")
    page = coder_report_html(evals, **kw)
    return page.encode("utf-8") if fmt == "html" else html_to_pdf(page)
