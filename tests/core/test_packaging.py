"""The declared dependencies: lower bounds equal the versions the lowest-versions run installs."""

from __future__ import annotations

import re
import tomllib

import pytest

from tests.conftest import ROOT

_REQ = re.compile(r"^([A-Za-z0-9_.\-]+)(?:\[[^\]]*\])?\s*(?:>=\s*([0-9][^,;\s]*))?")


def _name(raw: str) -> str:
    return re.sub(r"[-_.]+", "-", raw).lower()


def _release(version: str) -> tuple[int, ...]:
    """``"1.12"`` and ``"1.12.0"`` alike: the release numbers without trailing zeros."""
    parts = [int(x) for x in version.split(".")]
    while parts and parts[-1] == 0:
        parts.pop()
    return tuple(parts)


def declared_lower_bounds() -> dict[str, str | None]:
    """Every third-party requirement of pyproject.toml (runtime and extras) → its ``>=`` bound."""
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    reqs = list(project["dependencies"])
    for extra in project["optional-dependencies"].values():
        reqs += extra
    out: dict[str, str | None] = {}
    for req in reqs:
        m = _REQ.match(req)
        assert m, req
        if _name(m.group(1)) != _name(project["name"]):
            out[_name(m.group(1))] = m.group(2)
    return out


def lowest_pins() -> dict[str, str]:
    pins = {}
    for line in (ROOT / "constraints-lowest.txt").read_text().splitlines():
        line = line.split("#")[0].strip()
        if line:
            name, _, version = line.partition("==")
            pins[_name(name)] = version.strip()
    return pins


def test_every_requirement_has_a_lower_bound_pinned_in_the_lowest_constraints():
    bounds = declared_lower_bounds()
    assert {"numpy", "scipy", "simple-icd-10-cm", "networkx", "streamlit"} <= set(bounds)
    missing = [name for name, bound in bounds.items() if bound is None]
    assert not missing, f"requirements without a lower bound: {missing}"
    pins = lowest_pins()
    assert set(pins) == set(bounds)
    assert {n: _release(v) for n, v in pins.items()} == {n: _release(v) for n, v in bounds.items()}


def test_requirements_txt_installs_the_project_with_the_dashboard():
    lines = [
        ln.strip()
        for ln in (ROOT / "requirements.txt").read_text().splitlines()
        if ln.strip() and not ln.startswith("#")
    ]
    assert lines == ["-e .[dashboard]"]


@pytest.mark.once  # what the core imports does not change with a library's version
def test_the_core_never_imports_streamlit_and_only_its_plotting_module_needs_plotly():
    """Every cophe_core module imports with Streamlit made unimportable, and every one but
    cophe_core.output.plotting (the optional extra "plot"), and the old path that re-exports it, with Plotly
    made unimportable too. The torchmetrics metric (the optional extra "torch") is imported only where
    torchmetrics is installed."""
    import subprocess
    import sys

    code = (
        "import sys, pkgutil, importlib, importlib.util\n"
        "sys.modules['streamlit'] = None\n"
        "blocked = sys.argv[1] == 'without-plotly'\n"
        "if blocked: sys.modules['plotly'] = None\n"
        "import cophe_core\n"
        "names = [m.name for m in pkgutil.walk_packages(cophe_core.__path__, 'cophe_core.')]\n"
        "if importlib.util.find_spec('torchmetrics') is None:\n"
        "    names.remove('cophe_core.integrations.torchmetrics')\n"
        "for name in names:\n"
        "    if not (blocked and name.endswith('.plotting')):\n"
        "        importlib.import_module(name)\n"
        "print('ok', len(names), sys.modules.get('plotly') is not None)"
    )
    for mode, plotly_loaded in (("without-plotly", "False"), ("with-plotly", "True")):
        out = subprocess.run([sys.executable, "-c", code, mode], capture_output=True, text=True, cwd=ROOT)
        assert out.returncode == 0, out.stderr
        ok, n, loaded = out.stdout.split()
        assert ok == "ok" and int(n) > 25 and loaded == plotly_loaded
    bare = subprocess.run(
        [sys.executable, "-c", "import sys, cophe_core; print('plotly' in sys.modules)"],
        capture_output=True,
        text=True,
    )
    assert bare.stdout.strip() == "False"  # importing the package does not load Plotly
