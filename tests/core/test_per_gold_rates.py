"""Extra and missed codes per 100 gold codes (families.per_gold_rates), worked by hand, and the tree colours
that show them: grey, not coloured, below the minimum support."""

from __future__ import annotations

import math

import pandas as pd

from cophe_core import score_files
from cophe_core.coder_report import ranked_families
from cophe_core.families import family_errors, per_gold_rates
from cophe_core.plotting import OTHER_COLOUR, tile_colours


def test_rates_by_hand():
    # family A: 12 gold codes, 3 extra, 6 missed → 25 and 50 per 100; B: 9 gold codes (< 10) → no rate;
    # C: exactly 10 gold codes, 0 extra, 1 missed → 0 and 10 per 100
    t = pd.DataFrame({"code": ["A", "B", "C"], "gold": [12, 9, 10], "fp": [3, 9, 0], "fn": [6, 0, 1]})
    out = per_gold_rates(t, min_support=10)
    assert out.extra_per_100.tolist()[0] == 25.0 and out.missed_per_100.tolist()[0] == 50.0
    assert math.isnan(out.extra_per_100[1]) and math.isnan(out.missed_per_100[1])
    assert out.extra_per_100[2] == 0.0 and out.missed_per_100[2] == 10.0
    assert list(t.columns) == ["code", "gold", "fp", "fn"]  # the table given is left as it was


def test_no_gold_code_is_never_a_rate_even_with_no_minimum():
    out = per_gold_rates(pd.DataFrame({"gold": [0, 2], "fp": [3, 1], "fn": [0, 1]}), min_support=0)
    assert math.isnan(out.extra_per_100[0]) and out.extra_per_100[1] == 50.0


def test_ranking_agrees_with_a_naive_count():
    """ranked_families (the coder report's and the tree's ranking) on hand-made files: family 401 has 4 gold
    codes and 2 extra (50 per 100), 428 has 2 gold codes and 2 extra (100 per 100), 250 one gold code."""
    gold = b"doc_id,code\n1,401.9\n2,401.9\n3,401.1\n4,401.0\n5,428.0\n6,428.1\n7,250.00\n"
    pred = b"doc_id,code\n1,401.9\n1,401.1\n2,401.9\n2,401.0\n3,401.1\n4,401.0\n5,428.0\n5,428.1\n5,428.2\n6,428.1\n7,250.00\n7,250.01\n"
    ev = score_files(gold, {"A": pred}).evaluation("A")
    over, _ = ranked_families(ev, level="e0", min_support=2)
    assert over[["code", "gold", "fp", "extra_per_100"]].values.tolist() == [
        ["428", 2, 2, 100.0],
        ["401", 4, 2, 50.0],
    ]
    t = family_errors(ev, "e0").set_index("code")
    assert t.loc["250", "gold"] == 1  # left out: below the minimum of 2


def test_tiles_without_enough_gold_codes_are_grey():
    sub = pd.DataFrame(
        {
            "id": ["root", "n1", "n2"],
            "merged": [[], [], []],
            "extra_per_100": [float("nan"), 50.0, float("nan")],
        }
    )
    colours = tile_colours(sub, "extra_per_100", "Reds", 0.0, 100.0)
    assert colours[2] == OTHER_COLOUR and colours[1] != OTHER_COLOUR
