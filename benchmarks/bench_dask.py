"""Dask scoring benchmark: ``score_dask`` on a LocalCluster of 1 and of 2 worker processes, same data, same counts.

    python -m benchmarks.bench_dask                            # 10^7 label rows, 1 and 2 workers, 3 runs each
    python -m benchmarks.bench_dask --sizes 1e6 --repeats 5    # chosen sizes and runs
    python -m benchmarks.bench_dask --sizes --with-1e8         # 10^8 rows only (~3 GB of disk, many minutes)
    python -m benchmarks.bench_dask --data /tmp/d/cophe-bench-x  # a dataset kept by bench_stream (--keep)
    python -m benchmarks.bench_dask --workers 1 2 4            # other cluster sizes

The data are bench_stream's (:func:`benchmarks.bench_stream.generate`: hive-partitioned Parquet, ``gold/`` and
``pred/``, one file per tile and side). Each cluster size runs in a child process of its own: a
``LocalCluster(n_workers=W, threads_per_worker=1, processes=True)`` started (not timed), then ``score_dask`` on the
two folders ``--repeats`` times, ``levels_table`` computed each time. Each run prints its wall seconds and its CPU
seconds (the workers' and the client process's, scheduler included, from ``getrusage``), and the load average
when it ended; the table gives the median run per size, and the speed-up of each size over 1 worker (median
wall over median wall; the issue's target: at least 1.7x with 2 workers at 10^8 rows).

Counts: every run's per-level TP/FP/FN and a digest of every per-node count must be those of the first run
with 1 worker, and the per-level counts those of the streamed path (``cophe score`` on the same folders, timed
as bench_stream times it, for reference; ``--no-streamed`` skips it). A mismatch is printed, never hidden.

The machine's cores are shared: with fewer idle cores than workers, the speed-up says so. The load average
is printed with each figure; read the speed-up on a quiet machine. Prints figures and asserts nothing.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

from benchmarks.bench_stream import ROOT, data_folder, generate, run_cli


def _cpu_seconds() -> float:
    """This process's user + system seconds (run on each worker by ``Client.run``)."""
    import resource

    u = resource.getrusage(resource.RUSAGE_SELF)
    return u.ru_utime + u.ru_stime


def dask_worker(folder: str, workers: int, repeats: int) -> None:
    """Child process: time ``score_dask`` on ``folder`` on a LocalCluster of ``workers`` processes; prints one
    JSON line per run (wall and CPU seconds, load, per-level counts, a digest of the per-node counts)."""
    from distributed import Client, LocalCluster

    from cophe_core.scale.cluster import score_dask

    with (
        LocalCluster(
            n_workers=workers, threads_per_worker=1, processes=True, dashboard_address=None, memory_limit=0
        ) as cluster,
        Client(cluster) as client,
    ):
        for _ in range(repeats):
            before = sum(client.run(_cpu_seconds).values()) + _cpu_seconds()
            t0 = time.perf_counter()
            ev = score_dask(f"{folder}/gold", f"{folder}/pred", client=client)
            table = ev.levels_table
            wall = time.perf_counter() - t0
            cpu = sum(client.run(_cpu_seconds).values()) + _cpu_seconds() - before
            print(
                json.dumps({"wall_s": wall, "cpu_s": cpu, "load": os.getloadavg()[0], **counts_of(ev, table)})
            )
            sys.stdout.flush()


def counts_of(ev, table) -> dict:
    """The per-level CoPHE counts (as the CLI's JSON gives them) and a digest of every per-node count."""
    cophe = table[table.measure == "cophe"]
    levels = {
        str(r.level): {"tp": int(r.tp), "fp": int(r.fp), "fn": int(r.fn)}
        for r in cophe.itertuples(index=False)
        if r.level != "overall"
    }
    digest = hashlib.sha256()
    for name, values in sorted(vars(ev.node_counts).items()):
        if values is not None:
            digest.update(name.encode() + values.astype("int64").tobytes())
    return {"levels": levels, "nodes": digest.hexdigest()[:16], "documents": int(ev.n_documents)}


def run_dask(folder: Path, workers: int, repeats: int) -> list[dict]:
    """:func:`dask_worker` in a child process; its runs."""
    env = {
        **os.environ,
        "PYTHONPATH": os.pathsep.join(filter(None, [str(ROOT), os.environ.get("PYTHONPATH")])),
    }
    cmd = [
        sys.executable,
        "-m",
        "benchmarks.bench_dask",
        "--dask-worker",
        str(folder),
        str(workers),
        str(repeats),
    ]
    done = subprocess.run(cmd, capture_output=True, text=True, env=env, cwd=ROOT)
    if done.returncode != 0:
        raise SystemExit(f"score_dask on {workers} workers failed:\n{done.stderr[-3000:]}")
    return [json.loads(line) for line in done.stdout.splitlines() if line.startswith("{")]


def same(a: dict, b: dict, keys: tuple[str, ...]) -> bool:
    return all(a[k] == b[k] for k in keys)


def benchmark(folder: Path, rows: int, workers: list[int], repeats: int, streamed: bool) -> None:
    """Time every cluster size on ``folder`` (``rows`` label rows) and print the table's lines."""
    first: dict | None = None
    base = None
    for w in workers:
        runs = run_dask(folder, w, repeats)
        first = first or runs[0]
        agree = all(same(r, first, ("levels", "nodes", "documents")) for r in runs)
        wall = statistics.median(r["wall_s"] for r in runs)
        cpu = statistics.median(r["cpu_s"] for r in runs)
        base = base or wall
        walls = " ".join(f"{r['wall_s']:.1f}" for r in runs)
        loads = " ".join(f"{r['load']:.1f}" for r in runs)
        verdict = "equal to 1 worker's" if agree else "DIFFER: " + str([r["nodes"] for r in runs])
        print(
            f"{rows:>12,} {w:>7} {wall:>7.1f} {cpu:>7.1f} {rows / wall:>12,.0f} {rows / cpu:>12,.0f} "
            f"{base / wall:>8.2f}x  runs {walls} s at load {loads}; counts {verdict}",
            flush=True,
        )
    if streamed and first is not None:
        r = run_cli(folder, None)
        cli = {level: {k: c[k] for k in ("tp", "fp", "fn")} for level, c in r["levels"].items()}
        verdict = "equal" if cli == first["levels"] else f"DIFFER: {cli} vs {first['levels']}"
        print(
            f"{'streamed (cophe score)':>20} {r['seconds']:>7.1f} {r['cpu_s']:>7.1f} {rows / r['seconds']:>12,.0f} "
            f"{rows / r['cpu_s']:>12,.0f} {'':>9}  load {os.getloadavg()[0]:.1f}; per-level counts {verdict}",
            flush=True,
        )


def main() -> None:
    if sys.argv[1:2] == ["--dask-worker"]:
        dask_worker(sys.argv[2], int(sys.argv[3]), int(sys.argv[4]))
        return
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument(
        "--sizes", nargs="*", type=float, default=[1e7], help="label rows (none: only --with-1e8)"
    )
    ap.add_argument("--with-1e8", action="store_true", help="add 10^8 label rows")
    ap.add_argument("--data", type=Path, help="a dataset folder with gold/ and pred/ (instead of generating)")
    ap.add_argument("--keep", type=Path, help="generate into (and keep) this folder instead of a temp dir")
    ap.add_argument("--workers", nargs="+", type=int, default=[1, 2], help="cluster sizes (default 1 2)")
    ap.add_argument("--repeats", type=int, default=3, help="runs per cluster size (default 3)")
    ap.add_argument("--no-streamed", action="store_true", help="skip the streamed path's run")
    args = ap.parse_args()
    print(f"machine: {os.cpu_count()} cores; load {os.getloadavg()}", flush=True)
    print(
        f"{'rows':>12} {'workers':>7} {'wall s':>7} {'CPU s':>7} {'rows/s wall':>12} {'rows/s/core':>12} "
        f"{'speed-up':>9}  (medians of the runs)"
    )
    if args.data is not None:
        import pyarrow.dataset as ds

        rows = sum(ds.dataset(args.data / side, format="parquet").count_rows() for side in ("gold", "pred"))
        benchmark(args.data, rows, args.workers, args.repeats, not args.no_streamed)
        return
    for n in [int(s) for s in args.sizes] + ([10**8] if args.with_1e8 else []):
        with data_folder(args.keep, "cophe-bench-") as folder:
            data = generate(folder, n)
            benchmark(folder, data["rows"], args.workers, args.repeats, not args.no_streamed)


if __name__ == "__main__":
    main()
