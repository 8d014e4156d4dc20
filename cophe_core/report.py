"""Standalone HTML export: one page with headings, text, tables and Plotly figures.

Every user-supplied string is escaped; figures arrive as Plotly figures and are
embedded with plotly.js inlined once, so the file works offline.
"""

from __future__ import annotations

import html
import math
from collections.abc import Callable
from datetime import UTC, datetime
from typing import Any

import pandas as pd

__all__ = ["html_report", "figure_html", "safe_csv", "p_text"]

FORMULA_START = ("=", "+", "-", "@", "\t", "\r")  # what makes a spreadsheet read a cell as a formula (OWASP)

_STYLE = """
body{font-family:system-ui,-apple-system,Segoe UI,sans-serif;margin:2rem auto;max-width:1100px;color:#222}
h1{font-size:1.6rem} h2{font-size:1.25rem;margin-top:2rem;border-bottom:1px solid #ddd}
div.table{max-width:100%;overflow-x:auto}
table{border-collapse:collapse;font-size:.8rem;margin:.5rem 0}
th,td{border:1px solid #ddd;padding:.2rem .4rem;text-align:right}
th{background:#f5f5f5;vertical-align:bottom}
td:first-child,th:first-child{text-align:left} p.note{color:#555}
@page{size:A4;margin:12mm} @page wide{size:A4 landscape;margin:12mm}
@media print{body{margin:0;max-width:none;font-size:9pt} div.table{overflow:visible} table{font-size:7pt;width:100%}
div.table.wide{page:wide}
th,td{padding:1pt 2pt;overflow-wrap:break-word} th{white-space:normal} .plotly-graph-div{max-width:100%}}
"""
PORTRAIT_COLUMNS = 10  # more columns than this are printed on a landscape page (7 pt, whole words)
P_COLUMNS = ("p_value", "p_holm", "q_value")  # and any column whose name says p-value or q-value


def _is_p(column: object) -> bool:
    name = str(column).lower()
    return name in P_COLUMNS or "p-value" in name or "q-value" in name


def p_text(p: float | str) -> str:
    """A p-value as a reader takes it: 3 decimals, below 0.001 as "< 0.001" (never 0.000), none as "–"; a text
    (a cell written already, such as a report's "< 0.001") as it is.

    >>> p_text(0.0), p_text(0.0004), p_text(0.0312), p_text(float("nan")), p_text("< 0.001")
    ('< 0.001', '< 0.001', '0.031', '–', '< 0.001')
    """
    if isinstance(p, str):
        return p
    if pd.isna(p):
        return "–"
    return "< 0.001" if p < 0.001 else f"{p:.3f}"


def _cell(v: Any) -> str:
    """A cell of no particular column: "–" for a missing value, yes/no for true/false, 3 decimals."""
    if v is None or (isinstance(v, float) and math.isnan(v)):
        return NA
    if isinstance(v, bool) or type(v).__name__ == "bool_":
        return "yes" if v else "no"
    return f"{v:.3f}" if isinstance(v, float) else str(v)


def _formatters(table: pd.DataFrame) -> dict[str, Callable[[Any], str]]:
    """Cell texts of a report's table: numbers to 3 decimals, p-values by :func:`p_text`, yes/no for a
    true/false column, "–" for a missing value; never NaN, True or False."""
    return {
        col: (
            (lambda v: "yes" if v else "no")
            if pd.api.types.is_bool_dtype(table[col])
            else p_text
            if _is_p(col)
            else _cell
        )
        for col in table.columns
    }


NA = "–"  # an undefined number in a table (NaN), never "NaN"


def figure_html(fig: Any, *, include_plotlyjs: bool | str = True) -> str:
    """A Plotly figure as a standalone HTML page (plotly.js inlined, works offline), in standards mode.

    Examples
    --------
    >>> import plotly.graph_objects as go
    >>> page = figure_html(go.Figure(go.Bar(y=[1, 2])), include_plotlyjs=False)
    >>> page[:15].lower(), "<div" in page  # plotly < 6 writes no doctype: one is added
    ('<!doctype html>', True)
    """
    page: str = fig.to_html(include_plotlyjs=include_plotlyjs, full_html=True)
    # plotly < 6 writes no doctype, which puts browsers in quirks mode
    return page if page.lstrip().lower().startswith("<!doctype") else "<!DOCTYPE html>\n" + page


def html_report(title: str, sections: list[tuple[str, list[Any]]]) -> str:
    """Build one HTML page.

    ``sections`` is a list of ``(heading, items)``; each item is a ``str``
    (a paragraph, escaped), a ``DataFrame`` (a table, escaped, floats to 3
    places, NaN as a dash, True/False as yes/no; it scrolls on a narrow screen and shrinks to the width of
    an A4 page in print) or a Plotly figure.

    Examples
    --------
    >>> import pandas as pd
    >>> page = html_report("Run <A>", [("Scores", ["F1 & co.", pd.DataFrame({"f1": [0.1234]})])])
    >>> "Run &lt;A&gt;" in page, "F1 &amp; co." in page, "0.123" in page
    (True, True, True)
    >>> page = html_report("R", [("T", [pd.DataFrame({"delta": [float("nan")], "p_value": [0.0], "best": [True]})])])
    >>> "NaN" in page, "True" in page, "0.000" in page, "&lt; 0.001" in page, "–" in page, "yes" in page
    (False, False, False, True, True, True)
    """
    parts = [
        f"<!doctype html><html><head><meta charset='utf-8'><title>{html.escape(title)}</title>"
        f"<style>{_STYLE}</style></head><body><h1>{html.escape(title)}</h1>",
        f"<p class='note'>Made by cophe on {datetime.now(UTC):%Y-%m-%d %H:%M} UTC.</p>",
    ]
    plotly_included = False
    for heading, items in sections:
        parts.append(f"<h2>{html.escape(heading)}</h2>")
        for item in items:
            if isinstance(item, str):
                parts.append(f"<p>{html.escape(item)}</p>")
            elif isinstance(item, pd.DataFrame):
                # a table too wide for a portrait page's whole words is printed on a landscape page
                wide = " wide" if item.shape[1] > PORTRAIT_COLUMNS else ""
                parts.append(f"<div class='table{wide}'>{_table_html(item)}</div>")
            else:
                parts.append(item.to_html(full_html=False, include_plotlyjs=not plotly_included))
                plotly_included = True
    parts.append("</body></html>")
    return "\n".join(parts)


def _table_html(table: pd.DataFrame) -> str:
    """A table as HTML for a reader: floats to 3 places, NaN as a dash, True/False as yes/no, text escaped.

    >>> t = pd.DataFrame({"f1": [0.1234, float("nan")], "flagged": [True, False]})
    >>> html = _table_html(t)
    >>> "0.123" in html, "NaN" in html, "True" in html, "yes" in html
    (True, False, False, True)
    """
    page: str = table.to_html(index=False, formatters=_formatters(table), na_rep=NA, escape=True, border=0)
    return page


def safe_csv(table: pd.DataFrame) -> str:
    """``table`` as CSV text, with every text cell that starts like a formula (``= + - @``, tab or carriage
    return) prefixed by ``'``, as OWASP advises against CSV injection: a spreadsheet then shows it as text.
    Numbers are written as numbers, negative ones too.

    >>> print(safe_csv(pd.DataFrame({"code": ["401.9", "=HYPERLINK(1)"], "delta": [-0.5, 0.25]})), end="")
    code,delta
    401.9,-0.5
    '=HYPERLINK(1),0.25
    """
    out = table.copy()
    for col in out.columns:
        if out[col].dtype == object or isinstance(out[col].dtype, pd.StringDtype):
            out[col] = out[col].map(
                lambda v: "'" + v if isinstance(v, str) and v.startswith(FORMULA_START) else v
            )
    text: str = out.to_csv(index=False)
    return text
