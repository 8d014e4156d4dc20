"""User hierarchies: CSV edges (trees and DAGs), validation, and the CoPHE-paper JSON form."""

from __future__ import annotations

import json

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from cophe_core import InputError, score_files
from cophe_core.ontology.custom import hierarchy_from_edges, load_hierarchy
from tests.conftest import examples, long_csv

DAG = b"""child,parent,title
root,,Everything
A,root,Alpha
B,root,Beta
a1,A,
ab,A,
ab,B,
b1,B,
x,ab,Shared leaf
"""


@pytest.fixture(scope="module")
def dag():
    return load_hierarchy(DAG, name="dag.csv")


def test_dag_levels_are_longest_depths(dag):
    assert dag.levels == ("d3", "d2", "d1", "d0") and dag.is_dag
    level = {k: dag.levels[dag.level[n]] for k, n in dag.codes.items()}
    assert level == {"root": "d0", "A": "d1", "B": "d1", "a1": "d2", "ab": "d2", "b1": "d2", "x": "d3"}
    assert dag.titles[dag.codes["x"]] == "Shared leaf" and dag.titles[dag.codes["a1"]] == "a1"


def test_dag_closure_counts_each_ancestor_once(dag):
    row = dag.closure[dag.codes["x"]]
    assert sorted(dag.keys[row.indices]) == ["A", "B", "ab", "root", "x"]
    assert (row.data == 1).all()  # root is reached through A and through B, and marked once


# Hand-worked: gold {x, a1}, predicted {x, b1, ab}.
#   y: d3 x=1 | d2 ab=1 a1=1 | d1 A=2 B=1 | d0 root=2
#   x: d3 x=1 | d2 ab=2 b1=1 | d1 A=2 B=3 | d0 root=3
DAG_EXPECTED = {
    ("cophe", "d3"): (1, 0, 0),
    ("cophe", "d2"): (1, 2, 1),
    ("cophe", "d1"): (3, 2, 0),
    ("cophe", "d0"): (2, 1, 0),
    ("set_based", "d3"): (1, 0, 0),
    ("set_based", "d2"): (1, 1, 1),
    ("set_based", "d1"): (2, 0, 0),
    ("set_based", "d0"): (1, 0, 0),
}


def test_dag_hand_worked_scores(dag):
    gold = long_csv([("doc", "x"), ("doc", "a1")])
    pred = long_csv([("doc", "x"), ("doc", "b1"), ("doc", "ab")])
    ev = score_files(gold, {"r": pred}, ontology=dag).evaluation("r", max_level="d0")
    for (measure, level), counts in DAG_EXPECTED.items():
        s = ev.score(measure, level)
        assert (s.tp, s.fp, s.fn) == counts, (measure, level)
    assert dag.default_level == "d1"


@pytest.mark.parametrize(
    "data,fragment",
    [
        (
            b"child,parent\nr,\na,r\nb,a\na,b\n",
            r"h.csv: the hierarchy has a cycle a → b → a .* lines 4 \(b,a\), 5 \(a,b\)",
        ),
        (b"child,parent\nr,\na,r\na,a\n", "h.csv, line 4: 'a' is its own parent"),
        (b"child,parent\nr,\na,zz\n", "parent 'zz' of 'a' is not listed"),
        (b"child,parent\nr,\ns,\na,r\n", "2 roots without a common root"),
        (b"child,parent\na,b\nb,a\n", "cycle"),
        (b"", "empty"),
    ],
)
def test_bad_hierarchies_are_rejected_with_a_reason(data, fragment):
    with pytest.raises(InputError, match=fragment):
        load_hierarchy(data, name="h.csv")


def test_unknown_label_is_rejected_not_dropped(dag):
    s = score_files(long_csv([("d", "x"), ("d", "nope")]), {"r": long_csv([("d", "x")])}, ontology=dag)
    assert s.corpus.rejected.value.tolist() == ["nope"]


# The CoPHE paper's hierarchy files list, for each code, its ancestor at each level above the
# deepest, bottom-up; a code above the deepest level names itself in its own slots.
PAPER_FORM = {
    "p.1": {"parents": ["p", "PQ", "@"], "label": "p one"},
    "p.2": {"parents": ["p", "PQ", "@"], "label": "p two"},
    "q.1": {"parents": ["q", "PQ", "@"], "label": "q one"},
    "r.1": {"parents": ["r", "RS", "@"], "label": "r one"},
    "s": {"parents": ["s", "RS", "@"], "label": "s itself"},
    "p": {"parents": ["p", "PQ", "@"], "label": "p"},
    "q": {"parents": ["q", "PQ", "@"], "label": "q"},
    "r": {"parents": ["r", "RS", "@"], "label": "r"},
}


def scripts_per_level(gold, pred, graph, codes, max_layer):
    """The released scripts' method, re-derived: a leaf diagonal for codes whose first slot is not
    themselves, then one translation matrix per slot; micro P/R/F1 of min/max counts per layer."""
    idx = {c: i for i, c in enumerate(codes)}
    g = np.zeros((len(gold), len(codes)))
    p = np.zeros_like(g)
    for row, doc in enumerate(gold):
        g[row, [idx[c] for c in doc]] = 1
    for row, doc in enumerate(pred):
        p[row, [idx[c] for c in doc]] = 1
    layers = [np.diag([graph[c]["parents"][0] != c for c in codes]).astype(float)]
    for layer in range(max_layer):
        targets = sorted({graph[c]["parents"][layer] for c in codes})
        m = np.zeros((len(codes), len(targets)))
        for c in codes:
            m[idx[c], targets.index(graph[c]["parents"][layer])] = 1
        layers.append(m)
    out = []
    for m in layers:
        x, y = p @ m, g @ m
        tp = np.minimum(x, y).sum()
        fp, fn = np.maximum(x - y, 0).sum(), np.maximum(y - x, 0).sum()
        out.append((tp, fp, fn))
    return out


def test_cophe_json_reproduces_the_scripts_per_level_numbers():
    onto = load_hierarchy(json.dumps(PAPER_FORM).encode(), name="graph.json")
    assert onto.levels == ("L0", "L1", "L2", "L3")
    assert onto.levels[onto.level[onto.codes["s"]]] == "L1"  # names itself in its first slot
    gold = [["p.1", "q.1", "s"], ["r.1"], ["p.2"]]
    pred = [["p.1", "p.2", "s"], ["r.1", "s"], ["q.1"]]
    ev = score_files(
        long_csv([(str(i), c) for i, d in enumerate(gold) for c in d]),
        {"r": long_csv([(str(i), c) for i, d in enumerate(pred) for c in d])},
        ontology=onto,
    ).evaluation("r", max_level="L2")
    leaves_and_s = sorted({c for d in gold + pred for c in d})
    expected = scripts_per_level(gold, pred, PAPER_FORM, leaves_and_s, max_layer=2)
    for level, (tp, fp, fn) in zip(("L0", "L1", "L2"), expected):
        s = ev.score("cophe", level)
        assert (s.tp, s.fp, s.fn) == (tp, fp, fn), level


def test_cophe_json_entries_that_disagree_on_a_parent_are_rejected():
    bad = dict(PAPER_FORM, **{"p.3": {"parents": ["p", "RS", "@"], "label": "p three"}})  # p under PQ and RS
    with pytest.raises(InputError) as e:
        load_hierarchy(json.dumps(bad).encode(), name="graph.json")
    assert str(e.value) == (
        "graph.json: entry 'p.3' puts 'p' (level L1) under 'RS', but entry 'p.1' puts it "
        "under 'PQ'; in this form a node has one parent"
    )


# ---------------------------------------------------------------- hostile hierarchies: an InputError, never a crash
@pytest.mark.parametrize(
    "entries, said",
    [
        ({"a": {"parents": 5}}, "entry 'a': 'parents' must be a list of codes (strings), got 5"),
        ({"a": {"parents": None}}, "entry 'a': 'parents' must be a list of codes (strings), got null"),
        (
            {"a": {"parents": "AR"}, "b": {"parents": "AR"}},
            "entry 'a': 'parents' must be a list of codes (strings), got \"AR\"",
        ),
        (
            {"a": {"parents": [None, "@"]}},
            "entry 'a': 'parents' must be a list of codes (strings), got [null, \"@\"]",
        ),
        ({"a": 3}, "entry 'a': 'parents' must be a list of codes (strings), got 3"),
        ({"a": {"parents": ["x"], "label": ["y"]}}, "entry 'a': 'label' must be text"),
        ({"a": {"parents": ["x", "@"]}, "b": {"parents": ["x", "y"]}}, "puts 'x' (level L1) under 'y'"),
    ],
)
def test_malformed_cophe_json_is_refused_naming_the_entry(entries, said):
    with pytest.raises(InputError, match="h.json: ") as e:
        load_hierarchy(json.dumps(entries).encode(), name="h.json")
    assert said in str(e.value)


def test_a_hierarchy_300_levels_deep_is_read():
    """Levels were int8: a chain deeper than 127 levels was refused (and overflowed before that check)."""
    rows = ["child,parent", "n0,"] + [f"n{i},n{i - 1}" for i in range(1, 300)]
    onto = load_hierarchy("\n".join(rows).encode(), name="deep.csv")
    assert len(onto.levels) == 300 and onto.level[onto.codes["n299"]] == 0
    s = score_files(b"doc_id,code\n1,n299\n", {"r": b"doc_id,code\n1,n298\n"}, ontology=onto)
    assert s.evaluation("r", max_level=onto.levels[-1]).score("cophe").tp == 299  # n298 and its ancestors


def test_utf16_text_as_excel_saves_it_is_read():
    from cophe_core.inputs.readers import read_labels

    raw = read_labels("doc_id,code\n1,401.9\n2,428.0\n".encode("utf-16"), name="unicode.csv")
    assert raw.pairs.code.tolist() == ["401.9", "428.0"] and raw.pairs.line.tolist() == [2, 3]


def test_a_quoted_title_over_two_lines_keeps_the_next_rows_line_numbers():
    text = b'child,parent,title\nroot,,"All\ncodes"\n\nA,root,Alpha\nbad\n'
    with pytest.raises(InputError, match=r"h.csv, line 6: expected child,parent\[,title\], got 'bad'"):
        load_hierarchy(text, name="h.csv")


# ---------------------------------------------------------------- dense DAG closures, by bits
@settings(max_examples=examples(60), deadline=None)
@given(st.lists(st.integers(1, 5), min_size=1, max_size=6), st.randoms(use_true_random=False))
def test_the_closure_by_bits_is_each_nodes_ancestors(widths, rnd):
    """Against networkx's ancestors, on random layered DAGs with shortcuts over several layers."""
    from unittest import mock

    import networkx as nx

    from cophe_core.ontology import base

    layers = [["root"]] + [[f"L{i}N{j}" for j in range(w)] for i, w in enumerate(widths)]
    edges = [("root", "", "", 1)]
    for i, layer in enumerate(layers[1:], start=1):
        above = [n for lay in layers[:i] for n in lay]
        for node in layer:
            parents = {rnd.choice(layers[i - 1])} | set(rnd.sample(above, rnd.randint(0, len(above))))
            edges += [(node, p, "", len(edges) + 1) for p in sorted(parents)]
    onto = hierarchy_from_edges(edges, name="dag")
    calls = []
    real = base._dense_closure
    with (
        mock.patch.object(base, "DENSE_EDGES_PER_NODE", 0),
        mock.patch.object(base, "_dense_closure", lambda *a: calls.append(1) or real(*a)),
    ):
        closure = onto.closure
    assert calls or not onto.is_dag
    g = nx.DiGraph([(p, c) for c, p, _, _ in edges if p])
    for key, node in onto.codes.items():
        got = set(onto.keys[closure[node].indices])
        assert got == nx.ancestors(g, key) | {key}, key


@settings(max_examples=examples(60), deadline=None)
@given(st.lists(st.integers(1, 5), min_size=1, max_size=6), st.randoms(use_true_random=False), st.data())
def test_the_rows_of_a_few_nodes_are_their_closure_rows(widths, rnd, data):
    """Climbing from a few nodes gives their rows of the whole closure, and nothing else."""
    from unittest import mock

    from cophe_core.ontology import base

    layers = [["root"]] + [[f"L{i}N{j}" for j in range(w)] for i, w in enumerate(widths)]
    edges = [("root", "", "", 1)]
    for i, layer in enumerate(layers[1:], start=1):
        above = [n for lay in layers[:i] for n in lay]
        for node in layer:
            parents = [rnd.choice(layers[i - 1])] + rnd.sample(above, rnd.randint(0, len(above)))
            edges += [(node, p, "", len(edges) + 1) for p in parents]
    whole = hierarchy_from_edges(edges, name="dag").closure.toarray()
    onto = hierarchy_from_edges(edges, name="dag")  # a fresh one: its closure not built
    nodes = np.array(data.draw(st.lists(st.integers(0, onto.n_nodes - 1), max_size=6)), dtype=np.int64)
    with mock.patch.object(base, "CLIMB_BUDGET", 10**12):
        rows = onto.closure_of(nodes).toarray()
    assert "closure" not in onto.__dict__ or not onto.is_dag  # it climbed
    expected = np.zeros_like(whole)
    expected[nodes] = whole[nodes]
    assert (rows == expected).all()


@pytest.mark.parametrize(
    "text, titles",
    [
        (b"child,parent,title,notes\nr,,Root,first\nA,r,Alpha,x,y,z\n", {"r": "Root", "A": "Alpha"}),
        (
            b'child,parent,title\nr,,"Root, all"\nA,r,"Alpha\nover two lines",extra\n',
            {"r": "Root, all", "A": "Alpha\nover two lines"},
        ),
        (b"r,\nA,r\n", {"r": "r", "A": "A"}),
        (b"child,parent\nr,\nA,r," + b",x" * 10_000 + b"\n", {"r": "r", "A": "A"}),
    ],
)
def test_rows_with_more_fields_keep_the_first_three(text, titles):
    onto = load_hierarchy(text, name="h.csv")
    assert {k: onto.titles[n] for k, n in onto.codes.items()} == titles


def test_a_row_of_one_field_is_refused_with_its_line():
    with pytest.raises(InputError, match=r"h.csv, line 4: expected child,parent\[,title\], got 'B'"):
        load_hierarchy(b"child,parent\nr,\nA,r\nB\n", name="h.csv")


def test_a_long_cycle_is_named_by_its_first_rows_and_a_count():
    """A 10,000-node cycle once printed all 10,000 rows (296 KB on stderr): the message lists 20, then the count."""
    n = 10_000
    rows = "child,parent\nroot,\nn0,root\n" + "".join(f"n{(i + 1) % n},n{i}\n" for i in range(n))
    with pytest.raises(InputError) as e:
        load_hierarchy(rows.encode(), name="loop.csv")
    message = str(e.value)
    assert len(message) < 2_000, len(message)
    assert message.count("(n") == 20  # twenty rows, each "line (child,parent)"
    assert "… and 9,980 more (a cycle of 10,000 nodes)" in message
    assert message.startswith("loop.csv: the hierarchy has a cycle n")


def test_a_chain_deeper_than_its_ancestors_can_be_kept_for_is_refused_early():
    """A chain 32,766 deep (0.4 MB of rows) peaked at 5.3 GB: its nodes × levels ancestors grow as its square.
    Levels × nodes are bounded (MAX_ANCESTOR_CELLS), and the message says why."""
    from cophe_core.ontology.custom import MAX_ANCESTOR_CELLS

    n = 32_766
    rows = "child,parent\nn0,\n" + "".join(f"n{i + 1},n{i}\n" for i in range(n - 1))
    most = MAX_ANCESTOR_CELLS // n
    with pytest.raises(InputError) as e:
        load_hierarchy(rows.encode(), name="chain.csv")
    assert str(e.value) == (
        f"chain.csv: the hierarchy is {most + 1:,} or more levels deep (down to n{most} at line {most + 2}); "
        f"cophe keeps each node's ancestor at every level, at most {MAX_ANCESTOR_CELLS:,} (levels × nodes), "
        f"so a hierarchy of {n:,} nodes may have at most {most:,} levels"
    )
    # the deepest chain of that many nodes allowed is read, its levels exact
    short = "child,parent\nn0,\n" + "".join(f"n{i + 1},n{i}\n" for i in range(most - 1))
    onto = load_hierarchy(short.encode(), name="short.csv")
    assert len(onto.levels) == most and onto.ancestors.shape == (most, most)
