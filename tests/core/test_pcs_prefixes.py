"""ICD-10-PCS prefixes (CodiEsp-P's ``0bh1``, ``bw21``): nodes of the PCS tables, placed at their level."""

from __future__ import annotations

import random

import numpy as np
import pytest

from cophe_core import score_files
from cophe_core.base.files import Reason
from cophe_core.ontology import icd10pcs_ontology
from cophe_core.ontology.detect import detect_system
from cophe_core.ontology.icd10 import (
    CM_SYSTEM,
    PCS_SYSTEM,
    SYSTEM,
    icd10_ontology,
    normalise_cm,
    pcs_code_list,
)
from tests.core.naive import pcs_prefix_placement

ALPHABET = "0123456789ABCDEFGHJKLMNPQRSTUVWXYZ"  # PCS has no I or O


@pytest.fixture(scope="module")
def pcs():
    return icd10pcs_ontology()


@pytest.fixture(scope="module")
def listed():
    return sorted(pcs_code_list())


def _check_against_naive(strings: list[str], onto, system, listed: list[str]) -> int:
    """Each string resolved by the code system and placed by the naive reading agree; returns how many exist."""
    p = system.resolve(np.array(strings), onto, "auto")
    found = 0
    for i, s in enumerate(strings):
        naive = pcs_prefix_placement(s, listed)
        node = int(p.nodes[i])
        if naive is None:
            assert node == -1, s
            kind, words = p.reasons[i]
            assert (
                kind == Reason.MALFORMED_CODE
                and f"{s.upper()} is not the start of any ICD-10-PCS code" in words
            )
            continue
        found += 1
        level, parent = naive
        assert str(onto.keys[node]) == s.upper(), s
        assert onto.system_of(node) == "ICD-10-PCS", s
        # the combined ontology names levels by depth; the depth is the PCS level's
        assert int(onto.level[node]) == icd10pcs_ontology().level_index(level), s
        assert str(onto.keys[onto.parent[node]]) == parent, s
        assert p.flags[i][0] == Reason.NOT_BILLABLE and level.replace("_", " ") in p.flags[i][1], s
    return found


def _sample(listed: list[str], n: int, seed: int) -> list[str]:
    """Prefixes of listed codes and random strings of 3 to 6 PCS characters, half in lower case."""
    rng = random.Random(seed)
    out = []
    for _ in range(n):
        length = rng.randint(3, 6)
        s = rng.choice(listed)[:length] if rng.random() < 0.5 else "".join(rng.choices(ALPHABET, k=length))
        out.append(s.lower() if rng.random() < 0.5 else s)
    return list(dict.fromkeys(out))


def test_a_sample_of_prefixes_is_placed_as_the_tables_place_it(pcs, listed):
    strings = _sample(listed, 3000, seed=24)
    found = _check_against_naive(strings, pcs, PCS_SYSTEM, listed)
    assert 1000 < found < len(strings)  # both kinds were tried


def test_every_four_character_prefix_is_a_body_part_node(pcs, listed):
    prefixes = sorted({c[:4] for c in listed})
    assert len(prefixes) == 11_862
    strings = [p.lower() for p in prefixes]
    assert _check_against_naive(strings, pcs, PCS_SYSTEM, listed) == len(prefixes)


def test_prefixes_in_the_combined_ontology_are_pcs_nodes(listed):
    """In icd10 a prefix of no CM form is the PCS node; one that reads as a CM code (B20) stays CM."""
    onto = icd10_ontology()
    strings = [s for s in _sample(listed, 600, seed=7) if normalise_cm(s) is None]
    _check_against_naive(strings, onto, SYSTEM, listed)
    p = SYSTEM.resolve(np.array(["B20", "bw21", "b24b"]), onto, "auto")
    assert [onto.system_of(int(n)) for n in p.nodes] == ["ICD-10-CM", "ICD-10-PCS", "ICD-10-PCS"]
    assert onto.titles[p.nodes[0]].startswith("Human immunodeficiency virus")


def test_lower_case_is_the_same_node(pcs):
    p = PCS_SYSTEM.resolve(np.array(["0bh1", "0BH1", " Bw21 ", "5a1935z"]), pcs, "auto")
    assert p.nodes[0] == p.nodes[1] == pcs.codes["0BH1"] and p.nodes[2] == pcs.codes["BW21"]
    assert p.nodes[3] == pcs.codes["5A1935Z"] and 3 not in p.flags  # a full code: not flagged


def test_bad_prefixes_are_rejected_with_their_reason(pcs):
    p = PCS_SYSTEM.resolve(np.array(["bw2q", "0bi1", "0b", "0bh1x9z9"]), pcs, "auto")
    assert (p.nodes == -1).all()
    assert "BW2Q is not the start of any ICD-10-PCS code in the code set (CMS 2024" in p.reasons[0][1]
    for i in (1, 2, 3):  # I is no PCS character; two characters or eight are no prefix
        assert (
            p.reasons[i][0] == Reason.MALFORMED_CODE and "a prefix of 3 to 6 such as 0BH1" in p.reasons[i][1]
        )


def test_a_prefix_under_icd10cm_says_which_ontology_reads_it():
    cm = CM_SYSTEM.build()
    p = CM_SYSTEM.resolve(np.array(["0bh1", "bw21", "0DTJ4ZZ"]), cm, "auto")
    assert [p.reasons[i][0] for i in range(3)] == [Reason.OTHER_SYSTEM] * 3
    assert (
        p.reasons[0][1] == "0bh1 is an ICD-10-PCS prefix; choose the ontology icd10pcs, or icd10 (CM + PCS)"
    )


# A CodiEsp-P-shaped pair, lower case, one row per mention; worked by hand.
#   gold c1 {0BH1, BW21, 5A19}   c2 {0DTJ, BW03 (twice)}
#   pred c1 {0BH1, BW24, 5A1935Z} c2 {0DTJ, 0DT, BW03}  c3 {BW21} (a case outside the gold: all false positives)
# flat: c1 TP 0BH1, FP BW24 5A1935Z, FN BW21 5A19; c2 TP 0DTJ BW03, FP 0DT; c3 FP BW21 → 3, 4, 2
# qualifier, device, approach: only 5A1935Z reaches them (5A1935Z, 5A1935, 5A193): FP 1 each
# body part: c1 0BH1 and 5A19 (from 5A1935Z) TP, BW24 FP, BW21 FN; c2 0DTJ, BW03 TP (0DT is above); c3 BW21 FP
# operation: c1 0BH, BW2, 5A1 TP; c2 0DT x=2 y=1 (TP 1, FP 1; set-based TP 1), BW0 TP; c3 BW2 FP
# body system and section: as the operation (0B BW 5A | 0D x=2 y=1, BW | BW)
GOLD = b"doc_id\tcode\nc1\t0bh1\nc1\tbw21\nc1\t5a19\nc2\t0dtj\nc2\tbw03\nc2\tbw03\n"
PRED = b"doc_id\tcode\nc1\t0bh1\nc1\tbw24\nc1\t5a1935z\nc2\t0dtj\nc2\t0dt\nc2\tbw03\nc3\tbw21\n"
HAND = [
    ("flat", "leaf", 3, 4, 2),
    ("cophe", "qualifier", 0, 1, 0),
    ("cophe", "device", 0, 1, 0),
    ("cophe", "approach", 0, 1, 0),
    ("cophe", "body_part", 4, 2, 1),
    ("set_based", "body_part", 4, 2, 1),
    ("cophe", "operation", 5, 2, 0),
    ("set_based", "operation", 5, 1, 0),
    ("cophe", "body_system", 5, 2, 0),
    ("cophe", "section", 5, 2, 0),
    ("cophe", "overall", 14, 9, 1),  # qualifier … body system, the default
    ("set_based", "overall", 14, 7, 1),
]


@pytest.fixture(scope="module")
def codiesp():
    return score_files(GOLD, {"run": PRED})  # the ontology detected


@pytest.mark.parametrize("measure,level,tp,fp,fn", HAND)
def test_codiesp_procedures_scored_by_hand(codiesp, measure, level, tp, fp, fn):
    ev = codiesp.evaluation("run", max_level="section") if level == "section" else codiesp.evaluation("run")
    s = ev.score(measure, level)
    assert (s.tp, s.fp, s.fn) == (tp, fp, fn)


def test_codiesp_procedures_lose_nothing(codiesp):
    assert codiesp.corpus.ontology.name == "icd10pcs"
    assert len(codiesp.corpus.rejected) == 0
    flagged = codiesp.corpus.flagged
    assert set(flagged.kind) == {Reason.NOT_BILLABLE}
    assert sorted(set(flagged.value.str.lower())) == ["0bh1", "0dt", "0dtj", "5a19", "bw03", "bw21", "bw24"]


@pytest.mark.parametrize(
    "codes,expected",
    [
        (["0bh1", "bw21", "5a19", "bw03", "0dtj"], "icd10pcs"),
        # all-digit prefixes read as undotted ICD-9 by their form, CM-shaped ones (b24b, b20) as CM: the lists
        (["0bh1", "bw21", "3023", "0270", "302", "b24b", "b20"], "icd10pcs"),
        (["3023", "0270", "5a19"], "icd10pcs"),
        (["bw21", "bw24", "b24b", "b20"], "icd10pcs"),
        # the diagnosis file of the same task, and both scored together
        (["q64.4", "r69", "w19.xxx", "b20", "c50.9"], "icd10cm"),
        (["q64.4", "r69", "c50.9", "0bh1", "bw21"], "icd10"),
        (["C509", "0DTJ4ZZ"], "icd10"),  # a CM code of shared form beside a full PCS code
        (["C509", "D649", "F329", "I10"], "icd10cm"),
    ],
)
def test_detection_of_prefix_files(codes, expected):
    assert detect_system(codes).ontology == expected


def test_detecting_an_icd9_file_with_v_codes_still_needs_no_icd10():
    assert detect_system(["401.9", "V45.81", "E849.7", "4019"]).ontology == "icd9"


def test_letters_of_junk_are_no_pcs_prefix():
    """XYZ has the form of a prefix (a letter, no CM shape) but starts no listed code: it decides nothing."""
    assert detect_system(["401.9", "428.0", "XYZ"]).ontology == "icd9"
    assert PCS_SYSTEM.has_form("bw21") and not PCS_SYSTEM.has_form("XYZ")
