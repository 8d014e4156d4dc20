"""Finding a dataset's files: a folder (hive partitions ``key=value/`` included) or a glob pattern, walked once.

The walk never leaves the dataset's folder and never goes round a loop: every folder and file is taken by its
resolved path, a folder reached again (a symlink to itself or to an ancestor) is not entered again, a file reached
by two paths is read once, and a symlink that leads out of the folder is refused, naming it. The walk is bounded
(:data:`MAX_FILES` files, :data:`MAX_FOLDERS` folders). A recursive :func:`glob.glob` followed a loop 40 levels deep,
reading the same file 41 times, and two loops for more than 300 s.
"""

from __future__ import annotations

import os
import re
from collections.abc import Callable
from pathlib import Path

from .files import InputError

__all__ = [
    "DEFAULT_CHUNK_ROWS",
    "GLOB_CHARS",
    "MAX_FILES",
    "MAX_FOLDERS",
    "dataset_files",
    "is_dataset",
    "glob_root",
]

GLOB_CHARS = frozenset("*?[")
# rows of one chunk read (pass 1) and, about, of one bucket counted (pass 2): a few hundred MB each. Here, not
# in cophe_core.stream, so that the CLI states it without importing the streamed path (pyarrow.dataset).
DEFAULT_CHUNK_ROWS = 1_000_000
MAX_FILES = 100_000  # a dataset's data files (Spark writes one per partition: thousands, not millions)
MAX_FOLDERS = 100_000


def is_dataset(source: object) -> bool:
    """Whether ``source`` names a dataset of several files to stream: a folder, or a glob pattern that is not
    itself a file.

    >>> is_dataset("sample_data/icd9"), is_dataset("sample_data/icd9/gold.csv"), is_dataset("runs/*.parquet")
    (True, False, True)
    """
    if not isinstance(source, str | os.PathLike):
        return False
    text = os.fspath(source)
    return Path(text).is_dir() or (not Path(text).exists() and bool(GLOB_CHARS & set(str(text))))


def glob_root(source: str) -> Path:
    """The folder a source's names and hive partitions are read from: the folder itself, a file's folder, or a
    glob's fixed prefix.

    >>> glob_root("data/run=1/*.parquet"), glob_root("*.csv")
    (PosixPath('data/run=1'), PosixPath('.'))
    """
    path = Path(source)
    if path.is_dir():
        return path
    if path.is_file():
        return path.parent
    fixed = []
    for part in path.parts:
        if GLOB_CHARS & set(part):
            break
        fixed.append(part)
    return Path(*fixed) if fixed else Path(".")


def dataset_files(source: str | os.PathLike[str]) -> list[Path]:
    """The data files of a source, sorted: the file itself; a folder's files at any depth, hidden and
    ``_``-prefixed names (``_SUCCESS``) left out; or a glob's matches (``**`` for any depth). Each file once.

    >>> [p.name for p in dataset_files("sample_data/icd10")]
    ['gold.csv', 'run_overcoder.csv', 'run_siblings.csv']
    >>> [p.name for p in dataset_files("sample_data/icd*/run_s*.csv")]
    ['run_siblings.csv', 'run_siblings.csv']
    """
    text = os.fspath(source)
    path = Path(text)
    if path.is_file():
        return [path]
    if path.is_dir():
        found = _walk(path, lambda rel: not any(part.startswith((".", "_")) for part in rel.parts), text)
        if not found:
            raise InputError(f"{text}: the folder holds no data files")
        return found
    if GLOB_CHARS & set(text):
        root = glob_root(text)
        pattern = _pattern(Path(text).relative_to(root) if root != Path(".") else Path(text))
        matched = (
            _walk(root, lambda rel: pattern.fullmatch(rel.as_posix()) is not None, text)
            if root.is_dir()
            else []
        )
        if not matched:
            raise InputError(f"{text}: no file matches this pattern")
        return matched
    raise InputError(f"{text}: no such file or folder")


def _pattern(rel: Path) -> re.Pattern[str]:
    """A glob pattern (relative to its root) as a regular expression over ``/``-separated relative paths: ``*``,
    ``?`` and ``[…]`` within one name, ``**`` any number of folders (as :func:`glob.glob` with ``recursive``).

    >>> p = _pattern(Path("**/part-*.parquet"))
    >>> bool(p.fullmatch("part-1.parquet")), bool(p.fullmatch("a=1/b/part-2.parquet")), bool(p.fullmatch("x.csv"))
    (True, True, False)
    """
    out = []
    for i, part in enumerate(rel.parts):
        last = i == len(rel.parts) - 1
        if part == "**":
            # any number of folders (or, last, of names), none hidden: glob.glob's ** skips hidden names too
            out.append("(?:(?!\\.)[^/]+/)*" if not last else "(?!\\.)[^/]+(?:/(?!\\.)[^/]+)*")
        else:
            out.append(_name_pattern(part) + ("" if last else "/"))
    return re.compile("".join(out), re.DOTALL)


def _name_pattern(part: str) -> str:
    """One name of a glob pattern as a regular expression that never crosses a ``/``; names starting with a dot
    match only a pattern that starts with one, as in :func:`glob.glob`.

    >>> p = re.compile(_name_pattern("part-?.[!c]sv"))
    >>> bool(p.fullmatch("part-1.tsv")), bool(p.fullmatch("part-1.csv")), bool(re.fullmatch(_name_pattern("*"), ".x"))
    (True, False, False)
    """
    out, i = [], 0
    while i < len(part):
        c = part[i]
        if c == "*":
            out.append("[^/]*")
        elif c == "?":
            out.append("[^/]")
        elif c == "[" and (end := part.find("]", i + 2 if part[i + 1 : i + 2] in ("!", "]") else i + 1)) > 0:
            inside = part[i + 1 : end]
            negated = inside.startswith("!")
            inside = inside[1:] if negated else inside
            out.append(
                "[" + ("^" if negated else "") + inside.replace("\\", "\\\\") + ("/" if negated else "") + "]"
            )
            i = end
        else:
            out.append(re.escape(c))
        i += 1
    return ("" if part.startswith(".") else "(?!\\.)") + "".join(out)


def _walk(root: Path, keep: Callable[[Path], bool], source: str) -> list[Path]:
    """The files under ``root`` whose path relative to it passes ``keep``, each once, sorted: folders entered by
    their resolved path once, never outside ``root``; a file reached twice kept once."""
    top = root.resolve()
    seen_folders: set[str] = set()
    seen_files: set[str] = set()
    found: list[Path] = []
    for folder, subfolders, names in os.walk(root, followlinks=True):
        real = os.path.realpath(folder)
        if real in seen_folders or not _inside(real, top):
            subfolders[:] = []  # a loop, or a folder outside: not entered
            if not _inside(real, top):
                raise InputError(
                    f"{folder}: a symlink leads out of {source}; copy the files in, or name them"
                )
            continue
        seen_folders.add(real)
        if len(seen_folders) > MAX_FOLDERS:
            raise InputError(
                f"{source}: more than {MAX_FOLDERS:,} folders; name fewer files or a narrower pattern"
            )
        subfolders.sort()
        for name in sorted(names):
            p = Path(folder) / name
            rel = p.relative_to(root)
            if not keep(rel):
                continue
            real_file = os.path.realpath(p)
            if not _inside(real_file, top):
                raise InputError(f"{p}: a symlink leads out of {source}; copy the file in, or name it")
            if real_file in seen_files or not os.path.isfile(real_file):
                continue
            seen_files.add(real_file)
            found.append(p)
            if len(found) > MAX_FILES:
                raise InputError(f"{source}: more than {MAX_FILES:,} files; combine them, or name fewer")
    return sorted(found)


def _inside(real: str, top: Path) -> bool:
    return real == str(top) or real.startswith(str(top).rstrip(os.sep) + os.sep)
