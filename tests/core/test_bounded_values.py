"""No value's length multiplies the cost of the rows: codes longer than MAX_CODE_CHARS and document ids
longer than MAX_ID_CHARS are rejected with their line, and a rejected value is shown as a short excerpt."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from cophe_core import score_files
from cophe_core.inputs.readers import MAX_CODE_CHARS, MAX_ID_CHARS, excerpt, read_input, read_labels
from tests.conftest import examples

LONG_CODE, LONG_ID = "9" * 10_000, "d" * (MAX_ID_CHARS + 1)


@pytest.mark.parametrize(
    "fmt, data",
    [  # the CSV's header is line 1: its rows are one line further down
        ("csv", f"doc_id,code\n2,{LONG_CODE}\n{LONG_ID},428.0\n1,401.9\n".encode()),
        (
            "jsonl",
            (
                f'{{"doc_id": "0", "codes": []}}\n{{"doc_id": "2", "codes": ["{LONG_CODE}"]}}\n'
                f'{{"doc_id": "{LONG_ID}", "codes": ["428.0"]}}\n{{"doc_id": "1", "codes": ["401.9"]}}\n'
            ).encode(),
        ),
        ("psv", f"0\n2|{LONG_CODE}\n{LONG_ID}|428.0\n1|401.9\n".encode()),
    ],
)
def test_overlong_codes_and_ids_are_rejected_with_their_line(fmt, data):
    raw = read_labels(data, name=f"f.{fmt}")
    assert raw.pairs.code.tolist() == ["401.9"]
    assert LONG_ID not in set(raw.docs) and {"1", "2"} <= set(raw.docs)
    reasons = dict(zip(raw.rejected.line, raw.rejected.reason))
    assert reasons == {
        2: f"longer than {MAX_CODE_CHARS} characters: not a code",
        3: f"a document id longer than {MAX_ID_CHARS} characters",
    }
    assert raw.rejected.value.str.len().max() < 100  # an excerpt, not the 10,000 characters


def test_a_long_scores_file_bounds_its_values_too():
    raw = read_input(f"doc_id,code,score\n1,401.9,0.9\n1,{LONG_CODE},0.8\n".encode())
    assert raw.pairs.code.tolist() == ["401.9"] and raw.rejected.line.tolist() == [3]


def test_the_longest_accepted_code_and_id_are_kept():
    code, doc = "A" * MAX_CODE_CHARS, "d" * MAX_ID_CHARS
    raw = read_labels(f"doc_id,code\n{doc},{code}\n".encode())
    assert raw.pairs.code.tolist() == [code] and raw.pairs.doc_id.tolist() == [doc] and raw.rejected.empty


def test_a_warning_quotes_an_excerpt():
    gold = f"doc_id,code\n1,401.9\n1,{LONG_CODE}\n".encode()
    corpus = score_files(gold, {"r": b"doc_id,code\n1,401.9\n"}).corpus
    said = [w for w in corpus.warnings if "not scored" in w]
    assert said and all(len(w) < 300 for w in said) and "(10,000 characters)" in said[0]


def test_excerpt_keeps_short_values_whole():
    assert excerpt("401.9") == "401.9" and excerpt("x" * 61) == "x" * 60 + "… (61 characters)"


@settings(max_examples=examples(60), deadline=None)
@given(
    st.lists(
        st.tuples(
            st.text("d0123", min_size=1, max_size=4),
            st.one_of(
                st.sampled_from(["401.9", "428.0", "250.00"]),
                st.integers(MAX_CODE_CHARS - 1, MAX_CODE_CHARS + 40).map(lambda n: "9" * n),
            ),
        ),
        min_size=1,
        max_size=30,
    )
)
def test_every_row_is_kept_or_rejected(rows):
    body = "".join(f"{d},{c}\n" for d, c in rows)
    raw = read_labels(("doc_id,code\n" + body).encode())
    assert len(raw.pairs) + len(raw.rejected) == len(rows)
    assert sorted(raw.pairs.line.tolist() + raw.rejected.line.tolist()) == list(range(2, len(rows) + 2))
