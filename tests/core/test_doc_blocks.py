"""Every Python and shell block of README.md and docs/*.md runs as written.

The blocks of one document run in order in a new folder (where ``sample_data`` is the checkout's), so a block
may use what an earlier one made: Python blocks share one namespace, shell blocks run with ``bash -euo
pipefail`` and the test environment's ``cophe`` and ``python`` first on PATH. A block that cannot run here is
marked in the Markdown by ``<!-- not run: REASON -->`` on the line before it, and listed in ``NOT_RUN``
below, so that the exceptions cannot grow unseen.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

import pytest

from tests.conftest import ROOT

# nothing a library version changes: run once, with the latest versions (scripts/test.sh)
pytestmark = pytest.mark.once

DOCUMENTS = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
LANGUAGES = {"python": "python", "py": "python", "bash": "shell", "sh": "shell", "shell": "shell"}
FENCE = re.compile(r"^```\s*([\w-]*)\s*$")
MARK = re.compile(r"^<!--\s*not run:\s*(.+?)\s*-->$")

# (document, the block's first line) → why it does not run here.
NOT_RUN = {
    ("README.md", "python3 -m venv .venv && . .venv/bin/activate"): (
        "makes an environment, installs from the network and starts the dashboard"
    ),
    ("README.md", "bash scripts/test.sh"): "the test command itself",
    (
        "README.md",
        'rows = gold.withColumn("side", F.lit(0)).unionByName(pred.withColumn("side", F.lit(1)))',
    ): ("needs a Spark session"),
}


@dataclass(frozen=True)
class Block:
    document: str
    line: int  # of the opening fence
    language: str  # "python" or "shell"
    code: str
    not_run: str | None  # the reason given in the Markdown

    @property
    def first_line(self) -> str:
        return self.code.strip().splitlines()[0]


def blocks(path: Path) -> list[Block]:
    """The Python and shell blocks of a Markdown file, in order, with their not-run marks."""
    found, lines = [], path.read_text(encoding="utf-8").splitlines()
    i = 0
    while i < len(lines):
        fence = FENCE.match(lines[i])
        if not fence:
            i += 1
            continue
        end = next(j for j in range(i + 1, len(lines)) if lines[j].startswith("```"))
        before = next((lines[j].strip() for j in range(i - 1, -1, -1) if lines[j].strip()), "")
        mark = MARK.match(before)
        if fence.group(1).lower() in LANGUAGES:
            language = LANGUAGES[fence.group(1).lower()]
            code = "\n".join(lines[i + 1 : end]) + "\n"
            found.append(Block(path.name, i + 1, language, code, mark.group(1) if mark else None))
        i = end + 1
    return found


def test_the_blocks_not_run_are_the_listed_ones():
    marked = {(b.document, b.first_line): b.not_run for d in DOCUMENTS for b in blocks(d) if b.not_run}
    assert marked.keys() == NOT_RUN.keys()
    for key, reason in NOT_RUN.items():
        assert reason in marked[key], key
    assert len(marked) == 3  # raise only with a reason a reviewer accepts


def test_the_documents_have_runnable_blocks():
    """The parser finds the blocks (a changed fence style would otherwise pass the test with nothing run)."""
    readme = [b for b in blocks(ROOT / "README.md") if not b.not_run]
    assert {b.language for b in readme} == {"python", "shell"} and len(readme) >= 7


def run_shell(block: Block, cwd: Path) -> None:
    bin_dir = Path(sys.executable).parent  # the environment's cophe and python
    assert (bin_dir / "cophe").exists(), f"no cophe in {bin_dir}: install the package (pip install -e .)"
    env = {
        **os.environ,
        "PATH": f"{bin_dir}{os.pathsep}{os.environ.get('PATH', '')}",
        "PYTHONPATH": str(ROOT),  # this checkout's code, whichever checkout the environment was made from
    }
    done = subprocess.run(
        ["bash", "-euo", "pipefail", "-c", block.code], cwd=cwd, env=env, capture_output=True, text=True
    )
    assert done.returncode == 0, f"{block.document}:{block.line} exited {done.returncode}:\n{done.stderr}"


@pytest.mark.parametrize("document", DOCUMENTS, ids=lambda p: p.name)
def test_every_block_runs_as_written(document, tmp_path, monkeypatch):
    (tmp_path / "sample_data").symlink_to(ROOT / "sample_data", target_is_directory=True)
    monkeypatch.chdir(tmp_path)
    monkeypatch.syspath_prepend(str(ROOT))
    namespace: dict = {"__name__": "__doc_block__"}
    for block in blocks(document):
        if block.not_run:
            continue
        if block.language == "python":
            exec(compile(block.code, f"{block.document}:{block.line}", "exec"), namespace)  # our own docs
        else:
            run_shell(block, tmp_path)
