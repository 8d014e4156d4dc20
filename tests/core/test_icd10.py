"""ICD-10-CM, ICD-10-PCS and the combined ontology: placement, titles, a hand-worked example, detection."""

from __future__ import annotations

import numpy as np
import pytest

from cophe_core import score_files
from cophe_core.ontology import icd10_ontology, icd10cm_ontology, icd10pcs_ontology
from cophe_core.ontology.detect import detect_system
from cophe_core.ontology.icd10 import normalise_cm
from cophe_core.ontology.sources import read_code_list
from tests.conftest import long_csv


def path(onto, code):
    return [(onto.levels[onto.level[n]], str(onto.keys[n])) for n in onto.path(onto.codes[code])]


@pytest.fixture(scope="module")
def cm():
    return icd10cm_ontology()


@pytest.fixture(scope="module")
def pcs():
    return icd10pcs_ontology()


@pytest.mark.parametrize(
    "code,expected",
    [
        ("I10", [("chapter", "I00-I99"), ("block", "I10-I1A"), ("e0", "I10")]),
        ("E11.9", [("chapter", "E00-E89"), ("block", "E08-E13"), ("e0", "E11"), ("e1", "E11.9")]),
        # placeholder X: T49.8X is a node of its own at e2
        (
            "T49.8X",
            [("chapter", "S00-T88"), ("block", "T36-T50"), ("e0", "T49"), ("e1", "T49.8"), ("e2", "T49.8X")],
        ),
        (
            "T49.8X1A",
            [
                ("chapter", "S00-T88"),
                ("block", "T36-T50"),
                ("e0", "T49"),
                ("e1", "T49.8"),
                ("e2", "T49.8X"),
                ("e3", "T49.8X1"),
                ("e4", "T49.8X1A"),
            ],
        ),
        # seventh character under a six-character code
        (
            "S52.044Q",
            [
                ("chapter", "S00-T88"),
                ("block", "S50-S59"),
                ("e0", "S52"),
                ("e1", "S52.0"),
                ("e2", "S52.04"),
                ("e3", "S52.044"),
                ("e4", "S52.044Q"),
            ],
        ),
        # seventh character straight under a four-character code, as the tabular list has it
        (
            "S02.0XXA",
            [
                ("chapter", "S00-T88"),
                ("block", "S00-S09"),
                ("e0", "S02"),
                ("e1", "S02.0"),
                ("e4", "S02.0XXA"),
            ],
        ),
        (
            "O09.00",
            [("chapter", "O00-O9A"), ("block", "O09"), ("e0", "O09"), ("e1", "O09.0"), ("e2", "O09.00")],
        ),
    ],
)
def test_cm_placement(cm, code, expected):
    assert path(cm, code) == expected


def test_block_and_category_with_one_id_stay_apart(cm):
    block, category = cm.node("block", "O09"), cm.node("e0", "O09")
    assert block != category and cm.parent[category] == block
    assert cm.codes["O09"] == category


def test_cm_titles_everywhere(cm):
    assert all(isinstance(t, str) and t.strip() for t in cm.titles)
    assert cm.titles[cm.codes["I10"]] == "Essential (primary) hypertension"
    assert cm.titles[cm.node("block", "I10-I1A")] == "Hypertensive diseases"
    assert cm.titles[cm.node("chapter", "I00-I99")] == "Diseases of the circulatory system"
    assert cm.listed[cm.codes["E11.9"]] and not cm.listed[cm.codes["E11"]]  # billable leaves only


@pytest.mark.parametrize("code", ["0DTJ4ZZ", "02HV33Z", "5A1945Z"])
def test_pcs_levels_are_prefixes(pcs, code):
    p = path(pcs, code)
    assert [lv for lv, _ in p] == [
        "section",
        "body_system",
        "operation",
        "body_part",
        "approach",
        "device",
        "qualifier",
    ]
    assert [key for _, key in p] == [code[:n] for n in range(1, 8)]


def test_pcs_titles(pcs):
    assert pcs.titles[pcs.codes["0DTJ4ZZ"]] == "Resection of Appendix, Percutaneous Endoscopic Approach"
    assert pcs.titles[pcs.codes["0"]] == "Medical and Surgical"
    assert pcs.titles[pcs.codes["0D"]] == "Gastrointestinal System"
    assert pcs.titles[pcs.codes["0DT"]] == "Resection"
    assert all(isinstance(t, str) and t for t in pcs.titles)


def test_combined_ontology_tags_systems():
    onto = icd10_ontology()
    assert onto.system_of(onto.codes["I10"]) == "ICD-10-CM"
    assert onto.system_of(onto.codes["0DTJ4ZZ"]) == "ICD-10-PCS"
    assert onto.levels[onto.level[onto.codes["0DTJ4ZZ"]]] == "e4"
    assert onto.levels[onto.level[onto.codes["0"]]] == "chapter"


# A Table-1-style example on the I50 (heart failure) family, worked by hand:
#   predicted {I50.21, I50.22, I50.32, I50.9}, gold {I50.21, I50.31, I50.9}
I50 = [
    ("flat", "leaf", 2, 2, 1),
    ("set_based", "e2", 1, 2, 1),
    ("cophe", "e2", 1, 2, 1),
    # e1: x = {I50.2: 2, I50.3: 1, I50.9: 1}, y = {I50.2: 1, I50.3: 1, I50.9: 1}
    ("set_based", "e1", 3, 0, 0),
    ("cophe", "e1", 3, 1, 0),
    # e0 and block: x = 4, y = 3 in one node
    ("set_based", "e0", 1, 0, 0),
    ("cophe", "e0", 3, 1, 0),
    ("set_based", "block", 1, 0, 0),
    ("cophe", "block", 3, 1, 0),
    ("set_based", "overall", 6, 2, 1),
    ("cophe", "overall", 10, 5, 1),
]


@pytest.fixture(scope="module")
def i50():
    gold = [("d", c) for c in ("I50.21", "I50.31", "I50.9")]
    pred = [("d", c) for c in ("I50.21", "I50.22", "I50.32", "I50.9")]
    return score_files(long_csv(gold), {"run": long_csv(pred)}, ontology="icd10cm").evaluation("run")


@pytest.mark.parametrize("measure,level,tp,fp,fn", I50)
def test_hand_worked_icd10_family(i50, measure, level, tp, fp, fn):
    s = i50.score(measure, level)
    assert (s.tp, s.fp, s.fn) == (tp, fp, fn)


def test_hand_worked_icd10_overall_rates(i50):
    s = i50.score("cophe")
    assert s.precision == pytest.approx(10 / 15) and s.recall == pytest.approx(10 / 11)
    assert s.f1 == pytest.approx(2 * (10 / 15) * (10 / 11) / (10 / 15 + 10 / 11))
    assert i50.levels == ["e4", "e3", "e2", "e1", "e0", "block"]


def test_combined_scores_per_system_add_up():
    gold = [("a", "I10"), ("a", "E11.9"), ("a", "0DTJ4ZZ"), ("b", "02HV33Z")]
    pred = [("a", "I10"), ("a", "E11.65"), ("a", "0DTJ0ZZ"), ("b", "5A1945Z")]
    ev = score_files(long_csv(gold), {"run": long_csv(pred)}).evaluation("run")
    assert ev.ontology.name == "icd10"
    by = ev.systems_table
    for measure in ("flat", "set_based", "cophe"):
        total = ev.levels_table[ev.levels_table.measure == measure].reset_index(drop=True)
        parts = by[by.measure == measure].groupby("level", sort=False)[["tp", "fp", "fn"]].sum().reset_index()
        assert total.set_index("level")[["tp", "fp", "fn"]].equals(parts.set_index("level").loc[total.level])
    assert set(ev.to_dict()["systems"]) == {"ICD-10-CM", "ICD-10-PCS"}


def test_undotted_and_unknown_icd10_codes():
    gold = [("a", "E119"), ("a", "E11.69X"), ("a", "Q99.9"), ("a", "J98.XXX"), ("a", "11.1")]
    s = score_files(long_csv(gold), {"run": long_csv([("a", "E11.9")])}, ontology="icd10cm")
    onto = s.corpus.ontology
    assert onto.keys[s.corpus.gold.indices].tolist().count("E11.9") == 1  # E119 read as E11.9
    flagged = dict(zip(s.corpus.flagged.value, s.corpus.flagged.reason))
    assert "placed by its structure" in flagged["E11.69X"]
    assert [k for _, k in path(onto, "E11.69X")][-2:] == ["E11.69", "E11.69X"]
    rejected = dict(zip(s.corpus.rejected.value, s.corpus.rejected.reason))
    assert "11.1" in rejected and "not a well-formed" in rejected["11.1"]


@pytest.mark.parametrize(
    "codes,expected",
    [
        (["401.9", "428.0", "V45.81", "E849.7", "39.95"], "icd9"),
        (["4019", "4280", "3995"], "icd9"),
        (["V45.81", "E849.7", "V10.3", "E888.9"], "icd9"),  # V and E forms alone: decided by the code lists
        (["I10", "E11.9", "S52.044Q"], "icd10cm"),
        (["QA0.0131", "QA0.8", "QA0"], "icd10cm"),  # a letter in the second place (Q00-QA0 chapter)
        (["QA0.0199", "QA0.07"], "icd10cm"),  # not in the list: the form alone decides
        (["0DTJ4ZZ", "02HV33Z"], "icd10pcs"),
        (["I10", "E11.9", "0DTJ4ZZ"], "icd10"),
        (["I10", "E11.9", "401.9", "428.0"], None),
        (["hello", "world"], None),
    ],
)
def test_detection(codes, expected):
    found = detect_system(codes)
    assert found.ontology == expected
    if expected is None:
        assert "mix" in found.message or "no code was recognised" in found.message


def test_the_detection_is_said_in_words_with_its_counts():
    codes = [f"{n:03d}.{d}" for n in range(1, 400) for d in range(3)] + ["V45.81", "E849.7"]
    assert detect_system(codes).message == (
        "ICD-9-CM (diagnoses, V/E codes, procedures), from 1,199 distinct codes: 1,197 ICD-9-CM, "
        "2 of a form two systems share"
    )


def test_auto_detection_refuses_mixed_input():
    from cophe_core import InputError

    with pytest.raises(InputError, match="mix ICD-9 and ICD-10"):
        score_files(
            long_csv([("a", "I10"), ("a", "E11.9")]), {"r": long_csv([("a", "401.9"), ("a", "428.0")])}
        )


def _icd9_dotted(undotted: str, system: str) -> str:
    """The canonical dotted form of a CMS v32 list code, worked out here independently of the parser."""
    head = 2 if system == "procedure" else 4 if undotted.startswith("E") else 3
    return f"{undotted[:head]}.{undotted[head:]}" if len(undotted) > head else undotted


def _icd10cm_list() -> list[str]:
    import simple_icd_10_cm as cm

    entries = [c for c in cm.get_all_codes(True) if cm.is_category_or_subcategory(c)]
    # 39 categories (O09, QA0, ...) are also blocks of one category, so the list names them twice
    assert len(entries) == 98_225 and len(set(entries)) == 98_186
    return sorted(set(entries))


def _icd9_list(filename: str, count: int) -> list[str]:
    codes = list(read_code_list(f"ICD_9_CM_v32_master_descriptions/{filename}", encoding="latin-1"))
    assert len(codes) == count
    return codes


@pytest.mark.parametrize("which", ["icd10cm", "icd9-diagnoses", "icd9-procedures"])
def test_every_official_code_scores_as_itself(which):
    """Each code of the official lists, one document each, scored against itself: nothing rejected,
    every code resolves to the code-level node keyed by its canonical form, and flat F1 is 1."""
    if which == "icd10cm":
        codes, ontology, system = _icd10cm_list(), "icd10cm", "auto"
        expected = codes
    else:
        system = "diagnosis" if which == "icd9-diagnoses" else "procedure"
        filename, count = (
            ("CMS32_DESC_LONG_DX.txt", 14_567) if system == "diagnosis" else ("CMS32_DESC_LONG_SG.txt", 3_882)
        )
        codes, ontology = _icd9_list(filename, count), "icd9"
        expected = [_icd9_dotted(c, system) for c in codes]
    rows = long_csv(list(zip(codes, codes)))
    s = score_files(rows, {"run": rows}, ontology=ontology, system=system)
    corpus, onto = s.corpus, s.corpus.ontology
    assert len(corpus.rejected) == 0
    assert corpus.docs.tolist() == sorted(codes)
    gold = corpus.gold
    assert (np.diff(gold.indptr) == 1).all()  # exactly one node per document
    by_doc = dict(zip(codes, expected))
    assert onto.keys[gold.indices].tolist() == [by_doc[d] for d in corpus.docs]
    assert (onto.level[gold.indices] < onto.levels.index("block")).all()  # a code node, not a block
    assert (corpus.runs["run"] != gold).nnz == 0
    flat = s.evaluation("run").score("flat")
    assert (flat.tp, flat.fp, flat.fn, flat.f1) == (len(codes), 0, 0, 1.0)


@pytest.mark.parametrize(
    "raw,expected",
    [
        ("QA0.0131", "QA0.0131"),
        ("qa00131", "QA0.0131"),
        ("QA0", "QA0"),
        ("C7B.00", "C7B.00"),
        ("Z3A.01", "Z3A.01"),
        ("S02.0XXA", "S02.0XXA"),
        ("NAN", None),
        ("QB0.1", None),
        ("C7C.00", None),
        ("E849.7", None),
        ("0DTJ4ZZ", None),
        ("I1", None),
    ],
)
def test_cm_form_follows_the_characters_of_the_code_set(raw, expected):
    # second place: a digit or A; third place: a digit, A or B (as in every code of the tabular list)
    assert normalise_cm(raw) == expected


def test_qa0_code_scores_against_itself():
    # QA0.0131 is e4 with an ancestor at every level: QA0.013, QA0.01, QA0.0, QA0, block QA0
    rows = long_csv([("d", "QA0.0131")])
    s = score_files(rows, {"run": rows}, ontology="icd10cm")
    assert len(s.corpus.rejected) == 0
    ev = s.evaluation("run")
    flat, cophe = ev.score("flat"), ev.score("cophe")
    assert (flat.tp, flat.fp, flat.fn, flat.f1) == (1, 0, 0, 1.0)
    assert (cophe.tp, cophe.fp, cophe.fn, cophe.f1) == (6, 0, 0, 1.0)
    assert path(s.corpus.ontology, "QA0.0131") == [
        ("chapter", "Q00-QA0"),
        ("block", "QA0"),
        ("e0", "QA0"),
        ("e1", "QA0.0"),
        ("e2", "QA0.01"),
        ("e3", "QA0.013"),
        ("e4", "QA0.0131"),
    ]


# --- ICD-10-CM and ICD-10-PCS in one ontology: a PCS prefix is never a CM category --------------------------


def test_every_pcs_code_has_only_pcs_ancestors_in_the_combined_ontology():
    """PCS prefix B52 (CT of veins) and CM category B52 (malaria) share a level and a key, not a node."""
    from cophe_core.ontology.icd10 import icd10_ontology, pcs_code_list

    o = icd10_ontology()
    pcs = np.array([o.codes[c] for c in pcs_code_list()])
    anc = o.ancestors[pcs]
    assert (anc >= 0).all()  # a PCS code has an ancestor at every level
    assert set(o.systems[anc.ravel()]) == {"ICD-10-PCS"}
    b52 = o.ancestors[o.codes["B52FYZZ"], o.level_index("e0")]
    assert o.keys[b52] == "B52" and o.systems[b52] == "ICD-10-PCS" and b52 != o.codes["B52"]
    assert o.titles[o.codes["B52"]] == "Plasmodium malariae malaria"  # a label "B52" is the CM category


def test_procedures_do_not_match_diagnoses_that_share_their_first_characters():
    """Gold F09, B52.9 against PCS F09Z3XZ, B52FYZZ: nothing in common at any level (hand-worked)."""
    s = score_files(
        b"doc_id,code\n1,F09\n1,B52.9\n", {"A": b"doc_id,code\n1,F09Z3XZ\n1,B52FYZZ\n"}, ontology="icd10"
    )
    ev = s.evaluation("A", max_level="chapter")
    for level in ("e0", "block", "chapter"):
        assert ev.score("cophe", level).tp == 0 and ev.score("set_based", level).tp == 0
    assert ev.score("cophe").tp == 0


def test_unlisted_codes_go_under_their_own_system():
    s = score_files(b"doc_id,code\n1,B52FYZZ\n", {"A": b"doc_id,code\n1,B52FYZY\n"}, ontology="icd10")
    o = s.corpus.ontology
    assert set(o.systems[o.path(o.codes["B52FYZY"])]) == {"ICD-10-PCS"}
    assert s.evaluation("A").score("cophe", "e3").tp == 1  # B52FYZ, the PCS prefix both share


def test_a_procedure_code_under_icd10cm_is_rejected_with_its_reason():
    s = score_files(b"doc_id,code\n1,F09\n", {"A": b"doc_id,code\n1,F09Z3XZ\n1,F09\n"}, ontology="icd10cm")
    assert s.corpus.rejected.reason.tolist() == [
        "F09Z3XZ is an ICD-10-PCS procedure code; choose the ontology icd10 (CM + PCS)"
    ]
