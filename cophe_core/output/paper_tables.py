"""Tables for papers: runs × levels × measures, each value rounded to 3 decimals with its 95% interval, marked
where it differs from a baseline run (paired bootstrap, Holm-adjusted), the best run of each row in bold.

:func:`paper_table` computes the numbers (from :func:`cophe_core.breakdown.stats.compare_runs`); :func:`to_latex`,
:func:`to_markdown`, :func:`to_wide_csv` and :func:`to_html` write them; :func:`html_to_pdf` prints the HTML
to an A4 PDF with the browser the figures use. Every name from the user (runs) is escaped for its format.

    >>> from cophe_core import score_files
    >>> gold = b"doc_id,code\\n1,401.9\\n2,428.0\\n3,250.00\\n"
    >>> s = score_files(gold, {"A": gold, "B": b"doc_id,code\\n1,401.9\\n2,401.1\\n3,250.01\\n"})
    >>> t = paper_table({r: s.evaluation(r) for r in "AB"}, n_resamples=200)
    >>> t[(t.measure == "flat")][["run", "value", "best"]].values.tolist()
    [['A', 1.0, True], ['B', 0.333, False]]
"""

from __future__ import annotations

import html
import os
import subprocess
import tempfile
from collections.abc import Mapping, Sequence

import numpy as np
import pandas as pd

from ..base.files import InputError
from ..breakdown.compare import figure_parts
from ..breakdown.stats import compare_runs
from ..metrics import MEASURE_WORDS, Figures
from ..ontology.levels import level_name
from .report import safe_csv

__all__ = [
    "STATISTICS",
    "TABLE_FORMATS",
    "paper_table",
    "to_latex",
    "to_markdown",
    "to_wide_csv",
    "p_floor",
    "to_html",
    "html_to_pdf",
    "write_table",
]

STATISTICS = ("precision", "recall", "f1")
STAT_NAMES = {"precision": "P", "recall": "R", "f1": "F1"}
STAT_WORDS = {"precision": "precision", "recall": "recall", "f1": "F1"}
TABLE_FORMATS = ("tex", "md", "csv", "html", "pdf")
DECIMALS = 3
MARK = "*"


def paper_table(
    evals: Mapping[str, Figures],
    *,
    baseline: str | None = None,
    statistics: Sequence[str] = ("f1",),
    n_resamples: int = 1000,
    seed: int = 0,
    alpha: float = 0.05,
) -> pd.DataFrame:
    """One row per (run, measure, level, statistic) of the micro figures, in the order runs were given, flat
    first, then set-based and CoPHE from the finest level to ``overall``. Each of ``statistics`` is given for
    flat, for every measure at each level and over all levels.

    Columns: ``run, measure, level, level_name, statistic, value, low, high, p_holm, marked, best``, the
    figures rounded to :data:`DECIMALS`. ``low``–``high`` is the 95% percentile interval of ``n_resamples``
    document resamples; ``p_holm`` the paired bootstrap's p-value of the run's difference from ``baseline``
    (default: the first run), Holm-adjusted over the runs compared on the same figure (NaN for the baseline);
    ``marked`` is True where that difference is clear (:func:`cophe_core.breakdown.stats.verdict`: adjusted p below
    ``alpha`` and an interval of the difference that leaves out 0); ``best`` marks the highest rounded value
    of each figure (ties all marked; none when there is one run).

    >>> from cophe_core import score_files
    >>> gold = b"doc_id,code\\n1,401.9\\n2,428.0\\n"
    >>> s = score_files(gold, {"A": gold, "B": b"doc_id,code\\n1,401.9\\n2,401.1\\n"})
    >>> t = paper_table({r: s.evaluation(r) for r in "AB"}, n_resamples=20)
    >>> t[t.measure == "flat"][["run", "value", "low", "high", "best"]].values.tolist()
    [['A', 1.0, 1.0, 1.0, True], ['B', 0.5, 0.0, 1.0, False]]
    """
    for s in statistics:
        if s not in STATISTICS:
            raise ValueError(f"statistic {s!r}: give one of {', '.join(STATISTICS)}")
    table = compare_runs(
        dict(evals),
        baseline=baseline,
        n_resamples=n_resamples,
        seed=seed,
        alpha=alpha,
        macro=False,
        level_statistics=tuple(statistics),
    )
    parts = [figure_parts(f) for f in table.figure]
    t = table.assign(
        measure=[m for m, _, _ in parts],
        level=[lv or "leaf" for _, lv, _ in parts],
        statistic=[s for _, _, s in parts],
    )
    t = t[t.statistic.isin(list(statistics)) & t.measure.isin(list(MEASURE_WORDS))].copy()
    onto = next(iter(evals.values())).ontology
    t["level_name"] = [level_name(onto, lv) for lv in t.level]
    for col in ("value", "low", "high"):
        t[col] = t[col].round(DECIMALS)
    t["marked"] = t.verdict.isin(["better", "worse"])
    rounded_max = t.groupby("figure", sort=False).value.transform("max")
    t["best"] = (t.value == rounded_max) & (len(evals) > 1)
    order = {m: i for i, m in enumerate(MEASURE_WORDS)}
    t["_m"] = t.measure.map(order)
    t["_s"] = t.statistic.map({s: i for i, s in enumerate(statistics)})
    t["_r"] = t.run.map({r: i for i, r in enumerate(evals)})
    levels = list(dict.fromkeys(next(iter(evals.values())).levels_table.level))  # finest first, overall last
    t["_l"] = t.level.map({lv: i for i, lv in enumerate(levels)})
    t = t.sort_values(["_r", "_m", "_l", "_s"], kind="stable")
    return t[
        [
            "run",
            "measure",
            "level",
            "level_name",
            "statistic",
            "value",
            "low",
            "high",
            "p_holm",
            "marked",
            "best",
        ]
    ].reset_index(drop=True)


def _rows(t: pd.DataFrame) -> list[tuple[str, str, str]]:
    """The (measure, level, statistic) rows of a display table, in the table's order."""
    return list(dict.fromkeys(zip(t.measure, t.level, t.statistic)))


def _measure(m: str) -> str:
    return MEASURE_WORDS[m][1]  # the papers' names: Flat, Set-based, CoPHE


def _note(t: pd.DataFrame, baseline: str, n_resamples: int, alpha: float) -> str:
    runs = list(dict.fromkeys(t.run))
    stats = list(dict.fromkeys(t.statistic))
    words = [STAT_WORDS[s] for s in stats]
    named = ", ".join(words[:-1]) + " and " + words[-1] if len(words) > 1 else words[0]
    return (
        f"Micro-averaged {named}, {DECIMALS} decimals, with 95% percentile intervals from {n_resamples:,} "
        f"bootstrap resamples of the documents. Bold: the best run of each row. {MARK}: differs from the "
        f"baseline {baseline} (paired bootstrap test, p < {alpha:g} after Holm's adjustment over the "
        f"{len(runs) - 1} run{'s' if len(runs) != 2 else ''} compared with it, and a 95% interval of the "
        "difference that leaves out 0)."
    )


def _cells(t: pd.DataFrame, fmt: str) -> pd.DataFrame:
    """Run × row cells: value (bold when best, marked when different) and interval, in ``fmt`` markup."""
    out = {}
    for r in t.itertuples():
        v = f"{r.value:.{DECIMALS}f}"
        ci = f"[{r.low:.{DECIMALS}f}, {r.high:.{DECIMALS}f}]" if not np.isnan(r.low) else ""
        if fmt == "tex":
            cell = (r"\textbf{" + v + "}" if r.best else v) + (r"$^{*}$" if r.marked else "")
            if ci:  # the interval under the value: a column as narrow as the interval, not twice as wide
                cell = (
                    r"\begin{tabular}[t]{@{}c@{}}" + cell + r"\\[-2pt]{\scriptsize " + ci + r"}\end{tabular}"
                )
        elif fmt == "md":
            cell = (f"**{v}**" if r.best else v) + (r"\*" if r.marked else "") + (f" {ci}" if ci else "")
        else:  # html
            cell = (f"<b>{v}</b>" if r.best else v) + ("<sup>*</sup>" if r.marked else "")
            cell += f" <span class='ci'>{ci}</span>" if ci else ""
        out[(r.run, (r.measure, r.level, r.statistic))] = cell
    return pd.Series(out).unstack(0)


_TEX = {
    "\\": r"\textbackslash{}",
    "&": r"\&",
    "%": r"\%",
    "$": r"\$",
    "#": r"\#",
    "_": r"\_",
    "{": r"\{",
    "}": r"\}",
    "~": r"\textasciitilde{}",
    "^": r"\textasciicircum{}",
    "<": r"\textless{}",  # the default font encoding sets "<" as "¡"
    ">": r"\textgreater{}",
}


def tex_escape(text: str) -> str:
    """``text`` with LaTeX's special characters escaped.

    >>> print(tex_escape("run_a & 50% {x}"))
    run\\_a \\& 50\\% \\{x\\}
    """
    return "".join(_TEX.get(c, c) for c in str(text))


def _md_escape(text: str) -> str:
    return "".join("\\" + c if c in "\\`*_[]<>|" else c for c in str(text))


def _row_label(t: pd.DataFrame, row: tuple[str, str, str], multi_stat: bool) -> tuple[str, str]:
    m, lv, s = row
    name = t.level_name[(t.measure == m) & (t.level == lv)].iloc[0]
    return _measure(m) + (f" {STAT_NAMES[s]}" if multi_stat else ""), name


def to_latex(t: pd.DataFrame, *, baseline: str, n_resamples: int, alpha: float = 0.05) -> str:
    """A booktabs ``tabular`` (in a ``table*`` float with its caption): one row per measure and level, one
    column per run, each value above its interval; ``\\usepackage{booktabs}`` in the preamble.

    >>> from cophe_core import score_files
    >>> gold = b"doc_id,code\\n1,401.9\\n2,428.0\\n"
    >>> s = score_files(gold, {"A": gold, "B": b"doc_id,code\\n1,401.9\\n2,401.1\\n"})
    >>> t = paper_table({r: s.evaluation(r) for r in "AB"}, n_resamples=20)
    >>> print(to_latex(t, baseline="A", n_resamples=20).splitlines()[5])
    Measure & Level & A & B \\\\
    """
    runs = list(dict.fromkeys(t.run))
    cells = _cells(t, "tex")
    multi = t.statistic.nunique() > 1
    lines = [
        r"\begin{table*}[t]",  # the page's width in a two-column paper; a plain table in a one-column one
        r"\centering",
        r"\small",
        r"\begin{tabular}{ll" + "c" * len(runs) + "}",
        r"\toprule",
        "Measure & Level & " + " & ".join(tex_escape(r) for r in runs) + r" \\",
        r"\midrule",
    ]
    previous, shown_last = None, None
    for row in _rows(t):
        m, lv = _row_label(t, row, multi)
        if previous is not None and row[0] != previous:
            lines.append(r"\midrule")
        # a row's label whenever it changes: with several statistics, a measure's rows name each one
        shown = tex_escape(m) if m != shown_last else ""
        previous, shown_last = row[0], m
        lines.append(f"{shown} & {tex_escape(lv)} & " + " & ".join(cells.at[row, r] for r in runs) + r" \\")
    lines += [
        r"\bottomrule",
        r"\end{tabular}",
        r"\caption{" + tex_escape(_note(t, baseline, n_resamples, alpha)) + "}",
        r"\label{tab:cophe}",  # for \ref; rename it when a paper has two such tables
        r"\end{table*}",
    ]
    return "\n".join(lines) + "\n"


def to_markdown(t: pd.DataFrame, *, baseline: str, n_resamples: int, alpha: float = 0.05) -> str:
    """A Markdown (GitHub) table: one row per measure and level, one column per run, and its note.

    >>> from cophe_core import score_files
    >>> gold = b"doc_id,code\\n1,401.9\\n2,428.0\\n"
    >>> s = score_files(gold, {"A": gold, "B": b"doc_id,code\\n1,401.9\\n2,401.1\\n"})
    >>> t = paper_table({r: s.evaluation(r) for r in "AB"}, n_resamples=20)
    >>> print(to_markdown(t, baseline="A", n_resamples=20).splitlines()[2])
    | Flat | Codes as given | **1.000** [1.000, 1.000] | 0.500 [0.000, 1.000] |
    """
    runs = list(dict.fromkeys(t.run))
    cells = _cells(t, "md")
    multi = t.statistic.nunique() > 1
    lines = [
        "| Measure | Level | " + " | ".join(_md_escape(r) for r in runs) + " |",
        "|---|---|" + "---:|" * len(runs),
    ]
    for row in _rows(t):
        m, lv = _row_label(t, row, multi)
        lines.append(
            f"| {_md_escape(m)} | {_md_escape(lv)} | " + " | ".join(cells.at[row, r] for r in runs) + " |"
        )
    return "\n".join(lines) + "\n\n" + _md_escape(_note(t, baseline, n_resamples, alpha)) + "\n"


def p_floor(n_resamples: int, compared: int = 1) -> float:
    """The smallest Holm-adjusted p-value the wide CSV writes as a number: a paired bootstrap of
    ``n_resamples`` resamples cannot resolve a p-value below 1/(n + 1) (none of its resamples as far from 0
    as the observed difference), Holm's adjustment over ``compared`` runs multiplies it by up to that
    many, and the table's 3 decimals cannot show less than 0.001. A p-value below it is written as it.

    >>> p_floor(1000), p_floor(1000, compared=2), p_floor(200)
    (0.001, 0.002, 0.005)
    """
    bound = min(1.0, max(compared, 1) / (n_resamples + 1))
    return max(10.0**-DECIMALS, float(np.ceil(bound * 10**DECIMALS) / 10**DECIMALS))


def _p_cells(p: float, floor: float) -> tuple[object, str]:
    """(number, text) of a Holm-adjusted p-value in the wide CSV: no test (the baseline) is empty; a p below
    ``floor`` is the floor as a number and ``< floor`` as text; else both to 3 decimals."""
    if np.isnan(p):
        return "", ""
    if p < floor:
        return floor, f"< {floor:.{DECIMALS}f}"
    return round(float(p), DECIMALS), f"{p:.{DECIMALS}f}"


def to_wide_csv(t: pd.DataFrame, *, n_resamples: int = 1000) -> str:
    """One row per run; for each measure, level and statistic, columns of the value, the 95% interval's
    bounds, the Holm-adjusted p-value against the baseline and whether the difference is clear, named in
    words (``CoPHE F1, Category (3 digits)``). Cells a spreadsheet would run as a formula are defused.

    A bootstrap p-value is never 0: a p-value below what ``n_resamples`` resamples can resolve
    (:func:`p_floor`: 0.001 for 1,000 resamples and one run against the baseline) is written as that bound,
    so that the column stays numeric (sortable, plottable) and no p-value reads 0.0; the column
    ``… p vs baseline (Holm), as text`` says the same in words, ``< 0.001``, as a reader would quote it.

    >>> from cophe_core import score_files
    >>> gold = b"doc_id,code\\n1,401.9\\n2,428.0\\n"
    >>> s = score_files(gold, {"A": gold, "B": b"doc_id,code\\n1,401.9\\n2,401.1\\n"})
    >>> t = paper_table({r: s.evaluation(r) for r in "AB"}, n_resamples=20)
    >>> import io
    >>> w = pd.read_csv(io.StringIO(to_wide_csv(t, n_resamples=20)))
    >>> w[["run", "Flat F1, Codes as given", "Flat F1, Codes as given, best"]].values.tolist()
    [['A', 1.0, 'yes'], ['B', 0.5, nan]]
    """
    floor = p_floor(n_resamples, t.run.nunique() - 1)
    wide: dict[str, dict[str, object]] = {}
    for r in t.itertuples():
        name = f"{_measure(r.measure)} {STAT_NAMES[r.statistic]}, {r.level_name}"
        row = wide.setdefault(r.run, {"run": r.run})
        p, said = _p_cells(float(r.p_holm), floor)
        row |= {
            name: r.value,
            f"{name}, 95% low": r.low,
            f"{name}, 95% high": r.high,
            f"{name}, p vs baseline (Holm)": p,
            f"{name}, p vs baseline (Holm), as text": said,
            f"{name}, differs from baseline": "yes" if r.marked else "",
            f"{name}, best": "yes" if r.best else "",
        }
    return safe_csv(pd.DataFrame(list(wide.values())))


_HTML_STYLE = """
@page { size: A4; margin: 15mm; }
body { font-family: Arial, Helvetica, 'Liberation Sans', sans-serif; font-size: 10pt; color: #000; }
table { border-collapse: collapse; margin: 8pt 0; }
th, td { padding: 3pt 8pt; text-align: right; white-space: nowrap; }
th:nth-child(-n+2), td:nth-child(-n+2) { text-align: left; }
thead th { border-top: 1.5pt solid #000; border-bottom: 0.8pt solid #000; }
tbody tr:last-child td { border-bottom: 1.5pt solid #000; }
tr.group td { border-top: 0.5pt solid #888; }
.ci { color: #444; font-size: 8.5pt; }
p.note { max-width: 170mm; font-size: 9pt; }
"""


def to_html(
    t: pd.DataFrame, *, baseline: str, n_resamples: int, alpha: float = 0.05, title: str = "Scores by level"
) -> str:
    """A standalone HTML page of the table, laid out to print on A4, every name escaped.

    >>> from cophe_core import score_files
    >>> gold = b"doc_id,code\\n1,401.9\\n2,428.0\\n"
    >>> s = score_files(gold, {"A": gold, "B": b"doc_id,code\\n1,401.9\\n2,401.1\\n"})
    >>> t = paper_table({r: s.evaluation(r) for r in "AB"}, n_resamples=20)
    >>> page = to_html(t, baseline="A", n_resamples=20, title="Runs <A & B>")
    >>> page.startswith("<!doctype html>"), "<h1>Runs &lt;A &amp; B&gt;</h1>" in page
    (True, True)
    """
    runs = list(dict.fromkeys(t.run))
    cells = _cells(t, "html")
    multi = t.statistic.nunique() > 1
    head = "".join(f"<th>{html.escape(r)}</th>" for r in runs)
    body, previous, shown_last = [], None, None
    for row in _rows(t):
        m, lv = _row_label(t, row, multi)
        group = " class='group'" if previous is not None and row[0] != previous else ""
        shown = html.escape(m) if m != shown_last else ""
        previous, shown_last = row[0], m
        body.append(
            f"<tr{group}><td>{shown}</td><td>{html.escape(lv)}</td>"
            + "".join(f"<td>{cells.at[row, r]}</td>" for r in runs)
            + "</tr>"
        )
    return (
        f"<!doctype html><html><head><meta charset='utf-8'><title>{html.escape(title)}</title>"
        f"<style>{_HTML_STYLE}</style></head><body><h1>{html.escape(title)}</h1>"
        f"<table><thead><tr><th>Measure</th><th>Level</th>{head}</tr></thead><tbody>{''.join(body)}</tbody>"
        f"</table><p class='note'>{html.escape(_note(t, baseline, n_resamples, alpha))}</p></body></html>"
    )


def html_to_pdf(page: str, *, timeout: float = 120.0) -> bytes:
    """An HTML page printed to PDF (its CSS ``@page`` sets the paper) by the browser the figures use
    (:func:`cophe_core.output.figures_export.find_browser`), run headless on a temporary file: no shell, no
    network.

    >>> html_to_pdf("<!doctype html><p>Scores by level</p>")[:5]
    b'%PDF-'
    """
    from .figures_export import NO_BROWSER, find_browser

    browser = find_browser()
    if browser is None:
        raise InputError(NO_BROWSER)
    with tempfile.TemporaryDirectory(prefix="cophe-pdf-") as tmp:
        source, target = os.path.join(tmp, "page.html"), os.path.join(tmp, "page.pdf")
        with open(source, "w", encoding="utf-8") as f:
            f.write(page)
        command = [
            browser,
            "--headless",
            "--no-sandbox",  # as root in a container, Chromium's sandbox cannot start
            "--disable-gpu",
            "--no-pdf-header-footer",
            f"--user-data-dir={os.path.join(tmp, 'profile')}",
            f"--print-to-pdf={target}",
            "file://" + source,
        ]
        done = subprocess.run(command, capture_output=True, timeout=timeout, check=False)
        if not os.path.exists(target):
            said = done.stderr.decode("utf-8", "replace").strip().splitlines()[-1:] or [""]
            raise InputError(f"printing the report to PDF failed ({browser}: {said[0][:200]}); {NO_BROWSER}")
        with open(target, "rb") as f:
            return f.read()


def write_table(
    evals: Mapping[str, Figures],
    fmt: str,
    *,
    baseline: str | None = None,
    statistics: Sequence[str] = ("f1",),
    n_resamples: int = 1000,
    seed: int = 0,
    alpha: float = 0.05,
) -> bytes:
    """The paper table of ``evals`` as the bytes of a file of ``fmt`` (:data:`TABLE_FORMATS`).

    >>> from cophe_core import score_files
    >>> gold = b"doc_id,code\\n1,401.9\\n2,428.0\\n"
    >>> s = score_files(gold, {"A": gold, "B": b"doc_id,code\\n1,401.9\\n2,401.1\\n"})
    >>> print(write_table({r: s.evaluation(r) for r in "AB"}, "md", n_resamples=20).decode().splitlines()[2])
    | Flat | Codes as given | **1.000** [1.000, 1.000] | 0.500 [0.000, 1.000] |
    """
    if fmt not in TABLE_FORMATS:
        raise ValueError(f"format {fmt!r}: give one of {', '.join(TABLE_FORMATS)}")
    base = baseline or next(iter(evals))
    t = paper_table(
        evals, baseline=base, statistics=statistics, n_resamples=n_resamples, seed=seed, alpha=alpha
    )
    if fmt == "tex":
        return to_latex(t, baseline=base, n_resamples=n_resamples, alpha=alpha).encode("utf-8")
    if fmt == "md":
        return to_markdown(t, baseline=base, n_resamples=n_resamples, alpha=alpha).encode("utf-8")
    if fmt == "csv":
        return to_wide_csv(t, n_resamples=n_resamples).encode("utf-8")
    page = to_html(t, baseline=base, n_resamples=n_resamples, alpha=alpha)
    return page.encode("utf-8") if fmt == "html" else html_to_pdf(page)
