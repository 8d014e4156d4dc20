"""The pure figure functions: explicit colours, midpoint 0, escaping, and DAG-safe sizes."""

from __future__ import annotations

import pandas as pd

from cophe_core import score_files
from cophe_core.compare import levels_side_by_side
from cophe_core.ontology.custom import load_hierarchy
from cophe_core.tree import focused_subtree
from dashboard.figures import levels_bar, tree_figure
from tests.conftest import long_csv


def test_tree_figure_uses_explicit_colours_centred_on_zero():
    s = score_files(long_csv([("d", "401.9"), ("d", "428.0")]), {"r": long_csv([("d", "401.1"), ("d", "401.9")])})
    ev = s.evaluation("r")
    sub = focused_subtree(ev.nodes, ev.ontology)
    fig = tree_figure(sub, "balance")
    trace = fig.data[0]
    assert list(trace.marker.colors) == sub.balance.tolist()
    assert trace.marker.cmid == 0 and trace.marker.cmin == -1 and trace.marker.cmax == 1
    assert trace.branchvalues == "total"
    assert len(trace.ids) == len(sub)


def test_titles_are_escaped():
    h = load_hierarchy(b"child,parent,title\nroot,,<b>All</b>\nA,root,<script>alert(1)</script>\n", name="x.csv")
    s = score_files(long_csv([("d", "A")]), {"r": long_csv([("d", "A")])}, ontology=h)
    ev = s.evaluation("r", max_level="d0")
    fig = tree_figure(focused_subtree(ev.nodes, ev.ontology), "f1")
    text = fig.to_json()
    assert "<script>" not in text and "&lt;script&gt;" in text


def test_dag_tree_draws_with_remainder_sizes():
    h = load_hierarchy(b"child,parent\nroot,\nA,root\nB,root\nab,A\nab,B\n", name="dag.csv")
    s = score_files(long_csv([("d", "ab")]), {"r": long_csv([("d", "ab")])}, ontology=h)
    ev = s.evaluation("r", max_level="d0")
    fig = tree_figure(focused_subtree(ev.nodes, ev.ontology, h.codes["root"]), "f1")
    assert fig.data[0].branchvalues == "remainder"  # ab sits under A and B: children outweigh root


def test_levels_bar_has_one_trace_per_measure():
    s = score_files(long_csv([("d", "401.9")]), {"A": long_csv([("d", "401.1")]), "B": long_csv([("d", "401.9")])})
    table = levels_side_by_side({r: s.evaluation(r) for r in ("A", "B")})
    fig = levels_bar(table)
    assert sorted({t.name for t in fig.data}) == ["CoPHE", "Flat (leaf codes)", "Set-based"]
    assert isinstance(table, pd.DataFrame) and set(table.run) == {"A", "B"}
