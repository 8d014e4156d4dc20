"""Accumulator benchmark: scoring in a training loop, batch by batch, against one call on all the rows.

    python -m benchmarks.bench_accumulate [--pairs 41]

The inputs are a MIMIC-III-full-sized test set: 3,372 documents × 8,929 labels, dense float32 0/1 matrices
as a model's thresholded output is, the same arrays for every way timed. Issue 27's two figures:

1. **Batches of 16 against one shot.** One shot: ``reset()``, one ``update`` with all 3,372 rows,
   ``compute().levels_table``. Batched: ``reset()``, 211 ``update`` calls of 16 rows (the last of 12),
   ``compute().levels_table``. Both do the same counting of the same cells; the batched way adds what each
   update costs by itself. The two are timed in interleaved pairs (one shot, then batched), after a warm-up
   pair, so that a burst of load elsewhere on the machine touches both alike; the figure is the median over
   the pairs of batched ÷ one shot − 1, with its quartiles. CPU time of this process (``process_time``) is
   the headline, since it does not count the time the process waits for a core on a shared machine; the
   wall-clock figure is printed beside it. The functional API on all the rows (``cophe_score``, which also
   places the labels in the ontology on each call) is timed the same way, for reference.
2. **One update of 64 documents × 8,929 labels** (dense), over 400 updates of consecutive windows: the
   median, and the mean, which includes the count of the buffered rows every ``chunk_rows`` documents
   (4,096). The same for dense float32 scores under ``threshold=0.5`` (a model's sigmoid output, non-zero in
   every cell).

The machine's load average (1 minute) and core count are printed before and after. Prints figures and
asserts nothing.
"""

from __future__ import annotations

import argparse
import gc
import os
import statistics
import time
from collections.abc import Callable
from typing import TYPE_CHECKING

import numpy as np
import pandas as pd

if TYPE_CHECKING:
    from cophe_core import Accumulator

N_DOCS, N_LABELS, BATCH, UPDATE_BATCH, N_UPDATES = 3372, 8929, 16, 64, 400


def mimic_sized() -> tuple[list[str], np.ndarray, np.ndarray]:
    """Synthetic gold codes and a ``siblings`` run as dense float32 documents × labels matrices, on 8,929
    labels (MIMIC-III full's label set)."""
    from cophe_core.inputs.synthetic import generate_gold, generate_run
    from cophe_core.ontology import load_ontology

    onto = load_ontology("icd9")
    gold = generate_gold(N_DOCS, seed=1, n_families=800, codes_per_doc=15.5, onto=onto)
    pred = generate_run(gold, "siblings", seed=2, onto=onto)
    # a model's fixed label set: the 8,929 codes most frequent in the gold standard and the run (the
    # synthetic sets use a few more codes than MIMIC-III full); the others are outside it, as in training
    frequency = pd.concat([gold.code, pred.code]).value_counts(sort=False).sort_index(kind="stable")
    labels = frequency.sort_values(ascending=False, kind="stable").index[:N_LABELS].astype(str).tolist()
    gold, pred = gold[gold.code.isin(labels)], pred[pred.code.isin(labels)]
    column = {c: i for i, c in enumerate(labels)}
    docs = {d: i for i, d in enumerate(sorted(set(gold.doc_id)))}

    def dense(frame: pd.DataFrame) -> np.ndarray:
        m = np.zeros((N_DOCS, len(labels)), dtype=np.float32)
        m[frame.doc_id.map(docs).to_numpy(), frame.code.map(column).to_numpy()] = 1
        return m

    return labels, dense(gold), dense(pred)


def model_scores(y_pred: np.ndarray, seed: int = 3) -> np.ndarray:
    """Scores a model could have given: below 0.5 everywhere but on the predicted codes, at 0.5 or above
    there (so that ``threshold=0.5`` predicts ``y_pred``)."""
    rng = np.random.default_rng(seed)
    low = rng.random(y_pred.shape, dtype=np.float32) * np.float32(0.49)
    return np.where(y_pred == 1, np.float32(0.5) + low, low)


def load() -> str:
    return f"load average {os.getloadavg()[0]:.2f} on {os.cpu_count()} cores"


def timed(f: Callable[[], object]) -> tuple[float, float]:
    """One run of ``f()``: its CPU time and its wall time, in seconds."""
    cpu, wall = time.process_time(), time.perf_counter()
    f()
    return time.process_time() - cpu, time.perf_counter() - wall


def quartiles(x: list[float]) -> tuple[float, float, float]:
    q1, q2, q3 = np.percentile(x, [25, 50, 75])
    return float(q1), float(q2), float(q3)


def versus(name: str, base: list[float], other: list[float]) -> str:
    """``other`` against ``base``, pair by pair: the median ratio − 1 and its quartiles, in %."""
    q1, q2, q3 = quartiles([(o / b - 1) * 100 for b, o in zip(base, other)])
    return (
        f"{name}: one shot {statistics.median(base) * 1e3:.1f} ms, batches of {BATCH} "
        f"{statistics.median(other) * 1e3:.1f} ms: {q2:+.1f} % (quartiles {q1:+.1f} to {q3:+.1f} %)"
    )


def update_times(acc: Accumulator, y_true: np.ndarray, y_pred: np.ndarray) -> str:
    """Median and mean of ``N_UPDATES`` updates of ``UPDATE_BATCH`` consecutive rows each."""
    acc.reset()
    times = []
    for i in range(N_UPDATES):
        lo = (i * UPDATE_BATCH) % (N_DOCS - UPDATE_BATCH)
        a, b = y_true[lo : lo + UPDATE_BATCH], y_pred[lo : lo + UPDATE_BATCH]
        t = time.perf_counter()
        acc.update(a, b)
        times.append(time.perf_counter() - t)
    return f"median {statistics.median(times) * 1e3:.2f} ms, mean {statistics.mean(times) * 1e3:.2f} ms"


def main() -> None:
    from cophe_core import Accumulator
    from cophe_core.metrics import cophe_score

    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--pairs", type=int, default=41, help="interleaved (one shot, batched) pairs")
    pairs = parser.parse_args().pairs

    labels, y_true, y_pred = mimic_sized()
    print(
        f"{load()}; {N_DOCS:,} documents × {len(labels):,} labels (dense float32), "
        f"{int(y_true.sum()):,} gold and {int(y_pred.sum()):,} predicted codes"
    )
    t = time.perf_counter()
    acc = Accumulator(labels, "icd9")
    print(f"Accumulator(labels=…, ontology='icd9'): {time.perf_counter() - t:.3f} s (once, before the loop)")

    def one_shot() -> None:
        acc.reset()
        acc.update(y_true, y_pred)
        _ = acc.compute().levels_table

    def batched() -> None:
        acc.reset()
        for lo in range(0, N_DOCS, BATCH):
            acc.update(y_true[lo : lo + BATCH], y_pred[lo : lo + BATCH])
        _ = acc.compute().levels_table

    def functional() -> None:
        cophe_score(y_true, y_pred, labels=labels, ontology=acc.ontology)

    for f in (one_shot, batched, functional):  # warm-up: caches, lazy imports, the allocator's pools
        f()
    gc.collect()
    runs: dict[str, list[tuple[float, float]]] = {"one": [], "batched": [], "functional": []}
    for i in range(pairs):
        runs["one"].append(timed(one_shot))
        runs["batched"].append(timed(batched))
        if i % 4 == 0:  # the slow reference, a quarter as often
            runs["functional"].append(timed(functional))
    print(f"\n1. batches of {BATCH} against one shot, median of {pairs} interleaved pairs")
    for k, clock in enumerate(("CPU time", "wall time")):
        print("  " + versus(clock, [r[k] for r in runs["one"]], [r[k] for r in runs["batched"]]))
    f_cpu, f_wall = (statistics.median(r[k] for r in runs["functional"]) for k in (0, 1))
    print(
        f"  the functional API on all the rows at once (cophe_score): {f_cpu * 1e3:.1f} ms CPU, "
        f"{f_wall * 1e3:.1f} ms wall (median of {len(runs['functional'])})"
    )

    print(f"\n2. one update of {UPDATE_BATCH} × {len(labels):,} dense, {N_UPDATES} updates (wall time)")
    print(f"  0/1 indicators: {update_times(acc, y_true, y_pred)}")
    scored = Accumulator(labels, acc.ontology, threshold=0.5)
    print(f"  scores, threshold=0.5: {update_times(scored, y_true, model_scores(y_pred))}")
    print(
        f"  (the mean includes a count of the buffered rows every {acc.chunk_rows // UPDATE_BATCH} updates)"
    )
    print(f"\n{load()}")


if __name__ == "__main__":
    main()
