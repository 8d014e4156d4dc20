"""The built-in code systems kept on disk between processes, as plain arrays (never pickle).

Building ICD-9-CM takes about 0.15 s and ICD-10 several seconds, every process; reading the arrays back takes
a few milliseconds. A cache file is one ``.npz`` (loaded with ``allow_pickle=False``) in the user's cache
folder, ``$XDG_CACHE_HOME/cophe`` (else ``~/.cache/cophe``). ``COPHE_CACHE_DIR`` names another folder; set to
``off`` (or empty) it turns the cache off.

A file is trusted only when it proves itself: its name and its stored ``key`` are the SHA-256 of the package
version, the code-set release and the bytes of the code that builds the ontology (so a changed builder or
table never reads an old file), and its stored ``checksum`` is the SHA-256 of every array it holds. A file
missing, unreadable, corrupt or from another key is ignored and built again; a folder that cannot be written
only costs the build.
"""

from __future__ import annotations

import hashlib
import os
import tempfile
import zipfile
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any

import numpy as np

from .base import Ontology

__all__ = ["ENV", "cache_dir", "cached_ontology", "from_arrays", "to_arrays"]

ENV = "COPHE_CACHE_DIR"
_OFF = ("", "off", "0", "none")
_HERE = Path(__file__).parent
# The code that decides an ontology's nodes: any change to these gives another key.
_BUILDER_FILES = ("base.py", "icd9.py", "icd10.py", "sources.py", "titles.py", "cache.py")


def cache_dir() -> Path | None:
    """The folder ontologies are cached in, None when ``COPHE_CACHE_DIR`` turns the cache off.

    >>> import os
    >>> old = os.environ.get(ENV)
    >>> os.environ[ENV] = "off"; cache_dir() is None
    True
    >>> os.environ[ENV] = "/tmp/x"; str(cache_dir())
    '/tmp/x'
    >>> _ = os.environ.pop(ENV) if old is None else os.environ.__setitem__(ENV, old)
    """
    chosen = os.environ.get(ENV)
    if chosen is not None:
        return None if chosen.strip().lower() in _OFF else Path(chosen)
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "cophe"


def _key(name: str, release: str) -> str:
    """The SHA-256 (hex) of what the ontology ``name`` is built from."""
    from .. import __version__  # here: at the top it would tie the package's import cycle in a knot

    h = hashlib.sha256(f"{name}\0{release}\0{__version__}\0".encode())
    for path in [_HERE / f for f in _BUILDER_FILES] + sorted((_HERE / "data").glob("*")):
        h.update(path.name.encode() + b"\0" + path.read_bytes())
    return h.hexdigest()


_SEP = "\x00"  # joins a list of strings into one UTF-8 byte array; never inside a code or a title


def _pack(strings: Iterable[object]) -> np.ndarray:
    """Strings as one uint8 array of UTF-8, NUL-separated (fixed-width unicode would be 10 times larger).

    >>> _unpack(_pack(["401.9", "Hypertension, unspecified", ""]))
    ['401.9', 'Hypertension, unspecified', '']
    """
    text = [str(s) for s in strings]
    if any(_SEP in s for s in text):
        raise ValueError("a string holds NUL: not cached")
    return np.frombuffer(_SEP.join(text).encode(), dtype=np.uint8) if text else np.zeros(0, np.uint8)


def _unpack(packed: np.ndarray) -> list[str]:
    return packed.tobytes().decode().split(_SEP)


def _objects(strings: list[str]) -> np.ndarray:
    out = np.empty(len(strings), dtype=object)
    out[:] = strings
    return out


def to_arrays(onto: Ontology) -> dict[str, np.ndarray]:
    """An ontology as named plain arrays: numbers as they are, lists of strings packed (:func:`_pack`).

    Raises ``ValueError`` for a string holding NUL (then the ontology is not cached).

    >>> from cophe_core.ontology import icd9_ontology
    >>> arrays = to_arrays(icd9_ontology())
    >>> arrays["level"].dtype == icd9_ontology().level.dtype, str(arrays["name"])
    (True, 'icd9')
    """
    arrays = {
        "name": np.array(onto.name),
        "levels": np.array(onto.levels, dtype=str),
        "keys": _pack(onto.keys),
        "n_nodes": np.array(onto.n_nodes),
        "titles": _pack(onto.titles),
        "level": onto.level,
        "parent": onto.parent,
        "listed": onto.listed,
        "code_keys": _pack(onto.codes),
        "code_ids": np.fromiter(onto.codes.values(), dtype=np.int64, count=len(onto.codes)),
        "code_set_names": np.array(list(onto.code_sets), dtype=str),
        "code_set_releases": np.array(list(onto.code_sets.values()), dtype=str),
    }
    for field, value in (("default_max_level", onto.default_max_level), ("code_system", onto.code_system)):
        if value is not None:
            arrays[field] = np.array(value)
    if onto.systems is not None:
        arrays["systems"] = _pack(onto.systems)
    if onto.extra_edges is not None:
        arrays["extra_children"], arrays["extra_parents"] = onto.extra_edges
    return arrays


def from_arrays(a: dict[str, np.ndarray]) -> Ontology:
    """The ontology :func:`to_arrays` gave the arrays of, equal to it in every field and dtype.

    >>> from cophe_core.ontology import icd9_ontology
    >>> onto = from_arrays(to_arrays(icd9_ontology()))
    >>> onto.n_nodes == icd9_ontology().n_nodes, onto.keys[onto.codes["428.0"]]
    (True, '428.0')
    """

    def text(field: str) -> str | None:
        return str(a[field]) if field in a else None

    return Ontology(
        name=str(a["name"]),
        levels=tuple(str(x) for x in a["levels"]),
        keys=_objects(_strings(a, "keys")),
        titles=_objects(_strings(a, "titles")),
        level=a["level"],
        parent=a["parent"],
        listed=a["listed"],
        codes=dict(zip(_strings(a, "code_keys", len(a["code_ids"])), a["code_ids"].tolist())),
        default_max_level=text("default_max_level"),
        systems=_objects(_strings(a, "systems")) if "systems" in a else None,
        extra_edges=(a["extra_children"], a["extra_parents"]) if "extra_children" in a else None,
        code_sets=dict(zip(a["code_set_names"].tolist(), a["code_set_releases"].tolist())),
        code_system=text("code_system"),
    )


def _strings(a: dict[str, np.ndarray], field: str, n: int | None = None) -> list[str]:
    """The packed list ``field`` of ``a``, checked to hold ``n`` strings (default: one per node)."""
    n = int(a["n_nodes"]) if n is None else n
    out = _unpack(a[field]) if n else []
    if len(out) != n:
        raise ValueError(f"{field}: {len(out)} strings for {n}")
    return out


def _checksum(arrays: dict[str, np.ndarray]) -> str:
    """SHA-256 of every array's name, dtype, shape and bytes, in name order."""
    h = hashlib.sha256()
    for field in sorted(arrays):
        x = np.ascontiguousarray(arrays[field])
        h.update(f"{field}\0{x.dtype.str}\0{x.shape}\0".encode())
        h.update(x.tobytes())
    return h.hexdigest()


def _read(path: Path, key: str) -> Ontology | None:
    """The ontology in ``path`` if the file is whole and of ``key``, else None."""
    try:
        with np.load(path, allow_pickle=False) as f:
            arrays = {field: f[field] for field in f.files}
        stored_key, stored_sum = str(arrays.pop("key")), str(arrays.pop("checksum"))
        if stored_key != key or stored_sum != _checksum(arrays):
            return None
        return from_arrays(arrays)
    except (
        OSError,
        ValueError,
        KeyError,
        TypeError,
        EOFError,
        IndexError,
        zipfile.BadZipFile,
    ):  # damaged: build
        return None


def _write(path: Path, key: str, onto: Ontology) -> None:
    """Write atomically (a temporary file renamed), so a reader never sees half a file."""
    try:
        arrays = to_arrays(onto)
    except ValueError:
        return
    arrays["checksum"] = np.array(_checksum(arrays))
    arrays["key"] = np.array(key)
    if any(a.dtype.hasobject for a in arrays.values()):
        return  # only plain arrays are written: an object array would be pickled
    named: dict[str, Any] = (
        arrays  # savez's keywords (numpy 1.26, the floor, reads allow_pickle= as an array)
    )
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=path.stem, suffix=".tmp")
        try:
            with os.fdopen(fd, "wb") as out:
                np.savez(out, **named)
            os.replace(tmp, path)
        finally:
            if os.path.exists(tmp):
                os.unlink(tmp)
    except OSError:  # a read-only or full disk: the ontology was built, only the next start is slower
        pass


def cached_ontology(name: str, release: str, build: Callable[[], Ontology]) -> Ontology:
    """The ontology ``name`` of code-set ``release``: read from the cache if a valid file is there, else built
    by ``build()`` and written for the next process.

    >>> import os, tempfile
    >>> from cophe_core.ontology.base import OntologyBuilder
    >>> def build():
    ...     b = OntologyBuilder("toy", ("code", "chapter"))
    ...     b.add("code", "A1", "a code", parent=b.add("chapter", "A", "chapter A"), code=True)
    ...     return b.build()
    >>> old = os.environ.get(ENV)
    >>> os.environ[ENV] = tempfile.mkdtemp()
    >>> first, second = cached_ontology("toy", "v1", build), cached_ontology("toy", "v1", build)
    >>> list(second.keys), second.codes, len(os.listdir(os.environ[ENV]))
    (['A', 'A1'], {'A1': 1}, 1)
    >>> _ = os.environ.pop(ENV) if old is None else os.environ.__setitem__(ENV, old)
    """
    folder = cache_dir()
    if folder is None:
        return build()
    key = _key(name, release)
    path = folder / f"{name}-{key[:24]}.npz"
    onto = _read(path, key) if path.is_file() else None
    if onto is None:
        onto = build()
        _write(path, key, onto)
    return onto
