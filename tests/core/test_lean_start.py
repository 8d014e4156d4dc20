"""A lean start: `cophe score` in memory with the table output loads only what it uses (issue 28)."""

from __future__ import annotations

import json
import subprocess
import sys

from tests.conftest import ROOT, SAMPLE

# Heavy modules that the in-memory score with a table never needs: family tests, the streamed reader,
# plotting, user hierarchies' graph library; and cophe's own that other commands and options use (slices,
# the bootstrap, the suite, the comparisons, families and trees of figures, the CSV writer).
NOT_NEEDED = (
    "scipy.stats",
    "pyarrow.dataset",
    "cophe_core.scale.pipeline",
    "cophe_core.output.plotting",
    "plotly",
    "networkx",
    "cophe_core.breakdown.slices",
    "cophe_core.breakdown.stats",
    "cophe_core.scoring.suite",
    "cophe_core.breakdown.compare",
    "cophe_core.breakdown.families",
    "cophe_core.breakdown.tree",
    "cophe_core.output.report",
)


def test_score_in_memory_loads_no_heavy_module_it_does_not_use():
    code = (
        "import sys, json, contextlib, io\n"
        "from cophe_core.cli import main\n"
        "with contextlib.redirect_stdout(io.StringIO()):\n"
        f"    rc = main(['score', '--gold', {str(SAMPLE / 'gold.csv')!r}, '--pred', "
        f"{str(SAMPLE / 'run_siblings.csv')!r}, '--ontology', 'icd9'])\n"
        "print(json.dumps([rc, sorted(sys.modules)]))\n"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT, check=True)
    rc, modules = json.loads(done.stdout.splitlines()[-1])
    assert rc == 0
    assert [m for m in NOT_NEEDED if m in modules] == []
