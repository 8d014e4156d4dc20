"""The layout's rule: no module reads another module's private (``_underscore``) name."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

from tests.conftest import ROOT

# nothing a library version changes: run once, with the latest versions (scripts/test.sh)
pytestmark = pytest.mark.once

# namedtuple's public methods, underscored so as not to clash with field names
PUBLIC_UNDERSCORED = {"_replace", "_asdict", "_fields", "_make"}


def private_reads(path: Path) -> list[str]:
    """Private names a module imports from another, and private attributes it reads on objects other than
    ``self``/``cls`` that it does not define itself (a dataclass field, method or attribute of its own)."""
    tree = ast.parse(path.read_text())
    own = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
            own.add(node.name)
        elif isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name):
            own.add(node.target.id)
        elif isinstance(node, ast.Assign | ast.AnnAssign | ast.AugAssign):
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            own |= {t.attr for t in targets if isinstance(t, ast.Attribute)}
            own |= {t.id for t in targets if isinstance(t, ast.Name)}
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom):
            found += [
                f"{path.name}:{node.lineno} imports {a.name} from {node.module}"
                for a in node.names
                if a.name.startswith("_") and not a.name.startswith("__")
            ]
        elif (
            isinstance(node, ast.Attribute)
            and node.attr.startswith("_")
            and not node.attr.startswith("__")
            and node.attr not in PUBLIC_UNDERSCORED | own
            and not (isinstance(node.value, ast.Name) and node.value.id in ("self", "cls"))
        ):
            found.append(f"{path.name}:{node.lineno} reads {ast.unparse(node)}")
    return found


def test_no_module_reads_another_modules_private_names():
    files = sorted([*(ROOT / "cophe_core").rglob("*.py"), *(ROOT / "dashboard").rglob("*.py")])
    assert len(files) > 40
    assert [hit for path in files for hit in private_reads(path)] == []


def test_the_rule_sees_an_import_and_an_attribute(tmp_path):
    """A mutant module breaking the rule both ways is caught, and its own private names are not."""
    module = tmp_path / "m.py"
    module.write_text(
        "from .readers import _decode\n"
        "class A:\n"
        "    _mine: int = 0\n"
        "def f(ev, a):\n"
        "    a._mine\n"
        "    row._replace(x=1)\n"
        "    return ev._flat_counts\n"
    )
    assert private_reads(module) == ["m.py:1 imports _decode from readers", "m.py:7 reads ev._flat_counts"]


def public_functions_without_an_example(path: Path) -> list[str]:
    """The module's public functions (its ``__all__``, else every name without an underscore) whose
    docstring has no ``>>>`` example."""
    tree = ast.parse(path.read_text())
    listed = next(
        (
            {e.value for e in node.value.elts if isinstance(e, ast.Constant)}
            for node in tree.body
            if isinstance(node, ast.Assign)
            and any(isinstance(t, ast.Name) and t.id == "__all__" for t in node.targets)
            and isinstance(node.value, ast.List | ast.Tuple)
        ),
        None,
    )
    return [
        f"{path.name}:{node.name}"
        for node in tree.body
        if isinstance(node, ast.FunctionDef)
        and not node.name.startswith("_")
        and (listed is None or node.name in listed)
        and ">>>" not in (ast.get_docstring(node) or "")
    ]


def test_every_public_function_of_the_core_has_an_example():
    """scikit-learn's habit: an example in each public function's docstring, run by pytest's doctests.
    The command's entry point, ``cli.main``, is shown and tested in tests/core/test_cli.py instead."""
    missing = [
        m
        for path in sorted((ROOT / "cophe_core").rglob("*.py"))
        for m in public_functions_without_an_example(path)
    ]
    assert missing == ["cli.py:main"]


def core_imports(path: Path) -> set[str]:
    """The cophe_core modules a module imports (``from .files import …`` → ``files``)."""
    tree = ast.parse(path.read_text())
    found = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and node.level and node.module:
            found.add(node.module.split(".")[-1])
        elif isinstance(node, ast.ImportFrom) and (node.module or "").startswith("cophe_core."):
            found.add(node.module.split(".")[-1])  # type: ignore[union-attr]
    return found


def test_the_layers_point_one_way():
    """Files in (``files``) know nothing of codes, only the table of options their messages name (``options``,
    which imports nothing of the core); the code systems (``ontology/``) read files through ``files``, never
    through the label readers; the core never imports the dashboard or Streamlit."""
    assert core_imports(ROOT / "cophe_core" / "base" / "files.py") == {"options"}
    assert core_imports(ROOT / "cophe_core" / "base" / "options.py") == set()
    for path in (ROOT / "cophe_core" / "ontology").glob("*.py"):
        assert "readers" not in core_imports(path), path.name
        assert "labels" not in core_imports(path), path.name
    for path in (ROOT / "cophe_core").rglob("*.py"):
        text = path.read_text()
        assert "import streamlit" not in text and "from dashboard" not in text, path.name


def test_core_imports_sees_relative_imports(tmp_path):
    module = tmp_path / "m.py"
    module.write_text("from .files import InputError\nfrom ..readers import read_input\nimport numpy\n")
    assert core_imports(module) == {"files", "readers"}
