"""A lean start: `cophe score` in memory with the table output loads only what it uses (issue 28)."""

from __future__ import annotations

import json
import subprocess
import sys

from tests.conftest import ROOT, SAMPLE

# Heavy modules that the in-memory score with a table never needs: family tests, the streamed reader,
# plotting, user hierarchies' graph library, numpy's Fortran wrapper generator and test tools (which SciPy's
# array-API layer would import through scipy.sparse: cophe_core/base/lean.py); and cophe's own that other commands and options use (slices,
# the bootstrap, the suite, the comparisons, families and trees of figures, the CSV writer).
NOT_NEEDED = (
    "scipy.stats",
    "numpy.f2py",
    "numpy.testing",
    "numpy.ctypeslib",
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
    "asyncio",  # the figure command's drawing child alone uses it
)


def _version(module: str) -> tuple[int, ...]:
    """A package's release as numbers, (1, 15) for "1.15.2"."""
    import importlib

    return tuple(int(p) for p in importlib.import_module(module).__version__.split(".")[:2])


# numpy's tools are kept out where only SciPy's array-API copy of numpy's namespace would import them: SciPy
# 1.15 and later, with numpy 2. SciPy before 1.15 imports numpy.testing itself, and numpy before 2 imports
# numpy.ctypeslib on import (the lowest versions the package supports): nothing for cophe to keep out there.
KEPT_OUT = _version("scipy") >= (1, 15) and _version("numpy") >= (2, 0)
NUMPY_TOOLS = ("numpy.f2py", "numpy.testing", "numpy.ctypeslib")


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
    expected_absent = [m for m in NOT_NEEDED if KEPT_OUT or m not in NUMPY_TOOLS]
    assert [m for m in expected_absent if m in modules] == []


def test_numpy_keeps_its_namespace_and_its_tools_after_the_lean_import():
    """scipy.sparse is imported with numpy's unused tools hidden for that one import only: afterwards numpy
    lists the same names as in a process without cophe, and its tools still import on first use."""
    # dir(numpy) is compared from numpy 2 on, where its __dir__ is a fixed list: before, it lists every submodule
    # loaded so far, which differs with whatever else a process imports
    listed = "dir(numpy)" if _version("numpy") >= (2, 0) else "[]"
    names = f"import numpy, json; print(json.dumps([sorted(numpy.__all__), {listed}]))"
    plain = subprocess.run([sys.executable, "-c", names], capture_output=True, text=True, check=True)
    after = subprocess.run(
        [
            sys.executable,
            "-c",
            f"import cophe_core, sys; assert {not KEPT_OUT} or 'numpy.testing' not in sys.modules; {names}",
        ],
        capture_output=True,
        text=True,
        cwd=ROOT,
        check=True,
    )
    assert json.loads(after.stdout) == json.loads(plain.stdout)
    # numpy 2 loads its tools on first use of the name; numpy before 2 when imported by name
    tools = "numpy" if _version("numpy") >= (2, 0) else "numpy.testing, numpy.f2py"
    used = f"import cophe_core, {tools}; numpy.testing.assert_equal(1, 1); print(numpy.f2py.__name__)"
    done = subprocess.run([sys.executable, "-c", used], capture_output=True, text=True, cwd=ROOT, check=True)
    assert done.stdout.strip() == "numpy.f2py"
