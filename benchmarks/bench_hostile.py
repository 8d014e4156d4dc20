"""Hostile inputs: the cost of an input must grow with its rows and bytes, never with its longest value or the
width of a row.

    python benchmarks/bench_hostile.py           # the amplification file, the wide headers and lines
    python benchmarks/bench_hostile.py --dag     # also the 120 × 100 layered DAG (a 17 MB file)

Each case runs ``cophe score`` in its own process; the figures are its wall time and peak memory
(ru_maxrss of the child). Targets of issue 12, reported and not asserted:

- a 250 KB file of 20,000 rows and one 10,000-character code: ≤ 1 s and ≤ 300 MB (it took 12 s and 4.3 GB
  when codes were copied into fixed-width strings);
- a 50,000-column header: ≤ 2 s (26–34 s when line numbers were counted column by column);
- a hierarchy of 120 layers of 100 nodes, each node a child of every node of the layer above: ≤ 5 s.

Targets of issue 24 (point 7), the whole process: refused or read in ≤ 2 s and ≤ 300 MB. Before, a
1,000,000-column header took 224 s and 3.8 GB, one 1,000,001-field row 67 s and 2.6 GB, and a single 10 MB
line of commas ran for more than 300 s; each is now refused by a count of the first line's delimiters
(``cophe_core.base.files.check_width``, at most ``MAX_COLUMNS`` columns) before pandas builds its columns. A score
matrix of one column per code (9,000 codes: MIMIC-III-full has 8,921) is a legitimate format and is read.
"""

from __future__ import annotations

import argparse
import os
import random
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from functools import partial
from pathlib import Path

CODES = ["401.9", "428.0", "250.00", "584.9", "427.31"]


def amplification(folder: Path) -> list[str]:
    rng = random.Random(0)
    rows = (
        ["doc_id,code"] + [f"d{i // 8},{rng.choice(CODES)}" for i in range(20_000)] + ["d1," + "9" * 10_000]
    )
    (folder / "amp_gold.csv").write_text("\n".join(rows) + "\n")
    (folder / "amp_pred.csv").write_text("\n".join(rows[:15_000]) + "\n")
    return ["--gold", str(folder / "amp_gold.csv"), "--pred", str(folder / "amp_pred.csv")]


def wide_header(folder: Path) -> list[str]:
    header = ",".join(["doc_id", "code"] + [f"c{i}" for i in range(50_000)])
    rows = [",".join([f"d{i}", CODES[i % 5]] + [""] * 50_000) for i in range(3)]
    (folder / "wide.csv").write_text(header + "\n" + "\n".join(rows) + "\n")
    (folder / "wide_pred.csv").write_text("doc_id,code\nd0,401.9\nd1,428.0\n")
    return ["--gold", str(folder / "wide.csv"), "--pred", str(folder / "wide_pred.csv")]


def _with_pred(folder: Path, name: str, text: str, *, as_run: bool = False) -> list[str]:
    """``name`` written with ``text``, given as the gold file (or as the run, ``as_run``) beside a small one."""
    (folder / name).write_text(text)
    (folder / "small.csv").write_text("doc_id,code\nd0,401.9\nd1,428.0\n")
    wide, small = str(folder / name), str(folder / "small.csv")
    return ["--gold", small, "--pred", wide] if as_run else ["--gold", wide, "--pred", small]


def startup(folder: Path) -> list[str]:
    """Two files of two rows: the cost of starting Python and importing cophe, in every figure below."""
    return _with_pred(folder, "tiny.csv", "doc_id,code\nd0,401.9\nd1,428.0\n")


def million_header(folder: Path, *, as_run: bool = False, sep: str = ",") -> list[str]:
    header = sep.join(["doc_id", "code"] + [f"c{i}" for i in range(999_998)])
    rows = sep.join(["d0", "401.9"]) + "\n" + sep.join(["d1", "428.0"]) + "\n"
    return _with_pred(
        folder, f"million.{'tsv' if sep == chr(9) else 'csv'}", header + "\n" + rows, as_run=as_run
    )


def million_field_row(folder: Path) -> list[str]:
    """One row of 1,000,001 fields and nothing else: a file with no header, or a header gone wrong."""
    return _with_pred(folder, "row.csv", ",".join(["d0", "401.9"] + ["x"] * 999_999) + "\n")


def comma_line(folder: Path) -> list[str]:
    return _with_pred(folder, "commas.csv", "," * (10 * 2**20), as_run=True)


def score_matrix(folder: Path, codes: int = 9_000, docs: int = 200) -> list[str]:
    """A legitimate wide scores file: one column per code, a few high scores per document."""
    names = [f"{100 + i // 100}.{i % 100:02d}" for i in range(codes)]
    lines = [",".join(["_id", *names])]
    for d in range(docs):
        lines.append(",".join([f"d{d}"] + ["0.9" if (i + d) % 997 == 0 else "0" for i in range(codes)]))
    (folder / "matrix.csv").write_text("\n".join(lines) + "\n")
    gold = "doc_id,code\n" + "".join(f"d{d},{names[(997 - d % 997) % 997]}\n" for d in range(docs))
    (folder / "matrix_gold.csv").write_text(gold)
    return [
        "--gold",
        str(folder / "matrix_gold.csv"),
        "--pred",
        str(folder / "matrix.csv"),
        "--threshold",
        "0.5",
    ]


def layered_dag(folder: Path, layers: int = 120, width: int = 100) -> list[str]:
    lines = ["child,parent", "root,"] + [f"L0N{j},root" for j in range(width)]
    lines += [f"L{i}N{j},L{i - 1}N{k}" for i in range(1, layers) for j in range(width) for k in range(width)]
    (folder / "dag.csv").write_text("\n".join(lines) + "\n")
    leaf = f"L{layers - 1}N0"
    (folder / "dag_gold.csv").write_text(f"doc_id,code\nd0,{leaf}\n")
    return [
        "--gold",
        str(folder / "dag_gold.csv"),
        "--pred",
        str(folder / "dag_gold.csv"),
        "--ontology",
        str(folder / "dag.csv"),
    ]


def measure(args: list[str]) -> tuple[float, float, int, str]:
    """Wall seconds, peak MB and exit status of ``cophe score`` on ``args``, with its last stderr line."""
    t0 = time.perf_counter()
    proc = subprocess.Popen(
        [sys.executable, "-m", "cophe_core", "score", *args],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
    )
    _, status, usage = os.wait4(proc.pid, 0)
    wall = time.perf_counter() - t0
    err = proc.stderr.read().strip().splitlines() if proc.stderr else []
    return wall, usage.ru_maxrss / 1024, os.waitstatus_to_exitcode(status), (err[-1][:160] if err else "")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--dag", action="store_true", help="also the layered DAG")
    opts = ap.parse_args()
    cases: list[tuple[str, Callable[[Path], list[str]], str]] = [
        ("startup: two files of two rows", startup, "reported"),
        ("amplification: 20,000 rows + one 10,000-character code", amplification, "≤ 1 s, ≤ 300 MB"),
        ("wide: a 50,000-column header", wide_header, "≤ 2 s"),
        ("a 1,000,000-column header, the gold", million_header, "≤ 2 s, ≤ 300 MB"),
        ("a 1,000,000-column header, the run", partial(million_header, as_run=True), "≤ 2 s, ≤ 300 MB"),
        ("a 1,000,000-column header, TSV gold", partial(million_header, sep="\t"), "≤ 2 s, ≤ 300 MB"),
        ("one 1,000,001-field row", million_field_row, "≤ 2 s, ≤ 300 MB"),
        ("a single 10 MB line of commas, the run", comma_line, "≤ 2 s, ≤ 300 MB"),
        ("a score matrix: 200 documents × 9,000 codes (read)", score_matrix, "reported"),
    ]
    if opts.dag:
        cases.append(("DAG: 120 layers × 100 nodes, 1.19M edges", layered_dag, "≤ 5 s"))
    with tempfile.TemporaryDirectory(prefix="cophe_hostile_") as tmp:
        for label, build, target in cases:
            wall, mb, code, last = measure(build(Path(tmp)))
            print(f"{label:58} {wall:6.2f} s {mb:8.0f} MB  exit {code}  (target {target})")
            if last:
                print(f"    last message: {last}")
    print(f"load average {os.getloadavg()[0]:.2f}")


if __name__ == "__main__":
    main()
