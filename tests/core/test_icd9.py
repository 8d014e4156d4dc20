"""ICD-9-CM placement, parsing and titles (SPEC §4), with real codes from each system."""

from __future__ import annotations

import numpy as np
import pytest

from cophe_core.ontology.icd9 import parse_code, place_unlisted
from tests.conftest import score_pairs
from tests.core.naive import icd9_one_code_at_a_time


def path_keys(onto, code: str) -> list[tuple[str, str]]:
    return [(onto.levels[onto.level[n]], onto.keys[n]) for n in onto.path(onto.codes[code])]


@pytest.mark.parametrize(
    "code,expected",
    [
        # diagnoses
        (
            "364.11",
            [("chapter", "320-389"), ("block", "360-379"), ("e0", "364"), ("e1", "364.1"), ("e2", "364.11")],
        ),
        ("364.3", [("chapter", "320-389"), ("block", "360-379"), ("e0", "364"), ("e1", "364.3")]),
        ("401.9", [("chapter", "390-459"), ("block", "401-405"), ("e0", "401"), ("e1", "401.9")]),
        ("042", [("chapter", "001-139"), ("block", "042"), ("e0", "042")]),
        ("285.9", [("chapter", "280-289"), ("block", "280-289"), ("e0", "285"), ("e1", "285.9")]),
        # V and E codes
        (
            "V45.81",
            [("chapter", "V01-V91"), ("block", "V40-V49"), ("e0", "V45"), ("e1", "V45.8"), ("e2", "V45.81")],
        ),
        ("E878.8", [("chapter", "E000-E999"), ("block", "E878-E879"), ("e0", "E878"), ("e1", "E878.8")]),
        # procedures: the block is the procedure chapter; one chapter node for all
        ("39.95", [("chapter", "00-99"), ("block", "35-39"), ("e0", "39"), ("e1", "39.9"), ("e2", "39.95")]),
        ("00.66", [("chapter", "00-99"), ("block", "00"), ("e0", "00"), ("e1", "00.6"), ("e2", "00.66")]),
        ("96.71", [("chapter", "00-99"), ("block", "87-99"), ("e0", "96"), ("e1", "96.7"), ("e2", "96.71")]),
    ],
)
def test_placement(icd9, code, expected):
    assert path_keys(icd9, code) == expected


# The codes the paper's released hierarchy misplaces, placed as in the CMS tabular list.
@pytest.mark.parametrize(
    "code,block,chapter",
    [
        ("249.00", "249-259", "240-279"),  # secondary diabetes
        ("249.91", "249-259", "240-279"),
        ("339.00", "339", "320-389"),  # other headache syndromes: own section
        ("339.3", "339", "320-389"),
        ("538", "530-539", "520-579"),  # GI mucositis
        ("539.01", "530-539", "520-579"),  # complications of bariatric procedures
        ("V87.01", "V87", "V01-V91"),
        ("V88.01", "V88", "V01-V91"),
        ("V89.01", "V89", "V01-V91"),
        ("V90.01", "V90", "V01-V91"),
        ("V91.00", "V91", "V01-V91"),
        ("E000.0", "E000", "E000-E999"),  # external cause status
        ("E001.0", "E001-E030", "E000-E999"),  # activity
        ("E030", "E001-E030", "E000-E999"),
        ("E849.0", "E849", "E000-E999"),  # place of occurrence: its own section
        ("E849.9", "E849", "E000-E999"),
    ],
)
def test_late_added_codes_follow_the_cms_tabular_list(icd9, code, block, chapter):
    path = dict(path_keys(icd9, code))
    assert path["block"] == block and path["chapter"] == chapter
    assert icd9.listed[icd9.codes[code]]


# Sections the CMS tabular list nests inside an outer header, or added late beside a neighbour: the
# block is the innermost header (SPEC §4), so each pair sits in two blocks of one chapter.
SPLIT_SECTIONS = [
    ("633.10", "630-633", "634.90", "634-639", "630-679"),
    ("V01.1", "V01-V06", "V07.0", "V07-V09", "V01-V91"),
    ("E970", "E970-E978", "E979.0", "E979", "E000-E999"),
    ("200.00", "200-208", "209.00", "209", "140-239"),
    ("326", "320-326", "327.00", "327", "320-389"),
    ("E848", "E846-E848", "E849.0", "E849", "E000-E999"),
]


@pytest.mark.parametrize("gold,gold_block,pred,pred_block,chapter", SPLIT_SECTIONS)
def test_nested_sections_are_separate_blocks(icd9, gold, gold_block, pred, pred_block, chapter):
    assert dict(path_keys(icd9, gold))["block"] == gold_block
    assert dict(path_keys(icd9, pred))["block"] == pred_block
    # one document, gold {gold}, predicted {pred}: the two blocks each hold one code, so the block
    # level has one false positive and one false negative; they meet only at the chapter.
    ev = score_pairs([("d", gold)], [("d", pred)], max_level="chapter")
    for measure in ("set_based", "cophe"):
        block, chap = ev.score(measure, "block"), ev.score(measure, "chapter")
        assert (block.tp, block.fp, block.fn) == (0, 1, 1)
        assert (chap.tp, chap.fp, chap.fn) == (1, 0, 0)


@pytest.mark.parametrize(
    "block,title",
    [
        ("630-633", "Ectopic and molar pregnancy"),
        ("634-639", "Other pregnancy with abortive outcome"),
        ("V01-V06", "Persons with potential health hazards related to communicable diseases"),
        (
            "V07-V09",
            "Persons with need for isolation, other potential health hazards and prophylactic measures",
        ),
        ("E970-E978", "Legal intervention"),
        ("E979", "Terrorism"),
        ("200-208", "Malignant neoplasm of lymphatic and hematopoietic tissue"),
        ("209", "Neuroendocrine tumors"),
        ("320-326", "Inflammatory diseases of the central nervous system"),
        ("327", "Organic sleep disorders"),
        ("E846-E848", "Vehicle accidents not elsewhere classifiable"),
        ("E849", "Place of occurrence"),
        # CMS v32 wording where the generator's source had an older one
        ("042", "Human immunodeficiency virus (HIV) infection"),
        ("050-059", "Viral diseases generally accompanied by exanthem"),
        ("805-809", "Fracture of neck and trunk"),
        ("860-869", "Internal injury of thorax, abdomen, and pelvis"),
    ],
)
def test_section_titles_follow_the_cms_tabular_list(icd9, block, title):
    assert icd9.titles[icd9.node("block", block)] == title


def test_the_build_equals_one_code_at_a_time(icd9):
    """The fast build (codes split by their known CMS form, categories' blocks found once) gives the same nodes,
    in the same order, as parsing every code and adding its path node by node: saved node ids depend on it."""
    ref = icd9_one_code_at_a_time()
    assert icd9.n_nodes == ref.n_nodes == 22_404
    for field in ("keys", "titles", "level", "parent", "listed"):
        np.testing.assert_array_equal(getattr(icd9, field), getattr(ref, field), err_msg=field)
    assert list(icd9.codes.items()) == list(ref.codes.items())
    assert (icd9.code_sets, icd9.default_max_level, icd9.systems) == (
        ref.code_sets,
        ref.default_max_level,
        None,
    )


def test_every_category_lies_in_its_block_range(icd9):
    """Blocks tile their families: each category's block range contains it, and no two ranges overlap."""
    lv = icd9.levels
    bounds: dict[str, list[tuple[str, str]]] = {}
    for n in range(icd9.n_nodes):
        if lv[icd9.level[n]] != "block":
            continue
        start, _, end = str(icd9.keys[n]).partition("-")
        bounds.setdefault(start[0] if start[0] in "VE" else str(len(start)), []).append((start, end or start))
    for family in bounds.values():
        family.sort()
        assert all(a[1] < b[0] for a, b in zip(family, family[1:]))
    for n in range(icd9.n_nodes):
        if lv[icd9.level[n]] == "e0":
            key, block = str(icd9.keys[n]), str(icd9.keys[icd9.parent[n]])
            start, _, end = block.partition("-")
            assert start <= key <= (end or start), (key, block)


def test_every_code_has_one_ancestor_per_higher_level(icd9):
    anc = icd9.ancestors
    for lv in range(len(icd9.levels)):
        at = icd9.level == lv
        assert (anc[at, lv:] >= 0).all()
        assert (anc[at, :lv] == -1).all()


def test_every_node_has_a_title(icd9):
    assert all(isinstance(t, str) and t.strip() for t in icd9.titles)
    assert icd9.titles[icd9.codes["401.9"]] == "Unspecified essential hypertension"
    assert icd9.titles[icd9.codes["40.19"]] == "Other diagnostic procedures on lymphatic structures"
    assert icd9.titles[icd9.codes["401"]] == "Essential hypertension"
    assert icd9.titles[icd9.node("block", "360-379")] == "Disorders of the eye and adnexa"
    assert icd9.titles[icd9.node("chapter", "00-99")] == "Procedures"
    assert icd9.titles[icd9.codes["39"]] == "Other operations on vessels"
    # a non-billable subcategory gets a title derived from its children
    assert icd9.titles[icd9.codes["364.1"]] == "Chronic iridocyclitis"


def test_same_key_at_two_levels_stays_two_nodes(icd9):
    # "042" is both a block (HIV) and a category; "00" a block and a category.
    for key in ("042", "00", "V87"):
        block, cat = icd9.node("block", key), icd9.node("e0", key)
        assert block != cat and icd9.parent[cat] == block


@pytest.mark.parametrize(
    "raw,system,code,kind",
    [
        ("401.9", "auto", "401.9", "diagnosis"),
        (" v45.81 ", "auto", "V45.81", "diagnosis"),
        ("e849.7", "auto", "E849.7", "diagnosis"),
        ("40.19", "auto", "40.19", "procedure"),
        ("401.", "auto", "401", "diagnosis"),
        ("4019", "diagnosis", "401.9", "diagnosis"),
        ("4019", "procedure", "40.19", "procedure"),
        ("0389", "diagnosis", "038.9", "diagnosis"),
        ("V4581", "auto", "V45.81", "diagnosis"),
        ("E8497", "auto", "E849.7", "diagnosis"),
        ("3995", "procedure", "39.95", "procedure"),
        ("401", "auto", "401", "diagnosis"),
    ],
)
def test_parse(raw, system, code, kind):
    p = parse_code(raw, system)
    assert (p.code, p.system) == (code, kind)


@pytest.mark.parametrize(
    "raw,fragment",
    [
        ("4019", "ambiguous"),
        ("4019", "ambiguous"),
        ("E849.71", "not a well-formed"),
        ("8.45", "008.45"),
        ("401.123", "not a well-formed"),
        ("ABC", "not a well-formed"),
        ("", "empty"),
        ("V4", "not a well-formed"),
    ],
)
def test_ill_formed_codes_are_rejected_with_a_reason(raw, fragment):
    with pytest.raises(ValueError, match=fragment):
        parse_code(raw)


def test_diagnosis_form_refused_when_file_holds_procedures():
    with pytest.raises(ValueError, match="procedure code"):
        parse_code("401.9", "procedure")


def test_unlisted_valid_code_is_placed_by_structure_and_flagged(icd9):
    # neither 364.99 nor 043.1 is in CMS v32; both are well-formed.
    onto = place_unlisted(icd9, [parse_code("364.99"), parse_code("043.1")])
    assert path_keys(onto, "364.99")[:4] == path_keys(icd9, "364.9")[:3] + [("e1", "364.9")]
    assert not onto.listed[onto.codes["364.99"]]
    # 043 falls in the gap after 042: placed in the block whose range starts before it
    assert dict(path_keys(onto, "043.1"))["block"] == "042"
    assert onto.n_nodes == icd9.n_nodes + 3  # 364.99, 043, 043.1
    # existing ids are preserved
    assert onto.codes["401.9"] == icd9.codes["401.9"]


def test_five_undotted_digits_are_a_diagnosis_and_four_are_asked_about():
    """No ICD-9 procedure has five digits (DD.DD), so 42731 is 427.31; 4019 may be 401.9 or 40.19."""
    from cophe_core.ontology.icd9 import parse_code

    assert parse_code("42731").code == "427.31" and parse_code("25000").system == "diagnosis"
    with pytest.raises(ValueError, match="ambiguous"):
        parse_code("4019")


def test_a_bare_three_digit_code_among_undotted_codes_is_asked_about_not_guessed():
    """In a MIMIC procedures file, 331 is procedure 33.1 as likely as diagnosis 331."""
    from cophe_core import score_files
    from cophe_core.scoring.labels import NothingScorable

    procedures = b"HADM_ID,ICD9_CODE\n1,9604\n1,331\n2,966\n2,3893\n"
    with pytest.raises(NothingScorable) as err:
        score_files(procedures, {"A": procedures})
    assert err.value.needs_system
    s = score_files(procedures, {"A": procedures}, system="procedure")
    assert sorted(s.corpus.ontology.keys[s.corpus.gold.indices]) == ["33.1", "38.93", "96.04", "96.6"]
    dotted = score_files(b"doc_id,code\n1,331\n1,401.9\n", {"A": b"doc_id,code\n1,331\n"})
    assert len(dotted.corpus.rejected) == 0  # without four-digit codes, 331 is the diagnosis category
