"""Nothing is lost silently: every code, score row and score cell given is scored or listed as rejected
(empty score cells, read as 0, are counted in a warning)."""

from __future__ import annotations

import io

import pandas as pd
from hypothesis import assume, given, settings
from hypothesis import strategies as st

from cophe_core.inputs.readers import InputError, RawScores, Reason, read_input, read_labels
from tests.conftest import examples

DOCS = st.sampled_from(["d1", "d2", "d3", ""])
CODES = st.sampled_from(["401.9", "428.0", "", "250.00;401.1", "401.9;", " "])
SCORES = st.sampled_from(["0.5", "0.25", "1", "0", "1.5", "-0.2", "1e308", "x", "", "nan", "inf"])
CELLS = st.sampled_from(["0.5", "0.9", "0.0", "0", "", "x", "1.5", "-1"])


@settings(max_examples=examples(120), deadline=None)
@given(st.lists(st.tuples(DOCS, CODES), min_size=2, max_size=25))
def test_labels_given_are_scored_or_rejected(rows):
    rows = [("d1", "401.9"), ("d1", "428.0"), *rows]  # a document on two rows: one code per row, not joined
    text = "doc_id,code\n" + "".join(f"{d},{c}\n" for d, c in rows)
    raw = read_labels(text.encode(), name="g.csv")
    given_codes = sum(len(c.split(";")) for _, c in rows)
    assert len(raw.pairs) + len(raw.rejected) == given_codes
    assert set(raw.rejected.kind) <= set(Reason)  # every rejected row says its kind
    assert set(raw.pairs.line) | set(raw.rejected.line) == set(range(2, len(rows) + 2))


@settings(max_examples=examples(120), deadline=None)
@given(st.lists(st.tuples(DOCS, st.sampled_from(["401.9", "428.0", ""]), SCORES), min_size=1, max_size=25))
def test_long_scores_given_are_scored_or_rejected(rows):
    text = "doc_id,code,score\n" + "".join(f"{d},{c},{s}\n" for d, c, s in rows)
    raw = read_input(text.encode(), name="s.csv")
    assert isinstance(raw, RawScores)
    assert len(raw.pairs) + len(raw.rejected) == len(rows)
    assert set(raw.rejected.kind) <= set(Reason)
    assert ((raw.pairs.score >= 0) & (raw.pairs.score <= 1)).all()


@settings(max_examples=examples(120), deadline=None)
@given(st.lists(st.lists(CELLS, min_size=3, max_size=3), min_size=1, max_size=12))
def test_wide_score_cells_are_scored_zero_or_rejected(matrix):
    text = "_id,401.9,428.0,250.00\n" + "".join(f"d{i}," + ",".join(r) + "\n" for i, r in enumerate(matrix))
    try:
        raw = read_input(text.encode(), name="w.csv")
    except InputError:  # mostly text or empty cells: not a score matrix, and no code column either
        assume(False)
    assume(isinstance(raw, RawScores))
    zeros = sum(cell in ("0", "0.0") for row in matrix for cell in row)
    empty = sum(cell == "" for row in matrix for cell in row)
    assert len(raw.pairs) + zeros + empty + len(raw.rejected) == 3 * len(matrix)
    assert set(raw.rejected.kind) <= set(Reason)
    said = [w for w in raw.warnings if "empty score cells" in w]
    assert len(said) == (1 if empty else 0)
    assert all(w.startswith(f"w.csv: {empty:,} empty score cells read as 0") for w in said)


def test_a_null_document_id_in_parquet_is_rejected_not_named_nan():
    buffer = io.BytesIO()
    pd.DataFrame({"doc_id": ["1", None, "3"], "code": ["401.9", "428.0", None]}).to_parquet(buffer)
    raw = read_labels(buffer.getvalue(), name="x.parquet")
    assert list(raw.docs) == ["1", "3"] and raw.pairs.code.tolist() == ["401.9"]
    assert raw.rejected[["line", "reason", "kind"]].values.tolist() == [
        [2, "empty document id", Reason.EMPTY_ID],
        [3, "empty code", Reason.EMPTY_CODE],
    ]


def test_one_joined_cell_does_not_hide_the_empty_codes_of_a_long_file():
    raw = read_labels(b"doc_id,code\n1,401.9\n1,\n2,428.0;250.00\n2,\n", name="g.csv")
    assert raw.rejected[["line", "reason"]].values.tolist() == [[3, "empty code"], [5, "empty code"]]
    assert sorted(raw.pairs.code) == ["250.00", "401.9", "428.0"]


def test_a_joined_file_keeps_its_documents_without_codes():
    raw = read_labels(b"doc_id,code\n1,401.9;428.0\n2,\n", name="caml.csv")
    assert list(raw.docs) == ["1", "2"] and raw.rejected.empty


def test_numeric_json_codes_are_rejected_with_a_hint_to_quote_them():
    raw = read_labels(b'[{"doc_id": 1, "codes": [250.00, "401.9", ""]}]', name="x.json")
    assert raw.pairs.code.tolist() == ["401.9"]
    assert raw.rejected.value.tolist() == ["250.0", ""]
    assert raw.rejected.reason[0].startswith('a number, not a code: write codes as strings ("250.0")')
    assert raw.rejected.kind.tolist() == [Reason.NUMBER_NOT_CODE, Reason.EMPTY_CODE]


def test_notes_are_the_warnings_not_about_listed_rows():
    """A duplicate row (a note) and a rejected row (summed up in a warning, listed in ``rejected``): the
    dashboard shows the notes beside the tables, read from the field, not found in the text."""
    from cophe_core import score_files

    gold = b"doc_id,code\n1,401.9\n1,401.9\n2,XYZ\n2,428.0\n"
    corpus = score_files(gold, {"r": b"doc_id,code\n1,401.9\n2,428.0\n"}).corpus
    assert len(corpus.rejected) == 1
    assert corpus.notes == ["gold: 1 duplicate (document, code) row collapsed"]
    assert corpus.warnings[: len(corpus.notes)] == corpus.notes
    assert len(corpus.warnings) == len(corpus.notes) + 1 and "not scored" in corpus.warnings[-1]


def test_each_kind_of_code_problem_is_named():
    """The code resolvers give a kind beside the words: ambiguous, malformed, unplaced, other system,
    and for flagged rows the caveat."""
    from cophe_core import score_files

    gold = b"doc_id,code\n1,401.9\n1,4019\n1,331\n2,XYZ\n"
    corpus = score_files(gold, {"r": b"doc_id,code\n1,401.9\n"}, ontology="icd9").corpus
    kinds = dict(zip(corpus.rejected.value, corpus.rejected.kind))
    assert kinds == {"4019": Reason.AMBIGUOUS, "331": Reason.AMBIGUOUS, "XYZ": Reason.MALFORMED_CODE}
    dotted = b"doc_id,code\n1,401.9\n2,428\n2,401.99\n"
    corpus = score_files(dotted, {"r": b"doc_id,code\n1,401.9\n"}, ontology="icd9").corpus
    flagged = dict(zip(corpus.flagged.value, corpus.flagged.kind))
    assert flagged["428"] == Reason.NOT_BILLABLE and flagged["401.99"] == Reason.PLACED_BY_STRUCTURE
    cm = score_files(b"doc_id,code\n1,I10\n1,B00B0ZZ\n", {"r": b"doc_id,code\n1,I10\n"}, ontology="icd10cm")
    assert dict(zip(cm.corpus.rejected.value, cm.corpus.rejected.kind)) == {"B00B0ZZ": Reason.OTHER_SYSTEM}
