"""Core benchmark: parse, score and tables on MIMIC-sized synthetic sets; dense baseline.

    python benchmarks/bench_core.py                        # every set
    python benchmarks/bench_core.py --only MIMIC-III-full  # one set

Prints figures and asserts nothing. Each measurement runs in its own process so
that peak memory (ru_maxrss) belongs to that measurement alone.
"""

from __future__ import annotations

import argparse
import json
import resource
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

SIZES = {  # label: (documents, ontology, families the gold standard draws from)
    "MIMIC-III-full": (3372, "icd9", 800),
    "MIMIC-IV-ICD-9": (32804, "icd9", 800),
    "MIMIC-IV-ICD-10": (19802, "icd10", 2500),
}


def make_files(n_docs: int, ontology: str, n_families: int, folder: Path) -> tuple[Path, Path]:
    from cophe_core.inputs.synthetic import generate_gold, generate_run
    from cophe_core.ontology import load_ontology

    onto = load_ontology(ontology)
    gold = generate_gold(n_docs, seed=1, n_families=n_families, codes_per_doc=15.5, onto=onto)
    pred = generate_run(gold, "siblings", seed=2, onto=onto)
    g, p = folder / "gold.csv", folder / "pred.csv"
    gold.to_csv(g, index=False)
    pred.to_csv(p, index=False)
    return g, p


def worker_core(g: str, p: str, ontology: str) -> dict:
    """Time parse, encode and every table at all levels, in this process."""
    import pandas as pd

    from cophe_core import read_labels
    from cophe_core.metrics import evaluate_corpus
    from cophe_core.ontology import load_ontology
    from cophe_core.scoring.labels import encode

    t0 = time.perf_counter()
    onto = load_ontology(ontology)
    t1 = time.perf_counter()
    pd.read_csv(g, dtype=str), pd.read_csv(p, dtype=str)
    t2 = time.perf_counter()
    raw_g, raw_p = read_labels(g), read_labels(p)
    t3 = time.perf_counter()
    corpus = encode(raw_g, {"pred": raw_p}, onto)
    t4 = time.perf_counter()
    ev = evaluate_corpus(corpus, "pred", max_level=onto.levels[-1])
    tables = (ev.levels_table, ev.macro_table, ev.nodes, ev.documents)
    assert all(len(t) for t in tables)
    t5 = time.perf_counter()
    return {
        "docs": len(corpus.docs),
        "gold_labels": int(corpus.gold.nnz),
        "pred_labels": int(corpus.runs["pred"].nnz),
        "distinct_codes": int(len(set(raw_g.pairs.code) | set(raw_p.pairs.code))),
        "ontology_s": t1 - t0,
        "bare_csv_parse_s": t2 - t1,
        "read_s": t3 - t2,
        "encode_s": t4 - t3,
        "metrics_and_tables_s": t5 - t4,
        "peak_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024,
    }


def worker_ontology(name: str) -> dict:
    """Cold and warm (second, same process) load of one ontology."""
    from cophe_core.ontology import load_ontology

    t0 = time.perf_counter()
    load_ontology(name)
    t1 = time.perf_counter()
    load_ontology(name)
    t2 = time.perf_counter()
    out = {"cold_s": t1 - t0, "warm_s": t2 - t1}
    if name == "icd10":  # 100 unlisted codes placed in the 290,000 nodes, after the closure is built
        from cophe_core.ontology.icd10 import place_by_prefix

        onto = load_ontology(name)
        assert onto.closure.nnz  # built before the timing
        cats = sorted({k[:3] for k in onto.codes if len(k) >= 5 and k[3] == "."})
        times = []
        for i in range(4):  # the first builds the ontology's node index (once per process)
            codes = [f"{c}.Z{i}" for c in cats[100 * i : 100 * (i + 1)]]
            t0 = time.perf_counter()
            grown, _ = place_by_prefix(onto, codes)
            assert grown.closure.nnz
            times.append(time.perf_counter() - t0)
        out["extend_first_s"], out["extend_s"] = times[0], sorted(times[1:])[1]
    return out | {"peak_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024}


def worker_dense(g: str, p: str) -> dict:
    """The dense formulation of the paper's released scripts: docs × codes matrices per level."""
    import numpy as np
    import pandas as pd

    from cophe_core.ontology import icd9_ontology

    onto = icd9_ontology()
    gold, pred = pd.read_csv(g, dtype=str), pd.read_csv(p, dtype=str)
    t0 = time.perf_counter()
    docs = sorted(set(gold.doc_id) | set(pred.doc_id))
    codes = sorted(set(gold.code) | set(pred.code))
    d_index = {d: i for i, d in enumerate(docs)}
    c_index = {c: i for i, c in enumerate(codes)}
    G = np.zeros((len(docs), len(codes)), dtype=np.float64)
    P = np.zeros_like(G)
    G[[d_index[d] for d in gold.doc_id], [c_index[c] for c in gold.code]] = 1
    P[[d_index[d] for d in pred.doc_id], [c_index[c] for c in pred.code]] = 1
    node_ids = np.array([onto.codes[c] for c in codes])
    totals = []
    for lv in range(len(onto.levels)):
        anc = onto.ancestors[node_ids, lv]
        nodes, col = np.unique(anc[anc >= 0], return_inverse=True)
        M = np.zeros((len(codes), len(nodes)))
        M[np.nonzero(anc >= 0)[0], col] = 1
        X, Y = P @ M, G @ M
        tp = np.minimum(X, Y).sum()
        totals.append((tp, X.sum() - tp, Y.sum() - tp))
    return {
        "dense_s": time.perf_counter() - t0,
        "peak_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024,
    }


def worker_cli(g: str, p: str, out: str, ontology: str = "auto") -> dict:
    """Run the CLI as a child of this fresh process, so RUSAGE_CHILDREN is the CLI's alone."""
    t0 = time.perf_counter()
    subprocess.run(
        [
            sys.executable,
            "-m",
            "cophe_core",
            "score",
            "--gold",
            g,
            "--pred",
            p,
            "--ontology",
            ontology,
            "--max-level",
            "chapter",
            "--format",
            "json",
            "--nodes",
            f"{out}/nodes.csv",
            "--documents",
            f"{out}/docs.csv",
        ],
        check=True,
        capture_output=True,
    )
    wall = time.perf_counter() - t0
    return {"cli_wall_s": wall, "cli_peak_mb": resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024}


WORKERS: dict[str, Callable[..., dict]] = {
    "core": worker_core,
    "dense": worker_dense,
    "cli": worker_cli,
    "ontology": worker_ontology,
}


def in_subprocess(kind: str, *args: str | Path) -> dict:
    out = subprocess.run(
        [sys.executable, __file__, "--worker", kind, *map(str, args)],
        check=True,
        capture_output=True,
        text=True,
    )
    return json.loads(out.stdout)


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--only", choices=list(SIZES), help="one set only")
    ap.add_argument("--worker", nargs="+")
    args = ap.parse_args()
    if args.worker:
        kind, *paths = args.worker
        print(json.dumps(WORKERS[kind](*paths)))
        return
    sizes = {args.only: SIZES[args.only]} if args.only else SIZES
    for name in ("icd9", "icd10cm", "icd10"):
        o = in_subprocess("ontology", name)
        print(
            f"ontology {name:8} load: cold {o['cold_s']:.2f} s, warm {o['warm_s'] * 1e6:.0f} µs, "
            f"process peak {o['peak_mb']:.0f} MB"
        )
        if "extend_s" in o:
            print(
                f"ontology {name:8} + 100 unlisted codes, with the closure: {o['extend_s'] * 1e3:.0f} ms "
                f"(median of 3; the first in a process {o['extend_first_s'] * 1e3:.0f} ms, building the node index)"
            )
    for label, (n, ontology, families) in sizes.items():
        with tempfile.TemporaryDirectory() as tmp:
            g, p = make_files(n, ontology, families, Path(tmp))
            core = in_subprocess("core", g, p, ontology)
            cli = in_subprocess("cli", g, p, Path(tmp), ontology)
            print(
                f"\n== {label}: {core['docs']} documents, {core['gold_labels']} gold and "
                f"{core['pred_labels']} predicted labels, {core['distinct_codes']} distinct codes"
            )
            print(f"ontology load (cold)           {core['ontology_s']:8.3f} s")
            print(f"bare CSV parse (pandas, 2 files){core['bare_csv_parse_s']:7.3f} s")
            print(f"read_labels (2 files)          {core['read_s']:8.3f} s")
            print(f"encode (validate, align)       {core['encode_s']:8.3f} s")
            print(f"metrics + all tables, 5 levels {core['metrics_and_tables_s']:8.3f} s")
            print(f"library process peak RSS       {core['peak_mb']:8.0f} MB")
            print(f"CLI process wall / peak RSS    {cli['cli_wall_s']:8.3f} s / {cli['cli_peak_mb']:.0f} MB")
            if n <= 5000 and ontology == "icd9":
                dense = in_subprocess("dense", g, p)
                print(
                    f"dense docs x codes baseline    {dense['dense_s']:8.3f} s / {dense['peak_mb']:.0f} MB peak"
                )


if __name__ == "__main__":
    main()
