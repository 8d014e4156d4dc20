"""CONTRIBUTING's "Where a change goes" table names every module of cophe_core and of the dashboard by its
path, and every path it names exists: a newcomer finds where a metric, a code system, a page or an input format
goes from the guide alone."""

from __future__ import annotations

import ast
import re
from pathlib import Path

from tests.conftest import ROOT


def section(text: str, title: str) -> str:
    """The Markdown section under ``## title``, up to the next ``## ``."""
    start = text.index(f"## {title}\n")
    end = text.find("\n## ", start + 1)
    return text[start : end if end >= 0 else len(text)]


def named(table: str) -> set[str]:
    """The ``.py`` paths a table names (``cophe_core/scale/spill.py``)."""
    return set(re.findall(r"`((?:cophe_core|dashboard)/[\w/]+\.py)`", table))


def only_a_docstring(path: Path) -> bool:
    body = ast.parse(path.read_text()).body
    return all(isinstance(n, ast.Expr) and isinstance(n.value, ast.Constant) for n in body)


def is_shim(path: Path) -> bool:
    return (ast.get_docstring(ast.parse(path.read_text())) or "").startswith("Moved to ")


def modules(root: Path = ROOT) -> set[str]:
    """Every module with code of its own: a subpackage's bare ``__init__`` and the old paths' shims are not."""
    paths = [*(root / "cophe_core").rglob("*.py"), *(root / "dashboard").rglob("*.py")]
    return {
        str(p.relative_to(root))
        for p in paths
        if not only_a_docstring(p) and not is_shim(p) and "__pycache__" not in p.parts
    }


def test_the_table_names_every_module_and_nothing_else():
    table = named(section((ROOT / "CONTRIBUTING.md").read_text(), "Where a change goes"))
    found = modules()
    assert len(found) > 50
    assert sorted(found - table) == []  # modules the guide does not place
    assert sorted(table - found) == []  # paths the guide names that are not modules


def test_a_module_left_out_is_seen(tmp_path):
    (tmp_path / "cophe_core" / "scale").mkdir(parents=True)
    (tmp_path / "dashboard").mkdir()
    (tmp_path / "cophe_core" / "scale" / "__init__.py").write_text('"""Inputs larger than memory."""\n')
    (tmp_path / "cophe_core" / "scale" / "spill.py").write_text("X = 1\n")
    (tmp_path / "cophe_core" / "stream.py").write_text(
        '"""Moved to cophe_core.scale.pipeline; this path stays."""\n'
    )
    (tmp_path / "dashboard" / "loading.py").write_text("Y = 2\n")
    assert modules(tmp_path) == {"cophe_core/scale/spill.py", "dashboard/loading.py"}
    assert named("| x | `cophe_core/scale/spill.py`; `dashboard/loading.py` |") == modules(tmp_path)
