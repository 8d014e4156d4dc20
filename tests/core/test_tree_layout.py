"""The tree's picture spends its width on families (issue 26, point 9): no column for the one-word root, and
at the second level named families outnumber the "Other" tiles, while every count stays the node's own. The
tiles' layout (cophe_core.output.plotting.tree_tiles) is checked against a naive recursive layout."""

from __future__ import annotations

from pathlib import Path

import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from cophe_core import score_files
from cophe_core.breakdown.tree import COUNTS, focused_subtree
from cophe_core.output.plotting import children_fit, tree_figure, tree_tiles
from tests.conftest import ROOT, examples

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


def drawn(trace) -> pd.DataFrame:
    """The tiles as the tree's bar trace draws them: column, start (top) and size, as shares of the height."""
    return pd.DataFrame(
        {"id": list(trace.ids), "column": list(trace.x), "start": list(trace.base), "size": list(trace.y)}
    )


@pytest.mark.parametrize("folder, run", SAMPLES[:1] + SAMPLES[3:4], ids=["icd9", "icd10"])
def test_the_root_takes_no_column_of_the_icicle(folder, run):
    ev, sub = root_view(folder, run)
    fig = tree_figure(sub, "balance")
    trace = fig.data[0]
    assert "All codes" not in " ".join(trace.text)
    tiles = drawn(trace)
    shown = sub[sub.id != "root"]
    assert tiles.id.tolist() == shown.id.tolist()
    # two levels asked for, two columns drawn: the first holds the chapters, at the chart's left edge, and
    # each column is half the width (a bar as wide as its column, the axis exactly the columns)
    assert tiles.set_index("id").column.to_dict() == depths(
        shown.id, shown.parent_id.mask(shown.parent_id == "root", "")
    )
    assert set(tiles.id[tiles.column == 0]) == set(sub.id[sub.depth == 1])
    assert tuple(fig.layout.xaxis.range) == (-0.5, 1.5) and trace.width == 1
    # the chapters fill their column, one after another from the top
    top = tiles[tiles.column == 0]
    assert top.start.iloc[0] == 0 and top["size"].sum() == pytest.approx(1)
    assert (top.start + top["size"]).iloc[:-1].to_numpy() == pytest.approx(top.start.iloc[1:].to_numpy())
    # the sizes are the table's values, to one scale: the picture regroups nothing
    scale = shown.value[tiles.column.to_numpy() == 0].sum()
    assert (tiles["size"] * scale).to_numpy() == pytest.approx(shown.value.to_numpy(dtype=float))


def naive_layout(
    ids: list[str], parents: list[str], values: list[float]
) -> dict[str, tuple[int, float, float]]:
    """(column, start, size) of each tile by recursion, one tile at a time: Plotly's icicle rules, "total"
    when every parent holds its children, else "remainder" (a tile holds its value and its children)."""
    kids: dict[str, list[int]] = {}
    for i, p in enumerate(parents):
        kids.setdefault(p if p in ids else "", []).append(i)
    fits = all(values[ids.index(p)] >= sum(values[i] for i in k) for p, k in kids.items() if p)

    def size(i: int) -> float:
        return values[i] if fits else values[i] + sum(size(k) for k in kids.get(ids[i], []))

    out: dict[str, tuple[int, float, float]] = {}

    def place(parent: str, column: int, start: float) -> None:
        for i in kids.get(parent, []):
            out[ids[i]] = (column, start, size(i))
            place(ids[i], column + 1, start)
            start += size(i)

    place("", 0, 0.0)
    total = sum(out[ids[i]][2] for i in kids.get("", [])) or 1.0
    return {k: (c, s / total, z / total) for k, (c, s, z) in out.items()}


@st.composite
def trees(draw):
    """A random small tree table in a random row order: each tile under a top or an earlier tile, values
    either holding their children (a tree) or drawn freely (children may outweigh, as in a DAG)."""
    n = draw(st.integers(1, 25))
    parent = [-1] + [draw(st.integers(-1, i - 1)) for i in range(1, n)]
    own = draw(st.lists(st.integers(0, 40), min_size=n, max_size=n))
    if draw(st.booleans()):  # a tree: a tile's value is its own plus its children's
        value = list(own)
        for i in range(n - 1, -1, -1):
            if parent[i] >= 0:
                value[parent[i]] += value[i]
    else:
        value = own
    order = draw(st.permutations(range(n)))
    return pd.DataFrame(
        {
            "id": [f"t{i}" for i in order],
            "parent_id": ["" if parent[i] < 0 else f"t{parent[i]}" for i in order],
            "value": [value[i] for i in order],
        }
    )


def check_tiles(sub: pd.DataFrame, tiles: pd.DataFrame) -> None:
    t = tiles.set_index("id")
    # every column starts at the left edge: the top tiles are column 0, and fill it from the top
    top = t[t.parent_id == ""]
    assert (top.depth == 0).all() and (t.depth == t.parent_id.map(t.depth).fillna(-1) + 1).all()
    # the tiles of one parent follow one another, from the parent's start, within its span
    for parent, kids in t.groupby("parent_id", sort=False):
        begin = 0.0 if parent == "" else t.start[parent]
        ends = begin + kids["size"].cumsum()
        assert kids.start.to_numpy() == pytest.approx((ends - kids["size"]).to_numpy(), abs=1e-12)
        if parent:
            assert ends.iloc[-1] <= t.start[parent] + t["size"][parent] + 1e-9
    if sub.value.sum() > 0:
        assert top["size"].sum() == pytest.approx(1)


@settings(max_examples=examples(150), deadline=None)
@given(trees())
def test_tiles_are_laid_out_as_a_naive_recursion_lays_them(sub):
    tiles = tree_tiles(sub)
    check_tiles(sub, tiles)
    want = naive_layout(sub.id.tolist(), sub.parent_id.tolist(), sub.value.astype(float).tolist())
    got = {i: (c, s, z) for i, c, s, z in zip(tiles.id, tiles.depth, tiles.start, tiles["size"])}
    assert got.keys() == want.keys()
    for i, (c, s, z) in want.items():
        assert got[i][0] == c and got[i][1:] == pytest.approx((s, z), abs=1e-12), i
    if children_fit(sub) and sub.value.sum() > 0:  # a tree: sizes are the values, to one scale
        scale = sub.value[sub.parent_id == ""].sum()
        assert (tiles["size"] * scale).to_numpy() == pytest.approx(sub.value.to_numpy(dtype=float))


def test_tiles_by_hand():
    """Two top tiles of 6 and 2, the first with children of 3 and 1 (a quarter of it left blank); and a DAG
    whose children outweigh their parent, drawn with the parent holding its own value and theirs."""
    sub = pd.DataFrame({"id": ["a", "b", "a1", "a2"], "parent_id": ["", "", "a", "a"], "value": [6, 2, 3, 1]})
    t = tree_tiles(sub)
    assert t.depth.tolist() == [0, 0, 1, 1]
    assert t.start.tolist() == [0, 0.75, 0, 0.375] and t["size"].tolist() == [0.75, 0.25, 0.375, 0.125]
    dag = pd.DataFrame({"id": ["r", "A", "B"], "parent_id": ["", "r", "r"], "value": [1, 1, 1]})
    t = tree_tiles(dag)
    assert t.start.tolist() == [0, 0, 1 / 3] and t["size"].tolist() == [1, 1 / 3, 1 / 3]


def test_a_cycle_is_an_error_not_a_hang():
    with pytest.raises(ValueError, match="cycle"):
        tree_tiles(pd.DataFrame({"id": ["a", "b"], "parent_id": ["b", "a"], "value": [1, 1]}))


def test_a_focused_view_keeps_its_focus_tile():
    folder, run = SAMPLES[0]
    s = score_files(folder / "gold.csv", {run: folder / f"run_{run}.csv"})
    ev = s.evaluation(run)
    node = ev.ontology.codes["428"]
    trace = tree_figure(focused_subtree(ev.nodes, ev.ontology, node, depth=1), "balance").data[0]
    # the focused family is the first column, whole: its children beside it
    assert trace.ids[0] == f"n{node}" and trace.x[0] == 0 and (trace.base[0], trace.y[0]) == (0, 1)
    assert set(trace.x[1:]) == {1}
