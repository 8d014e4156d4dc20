"""Core benchmark: parse, score and tables on MIMIC-sized synthetic sets; dense baseline.

    python benchmarks/bench_core.py                        # every set
    python benchmarks/bench_core.py --only MIMIC-III-full  # one set
    python -m benchmarks.bench_core --startup 9            # start-up ratios, 9 interleaved rounds

Prints figures and asserts nothing. Each measurement runs in its own process so
that peak memory (ru_maxrss) belongs to that measurement alone.

``--startup N`` measures issue 28's two start-up targets, whole process, as ratios to their floors:
``cophe score`` on 3,000 ICD-9 documents against a process that only imports pandas and reads the two
CSVs, and ``cophe score`` on two files of two rows against ``import pandas, numpy, scipy.sparse``; and, to
show where the first target's time goes, the read floor with ``import scipy.sparse`` added. The five
commands run in turn, N rounds (interleaved, so a busy machine slows all of them alike); each figure is
the median over the rounds of wall time and of CPU time (user + system, which a shared machine disturbs
less), with the load average before and after. Every process runs with its bytecode cached, as an
installed package's is (``PYTHONPYCACHEPREFIX``, a temporary folder, written in a first round that is not
counted): with ``PYTHONDONTWRITEBYTECODE`` set, cophe's own modules would be compiled in every process
(about 0.15 s), pandas' not (pip compiled them).
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


FLOOR_READ = "import sys, pandas as pd; [pd.read_csv(f, dtype=str) for f in sys.argv[1:]]"
FLOOR_IMPORT = "import pandas, numpy, scipy.sparse"
# The read floor with the import cophe cannot do without (its counts are sparse matrices): where the rest goes.
FLOOR_READ_SPARSE = "import scipy.sparse; " + FLOOR_READ


def run_timed(cmd: list[str], env: dict[str, str] | None = None) -> tuple[float, float]:
    """Wall and CPU (user + system) seconds of one child process, its output discarded."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    t0 = time.perf_counter()
    subprocess.run(cmd, check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=env)
    wall = time.perf_counter() - t0
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return wall, (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)


def startup_ratios(rounds: int) -> None:
    """Issue 28's start-up targets: each command's median wall and CPU time and its ratio to its floor."""
    import os
    import statistics

    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        g, p = make_files(3000, "icd9", 800, folder)
        tiny_g, tiny_p = folder / "tiny_gold.csv", folder / "tiny_pred.csv"
        for f in (tiny_g, tiny_p):
            f.write_text("doc_id,code\nd0,401.9\nd1,428.0\n")
        cli = [sys.executable, "-m", "cophe_core", "score", "--gold"]
        commands = {
            "floor: import pandas, read both CSVs": [sys.executable, "-c", FLOOR_READ, str(g), str(p)],
            "cophe score, 3,000 ICD-9 documents": [*cli, str(g), "--pred", str(p)],
            "floor: import pandas, numpy, scipy.sparse": [sys.executable, "-c", FLOOR_IMPORT],
            "cophe score, two files of two rows": [*cli, str(tiny_g), "--pred", str(tiny_p)],
            "reference: the read floor + import scipy.sparse": [
                sys.executable,
                "-c",
                FLOOR_READ_SPARSE,
                str(g),
                str(p),
            ],
        }
        env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
        env["PYTHONPYCACHEPREFIX"] = str(folder / "pycache")
        for cmd in commands.values():  # write the bytecode, the ontology cache and the page cache once
            run_timed(cmd, env)
        load = os.getloadavg()
        times: dict[str, list[tuple[float, float]]] = {k: [] for k in commands}
        for _ in range(rounds):
            for name, cmd in commands.items():
                times[name].append(run_timed(cmd, env))
    print(
        f"start-up, {rounds} interleaved rounds; load average {load[0]:.2f} before, {os.getloadavg()[0]:.2f} after"
    )
    med = {
        k: (statistics.median(w for w, _ in v), statistics.median(c for _, c in v)) for k, v in times.items()
    }
    names = list(commands)
    for i, name in enumerate(names):
        wall, cpu = med[name]
        line = f"{name:50} wall {wall:6.3f} s   CPU {cpu:6.3f} s"
        if i in (1, 3):  # a cophe command, after its floor
            floor = med[names[i - 1]]
            line += f"   ratio: wall {wall / floor[0]:.2f}x, CPU {cpu / floor[1]:.2f}x"
        print(line)
    big, ref = med[names[1]], med[names[4]]
    print(
        f"3,000 documents against the read floor with scipy.sparse: wall {big[0] / ref[0]:.2f}x, CPU {big[1] / ref[1]:.2f}x"
    )


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
    ap.add_argument("--startup", type=int, metavar="N", help="only the start-up ratios, N interleaved rounds")
    args = ap.parse_args()
    if args.startup:
        startup_ratios(args.startup)
        return
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
