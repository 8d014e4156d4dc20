"""Comparing runs on a MIMIC-III-full-sized set: five runs, the N-run table, a slice, the family table.

    python benchmarks/bench_compare.py

3,372 synthetic documents (about 15 ICD-9 codes each) and five runs from :mod:`cophe_core.inputs.synthetic`. Prints
the median of three timings of each step with the targets of the issue (reported, not asserted):

- the runs × figures table with 1,000 resamples, micro and per-code averages (target ≤ 3 s);
- choosing a slice: restricting the five evaluations to the rare codes, or to a quarter of the documents,
  and computing what the levels page shows (target ≤ 1 s);
- the per-family change table of two runs at the category level, 1,000 resamples (target ≤ 1 s).
"""

from __future__ import annotations

import statistics
import time

from cophe_core import read_labels
from cophe_core.breakdown.families import family_changes
from cophe_core.breakdown.slices import code_frequency, code_frequency_slices, gold_count_slices, restrict
from cophe_core.breakdown.stats import compare_runs
from cophe_core.inputs.synthetic import generate_gold, generate_run
from cophe_core.metrics import evaluate_corpus
from cophe_core.ontology import icd9_ontology
from cophe_core.scoring.labels import encode

PROFILES = ("siblings", "overcoder", "conservative", "siblings", "overcoder")
REPEATS = 3


def timed(label: str, fn, target: float | None = None):
    times = []
    for _ in range(REPEATS):
        t0 = time.perf_counter()
        out = fn()
        times.append(time.perf_counter() - t0)
    med = statistics.median(times)
    goal = f"  (target ≤ {target:g} s)" if target else ""
    print(f"{label:62} {med:7.3f} s  [min {min(times):.3f}, max {max(times):.3f}]{goal}")
    return out


def main() -> None:
    onto = icd9_ontology()
    gold = generate_gold(3372, seed=1, n_families=800, onto=onto)
    runs = {f"{p}-{i}": generate_run(gold, p, seed=i + 2, onto=onto) for i, p in enumerate(PROFILES)}

    def raw(df, name):
        return read_labels(df.to_csv(index=False).encode(), name=name)

    corpus = encode(raw(gold, "gold.csv"), {k: raw(v, f"{k}.csv") for k, v in runs.items()}, onto)
    evals = {r: evaluate_corpus(corpus, r) for r in runs}
    for ev in evals.values():
        ev.levels_table  # noqa: B018 - the scoring is cached before the timings, as in the dashboard
    print(f"{len(corpus.docs):,} documents, {corpus.gold.nnz:,} gold codes, {len(runs)} runs")
    timed(
        "N-run table, 1,000 resamples (micro + per-code averages)",
        lambda: compare_runs(evals, n_resamples=1000),
        3.0,
    )
    timed(
        "N-run table, 1,000 resamples (micro only)",
        lambda: compare_runs(evals, n_resamples=1000, macro=False),
    )
    used = corpus.gold.getnnz(axis=0) > 0
    for m in corpus.runs.values():
        used |= m.getnnz(axis=0) > 0
    rare = code_frequency_slices(code_frequency(corpus.gold), (10, 100), in_play=used)[0]
    quarter = gold_count_slices(corpus.gold)[0]
    for s in (rare, quarter):
        timed(
            f"slice {s.name[:40]!r}: 5 runs restricted + levels tables",
            lambda s=s: [restrict(ev, s).levels_table for ev in evals.values()],
            1.0,
        )
    a, b = list(evals.values())[:2]
    timed("family changes at the category level, 1,000 resamples", lambda: family_changes(a, b, "e0"), 1.0)
    timed("family changes at the 4th-digit level, 1,000 resamples", lambda: family_changes(a, b, "e1"))


if __name__ == "__main__":
    main()
