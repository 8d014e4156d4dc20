"""The start-up shortcuts of code placement, detection, line numbering and a tree's closure change nothing (issue 28, a lean start).

ICD-9's resolver places a listed code written as the parser writes it without parsing it, and detection asks
each system's form only of the codes no earlier system claimed. Both are checked here against the plain
formulation: every code through :func:`~cophe_core.ontology.icd9.parse_code`, every system asked of every code.
"""

from __future__ import annotations

import random
import re

import numpy as np
import pytest
import scipy.sparse as sp
from hypothesis import given, settings
from hypothesis import strategies as st

from cophe_core.base import files
from cophe_core.ontology import detect, icd9
from cophe_core.ontology.cache import from_arrays, to_arrays
from cophe_core.ontology.systems import REGISTRY
from tests.conftest import examples


def _variants(key: str) -> list[str]:
    """A code as files write it: as listed, lower case, padded, undotted, with a trailing dot, zero-padded."""
    return [key, key.lower(), f" {key} ", key.replace(".", ""), f"{key}.", f"0{key}", f"{key}9"]


def _codes(n: int = 1500) -> list[str]:
    onto = icd9.icd9_ontology()
    keys = sorted(onto.codes)
    picked = random.Random(28).sample(keys, n) + ["042", "V08", "401", "38.9", "038.9", "00-99", "390-459"]
    return sorted({v for k in picked for v in _variants(k)} | {"I10", "0DTJ4ZZ", "zz", "", "E849.7"})


def _same(a, b) -> None:
    assert a.nodes.tolist() == b.nodes.tolist()
    assert a.reasons == b.reasons
    assert a.flags == b.flags
    assert a.ontology.keys.tolist() == b.ontology.keys.tolist()


@pytest.mark.parametrize("system", ["auto", "diagnosis", "procedure"])
@pytest.mark.parametrize("undotted", [False, True], ids=["dotted-input", "with-4019"])
def test_icd9_placement_is_the_parsers(monkeypatch, system, undotted):
    codes = _codes()
    if not undotted:  # no four-digit code: a bare 401 is a category, not ambiguous
        codes = [c for c in codes if not (c.strip().isdigit() and len(c.strip()) == 4)]
    array = np.array(codes)
    onto = icd9.icd9_ontology()
    fast = icd9.SYSTEM.resolve(array, onto, system)
    assert (
        icd9._written_as_listed(array, {k for k, n in onto.codes.items() if onto.listed[n]}, system).sum()
        > 100
    )  # the shortcut is taken
    monkeypatch.setattr(icd9, "_written_as_listed", lambda c, listed, s: np.zeros(len(c), dtype=bool))
    _same(fast, icd9.SYSTEM.resolve(array, onto, system))


def test_icd9_code_list_is_the_parsers():
    onto = icd9.icd9_ontology()
    for code in _codes(600):
        try:
            expected = icd9.parse_code(code).code in onto.codes
        except ValueError:
            expected = False
        assert icd9.SYSTEM.in_code_list(code) is expected, code


def test_forms_are_the_first_system_that_has_the_form():
    singles = [s for s in REGISTRY.values() if s.parts == {s.name}]
    codes = _codes(600) + ["I10", "S52.044Q", "0DTJ4ZZ", "0bh1", "bw21", "B20", "3023", "V45.81", "E11.9"]
    expected = {c: next((s.name for s in singles if s.has_form(c)), "shared-form") for c in codes}
    assert detect._forms(codes) == expected
    assert set(expected.values()) == {"icd9", "icd10cm", "icd10pcs", "shared-form"}


@settings(max_examples=examples(400), deadline=None)
@given(text=st.text(alphabet="a,\t \r\n\f\v", max_size=30), sep=st.sampled_from([",", "\t"]))
def test_blank_line_is_the_one_pattern_search(text, sep):
    """The two-pattern search finds a blank line exactly where the one pattern with ``(?:^|\\n)`` does."""
    space = " \r\f\v" if sep == "\t" else " \t\r\f\v"
    one = re.compile(rf"(?:^|\n)[{space}]*\n")
    assert files._has_blank_line(text, sep) is bool(one.search(text.rstrip()))


def test_a_trees_closure_rows_are_the_closures():
    """A tree whose closure is not built gives a few nodes' rows from their ancestors: the closure's rows."""
    fresh = from_arrays(to_arrays(icd9.icd9_ontology()))  # a copy with no closure built yet
    nodes = np.array(
        [0, 5, 5, fresh.codes["401.9"], fresh.codes["V45.81"], fresh.codes["40.19"], fresh.n_nodes - 1]
    )
    rows = fresh.closure_of(nodes)
    assert "closure" not in fresh.__dict__  # the shortcut was taken
    mark = np.zeros(fresh.n_nodes, dtype=np.int32)
    mark[nodes] = 1
    expected = sp.csr_matrix(sp.diags(mark, dtype=np.int32) @ fresh.closure)
    assert rows.shape == expected.shape and rows.dtype == expected.dtype
    assert (rows != expected).nnz == 0
    assert sorted(fresh.keys[rows[fresh.codes["401.9"]].indices]) == ["390-459", "401", "401-405", "401.9"]


_SOME = ["401.9", "428.0", "4019", "684", "V45.81", "zz", "250.00", "38.93"]


@settings(max_examples=examples(60), deadline=None)
@given(st.lists(st.tuples(st.sampled_from(["", "A", "B"]), st.sampled_from(_SOME)), max_size=40))
def test_each_rows_input_and_code_are_the_naive_ones(rows):
    """encode's placement counts each input's distinct codes and finds each row's by index: the distinct
    (input, code) pairs, input by input and each input's codes sorted, and each row's index among them, are
    those of a plain loop."""
    import pandas as pd

    from cophe_core.scoring.labels import _resolve_inputs

    keys = ["", "A", "B"]
    which = np.array([k for k, _ in rows], dtype=object)
    values = pd.Series([c for _, c in rows], dtype=str)
    codes, ids, placed = _resolve_inputs(values, which, keys, icd9.icd9_ontology(), "auto")
    naive = [(k, c) for k in keys for c in sorted({c for kk, c in rows if kk == k})]
    assert codes.tolist() == [c for _, c in naive]
    assert [naive[i] for i in ids.tolist()] == rows
    assert len(placed.nodes) == len(naive)
