"""One document as a coder reads it: codes with their status (correct, extra, missed, wrong code in the right
family), families with extra / missed counts, documents ranked by errors, notes and the titles found in them."""

from __future__ import annotations

import re

import pytest

from cophe_core import InputError, score_files
from cophe_core.breakdown.documents import (
    SUBSTITUTED,
    document_codes,
    document_families,
    document_review,
    highlight_titles,
    rank_documents,
    read_notes,
)
from tests.conftest import long_csv, score_pairs

# Gold {250.00, 401.9, 428.0, 428.1}; predicted {250.00, 250.01, 250.02, 401.9}:
# the 250 family has 2 extra codes, the 428 family 2 missed, 401 is correct.
GOLD = [("d", c) for c in ("250.00", "401.9", "428.0", "428.1")] + [("other", "486")]
PRED = [("d", c) for c in ("250.00", "250.01", "250.02", "401.9")] + [("other", "486")]


@pytest.fixture(scope="module")
def ev():
    return score_pairs(GOLD, PRED)


def test_document_codes_status_and_family(ev):
    """Each code of the document, grouped by category (e0), marked correct / extra / missed."""
    t = document_codes(ev, "d")
    assert list(zip(t.code, t.family, t.status, strict=True)) == [
        ("250.00", "250", "correct"),
        ("250.01", "250", "extra"),
        ("250.02", "250", "extra"),
        ("401.9", "401", "correct"),
        ("428.0", "428", "missed"),
        ("428.1", "428", "missed"),
    ]
    assert t.block[0].startswith("249-259 ")  # 250 sits in the CMS section 249-259 (SPEC §4)


def test_document_families_counts_and_words(ev):
    """Families above e2: gold and predicted counts; 'k extra' when predicted > gold, 'k missed' when <."""
    t = document_families(ev, "d")
    assert list(t.itertuples(index=False, name=None)) == [
        # e1: 250.0 holds 250.00-250.02 (gold 1, predicted 3); 428.0 and 428.1 are e1 codes
        ("e1", "250.0", t.title[0], 1, 3, "2 extra"),
        ("e1", "401.9", t.title[1], 1, 1, "correct"),
        ("e1", "428.0", t.title[2], 1, 0, "1 missed"),
        ("e1", "428.1", t.title[3], 1, 0, "1 missed"),
        ("e0", "250", t.title[4], 1, 3, "2 extra"),
        ("e0", "401", t.title[5], 1, 1, "correct"),
        ("e0", "428", t.title[6], 2, 0, "2 missed"),
        ("block", "249-259", t.title[7], 1, 3, "2 extra"),
        ("block", "401-405", t.title[8], 1, 1, "correct"),
        ("block", "420-429", t.title[9], 2, 0, "2 missed"),
    ]
    assert t.title[6] == "Heart failure"


def test_unknown_document_is_a_key_error(ev):
    """Asking for a document that is not in the evaluation raises KeyError naming it."""
    for fn in (document_families, document_codes, document_review):
        with pytest.raises(KeyError, match="nope"):
            fn(ev, "nope")


# ---------------------------------------------------------------- document_review


def test_document_review_shows_a_pair_as_one_row():
    """Gold {428.21, 428.0, 401.9}, written {428.22, 401.1, 250.00}. Pairs (closest first): 428.21 → 428.22
    (both under 428.2), 401.9 → 401.1; 428.0 stays missed (428's only extra code is taken), 250.00 stays extra.
    Six codes make four rows: each pair is one row, the written code with the gold code it replaced."""
    ev = score_pairs(
        [("s", "428.21"), ("s", "428.0"), ("s", "401.9")], [("s", "428.22"), ("s", "401.1"), ("s", "250.00")]
    )
    t = document_review(ev, "s")
    assert list(t.columns) == [
        "family",
        "family_title",
        "code",
        "title",
        "status",
        "instead_of",
        "instead_of_title",
    ]
    assert list(zip(t.family, t.code, t.status, t.instead_of, strict=True)) == [
        ("250", "250.00", "extra", ""),
        ("401", "401.1", SUBSTITUTED, "401.9"),
        ("428", "428.0", "missed", ""),
        ("428", "428.22", SUBSTITUTED, "428.21"),
    ]
    assert SUBSTITUTED == "wrong code in the right family"
    assert t.instead_of_title[1] == "Unspecified essential hypertension"
    assert t.title[1] == "Benign essential hypertension"
    assert t.instead_of_title[3] == "Acute systolic heart failure"
    assert t.family_title[3] == "Heart failure"
    assert list(t.instead_of_title[[0, 2]]) == ["", ""]


def test_document_review_without_pairs_is_document_codes(ev):
    """No family holds both an extra and a missed code: the review has the same rows as document_codes."""
    t, codes = document_review(ev, "d"), document_codes(ev, "d")
    assert list(zip(t.code, t.status)) == list(zip(codes.code, codes.status))
    assert set(t.instead_of) == {""}


# ---------------------------------------------------------------- rank_documents


def test_rank_documents_by_errors_over_runs():
    """Hand-counted errors (extra + missed exact codes) over runs A and B:

    doc   gold            A                 B         extra  missed  errors
    a0    —               —                 —             0       0       0  (nothing at all: last)
    b     401.9           401.9             401.9         0       0       0
    c     428.0 250.00    428.1             428.0         1       3       4
    e     486             486 401.9         —             1       1       2
    f     401.9 486       401.1 486 250.00  486           2       2       4  (ties c: document order)
    """
    gold = (
        long_csv(
            [("b", "401.9"), ("c", "428.0"), ("c", "250.00"), ("e", "486"), ("f", "401.9"), ("f", "486")]
        )
        + b"a0,\n"
    )
    a = long_csv(
        [
            ("b", "401.9"),
            ("c", "428.1"),
            ("e", "486"),
            ("e", "401.9"),
            ("f", "401.1"),
            ("f", "486"),
            ("f", "250.00"),
        ]
    )
    b = long_csv([("b", "401.9"), ("c", "428.0"), ("f", "486")])
    s = score_files(gold, {"A": a, "B": b}, ontology="icd9")
    t = rank_documents({"A": s.evaluation("A"), "B": s.evaluation("B")})
    assert list(t.columns) == ["doc_id", "gold", "errors", "extra", "missed"]
    assert list(t.itertuples(index=False, name=None)) == [
        ("c", 2, 4, 1, 3),
        ("f", 2, 4, 2, 2),
        ("e", 1, 2, 1, 1),
        ("b", 1, 0, 0, 0),
        ("a0", 0, 0, 0, 0),
    ]
    only_b = rank_documents({"B": s.evaluation("B")})  # B alone: c 1 missed, e 1 missed, f 1 missed
    assert list(only_b.doc_id) == ["c", "e", "f", "b", "a0"]
    assert list(only_b.errors) == [1, 1, 1, 0, 0]


def test_rank_documents_needs_a_run():
    with pytest.raises(ValueError):
        rank_documents({})


# ---------------------------------------------------------------- read_notes


def test_read_notes_formats():
    """CSV (quoted text over several lines, ids kept as text), TSV and JSONL; a document's rows are joined."""
    csv = b'doc_id,text,author\n001,"Chest pain,\nfever.",x\n2,Sepsis.,y\n001,Hypertension.,z\n'
    assert read_notes(csv, name="n.csv") == {"001": "Chest pain,\nfever.\n\nHypertension.", "2": "Sepsis."}
    assert read_notes(b"doc_id\ttext\n7\tCough\n", name="n.tsv") == {"7": "Cough"}
    jsonl = b'{"doc_id": "7", "text": "Cough"}\n\n{"doc_id": 8, "text": "Fever"}\n'
    assert read_notes(jsonl, name="n.jsonl") == {"7": "Cough", "8": "Fever"}
    assert read_notes(jsonl, name="notes") == {"7": "Cough", "8": "Fever"}  # no extension: by content


@pytest.mark.parametrize(
    "data, name, words",
    [
        (b"", "n.csv", ["n.csv", "empty", "doc_id and text"]),
        (b"  \n\n", "n.jsonl", ["n.jsonl", "empty"]),
        (b"doc_id,note\n1,Cough\n", "n.csv", ["n.csv, line 1", "no column text", "found: doc_id, note"]),
        (b"id\ttext\n1\tCough\n", "n.tsv", ["n.tsv, line 1", "no column doc_id"]),
        (b"doc_id,text\n", "n.csv", ["n.csv", "no notes"]),
        (
            b'{"doc_id": 1, "text": "a"}\n{"doc_id": 2, "text": "b"}\n{"doc_id": 3}\n',
            "n.jsonl",
            ["n.jsonl, line 3", 'no field "text"'],
        ),
        (
            b'{"doc_id": 1, "text": "a"}\n\n{"doc_id": 2, "text": "b"\n',
            "n.jsonl",
            ["n.jsonl, line 3", "JSON object"],
        ),
        (b"doc_id,text\n1,\xff\xfe\n", "n.csv", ["n.csv", "UTF-8"]),
    ],
)
def test_read_notes_errors_name_file_line_and_fix(data, name, words):
    with pytest.raises(InputError) as e:
        read_notes(data, name=name)
    for w in words:
        assert w in str(e.value)


def test_read_notes_reads_every_line_end_as_one_newline():
    """A JSON string may hold "\\r" (a file's own line ends are read before): "\\r\\r" is a blank line to
    Markdown, so a note's text holds only "\\n" line ends, as a CSV note's do."""
    jsonl = b'{"doc_id": "1", "text": "a\\r\\rb\\r\\nc\\nd"}\n'
    assert read_notes(jsonl, name="n.jsonl") == {"1": "a\n\nb\nc\nd"}
    assert read_notes(b'doc_id,text\r\n1,"a\r\rb"\r\n', name="n.csv") == {"1": "a\n\nb"}


@pytest.mark.parametrize(
    "data, said",
    [
        (b"*_[]!#" * 500_000, "no column doc_id (found: *_[]!#"),  # 3 MB on one line: the header
        (b"*," * 1_500_000, "1,500,001 fields; cophe reads at most 1,000 columns"),  # the last one empty
        (
            ("doc_id," + ",".join(["#" * 5000] * 400) + "\n1,x\n").encode(),
            "no column text (found: doc_id, ###",
        ),
    ],
)
def test_read_notes_messages_never_echo_the_file(data, said):
    with pytest.raises(InputError, match=re.escape(said)) as e:
        read_notes(data, name="n.csv")
    assert len(str(e.value)) < 600


# ---------------------------------------------------------------- highlight_titles


def test_highlight_is_case_insensitive_and_whole_words():
    text = "Pt with ANEMIA. anemias resolved. Anemia again"
    assert highlight_titles(text, ["anemia"]) == [(8, 14, "anemia"), (34, 40, "anemia")]


def test_highlight_overlapping_titles():
    """The title that starts first wins; of those starting at the same place, the longest; spans never overlap."""
    text = "acute kidney failure; congestive heart failure"
    titles = ["Kidney failure", "Acute kidney", "Heart failure", "Congestive heart failure"]
    assert highlight_titles(text, titles) == [(0, 12, "Acute kidney"), (22, 46, "Congestive heart failure")]
    assert highlight_titles("heart failure", ["heart failure", "Heart Failure"]) == [(0, 13, "heart failure")]


def test_highlight_regex_characters_are_literal():
    """'(', ')', '+', '.' and '*' in a title are characters to find, not a pattern."""
    text = "Dx: Hypertension (benign) and C++ use; N.O.S. not NxOxS; a*b"
    spans = highlight_titles(text, ["Hypertension (benign)", "C++", "N.O.S.", "a*b", "[", "(unclosed"])
    assert [text[s:e] for s, e, _ in spans] == ["Hypertension (benign)", "C++", "N.O.S.", "a*b"]
    assert highlight_titles("x", ["("]) == []


def test_highlight_first_part_of_a_long_title():
    """A title of more than three words is also found by its part before the first comma."""
    title = "Congestive heart failure, unspecified"
    assert highlight_titles("Known congestive heart failure.", [title]) == [(6, 30, title)]
    assert highlight_titles("Known congestive heart failure.", [title], heads=False) == []
    assert (
        highlight_titles("Pneumonia here", ["Pneumonia, organism unspecified"]) == []
    )  # 3 words: whole only
    assert highlight_titles("", [title]) == [] and highlight_titles("text", []) == []


def test_document_codes_follow_the_tabular_list():
    """Diagnoses, then V codes, then E codes, then procedures (not string order, which puts 38.00 after 378)."""
    ev = score_pairs([("d", c) for c in ("38.00", "250.00", "V45.00", "E008.1", "378.00")], [("d", "401.9")])
    assert list(document_codes(ev, "d").code) == ["250.00", "378.00", "401.9", "V45.00", "E008.1", "38.00"]
    assert list(document_review(ev, "d").code) == ["250.00", "378.00", "401.9", "V45.00", "E008.1", "38.00"]
