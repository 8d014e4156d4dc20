"""Results that leave the app: paper tables (cophe_core.output.paper_tables) and figures as SVG, PNG and PDF
(cophe_core.output.figures_export), and their commands ``cophe report`` and ``cophe figure``."""

from __future__ import annotations

import re
import struct
import xml.etree.ElementTree as ET

import numpy as np
import pytest

from cophe_core import score_files
from cophe_core.breakdown.stats import compare_runs
from cophe_core.cli import main
from cophe_core.output.figures_export import find_browser, paper_figure, publication, render
from cophe_core.output.paper_tables import (
    paper_table,
    tex_escape,
    to_latex,
    to_markdown,
    to_wide_csv,
    write_table,
)
from tests.conftest import long_csv

GOLD = [(str(d), c) for d in range(40) for c in ("401.9", "428.0", "250.00")]
RUNS = {
    "base": GOLD[:90],  # every code of the first 30 documents, none of the last 10
    "same": GOLD[:90],  # the baseline again
    "run_a&b": [(str(d), c) for d in range(40) for c in ("401.1", "428.0", "250.01")],  # wrong in the family
}
needs_browser = pytest.mark.skipif(find_browser() is None, reason="no Chrome or Chromium to draw figures")


@pytest.fixture(scope="module")
def evals():
    s = score_files(long_csv(GOLD), {r: long_csv(p) for r, p in RUNS.items()}, ontology="icd9")
    return {r: s.evaluation(r, max_level="e0") for r in RUNS}


@pytest.fixture(scope="module")
def table(evals):
    return paper_table(evals, baseline="base", statistics=("precision", "recall", "f1"), n_resamples=300)


def test_values_are_the_evaluations_own_rounded_to_three_decimals(evals, table):
    # per run: flat P, R, F1; for each of set-based and CoPHE, P, R and F1 at each level and over all levels
    assert len(table) == 3 * (3 + 2 * 3 * (1 + len(evals["base"].levels)))
    for r in table.itertuples():
        own = getattr(evals[r.run].score(r.measure, r.level), r.statistic)
        assert r.value == round(own, 3), r
        assert r.low <= r.value + 1e-9 and r.value <= r.high + 1e-9
        assert r.value == round(r.value, 3) and r.low == round(r.low, 3)
    # by hand: "base" finds 90 of the 120 gold codes exactly, writing nothing wrong
    flat = table[(table.run == "base") & (table.measure == "flat")].set_index("statistic")
    assert flat.loc["recall", "value"] == 0.75 and flat.loc["precision", "value"] == 1.0
    assert flat.loc["f1", "value"] == round(2 * 0.75 / 1.75, 3)


def test_marks_follow_the_holm_adjusted_paired_test_and_bold_the_best(evals, table):
    full = compare_runs(evals, baseline="base", n_resamples=300, macro=False).set_index(["run", "figure"])
    # the same run as the baseline never differs; the baseline carries no mark
    assert not table[table.run.isin(["base", "same"])].marked.any()
    # the run with one exact code of three differs on flat F1 (1/3 against 0.857): Holm's p marks it
    flat_f1 = table[(table.measure == "flat") & (table.statistic == "f1")].set_index("run")
    assert flat_f1.loc["run_a&b", "value"] == 0.333 and flat_f1.loc["run_a&b", "marked"]
    assert flat_f1.loc["run_a&b", "p_holm"] == full.loc[("run_a&b", "flat f1"), "p_holm"]
    assert list(flat_f1.best) == [True, True, False]  # a tie is bold twice
    # at the category, "run_a&b" has every family right: the best there
    cat = table[(table.measure == "set_based") & (table.level == "e0") & (table.statistic == "f1")]
    assert cat.set_index("run").best.to_dict() == {"base": False, "same": False, "run_a&b": True}


def test_latex_is_booktabs_escaped_with_one_row_per_measure_and_level(table):
    f1 = table[table.statistic == "f1"]
    tex = to_latex(f1, baseline="base", n_resamples=300)
    assert all(k in tex for k in (r"\toprule", r"\midrule", r"\bottomrule", r"\begin{tabular}{llccc}"))
    assert r"run\_a\&b" in tex and "run_a&b" not in tex
    body = tex.split(r"\midrule", 1)[1].split(r"\bottomrule")[0]
    rows = [ln for ln in body.splitlines() if ln.endswith(r"\\")]
    assert len(rows) == f1.groupby(["measure", "level"]).ngroups
    assert tex.count(r"\textbf{") == int(f1.best.sum()) and tex.count("$^{*}$") == int(f1.marked.sum())
    assert not re.search(r"\d\.\d{4}", tex)  # 3 decimals, never more
    assert "Category (3 digits)" in tex and " e0 " not in tex


def test_markdown_and_wide_csv(table):
    f1 = table[table.statistic == "f1"]
    md = to_markdown(f1, baseline="base", n_resamples=300)
    lines = [ln for ln in md.splitlines() if ln.startswith("|")]
    assert len(lines) == 2 + f1.groupby(["measure", "level"]).ngroups
    assert md.count("**") == 2 * int(f1.best.sum()) and r"run\_a&b" in md
    csv = to_wide_csv(table)
    rows = csv.strip().splitlines()
    assert len(rows) == 1 + 3  # a row per run
    head = rows[0]
    assert "CoPHE F1, Category (3 digits)" in head and "e0" not in head
    assert not re.search(r"\d\.\d{4}", csv)


def test_tex_escape_leaves_no_special_character_bare():
    assert tex_escape("a_b%c$d#e{f}g~h^i\\j&<>") == (
        r"a\_b\%c\$d\#e\{f\}g\textasciitilde{}h\textasciicircum{}i\textbackslash{}j\&\textless{}\textgreater{}"
    )


def test_publication_widths_and_fonts(evals):
    one, two = (paper_figure("levels", evals, width=w) for w in ("one-column", "two-column"))
    assert (one.layout.width, two.layout.width) == (336, 672)  # 3.5 in and 7 in at 96 px to the inch
    assert one.layout.font.size == pytest.approx(8 * 96 / 72) and two.layout.font.size == pytest.approx(12)
    bars = [t for t in one.data if t.type == "bar"]
    assert bars and all(t.textfont.size == one.layout.font.size for t in bars)  # no screen-sized text left
    assert len({t.xaxis for t in one.data}) == 3  # a panel per run (two to a row in one column, not four)
    with pytest.raises(ValueError, match="one-column"):
        publication(one, "narrow")


@pytest.mark.parametrize("kind", ["levels", "compare", "tree", "families"])
def test_every_kind_is_drawn(evals, kind):
    fig = paper_figure(kind, evals, width="two-column", baseline="base")
    assert fig.layout.width == 672 and len(fig.data) > 0


def _png_size(data: bytes) -> tuple[int, int]:
    assert data[:8] == b"\x89PNG\r\n\x1a\n"
    return struct.unpack(">II", data[16:24])


@needs_browser
def test_exported_files_are_valid_at_the_declared_widths(evals):
    fig = paper_figure("levels", evals, width="one-column")
    svg = render(fig, "svg")
    root = ET.fromstring(svg)
    assert root.tag.endswith("svg") and float(root.get("width")) == 336
    png = render(fig, "png")
    wide, tall = _png_size(png)
    assert (
        wide == 1050 and abs(tall - fig.layout.height * 300 / 96) < 1
    )  # 3.5 in at 300 dpi (a part pixel cut)
    pdf = render(fig, "pdf")
    assert pdf[:5] == b"%PDF-"
    box = re.search(rb"/MediaBox\s*\[\s*0 0 ([\d.]+) ([\d.]+)", pdf)
    assert box and float(box.group(1)) == pytest.approx(3.5 * 72, abs=1)  # 3.5 in, in points


@needs_browser
def test_cli_figure_and_report(tmp_path, capsys):
    gold, a, b = tmp_path / "gold.csv", tmp_path / "a.csv", tmp_path / "b.csv"
    gold.write_bytes(long_csv(GOLD))
    a.write_bytes(long_csv(RUNS["base"]))
    b.write_bytes(long_csv(RUNS["run_a&b"]))
    runs = ["--gold", str(gold), "--run", f"base={a}", "--run", f"other={b}"]
    out = tmp_path / "tree.svg"
    assert main(["figure", "tree", *runs, "--out", str(out)]) == 0
    assert ET.fromstring(out.read_bytes()).tag.endswith("svg")
    pdf = tmp_path / "levels.pdf"
    assert main(["figure", "levels", *runs, "--width", "two-column", "--out", str(pdf)]) == 0
    assert pdf.read_bytes()[:5] == b"%PDF-"
    tex = tmp_path / "t.tex"
    assert main(["report", *runs, "--bootstrap", "200", "--out", str(tex)]) == 0
    assert r"\toprule" in tex.read_text() and "other" in tex.read_text()
    report_pdf = tmp_path / "t.pdf"
    assert main(["report", *runs, "--bootstrap", "200", "--out", str(report_pdf)]) == 0
    assert report_pdf.read_bytes()[:5] == b"%PDF-"
    box = re.search(rb"/MediaBox\s*\[\s*0 0 ([\d.]+) ([\d.]+)", report_pdf.read_bytes())
    assert box and (float(box.group(1)), float(box.group(2))) == pytest.approx((595.3, 841.9), abs=1)  # A4


def test_cli_refuses_an_unknown_format_or_baseline(tmp_path, capsys):
    gold, a = tmp_path / "gold.csv", tmp_path / "a.csv"
    gold.write_bytes(long_csv(GOLD))
    a.write_bytes(long_csv(RUNS["base"]))
    runs = ["--gold", str(gold), "--run", f"base={a}"]
    assert main(["report", *runs, "--out", str(tmp_path / "t.docx")]) == 2
    assert ".tex" in capsys.readouterr().err
    assert main(["figure", "levels", *runs, "--out", str(tmp_path / "f.jpg")]) == 2
    assert ".svg" in capsys.readouterr().err
    assert main(["report", *runs, "--baseline", "nope", "--out", str(tmp_path / "t.md")]) == 2
    assert "--baseline nope" in capsys.readouterr().err
    assert main(["figure", "compare", *runs, "--out", str(tmp_path / "f.svg")]) == 2
    assert "second --run" in capsys.readouterr().err


def test_write_table_csv_is_the_wide_table(evals):
    data = write_table(evals, "csv", baseline="base", n_resamples=200).decode()
    t = paper_table(evals, baseline="base", n_resamples=200)
    assert data == to_wide_csv(t, n_resamples=200)
    assert np.isnan(t[t.run == "base"].p_holm).all()


def test_with_several_statistics_every_row_names_its_own(table):
    """Each row's label is shown whenever it changes: a measure's P, R and F1 rows (and the P, R and F1 of
    "all levels together") each say which they are, in every format, as the Markdown table does."""
    from cophe_core.output.paper_tables import to_html

    rows = list(dict.fromkeys(zip(table.measure, table.level, table.statistic)))
    tex = to_latex(table, baseline="base", n_resamples=300)
    body = tex.split(r"\midrule", 1)[1].split(r"\bottomrule")[0]
    tex_labels = [ln.split(" & ")[0] for ln in body.splitlines() if ln.endswith(r"\\")]
    page = to_html(table, baseline="base", n_resamples=300)
    html_labels = re.findall(r"<tr[^>]*><td>([^<]*)</td>", page)
    for labels in (tex_labels, html_labels):
        assert len(labels) == len(rows)
        named, last = [], ""
        for label in labels:  # a blank label repeats the one above it
            last = label or last
            named.append(last)
        stat = {"precision": " P", "recall": " R", "f1": " F1"}
        assert [n.endswith(stat[s]) for n, (_, _, s) in zip(named, rows)] == [True] * len(rows)


def test_the_caption_names_the_statistics_and_the_table_has_a_label(table):
    f1 = table[table.statistic == "f1"]
    tex = to_latex(f1, baseline="base", n_resamples=300)
    assert r"\caption{Micro-averaged F1, 3 decimals" in tex and r"\label{tab:cophe}" in tex
    every = to_latex(table, baseline="base", n_resamples=300)
    assert r"\caption{Micro-averaged precision, recall and F1, 3 decimals" in every


def test_the_levels_figure_carries_each_f1s_interval(evals):
    """A paper's figure shows its uncertainty: each F1 bar's arms reach the ends of its 95% bootstrap interval
    (the first page's chart's), and none are drawn without resamples."""
    from cophe_core.breakdown.stats import bootstrap

    fig = paper_figure("levels", evals, width="two-column", n_resamples=200)
    base = bootstrap(evals["base"], n_resamples=200).set_index("figure")
    overall = next(t for t in fig.data if t.name.endswith("(CoPHE)") and t.xaxis == "x")
    i = list(overall.y).index("All levels together")
    x = float(overall.x[i])
    lo, hi = base.at["cophe overall f1", "low"], base.at["cophe overall f1", "high"]
    assert lo < hi  # a real interval: the base run misses the last ten documents' codes
    assert (x - overall.error_x.arrayminus[i], x + overall.error_x.array[i]) == pytest.approx((lo, hi))
    bare = paper_figure("levels", evals, width="two-column", n_resamples=0)
    assert all(t.error_x.array is None for t in bare.data)


def test_the_compare_figure_carries_each_f1_differences_interval(evals):
    """Each bar of the compare figure (a run's F1 minus the baseline's) reaches to the ends of its 95% paired
    bootstrap interval, both runs on the same resamples (as cophe compare tests it); none without resamples."""
    from cophe_core.breakdown.stats import paired_bootstrap

    fig = paper_figure("compare", evals, width="two-column", baseline="base", n_resamples=200)
    ci = paired_bootstrap(evals["base"], evals["same"], n_resamples=200).set_index("figure")
    overall = next(t for t in fig.data if t.name.endswith("(CoPHE)"))
    i = list(overall.y).index("All levels together")
    x = float(overall.x[i])
    # "same" is "base" again: a difference of 0 with an interval of [0, 0] on every resample
    assert x == 0.0 and (ci.at["cophe overall f1", "low"], ci.at["cophe overall f1", "high"]) == (0.0, 0.0)
    assert overall.error_x.array is not None and overall.error_x.array[i] == 0.0
    wrong = paper_figure("compare", {"base": evals["base"], "w": evals["run_a&b"]}, n_resamples=200)
    ci = paired_bootstrap(evals["base"], evals["run_a&b"], n_resamples=200).set_index("figure")
    for trace in wrong.data:
        measure = {"Flat": "flat", "Set-based": "set_based", "CoPHE": "cophe"}[
            trace.name.split("(")[-1].rstrip(")")
        ]
        for y, x, plus, minus in zip(trace.y, trace.x, trace.error_x.array, trace.error_x.arrayminus):
            level = {"Codes as given": "leaf", "All levels together": "overall"}.get(y.replace("<br>", " "))
            name = "flat f1" if measure == "flat" else f"{measure} {level} f1"
            if level is None:
                continue  # a level named by the ontology: the two named rows suffice
            assert (x - minus, x + plus) == pytest.approx((ci.at[name, "low"], ci.at[name, "high"]))
            assert ci.at[name, "low"] < ci.at[name, "high"]  # a real interval: the runs differ
    lo, hi = wrong.layout.xaxis.range
    assert lo <= ci.low.min() and hi >= 0  # the axis holds every interval
    bare = paper_figure("compare", evals, baseline="base", n_resamples=0)
    assert all(t.error_x.array is None for t in bare.data)


def test_precision_and_recall_at_every_level_with_intervals_and_the_best_in_bold(evals, table):
    """P and R are given at each level as F1 is: each the evaluation's own (cross-checked above), with its 95%
    interval and the best run of its row in bold; asking for them leaves every F1 figure as it was."""
    at_e0 = table[(table.measure == "cophe") & (table.level == "e0")]
    assert sorted(set(at_e0.statistic)) == ["f1", "precision", "recall"]
    # by hand: "base" writes the 90 codes of the first 30 documents, all right: at the category, P 1, R 0.75
    base = at_e0[at_e0.run == "base"].set_index("statistic").value
    assert (base["precision"], base["recall"]) == (1.0, 0.75)
    assert (at_e0.low <= at_e0.value).all() and (at_e0.value <= at_e0.high).all() and at_e0.low.notna().all()
    recall = at_e0[at_e0.statistic == "recall"].set_index("run")
    # "run_a&b" has every family of every document right at the category: recall 1, the best, bold
    assert recall.value.to_dict() == {"base": 0.75, "same": 0.75, "run_a&b": 1.0}
    assert recall.best.to_dict() == {"base": False, "same": False, "run_a&b": True}
    tex = to_latex(table, baseline="base", n_resamples=300)
    assert tex.count("CoPHE R ") == 1 + len(evals["base"].levels) and r"\textbf{1.000}" in tex
    md = to_markdown(table, baseline="base", n_resamples=300)
    # a proportion of 30 of 40 documents: about 0.75 ± 2 · 0.068, as the bootstrap gives; marked, bold
    lines = [ln for ln in md.splitlines() if ln.startswith("| CoPHE R | Category")]
    assert lines == [
        "| CoPHE R | Category (3 digits) | 0.750 [0.600, 0.888] | 0.750 [0.600, 0.888] | **1.000**\\* [1.000, 1.000] |"
    ]
    f1 = paper_table(evals, baseline="base", n_resamples=300)
    both = table[table.statistic == "f1"].reset_index(drop=True)
    assert both.equals(f1)  # the F1 rows, intervals and p-values are those of the table of F1 alone


def test_the_wide_csv_never_writes_a_p_value_of_zero(evals):
    """A bootstrap p-value is never 0: below what the resamples resolve, the CSV writes that bound as a number
    (1/(n + 1) times Holm's factor, at least 0.001) and "< bound" in a text column, as papers quote it."""
    import io

    import pandas as pd

    from cophe_core.output.paper_tables import p_floor

    t = paper_table(evals, baseline="base", n_resamples=1000)
    other = t[(t.run == "run_a&b") & (t.measure == "flat")]
    assert other.p_holm.iloc[0] == 0.0  # no resample as far from 0: the test's own value is 0
    w = pd.read_csv(io.StringIO(to_wide_csv(t, n_resamples=1000))).set_index("run")
    p = w["Flat F1, Codes as given, p vs baseline (Holm)"]
    said = w["Flat F1, Codes as given, p vs baseline (Holm), as text"]
    assert p_floor(1000, compared=2) == 0.002  # two runs against the baseline: Holm doubles the smallest
    assert p["run_a&b"] == 0.002 and said["run_a&b"] == "< 0.002"
    assert p["same"] == 1.0 and said["same"] == "1.000"
    assert np.isnan(p["base"]) and pd.isna(said["base"])  # the baseline has no test
    numbers = w[[c for c in w.columns if c.endswith("p vs baseline (Holm)")]]
    assert numbers.dtypes.map(lambda d: d.kind == "f").all()  # numeric columns, for a spreadsheet
    assert (numbers.stack().dropna() > 0).all()
    one = paper_table({r: evals[r] for r in ("base", "run_a&b")}, baseline="base", n_resamples=200)
    w = pd.read_csv(
        io.StringIO(write_table({r: evals[r] for r in ("base", "run_a&b")}, "csv", n_resamples=200).decode())
    )
    assert one.p_holm.min() == 0.0
    assert (
        w["Flat F1, Codes as given, p vs baseline (Holm), as text"].iloc[1] == "< 0.005"
    )  # 1/201, rounded up


def test_cli_takes_the_statistics_comma_separated(tmp_path, capsys):
    gold, a = tmp_path / "gold.csv", tmp_path / "a.csv"
    gold.write_bytes(long_csv(GOLD))
    a.write_bytes(long_csv(RUNS["base"]))
    md = tmp_path / "t.md"
    args = ["report", "--gold", str(gold), "--run", f"base={a}", "--bootstrap", "50", "--out", str(md)]
    assert main([*args, "--statistic", "f1,precision,recall"]) == 0
    assert "| CoPHE P | Category (3 digits) |" in md.read_text()
    with pytest.raises(SystemExit):
        main([*args, "--statistic", "f1,accuracy"])
    assert "accuracy: give f1, precision or recall" in capsys.readouterr().err


def test_the_compare_figure_writes_no_value_an_interval_would_cross(evals):
    """With intervals, the difference bars carry no values (the arms ran through them); without, they do."""
    both = {"base": evals["base"], "w": evals["run_a&b"]}
    assert not any(t.texttemplate for t in paper_figure("compare", both, n_resamples=200).data)
    assert all(t.texttemplate for t in paper_figure("compare", both, n_resamples=0).data)
