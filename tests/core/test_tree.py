"""The bounded tree view and the within-family explanation."""

from __future__ import annotations

import numpy as np
import pytest

from cophe_core import score_files
from cophe_core.breakdown.families import describe_gaps, within_family
from cophe_core.breakdown.tree import COUNTS, focused_subtree
from cophe_core.metrics import prf
from tests.conftest import SAMPLE


@pytest.fixture(scope="module")
def overcoder():
    return score_files(SAMPLE / "gold.csv", {"o": SAMPLE / "run_overcoder.csv"}).evaluation("o")


def test_root_view_is_bounded_and_buckets_sum(overcoder):
    sub = focused_subtree(overcoder.nodes, overcoder.ontology, None, depth=3, max_children=10, max_nodes=300)
    assert len(sub) <= 300
    assert sub.id.is_unique and set(sub.parent_id) - set(sub.id) == {""}
    root = sub.iloc[0]
    top = overcoder.nodes[overcoder.nodes.level == "block"]
    for k in COUNTS:
        assert root[k] == top[k].sum()
    # every parent's value covers its children (branchvalues="total")
    kids = sub.groupby("parent_id").value.sum()
    assert (sub.set_index("id").value.reindex(kids.index.drop("")) >= kids.drop("")).all()


def test_other_bucket_rates_come_from_summed_counts(overcoder):
    sub = focused_subtree(overcoder.nodes, overcoder.ontology, None, depth=1, max_children=5)
    other = sub[sub.id == "other:root"].iloc[0]
    p, r, f = prf(other.tp, other.fp, other.fn)
    assert other.precision == pytest.approx(float(p)) and other.f1 == pytest.approx(float(f))
    assert other.balance == pytest.approx((other.fp - other.fn) / (other.tp + other.fp + other.fn))
    # and not the mean of the children's rates
    hidden = overcoder.nodes[(overcoder.nodes.level == "block") & ~overcoder.nodes.node.isin(sub.node)]
    assert other.f1 != pytest.approx(hidden.f1.mean())


def test_focus_on_a_category(overcoder):
    node = overcoder.ontology.codes["428"]
    sub = focused_subtree(overcoder.nodes, overcoder.ontology, node, depth=1)
    assert sub.iloc[0].id == f"n{node}"
    assert set(sub.code[1:]) == {"428.0", "428.1", "428.2", "428.3", "428.4", "428.9"}


def test_within_family_numbers_match_the_count_gap(overcoder):
    w = within_family(overcoder).set_index("level")
    t = overcoder.levels_table.set_index(["measure", "level"])
    for level in overcoder.levels:
        # CoPHE FP - set FP = over-coding in shared families + extra codes in families the gold lacks
        assert t.loc[("cophe", level), "fp"] >= w.loc[level, "over"]
    assert w.loc["e0", "over_share"] == pytest.approx(w.loc["e0", "over"] / w.loc["e0", "gold_codes"])
    lines = describe_gaps(overcoder, "B")
    assert any(line.startswith("At e0, CoPHE F1 is") and "run B predicts" in line for line in lines)


def test_no_gap_sentence_when_cophe_equals_set_based():
    s = score_files(b"doc_id,code\n1,401.9\n", {"A": b"doc_id,code\n1,401.9\n"})
    assert describe_gaps(s.evaluation("A"), "A") == []
    assert np.isclose(within_family(s.evaluation("A")).over_share, 0).all()


def test_thin_tiles_fold_into_other_and_other_lists_them(overcoder):
    """min_share folds children too thin to label; an Other row names what it merged; shares of errors."""
    ev = overcoder
    full = focused_subtree(ev.nodes, ev.ontology, None, depth=1, max_children=1000, max_nodes=5000)
    thin = focused_subtree(
        ev.nodes, ev.ontology, None, depth=1, max_children=1000, max_nodes=5000, min_share=0.02
    )
    total = full.loc[full.id == "root", "value"].iloc[0]
    kept = thin[thin.node >= 0]
    assert (kept.value >= 0.02 * total).all() and len(kept) < len(full) - 1
    other = thin[thin.id == "other:root"].iloc[0]
    merged = set(other.merged)
    assert merged == set(full.node[full.node >= 0]) - set(kept.node)
    assert other.value == full[full.node.isin(merged)].value.sum()
    # error coverage: every top-level tile's extra + missed over the whole level's
    top = ev.nodes[ev.nodes.level == "block"]
    errors = (top.fp + top.fn).sum()
    assert thin.error_share[thin.depth == 1].sum() == pytest.approx(1.0)
    row = kept.iloc[0]
    assert row.error_share == pytest.approx((row.fp + row.fn) / errors)
