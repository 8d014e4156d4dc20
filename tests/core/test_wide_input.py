"""Very wide input (issue 24, point 7): a header, a row or a line of delimiters wider than
:data:`cophe_core.base.files.MAX_COLUMNS` is refused before pandas builds its columns, with the file, the line, the
field count and the limit; a score matrix of one column per code (Edin et al.; MIMIC-III-full has 8,921 codes)
is still read and scored. Speed is measured in ``benchmarks/bench_hostile.py``, not asserted here."""

from __future__ import annotations

import re

import pytest

from cophe_core import InputError, read_labels, score_files
from cophe_core.base import files as files_module
from cophe_core.base.files import MAX_COLUMNS, check_width, pick_column
from cophe_core.breakdown.documents import read_notes
from cophe_core.cli import main
from cophe_core.inputs.readers import read_input, read_scores
from cophe_core.scale.pipeline import score_dataset

LIMIT = 50  # a lowered limit, so each shape is tested small


def _wide_header(n: int, sep: str = ",") -> bytes:
    return (
        sep.join(["doc_id", "code"] + [f"c{i}" for i in range(n - 2)]) + "\n1\t401.9\n".replace("\t", sep)
    ).encode()


def _long_row(n: int, sep: str = ",") -> bytes:
    """A header of two columns, then a row of ``n`` fields."""
    return f"doc_id{sep}code\n1{sep}401.9\n2{sep}428.0{sep * (n - 2)}\n".encode()


SHAPES = {
    "header": lambda n, sep: _wide_header(n, sep),
    "one-line row": lambda n, sep: (sep.join(["1", "401.9"] + ["x"] * (n - 2)) + "\n").encode(),
    "delimiters": lambda n, sep: (sep * (n - 1)).encode(),
}


@pytest.fixture
def low_limit(monkeypatch):
    monkeypatch.setattr(files_module, "MAX_COLUMNS", LIMIT)


# a file of nothing but tabs is empty (whitespace), refused as such; a line of commas is not
CASES = [(shape, sep, ext) for shape in sorted(SHAPES) for sep, ext in ((",", "csv"), ("\t", "tsv"))]
CASES.remove(("delimiters", "\t", "tsv"))


@pytest.mark.parametrize("shape, sep, ext", CASES)
@pytest.mark.parametrize("role", ["gold", "run"])
def test_a_line_wider_than_the_limit_is_refused_naming_file_line_and_count(low_limit, shape, sep, ext, role):
    data = SHAPES[shape](LIMIT + 1, sep)
    name = f"{role}.{ext}"
    read = read_labels if role == "gold" else read_input
    with pytest.raises(InputError) as e:
        read(data, name=name)
    message = str(e.value)
    assert message.startswith(f"{name}, line 1: {LIMIT + 1} fields; cophe reads at most {LIMIT} columns")
    assert ("tab" if sep == "\t" else "comma") in message


def test_a_notes_file_wider_than_the_limit_is_refused(low_limit, monkeypatch):
    monkeypatch.setattr(
        "cophe_core.breakdown.documents.MAX_NOTE_COLUMNS", LIMIT
    )  # notes have a bound of their own
    with pytest.raises(InputError, match=r"^notes\.csv, line 1: 51 fields; cophe reads at most 50 columns"):
        read_notes(b"," * LIMIT + b"\n", name="notes.csv")
    assert read_notes(b"doc_id,text\n1,a note\n", name="notes.csv") == {"1": "a note"}


@pytest.mark.parametrize("role", ["gold", "run"])
def test_a_header_at_the_limit_is_read(low_limit, role):
    read = read_labels if role == "gold" else read_input
    raw = read(_wide_header(LIMIT), name="w.csv")
    assert raw.pairs[["doc_id", "code", "line"]].values.tolist() == [["1", "401.9", 2]]


def test_the_line_named_is_the_headers_after_blank_lines(low_limit):
    with pytest.raises(InputError, match=r"^gold\.tsv, line 3: 51 fields"):
        read_labels(b"\n  \n" + _wide_header(LIMIT + 1, "\t"), name="gold.tsv")


def test_a_tsv_header_of_tabs_only_is_not_skipped_as_blank():
    """In TSV a tab separates fields: a line of tabs is a header of empty names, not a blank line."""
    with pytest.raises(InputError, match=r"^x\.tsv, line 2: 5 fields"):
        check_width(" \n\t\t\t\t\n", "x.tsv", "\t", limit=4)
    check_width(" \n\t\t\t\t\n", "x.csv", ",", limit=4)  # in CSV, the same line is blank


def test_a_row_longer_than_its_header_is_still_the_parsers_error(low_limit):
    with pytest.raises(InputError, match="(more fields than the header|fields where the header has)"):
        read_labels(_long_row(LIMIT + 10), name="gold.csv")


def test_a_ten_megabyte_line_of_commas_is_refused():
    """The real size, at the real limit: it ran for more than 300 s before, and ended on another error."""
    n = 10 * 2**20
    for read in (read_labels, read_input):
        with pytest.raises(InputError) as e:
            read(b"," * n, name="gold.csv")
        assert str(e.value).startswith(
            f"gold.csv, line 1: {n + 1:,} fields; cophe reads at most {MAX_COLUMNS:,} columns"
        )


def test_a_million_column_header_is_refused_in_memory_and_streamed(tmp_path, capsys):
    wide = tmp_path / "wide.tsv"
    wide.write_bytes(_wide_header(1_000_000, "\t"))
    pred = tmp_path / "pred.csv"
    pred.write_bytes(b"doc_id,code\n1,401.9\n")
    expected = f"wide.tsv, line 1: 1,000,000 fields; cophe reads at most {MAX_COLUMNS:,} columns"
    for args in (["--gold", str(wide), "--pred", str(pred)], ["--gold", str(pred), "--pred", str(wide)]):
        for stream in ([], ["--stream"]):
            assert main(["score", *args, *stream]) == 2
            err = capsys.readouterr().err
            assert err.startswith(f"cophe: error: {expected}"), err[:300]
    with pytest.raises(InputError, match=re.escape(expected)):
        score_dataset(wide, pred, ontology="icd9")


def test_a_streamed_header_after_blank_lines_is_named_by_its_line(tmp_path):
    wide = tmp_path / "wide.csv"
    wide.write_bytes(b"\n\n" + _wide_header(MAX_COLUMNS + 1))
    with pytest.raises(
        InputError, match=rf"^wide\.csv \(gold standard\), line 3: {MAX_COLUMNS + 1:,} fields"
    ):
        score_dataset(wide, wide, ontology="icd9")


def test_a_message_lists_a_few_columns_then_how_many_more():
    columns = [f"c{i}" for i in range(1000)]
    with pytest.raises(InputError) as e:
        pick_column(columns, None, ("doc_id",), "document id", "w.csv")
    assert "c11 and 988 more" in str(e.value) and "c12" not in str(e.value)
    with pytest.raises(InputError, match=r"the columns are c0, c1, .*c11 and 988 more"):
        pick_column(columns, "doc_id", ("doc_id",), "document id", "w.csv")


def test_a_score_matrix_of_nine_thousand_codes_is_read_and_scored(icd9):
    """One column per code, as Edin et al. store scores: MIMIC-III-full's 8,921 codes and more."""
    codes = [c for c in icd9.codes if re.fullmatch(r"\d{3}\.\d\d?", c)][:9000]
    assert len(codes) == 9000
    docs = [f"d{i}" for i in range(12)]
    chosen = {d: [codes[i * 701], codes[i * 701 + 350]] for i, d in enumerate(docs)}
    low = {d: codes[(i * 701 + 5000) % 9000] for i, d in enumerate(docs)}
    lines = [",".join(["_id", *codes])]
    for d in docs:
        cell = dict.fromkeys(chosen[d], "0.9") | {low[d]: "0.2"}
        lines.append(",".join([d, *(cell.get(c, "0") for c in codes)]))
    matrix = ("\n".join(lines) + "\n").encode()

    raw = read_scores(matrix, name="scores.csv")
    expected = {(d, c, 0.9) for d in docs for c in chosen[d]} | {(d, low[d], 0.2) for d in docs}
    assert set(zip(raw.pairs.doc_id, raw.pairs.code, raw.pairs.score)) == expected
    assert len(raw.rejected) == 0

    gold = "doc_id,code\n" + "".join(f"{d},{c}\n" for d in docs for c in chosen[d])
    s = score_files(gold.encode(), {"A": matrix}, ontology="icd9", threshold=0.5)
    flat = s.evaluation("A").score("flat", "leaf")
    assert (flat.tp, flat.fp, flat.fn) == (24, 0, 0)
