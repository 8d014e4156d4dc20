"""The tree's picture spends its width on families (issue 26, point 9): no column for the one-word root, and
at the second level named families outnumber the "Other" tiles, while every count stays the node's own."""

from __future__ import annotations

from pathlib import Path

import pandas as pd
import pytest

from cophe_core import score_files
from cophe_core.breakdown.tree import COUNTS, focused_subtree
from cophe_core.output.plotting import tree_figure
from tests.conftest import ROOT

# The dashboard's tree settings (dashboard/views/tree.py: MAX_CHILDREN, MAX_NODES, MIN_SHARE, default depth).
VIEW = {"depth": 2, "max_children": 30, "max_nodes": 2000, "min_share": 0.018}
SAMPLES = [
    (ROOT / "sample_data" / system, run)
    for system, runs in (
        ("icd9", ("siblings", "overcoder", "conservative")),
        ("icd10", ("siblings", "overcoder")),
    )
    for run in runs
]


def root_view(folder: Path, run: str):
    """A sample run scored up to its chapters, as the tree page scores it, and its root view."""
    s = score_files(folder / "gold.csv", {run: folder / f"run_{run}.csv"})
    ev = s.evaluation(run, max_level=s.evaluation(run).ontology.levels[-1])
    return ev, focused_subtree(ev.nodes, ev.ontology, None, **VIEW)


def depths(ids, parents) -> dict[str, int]:
    """Each tile's column in the icicle: 0 for a tile without a parent, its parent's plus one otherwise."""
    parent = dict(zip(ids, parents))
    out: dict[str, int] = {}
    for i in ids:
        d, p = 0, parent[i]
        while p:
            d, p = d + 1, parent[p]
        out[i] = d
    return out


@pytest.mark.parametrize("folder, run", SAMPLES, ids=[f"{f.name}-{r}" for f, r in SAMPLES])
def test_named_families_outnumber_other_tiles_at_the_second_level(folder, run):
    ev, sub = root_view(folder, run)
    second = sub[sub.depth == 2]
    named, other = int((second.node >= 0).sum()), int((second.node < 0).sum())
    # clearly fewer, not merely fewer: at most one Other for every two named families
    assert 2 * other <= named, f"{other} Other tiles beside {named} named families"
    # every tile drawn below the top is large enough to carry its label, an Other as much as a family
    floor = VIEW["min_share"] * sub[sub.depth == 1].value.sum()
    assert (second.value >= floor).all(), second[second.value < floor][["id", "value"]]
    # an Other is only drawn beside a named sibling: never an Other standing for all of a family's children
    for parent, tiles in second.groupby("parent_id"):
        assert (tiles.node >= 0).any(), f"{parent}: only an Other tile"


@pytest.mark.parametrize("folder, run", SAMPLES[:1] + SAMPLES[3:4], ids=["icd9", "icd10"])
def test_the_grouping_changes_no_count(folder, run):
    ev, sub = root_view(folder, run)
    nodes = ev.nodes.set_index("node")
    named = sub[sub.node >= 0]
    pd.testing.assert_frame_equal(
        named[COUNTS].reset_index(drop=True),
        nodes.loc[named.node, COUNTS].reset_index(drop=True),
        check_dtype=False,
    )
    # the first level is the same families as a one-level view; every Other is the sum of what it merges
    one = focused_subtree(ev.nodes, ev.ontology, None, **{**VIEW, "depth": 1})
    assert sub[sub.depth <= 1].id.tolist() == one.id.tolist()
    for _, o in sub[sub.node < 0].iloc[1:].iterrows():
        assert o[COUNTS].tolist() == nodes.loc[list(o.merged), COUNTS].sum().tolist()
    # a family drawn with children: they and its Other add up to it, less the families too small for a tile
    # (ICD trees, no code under two parents): those are left blank, and their counts stay in the family's
    children = ev.nodes.groupby("parent")[["gold", "predicted"]].sum().sum(axis=1)
    drawn = sub.set_index("id")
    for pid, kids in sub[sub.depth == 2].groupby("parent_id"):
        assert kids.value.sum() <= drawn.value[pid]
        assert drawn.value[pid] == children[drawn.node[pid]]


@pytest.mark.parametrize("folder, run", SAMPLES[:1] + SAMPLES[3:4], ids=["icd9", "icd10"])
def test_the_root_takes_no_column_of_the_icicle(folder, run):
    ev, sub = root_view(folder, run)
    trace = tree_figure(sub, "balance").data[0]
    assert "All codes" not in list(trace.labels)
    columns = depths(list(trace.ids), list(trace.parents))
    # two levels asked for, two columns drawn: the first holds the chapters, each half the width
    assert set(columns.values()) == {0, 1}
    first = {i for i, d in columns.items() if d == 0}
    assert first == set(sub.id[sub.depth == 1])
    # the values are the table's: the picture regroups nothing
    assert list(trace.values) == sub[sub.id != "root"].value.tolist()


def test_a_focused_view_keeps_its_focus_tile():
    folder, run = SAMPLES[0]
    s = score_files(folder / "gold.csv", {run: folder / f"run_{run}.csv"})
    ev = s.evaluation(run)
    node = ev.ontology.codes["428"]
    trace = tree_figure(focused_subtree(ev.nodes, ev.ontology, node, depth=1), "balance").data[0]
    assert trace.ids[0] == f"n{node}" and trace.parents[0] == ""
