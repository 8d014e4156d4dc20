"""Regroup cophe_core's flat modules into subpackages, and rewrite every import of them: re-runnable.

    python scripts/regroup.py            # move (git mv), rewrite imports, write the shims
    python scripts/regroup.py --check    # list what would change, change nothing (exit 1 if anything)

One table (MOVES, with SPLITS for the names that left their module) drives it all:

1. each old module still at its old path is moved with ``git mv`` (so git's rename detection carries edits
   made on other branches to the old file onto the moved one);
2. imports are rewritten: inside ``cophe_core`` the relative imports (``from .x import``, ``from ..x import``),
   resolved from the file's place now or, for an import written before the move, from its place before;
   everywhere (package, tests, dashboard, benchmarks, scripts, docs, the tutorial notebook, README,
   CONTRIBUTING) the absolute forms ``from cophe_core.x import``, ``from cophe_core import x``,
   ``import cophe_core.x`` and dotted references ``cophe_core.x.name`` (in code, strings, docstrings, prose);
3. each documented old path gets a shim that re-exports the new module's public names, so user code keeps
   working.

After a merge that brought code written against the old layout, run it again, then ``ruff check --fix`` and
``ruff format`` on the files it names.
"""

from __future__ import annotations

import argparse
import ast
import re
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
PKG = "cophe_core"

# old module -> new module (names without the leading "cophe_core.")
MOVES = {
    "files": "base.files",
    "options": "base.options",
    "readers": "inputs.readers",
    "archive": "inputs.archive",
    "datasets": "inputs.datasets",
    "synthetic": "inputs.synthetic",
    "labels": "scoring.labels",
    "decisions": "scoring.decisions",
    "scores": "scoring.scores",
    "suite": "scoring.suite",
    "stats": "breakdown.stats",
    "compare": "breakdown.compare",
    "comparison": "breakdown.comparison",
    "families": "breakdown.families",
    "substitutions": "breakdown.substitutions",
    "slices": "breakdown.slices",
    "documents": "breakdown.documents",
    "tree": "breakdown.tree",
    "stream": "scale.pipeline",
    "cluster": "scale.cluster",
    "aggregate": "scale.aggregate",
    "accumulate": "scale.accumulate",
    "plotting": "output.plotting",
    "report": "output.report",
    "analysis": "output.analysis",
    "figures_export": "output.figures_export",
    "paper_tables": "output.paper_tables",
    "coder_report": "output.coder_report",
    "level_chart": "output.level_chart",
}

# (old module, name) -> new module, for the names that left the module MOVES sends the rest to
_KERNEL = ["CodeTable", "Tables", "resolve_table", "resolve_tables", "PartitionCounts", "count_partition"]
_KERNEL += ["suite_partition", "rejected_codes", "nothing_scorable"]
_SOURCES = ["STREAMED_FORMATS"]
_READER = ["read_aggregate", "is_aggregate"]
SPLITS = {
    **{("stream", n): "scoring.kernel" for n in _KERNEL},
    **{("stream", n): "scale.sources" for n in _SOURCES},
    **{("aggregate", n): "scale.aggregate_reader" for n in _READER},
    # names a module re-exported from elsewhere, found where they are defined
    **{("stream", n): "inputs.datasets" for n in ["dataset_files", "is_dataset"]},
    **{("scores", n): "scoring.decisions" for n in ["Rule", "check_rule"]},
}

# the subpackages and what each holds (their __init__ docstrings)
GROUPS = {
    "base": "What every layer uses: reading bytes and text, the input error and its reasons, the messages' wording.",
    "inputs": "The formats a user hands in: label and score files, archives, datasets of many files, samples.",
    "scoring": "From rows to counts and decisions: encoding labels, the counting kernel, decision rules, scores, the ICM suite.",
    "breakdown": "Error analysis of an evaluation: intervals and tests, comparisons, families, substitutions, slices, documents, trees.",
    "scale": "Counts summed part by part: streamed sources, disk spill, the pipeline, Dask, the accumulator, aggregate analyses.",
    "output": "What leaves the package: charts, reports, figure and table exports, saved analyses.",
}

# the documented old paths (README, docs, CONTRIBUTING) that keep importing: a shim at each
SHIMS = ["files", "readers", "stats", "compare", "families", "substitutions", "tree", "suite"]
SHIMS += ["comparison", "stream", "cluster", "aggregate", "plotting", "analysis"]

TEXT_FILES = [
    "README.md",
    "CONTRIBUTING.md",
    "docs",
    "tests",
    "dashboard",
    "benchmarks",
    "scripts",
    "sample_data",
    ".ci",
    "pyproject.toml",
]
SUFFIXES = {".py", ".md", ".ipynb", ".sh", ".toml"}
# the tests that name the old paths on purpose (the shims, the layers' rule)
KEEP = {
    "tests/core/test_architecture.py",
    "tests/core/test_public_names.py",
    "tests/core/test_regroup.py",
    "tests/core/test_where_a_change_goes.py",
    "scripts/regroup.py",
}
SHIM_DOC = '"""Moved to {new}; this path stays for existing code."""'


def path_of(module: str) -> Path:
    """The file of a module (``a.b`` → ``cophe_core/a/b.py`` or ``cophe_core/a/b/__init__.py``)."""
    base = ROOT / PKG / Path(*module.split(".")) if module else ROOT / PKG
    return base / "__init__.py" if base.is_dir() else base.with_suffix(".py")


def exists(module: str) -> bool:
    """A module of the package, a shim excepted (the package's own code never imports a shim)."""
    return module not in MOVES and path_of(module).exists()


def source_of(module: str) -> str | None:
    """The old module a module name means, old or new (``scale.pipeline`` → ``stream``); None for the rest."""
    return module if module in MOVES else old_module_of(module)


def target(module: str, name: str | None = None) -> str:
    """Where a module, old or new, (or one of its names) is now; unmoved modules map to themselves."""
    old = source_of(module)
    if old is None:
        return module
    if name is not None and (old, name) in SPLITS and path_of(SPLITS[(old, name)]).exists():
        return SPLITS[(old, name)]  # once the split is made
    return MOVES[old]


def git(*args: str) -> None:
    subprocess.run(["git", *args], cwd=ROOT, check=True)


def move(dry: bool) -> list[str]:
    """``git mv`` each old module still in place (not yet a shim) to its new path."""
    done = []
    for old, new in MOVES.items():
        src, dst = ROOT / PKG / f"{old}.py", path_of(new)
        if not src.exists() or dst.exists():
            continue
        done.append(f"git mv {src.relative_to(ROOT)} {dst.relative_to(ROOT)}")
        if not dry:
            dst.parent.mkdir(exist_ok=True)
            init = dst.parent / "__init__.py"
            if not init.exists():
                init.write_text(f'"""{GROUPS[dst.parent.name]}"""\n')
                git("add", str(init))
            git("mv", str(src), str(dst))
    return done


# ---- relative imports inside the package


def module_of(path: Path) -> tuple[str, bool]:
    """A file's module name under the package ("" for the package itself), and whether it is a package."""
    parts = list(path.relative_to(ROOT / PKG).with_suffix("").parts)
    is_pkg = parts[-1] == "__init__"
    return ".".join(parts[:-1] if is_pkg else parts), is_pkg


def old_module_of(module: str) -> str | None:
    """The module a moved file had before the move."""
    return next((old for old, new in MOVES.items() if new == module), None)


def resolve(module: str, is_pkg: bool, level: int, name: str | None) -> str | None:
    """The absolute module (under the package) of ``from <level dots><name> import``; None above the package."""
    parts = module.split(".") if module else []
    base = parts if is_pkg else parts[:-1]
    if level - 1 > len(base):
        return None
    base = base[: len(base) - (level - 1)]
    return ".".join(base + ([name] if name else []))


def relative(module: str, is_pkg: bool, to: str) -> str:
    """The relative form of module ``to`` from a file (``..scoring.labels``)."""
    here = module.split(".") if module else []
    here = here if is_pkg else here[:-1]
    there = to.split(".") if to else []
    common = 0
    while common < min(len(here), len(there)) and here[common] == there[common]:
        common += 1
    return "." * (len(here) - common + 1) + ".".join(there[common:])


IMPORT = re.compile(
    r"^(?P<indent>[ \t]*)from (?P<dots>\.+)(?P<mod>[\w.]*) import (?P<names>\([^)]*\)|[^\n]*(?:\\\n[^\n]*)*)",
    re.M,
)


def split_names(text: str) -> list[str]:
    """``a, b as c`` (parenthesised or not, comments dropped) → ["a", "b as c"]."""
    text = re.sub(r"#[^\n]*", "", text.strip().strip("()").replace("\\\n", " "))
    return [n.strip() for n in text.split(",") if n.strip()]


def trailing(names: str) -> str:
    """The comment ending a one-line import (``# noqa: E402``), kept on the last line written."""
    found = None if names.lstrip().startswith("(") else re.search(r"\s*#[^\n]*$", names)
    return f"  {found[0].strip()}" if found else ""


def render(indent: str, source: str, names: list[str]) -> str:
    line = f"{indent}from {source} import {', '.join(names)}"
    if len(line) <= 110:
        return line
    inner = "".join(f"{indent}    {n},\n" for n in names)
    return f"{indent}from {source} import (\n{inner}{indent})"


def choose(module: str, is_pkg: bool, level: int, mod: str, names: list[str]) -> str | None:
    """The old module a relative import means: read from the file's place now, else from its place before
    the move (an import written against the old layout, merged in from another branch)."""
    now = resolve(module, is_pkg, level, mod or None)
    before_module = old_module_of(module)
    before = resolve(before_module, False, level, mod or None) if before_module is not None else None
    if before is not None and before != now and (before in MOVES or exists(before)):
        # `from . import x` in a moved file: x of the package before (the package's own names included)
        return before
    if now is not None and (now in MOVES or exists(now)):
        return now
    return before


def rewrite_relative(path: Path) -> str:
    module, is_pkg = module_of(path)
    text = path.read_text()

    def repl(m: re.Match[str]) -> str:
        level, mod, names = len(m["dots"]), m["mod"], split_names(m["names"])
        old = choose(module, is_pkg, level, mod, names)
        if old is None:
            return m[0]
        groups: dict[str, list[str]] = {}
        for n in names:
            leaf, _, alias = n.partition(" as ")
            full = f"{old}.{leaf}" if old else leaf
            if not mod and full in MOVES:  # `from . import stats`: a moved module, by its local name
                parent, _, new_leaf = MOVES[full].rpartition(".")
                local = alias or leaf
                groups.setdefault(parent, []).append(new_leaf + (f" as {local}" if local != new_leaf else ""))
            else:
                groups.setdefault(target(old, leaf), []).append(n)
        if len(groups) == 1 and resolve(module, is_pkg, level, mod or None) == next(iter(groups)):
            return m[0]  # already right
        lines = [render(m["indent"], relative(module, is_pkg, t), ns) for t, ns in groups.items()]
        return "\n".join(lines) + trailing(m["names"])

    return IMPORT.sub(repl, text)


# ---- absolute references everywhere

ABS_FROM = re.compile(
    rf"^(?P<indent>[ \t]*)from {PKG}\.(?P<mod>[\w.]+) import (?P<names>\([^)]*\)|[^\n]*)", re.M
)
ABS_PKG = re.compile(rf"^(?P<indent>[ \t]*)from {PKG} import (?P<names>\([^)]*\)|[^\n]*)", re.M)
SLASH_PATH = re.compile(rf"\b{PKG}/(?P<mod>[a-z_]+)\.py\b")
JOINED_PATH = re.compile(rf'"{PKG}" / "(?P<mod>[a-z_]+)\.py"')
DOTTED = re.compile(rf"\b{PKG}\.(?P<path>[a-z_]\w*(?:\.[A-Za-z_]\w*)*)")


def rewrite_absolute(text: str) -> str:
    def from_module(m: re.Match[str]) -> str:
        old = m["mod"]
        if source_of(old) is None:
            return m[0]
        groups: dict[str, list[str]] = {}
        for n in split_names(m["names"]):
            groups.setdefault(target(old, n.split(" as ")[0]), []).append(n)
        if list(groups) == [old]:
            return m[0]  # already right
        lines = [render(m["indent"], f"{PKG}.{t}", ns) for t, ns in groups.items()]
        return "\n".join(lines) + trailing(m["names"])

    def from_package(m: re.Match[str]) -> str:
        names = split_names(m["names"])
        if not any(n.split(" as ")[0] in MOVES for n in names):
            return m[0]
        lines, kept = [], []
        for n in names:
            leaf, _, alias = n.partition(" as ")
            if leaf in MOVES:
                parent, _, new_leaf = MOVES[leaf].rpartition(".")
                local = alias or leaf
                lines.append(
                    f"{m['indent']}from {PKG}.{parent} import {new_leaf}"
                    + (f" as {local}" if local != new_leaf else "")
                )
            else:
                kept.append(n)
        if kept:
            lines.insert(0, render(m["indent"], PKG, kept))
        return "\n".join(lines) + trailing(m["names"])

    def dotted(m: re.Match[str]) -> str:
        parts = m["path"].split(".")
        for i in (2, 1):  # the longest module, old or new, the path starts with
            module = ".".join(parts[:i])
            if len(parts) >= i and source_of(module) is not None:
                name = parts[i] if len(parts) > i else None
                return ".".join([PKG, target(module, name), *parts[i:]])
        return m[0]

    def slash_path(m: re.Match[str]) -> str:
        new = MOVES.get(m["mod"])
        return m[0] if new is None else f"{PKG}/{new.replace('.', '/')}.py"

    def joined_path(m: re.Match[str]) -> str:  # ROOT / "cophe_core" / "files.py"
        new = MOVES.get(m["mod"])
        if new is None:
            return m[0]
        *parents, leaf = new.split(".")
        return " / ".join(f'"{p}"' for p in [PKG, *parents, f"{leaf}.py"])

    text = SLASH_PATH.sub(slash_path, text)
    text = JOINED_PATH.sub(joined_path, text)
    text = ABS_FROM.sub(from_module, text)
    text = ABS_PKG.sub(from_package, text)
    return DOTTED.sub(dotted, text)


# ---- shims


def public_names(path: Path) -> list[str]:
    """A module's ``__all__``, else the public names it defines."""
    tree = ast.parse(path.read_text())
    for node in tree.body:
        if isinstance(node, ast.Assign) and any(
            isinstance(t, ast.Name) and t.id == "__all__" for t in node.targets
        ):
            return list(ast.literal_eval(node.value))
    names = []
    for node in tree.body:
        if isinstance(node, ast.FunctionDef | ast.ClassDef):
            names.append(node.name)
        elif isinstance(node, ast.Assign):
            names += [t.id for t in node.targets if isinstance(t, ast.Name)]
        elif isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name):
            names.append(node.target.id)
    return [n for n in names if not n.startswith("_")]


def shim(old: str) -> str:
    """The shim at an old documented path: the new module's public names, from where each lives now."""
    groups: dict[str, list[str]] = {}
    new = MOVES[old]
    moved_out = [n for (module, n) in SPLITS if module == old and path_of(SPLITS[(module, n)]).exists()]
    for n in dict.fromkeys([*public_names(path_of(new)), *moved_out]):
        groups.setdefault(target(old, n), []).append(n)
    names = sorted(n for ns in groups.values() for n in ns)
    doc = SHIM_DOC.format(new=f"{PKG}.{new}")
    imports = "\n".join(f"from {PKG}.{t} import {', '.join(sorted(ns))}" for t, ns in sorted(groups.items()))
    return f"{doc}\n\n{imports}\n\n__all__ = {names!r}\n".replace("'", '"')


def formatted(text: str, path: Path) -> str:
    """``text`` as ruff sorts and lays out the file at ``path`` (the project's own settings)."""
    ruff = [sys.executable, "-m", "ruff"]
    for args in (["check", "--select", "I", "--fix", "--quiet"], ["format"]):
        run = [*ruff, *args, "--stdin-filename", str(path), "-"]
        text = subprocess.run(run, input=text, capture_output=True, text=True, cwd=ROOT).stdout
    return text


def text_files() -> list[Path]:
    found: list[Path] = []
    for entry in TEXT_FILES:
        p = ROOT / entry
        if p.is_file():
            found.append(p)
        elif p.is_dir():
            found += [f for f in sorted(p.rglob("*")) if f.suffix in SUFFIXES and f.is_file()]
    return [f for f in found if str(f.relative_to(ROOT)) not in KEEP]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--check", action="store_true", help="list what would change, change nothing")
    parser.add_argument("--without-shims", action="store_true", help="leave the old paths free (see below)")
    args = parser.parse_args()
    dry = args.check
    changed = move(dry)
    shims = {ROOT / PKG / f"{old}.py" for old in SHIMS}
    for path in sorted((ROOT / PKG).rglob("*.py")):
        if path in shims or not path.exists():
            continue
        before = path.read_text()
        after = rewrite_absolute(rewrite_relative(path))
        if after != before:
            changed.append(f"rewrote {path.relative_to(ROOT)}")
            if not dry:
                path.write_text(after)
    for path in text_files():
        before = path.read_text()
        after = rewrite_absolute(before)
        if after != before:
            changed.append(f"rewrote {path.relative_to(ROOT)}")
            if not dry:
                path.write_text(after)
    for old in SHIMS:
        path = ROOT / PKG / f"{old}.py"
        if dry or args.without_shims or not path_of(MOVES[old]).exists():
            continue
        text = formatted(shim(old), path)
        if not path.exists() or path.read_text() != text:
            changed.append(f"shim {path.relative_to(ROOT)}")
            path.write_text(text)
            git("add", str(path))
    print("\n".join(changed) or "nothing to change")
    return 1 if dry and changed else 0


if __name__ == "__main__":
    sys.exit(main())
