"""networkx for user hierarchies: validation, longest-path levels, DiGraph input, to_networkx and round trips."""

from __future__ import annotations

import random

import networkx as nx
import numpy as np
import pytest

from cophe_core import InputError, load_ontology, read_labels, score_files, score_labels
from cophe_core.ontology import OntologyBuilder, hierarchy_from_networkx
from cophe_core.ontology.custom import hierarchy_from_edges, load_hierarchy
from tests.conftest import long_csv

# A DAG with shortcut edges: x hangs under ab (depth 2) and directly under root and A, so its
# longest path is root → A → ab → x (3) while its shortest is root → x (1).
SHORTCUTS = b"""child,parent,title
root,,Everything
A,root,Alpha
B,root,Beta
ab,A,
ab,B,
ab,root,
x,ab,Shared leaf
x,root,
x,A,
b1,B,
"""
SHORTCUT_LEVELS = {"root": "d0", "A": "d1", "B": "d1", "ab": "d2", "b1": "d2", "x": "d3"}


def levels_of(onto) -> dict[str, str]:
    return {k: onto.levels[onto.level[n]] for k, n in onto.codes.items()}


# ----------------------------------------------------------------------------- the old implementation
def reference_edges(edges):
    """The hand-written Kahn's algorithm this module replaced, kept to pin levels and node order."""
    parents: dict[str, list[str]] = {}
    lines: dict[str, int] = {}
    titles: dict[str, str] = {}
    for child, parent, title, line in edges:
        parents.setdefault(child, [])
        lines.setdefault(child, line)
        if parent and parent not in parents[child]:
            parents[child].append(parent)
        if title:
            titles[child] = title
    children: dict[str, list[str]] = {n: [] for n in parents}
    missing = {n: len(ps) for n, ps in parents.items()}
    for n, ps in parents.items():
        for p in ps:
            children[p].append(n)
    depth = {n: 0 for n, k in missing.items() if k == 0}
    queue = list(depth)
    while queue:
        node = queue.pop()
        for c in children[node]:
            depth[c] = max(depth.get(c, 0), depth[node] + 1)
            missing[c] -= 1
            if missing[c] == 0:
                queue.append(c)
    top = max(depth.values())
    b = OntologyBuilder("ref", tuple(f"d{d}" for d in range(top, -1, -1)))
    for node in sorted(parents, key=lambda n: (depth[n], lines[n])):
        first = parents[node][0] if parents[node] else None
        b.add(
            f"d{depth[node]}",
            node,
            titles.get(node, node),
            parent=(f"d{depth[first]}", first) if first else None,
            code=True,
        )
        for extra in parents[node][1:]:
            b.add_parent((f"d{depth[node]}", node), (f"d{depth[extra]}", extra))
    return b.build()


def random_dag_rows(seed: int, n: int = 40) -> list[tuple[str, str, str, int]]:
    """Node i gets 1-3 parents among nodes 0..i-1 (many of them shortcuts), rows shuffled."""
    rng = random.Random(seed)
    rows = [("n0", "", "", 0)]
    for i in range(1, n):
        for p in rng.sample(range(i), min(i, rng.randint(1, 3))):
            rows.append((f"n{i}", f"n{p}", "", 0))
    head, rest = rows[:1], rows[1:]
    rng.shuffle(rest)
    return [(c, p, t, line) for line, (c, p, t, _) in enumerate(head + rest, start=2)]


def same_ontology(a, b) -> None:
    assert a.levels == b.levels
    for attr in ("keys", "titles", "level", "parent", "listed"):
        np.testing.assert_array_equal(getattr(a, attr), getattr(b, attr), err_msg=attr)
    assert a.codes == b.codes
    ea = sorted(zip(*a.extra_edges)) if a.extra_edges else []
    eb = sorted(zip(*b.extra_edges)) if b.extra_edges else []
    assert ea == eb


# ----------------------------------------------------------------------------- levels
def test_longest_path_levels_on_shortcut_edges():
    onto = load_hierarchy(SHORTCUTS, name="s.csv")
    assert onto.levels == ("d3", "d2", "d1", "d0")
    assert levels_of(onto) == SHORTCUT_LEVELS
    x = onto.codes["x"]
    assert onto.keys[onto.parent[x]] == "ab"  # the first row's parent stays primary
    assert sorted(onto.keys[onto.closure[x].indices]) == ["A", "B", "ab", "root", "x"]


@pytest.mark.parametrize("seed", range(6))
def test_levels_and_node_order_equal_the_old_implementation(seed):
    rows = random_dag_rows(seed)
    new = hierarchy_from_edges(rows, name="ref")
    assert new.is_dag
    same_ontology(new, reference_edges(rows))


def test_levels_equal_the_old_implementation_on_the_shortcut_dag():
    import csv
    import io

    rows = [(r[0], r[1], r[2], i) for i, r in enumerate(csv.reader(io.StringIO(SHORTCUTS.decode())), 1)][1:]
    same_ontology(load_hierarchy(SHORTCUTS, name="s.csv"), reference_edges(rows))


# ----------------------------------------------------------------------------- validation
def test_cycle_is_reported_with_its_rows():
    data = b"child,parent\nroot,\nq,root\nb,a\nc,b\na,c\na,root\n"
    with pytest.raises(InputError) as e:
        load_hierarchy(data, name="h.csv")
    assert str(e.value) == (
        "h.csv: the hierarchy has a cycle a → b → c → a (each node the parent of the next), "
        "from the rows at lines 4 (b,a), 5 (c,b), 6 (a,c); a node cannot be its own ancestor: "
        "remove or fix one of these rows"
    )


def test_several_roots_are_named_with_their_lines():
    with pytest.raises(
        InputError, match=r"h.csv: 2 roots without a common root \(r at line 2, s at line 4\)"
    ):
        load_hierarchy(b"child,parent\nr,\na,r\ns,\n", name="h.csv")


@pytest.mark.parametrize(
    "graph,message",
    [
        (
            nx.DiGraph([("r", "a"), ("a", "b"), ("b", "c"), ("c", "a")]),
            "networkx graph: the hierarchy has a cycle a → b → c → a (each node the parent of the next), from the "
            "edges a → b, b → c, c → a; a node cannot be its own ancestor: remove or reverse one of them",
        ),
        (
            nx.DiGraph([("r", "a"), ("a", "a")]),
            "networkx graph: 'a' is its own parent; a node cannot be its own ancestor: remove that edge",
        ),
        (
            nx.DiGraph([("r", "a"), ("s", "b")]),
            "networkx graph: 2 roots without a common root (r, s); add one root node and make these its children",
        ),
        (
            nx.Graph([("r", "a")]),
            "networkx graph: expected a networkx.DiGraph with edges parent → child, got networkx.classes.graph.Graph; "
            "build a directed graph with edges parent → child, e.g. nx.DiGraph(edges)",
        ),
        (
            {"r": ["a"]},
            "networkx graph: expected a networkx.DiGraph with edges parent → child, got builtins.dict",
        ),
        (nx.DiGraph(), "networkx graph: no nodes; expected edges parent → child"),
        (nx.DiGraph([(1, "1")]), "networkx graph: nodes 1 and '1' both read as code '1'; rename one"),
    ],
)
def test_bad_graphs_raise_input_error(graph, message):
    with pytest.raises(InputError) as e:
        hierarchy_from_networkx(graph)
    assert str(e.value) == message
    with pytest.raises(InputError):
        load_ontology(graph)


# ----------------------------------------------------------------------------- DiGraph input
def shortcut_graph() -> nx.DiGraph:
    g = nx.DiGraph()
    g.add_node("root", title="Everything")
    g.add_node("A", label="Alpha")  # `label` is read when there is no `title`
    g.add_node("B", title="Beta", label="ignored")
    g.add_edges_from(
        [
            ("root", "A"),
            ("root", "B"),
            ("A", "ab"),
            ("B", "ab"),
            ("root", "ab"),
            ("ab", "x"),
            ("root", "x"),
            ("A", "x"),
            ("B", "b1"),
        ]
    )
    g.nodes["x"]["title"] = "Shared leaf"
    return g


GOLD = [("d1", "x"), ("d1", "b1"), ("d2", "ab"), ("d3", "A")]
PRED = [("d1", "x"), ("d1", "ab"), ("d2", "b1"), ("d2", "x"), ("d3", "root")]


def test_digraph_is_read_like_the_csv():
    g, csv_onto = hierarchy_from_networkx(shortcut_graph(), name="s"), load_hierarchy(SHORTCUTS, name="s.csv")
    assert levels_of(g) == SHORTCUT_LEVELS
    assert {k: g.titles[n] for k, n in g.codes.items()} == {
        k: csv_onto.titles[n] for k, n in csv_onto.codes.items()
    }
    assert g.keys[g.parent[g.codes["x"]]] == "ab"  # the first edge added into x
    assert g.code_sets == {"s": "networkx graph"} and g.name == "s"


def test_digraph_input_scores_equal_csv_input_scores():
    csv_ev = score_files(
        long_csv(GOLD), {"r": long_csv(PRED)}, ontology=load_hierarchy(SHORTCUTS, name="s.csv")
    )
    graph_ev = score_files(long_csv(GOLD), {"r": long_csv(PRED)}, ontology=shortcut_graph())
    labels_ev = score_labels(
        read_labels(long_csv(GOLD)), {"r": read_labels(long_csv(PRED))}, ontology=shortcut_graph()
    )
    a = csv_ev.evaluation("r", max_level="d0").to_dict()
    for other in (graph_ev, labels_ev):
        b = other.evaluation("r", max_level="d0").to_dict()
        for key in ("levels", "documents", "flat", "set_based", "cophe", "macro"):
            assert a[key] == b[key], key
    # hand-worked, level d2 (nodes ab, b1), as (gold y, predicted x):
    #   d1: ab (1: x; 2: x, ab) → TP 1 FP 1; b1 (1, 0) → FN 1.   d2: ab (1: ab; 1: x) → TP 1; b1 (0, 1) → FP 1.
    #   d3: no code at or below d2.   Total TP 2, FP 2, FN 1.
    # level d1 (A, B): d1: A (1: x; 2: x, ab) B (2: x, b1; 2: x, ab) → TP 3 FP 1;
    #   d2: A (1; 1) B (1; 2: b1, x) → TP 2 FP 1; d3: A (1; 0) → FN 1.   Total TP 5, FP 2, FN 1.
    # level d0 (root, counting each code once however many paths): d1 (2; 2), d2 (1; 2), d3 (1; 1) → 4, 1, 0.
    got = {lv: tuple(a["cophe"]["levels"][lv][k] for k in ("tp", "fp", "fn")) for lv in ("d2", "d1", "d0")}
    assert got == {"d2": (2, 2, 1), "d1": (5, 2, 1), "d0": (4, 1, 0)}


def test_primary_edge_attribute_and_multidigraph():
    g = nx.MultiDiGraph([("r", "a"), ("r", "b"), ("a", "x"), ("b", "x"), ("b", "x")])
    g.add_edge("b", "x", primary=True)
    onto = hierarchy_from_networkx(g)
    assert onto.keys[onto.parent[onto.codes["x"]]] == "b" and len(onto.extra_edges[0]) == 1
    assert onto.name == "custom"


# ----------------------------------------------------------------------------- to_networkx
def test_to_networkx_round_trip_keeps_structure_and_scores():
    onto = load_hierarchy(SHORTCUTS, name="s.csv")
    g = onto.to_networkx()
    assert g.number_of_nodes() == onto.n_nodes == 6
    assert g.number_of_edges() == 9  # every row with a parent, shortcuts included
    assert [p for p in g.pred["x"]] == ["ab", "root", "A"] and g.edges["ab", "x"]["primary"]
    assert not g.edges["root", "x"]["primary"]
    assert g.nodes["x"] == {"key": "x", "title": "Shared leaf", "level": "d3", "listed": True}
    assert g.graph == {
        "name": "s",
        "levels": ["d3", "d2", "d1", "d0"],
        "default_max_level": "d1",
        "code_sets": onto.code_sets,
    }
    back = hierarchy_from_networkx(g)
    same_ontology(back, onto)
    assert back.name == "s" and back.code_sets == {"s": "networkx graph"}
    a = score_files(long_csv(GOLD), {"r": long_csv(PRED)}, ontology=onto).evaluation("r", max_level="d0")
    b = score_files(long_csv(GOLD), {"r": long_csv(PRED)}, ontology=back).evaluation("r", max_level="d0")
    assert a.levels_table.equals(b.levels_table)


def test_icd9_to_networkx_is_a_forest_with_icd_parents(icd9):
    g = icd9.to_networkx()
    assert g.number_of_nodes() == icd9.n_nodes
    assert g.number_of_edges() == icd9.n_nodes - len(icd9.roots())
    assert nx.is_branching(g)  # a directed forest: one parent at most
    assert nx.number_weakly_connected_components(g) == len(icd9.roots()) == 20
    assert list(g.pred["401.9"]) == ["401"]
    assert list(g.pred["401"]) == ["block:401-405"]
    assert list(g.pred["block:401-405"]) == ["chapter:390-459"]
    assert g.nodes["401.9"] == {
        "key": "401.9",
        "title": "Unspecified essential hypertension",
        "level": "e1",
        "listed": True,
    }
    assert g.nodes["block:401-405"]["title"] == "Hypertensive disease"
    # a block and a chapter that share a key stay two nodes
    assert {"block:280-289", "chapter:280-289"} <= set(g)


def test_to_networkx_carries_systems():
    b = OntologyBuilder("two", ("code", "top"))
    b.add("top", "T", "Top", system="S1")
    b.add("code", "c", "C", parent=("top", "T"), code=True, system="S1")
    b.add("top", "U", "Other", system="S2")
    g = b.build().to_networkx()
    assert g.nodes["top:T"]["system"] == "S1" and g.nodes["top:U"]["system"] == "S2"
    assert list(g.edges) == [("top:T", "c")]


def test_too_deep_a_hierarchy_is_an_input_error(monkeypatch):
    """Levels are int16: 128 levels, once the limit (int8), are read; the limit's message is kept."""
    chain = nx.path_graph([f"n{i}" for i in range(128)], create_using=nx.DiGraph)
    assert len(hierarchy_from_networkx(chain).levels) == 128
    monkeypatch.setattr("cophe_core.ontology.custom.MAX_LEVELS", 127)
    with pytest.raises(
        InputError,
        match="networkx graph: the hierarchy is 128 or more levels deep \\(down to n127\\); "
        "at most 127 levels are supported",
    ):
        hierarchy_from_networkx(chain)


def node_table(g: nx.DiGraph) -> dict[str, tuple]:
    """Per node: title, level, primary parent and the other parents (in the graph's order)."""
    return {
        v: (
            a["title"],
            a["level"],
            [p for p in g.pred[v] if g.edges[p, v]["primary"]],
            [p for p in g.pred[v] if not g.edges[p, v]["primary"]],
        )
        for v, a in g.nodes(data=True)
    }


@pytest.mark.parametrize("name", ["icd9", "icd10cm", "icd10pcs"])
def test_icd_to_networkx_reads_back(name):
    """An ICD ontology is a forest (20 chapters for ICD-9, no common root) whose ICD-10-CM codes may skip a
    level (S02.0XXA, e4, under S02.0, e1): its graph declares the levels, and the import keeps them."""
    onto = load_ontology(name)
    g = onto.to_networkx()
    back = hierarchy_from_networkx(g)
    assert back.levels == onto.levels and back.default_level == onto.default_level
    assert back.n_nodes == onto.n_nodes and len(back.roots()) == len(onto.roots()) > 1
    assert node_table(back.to_networkx()) == node_table(g)  # nodes, parents, titles, levels
    if name == "icd10cm":
        assert g.nodes["S02.0XXA"]["level"] == "e4" and list(g.pred["S02.0XXA"]) == ["S02.0"]
        assert back.levels[back.level[back.codes["S02.0XXA"]]] == "e4"


def test_icd9_round_trip_scores_the_same(icd9):
    back = hierarchy_from_networkx(icd9.to_networkx())
    gold = long_csv([("d1", "401.9"), ("d1", "428.0"), ("d2", "V45.81")])
    pred = long_csv([("d1", "401.1"), ("d1", "428.0"), ("d1", "428.1"), ("d2", "250.00")])
    a = score_files(gold, {"r": pred}, ontology=icd9).evaluation("r")
    b = score_files(gold, {"r": pred}, ontology=back).evaluation("r")
    assert list(a.levels_table.index) == list(b.levels_table.index)
    assert a.levels_table.to_numpy().tolist() == b.levels_table.to_numpy().tolist()


def declared(edges, levels, level_of):
    g = nx.DiGraph(edges, levels=levels)
    nx.set_node_attributes(g, level_of, "level")
    return g


@pytest.mark.parametrize(
    "graph,message",
    [
        (
            declared([("A", "a")], ["code", "group"], {"A": "group", "a": "leaf"}),
            "networkx graph: node 'a' has level 'leaf', not one of the graph's levels (code, group); give every "
            "node one of them, or remove the graph's levels attribute to have levels computed as depths",
        ),
        (
            declared([("A", "a")], ["code", "group"], {"A": "group"}),
            "networkx graph: node 'a' has level None, not one of the graph's levels (code, group)",
        ),
        (
            declared(
                [("A", "a"), ("B", "b")],
                ["code", "group"],
                {"A": "code", "a": "group", "B": "group", "b": "code"},
            ),
            "networkx graph: the edge A → a goes from level code to level group (1 such); a parent's level must be "
            "above its child's (levels are listed bottom-up)",
        ),
        (
            declared([("A", "a")], ["code", "code"], {"A": "code", "a": "code"}),
            "networkx graph: the graph attribute levels is ['code', 'code']; expected a list of distinct level names",
        ),
    ],
)
def test_declared_levels_are_checked(graph, message):
    with pytest.raises(InputError) as e:
        hierarchy_from_networkx(graph)
    assert str(e.value).startswith(message)
