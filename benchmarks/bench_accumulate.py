"""Accumulator benchmark: scoring in a training loop, batch by batch, against one call on all the rows.

    python benchmarks/bench_accumulate.py

Two figures, on a MIMIC-III-full-sized test set (3,372 documents, 8,929 labels, dense float32 indicator
matrices as a model's thresholded output is): how much accumulating in batches of 16 adds to the one-shot
time (update with all rows, then the levels table), and the time of one ``update`` of 64 documents × 8,929
labels. The functional API's one call on all the rows (``cophe_score``, which places the labels each time) is
printed beside them. The median and the mean are both printed: every ``chunk_rows`` documents (4,096 by default) an
update also counts the buffered rows, which the mean includes. Prints figures and asserts nothing.
"""

from __future__ import annotations

import os
import statistics
import time

import numpy as np
import pandas as pd

N_DOCS, N_LABELS, BATCH, UPDATE_BATCH = 3372, 8929, 16, 64
REPEAT = 15  # timings of each way; the least disturbed (the minimum) is kept


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

    def dense(frame) -> np.ndarray:
        m = np.zeros((N_DOCS, len(labels)), dtype=np.float32)
        m[frame.doc_id.map(docs).to_numpy(), frame.code.map(column).to_numpy()] = 1
        return m

    return labels, dense(gold), dense(pred)


def best(f, repeat: int = 5) -> float:
    """The best of ``repeat`` timings of ``f()``: the least disturbed by the other processes of the machine."""
    times = []
    for _ in range(repeat):
        t = time.perf_counter()
        f()
        times.append(time.perf_counter() - t)
    return min(times)


def main() -> None:
    from cophe_core import Accumulator
    from cophe_core.metrics import cophe_score as cophe_f1

    labels, y_true, y_pred = mimic_sized()
    print(
        f"load average {os.getloadavg()[0]:.2f}; {N_DOCS:,} documents × {len(labels):,} labels, "
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

    # interleaved, so that a burst of load elsewhere on the machine touches both sides alike
    pairs = [(best(one_shot, 1), best(batched, 1)) for _ in range(REPEAT)]
    one, many = min(p[0] for p in pairs), min(p[1] for p in pairs)
    print(
        f"one shot: {one * 1e3:.0f} ms; batches of {BATCH}: {many * 1e3:.0f} ms "
        f"({(many / one - 1) * 100:+.1f} %)"
    )
    # the functional API on all the rows at once also places the labels in the ontology on every call
    functional = best(lambda: cophe_f1(y_true, y_pred, labels=labels, ontology=acc.ontology), 5)
    print(f"the functional API on all the rows at once (cophe_score): {functional * 1e3:.0f} ms")

    acc.reset()
    times = []
    for i in range(400):
        lo = (i * UPDATE_BATCH) % (N_DOCS - UPDATE_BATCH)
        a, b = y_true[lo : lo + UPDATE_BATCH], y_pred[lo : lo + UPDATE_BATCH]
        t = time.perf_counter()
        acc.update(a, b)
        times.append(time.perf_counter() - t)
    print(
        f"update of {UPDATE_BATCH} × {len(labels):,} dense: median {statistics.median(times) * 1e3:.2f} ms, "
        f"mean {statistics.mean(times) * 1e3:.2f} ms (400 updates, a count of the buffer every "
        f"{acc.chunk_rows // UPDATE_BATCH})"
    )


if __name__ == "__main__":
    main()
