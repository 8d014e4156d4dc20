"""Streamed scoring benchmark: `cophe score` on generated partitioned Parquet datasets of growing size.

    python benchmarks/bench_stream.py                          # 10^5, 10^6 and 10^7 label rows
    python benchmarks/bench_stream.py --sizes 1e5 1e6          # chosen sizes
    python benchmarks/bench_stream.py --with-1e8               # also 10^8 (needs ~3 GB of disk, many minutes)
    python benchmarks/bench_stream.py --keep /tmp/data         # keep the generated data in that folder

The data are synthetic (:mod:`cophe_core.inputs.synthetic`, seeded; real ICD-9-CM code strings, no patient data): a
base gold standard and a ``siblings`` run, tiled with fresh document ids into hive partitions
``gold/tile=K/part.parquet`` and ``pred/tile=K/part.parquet`` (the predictions' rows shuffled within each
tile, so that the two sides come in different document orders). "Label rows" counts gold and predicted rows.

Each size runs the CLI (``cophe score --gold DIR --pred DIR --format json``) in a child process under
``/usr/bin/time -v`` when it exists (else ``resource.getrusage(RUSAGE_CHILDREN)`` of a fresh wrapper), and
prints rows, wall and CPU seconds (user + system), rows per wall second and per CPU second (per core),
and peak resident MB. A first run is not counted (it writes the bytecode, the code-system cache and brings
the files into the page cache); then the CLI and the input floor below run in turn ``--rounds`` times (3 by
default), and each figure is the median of its rounds. Every process keeps its bytecode, as an installed
package's is kept (in a temporary ``PYTHONPYCACHEPREFIX``, even where ``PYTHONDONTWRITEBYTECODE`` is set).

The input floor, in the same run: a child process that reads both sides' ``doc_id`` and ``code`` columns with
pyarrow's dataset scanner, one record batch at a time, and dictionary-encodes each (what any reader of the
files must do at least), timed the same way; the table prints its figures and cophe's CPU and wall seconds
over the floor's (the issue's target: at most 2x).

DuckDB, the yardstick (``pip install cophe[bench]``; skipped with a note where it is missing): on the same
Parquet files, one SQL query computes the same per-level CoPHE counts (distinct codes per document and side,
joined to a code-to-ancestor table built from the ontology beforehand and not timed, counted per document and
node, TP/FP/FN summed per level). It runs in a child process, timed the same way, with 1 thread and with one
per core, and in two formulations (:data:`DUCKDB_QUERIES`: a full outer join of the two sides' counts, and one
aggregate over both sides with filters; DuckDB is compared by its better one, so that the yardstick is not
handicapped by how the SQL is written); its counts are checked equal to cophe's (a mismatch is printed, never
hidden). After each thread count, the per-core comparison: both sides' CPU seconds (user + system, whole
process) and cophe's speed per core over DuckDB's (DuckDB's CPU seconds over cophe's; the issue's target: at
least 3x), and the wall-clock ratio.
Prints figures and asserts nothing.
"""

from __future__ import annotations

import argparse
import atexit
import importlib.util
import json
import math
import os
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
BASE_DOCS = 20_000  # documents of the base sample that is tiled


def generate(folder: Path, n_rows: int, seed: int = 0) -> dict:
    """Write ``folder/gold`` and ``folder/pred`` holding about ``n_rows`` label rows together."""
    import numpy as np
    import pyarrow as pa
    import pyarrow.parquet as pq

    from cophe_core.inputs.synthetic import generate_gold, generate_run

    per_doc = 29.0  # gold + siblings rows per document of the generator, measured
    base_docs = max(50, min(BASE_DOCS, math.ceil(n_rows / per_doc)))
    gold = generate_gold(base_docs, seed=seed)
    pred = generate_run(gold, "siblings", seed=seed + 1)
    base_rows = len(gold) + len(pred)
    tiles = max(1, math.ceil(n_rows / base_rows))
    rng = np.random.default_rng(seed)
    written = 0
    for k in range(tiles):
        for side, frame in (("gold", gold), ("pred", pred)):
            f = frame.iloc[rng.permutation(len(frame))] if side == "pred" else frame
            ids = f"T{k:05d}-" + f["doc_id"].astype(str)
            table = pa.table({"doc_id": ids.to_numpy(dtype=object), "code": f["code"].to_numpy(dtype=object)})
            out = folder / side / f"tile={k}"
            out.mkdir(parents=True, exist_ok=True)
            pq.write_table(table, out / "part.parquet")
            written += len(f)
    size = sum(p.stat().st_size for p in folder.rglob("*.parquet"))
    return {"rows": written, "documents": base_docs * tiles, "files": 2 * tiles, "bytes": size}


def _field(text: str, label: str) -> float:
    """A number of /usr/bin/time -v's report."""
    found = re.search(label + r": ([\d.]+)", text)
    return float(found.group(1)) if found else float("nan")


@contextmanager
def data_folder(keep: Path | None, prefix: str) -> Iterator[Path]:
    """A temporary folder for generated data, removed after; with ``keep``, a new folder under it (made if
    missing), kept."""
    if keep is not None:
        keep.mkdir(parents=True, exist_ok=True)
        yield Path(tempfile.mkdtemp(prefix=prefix, dir=keep))
        return
    with tempfile.TemporaryDirectory(prefix=prefix) as tmp:
        yield Path(tmp)


def timed(cmd: list[str]) -> tuple[dict, str]:
    """``cmd`` in a child process: its wall and CPU (user + system) seconds and peak resident MB, from
    ``/usr/bin/time -v`` when it exists (else ``getrusage`` of a fresh wrapper), and its stdout."""
    env = {
        **os.environ,
        "PYTHONPATH": os.pathsep.join(filter(None, [str(ROOT), os.environ.get("PYTHONPATH")])),
    }
    t0 = time.perf_counter()
    if Path("/usr/bin/time").exists():
        done = subprocess.run(["/usr/bin/time", "-v", *cmd], capture_output=True, text=True, env=env)
        wall = time.perf_counter() - t0
        peak = _field(done.stderr, r"Maximum resident set size \(kbytes\)") / 1024
        cpu = _field(done.stderr, r"User time \(seconds\)") + _field(done.stderr, r"System time \(seconds\)")
    else:
        wrapper = (
            "import resource, subprocess, sys, json; r = subprocess.run(sys.argv[1:]); "
            "u = resource.getrusage(resource.RUSAGE_CHILDREN); "
            "print(json.dumps([u.ru_maxrss, u.ru_utime + u.ru_stime, r.returncode]), file=sys.stderr)"
        )
        done = subprocess.run([sys.executable, "-c", wrapper, *cmd], capture_output=True, text=True, env=env)
        wall = time.perf_counter() - t0
        rss, cpu, _ = json.loads(done.stderr.strip().splitlines()[-1])
        peak = rss / 1024
    if done.returncode != 0:
        raise SystemExit(f"{' '.join(cmd[:4])} … failed:\n{done.stderr[-3000:]}")
    return {"wall_s": wall, "cpu_s": cpu, "peak_mb": peak}, done.stdout


def run_cli(folder: Path, chunk_rows: int | None) -> dict:
    """The CLI on the dataset, in a child process: wall time and peak RSS of that process alone."""
    cmd = [sys.executable, "-m", "cophe_core", "score", "--gold", str(folder / "gold")]
    cmd += ["--pred", str(folder / "pred"), "--format", "json"]
    if chunk_rows:
        cmd += ["--chunk-rows", str(chunk_rows)]
    figures, stdout = timed(cmd)
    result = json.loads(stdout)
    return {
        "seconds": figures["wall_s"],
        "cpu_s": figures["cpu_s"],
        "peak_mb": figures["peak_mb"],
        "cophe_f1": result["cophe"]["overall"]["f1"],
        "levels": result["cophe"]["levels"],
    }


# One query: distinct labels, their ancestors at each level (the code's own and above), counts per document
# and node, CoPHE's TP = min(x, y), FP = max(x - y, 0), FN = max(y - x, 0), summed per level.
DUCKDB_QUERY = """
WITH
  anc AS (SELECT * FROM read_parquet($anc)),
  g AS (SELECT DISTINCT doc_id, code FROM read_parquet($gold, hive_partitioning = false)),
  p AS (SELECT DISTINCT doc_id, code FROM read_parquet($pred, hive_partitioning = false)),
  y AS (SELECT doc_id, level, node, count(*) AS y FROM g JOIN anc USING (code) GROUP BY ALL),
  x AS (SELECT doc_id, level, node, count(*) AS x FROM p JOIN anc USING (code) GROUP BY ALL)
SELECT level,
       sum(least(coalesce(x, 0), coalesce(y, 0)))::BIGINT AS tp,
       sum(greatest(coalesce(x, 0) - coalesce(y, 0), 0))::BIGINT AS fp,
       sum(greatest(coalesce(y, 0) - coalesce(x, 0), 0))::BIGINT AS fn
FROM x FULL OUTER JOIN y USING (doc_id, level, node)
GROUP BY level
"""

# The same counts as one aggregate: both sides' distinct labels in one relation with a side column, x and y per
# (document, node) counted by one hash aggregate with filters, no full outer join. Its plan (EXPLAIN ANALYZE) has
# one large hash aggregate where DUCKDB_QUERY's has two and a full outer hash join; neither was clearly faster
# on the shared machine (10.5M rows, 1 thread, load 13-15), so both are timed and DuckDB keeps its better one.
DUCKDB_ONE_AGGREGATE = """
WITH
  anc AS (SELECT * FROM read_parquet($anc)),
  r AS (SELECT DISTINCT doc_id, code, 0 AS side FROM read_parquet($gold, hive_partitioning = false)
        UNION ALL
        SELECT DISTINCT doc_id, code, 1 AS side FROM read_parquet($pred, hive_partitioning = false)),
  c AS (SELECT doc_id, level, node, count(*) FILTER (side = 1) AS x, count(*) FILTER (side = 0) AS y
        FROM r JOIN anc USING (code) GROUP BY ALL)
SELECT level, sum(least(x, y))::BIGINT AS tp, sum(greatest(x - y, 0))::BIGINT AS fp,
       sum(greatest(y - x, 0))::BIGINT AS fn
FROM c GROUP BY level
"""
DUCKDB_QUERIES = {"join": DUCKDB_QUERY, "one aggregate": DUCKDB_ONE_AGGREGATE}


def write_ancestors(folder: Path) -> Path:
    """``folder/ancestors.parquet``: (code, level, node) for every code of the data and each of its ancestors
    up to the ontology's default top level, its own node included (what DuckDB joins to)."""
    import numpy as np
    import pyarrow as pa
    import pyarrow.dataset as ds
    import pyarrow.parquet as pq

    from cophe_core.ontology import load_ontology

    onto = load_ontology("icd9")
    codes = set()
    for side in ("gold", "pred"):
        column = ds.dataset(folder / side, format="parquet").to_table(columns=["code"]).column("code")
        codes |= set(column.unique().to_pylist())
    known = sorted(c for c in codes if c in onto.codes)
    levels = onto.levels_up_to(onto.default_level)
    anc = onto.ancestors[[onto.codes[c] for c in known]][:, : len(levels)]
    row, col = np.nonzero(anc >= 0)
    table = pa.table(
        {
            "code": pa.array(known, pa.string()).take(pa.array(row)),
            "level": pa.array(levels, pa.string()).take(pa.array(col)),
            "node": pa.array(anc[row, col], pa.int32()),
        }
    )
    pq.write_table(table, folder / "ancestors.parquet")
    if len(known) < len(codes):
        print(f"  note: {len(codes) - len(known)} codes outside the ontology's list: DuckDB counts differ")
    return folder / "ancestors.parquet"


def floor_worker(folder: str) -> None:
    """Child process: read both sides' ``doc_id`` and ``code`` columns batch by batch and dictionary-encode
    them (the input floor); prints the rows read."""
    import pyarrow.compute as pc
    import pyarrow.dataset as ds

    rows = 0
    for side in ("gold", "pred"):
        for batch in ds.dataset(f"{folder}/{side}", format="parquet").to_batches(columns=["doc_id", "code"]):
            for column in batch.columns:
                pc.dictionary_encode(column)
            rows += batch.num_rows
    print(rows)


def run_floor(folder: Path) -> dict:
    """:func:`floor_worker` in a child process, timed as the CLI is."""
    figures, stdout = timed([sys.executable, __file__, "--floor-worker", str(folder)])
    return {**figures, "rows": int(stdout)}


def duckdb_worker(folder: str, threads: int, query: str = "join") -> None:
    """Child process: the per-level counts of one of :data:`DUCKDB_QUERIES` on ``folder``, printed as JSON."""
    import duckdb

    con = duckdb.connect(config={"threads": threads})
    params = {
        "anc": f"{folder}/ancestors.parquet",
        "gold": f"{folder}/gold/*/*.parquet",
        "pred": f"{folder}/pred/*/*.parquet",
    }
    rows = con.execute(DUCKDB_QUERIES[query], params).fetchall()
    print(json.dumps({level: {"tp": tp, "fp": fp, "fn": fn} for level, tp, fp, fn in rows}))


def run_duckdb(folder: Path, threads: int, query: str = "join") -> dict:
    """:func:`duckdb_worker` in a child process, timed as the CLI is."""
    figures, stdout = timed([sys.executable, __file__, "--duckdb-worker", str(folder), str(threads), query])
    return {**figures, "counts": json.loads(stdout)}


def same_counts(cophe: dict, duck: dict) -> str:
    """``equal``, or the levels whose TP/FP/FN differ."""
    differ = [
        f"{level}: cophe {c} DuckDB {duck.get(level)}"
        for level, c in cophe.items()
        if {k: c[k] for k in ("tp", "fp", "fn")} != duck.get(level)
    ]
    return "equal" if not differ else "DIFFER " + "; ".join(differ)


def parse_size_options(doc: str, sizes: list[float], nargs: str) -> tuple[argparse.Namespace, list[int]]:
    """The options of the benchmarks on generated datasets (label rows, 10^8, chunk rows, a folder to keep),
    and the sizes to run."""
    ap = argparse.ArgumentParser(description=doc, formatter_class=argparse.RawDescriptionHelpFormatter)
    wording = "label rows" if nargs == "+" else "label rows (none: only --with-1e8)"
    ap.add_argument("--sizes", nargs=nargs, type=float, default=sizes, help=wording)
    ap.add_argument("--with-1e8", action="store_true", help="add 10^8 label rows")
    ap.add_argument("--chunk-rows", type=int, default=None, help="the CLI's --chunk-rows (default its own)")
    ap.add_argument("--keep", type=Path, help="generate into (and keep) this folder instead of a temp dir")
    ap.add_argument(
        "--rounds", type=int, default=3, help="cophe and the floor timed in turn, this many times"
    )
    args = ap.parse_args()
    return args, [int(s) for s in args.sizes] + ([10**8] if args.with_1e8 else [])


def main() -> None:
    if sys.argv[1:2] == ["--duckdb-worker"]:
        duckdb_worker(sys.argv[2], int(sys.argv[3]), sys.argv[4])
        return
    if sys.argv[1:2] == ["--floor-worker"]:
        floor_worker(sys.argv[2])
        return
    args, sizes = parse_size_options(__doc__ or "", [1e5, 1e6, 1e7], "+")
    has_duckdb = importlib.util.find_spec("duckdb") is not None
    if not has_duckdb:
        print("DuckDB is not installed (pip install cophe[bench]): no yardstick", flush=True)
    print(f"machine: {os.cpu_count()} cores; load {os.getloadavg()}", flush=True)
    # every process with its bytecode cached, as an installed package's is (pip compiles it): with
    # PYTHONDONTWRITEBYTECODE set, cophe's own modules would be compiled in every process (about 0.05 s CPU)
    os.environ.pop("PYTHONDONTWRITEBYTECODE", None)
    os.environ["PYTHONPYCACHEPREFIX"] = cache = tempfile.mkdtemp(prefix="cophe-bench-pycache-")
    atexit.register(shutil.rmtree, cache, ignore_errors=True)
    print(
        f"{'rows':>12} {'docs':>10} {'files':>6} {'MB disk':>8} {'gen s':>7} {'wall s':>7} {'CPU s':>7} "
        f"{'rows/s wall':>12} {'rows/s/core':>12} {'peak MB':>8} {'load':>5}"
    )
    done = []
    for n in sizes:
        with data_folder(args.keep, "cophe-bench-") as folder:
            t0 = time.perf_counter()
            data = generate(folder, n)
            gen = time.perf_counter() - t0
            run_cli(folder, args.chunk_rows)  # not counted: writes the bytecode and code-system caches
            r, f = interleaved(folder, args.chunk_rows, args.rounds)
            done.append((data["rows"], r["seconds"], r["cpu_s"]))
            print(
                f"{data['rows']:>12,} {data['documents']:>10,} {data['files']:>6} {data['bytes'] / 2**20:>8.0f} "
                f"{gen:>7.1f} {r['seconds']:>7.1f} {r['cpu_s']:>7.1f} {data['rows'] / r['seconds']:>12,.0f} "
                f"{data['rows'] / r['cpu_s']:>12,.0f} {r['peak_mb']:>8.0f} {os.getloadavg()[0]:>5.2f}",
                flush=True,
            )
            compare_floor(f, data["rows"], r)
            if has_duckdb:
                compare_duckdb(folder, data["rows"], r)
    if len(done) > 1:  # the cost of one more row, start-up (imports, ontology) left out
        (r1, w1, c1), (r2, w2, c2) = done[-2], done[-1]
        print(
            f"marginal, {r1:,} → {r2:,} rows: {(r2 - r1) / (w2 - w1):,.0f} rows/s wall, {(r2 - r1) / (c2 - c1):,.0f} per CPU second"
        )


def interleaved(folder: Path, chunk_rows: int | None, rounds: int) -> tuple[dict, dict]:
    """cophe (:func:`run_cli`) and the input floor (:func:`run_floor`) in turn, ``rounds`` times (a busy
    machine slows both alike): each one's median wall and CPU seconds and peak memory over the rounds, and
    cophe's result."""
    runs = [(run_cli(folder, chunk_rows), run_floor(folder)) for _ in range(max(rounds, 1))]
    cophe = {
        **runs[0][0],
        **{k: statistics.median(r[0][k] for r in runs) for k in ("seconds", "cpu_s", "peak_mb")},
    }
    floor = {
        **runs[0][1],
        **{k: statistics.median(r[1][k] for r in runs) for k in ("wall_s", "cpu_s", "peak_mb")},
    }
    return cophe, floor


def compare_floor(f: dict, rows: int, cophe: dict) -> None:
    """Print the input floor's figures (:func:`run_floor`) and cophe's CPU and wall seconds over them."""
    print(
        f"{'input floor (Arrow read + encode)':>38} {f['wall_s']:>7.1f} {f['cpu_s']:>7.1f} "
        f"{rows / f['wall_s']:>12,.0f} {rows / f['cpu_s']:>12,.0f} {f['peak_mb']:>8.0f} "
        f"{os.getloadavg()[0]:>5.2f}  cophe {cophe['cpu_s'] / f['cpu_s']:.2f}x the floor's CPU, "
        f"{cophe['seconds'] / f['wall_s']:.2f}x its wall",
        flush=True,
    )


def compare_duckdb(folder: Path, rows: int, cophe: dict) -> None:
    """Time DuckDB's two queries (:data:`DUCKDB_QUERIES`) with 1 thread and one per core, check their counts,
    and print the per-core comparison against DuckDB's better query at each thread count: both sides' CPU
    seconds (user + system, whole process) and cophe's lead, DuckDB's CPU seconds over cophe's (the issue's
    target: at least 3x), with the wall-clock ratio beside it."""
    write_ancestors(folder)
    for threads in sorted({1, os.cpu_count() or 1}):
        runs = []
        for query in DUCKDB_QUERIES:
            d = run_duckdb(folder, threads, query)
            runs.append(d)
            label = f"DuckDB, {threads} thread{'s' * (threads > 1)}, {query}"
            print(
                f"{label:>38} {d['wall_s']:>7.1f} {d['cpu_s']:>7.1f} "
                f"{rows / d['wall_s']:>12,.0f} {rows / d['cpu_s']:>12,.0f} {d['peak_mb']:>8.0f} "
                f"{os.getloadavg()[0]:>5.2f}  counts {same_counts(cophe['levels'], d['counts'])}",
                flush=True,
            )
        d = min(runs, key=lambda r: r["cpu_s"])
        print(
            f"{'':>38} per core ({threads} thread{'s' * (threads > 1)}, DuckDB's better query): CPU s cophe "
            f"{cophe['cpu_s']:.1f}, DuckDB {d['cpu_s']:.1f}: cophe {d['cpu_s'] / cophe['cpu_s']:.2f}x faster per "
            f"core (target 3x); wall cophe {cophe['seconds']:.1f} s, DuckDB {d['wall_s']:.1f} s "
            f"({d['wall_s'] / cophe['seconds']:.2f}x)",
            flush=True,
        )


if __name__ == "__main__":
    main()
