"""Finding a dataset's files (cophe_core.inputs.datasets): a folder or glob is walked once, never round a symlink loop,
never out of its folder, each file once; and a glob matches what glob.glob matches on a tree without links."""

from __future__ import annotations

import glob
import os
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from cophe_core import InputError
from cophe_core.inputs.datasets import dataset_files
from tests.conftest import examples


def _tree(root: Path, files: list[str]) -> None:
    for f in files:
        (root / f).parent.mkdir(parents=True, exist_ok=True)
        (root / f).write_text("doc_id,code\n1,401.9\n")


def test_symlink_loops_are_walked_once_and_each_file_read_once(tmp_path):
    """A recursive glob over a folder with symlink loops ran for more than 300 s; one loop read the same file
    41 times."""
    data = tmp_path / "data"
    _tree(data, ["a/part-0.csv", "b/part-1.csv"])
    os.symlink(data, data / "a" / "up")  # a loop back to the top
    os.symlink(data / "a", data / "b" / "side")  # a second loop, through a sibling
    os.symlink(data / "a" / "part-0.csv", data / "b" / "again.csv")  # one file by two paths
    want = [data / "a" / "part-0.csv", data / "b" / "part-1.csv"]
    assert dataset_files(data) == want
    assert dataset_files(f"{data}/**/*.csv") == want


@pytest.mark.parametrize("pattern", [False, True])
def test_a_symlink_out_of_the_folder_is_refused_naming_it(tmp_path, pattern):
    outside = tmp_path / "secret"
    _tree(outside, ["x.csv"])
    data = tmp_path / "data"
    _tree(data, ["a/part-0.csv"])
    os.symlink(outside, data / "a" / "elsewhere")
    with pytest.raises(InputError, match=r"elsewhere: a symlink leads out of"):
        dataset_files(f"{data}/**/*.csv" if pattern else data)


def test_a_linked_file_out_of_the_folder_is_refused(tmp_path):
    _tree(tmp_path / "secret", ["x.csv"])
    data = tmp_path / "data"
    _tree(data, ["part-0.csv"])
    os.symlink(tmp_path / "secret" / "x.csv", data / "link.csv")
    with pytest.raises(InputError, match=r"link\.csv: a symlink leads out of"):
        dataset_files(data)


NAMES = st.sampled_from(["a", "b", "k=1", "k=2", ".h", "_s", "x.y"])
FILES = st.sampled_from(["part-0.csv", "part-1.parquet", "p.tsv", ".hidden.csv", "_SUCCESS", "data.csv"])
PATTERNS = ["*.csv", "**/*.csv", "**/part-*", "*/p?rt-[01].*", "k=*/**/*.parquet", "**", "[!k]*/*.tsv", "*/*"]


@settings(max_examples=examples(60), deadline=None)
@given(
    st.lists(st.tuples(st.lists(NAMES, max_size=3), FILES), min_size=1, max_size=8), st.sampled_from(PATTERNS)
)
def test_a_glob_matches_what_glob_glob_matches(tmp_path_factory, entries, pattern):
    root = tmp_path_factory.mktemp("tree")
    for folders, name in entries:
        target = root.joinpath(*folders, name)
        if not any(p.is_file() for p in [target, *target.parents]):
            target.parent.mkdir(parents=True, exist_ok=True)
            if not target.exists():
                target.write_text("x")
    want = sorted(Path(p) for p in glob.glob(f"{root}/{pattern}", recursive=True) if Path(p).is_file())
    try:
        got = dataset_files(f"{root}/{pattern}")
    except InputError:
        got = []
    assert got == want
