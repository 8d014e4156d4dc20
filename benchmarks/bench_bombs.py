"""Small files that would cost far more than they hold, opened as a shared dashboard opens them (issue 29). Each
is built here, then opened in its own process; the figures are that process's wall time and peak memory.

    python -m benchmarks.bench_bombs            # every case once
    python -m benchmarks.bench_bombs --ab 7     # the saved analysis within bounds against its plain files, 7 times
    python -m benchmarks.bench_bombs --ab 15 --before DIR  # and opened by the cophe checked out in DIR

Targets (issue 29, point 1), reported and not asserted: a file that breaks a bound is refused before the excess
is inflated or decoded, in ≤ 1 s of work and ≤ 300 MB for the whole process (which starts by importing cophe:
about 0.5 s on a quiet machine, the "startup" line); a file within the bounds costs no more than its members
scored as plain files (the "within bounds" line against the next; ``--ab N`` runs the two interleaved N times and
gives the medians of each and of their ratio). Before:

- an aggregate analysis of 1.2 MB whose ``ontology/nodes.parquet`` decodes to 1 GiB peaked at 2.2 GB;
- a 0.5 MB counts table whose footer declares 20,000,000 identical rows ran out of memory at 2.9 GB;
- a saved analysis holding a 100-199 MB gold standard, deflated to 0.15-0.29 MB, was scored at 2.4-4.5 GB;
- a 32,766-deep chain hierarchy (0.4 MB) peaked at 5.3 GB; a 10,000-node cycle printed all its rows (296 KB).
"""

from __future__ import annotations

import hashlib
import io
import json
import os
import subprocess
import sys
import tempfile
import time
import zipfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
SAMPLE = ROOT / "sample_data" / "icd9"
OPEN_AGGREGATE = (
    "import sys; from cophe_core.scale.aggregate_reader import read_aggregate; read_aggregate(sys.argv[1])"
)
SCORE_PLAIN = (
    "import sys; from cophe_core import score_files; "
    "score_files(sys.argv[1], {'run': sys.argv[2]}).evaluation('run')"
)
OPEN_SAVED = (
    "import sys; from pathlib import Path; from cophe_core.output.analysis import read_analysis, score_analysis; "
    "score_analysis(read_analysis(Path(sys.argv[1]).read_bytes(), name=Path(sys.argv[1]).name))"
)


def _rewrite(data: bytes, members: dict[str, bytes]) -> bytes:
    """The zip with ``members`` replaced and the manifest's size and SHA-256 of each made to match: a forgery
    that only the checks of the tables themselves can catch."""
    src = zipfile.ZipFile(io.BytesIO(data))
    manifest = json.loads(src.read("manifest.json"))
    for name, content in members.items():
        digest = {"size": len(content), "sha256": hashlib.sha256(content).hexdigest()}
        if "members" in manifest:
            manifest["members"][name] = digest
        for entry in manifest.get("inputs", []):
            if entry["member"] == name:
                entry.update(digest)
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w", zipfile.ZIP_DEFLATED) as z:
        for info in src.infolist():
            content = members.get(info.filename, src.read(info))
            if info.filename == "manifest.json":
                content = json.dumps(manifest).encode()
            z.writestr(info.filename, content)
    return out.getvalue()


def _aggregate() -> bytes:
    from cophe_core import score_files
    from cophe_core.scale.aggregate import aggregate_scoring, write_aggregate

    scoring = score_files(SAMPLE / "gold.csv", {"A": SAMPLE / "run_overcoder.csv"})
    data = write_aggregate(aggregate_scoring(scoring))
    assert data is not None  # no target: the bytes
    return data


def nodes_bomb(folder: Path) -> list[str]:
    """The sample's aggregate whose node titles are one 48,000-character value, repeated: 1 GiB decoded."""
    import numpy as np
    import pyarrow as pa
    import pyarrow.parquet as pq

    data = _aggregate()
    nodes = pq.read_table(io.BytesIO(zipfile.ZipFile(io.BytesIO(data)).read("ontology/nodes.parquet")))
    title = pa.DictionaryArray.from_arrays(
        pa.array(np.zeros(nodes.num_rows, dtype=np.int32)), pa.array(["x" * 48_000])
    )
    sink = io.BytesIO()
    pq.write_table(
        nodes.set_column(nodes.column_names.index("title"), "title", title), sink, compression="zstd"
    )
    path = folder / "nodes_bomb.cophe"
    path.write_bytes(_rewrite(data, {"ontology/nodes.parquet": sink.getvalue()}))
    return ["-c", OPEN_AGGREGATE, str(path)]


def counts_bomb(folder: Path) -> list[str]:
    """The sample's aggregate whose counts table declares 20,000,000 identical rows (run-length encoded)."""
    import numpy as np
    import pyarrow as pa
    import pyarrow.parquet as pq

    data = _aggregate()
    counts = pq.read_table(io.BytesIO(zipfile.ZipFile(io.BytesIO(data)).read("counts.parquet")))
    sink = io.BytesIO()
    zeros = {c: pa.array(np.zeros(1_000_000, dtype=np.int64)) for c in counts.column_names}
    with pq.ParquetWriter(sink, pa.table(zeros).schema, compression="zstd") as w:
        for _ in range(20):
            w.write_table(pa.table(zeros))
    path = folder / "counts_bomb.cophe"
    path.write_bytes(_rewrite(data, {"counts.parquet": sink.getvalue()}))
    return ["-c", OPEN_AGGREGATE, str(path)]


def saved_bomb(folder: Path) -> list[str]:
    """A saved analysis holding a 150 MB gold standard (one row repeated), deflated to a few hundred kB."""
    from cophe_core.output.analysis import Analysis, InputFile, write_analysis

    small = write_analysis(
        Analysis(
            InputFile("gold.csv", b"doc_id,code\n1,401.9\n"), {"A": InputFile("a.csv", b"doc_id,code\n")}
        )
    )
    member = next(n for n in zipfile.ZipFile(io.BytesIO(small)).namelist() if "gold" in n)
    big = b"doc_id,code\n" + b"1,401.9\n" * (150 * 2**20 // 8)
    path = folder / "saved_bomb.cophe"
    path.write_bytes(_rewrite(small, {member: big}))
    return ["-c", OPEN_SAVED, str(path)]


def _within_bounds(folder: Path, copies: int = 90) -> tuple[Path, Path]:
    """The sample's gold standard and a run, each repeated ``copies`` times under new document ids (a 26 MB
    gold standard, within the saved analysis's 50 MB bound, and a 24 MB run; 9.8 MB deflated)."""
    out = []
    for name in ("gold.csv", "run_siblings.csv"):
        header, *rows = (SAMPLE / name).read_text().splitlines()
        text = "\n".join([header] + [f"c{k}-{row}" for k in range(copies) for row in rows]) + "\n"
        (folder / f"big_{name}").write_text(text)
        out.append(folder / f"big_{name}")
    return out[0], out[1]


def saved_within_bounds(folder: Path) -> list[str]:
    """A saved analysis within its bounds, opened and scored: to cost no more than :func:`plain_files`."""
    from cophe_core.output.analysis import analysis_from_files, write_analysis

    gold, run = _within_bounds(folder)
    path = folder / "within.cophe"
    path.write_bytes(write_analysis(analysis_from_files(gold, {"run": run}, options={})))
    return ["-c", OPEN_SAVED + ".evaluation('run')", str(path)]


def plain_files(folder: Path) -> list[str]:
    """The same two files as :func:`saved_within_bounds`'s, scored as plain files."""
    gold, run = _within_bounds(folder)
    return ["-c", SCORE_PLAIN, str(gold), str(run)]


def _scored_against(folder: Path, name: str, hierarchy: str) -> list[str]:
    """``cophe score`` of a one-code file against the hierarchy ``hierarchy`` (CSV text), written as ``name``."""
    (folder / name).write_text(hierarchy)
    gold = folder / "h_gold.csv"
    gold.write_text("doc_id,code\n1,n5\n")
    return [
        "-m",
        "cophe_core",
        "score",
        "--gold",
        str(gold),
        "--pred",
        str(gold),
        "--ontology",
        str(folder / name),
    ]


def chain(folder: Path, n: int = 32_766) -> list[str]:
    return _scored_against(
        folder, "chain.csv", "child,parent\nn0,\n" + "".join(f"n{i + 1},n{i}\n" for i in range(n - 1))
    )


def cycle(folder: Path, n: int = 10_000) -> list[str]:
    rows = "child,parent\nroot,\nn0,root\n" + "".join(f"n{(i + 1) % n},n{i}\n" for i in range(n))
    return _scored_against(folder, "cycle.csv", rows)


def startup(folder: Path) -> list[str]:
    return ["-c", "import cophe_core.scale.aggregate, cophe_core.output.analysis"]


def measure(args: list[str]) -> tuple[float, float, int, str, int]:
    """Wall seconds, peak MB, exit status, the last stderr line and the bytes written to stderr."""
    wall, _, _, mb, code, last, said = measure_cpu(args)
    return wall, mb, code, last, said


def measure_cpu(args: list[str], cwd: Path | None = None) -> tuple[float, float, float, float, int, str, int]:
    """Wall seconds, user and system CPU seconds, peak MB, exit status, the last stderr line and the bytes
    written to stderr (run in ``cwd``, whose ``cophe_core`` a ``-c`` command imports first)."""
    t0 = time.perf_counter()
    proc = subprocess.Popen(
        [sys.executable, *args], stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True, cwd=cwd
    )
    err = proc.stderr.read() if proc.stderr else ""
    _, status, usage = os.wait4(proc.pid, 0)
    wall = time.perf_counter() - t0
    lines = err.strip().splitlines()
    return (
        wall,
        usage.ru_utime,
        usage.ru_stime,
        usage.ru_maxrss / 1024,
        os.waitstatus_to_exitcode(status),
        (lines[-1][:200] if lines else ""),
        len(err),
    )


def build(folder: Path, only: list[str] | None = None) -> None:
    """Write every case's files (or those of the cases labelled ``only``) into ``folder`` and their command
    lines to ``cases.json`` (run in a child of its own, so that the memory the building takes is not counted in
    the figures of the processes measured: a forked child's peak memory starts from its parent's)."""
    cases = {label: make(folder) for label, make in CASES if not only or label in only}
    (folder / "cases.json").write_text(json.dumps(cases))


AB = ("saved analysis within bounds (26 + 24 MB), scored", "  the same two files scored as plain files")


def _median(values: list[float]) -> float:
    return sorted(values)[len(values) // 2]


def ab(folder: Path, rounds: int, before: Path | None = None) -> None:
    """The saved analysis within bounds and its members as plain files, one after the other ``rounds`` times
    (interleaved, so that a change of the machine's load falls on both), and with ``before`` (a checkout of
    another version of cophe) the saved analysis opened by that version too: the medians of each one's wall
    time, user and system CPU and peak memory, and of each saved analysis's CPU over the plain files' in each
    round (user and system, then user alone: the system's share, page faults mostly, varies most with the
    load); the load averages before and after."""
    cases = json.loads((folder / "cases.json").read_text())
    runs: dict[str, tuple[list[str], Path | None]] = {label: (cases[label], None) for label in AB}
    if before is not None:
        runs[f"  the saved analysis opened by the cophe in {before}"] = (cases[AB[0]], before)
    print(f"load averages before {os.getloadavg()}")
    got: dict[str, list[tuple[float, float, float, float]]] = {label: [] for label in runs}
    for _ in range(rounds):
        for label, (args, cwd) in runs.items():
            wall, user, system, mb, code, last, _ = measure_cpu(args, cwd)
            if code:
                raise SystemExit(f"{label}: exit {code}: {last}")
            got[label].append((wall, user, system, mb))
    for label, measured in got.items():
        wall, user, system, mb = (_median([r[i] for r in measured]) for i in range(4))
        print(
            f"{label:50} median {wall:5.2f} s wall, {user:5.2f} s user + {system:4.2f} s system CPU, {mb:4.0f} MB  "
            f"(CPU {' '.join(f'{r[1] + r[2]:.2f}' for r in measured)})"
        )
    plain = got[AB[1]]
    for label, short in zip([AB[0], *list(runs)[2:]], ["saved analysis", "saved analysis, cophe before"]):
        saved = got[label]
        both = _median([(s[1] + s[2]) / (p[1] + p[2]) for s, p in zip(saved, plain, strict=True)])
        user = _median([s[1] / p[1] for s, p in zip(saved, plain, strict=True)])
        print(f"{short} / plain files, median of the rounds: CPU {both:.3f}, user CPU {user:.3f}")
    print(f"load averages after {os.getloadavg()}")


def main() -> None:
    if len(sys.argv) >= 3 and sys.argv[1] == "--build":
        build(Path(sys.argv[2]), sys.argv[3:])
        return
    if len(sys.argv) in (3, 5) and sys.argv[1] == "--ab":
        before = Path(sys.argv[4]).resolve() if len(sys.argv) == 5 and sys.argv[3] == "--before" else None
        with tempfile.TemporaryDirectory(prefix="cophe_bombs_") as tmp:
            subprocess.run([sys.executable, __file__, "--build", tmp, *AB], check=True)
            ab(Path(tmp), int(sys.argv[2]), before)
        return
    with tempfile.TemporaryDirectory(prefix="cophe_bombs_") as tmp:
        subprocess.run([sys.executable, __file__, "--build", tmp], check=True)
        for label, args in json.loads((Path(tmp) / "cases.json").read_text()).items():
            size = max((Path(a).stat().st_size for a in args if Path(a).is_file()), default=0)
            wall, mb, code, last, said = measure(args)
            print(
                f"{label:50} file {size / 2**20:6.2f} MB  {wall:6.2f} s {mb:7.0f} MB  exit {code}  stderr {said:,} B"
            )
            if last:
                print(f"    {last}")
    print(f"load average {os.getloadavg()[0]:.2f}")


CASES = [
    ("startup: importing cophe's readers", startup),
    ("aggregate, nodes.parquet decoding to 1 GiB", nodes_bomb),
    ("aggregate, counts.parquet of 20,000,000 RLE rows", counts_bomb),
    ("saved analysis, a 150 MB gold standard deflated", saved_bomb),
    ("saved analysis within bounds (26 + 24 MB), scored", saved_within_bounds),
    ("  the same two files scored as plain files", plain_files),
    ("hierarchy, a chain 32,766 deep", chain),
    ("hierarchy, a cycle of 10,000 nodes", cycle),
]


if __name__ == "__main__":
    main()
