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

__all__ = [
    "MIN_SUPPORT",
    "MARKS",
    "ranked_families",
    "example_documents",
    "marked_codes",
    "instead_pairs",
    "coder_report_html",
    "coder_report",
]

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
td.n, th.n { text-align: right; }
thead { display: table-header-group; }
th.part { background: #fff; font-size: 10.5pt; text-align: left; border-bottom: 1px solid #999; padding: 6pt 0 3pt; }
.examples { font-size: 8.5pt; color: #333; }
.examples div { break-inside: avoid; page-break-inside: avoid; margin-bottom: 2pt; }
.tag { font-weight: bold; font-size: 7.5pt; text-transform: uppercase; letter-spacing: 0.02em; }
.extra .tag { color: #a33c00; } .missed .tag { color: #00508a; } .right .tag { color: #333; }
section.run { page-break-before: always; } section.run:first-of-type { page-break-before: auto; }
tr, .summary { break-inside: avoid; page-break-inside: avoid; }
tbody.last { break-inside: avoid; page-break-inside: avoid; }
table.summary { width: auto; margin: 2pt 0 8pt; } table.summary td { padding: 2pt 10pt 2pt 4pt; }
p.note { font-size: 9pt; color: #333; }
"""


MARKS = {
    "extra": "Extra",  # written by the run, not in the gold standard
    "missed": "Missed",  # in the gold standard, not written by the run
    "right": "Right",  # in both
}


def marked_codes(gold: list[str], written: list[str]) -> list[tuple[str, str]]:
    """A document's codes of one family, each with what it is for the run: ``"right"`` (in the gold standard and
    written), ``"extra"`` (written, not in the gold standard) or ``"missed"`` (in the gold standard, not
    written); extra codes first, then missed, then right, each in code order.

    >>> marked_codes(["401.9", "401.1"], ["401.1", "401.0"])
    [('401.0', 'extra'), ('401.9', 'missed'), ('401.1', 'right')]
    """
    g, w = set(gold), set(written)
    return (
        [(c, "extra") for c in sorted(w - g)]
        + [(c, "missed") for c in sorted(g - w)]
        + [(c, "right") for c in sorted(g & w)]
    )


def _codes(ev: Evaluation, codes: list[tuple[str, str]]) -> str:
    o = ev.ontology
    return "; ".join(
        f"<span class='{mark}'><span class='tag'>{MARKS[mark]}</span> <b>{html.escape(c)}</b> "
        f"{html.escape(o.titles[o.codes[c]])}</span>"
        for c, mark in codes
    )


def _examples(ev: Evaluation, node: int, kind: str) -> str:
    rows = example_documents(ev, node, kind)
    return "".join(
        f"<div>Document {html.escape(str(r.doc_id))}: {_codes(ev, marked_codes(r.gold_codes, r.predicted_codes))}"
        "</div>"
        for r in rows.itertuples()
    )


def _head(run: str, part: str, columns: str, widths: list[str]) -> str:
    """A table's column widths and header, the header printed again at the top of every page the table runs
    onto: the run and the part of the report on a line of their own (a page in the middle of a section says
    whose it is), then the columns. The widths are a ``<colgroup>``'s: a fixed table takes them from its
    first row, here the one cell of the run's name."""
    cols = "".join(f"<col style='width:{w}'>" if w else "<col>" for w in widths)
    return (
        f"<colgroup>{cols}</colgroup><thead><tr><th class='part' colspan='{len(widths)}'>"
        f"{html.escape(run)}: {part}</th></tr><tr>{columns}</tr></thead>"
    )


def _body(rows: list[str]) -> str:
    """Rows in a ``<tbody>``, the last two in one of their own that is not split across pages: no row is left
    alone at the top of a page."""
    if len(rows) <= 2:
        return f"<tbody class='last'>{''.join(rows)}</tbody>"
    return f"<tbody>{''.join(rows[:-2])}</tbody><tbody class='last'>{''.join(rows[-2:])}</tbody>"


def _family_table(ev: Evaluation, run: str, t: pd.DataFrame, kind: str) -> str:
    part = (
        "families where the run adds codes the gold standard does not have"
        if kind == "over"
        else "families where the run misses codes of the gold standard"
    )
    if t.empty:
        return f"<h3>{html.escape(run)}: {part}</h3><p>No family with enough gold codes has this problem.</p>"
    rate, count, what = (
        ("extra_per_100", "fp", "Extra codes") if kind == "over" else ("missed_per_100", "fn", "Missed codes")
    )
    columns = (
        "<th>Family</th><th class='n'>Per 100 gold codes</th>"
        f"<th class='n'>{what}</th><th class='n'>Gold codes</th><th>Example documents</th>"
    )
    rows = [
        f"<tr><td><b>{html.escape(r.code)}</b> {html.escape(r.title)}</td><td class='n'>{getattr(r, rate):.0f}"
        f"</td><td class='n'>{getattr(r, count):,}</td><td class='n'>{r.gold:,}</td>"
        f"<td class='examples'>{_examples(ev, r.node, kind)}</td></tr>"
        for r in t.itertuples()
    ]
    head = _head(run, part, columns, ["44mm", "20mm", "18mm", "18mm", ""])
    return f"<table>{head}{_body(rows)}</table>"


def instead_pairs(
    ev: Evaluation, *, level: str | None = None, min_support: int = MIN_SUPPORT, top: int = TOP
) -> tuple[pd.DataFrame, int]:
    """(pairs, left out): the ``top`` "written instead" pairs of ``ev``
    (:func:`cophe_core.breakdown.substitutions.substitution_table`: a gold code missed and another code of its
    family written in the same document) whose gold code is in at least ``min_support`` documents of the gold
    standard, most documents first, and how many pairs were left out for less support. The support is the
    ranked families' (a pair seen once in a code's only document is not a habit of the run).

    >>> from cophe_core import score_files
    >>> gold = b"doc_id,code\\n1,428.21\\n2,428.21\\n3,428.21\\n3,401.9\\n"
    >>> pred = b"doc_id,code\\n1,428.22\\n2,428.22\\n3,428.21\\n3,401.1\\n"
    >>> pairs, left = instead_pairs(score_files(gold, {"A": pred}).evaluation("A"), min_support=2)
    >>> pairs[["gold_code", "written_code", "documents", "gold_documents"]].values.tolist(), left
    ([['428.21', '428.22', 2, 3]], 1)
    """
    t = substitution_table(ev, level=level)
    kept = t[t.gold_documents >= max(min_support, 1)]
    return kept.head(top).reset_index(drop=True), len(t) - len(kept)


def _instead_table(ev: Evaluation, run: str, level: str, min_support: int, top: int) -> str:
    t, left = instead_pairs(ev, level=level, min_support=min_support, top=top)
    part = "right family, wrong code: what the run writes instead"
    support = (
        f" {left:,} pair{'s' if left != 1 else ''} whose gold code is in fewer than {min_support} documents "
        f"of the gold standard {'are' if left != 1 else 'is'} left out."
        if left
        else ""
    )
    if t.empty:
        return (
            f"<h3>{html.escape(run)}: {part}</h3><p>No code of the gold standard in at least {min_support} "
            f"documents was written as another code of its family.{support}</p>"
        )
    columns = (
        "<th>Gold standard has</th><th>Written instead</th><th class='n'>Documents</th>"
        "<th class='n'>Share of the gold code's documents</th><th>Examples</th>"
    )
    rows = [
        f"<tr><td><b>{html.escape(r.gold_code)}</b> {html.escape(r.gold_title)}</td>"
        f"<td><b>{html.escape(r.written_code)}</b> {html.escape(r.written_title)}</td>"
        f"<td class='n'>{r.documents:,}</td><td class='n'>{r.rate:.0%}</td>"
        f"<td class='examples'>{html.escape(r.examples)}</td></tr>"
        for r in t.itertuples()
    ]
    note = (
        f"<p class='note'>Pairs whose gold code is in at least {min_support} documents of the gold standard, "
        f"most documents first.{support}</p>"
    )
    head = _head(run, part, columns, ["", "", "20mm", "24mm", "30mm"])
    return f"<table>{head}{_body(rows)}</table>{note}"


def _share(part: int, whole: int) -> str:
    return f"{part / whole:.0%}" if whole else "–"


def _summary(ev: Evaluation, level: str, family: str) -> str:
    """The run at a glance: its exact codes right, extra and missed, in numbers and in a sentence, and the same
    for its families."""
    flat, fam = ev.score("flat", "leaf"), ev.score("cophe", level)
    gold, written = flat.tp + flat.fn, flat.tp + flat.fp
    rows = "".join(
        f"<tr><td>{what}</td><td class='n'>{n:,}</td><td>{words}</td></tr>"
        for what, n, words in (
            ("Right codes", flat.tp, f"{_share(flat.tp, gold)} of the gold standard's codes"),
            ("Extra codes", flat.fp, f"{_share(flat.fp, written)} of the codes the run wrote"),
            ("Missed codes", flat.fn, f"{_share(flat.fn, gold)} of the gold standard's codes"),
        )
    )
    return (
        "<div class='summary'>"
        f"<p>{len(ev.docs):,} documents. The gold standard has {gold:,} codes and the run wrote {written:,}: "
        f"<b>{flat.tp:,} right</b> ({_share(flat.tp, gold)} of the gold standard's codes), "
        f"<b>{flat.fp:,} extra</b> (written but not in the gold standard) and <b>{flat.fn:,} missed</b> (in "
        f"the gold standard but not written). Counted by {html.escape(family)} instead of exact code, "
        f"{fam.tp:,} are in the right {html.escape(family)}, {fam.fp:,} extra and {fam.fn:,} missed.</p>"
        f"<table class='summary'><tbody>{rows}</tbody></table></div>"
    )


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
        "family's codes, each marked <b>EXTRA</b> (written by the run, not in the gold standard), "
        "<b>MISSED</b> (in the gold standard, not written) or <b>RIGHT</b> (in both). A code written "
        f"instead of another is listed when the gold standard has that code in at least {min_support} "
        "documents.</p>"
    )
    for run, ev in evals.items():
        over, under = ranked_families(ev, level=lv, min_support=min_support, top=top)
        name = f"Run {run}"
        parts.append(
            f"<section class='run'><h2>{html.escape(name)}</h2>"
            + _summary(ev, lv, family)
            + _family_table(ev, name, over, "over")
            + _family_table(ev, name, under, "under")
            + _instead_table(ev, name, lv, min_support, top)
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
