"""Core benchmark: parse, score and tables on MIMIC-sized synthetic sets; dense baseline.

    python benchmarks/bench_core.py            # MIMIC-III-full and MIMIC-IV-ICD-9 sizes
    python benchmarks/bench_core.py --quick    # MIMIC-III-full size only

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
from pathlib import Path

SIZES = {"MIMIC-III-full": 3372, "MIMIC-IV-ICD-9": 32804}


def make_files(n_docs: int, folder: Path) -> tuple[Path, Path]:
    from cophe_core.synthetic import generate_gold, generate_run

    gold = generate_gold(n_docs, seed=1, n_families=800)
    pred = generate_run(gold, "siblings", seed=2)
    g, p = folder / "gold.csv", folder / "pred.csv"
    gold.to_csv(g, index=False)
    pred.to_csv(p, index=False)
    return g, p


def worker_core(g: str, p: str) -> dict:
    """Time parse, encode and every table at all five levels, in this process."""
    import pandas as pd

    from cophe_core import read_labels
    from cophe_core.labels import encode
    from cophe_core.metrics import evaluate_corpus
    from cophe_core.ontology import icd9_ontology

    t0 = time.perf_counter()
    onto = icd9_ontology()
    t1 = time.perf_counter()
    pd.read_csv(g, dtype=str), pd.read_csv(p, dtype=str)
    t2 = time.perf_counter()
    raw_g, raw_p = read_labels(g), read_labels(p)
    t3 = time.perf_counter()
    corpus = encode(raw_g, {"pred": raw_p}, onto)
    t4 = time.perf_counter()
    ev = evaluate_corpus(corpus, "pred", max_level="chapter")
    tables = (ev.levels_table, ev.macro_table, ev.nodes, ev.documents)
    assert all(len(t) for t in tables)
    t5 = time.perf_counter()
    return {
        "docs": len(corpus.docs), "gold_labels": int(corpus.gold.nnz), "pred_labels": int(corpus.runs["pred"].nnz),
        "distinct_codes": int(len(set(raw_g.pairs.code) | set(raw_p.pairs.code))),
        "ontology_s": t1 - t0, "bare_csv_parse_s": t2 - t1, "read_s": t3 - t2, "encode_s": t4 - t3,
        "metrics_and_tables_s": t5 - t4,
        "peak_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024,
    }


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
    return {"dense_s": time.perf_counter() - t0, "peak_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024}


def worker_cli(g: str, p: str, out: str) -> dict:
    """Run the CLI as a child of this fresh process, so RUSAGE_CHILDREN is the CLI's alone."""
    t0 = time.perf_counter()
    subprocess.run([sys.executable, "-m", "cophe_core", "score", "--gold", g, "--pred", p,
                    "--max-level", "chapter", "--format", "json", "--nodes", f"{out}/nodes.csv",
                    "--documents", f"{out}/docs.csv"], check=True, capture_output=True)
    wall = time.perf_counter() - t0
    return {"cli_wall_s": wall, "cli_peak_mb": resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024}


WORKERS = {"core": worker_core, "dense": worker_dense, "cli": worker_cli}


def in_subprocess(kind: str, *paths: Path) -> dict:
    out = subprocess.run([sys.executable, __file__, "--worker", kind, *map(str, paths)],
                         check=True, capture_output=True, text=True)
    return json.loads(out.stdout)


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--quick", action="store_true")
    ap.add_argument("--worker", nargs="+")
    args = ap.parse_args()
    if args.worker:
        kind, *paths = args.worker
        print(json.dumps(WORKERS[kind](*paths)))
        return
    sizes = {"MIMIC-III-full": SIZES["MIMIC-III-full"]} if args.quick else SIZES
    for label, n in sizes.items():
        with tempfile.TemporaryDirectory() as tmp:
            g, p = make_files(n, Path(tmp))
            core = in_subprocess("core", g, p)
            cli = in_subprocess("cli", g, p, Path(tmp))
            print(f"\n== {label}: {core['docs']} documents, {core['gold_labels']} gold and "
                  f"{core['pred_labels']} predicted labels, {core['distinct_codes']} distinct codes")
            print(f"ontology load (cold)           {core['ontology_s']:8.3f} s")
            print(f"bare CSV parse (pandas, 2 files){core['bare_csv_parse_s']:7.3f} s")
            print(f"read_labels (2 files)          {core['read_s']:8.3f} s")
            print(f"encode (validate, align)       {core['encode_s']:8.3f} s")
            print(f"metrics + all tables, 5 levels {core['metrics_and_tables_s']:8.3f} s")
            print(f"library process peak RSS       {core['peak_mb']:8.0f} MB")
            print(f"CLI process wall / peak RSS    {cli['cli_wall_s']:8.3f} s / {cli['cli_peak_mb']:.0f} MB")
            if n <= 5000:
                dense = in_subprocess("dense", g, p)
                print(f"dense docs x codes baseline    {dense['dense_s']:8.3f} s / {dense['peak_mb']:.0f} MB peak")


if __name__ == "__main__":
    main()
