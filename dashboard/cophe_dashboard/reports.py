"""The comparison report: the Compare page as one HTML file, with the same direction (B − A), tests, intervals,
family table and slice, and what every number depends on (cophe version, code sets, documents, rule)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pandas as pd

from cophe_core import __version__ as cophe_version
from cophe_core.breakdown.compare import delta_subtree
from cophe_core.breakdown.comparison import FAMILY_ROWS, Comparison
from cophe_core.breakdown.stats import p_text
from cophe_core.output.plotting import delta_bar, tree_figure
from cophe_core.output.report import html_report
from cophe_dashboard import state
from cophe_dashboard.texts import chart_words, columns, figure_name, level, measure, term

REPORT_TREE_WIDTH = (
    560  # px of tiles the report's tree labels are wrapped for: an A4 page's, its colour bar aside
)
DASH = "–"  # an undefined number in a report: the baseline's own difference, an untested family


def comparison(
    ctx, names: list[str], baseline: str, a: str | None = None, b: str | None = None, *, resamples: int
):
    """The comparison the Compare page and the comparison report both show: its parts computed once per
    scored input set, slice and level and settings (:func:`state.memo`, under the keys the core names them by)."""
    return Comparison.of(
        {r: ctx.evaluation(r) for r in names},
        baseline=baseline,
        a=a,
        b=b,
        n_resamples=resamples,
        memo=lambda key, compute: state.memo(
            comparison_part, ctx.scoring, ctx.slice, ctx.max_level, key, compute
        ),
    )


def comparison_part(scoring, part, max_level, key: tuple, _compute: Callable[[], Any]) -> Any:
    """A part of a :class:`Comparison` of ``scoring``'s runs (restricted to the slice ``part``, up to
    ``max_level``), kept by :func:`state.memo` under the key the core names it by (``_compute`` makes it)."""
    return _compute()


def compute_families_ahead(ctx, cmp: Comparison, level: str) -> None:
    """Start the family table of ``level`` in the background, under the key :meth:`Comparison.families` reads."""
    key, compute = cmp.part("families", level)
    state.ahead(comparison_part, ctx.scoring, ctx.slice, ctx.max_level, key, compute)


def compare_pair(runs: list[str], state) -> tuple[str, str]:
    """Runs A and B as the Compare page has them (A the baseline and B the next run, until chosen there)."""
    a = state.get("cmp_a") or state.get("cmp_baseline") or runs[0]
    a = a if a in runs else runs[0]
    b = state.get("cmp_b")
    return a, b if b in runs and b != a else next(r for r in runs if r != a)


def readable(df: pd.DataFrame, onto, extra: dict | None = None) -> pd.DataFrame:
    """A table for a report: measures and levels by name, columns in words (``extra`` names others)."""
    out = df.copy()
    if "measure" in out:
        out["measure"] = out.measure.map(measure)
    if "level" in out:
        out["level"] = [level(onto, lv) for lv in out.level]
    return columns(out, {"errors": f"{term('fp')} + {term('fn')}", **(extra or {})})


def settings_lines(ctx, resamples: int) -> list[str]:
    """What every number of a report depends on: version, code sets, documents, levels, rule, slice."""
    onto = ctx.ontology
    rule = ctx.rule and (
        f"codes scoring at least {ctx.rule[1]}"
        if ctx.rule[0] == "threshold"
        else f"each document's top {ctx.rule[1]} codes"
    )
    return [
        f"cophe {cophe_version}. Code sets: "
        + "; ".join(f"{k} ({v})" for k, v in onto.code_sets.items())
        + ".",
        f"{ctx.n_documents:,} documents; levels up to "
        f"{level(onto, ctx.max_level)}." + (f" Runs given as scores are decided by {rule}." if rule else ""),
        ctx.slice_words,
        f"Intervals and tests: {resamples:,} bootstrap resamples of the documents, seed 0; 95% intervals.",
    ]


def number(v: float, signed: bool = False) -> str:
    """A figure to three decimals (a difference signed, with a true minus); undefined is a dash."""
    if pd.isna(v):
        return DASH
    return f"{v:+.3f}".replace("-", "−") if signed else f"{v:.3f}"


def p_cell(p: float) -> str:
    """A p-value in a table: ``< 0.001`` below it (kept on one line), never 0.000; a dash where nothing was
    tested."""
    return DASH if pd.isna(p) else p_text(p).removeprefix("p = ").removeprefix("p ").replace(" ", "\u00a0")


def interval(low: float, high: float, signed: bool = False) -> str:
    return DASH if pd.isna(low) or pd.isna(high) else f"{number(low, signed)} to {number(high, signed)}"


def runs_rows(cmp: Comparison, onto) -> pd.DataFrame:
    """The runs table for a report: value and difference each with its interval in one cell, p-values as text."""
    t = cmp.run_table
    return pd.DataFrame(
        {
            term("run"): t.run,
            "Figure": [figure_name(f, onto) for f in t.figure],
            "Value (95% interval)": [
                f"{number(v)} ({number(lo)}–{number(hi)})" for v, lo, hi in zip(t.value, t.low, t.high)
            ],
            "Best": ["★" if best else "" for best in t.best],
            f"Difference from {cmp.baseline} (95% interval)": [
                "baseline" if r == cmp.baseline else f"{number(d, True)} ({interval(lo, hi, True)})"
                for r, d, lo, hi in zip(t.run, t.delta, t.delta_low, t.delta_high)
            ],
            "p-value": [p_cell(p) for p in t.p_value],
            "p-value, Holm": [p_cell(p) for p in t.p_holm],
            "Verdict": [v or DASH for v in t.verdict],
            "Resampled": t.resampled,
        }
    )


def paired_rows(cmp: Comparison, onto) -> pd.DataFrame:
    """The paired tests of B − A for a report, one row per figure."""
    t = cmp.paired
    return pd.DataFrame(
        {
            "Figure": [figure_name(f, onto) for f in t.figure],
            cmp.a: [number(v) for v in t.a],
            cmp.b: [number(v) for v in t.b],
            f"Change ({cmp.b} − {cmp.a})": [number(v, True) for v in t.delta],
            "95% interval": [interval(lo, hi, True) for lo, hi in zip(t.low, t.high)],
            term("p_value"): [p_cell(p) for p in t.p_value],
            term("p_bootstrap"): [p_cell(p) for p in t.p_bootstrap],
        }
    )


def family_rows(families: pd.DataFrame, a: str, b: str) -> pd.DataFrame:
    """The first :data:`FAMILY_ROWS` families for a report: counts, F1, the change with its interval, and
    whether it is beyond chance in words."""
    t = families.head(FAMILY_ROWS)
    return pd.DataFrame(
        {
            term("code"): t.code,
            term("title"): t.title,
            term("gold"): t.gold,
            f"Extra · {a}": t.a_extra,
            f"Missed · {a}": t.a_missed,
            f"Extra · {b}": t.b_extra,
            f"Missed · {b}": t.b_missed,
            "Change in errors": [f"{v:+d}".replace("-", "−") for v in t.change_errors],
            f"F1 · {a}": [number(v) for v in t.a_f1],
            f"F1 · {b}": [number(v) for v in t.b_f1],
            f"Change in F1 ({b} − {a})": [number(v, True) for v in t.delta_f1],
            "95% interval": [interval(lo, hi, True) for lo, hi in zip(t.low, t.high)],
            "q-value": [p_cell(q) for q in t.q_value],
            "Beyond chance": [
                "no test" if pd.isna(q) else "yes" if f else "no" for q, f in zip(t.q_value, t.flagged)
            ],
        }
    )


def compare_report(ctx, cmp: Comparison, *, focus: int | None = None) -> str:
    """The Compare page as one HTML file: the tables of ``cmp``, the very object the page renders with the
    same settings (:func:`comparison`), so the same numbers."""
    onto = ctx.ontology
    a, b = cmp.a, cmp.b
    ea, eb = cmp.evals[a], cmp.evals[b]
    families = cmp.families()
    deltas = cmp.deltas
    names = {x: level(onto, x) for x in ("leaf", *onto.levels, "overall")}
    sentences = [v.describe(a, b, figure=figure_name(v.figure, onto)) for v in cmp.headline_verdicts]
    who = {"a": a, "b": b, "delta": f"{b} − {a}"}
    tree_words = {k: term(k) for k in ("gold", "predicted", "tp", "fp", "fn", "f1", "set_f1")}
    tested = families.q_value.notna().any() or families.empty
    flagged = (
        f"{int(families.flagged.sum()):,} of {len(families):,} families differ beyond chance (Benjamini–Hochberg, "
        "false discovery rate 5%)."
        if tested
        else f"{len(families):,} families; no test: an aggregate analysis's family counts are summed over the "
        "documents."
    )
    left_out = (
        [f"The first {len(cmp.runs)} runs are shown; {', '.join(cmp.left_out)} are left out."]
        if cmp.left_out
        else []
    )
    # a family focused on another page limits the tree alone; said before any number, not only beside the tree
    focus_line = (
        []
        if focus is None
        else [
            f"Family in focus on the tree: {onto.keys[focus]} {onto.titles[focus]}; only the last section "
            "(where the change happens) is limited to it, every table covers every family."
        ]
    )
    sections = [
        ("Settings", [*settings_lines(ctx, cmp.n_resamples), *focus_line]),
        (
            f"Every run against {cmp.baseline}",
            [
                "Value with its 95% interval; difference from the baseline (run − baseline) with its interval, the "
                "paired bootstrap's p-value, and that p-value corrected for comparing several runs (Holm). "
                "★ marks the best value of each figure.",
                *left_out,
                runs_rows(cmp, onto),
            ],
        ),
        (f"Is the difference real? {b} − {a}", [*sentences, paired_rows(cmp, onto)]),
        (
            f"Change by level: {b} − {a}",
            [
                delta_bar(deltas, "f1", a, b, levels=names, words=chart_words()),
                readable(
                    deltas,
                    onto,
                    {
                        f"{side}_{stat}": f"{term(stat)} · {who[side]}"
                        for side in ("a", "b", "delta")
                        for stat in ("precision", "recall", "f1")
                    },
                ),
            ],
        ),
        (
            f"Which families changed, at {level(onto, cmp.family_level)}",
            [
                f"{flagged} Change in errors: {b}'s extra plus missed codes minus {a}'s.",
                family_rows(families, a, b),
            ],
        ),
        (
            "Where the change happens",
            [
                "Every code family."
                if focus is None
                else f"Within {onto.keys[focus]} {onto.titles[focus]}, the family focused in the code-family tree.",
                tree_figure(
                    delta_subtree(ea, eb, focus),
                    "delta_f1",
                    prefix="b_",
                    words=tree_words,
                    runs=(a, b),
                    width=REPORT_TREE_WIDTH,
                ),
            ],
        ),
    ]
    return html_report(f"cophe comparison · {b} − {a}", sections)
