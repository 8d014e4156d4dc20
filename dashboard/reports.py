"""The comparison report: the Compare page as one HTML file, with the same direction (B − A), tests, intervals,
family table and slice, and what every number depends on (cophe version, code sets, documents, rule)."""

from __future__ import annotations

import pandas as pd
import state
from texts import chart_words, columns, figure_name, level, measure, term

from cophe_core import __version__ as cophe_version
from cophe_core.compare import delta_subtree, level_deltas
from cophe_core.families import family_changes
from cophe_core.ontology import family_level
from cophe_core.plotting import delta_bar, tree_figure
from cophe_core.report import html_report
from cophe_core.stats import HEADLINES, Verdict, compare_runs, paired_significance

FAMILY_ROWS = 50
MAX_RUNS = 10


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


def compare_report(ctx, evals: dict, a: str, b: str, *, resamples: int, focus: int | None = None) -> str:
    """The Compare page as one HTML file (computed with the page's cache keys, so what the page showed)."""
    onto = ctx.ontology
    ea, eb = evals[a], evals[b]
    shown = list(evals)[:MAX_RUNS]
    # the page's own calls: found in the one cache when the page showed them
    table = state.memo(compare_runs, {r: evals[r] for r in shown}, baseline=a, n_resamples=resamples, seed=0)
    paired = state.memo(paired_significance, ea, eb, n_resamples=resamples, seed=0)
    fam = family_level(onto)
    lv = fam if fam in ea.levels else ea.levels[min(1, len(ea.levels) - 1)]
    families = state.memo(family_changes, ea, eb, lv, n_resamples=resamples, seed=0)
    deltas = level_deltas(ea, eb)
    names = {x: level(onto, x) for x in ("leaf", *onto.levels, "overall")}
    by_figure = {v.figure: v for v in Verdict.all_of(paired)}
    sentences = [by_figure[f].describe(a, b, figure=figure_name(f, onto)) for f in HEADLINES]
    runs_rows = table.assign(figure=[figure_name(f, onto) for f in table.figure])
    fam = families.head(FAMILY_ROWS)[
        [
            "code",
            "title",
            "gold",
            "a_extra",
            "a_missed",
            "b_extra",
            "b_missed",
            "change_errors",
            "a_f1",
            "b_f1",
            "delta_f1",
            "low",
            "high",
            "q_value",
            "flagged",
        ]
    ]
    who = {"a": a, "b": b, "delta": f"{b} − {a}"}
    tree_words = {k: term(k) for k in ("gold", "predicted", "tp", "fp", "fn", "f1", "set_f1")}
    sections = [
        ("Settings", settings_lines(ctx, resamples)),
        (
            f"Every run against {a}",
            [
                "Value with its 95% interval; difference from the baseline (run − baseline) with its interval, the "
                "paired bootstrap's p-value, and that p-value corrected for comparing several runs (Holm).",
                readable(runs_rows, onto, {"p_holm": "p-value, Holm"}),
            ],
        ),
        (f"Is the difference real? {b} − {a}", [*sentences, readable(paired, onto)]),
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
            f"Which families changed, at {level(onto, lv)}",
            [
                f"{int(families.flagged.sum()):,} of {len(families):,} families differ beyond chance (Benjamini–Hochberg, "
                f"false discovery rate 5%). Change in errors: {b}'s extra plus missed codes minus {a}'s.",
                readable(
                    fam,
                    onto,
                    {
                        "a_extra": f"Extra · {a}",
                        "a_missed": f"Missed · {a}",
                        "b_extra": f"Extra · {b}",
                        "b_missed": f"Missed · {b}",
                        "a_f1": f"F1 · {a}",
                        "b_f1": f"F1 · {b}",
                        "delta_f1": f"Change in F1 ({b} − {a})",
                        "flagged": "Beyond chance",
                    },
                ),
            ],
        ),
        (
            "Where the change happens",
            [
                tree_figure(
                    delta_subtree(ea, eb, focus), "delta_f1", prefix="b_", words=tree_words, runs=(a, b)
                )
            ],
        ),
    ]
    return html_report(f"cophe comparison · {b} − {a}", sections)
