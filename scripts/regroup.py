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

The files it rewrites are laid out again by ruff (imports sorted, ``ruff format``), as the project's settings say.

After ``git merge main`` (or any merge that brought code written against the flat layout), run it again:

4. during the merge (before the commit), a conflicted file whose only change on this side was this script's
   takes the other side's text (rewritten below); a conflict between two import blocks keeps both; the edits
   the other side made to a module at its old path where this side keeps a shim are carried onto the module's
   new place: a three-way merge (``git merge-file``) of the
   module as it was and as the other side left it, both read as if already moved (imports rewritten), onto the
   moved module; for a module split in pieces (``stream``, ``aggregate``), hunk by hunk, each onto the piece
   holding its lines, and the hunks that fit no piece are listed in ``.git/regroup/<old>.py.rej`` for a hand;
5. the steps above then rewrite every import the merge brought, old or new layout, and write the shims again.

A new module at the top of the package needs its line in MOVES (``tests/core/test_architecture.py`` fails on a
module of no layer); ``--check`` exits 0 on a tree with nothing left to do.
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
    "manifest": "output.manifest",
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
    **{("stream", n): "inputs.datasets" for n in ["dataset_files", "is_dataset", "DEFAULT_CHUNK_ROWS"]},
    **{("scores", n): "scoring.decisions" for n in ["Rule", "check_rule"]},
}

# the pieces a module was split into besides MOVES's target, and the private names the split made public (so
# that code written against the old module, merged in, is carried onto the pieces: see carry())
PIECES = {
    "stream": ["scoring.kernel", "scale.sources", "scale.spill"],
    "aggregate": ["scale.aggregate_reader"],
}
RENAMED = {
    "stream": {
        "_concat": "concat_rows",
        "_File": "SourceFile",
        "_source_files": "source_files",
        "_source_name": "source_name",
        "_frames": "source_frames",
        "_Names": "ColumnNames",
        "_estimate_rows": "estimate_rows",
        "_FILE_SHIFT": "FILE_SHIFT",
        "_LINE_MASK": "LINE_MASK",
        "_strings": "arrow_strings",
        "_SPILL_SCHEMA": "SPILL_SCHEMA",
        "_Spill": "Spill",
        "_bucket_frames": "bucket_frames",
    },
    "aggregate": {"_frequency_slices": "frequency_slices"},
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

# every file of these kinds that git tracks (or would), outside the package; the changelog is history
SKIP = {"CHANGELOG.md"}
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


def rewrite_relative(path: Path, text: str | None = None) -> str:
    """The relative imports of the module at ``path`` (its text, or ``text`` as if it were there) rewritten."""
    module, is_pkg = module_of(path)
    text = path.read_text() if text is None else text

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
ABS_INLINE = re.compile(rf"(?<=; )from {PKG}\.(?P<mod>[\w.]+) import (?P<names>[\w, ]+)(?=;)")
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

    def inline(m: re.Match[str]) -> str:  # one statement of a one-line script: its parts joined by "; "
        groups: dict[str, list[str]] = {}
        for n in split_names(m["names"]):
            groups.setdefault(target(m["mod"], n.split(" as ")[0]), []).append(n)
        return "; ".join(f"from {PKG}.{t} import {', '.join(ns)}" for t, ns in groups.items())

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
    text = ABS_INLINE.sub(inline, text)
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
    """``text`` as ruff sorts and lays out the file at ``path`` (the project's own settings); as it is if ruff
    cannot read it."""
    ruff = [sys.executable, "-m", "ruff"]
    for args in (["check", "--select", "I", "--fix", "--quiet", "--exit-zero"], ["format"]):
        run = [*ruff, *args, "--stdin-filename", str(path), "-"]
        done = subprocess.run(run, input=text, capture_output=True, text=True, cwd=ROOT)
        if done.returncode != 0 or not done.stdout:
            return text
        text = done.stdout
    return text


def lay_out(paths: list[Path]) -> None:
    """Sort the imports of the files rewritten and lay them out with ruff (Python files and notebooks)."""
    found = [str(p) for p in paths if p.suffix in {".py", ".ipynb"} and p.exists()]
    if found:
        ruff = [sys.executable, "-m", "ruff"]
        # a file left in conflict is not laid out (ruff cannot read it); the merge says which are
        fix = [*ruff, "check", "--select", "I", "--fix", "--quiet", "--exit-zero", *found]
        subprocess.run(fix, cwd=ROOT, capture_output=True)
        subprocess.run([*ruff, "format", "--quiet", *found], cwd=ROOT, capture_output=True)


# ---- carrying edits made at an old path, on the other side of a merge


def git_out(*args: str) -> str | None:
    done = subprocess.run(["git", *args], cwd=ROOT, capture_output=True, text=True)
    return done.stdout if done.returncode == 0 else None


def is_shim_text(text: str) -> bool:
    try:
        return (ast.get_docstring(ast.parse(text)) or "").startswith("Moved to ")
    except SyntaxError:
        return False


def as_moved(text: str, old: str) -> str:
    """A module's text as it was at its old path, read as if moved: imports rewritten, the names its split
    made public renamed, laid out by ruff (so that its import block reads as the moved module's)."""
    new = path_of(MOVES[old])
    text = rewrite_absolute(rewrite_relative(new, text))
    for private, public in RENAMED.get(old, {}).items():
        text = re.sub(rf"(?<![\w.]){re.escape(private)}\b", public, text)
    return formatted(text, new)


# a change: (up to 3 lines above it, the lines it replaces, the new lines, up to 3 lines below it)
Change = tuple[list[str], list[str], list[str], list[str]]


def hunks(before: str, after: str) -> list[Change]:
    """The changes from ``before`` to ``after``, each with the lines around it as ``before`` has them."""
    import difflib

    a, b = before.splitlines(keepends=True), after.splitlines(keepends=True)
    opcodes = difflib.SequenceMatcher(None, a, b, autojunk=False).get_opcodes()
    return [
        (a[max(i1 - 3, 0) : i1], a[i1:i2], b[j1:j2], a[i2 : i2 + 3])
        for tag, i1, i2, j1, j2 in opcodes
        if tag != "equal"
    ]


def place(change: Change, texts: dict[Path, str]) -> bool:
    """Make the change in the one text holding its lines once, with as many lines around them as that takes
    (three, then fewer; an insertion needs at least one); False when no such text is found."""
    above, old_lines, new_lines, below = change
    for n in (3, 2, 1):
        up, down = "".join(above[-n:]), "".join(below[:n])
        old, new = up + "".join(old_lines) + down, up + "".join(new_lines) + down
        homes = [p for p, text in texts.items() if text.count(old) == 1]
        if len(homes) == 1:
            texts[homes[0]] = texts[homes[0]].replace(old, new)
            return True
    if old_lines:  # the replaced lines alone
        homes = [p for p, text in texts.items() if text.count("".join(old_lines)) == 1]
        if len(homes) == 1:
            texts[homes[0]] = texts[homes[0]].replace("".join(old_lines), "".join(new_lines))
            return True
    return False


def apply_hunks(changes: list[Change], pieces: list[Path]) -> list[str]:
    """Each change made in the piece that holds its lines; those no piece holds returned as unified hunks."""
    texts = {p: p.read_text() for p in pieces}
    left = [
        "@@\n"
        + "".join(f" {x}" for x in c[0])
        + "".join(f"-{x}" for x in c[1])
        + "".join(f"+{x}" for x in c[2])
        + "".join(f" {x}" for x in c[3])
        for c in changes
        if not place(c, texts)
    ]
    for p, text in texts.items():
        if text != p.read_text():
            p.write_text(text)
    return left


CONFLICT = re.compile(
    r"^<<<<<<< [^\n]*\n(?P<ours>.*?)(?:^\|\|\|\|\|\|\| [^\n]*\n.*?)?^=======\n(?P<theirs>.*?)^>>>>>>> [^\n]*\n",
    re.M | re.S,
)


def only_imports(text: str) -> bool:
    """Whether some lines are import statements and nothing else (blank lines and comments aside)."""
    try:
        body = ast.parse(text).body
    except SyntaxError:
        return False
    return all(isinstance(n, ast.Import | ast.ImportFrom) for n in body)


def keep_both_imports(text: str) -> str:
    """Each conflict of ``text`` whose two sides are imports only, replaced by both sides' lines."""
    return CONFLICT.sub(
        lambda m: m["ours"] + m["theirs"] if only_imports(m["ours"] + m["theirs"]) else m[0], text
    )


def rewritten_as_here(text: str, path: Path) -> str:
    """A text written against any layout as this script leaves a file at ``path``: imports rewritten, laid out."""
    if path.suffix != ".py":
        return rewrite_absolute(text)
    inside = path.is_relative_to(ROOT / PKG)
    return formatted(rewrite_absolute(rewrite_relative(path, text) if inside else text), path)


def take_theirs(dry: bool, touched: list[Path]) -> list[str]:
    """A merge's conflicted file whose only change on this side is this script's (the base, rewritten and laid
    out, is this side's file) takes the other side's text: the rewrite then makes its imports this side's."""
    unmerged = (git_out("diff", "--name-only", "--diff-filter=U") or "").split()
    shims = {f"{PKG}/{old}.py" for old in SHIMS}
    done = []
    for rel in unmerged:
        path = ROOT / rel
        base, ours, theirs = (git_out("show", f":{n}:{rel}") for n in (1, 2, 3))
        if rel in shims or base is None or ours is None or theirs is None:
            continue
        if rewritten_as_here(base, path) != ours:
            continue  # this side changed it by hand too: left for a hand
        done.append(f"took the other side's {rel} (this side's change to it was only the rewrite)")
        if not dry:
            path.write_text(theirs)
            touched.append(path)
    return done


def import_conflicts(dry: bool, touched: list[Path]) -> list[str]:
    """A merge's conflicts between two import blocks (one side's imports moved, the other's edited) resolved
    by keeping both: the rewrite then gives both the new layout, and ruff's sort merges them into one block."""
    unmerged = (git_out("diff", "--name-only", "--diff-filter=U") or "").split()
    shims = {f"{PKG}/{old}.py" for old in SHIMS}
    done = []
    for rel in unmerged:
        path = ROOT / rel
        if path.suffix != ".py" or rel in shims or not path.exists():
            continue
        text = path.read_text()
        both = keep_both_imports(text)
        if both != text:
            left = len(CONFLICT.findall(both))
            done.append(
                f"kept both sides' imports in {rel}" + (f" ({left} other conflicts left)" if left else "")
            )
            if not dry:
                path.write_text(both)
                touched.append(path)
    return done


def carry(dry: bool, touched: list[Path]) -> list[str]:
    """During a merge, the other side's edits to a module at its old path, where this side keeps a shim (git
    sees no rename there), made on the moved module: see the module's docstring."""
    if git_out("rev-parse", "-q", "--verify", "MERGE_HEAD") is None:
        return []
    base = (git_out("merge-base", "HEAD", "MERGE_HEAD") or "").strip()
    done = []
    for old in SHIMS:
        rel = f"{PKG}/{old}.py"
        before, after = git_out("show", f"{base}:{rel}"), git_out("show", f"MERGE_HEAD:{rel}")
        if before is None or after is None or before == after or is_shim_text(after) or is_shim_text(before):
            continue
        if not path_of(MOVES[old]).exists():
            continue  # not moved yet: the move carries it
        if (ROOT / rel).exists() and is_shim_text((ROOT / rel).read_text()):
            continue  # carried already: the shim is written again once the edits are made
        moved_before, moved_after = as_moved(before, old), as_moved(after, old)
        if moved_before == moved_after:
            continue  # only the imports changed, and rewriting them gives the same
        new = path_of(MOVES[old])
        pieces = [new, *(path_of(m) for m in PIECES.get(old, []) if path_of(m).exists())]
        names = ", ".join(str(p.relative_to(ROOT)) for p in pieces)
        if dry:
            done.append(f"carry the other side's edits of {rel} onto {names}")
            continue
        if len(pieces) == 1:
            with_tmp = []
            for label, text in (("base", moved_before), ("theirs", moved_after)):
                tmp = ROOT / f".regroup-{label}.py"
                tmp.write_text(text)
                with_tmp.append(tmp)
            run = ["git", "merge-file", "-L", "ours", "-L", "base", "-L", "theirs", str(new)]
            conflicts = subprocess.run([*run, *map(str, with_tmp)], cwd=ROOT).returncode
            for tmp in with_tmp:
                tmp.unlink()
            note = f" ({conflicts} conflicts left in it: resolve them by hand)" if conflicts else ""
        else:
            left = apply_hunks(hunks(moved_before, moved_after), pieces)
            note = ""
            if left:
                # in git's own folder, so that `git add -A` leaves it out
                git_dir = Path((git_out("rev-parse", "--absolute-git-dir") or ".").strip())
                rej = git_dir / "regroup" / f"{old}.py.rej"
                rej.parent.mkdir(exist_ok=True)
                rej.write_text("\n".join(left))
                note = f" ({len(left)} hunks fit no piece: see {rej}, make them by hand)"
        touched += pieces
        done.append(f"carried the other side's edits of {rel} onto {names}{note}")
    return done


def text_files() -> list[Path]:
    listed = subprocess.run(
        ["git", "ls-files", "--cached", "--others", "--exclude-standard"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        check=True,
    ).stdout.splitlines()
    found = sorted({f for f in listed if Path(f).suffix in SUFFIXES and not f.startswith(f"{PKG}/")})
    return [ROOT / f for f in found if f not in KEEP and f not in SKIP and (ROOT / f).is_file()]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--check", action="store_true", help="list what would change, change nothing")
    parser.add_argument("--without-shims", action="store_true", help="leave the old paths free")
    args = parser.parse_args()
    dry = args.check
    rewritten: list[Path] = []
    changed = take_theirs(dry, rewritten)
    changed += import_conflicts(dry, rewritten)
    changed += carry(dry, rewritten)
    changed += move(dry)
    shims = {ROOT / PKG / f"{old}.py" for old in SHIMS}
    for path in sorted((ROOT / PKG).rglob("*.py")):
        if path in shims or not path.exists():
            continue
        before = path.read_text()
        after = rewrite_absolute(rewrite_relative(path))
        if after != before:
            changed.append(f"rewrote {path.relative_to(ROOT)}")
            rewritten.append(path)
            if not dry:
                path.write_text(after)
    for path in text_files():
        before = path.read_text()
        after = rewrite_absolute(before)
        if after != before:
            changed.append(f"rewrote {path.relative_to(ROOT)}")
            rewritten.append(path)
            if not dry:
                path.write_text(after)
    if not dry:
        lay_out(rewritten)
    for old in SHIMS:
        path = ROOT / PKG / f"{old}.py"
        if args.without_shims or not path_of(MOVES[old]).exists():
            continue
        text = formatted(shim(old), path)
        if not path.exists() or path.read_text() != text:
            changed.append(f"shim {path.relative_to(ROOT)}")
            if not dry:
                path.write_text(text)
                git("add", str(path))
    print("\n".join(changed) or "nothing to change")
    return 1 if dry and changed else 0


if __name__ == "__main__":
    sys.exit(main())
