"""Code systems behind one protocol: the built-in ones meet it, a new one is one object plus one registry
line, and nothing else switches on a code system's name."""

from __future__ import annotations

import re
from pathlib import Path

import numpy as np
import pytest

from cophe_core import score_files
from cophe_core.base.files import Reason
from cophe_core.ontology import REGISTRY, CodeSystem, family_level, load_ontology, system_of
from cophe_core.ontology.base import Ontology, OntologyBuilder, Placement
from cophe_core.ontology.detect import detect_system
from tests.conftest import ROOT


class Toy:
    """A code system of three families of two codes each: codes ``T-A1``, family ``T-A``."""

    name = "toy"
    description = "Toy codes (T-A1)"
    parts = frozenset({"toy"})
    family_level = "family"
    common_families: tuple[str, ...] = ("T-A",)
    _form = re.compile(r"^T-[A-C][1-2]?$")

    def build(self) -> Ontology:
        b = OntologyBuilder("toy", ("code", "family"))
        b.code_system = "toy"
        b.default_max_level = "family"
        b.code_sets = {"Toy": "1"}
        for fam in "ABC":
            parent = b.add("family", f"T-{fam}", f"Family {fam}")
            for i in (1, 2):
                b.add("code", f"T-{fam}{i}", f"Code {fam}{i}", parent=parent, code=True)
        return b.build()

    def resolve(self, codes: np.ndarray, onto: Ontology, system: str) -> Placement:
        ids = np.full(len(codes), -1, dtype=np.int64)
        reasons = {}
        for i, c in enumerate(codes):
            key = c.strip().upper()
            if key in onto.codes:
                ids[i] = onto.codes[key]
            else:
                reasons[i] = (Reason.MALFORMED_CODE, f"not a toy code: {c}")
        return Placement(ids, reasons, {}, onto)

    def has_form(self, code: str) -> bool:
        return bool(self._form.match(code.strip().upper()))

    def in_code_list(self, code: str) -> bool:
        return code.strip().upper() in self.build().codes

    def readable_with_system(self, code: str) -> bool:
        return False


@pytest.fixture
def toy(monkeypatch):
    monkeypatch.setitem(REGISTRY, "toy", Toy())  # the one registry line
    return REGISTRY["toy"]


def test_the_built_in_systems_meet_the_protocol():
    assert list(REGISTRY) == ["icd9", "icd10cm", "icd10pcs", "icd10"]
    for name, system in REGISTRY.items():
        assert isinstance(system, CodeSystem), name
        onto = system.build()
        assert onto.name == name and onto.code_system == name and system_of(onto) is system
        assert system.family_level in onto.levels and family_level(onto) == system.family_level
        keys = {str(k) for k in onto.keys}
        assert set(system.common_families) <= keys, name  # the generator's families exist


def test_a_new_code_system_is_one_object_and_one_registry_line(toy):
    assert isinstance(toy, CodeSystem)
    onto = load_ontology("toy")
    assert system_of(onto) is toy and family_level(onto) == "family"
    # detection finds it by the form of its codes
    assert detect_system(["T-A1", "T-B2", "t-c1"]).ontology == "toy"
    gold = b"doc_id,code\n1,T-A1\n1,T-B1\n2,T-C2\n"
    run = b"doc_id,code\n1,T-A2\n1,T-B1\n2,T-C2\n2,nope\n"
    s = score_files(gold, {"run": run})  # ontology="auto"
    ev = s.evaluation("run")
    assert ev.ontology.name == "toy"
    assert (ev.score("flat").tp, ev.score("flat").fp) == (2, 1)  # T-A2 for T-A1 is wrong as a code
    assert ev.score("cophe", "family").tp == 3  # and right as a family
    assert s.corpus.rejected.kind.tolist() == [Reason.MALFORMED_CODE]


def test_a_user_hierarchy_named_like_a_code_system_is_read_by_its_names(tmp_path: Path):
    """The hierarchy's file name is its ontology's name; the code system is what built it, not the name."""
    path = tmp_path / "icd9.csv"
    path.write_text("child,parent\nroot,\n4019,root\n")
    onto = load_ontology(path)
    assert onto.name == "icd9" and onto.code_system is None and system_of(onto) is None
    s = score_files(b"doc_id,code\n1,4019\n", {"run": b"doc_id,code\n1,4019\n"}, ontology=path)
    assert s.evaluation("run").score("flat").tp == 1  # ICD-9 rules would have called 4019 ambiguous


def test_no_module_switches_on_a_code_system_name():
    """Code-system names appear in the code systems' own modules and the registry only."""
    allowed = {"icd9.py", "icd10.py", "systems.py", "detect.py", "__init__.py"}
    pattern = re.compile(r"""(==|!=|\bin)\s*\(?["'](icd9|icd10cm|icd10pcs|icd10)["']|["']e0["']\s+in\b""")
    hits = [
        f"{path.relative_to(ROOT)}:{n}"
        for path in sorted([*(ROOT / "cophe_core").rglob("*.py"), *(ROOT / "dashboard").rglob("*.py")])
        if path.name not in allowed or path.parent.name != "ontology"
        for n, line in enumerate(path.read_text().splitlines(), 1)
        if pattern.search(line)
    ]
    assert hits == []
