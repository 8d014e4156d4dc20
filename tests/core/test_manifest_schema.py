"""The manifest's schema (issue 29, point 2): every field of both kinds of ``.cophe`` file forged (wrong type,
out of range, a level that does not exist, a rule that does not parse, too many levels, nodes or runs) is
refused on opening as an InputError naming the file, manifest.json and the field; every field of the schema
is forged here at least once."""

from __future__ import annotations

import json
import re

import pytest

from cophe_core import InputError
from cophe_core.aggregate import read_aggregate
from cophe_core.analysis import read_analysis
from cophe_core.manifest import AGGREGATE, ANALYSIS, BUILT_IN_LEVELS, MAX_RUNS
from cophe_core.ontology import icd9_ontology
from tests.core.test_archive_fuzz import AGGREGATE as AGGREGATE_MEMBERS
from tests.core.test_archive_fuzz import NAME, SAVED, _zip


def _parts(path: str) -> list:
    """``runs[0].name`` as ``["runs", 0, "name"]``."""
    return [int(p[1:-1]) if p.startswith("[") else p for p in re.findall(r"[^.\[\]]+|\[\d+\]", path)]


def _put(path: str, value):
    """A change of the manifest setting ``path`` (``a.b``, ``runs[0].name``) to ``value``."""

    def change(m: dict) -> None:
        *parents, last = _parts(path)
        for part in parents:
            m = (
                m[part]
                if isinstance(part, int) or part in m and m[part] is not None
                else m.setdefault(part, {})
            )
        m[last] = value

    return change


def _drop(path: str):
    def change(m: dict) -> None:
        *parents, last = _parts(path)
        for part in parents:
            m = m[part]
        del m[last]

    return change


def _twice(m: dict) -> None:
    m["runs"].append(dict(m["runs"][0]))


def _other_ontology_level(m: dict) -> None:
    m["options"].update(ontology="icd9", max_level="qualifier")  # a level of ICD-10-PCS


SAVED_CASES = [
    ("options", _put("options", "icd9"), "options"),
    ("options.ontology", _put("options.ontology", "/etc/passwd"), "options.ontology"),
    ("options.system", _put("options.system", 5), "options.system"),
    ("options.doc_col", _put("options.doc_col", ""), "options.doc_col"),
    ("options.code_col", _put("options.code_col", "c" * 256), "options.code_col"),
    ("options.header", _put("options.header", "yes"), "options.header"),
    ("options.score_anyway", _put("options.score_anyway", 1), "options.score_anyway"),
    ("options.max_level", _put("options.max_level", "bogus"), "options.max_level"),
    ("options.max_level", _other_ontology_level, "options.max_level"),
    ("options.max_level", _put("options.max_level", 3), "options.max_level"),
    ("rule", _put("rule", ["threshold", 1.5]), "rule"),
    ("rule", _put("rule", ["threshold", "0.5"]), "rule"),
    ("rule", _put("rule", ["top_k", 0]), "rule"),
    ("rule", _put("rule", ["top_k", 2.5]), "rule"),
    ("rule", _put("rule", ["eval", "1"]), "rule"),
    ("rule", _put("rule", "top_k 5"), "rule"),
    ("slice", _put("slice", ["gold_codes"]), "slice"),
    ("view", _put("view", "compare"), "view"),
    ("code_sets", _put("code_sets", {"ICD-9-CM": 32}), "code_sets"),
    ("created", _put("created", 1_700_000_000), "created"),
    ("created", _put("created", "x" * 101), "created"),
    ("cophe_version", _put("cophe_version", ["0.1"]), "cophe_version"),
    ("inputs", _put("inputs", "gold.csv"), "inputs"),
    ("inputs", _put("inputs", [{}] * 65), "inputs"),
    ("inputs[]", _put("inputs[1]", "a.csv"), "inputs[1]"),
    ("inputs[].role", _put("inputs[1].role", "model"), "inputs[1].role"),
    ("inputs[].role", _drop("inputs[0].role"), "inputs[0].role"),
    ("inputs[].run", _put("inputs[1].run", 5), "inputs[1].run"),
    ("inputs[].member", _put("inputs[1].member", ["inputs/a.csv"]), "inputs[1].member"),
    ("inputs[].file", _put("inputs[1].file", ""), "inputs[1].file"),
    ("inputs[].size", _put("inputs[1].size", -1), "inputs[1].size"),
    ("inputs[].size", _put("inputs[1].size", "6"), "inputs[1].size"),
]

AGGREGATE_CASES = [
    ("members", _put("members", []), "members"),
    ("ontology", _put("ontology", "icd9"), "ontology"),
    ("ontology.levels", _put("ontology.levels", [f"l{i}" for i in range(40_000)]), "ontology.levels"),
    ("ontology.levels", _put("ontology.levels", ["e0", "e0"]), "ontology.levels"),
    ("ontology.levels", _put("ontology.levels", []), "ontology.levels"),
    ("ontology.levels", _put("ontology.levels", [0, 1]), "ontology.levels"),
    ("ontology.nodes", _put("ontology.nodes", 3_000_000), "ontology.nodes"),
    ("ontology.nodes", _put("ontology.nodes", "many"), "ontology.nodes"),
    (
        "ontology.nodes",  # within its bound, but with its levels more cells than an ontology holds
        lambda m: m["ontology"].update(nodes=1_999_999, levels=[f"l{i}" for i in range(11)]),
        "ontology.nodes",
    ),
    (
        "ontology.default_max_level",
        _put("ontology.default_max_level", "galaxy"),
        "ontology.default_max_level",
    ),
    ("documents", _put("documents", -1), "documents"),
    ("documents", _put("documents", 10**9), "documents"),
    ("documents", _put("documents", 2.0), "documents"),
    ("runs", _put("runs", []), "runs"),
    (
        "runs",
        lambda m: m.update(runs=[dict(m["runs"][0], name=f"r{i}") for i in range(MAX_RUNS + 1)]),
        "runs",
    ),
    ("runs[]", _put("runs[0]", "A"), "runs[0]"),
    ("runs[].name", _put("runs[0].name", ""), "runs[0].name"),
    ("runs[].name", _put("runs[0].name", 5), "runs[0].name"),
    ("runs[].name", _twice, "runs[0].name"),
    ("runs[].name", _drop("runs[0].name"), "runs[0].name"),
    ("runs[].documents", _put("runs[0].documents", 5), "runs[0].documents"),
    ("runs[].n_documents", _put("runs[0].n_documents", 10**6), "runs[0].n_documents"),
    ("runs[].sources", _put("runs[0].sources", {"gold": 5}), "runs[0].sources"),
    ("runs[].warnings", _put("runs[0].warnings", "careful"), "runs[0].warnings"),
    ("runs[].warnings", _put("runs[0].warnings", ["w"] * 201), "runs[0].warnings"),
    ("runs[].notes", _put("runs[0].notes", [5]), "runs[0].notes"),
    ("options", _put("options", "e0"), "options"),
    ("options.max_level", _put("options.max_level", "galaxy"), "options.max_level"),
    ("options.max_level", _put("options.max_level", 0), "options.max_level"),
    ("slices", _put("slices", [1]), "slices"),
    ("slices.edges", _put("slices.edges", [100, 10]), "slices.edges"),
    ("slices.edges", _put("slices.edges", [0]), "slices.edges"),
    ("slices.edges", _put("slices.edges", list(range(1, 22))), "slices.edges"),
    ("slices.keys", _put("slices.keys", "codes"), "slices.keys"),
    ("document_columns", _put("document_columns", [5]), "document_columns"),
    ("code_sets", _put("code_sets", {"ICD-9-CM": None}), "code_sets"),
    ("created", _put("created", 5), "created"),
    ("cophe_version", _put("cophe_version", {"v": 1}), "cophe_version"),
]


def _forged(members: dict[str, bytes], change) -> bytes:
    manifest = json.loads(members["manifest.json"])
    change(manifest)
    return _zip({**members, "manifest.json": json.dumps(manifest).encode()})


def _refused(read, data: bytes, field: str) -> None:
    with pytest.raises(
        InputError, match=rf"^{re.escape(NAME)}: manifest\.json: {re.escape(field)} (must|is missing)"
    ):
        read(data, name=NAME)


@pytest.mark.parametrize(
    "field, change, named", SAVED_CASES, ids=[f"{c[0]}-{i}" for i, c in enumerate(SAVED_CASES)]
)
def test_a_forged_field_of_a_saved_analysis_is_refused_naming_it(field, change, named):
    _refused(read_analysis, _forged(SAVED, change), named)


@pytest.mark.parametrize(
    "field, change, named", AGGREGATE_CASES, ids=[f"{c[0]}-{i}" for i, c in enumerate(AGGREGATE_CASES)]
)
def test_a_forged_field_of_an_aggregate_is_refused_naming_it(field, change, named):
    _refused(read_aggregate, _forged(AGGREGATE_MEMBERS, change), named)


@pytest.mark.parametrize("schema, cases", [(ANALYSIS, SAVED_CASES), (AGGREGATE, AGGREGATE_CASES)])
def test_every_field_of_the_schema_is_forged_here(schema, cases):
    assert {f.path for f in schema} == {c[0] for c in cases}


def test_the_unforged_files_open():
    """The base files of the cases above open: each refusal comes from its one forged field."""
    assert read_analysis(_zip(SAVED), name=NAME).options["max_level"] == "e1"
    assert read_aggregate(_zip(AGGREGATE_MEMBERS), name=NAME).run_names == ["A"]


def test_the_built_in_levels_are_those_of_the_ontologies():
    assert BUILT_IN_LEVELS["icd9"] == icd9_ontology().levels
