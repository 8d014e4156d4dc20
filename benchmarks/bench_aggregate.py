"""Aggregate analysis benchmark: `cophe aggregate --stream` on generated Parquet datasets, then opening the file.

    python -m benchmarks.bench_aggregate                        # 10^6 and 10^7 label rows
    python -m benchmarks.bench_aggregate --sizes 1e5 1e6        # chosen sizes
    python -m benchmarks.bench_aggregate --with-1e8             # also 10^8 (~3-4 GB of disk, many minutes)
    python -m benchmarks.bench_aggregate --keep /tmp/data       # keep the generated data and files there

The data are those of ``bench_stream.py`` (its :func:`generate`: synthetic, seeded, real ICD-9-CM code strings,
a gold standard and a ``siblings`` run tiled into hive partitions ``gold/tile=K/`` and ``pred/tile=K/``).

For each size, three child processes, each timed from outside (``/usr/bin/time -v`` when it exists, else
``resource.getrusage(RUSAGE_CHILDREN)`` of a fresh wrapper: wall seconds, user + system CPU seconds, peak
resident MB of that process alone):

1. **write**: ``cophe aggregate --gold DIR/gold --run siblings=DIR/pred --out F --stream``; and the file's size;
2. **open**: a fresh Python doing what the dashboard's first page needs: ``read_aggregate(F)``, then
   ``agg.evaluation("siblings").levels_table`` and ``.nodes`` (interpreter start and imports included; the
   child also reports its own split: imports, ``read_aggregate``, the two tables);
3. **documents**: the same, then the first per-document read, ``len(ev.documents)`` (the dashboard reads it
   lazily, only for intervals and paired comparisons); the time of that step alone is reported.

Load averages are printed with each row: on a shared machine CPU seconds are the fairer clock.
Prints figures and asserts nothing.
"""

from __future__ import annotations

import json
import os
import sys
import time
from pathlib import Path

from benchmarks.bench_stream import data_folder, generate, parse_size_options, timed

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent

RUN = "siblings"
OPEN = """
import json, resource, sys, time
t0 = time.perf_counter()
from cophe_core.scale.aggregate_reader import read_aggregate
t1 = time.perf_counter()
agg = read_aggregate(sys.argv[1])
t2 = time.perf_counter()
ev = agg.evaluation(sys.argv[2])
levels, nodes = ev.levels_table, ev.nodes
t3 = time.perf_counter()
out = {"import_s": t1 - t0, "read_s": t2 - t1, "tables_s": t3 - t2, "nodes": len(nodes),
       "page_peak_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024}
if sys.argv[3] == "documents":
    out["documents"] = len(ev.documents)
    out["documents_s"] = time.perf_counter() - t3
print(json.dumps(out))
"""


def write(folder: Path, out: Path, chunk_rows: int | None) -> dict:
    cmd = [sys.executable, "-m", "cophe_core", "aggregate", "--gold", str(folder / "gold")]
    cmd += ["--run", f"{RUN}={folder / 'pred'}", "--out", str(out), "--stream"]
    if chunk_rows:
        cmd += ["--chunk-rows", str(chunk_rows)]
    figures, _ = timed(cmd)
    return figures


def open_file(path: Path, what: str) -> dict:
    figures, stdout = timed([sys.executable, "-c", OPEN, str(path), RUN, what])
    return {**figures, **json.loads(stdout.strip().splitlines()[-1])}


def load() -> str:
    return "/".join(f"{x:.2f}" for x in os.getloadavg())


def main() -> None:
    args, sizes = parse_size_options(__doc__ or "", [1e6, 1e7], "*")
    print(f"machine: {os.cpu_count()} cores; load {load()}", flush=True)
    for n in sizes:
        with data_folder(args.keep, "cophe-agg-") as folder:
            t0 = time.perf_counter()
            data = generate(folder, n)
            gen = time.perf_counter() - t0
            print(
                f"\n{data['rows']:,} label rows, {data['documents']:,} documents, {data['files']} files, "
                f"{data['bytes'] / 2**20:.0f} MB of Parquet (generated in {gen:.1f} s; load {load()})",
                flush=True,
            )
            out = folder / "aggregate.cophe"
            w = write(folder, out, args.chunk_rows)
            size = out.stat().st_size / 2**20
            print(
                f"  write     cophe aggregate --stream: wall {w['wall_s']:.1f} s, CPU {w['cpu_s']:.1f} s, "
                f"{data['rows'] / w['cpu_s']:,.0f} rows per CPU s, peak {w['peak_mb']:.0f} MB; "
                f"file {size:.1f} MB (load {load()})",
                flush=True,
            )
            o = open_file(out, "page")
            print(
                f"  open      read_aggregate + levels_table + nodes ({o['nodes']:,} nodes), fresh process: "
                f"wall {o['wall_s']:.2f} s, CPU {o['cpu_s']:.2f} s, peak {o['peak_mb']:.0f} MB; inside: "
                f"imports {o['import_s']:.2f} s, read_aggregate {o['read_s']:.2f} s, "
                f"tables {o['tables_s']:.2f} s (load {load()})",
                flush=True,
            )
            d = open_file(out, "documents")
            print(
                f"  documents first len(ev.documents) ({d['documents']:,}): {d['documents_s']:.2f} s; process "
                f"with the page: wall {d['wall_s']:.2f} s, peak {d['peak_mb']:.0f} MB (page alone "
                f"{d['page_peak_mb']:.0f} MB) (load {load()})",
                flush=True,
            )


if __name__ == "__main__":
    main()
