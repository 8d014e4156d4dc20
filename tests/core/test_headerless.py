"""Files without column names (SPEC §5, shared-task files): the CodiEsp / CLEF eHealth two-column TSV,
``case_id<TAB>code`` with lowercase codes and repeated (case, code) rows, read with its first row as data.
The decision is taken from the first row (readers.headerless_columns) and can be overridden (``header``)."""

from __future__ import annotations

import io

import pytest

from cophe_core import InputError, read_input, read_labels, score_files
from cophe_core.inputs.readers import HeaderUnclear, read_scores
from cophe_core.output.analysis import Analysis, InputFile, read_analysis, score_analysis, write_analysis
from cophe_core.scale.pipeline import score_dataset
from cophe_core.scoring.labels import TooManyRejected

A, B, C = "S0004-06142005000700014-1", "S0211-69952009000500014-1", "S1130-01082008000600014-1"
OUTSIDE = "S9999-00000000000000000-1"  # a case the gold standard does not hold

# One row per mention, as the task distributes them: the same (case, code) repeats.
GOLD = "".join(
    f"{case}\t{code}\n"
    for case, code in [
        (A, "q64.4"),
        (A, "r69"),
        (A, "q64.4"),  # a second mention of the same code
        (A, "n28.9"),
        (B, "w19.xxx"),  # placeholder x, as the task writes it
        (B, "s72.001a"),
        (B, "w19.xxx"),
        (C, "k80.20"),
    ]
)
RUN = "".join(
    f"{case}\t{code}\n"
    for case, code in [
        (A, "q64.4"),
        (A, "r69"),
        (A, "r69"),
        (A, "n20.0"),
        (B, "w19.xxx"),
        (B, "s72.002a"),
        (C, "k80.20"),
        (OUTSIDE, "e11.9"),
    ]
)


def named(text: str, name: str) -> io.BytesIO:
    stream = io.BytesIO(text.encode())
    stream.name = name
    return stream


def test_a_codiesp_gold_standard_and_run_are_scored_flat_micro_f1_by_hand():
    # Distinct (case, code) pairs. Gold: A {q64.4, r69, n28.9}, B {w19.xxx, s72.001a}, C {k80.20}: 6.
    # Run: A {q64.4, r69, n20.0}, B {w19.xxx, s72.002a}, C {k80.20}, and e11.9 for a case outside the gold
    # standard, a false positive as the task's scorer counts it: 7.
    # TP = q64.4, r69, w19.xxx, k80.20 = 4; FP = 7 - 4 = 3; FN = 6 - 4 = 2 (n28.9, s72.001a).
    # P = 4/7, R = 4/6, F1 = 2·4 / (2·4 + 3 + 2) = 8/13.
    ev = score_files(named(GOLD, "gold.tsv"), {"run": named(RUN, "run.tsv")}).evaluation("run")
    flat = ev.score("flat")
    assert (flat.tp, flat.fp, flat.fn) == (4, 3, 2)
    assert flat.precision == pytest.approx(4 / 7)
    assert flat.recall == pytest.approx(4 / 6)
    assert flat.f1 == pytest.approx(8 / 13)
    # the same from a naive set formulation of the pairs, lowercased and deduplicated
    pairs = [{tuple(line.lower().split("\t")) for line in text.splitlines() if line} for text in (GOLD, RUN)]
    tp = len(pairs[0] & pairs[1])
    assert 2 * tp / (len(pairs[0]) + len(pairs[1])) == pytest.approx(flat.f1)


def test_the_first_row_is_data_on_line_1_and_later_rows_keep_their_lines():
    raw = read_labels(named(f"{A}\tq64.4\n{A}\t\n\n{B}\tw19.xxx\n", "gold.tsv"))
    assert raw.pairs.values.tolist() == [[A, "q64.4", 1], [B, "w19.xxx", 4]]
    assert raw.rejected[["line", "kind"]].values.tolist() == [[2, "empty_code"]]


@pytest.mark.parametrize("sep,name", [("\t", "gold.tsv"), (",", "gold.csv")])
def test_rejected_rows_of_a_headerless_file_name_their_own_lines(sep, name):
    gold = f"{A}{sep}q64.4\n{A}{sep}zz9\n{B}{sep}w19.xxx\n"
    run = f"{A}{sep}q64.4\n"
    s = score_files(named(gold, name), {"run": named(run, "run" + name[-4:])})
    rejected = s.corpus.rejected
    assert rejected[["file", "line", "value"]].values.tolist() == [[name, 2, "zz9"]]


def test_a_streamed_headerless_file_reads_as_the_whole_file_does(tmp_path):
    (tmp_path / "gold.tsv").write_text(GOLD + f"{C}\tzz9\n")
    (tmp_path / "run.tsv").write_text(RUN)
    ev = score_dataset(tmp_path / "gold.tsv", tmp_path / "run.tsv", chunk_rows=2)
    flat = ev.score("flat")
    assert (flat.tp, flat.fp, flat.fn) == (4, 3, 2)
    assert ev.rejected[["line", "value"]].values.tolist() == [[9, "zz9"]]  # the ninth row, on line 9


def test_three_columns_without_names_are_a_long_scores_file():
    raw = read_scores(named("1,401.9,0.8\n1,428.0,0.3\n", "run.csv"))
    assert raw.pairs[["doc_id", "code", "line", "score"]].values.tolist() == [
        ["1", "401.9", 1, 0.8],
        ["1", "428.0", 2, 0.3],
    ]


@pytest.mark.parametrize("header", [None, True])
@pytest.mark.parametrize(
    "text,names,pairs",
    [
        ("doc_id\tcode\nS1\tq64.4\n", {}, [["S1", "q64.4", 2]]),
        ("HADM_ID,ICD9_CODE\n1,4019\n", {}, [["1", "4019", 2]]),
        ("case,code\nS1,q64.4\n", {"doc_col": "case"}, [["S1", "q64.4", 2]]),  # one known name is enough
        ("case\tdx\nS1\tq64.4\n", {"doc_col": "case", "code_col": "dx"}, [["S1", "q64.4", 2]]),  # named
    ],
)
def test_a_file_with_a_header_is_still_read_with_it(text, names, pairs, header):
    raw = read_labels(named(text, "gold.csv"), header=header, **names)
    assert raw.pairs.values.tolist() == pairs


def test_a_known_id_column_beside_a_code_named_column_is_a_header():
    # a score matrix of one code: its second column name looks like a code, its first is a known id column
    raw = read_input(named("_id,401.9\n1,0.9\n2,0.2\n", "run.csv"), header=None)
    assert raw.pairs[["doc_id", "code", "score"]].values.tolist() == [
        ["1", "401.9", 0.9],
        ["2", "401.9", 0.2],
    ]


def test_no_header_reads_a_first_row_detection_would_take_for_names():
    raw = read_labels(named("a\tb\nS1\tq64.4\n", "gold.tsv"), header=False)
    assert raw.pairs.values.tolist() == [["a", "b", 1], ["S1", "q64.4", 2]]


def test_header_reads_a_first_row_detection_would_take_for_data():
    with pytest.raises(InputError, match="cannot find the document id column"):
        read_labels(named(GOLD, "gold.tsv"), header=True)
    raw = read_labels(named(f"case\tcode\n{GOLD}", "gold.tsv"), header=True, doc_col="case")
    assert raw.pairs.line.tolist()[:2] == [2, 3]


def test_headerless_columns_take_the_names_given():
    raw = read_labels(named(f"{A}\tq64.4\n", "gold.tsv"), doc_col="case", code_col="icd10")
    assert raw.pairs.values.tolist() == [[A, "q64.4", 1]]


def test_an_undecidable_first_row_is_one_message_naming_the_options():
    with pytest.raises(HeaderUnclear) as e:
        read_labels(named("\ncase\tdiagnosis\nS1\tq64.4\n", "gold.tsv"))
    message = str(e.value)
    assert message.startswith("gold.tsv, line 2: cannot tell whether the first row")
    assert "'diagnosis' is neither a column name cophe knows nor a code" in message
    assert "--no-header" in message and "pass --header" in message
    assert isinstance(e.value, InputError)
    assert e.value.words("dashboard").endswith(
        'If the row is data, tick "First row is data" beside the uploads; if it names the columns, type the '
        "names of its document id and code columns under Reading options."
    )


def test_no_header_on_a_file_of_other_than_two_or_three_columns_is_refused():
    with pytest.raises(
        InputError, match=r"gold.csv, line 1: read with its first row as data, but the row has 4"
    ):
        read_labels(named("1,401.9,x,y\n", "gold.csv"), header=False)


def test_a_saved_analysis_keeps_the_header_option():
    gold, run = InputFile("a.tsv", b"case\tdiagnosis\nS1\tq64.4\n"), InputFile("b.tsv", b"S1\tq64.4\n")
    with pytest.raises(HeaderUnclear):
        score_analysis(Analysis(gold, {"A": run}))
    # the first row read as data: "diagnosis", case "case"'s code, is rejected, 1 row in 2, over the row bound
    misread = read_analysis(write_analysis(Analysis(gold, {"A": run}, options={"header": False})))
    assert misread.options["header"] is False
    with pytest.raises(TooManyRejected):
        score_analysis(misread)
    options = {"header": False, "score_anyway": True}
    analysis = read_analysis(write_analysis(Analysis(gold, {"A": run}, options=options)))
    flat = score_analysis(analysis).evaluation("A").score("flat")
    assert (flat.tp, flat.fp, flat.fn) == (1, 0, 0)
    with pytest.raises(ValueError, match="options: header must be true, false or null, not 'no'"):
        Analysis(gold, {"A": run}, options={"header": "no"})


@pytest.mark.parametrize("code", ["q64.4", "r69", "w19.xxx", "e11.9", "V45.81", "4019", "0dtj4zz", "e849.0"])
def test_a_first_row_whose_second_field_is_a_code_of_any_system_is_data(code):
    raw = read_labels(named(f"case 1,{code}\ncase 2,{code}\n", "gold.csv"))
    assert raw.pairs.values.tolist() == [["case 1", code, 1], ["case 2", code, 2]]
