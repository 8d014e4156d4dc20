"""Level names in a coder's words, for every built-in code system and for user hierarchies."""

from __future__ import annotations

import pytest

from cophe_core.ontology import load_hierarchy, load_ontology
from cophe_core.ontology.levels import LEVEL_NAMES, level_name, level_names


def test_icd9_levels_read_as_the_tabular_list_names_them(icd9):
    assert list(level_names(icd9).values()) == [
        "Specific code (5th digit)",
        "Subcategory (4th digit)",
        "Category (3 digits)",
        "Section",
        "Chapter",
    ]


@pytest.mark.parametrize("name", ["icd10cm", "icd10pcs", "icd10"])
def test_every_built_in_level_has_a_name_without_identifiers(name):
    onto = load_ontology(name)
    names = level_names(onto)
    assert set(names) == set(onto.levels) == set(LEVEL_NAMES[name])
    for lv, text in names.items():
        assert "_" not in text and text != lv and not text[0].islower()


def test_rows_and_user_hierarchies():
    h = load_hierarchy(b"child,parent\nroot,\nA,root\na1,A\n", name="tree.csv")
    assert [level_name(h, lv) for lv in h.levels] == ["Depth 2", "Depth 1", "Depth 0 (top)"]
    assert level_name(h, "overall") == "All levels together" and level_name(h, "leaf") == "Codes as given"
    assert level_name(h, "some_level") == "some level"
