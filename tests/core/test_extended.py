"""Ontology.extended: a tree grows by appending (its built closure and ancestors carried over), and gives
exactly what rebuilding it from scratch gives."""

from __future__ import annotations

import numpy as np
import pytest
import scipy.sparse as sp

from cophe_core.ontology import icd9_ontology, load_ontology
from cophe_core.ontology.custom import hierarchy_from_edges
from cophe_core.ontology.icd9 import parse_code, place_unlisted
from cophe_core.ontology.icd10 import place_by_prefix


def same(a, b) -> None:
    """Two ontologies node for node, with the same closure and ancestors."""
    for name in ("keys", "titles", "level", "parent", "listed"):
        assert np.array_equal(getattr(a, name), getattr(b, name)), name
    assert a.codes == b.codes
    assert (a.systems is None) == (b.systems is None)
    if a.systems is not None:
        assert np.array_equal(a.systems, b.systems)
    assert np.array_equal(a.ancestors, b.ancestors)
    assert (a.closure != b.closure).nnz == 0
    assert a.closure.has_sorted_indices and a.closure.dtype == b.closure.dtype


def rebuilt(onto, nodes):
    """The reference: the builder, from every node of ``onto`` plus ``nodes``."""
    return onto._rebuilt_with(list(nodes))


def test_icd9_chains_of_new_nodes_match_a_rebuild():
    """A new category with a new code under it (the parent is new too), and a code under a listed category."""
    onto = icd9_ontology()
    assert onto.closure.nnz  # built: carried over by the extension
    codes = [
        parse_code("401.91", "diagnosis"),
        parse_code("364.99"),
        parse_code("E849.9"),
        parse_code("V99.1"),
    ]
    grown = place_unlisted(onto, codes)
    assert grown.n_nodes > onto.n_nodes and "closure" in grown.__dict__  # carried, not recomputed
    nodes = [
        (onto.levels[int(grown.level[j])], grown.keys[j], grown.titles[j], int(grown.parent[j]))
        for j in range(onto.n_nodes, grown.n_nodes)
    ]
    same(grown, rebuilt(onto, nodes))


def test_icd10_codes_placed_by_prefix_match_a_rebuild():
    onto = load_ontology("icd10")
    assert onto.closure.nnz  # built: carried over, systems and all
    cats = sorted({k[:3] for k in onto.codes if len(k) >= 5 and k[3] == "."})[:100]
    grown, unplaced = place_by_prefix(onto, [f"{c}.ZZ" for c in cats] + ["0DTJ4ZY"])
    assert not unplaced and grown.n_nodes == onto.n_nodes + 101
    assert set(grown.systems[onto.n_nodes :]) == {"ICD-10-CM", "ICD-10-PCS"}
    nodes = [
        (onto.levels[int(grown.level[j])], grown.keys[j], grown.titles[j], int(grown.parent[j]))
        for j in range(onto.n_nodes, grown.n_nodes)
    ]
    same(grown, rebuilt(onto, nodes))


def test_a_user_tree_with_named_parents_existing_nodes_and_errors():
    onto = hierarchy_from_edges([("r", "", "", 1), ("a", "r", "", 2), ("x", "a", "", 3)])
    assert onto.levels == ("d2", "d1", "d0")
    nodes = [
        ("d1", "b", "new b", ("d0", "r")),  # a new node under an existing one, by name
        ("d2", "y", "new y", ("d1", "b")),  # under the node just added
        ("d2", "x", "again", ("d1", "a")),  # exists already: kept, not added
    ]
    grown = onto.extended(nodes)
    assert grown.n_nodes == onto.n_nodes + 2 and grown.titles[grown.codes["x"]] == "x"  # the title kept
    same(grown, rebuilt(onto, nodes))
    with pytest.raises(ValueError, match="must sit above level"):
        onto.extended([("d1", "z", "", onto.codes["x"])])


def test_nothing_new_keeps_every_node():
    onto = icd9_ontology()
    grown = onto.extended([("e1", "401.9", "listed already", ("e0", "401"))])
    assert grown.n_nodes == onto.n_nodes and grown.codes == onto.codes


def test_a_dag_is_rebuilt():
    dag = hierarchy_from_edges(
        [("r", "", "", 1), ("a", "r", "", 2), ("b", "r", "", 3), ("x", "a", "", 4), ("x", "b", "", 5)]
    )
    grown = dag.extended([(dag.levels[0], "y", "", dag.codes["b"])])
    assert grown.is_dag and grown.n_nodes == dag.n_nodes + 1
    c = grown.closure[grown.codes["y"]]
    assert sorted(grown.keys[c.indices]) == ["b", "r", "y"] and isinstance(c, sp.csr_matrix)
