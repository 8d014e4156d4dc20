"""The disk cache of built code systems: what it reads back is the ontology built, field for field, and a file
that does not prove itself (damaged, altered, another key, pickled) is never trusted but built again."""

from __future__ import annotations

import os
from pathlib import Path

import networkx as nx
import numpy as np
import pandas as pd
import pytest

from cophe_core import score_files
from cophe_core.ontology import Ontology, hierarchy_from_networkx, icd9, icd10
from cophe_core.ontology.cache import ENV, cache_dir, cached_ontology
from tests.conftest import SAMPLE

FIELDS = ("keys", "titles", "level", "parent", "listed", "systems")


def assert_identical(a: Ontology, b: Ontology) -> None:
    """Every node, key, title, level, parent, flag, code and release equal, with the same dtypes."""
    assert (a.name, a.levels, a.default_max_level, a.code_system) == (
        b.name,
        b.levels,
        b.default_max_level,
        b.code_system,
    )
    assert list(a.codes.items()) == list(b.codes.items())  # the same codes, ids and order
    assert list(a.code_sets.items()) == list(b.code_sets.items())
    for field in FIELDS:
        x, y = getattr(a, field), getattr(b, field)
        assert (x is None) == (y is None), field
        if x is not None:
            assert x.dtype == y.dtype and x.shape == y.shape, field
            assert x.tolist() == y.tolist(), field
    assert (a.extra_edges is None) == (b.extra_edges is None)
    if a.extra_edges is not None and b.extra_edges is not None:
        for x, y in zip(a.extra_edges, b.extra_edges):
            assert x.dtype == y.dtype and x.tolist() == y.tolist()
    assert np.array_equal(a.ancestors, b.ancestors)
    assert (a.closure != b.closure).nnz == 0


@pytest.fixture
def folder(tmp_path, monkeypatch) -> Path:
    monkeypatch.setenv(ENV, str(tmp_path))
    return tmp_path


def never() -> Ontology:
    raise AssertionError("built, where the cache should have been read")


def cache_once(name: str, onto: Ontology) -> Ontology:
    """Write ``onto`` to the cache, then read it back (the builder must not run)."""
    assert cached_ontology(name, "release", lambda: onto) is onto
    return cached_ontology(name, "release", never)


def test_icd9_read_back_is_the_build(folder):
    built = icd9._build()
    assert_identical(cache_once("icd9", built), built)
    assert len(list(folder.glob("icd9-*.npz"))) == 1


def test_icd9_ontology_uses_the_cache(folder):
    icd9.icd9_ontology.cache_clear()
    try:
        first = icd9.icd9_ontology()
        icd9.icd9_ontology.cache_clear()
        [path] = folder.glob("icd9-*.npz")
        stamp = path.stat().st_mtime_ns
        second = icd9.icd9_ontology()
        assert second is not first and path.stat().st_mtime_ns == stamp  # read, not written again
        assert_identical(second, icd9._build())
    finally:
        icd9.icd9_ontology.cache_clear()


def test_icd10_read_back_is_the_build(folder):
    """CM and PCS together: per-node systems and two releases."""
    built = icd10.icd10_ontology()
    assert built.systems is not None
    assert_identical(cache_once("icd10", built), built)


def test_a_dag_read_back_is_the_build(folder):
    """Extra parents (a DAG) and titles with commas, quotes and non-ASCII letters."""
    g = nx.DiGraph([("root", "a"), ("root", "b"), ("a", "c"), ("b", "c"), ("c", "d")])
    nx.set_node_attributes(g, {"a": 'Œdème, "aigu"', "c": "", "d": "naïve ☃"}, "title")
    built = hierarchy_from_networkx(g, name="toy")
    assert built.extra_edges is not None
    assert_identical(cache_once("toy", built), built)


@pytest.mark.parametrize(
    ("sample", "runs", "system"),
    [
        ("icd9", ["run_siblings", "run_overcoder", "run_conservative"], "icd9"),
        ("icd10", ["run_siblings", "run_overcoder"], "icd10"),
    ],
)
def test_the_samples_score_alike(folder, sample, runs, system):
    built = icd9._build() if system == "icd9" else icd10.icd10_ontology()
    read = cache_once(system, built)
    root = SAMPLE.parent / sample
    for run in runs:
        tables = []
        for onto in (built, read):
            ev = score_files(root / "gold.csv", {run: root / f"{run}.csv"}, ontology=onto).evaluation(run)
            tables.append((ev.levels_table, ev.nodes, ev.documents))
        for x, y in zip(*tables):
            pd.testing.assert_frame_equal(x, y)


def rebuilt(name: str = "icd9") -> Ontology:
    """The ontology after a damaged file: the builder runs (once) and a good file replaces the bad one."""
    calls = []

    def build():
        calls.append(1)
        return icd9._build()

    onto = cached_ontology(name, "release", build)
    assert calls == [1]
    return onto


@pytest.fixture
def written(folder) -> Path:
    cache_once("icd9", icd9._build())
    [path] = folder.glob("icd9-*.npz")
    return path


def resave(path: Path, change) -> None:
    with np.load(path, allow_pickle=False) as f:
        arrays = {k: f[k] for k in f.files}
    change(arrays)
    with open(path, "wb") as out:
        np.savez(out, **arrays)  # allow_pickle: True by default, as a hostile file would be written


def test_a_truncated_file_is_built_again(written):
    written.write_bytes(written.read_bytes()[: written.stat().st_size // 2])
    assert_identical(rebuilt(), icd9._build())
    assert_identical(cached_ontology("icd9", "release", never), icd9._build())  # the good file is back


def test_a_flipped_byte_is_built_again(written):
    data = bytearray(written.read_bytes())
    data[len(data) // 2] ^= 0xFF
    written.write_bytes(bytes(data))
    rebuilt()


def test_an_altered_array_fails_the_checksum(written):
    """A parent changed with the file otherwise whole: only the checksum tells."""

    def change(a):
        a["parent"] = a["parent"].copy()
        a["parent"][5] = 0

    resave(written, change)
    assert_identical(rebuilt(), icd9._build())


def test_another_key_is_not_read(written):
    resave(written, lambda a: a.__setitem__("key", np.array("0" * 64)))
    rebuilt()


UNPICKLED: list[int] = []


def _unpickled() -> str:
    UNPICKLED.append(1)
    return "title"


class Bomb:
    """An object whose unpickling is seen: it calls :func:`_unpickled`."""

    def __reduce__(self):
        return _unpickled, ()


def test_a_pickled_array_is_never_loaded(written):
    """An object array (readable only by unpickling) in the file: never unpickled, the ontology built again."""
    resave(written, lambda a: a.__setitem__("titles", np.array([Bomb()], dtype=object)))
    UNPICKLED.clear()
    rebuilt()
    assert UNPICKLED == []


def test_the_key_follows_the_release(folder):
    onto = icd9._build()
    cached_ontology("icd9", "CMS v32", lambda: onto)
    cached_ontology("icd9", "CMS v33", lambda: onto)
    assert len(list(folder.glob("icd9-*.npz"))) == 2


@pytest.mark.parametrize("value", ["off", "", "0"])
def test_the_cache_turned_off_writes_nothing(tmp_path, monkeypatch, value):
    monkeypatch.setenv(ENV, value)
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    assert cache_dir() is None
    calls = []

    def build() -> Ontology:
        calls.append(1)
        return icd9._build()

    for _ in range(2):
        cached_ontology("icd9", "release", build)
    assert calls == [1, 1] and not any(tmp_path.rglob("*"))


def test_the_default_folder_is_xdg(tmp_path, monkeypatch):
    monkeypatch.delenv(ENV, raising=False)
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    assert cache_dir() == tmp_path / "cophe"


def test_an_unwritable_folder_only_costs_the_build(tmp_path, monkeypatch):
    blocker = tmp_path / "file"
    blocker.write_text("not a folder")
    monkeypatch.setenv(ENV, str(blocker / "cache"))
    built = icd9._build()
    assert cached_ontology("icd9", "release", lambda: built) is built
    assert os.listdir(tmp_path) == ["file"]
