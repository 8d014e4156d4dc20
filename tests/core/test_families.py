"""Over- and under-coding inside shared families, and the sentences that explain CoPHE < set-based."""

from __future__ import annotations

import pytest
from pytest import approx

from cophe_core.breakdown.families import describe_gaps, family_errors, within_family
from tests.conftest import score_pairs

# Gold {250.00, 428.0, 428.1}; predicted {250.00, 250.01, 250.02, 428.0}.
# 250 family: gold 1, predicted 3 (over by 2); 428 family: gold 2, predicted 1 (under by 1).
GOLD = [("d", c) for c in ("250.00", "428.0", "428.1")]
PRED = [("d", c) for c in ("250.00", "250.01", "250.02", "428.0")]


@pytest.fixture(scope="module")
def ev():
    return score_pairs(GOLD, PRED)


def test_within_family_counts_per_level(ev):
    """Shared families (x > 0 and y > 0) per level, with the codes over and under the gold count."""
    w = within_family(ev).set_index("level")
    cols = ["shared_families", "gold_codes", "predicted_codes", "over", "under"]
    # e2: only 250.00 is shared (x 1, y 1)
    assert w.loc["e2", cols].tolist() == [1, 1, 1, 0, 0]
    # e1: 250.0 (x 3, y 1) and 428.0 (x 1, y 1) shared; 428.1 (x 0) is not
    assert w.loc["e1", cols].tolist() == [2, 2, 4, 2, 0]
    # e0 and block: 250 / 249-259 (x 3, y 1) and 428 / 420-429 (x 1, y 2)
    for level in ("e0", "block"):
        assert w.loc[level, cols].tolist() == [2, 3, 4, 2, 1]
        assert (w.loc[level, "over_share"], w.loc[level, "under_share"]) == approx((2 / 3, 1 / 3))
    # e0 CoPHE: TP 2, FP 2, FN 1 -> P 1/2, R 2/3, F1 4/7; set-based TP 2 -> F1 1
    assert (w.loc["e0", "cophe_f1"], w.loc["e0", "set_f1"]) == approx((4 / 7, 1.0))


def test_describe_gaps_in_words(ev):
    """One sentence per level where CoPHE F1 falls below set-based, naming over- and under-coding."""
    # e2: CoPHE = set-based (TP 1, FP 2) -> no line.
    # e1: CoPHE TP 2, FP 2, FN 1 -> 4/7; set-based TP 2, FP 0, FN 1 -> 0.8; over 2 of 2 gold codes
    shared = "within the code families it shares with the gold standard, run B"
    assert describe_gaps(ev, "B") == [
        f"At e1, CoPHE F1 is 0.571 against 0.800 set-based: {shared} predicts 100.0% more codes than the gold standard.",
        f"At e0, CoPHE F1 is 0.571 against 1.000 set-based: {shared} predicts 66.7% more codes than the gold "
        "standard and misses 33.3% of the gold codes.",
        f"At block, CoPHE F1 is 0.571 against 1.000 set-based: {shared} predicts 66.7% more codes than the gold "
        "standard and misses 33.3% of the gold codes.",
    ]


def test_describe_gaps_for_extra_codes_outside_shared_families():
    """CoPHE below set-based with no shared-family gap: the extra codes sit in families the gold lacks."""
    # gold {401.9}, predicted {401.9, 428.0, 428.1}; at e0 401 is shared (TP 1), 428 has x 2, y 0:
    # CoPHE FP 2 -> P 1/3, F1 0.5; set-based FP 1 -> P 1/2, F1 2/3
    ev = score_pairs([("d", "401.9")], [("d", "401.9"), ("d", "428.0"), ("d", "428.1")])
    lines = [line for line in describe_gaps(ev, "B") if line.startswith("At e0")]
    assert lines == [
        "At e0, CoPHE F1 is 0.500 against 0.667 set-based: within the code families it shares with "
        "the gold standard, run B often predicts several codes in families the gold standard does "
        "not have."
    ]


def naive_family_errors(gold_rows, pred_rows, family_of):
    """Extra and missed codes per family, by a plain loop: per document, max(written − gold, 0) and
    max(gold − written, 0) codes of each family (the CoPHE counts at that level)."""
    from collections import Counter, defaultdict

    gold, pred = defaultdict(Counter), defaultdict(Counter)
    for rows, into in ((gold_rows, gold), (pred_rows, pred)):
        for doc, code in set(rows):
            into[doc][family_of(code)] += 1
    extra, missed = Counter(), Counter()
    for doc in set(gold) | set(pred):
        for fam in set(gold[doc]) | set(pred[doc]):
            extra[fam] += max(pred[doc][fam] - gold[doc][fam], 0)
            missed[fam] += max(gold[doc][fam] - pred[doc][fam], 0)
    return extra, missed


def test_family_errors_by_hand(ev):
    """250 family: 2 extra; 428 family: 1 missed. Shares of all extra / missed / errors at the category level."""
    t = family_errors(ev, "e0").set_index("code")
    assert t.loc["250", ["fp", "fn", "docs_over", "docs_under"]].tolist() == [2, 0, 1, 0]
    assert t.loc["428", ["fp", "fn", "docs_over", "docs_under"]].tolist() == [0, 1, 0, 1]
    assert t.extra_share.to_dict() == approx({"250": 1.0, "428": 0.0})
    assert t.missed_share.to_dict() == approx({"250": 0.0, "428": 1.0})
    assert t.error_share.to_dict() == approx({"250": 2 / 3, "428": 1 / 3})
    with pytest.raises(ValueError, match="e0"):
        family_errors(ev, "category")


def test_family_errors_match_a_naive_loop_on_the_sample():
    """The ranked panel's counts, against a loop over the sample's rows with plain Python counters."""
    import csv

    from cophe_core import score_files
    from tests.conftest import SAMPLE

    s = score_files(SAMPLE / "gold.csv", {"o": SAMPLE / "run_overcoder.csv"})
    ev = s.evaluation("o")
    onto = ev.ontology

    def rows(name):
        with open(SAMPLE / name) as f:
            return [(r["doc_id"], r["code"]) for r in csv.DictReader(f)]

    def category(code):
        return str(onto.keys[onto.ancestors[onto.codes[code], onto.level_index("e0")]])

    extra, missed = naive_family_errors(rows("gold.csv"), rows("run_overcoder.csv"), category)
    t = family_errors(ev, "e0").set_index("code")
    assert t.fp.to_dict() == {k: extra[k] for k in t.index}
    assert t.fn.to_dict() == {k: missed[k] for k in t.index}
    assert t.extra_share.sum() == approx(1.0) and t.error_share.sum() == approx(1.0)
    top = t.fp.nlargest(5)
    assert list(top.index) == [k for k, _ in sorted(extra.items(), key=lambda kv: -kv[1])[:5]]


def test_within_family_matches_a_dense_loop_on_the_sample():
    """Shared families, their codes and the over/under counts per level, against a loop over every
    (document, family) cell of the dense count matrices."""
    import numpy as np

    from cophe_core import score_files
    from tests.conftest import SAMPLE

    s = score_files(SAMPLE / "gold.csv", {r: SAMPLE / f"run_{r}.csv" for r in ("overcoder", "siblings")})
    for run in s.run_names:
        ev = s.evaluation(run, max_level="e1")
        x, y = ev.X.toarray(), ev.Y.toarray()
        expected = {
            lv: dict(shared_families=0, gold_codes=0, predicted_codes=0, over=0, under=0) for lv in ev.levels
        }
        for d, node in zip(*np.nonzero((x > 0) & (y > 0))):
            e = expected[ev.levels[ev.ontology.level[node]]]
            xv, yv = int(x[d, node]), int(y[d, node])
            e["shared_families"] += 1
            e["gold_codes"] += yv
            e["predicted_codes"] += xv
            e["over"] += max(xv - yv, 0)
            e["under"] += max(yv - xv, 0)
        got = within_family(ev).set_index("level")[list(expected[ev.levels[0]])]
        assert {lv: {k: int(v) for k, v in row.items()} for lv, row in got.iterrows()} == expected
        assert any(e["over"] for e in expected.values()) and any(e["under"] for e in expected.values())
