"""The layers of cophe_core (docs/architecture.md, "Layers"): every import, function-level and
``TYPE_CHECKING`` ones included, points down the layers or stays in its own group, and the import graph has
no cycle.

Run it to see the graph: ``python tests/core/test_architecture.py [path/to/cophe_core]`` prints the modules,
the imports, the cycles and the imports across layers that the rule forbids.
"""

from __future__ import annotations

import ast
import sys
from pathlib import Path

import networkx as nx
import pytest

# nothing a library version changes: run once, with the latest versions (scripts/test.sh)
pytestmark = pytest.mark.once

ROOT = Path(__file__).resolve().parents[2]
PACKAGE = ROOT / "cophe_core"

# Lowest first. A module may import its own group and the groups of lower rank.
RANKS = {
    "base": 0,  # files, options: bytes and text, InputError, the messages' wording
    "ontology": 1,  # code systems and hierarchies
    "inputs": 2,  # readers, archive, datasets, synthetic samples
    "scoring": 3,  # labels, the counting kernel, metrics, decisions and scores, the ICM suite
    "api": 4,  # the functional API: score_files, score_labels, Scoring
    "breakdown": 5,  # error analysis: stats, compare, families, substitutions, slices, documents, tree
    "output": 6,  # plotting, reports, figure and table exports, saved analyses and the .cophe manifest
    "scale": 7,  # streamed sources, spill, pipeline, Dask, the accumulator, aggregate analyses (.cophe files too)
    "integrations": 8,  # other tools' APIs: MLflow, torchmetrics
    "package": 9,  # cophe_core/__init__.py: the names users import
    "cli": 10,  # the command, and python -m cophe_core
    "shim": 11,  # an old documented path kept for user code: nothing in the package imports one
}
# the modules at the top of the package, by group (a subpackage's modules take its name)
TOP = {"metrics": "scoring", "api": "api", "cli": "cli", "__main__": "cli"}


def module_name(path: Path, root: Path) -> str:
    """``cophe_core/scale/pipeline.py`` → ``cophe_core.scale.pipeline``; a package's ``__init__`` is the package."""
    parts = list(path.relative_to(root.parent).with_suffix("").parts)
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def is_shim(path: Path) -> bool:
    """An old path kept for user code: its docstring says where the module moved."""
    doc = ast.get_docstring(ast.parse(path.read_text())) or ""
    return doc.startswith("Moved to ")


def group(module: str, root: Path) -> str:
    """The layer group of a module of the package."""
    parts = module.split(".")[1:]
    if not parts:
        return "package"
    path = root.joinpath(*parts)
    if not path.is_dir() and is_shim(path.with_suffix(".py")):
        return "shim"
    return TOP.get(parts[0], parts[0]) if len(parts) == 1 and not path.is_dir() else parts[0]


def imported(node: ast.Import | ast.ImportFrom, module: str, is_pkg: bool) -> list[str]:
    """The absolute names an import statement reads: ``from .a import b`` → [``pkg.a.b``] and ``pkg.a``
    (the caller keeps those that are modules)."""
    if isinstance(node, ast.Import):
        return [a.name for a in node.names]
    base = module
    if node.level:
        parts = module.split(".")
        parts = parts if is_pkg else parts[:-1]
        parts = parts[: len(parts) - (node.level - 1)]
        base = ".".join(parts + ([node.module] if node.module else []))
    else:
        base = node.module or ""
    return [base, *(f"{base}.{a.name}" for a in node.names)]


def graph(root: Path = PACKAGE) -> nx.DiGraph:
    """Modules of the package and who imports whom. ``from pkg import sub`` is an import of the module
    ``pkg.sub`` (not of ``pkg``, unless a name of ``pkg`` itself is imported too); an import of a package the
    importing module is inside is left out, since Python always imports a module's packages first."""
    paths = {module_name(p, root): p for p in sorted(root.rglob("*.py"))}
    g = nx.DiGraph()
    g.add_nodes_from(paths)
    for name, path in paths.items():
        is_pkg = path.name == "__init__.py"
        for node in ast.walk(ast.parse(path.read_text())):
            if not isinstance(node, ast.Import | ast.ImportFrom):
                continue
            names = imported(node, name, is_pkg)
            if isinstance(node, ast.ImportFrom):
                base, members = names[0], names[1:]
                found = [m for m in members if m in paths]
                targets = found + ([base] if len(found) < len(members) else [])
            else:
                targets = names
            for t in targets:
                while t and t not in paths:  # import a.b.c as x: the module a.b.c, else a.b
                    t = t.rpartition(".")[0]
                if t and t != name and not name.startswith(t + "."):
                    g.add_edge(name, t)
    return g


def forbidden(g: nx.DiGraph, root: Path = PACKAGE) -> list[str]:
    """The imports that point up the layers, or across groups of one rank."""
    out = []
    for a, b in g.edges:
        ga, gb = group(a, root), group(b, root)
        if ga in RANKS and gb in RANKS and ga != gb and not RANKS[gb] < RANKS[ga]:
            out.append(f"{a} ({ga}) imports {b} ({gb})")
    return sorted(out)


def without_layer(g: nx.DiGraph, root: Path = PACKAGE) -> list[str]:
    """The modules of no group of RANKS (a new module at the top of the package: give it its place)."""
    return sorted(m for m in g if group(m, root) not in RANKS)


def describe(root: Path) -> str:
    g = graph(root)
    cycles = sorted(nx.simple_cycles(g), key=lambda c: (len(c), c))
    shims = [m for m in g if group(m, root) == "shim"]
    code = g.subgraph(m for m in g if m not in shims)
    lines = [f"{len(g)} modules, {g.number_of_edges()} imports, {len(cycles)} cycles"]
    if shims:
        lines[0] += f" ({len(shims)} of them shims at old paths; without them: {len(code)} modules, "
        lines[0] += f"{code.number_of_edges()} imports)"
    lines += ["  cycle: " + " -> ".join([*c, c[0]]) for c in cycles]
    if (root / "base").is_dir():
        lines += ["  forbidden: " + f for f in forbidden(g, root)]
        lines += ["  no layer: " + m for m in without_layer(g, root)]
    return "\n".join(lines)


def test_every_module_has_a_layer():
    assert without_layer(graph()) == []


def test_the_import_graph_has_no_cycle():
    assert sorted(nx.simple_cycles(graph())) == []


def test_every_import_points_down_the_layers():
    assert forbidden(graph()) == []


def test_the_graph_sees_every_kind_of_import(tmp_path):
    """A function-level import, a TYPE_CHECKING one, ``from . import sub``, ``import a.b as x``: each is an
    edge; an import of the module's own package is not."""
    pkg = tmp_path / "cophe_core"
    (pkg / "low").mkdir(parents=True)
    (pkg / "__init__.py").write_text("__version__ = '1'\n")
    (pkg / "low" / "__init__.py").write_text("")
    (pkg / "low" / "a.py").write_text("from . import b\nfrom .. import __version__\n")
    (pkg / "low" / "b.py").write_text("def f():\n    from ..top import g\n")
    (pkg / "top.py").write_text(
        "from typing import TYPE_CHECKING\nimport cophe_core.low.a as a\nif TYPE_CHECKING:\n    from .low.b import f\n"
        "def g():\n    pass\n"
    )
    g = graph(pkg)
    assert sorted(g.edges) == [
        ("cophe_core.low.a", "cophe_core.low.b"),
        ("cophe_core.low.b", "cophe_core.top"),
        ("cophe_core.top", "cophe_core.low.a"),
        ("cophe_core.top", "cophe_core.low.b"),
    ]
    assert sorted(map(sorted, nx.simple_cycles(g))) == [
        ["cophe_core.low.a", "cophe_core.low.b", "cophe_core.top"],
        ["cophe_core.low.b", "cophe_core.top"],
    ]


@pytest.mark.parametrize(
    ("source", "expected"),
    [
        (
            "from ..breakdown.stats import bootstrap\n",
            ["cophe_core.scoring.kernel (scoring) imports cophe_core.breakdown.stats (breakdown)"],
        ),
        (
            "from ..output.plotting import x\n",
            ["cophe_core.scoring.kernel (scoring) imports cophe_core.output.plotting (output)"],
        ),
        (
            "def f():\n    from ..stats import y\n",
            ["cophe_core.scoring.kernel (scoring) imports cophe_core.stats (shim)"],
        ),
        ("from ..base.files import InputError\nfrom .labels import z\n", []),
    ],
)
def test_an_import_up_the_layers_is_named(tmp_path, source, expected):
    """A kernel module reaching up (to the error analysis, to the charts, to an old path) is named; one
    reaching down or into its own group is not."""
    pkg = tmp_path / "cophe_core"
    for sub in ("base", "scoring", "breakdown", "output"):
        (pkg / sub).mkdir(parents=True)
        (pkg / sub / "__init__.py").write_text("")
    (pkg / "__init__.py").write_text("")
    (pkg / "base" / "files.py").write_text("InputError = ValueError\n")
    (pkg / "scoring" / "labels.py").write_text("z = 1\n")
    (pkg / "breakdown" / "stats.py").write_text("bootstrap = y = 1\n")
    (pkg / "output" / "plotting.py").write_text("x = 1\n")
    (pkg / "stats.py").write_text(
        '"""Moved to cophe_core.breakdown.stats; this path stays for existing code."""\n'
    )
    (pkg / "scoring" / "kernel.py").write_text(source)
    assert forbidden(graph(pkg), pkg) == expected


if __name__ == "__main__":
    print(describe(Path(sys.argv[1]).resolve() if len(sys.argv) > 1 else PACKAGE))
