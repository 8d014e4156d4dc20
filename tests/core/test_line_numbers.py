"""Line numbers of rows in delimited text: every reported line is the line the row starts on, whatever
blank lines, whitespace-only lines and quoted multi-line fields come before it."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from cophe_core.inputs.readers import parse_delimited, read_labels
from tests.conftest import examples

FIELD = st.text(alphabet="ab1 .\n", min_size=1, max_size=6).filter(lambda f: f.strip(" "))
BLANK = st.sampled_from(["", "  ", "\r", " \t "])


def _quoted(field: str) -> str:
    return f'"{field}"' if "\n" in field or field != field.strip() else field


@settings(max_examples=examples(150), deadline=None)
@given(
    st.lists(st.tuples(st.lists(BLANK, max_size=2), FIELD, FIELD), min_size=1, max_size=12),
    st.sampled_from([",", "\t"]),
)
def test_each_row_reports_the_line_it_starts_on(records, sep):
    lines, expected = ["doc_id" + sep + "code"], []
    for blanks, doc, code in records:
        if sep == "\t":
            blanks = [b.replace("\t", "") for b in blanks]  # a tab is a separator in TSV, not a blank
        lines += blanks
        expected.append("\n".join(lines).count("\n") + 2)  # the line after everything so far
        lines.append(_quoted(doc) + sep + _quoted(code))
    frame = parse_delimited("\n".join(lines) + "\n", "f.csv", sep)
    assert frame.index.tolist() == expected


def test_a_rejected_row_after_blank_lines_names_its_own_line():
    raw = read_labels(b"doc_id,code\n1,401.9\n\n\n2,\n")
    assert raw.rejected.line.tolist() == [5]


def test_a_quoted_title_over_two_lines_moves_the_next_rows_down():
    frame = parse_delimited(
        'doc_id,code,title\n1,401.9,"high\nblood pressure"\n2,428.0,failure\n', "f.csv", ","
    )
    assert frame.index.tolist() == [2, 4]


def test_a_header_of_50000_columns_keeps_its_row_on_line_2():
    """Its speed (counted column by column, half a minute) is in benchmarks/bench_hostile.py."""
    header = ",".join(["doc_id", "code"] + [f"c{i}" for i in range(50_000)])
    row = ",".join(["1", '"401.9"'] + ["0"] * 50_000)
    assert parse_delimited(header + "\n" + row + "\n", "wide.csv", ",").index.tolist() == [2]
