"""One document as a coder reads it: codes with their status, families with over-coded / missed counts."""

from __future__ import annotations

import pytest

from cophe_core.documents import document_codes, document_families
from tests.conftest import score_pairs

# Gold {250.00, 401.9, 428.0, 428.1}; predicted {250.00, 250.01, 250.02, 401.9}:
# the 250 family is over-coded by 2, the 428 family has 2 missed, 401 matches.
GOLD = [("d", c) for c in ("250.00", "401.9", "428.0", "428.1")] + [("other", "486")]
PRED = [("d", c) for c in ("250.00", "250.01", "250.02", "401.9")] + [("other", "486")]


@pytest.fixture(scope="module")
def ev():
    return score_pairs(GOLD, PRED)


def test_document_codes_status_and_family(ev):
    """Each code of the document, grouped by category (e0), marked matched / over-coded / missed."""
    t = document_codes(ev, "d")
    assert list(zip(t.code, t.family, t.status, strict=True)) == [
        ("250.00", "250", "matched"),
        ("250.01", "250", "over-coded"),
        ("250.02", "250", "over-coded"),
        ("401.9", "401", "matched"),
        ("428.0", "428", "missed"),
        ("428.1", "428", "missed"),
    ]
    assert t.block[0].startswith("249-259 ")  # 250 sits in the CMS section 249-259 (SPEC §4)


def test_document_families_counts_and_words(ev):
    """Families above e2: gold and predicted counts; 'over-coded by k' when predicted > gold, 'k missed' when <."""
    t = document_families(ev, "d")
    assert list(t.itertuples(index=False, name=None)) == [
        # e1: 250.0 holds 250.00-250.02 (gold 1, predicted 3); 428.0 and 428.1 are e1 codes
        ("e1", "250.0", t.title[0], 1, 3, "over-coded by 2"),
        ("e1", "401.9", t.title[1], 1, 1, "matched"),
        ("e1", "428.0", t.title[2], 1, 0, "1 missed"),
        ("e1", "428.1", t.title[3], 1, 0, "1 missed"),
        ("e0", "250", t.title[4], 1, 3, "over-coded by 2"),
        ("e0", "401", t.title[5], 1, 1, "matched"),
        ("e0", "428", t.title[6], 2, 0, "2 missed"),
        ("block", "249-259", t.title[7], 1, 3, "over-coded by 2"),
        ("block", "401-405", t.title[8], 1, 1, "matched"),
        ("block", "420-429", t.title[9], 2, 0, "2 missed"),
    ]
    assert t.title[6] == "Heart failure"


def test_unknown_document_is_a_key_error(ev):
    """Asking for a document that is not in the evaluation raises KeyError naming it."""
    with pytest.raises(KeyError, match="nope"):
        document_families(ev, "nope")
    with pytest.raises(KeyError, match="nope"):
        document_codes(ev, "nope")
