"""The schema of ``manifest.json``, the description inside every ``.cophe`` file (``docs/analysis-format.md``).

One table per kind of file, :data:`ANALYSIS` (the saved analysis of inputs) and :data:`AGGREGATE` (the
aggregate analysis of counts): each :class:`Field` names a value by its path in the manifest (``runs[].name``:
the name of every run), the values it allows, and whether it must be there. :func:`check_manifest` walks one
table before its reader uses any value, so that a forged value (a level that does not exist, a rule that does
not parse, 40,000 levels, 1,000 runs) is refused as an :class:`~cophe_core.base.files.InputError` naming the file,
``manifest.json`` and the field, never raised later as another error. The readers check what needs the
members themselves (sizes, checksums, the rows of the Parquet tables) after this.
"""

from __future__ import annotations

import math
import numbers
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from typing import Any

from ..base.files import MAX_EDGES, InputError
from ..inputs.archive import show
from ..ontology import NAMES
from ..ontology.custom import MAX_ANCESTOR_CELLS, MAX_LEVELS
from ..ontology.icd9 import LEVELS as ICD9_LEVELS
from ..ontology.icd10 import CM_LEVELS, PCS_LEVELS
from ..scoring.decisions import Rule

__all__ = [
    "Field",
    "check_manifest",
    "parse_rule",
    "is_level_of",
    "ANALYSIS",
    "AGGREGATE",
    "BUILT_IN_LEVELS",
    "MAX_RUNS",
    "MAX_NODES",
    "MAX_DOCUMENTS",
]

MAX_NAME = 255  # characters of a run name, a file name, a column name or a level
MAX_TEXT = 100  # characters of created and cophe_version (a saved analysis)
MAX_RUNS = 32  # runs of an aggregate analysis
MAX_NODES = 2_000_000  # nodes of an aggregate's ontology (ICD-10-CM and PCS together have about 300,000)
MAX_DOCUMENTS = 100_000_000
MAX_INPUTS = 64  # inputs of a saved analysis (its members, at most)
MAX_LISTED = 200  # warnings or notes kept per run
MAX_NOTE = 10_000  # characters of an aggregate's created and cophe_version (the first 100 are kept)
ROLES = ("gold", "run", "hierarchy", "metadata", "training")
RULES = ("threshold", "top_k")
ONTOLOGIES = ("auto", *NAMES, "custom")  # "custom": the hierarchy input
SYSTEMS = ("auto", "diagnosis", "procedure")
#: the levels of each built-in code system, bottom-up, as its ontology is built: a saved analysis's
#: ``max_level`` is checked on opening, before its ontology (up to 12 s to build) is loaded
BUILT_IN_LEVELS = {"icd9": ICD9_LEVELS, "icd10cm": CM_LEVELS, "icd10pcs": PCS_LEVELS, "icd10": CM_LEVELS}

Fits = Callable[[Any, dict[str, Any]], bool]  # (the value, the whole manifest) -> whether it is allowed


@dataclass(frozen=True)
class Field:
    """One value of the manifest: its ``path`` (keys joined by ``.``; ``[]`` each entry of a list), what it
    must be (``wanted``, words for the message), the test of a value (``fits``, given the whole manifest for
    the values that depend on another: a level of the listed levels) and whether it may be absent."""

    path: str
    wanted: str
    fits: Fits
    required: bool = False


def _values(node: Any, parts: Sequence[str], where: str) -> Iterator[tuple[str, bool, Any]]:
    """(concrete path, present, value) of every value at ``parts`` below ``node``; a parent of another type
    yields nothing (its own field refuses it)."""
    if not parts:
        yield where.rstrip("."), True, node
        return
    head, rest = parts[0], parts[1:]
    if head.endswith("[]"):
        key = head[:-2]
        items = node.get(key) if isinstance(node, dict) else None
        if isinstance(items, list):
            for i, item in enumerate(items):
                yield from _values(item, rest, f"{where}{key}[{i}].")
        return
    if not isinstance(node, dict):
        return
    if head not in node:
        if not rest:
            yield where + head, False, None
        return
    yield from (
        _values(node[head], rest, f"{where}{head}.") if rest else iter([(where + head, True, node[head])])
    )


def check_manifest(manifest: dict[str, Any], schema: Sequence[Field], *, name: str) -> None:
    """Every field of ``schema`` in ``manifest`` as allowed, in the table's order (a parent before its
    children); else an :class:`InputError` naming the file, ``manifest.json`` and the field.

    >>> check_manifest({"rule": ["threshold", 0.5], "inputs": []}, ANALYSIS, name="a.cophe")
    >>> check_manifest({"options": {"ontology": "icd9", "max_level": "e9"}}, ANALYSIS, name="a.cophe")
    Traceback (most recent call last):
    cophe_core.base.files.InputError: a.cophe: manifest.json: options.max_level must be a level of the code system the options name (e2, e1, e0, block, chapter for ICD-9-CM), or null, not 'e9'
    """
    for f in schema:
        for path, present, value in _values(manifest, f.path.split("."), ""):
            if not present:
                if f.required:
                    raise InputError(f"{name}: manifest.json: {path} is missing; it must be {f.wanted}")
            elif not f.fits(value, manifest):
                raise InputError(f"{name}: manifest.json: {path} must be {f.wanted}, not {_shown(value)}")


def _shown(value: Any) -> str:
    """A refused value for the message; a long list by its length (40,000 levels, not their names)."""
    return f"a list of {len(value):,}" if isinstance(value, list) and len(value) > 8 else show(value)


def parse_rule(rule: Any) -> Rule | None:
    """``("threshold", float)``, ``("top_k", int)`` or None, from a tuple or a JSON list (``ValueError``
    saying what is wrong otherwise).

    >>> parse_rule(["top_k", 5]), parse_rule(("threshold", 1))
    (('top_k', 5), ('threshold', 1.0))
    """
    if rule is None:
        return None
    if not isinstance(rule, list | tuple) or len(rule) != 2 or rule[0] not in RULES:
        raise ValueError(f'the decision rule must be ["threshold", t] or ["top_k", k], not {show(rule)}')
    kind, value = rule
    if kind == "threshold":
        if (
            isinstance(value, bool)
            or not isinstance(value, numbers.Real)
            or not math.isfinite(value)
            or not 0 <= float(value) <= 1
        ):
            raise ValueError(f"the threshold must be a number from 0 to 1, not {show(value)}")
        return ("threshold", float(value))
    if isinstance(value, bool) or not isinstance(value, numbers.Integral) or value < 1:
        raise ValueError(f"top_k must be a whole number of at least 1, not {show(value)}")
    return ("top_k", int(value))


# -- the tests of values -------------------------------------------------------------------------------------


def _text(low: int = 1, high: int = MAX_NAME, *, null: bool = False) -> Fits:
    return lambda v, _: (null and v is None) or (isinstance(v, str) and low <= len(v) <= high)


def _whole(low: int, high: int) -> Fits:
    return lambda v, _: type(v) is int and low <= v <= high


def _one_of(choices: Sequence[Any]) -> Fits:
    return lambda v, _: isinstance(v, str) and v in choices


def _object(*, null: bool = False) -> Fits:
    return lambda v, _: (null and v is None) or isinstance(v, dict)


def _list(high: int, *, low: int = 0, null: bool = False) -> Fits:
    return lambda v, _: (null and v is None) or (isinstance(v, list) and low <= len(v) <= high)


def _texts(high: int, *, null: bool = False) -> Fits:
    return lambda v, m: _list(high, null=null)(v, m) and (v is None or all(isinstance(x, str) for x in v))


def _text_map(v: Any, _: dict[str, Any]) -> bool:
    return v is None or isinstance(v, dict) and all(isinstance(x, str) for x in v.values())


def _rule(v: Any, _: dict[str, Any]) -> bool:
    try:
        parse_rule(v)
    except ValueError:
        return False
    return True


def is_level_of(value: Any, ontology: Any) -> bool:
    """Whether ``value`` may be the ``max_level`` of a saved analysis read with the ontology option
    ``ontology``: null, a level of that built-in code system (of any, for ``auto``), or any name for a user
    hierarchy (checked against it once it is read: :func:`~cophe_core.output.analysis.score_analysis`).

    >>> is_level_of("e1", "icd9"), is_level_of("qualifier", "icd9"), is_level_of("qualifier", "auto")
    (True, False, True)
    """
    if value is None:
        return True
    if not isinstance(value, str) or not 1 <= len(value) <= MAX_NAME:
        return False
    if ontology == "custom":
        return True
    known = BUILT_IN_LEVELS.get(ontology) or {lv for levels in BUILT_IN_LEVELS.values() for lv in levels}
    return value in known


def _saved_level(v: Any, m: dict[str, Any]) -> bool:
    return is_level_of(v, (m.get("options") or {}).get("ontology", "auto"))


def _levels(v: Any, _: dict[str, Any]) -> bool:
    return (
        isinstance(v, list)
        and 1 <= len(v) <= MAX_LEVELS
        and all(isinstance(x, str) and 1 <= len(x) <= MAX_NAME for x in v)
        and len(set(v)) == len(v)
    )


def _nodes(v: Any, m: dict[str, Any]) -> bool:
    return type(v) is int and 0 <= v <= MAX_NODES and v * len(m["ontology"]["levels"]) <= MAX_ANCESTOR_CELLS


def _aggregate_level(v: Any, m: dict[str, Any]) -> bool:
    return v is None or isinstance(v, str) and v in m["ontology"]["levels"]


def _run_name(v: Any, m: dict[str, Any]) -> bool:
    return (
        _text()(v, m)
        and bool(v.strip())
        and sum(isinstance(r, dict) and r.get("name") == v for r in m["runs"]) == 1
    )


def _run_documents(v: Any, m: dict[str, Any]) -> bool:
    return type(v) is int and 0 <= v <= m["documents"]


def _edges(v: Any, _: dict[str, Any]) -> bool:
    return v is None or (
        isinstance(v, list)
        and 1 <= len(v) <= MAX_EDGES
        and all(type(e) is int and e >= 1 for e in v)
        and v == sorted(set(v))
    )


_RULE_WORDS = '["threshold", t] with t from 0 to 1, ["top_k", k] with k a whole number of at least 1, or null'
_ANY_LEVEL = "a level of the code system the options name (e2, e1, e0, block, chapter for ICD-9-CM), or null"

#: the saved analysis of inputs (format version 1); ``format`` and ``format_version`` are checked before it
ANALYSIS: tuple[Field, ...] = (
    Field("options", "an object or null", _object(null=True)),
    Field("options.ontology", f"one of {', '.join(ONTOLOGIES)}", _one_of(ONTOLOGIES)),
    Field("options.system", f"one of {', '.join(SYSTEMS)}", _one_of(SYSTEMS)),
    Field("options.doc_col", f"text of 1 to {MAX_NAME} characters or null", _text(null=True)),
    Field("options.code_col", f"text of 1 to {MAX_NAME} characters or null", _text(null=True)),
    Field("options.header", "true, false or null", lambda v, _: v is None or isinstance(v, bool)),
    Field("options.score_anyway", "true or false", lambda v, _: isinstance(v, bool)),
    Field("options.max_level", _ANY_LEVEL, _saved_level),
    Field("rule", _RULE_WORDS, _rule),
    Field("slice", "an object or null", _object(null=True)),
    Field("view", "an object or null", _object(null=True)),
    Field("code_sets", "an object of text values or null", _text_map),
    Field("created", f"text of at most {MAX_TEXT} characters or null", _text(0, MAX_TEXT, null=True)),
    Field("cophe_version", f"text of at most {MAX_TEXT} characters or null", _text(0, MAX_TEXT, null=True)),
    Field("inputs", f"a list of at most {MAX_INPUTS} inputs", _list(MAX_INPUTS), required=True),
    Field("inputs[]", "an object", _object()),
    Field("inputs[].role", f"one of {', '.join(ROLES)}", _one_of(ROLES), required=True),
    Field("inputs[].run", f"a run's name, 1 to {MAX_NAME} characters, or null", _text(null=True)),
    Field("inputs[].member", f"text of 1 to {MAX_NAME} characters", _text(), required=True),
    Field("inputs[].file", f"text of 1 to {MAX_NAME} characters", _text()),
    Field("inputs[].size", "a whole number of bytes", _whole(0, 2**63 - 1), required=True),
)

#: the aggregate analysis of counts (format version 2, ``kind: aggregate``)
AGGREGATE: tuple[Field, ...] = (
    Field("members", "an object", _object(), required=True),
    Field("ontology", "an object", _object(), required=True),
    Field(
        "ontology.levels",
        f"a list of 1 to {MAX_LEVELS:,} distinct level names",
        _levels,
        required=True,
    ),
    Field(
        "ontology.nodes",
        f"a whole number from 0 to {MAX_NODES:,}, and at most {MAX_ANCESTOR_CELLS:,} levels × nodes",
        _nodes,
        required=True,
    ),
    Field("ontology.default_max_level", "a level of ontology.levels or null", _aggregate_level),
    Field(
        "documents", f"a whole number from 0 to {MAX_DOCUMENTS:,}", _whole(0, MAX_DOCUMENTS), required=True
    ),
    Field("runs", f"a list of 1 to {MAX_RUNS} runs", _list(MAX_RUNS, low=1), required=True),
    Field("runs[]", "an object", _object()),
    Field("runs[].name", f"a name of its own, 1 to {MAX_NAME} characters", _run_name, required=True),
    Field("runs[].documents", "a member's name or null", _text(null=True)),
    Field("runs[].n_documents", "a whole number from 0 to documents", _run_documents),
    Field("runs[].sources", "an object of text values or null", _text_map),
    Field("runs[].warnings", f"a list of at most {MAX_LISTED} texts or null", _texts(MAX_LISTED, null=True)),
    Field("runs[].notes", f"a list of at most {MAX_LISTED} texts or null", _texts(MAX_LISTED, null=True)),
    Field("options", "an object or null", _object(null=True)),
    Field("options.max_level", "a level of ontology.levels or null", _aggregate_level),
    Field("slices", "an object or null", _object(null=True)),
    Field(
        "slices.edges",
        f"a list of 1 to {MAX_EDGES} increasing whole numbers of at least 1, or null",
        _edges,
    ),
    Field("slices.keys", "a list of text or null", _texts(2 * MAX_EDGES + 2, null=True)),
    Field("document_columns", "a list of column names or null", _texts(10_000, null=True)),
    Field("code_sets", "an object of text values or null", _text_map),
    Field("created", "text or null", _text(0, MAX_NOTE, null=True)),
    Field("cophe_version", "text or null", _text(0, MAX_NOTE, null=True)),
)
