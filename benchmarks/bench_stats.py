"""The metric suite, bootstrap, paired tests, ranking metrics and threshold curve on a MIMIC-III-full-sized set.

    python benchmarks/bench_stats.py

Prints figures and asserts nothing.
"""

from __future__ import annotations

import time

from cophe_core import read_labels
from cophe_core.breakdown.stats import bootstrap, paired_bootstrap, randomisation_test
from cophe_core.inputs.synthetic import generate_gold, generate_run, generate_scores
from cophe_core.metrics import evaluate_corpus
from cophe_core.ontology import icd9_ontology
from cophe_core.scoring.labels import encode
from cophe_core.scoring.scores import read_scores, score_run
from cophe_core.scoring.suite import suite


def timed(label: str, fn, repeat: int = 1):
    t0 = time.perf_counter()
    for _ in range(repeat):
        out = fn()
    print(f"{label:48} {(time.perf_counter() - t0) / repeat:8.3f} s")
    return out


def main() -> None:
    onto = icd9_ontology()
    gold = generate_gold(3372, seed=1, n_families=800, onto=onto)
    runs = {p: generate_run(gold, p, seed=i + 2, onto=onto) for i, p in enumerate(("siblings", "overcoder"))}
    scores = generate_scores(gold, seed=5, onto=onto)
    print(f"{gold.doc_id.nunique()} documents, {len(gold)} gold labels, {len(scores)} scored pairs")

    def raw(df, name):
        return read_labels(df.to_csv(index=False).encode(), name=name)

    corpus = encode(raw(gold, "gold.csv"), {k: raw(v, f"{k}.csv") for k, v in runs.items()}, onto)
    a, b = (evaluate_corpus(corpus, r) for r in runs)
    timed("suite (LB, EB, PROP-F, HF, ICM, ICM-Norm)", lambda: suite(evaluate_corpus(corpus, "siblings")))
    timed("bootstrap, 1,000 resamples, headline figures", lambda: bootstrap(a, n_resamples=1000))
    timed("bootstrap, 1,000 resamples, + suite", lambda: bootstrap(a, n_resamples=1000, with_suite=True))
    timed("paired bootstrap, 1,000 resamples", lambda: paired_bootstrap(a, b, n_resamples=1000))
    timed(
        "approximate randomisation, 1,000 permutations", lambda: randomisation_test(a, b, n_permutations=1000)
    )
    sc = read_scores(scores.to_csv(index=False).encode(), name="scores.csv")
    run = timed("align gold and scores", lambda: score_run(raw(gold, "gold.csv"), sc, onto))
    timed("P@k, R@k (5, 8, 15), micro and macro AUC", run.ranking)
    timed("threshold curve, 19 thresholds x 3 measures", run.curve)


if __name__ == "__main__":
    main()
