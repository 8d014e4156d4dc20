"""A bound on rows not scored (issue 24): a file too much of which cannot be scored gets no score, exit 2 and
a message naming it, its main reasons with an example line each, and the fix; the JSON counts each file's
rows. The bound is the same on every path: in memory, streamed, ``cophe aggregate`` and the library."""

from __future__ import annotations

import json
from pathlib import Path

import pandas as pd
import pytest
from hypothesis import given
from hypothesis import strategies as st

from cophe_core.api import score_files
from cophe_core.cli import main
from cophe_core.scoring.labels import FileRows, RowBound, TooManyRejected
from tests.conftest import SAMPLE

ICD9 = SAMPLE


def _undotted(src: Path, dst: Path) -> Path:
    """A sample file with its dots removed: MIMIC's form, diagnoses and procedures mixed."""
    frame = pd.read_csv(src, dtype=str, keep_default_na=False)
    frame["code"] = frame["code"].str.replace(".", "", regex=False)
    frame.to_csv(dst, index=False)
    return dst


@pytest.fixture
def undotted(tmp_path):
    return (
        _undotted(ICD9 / "gold.csv", tmp_path / "gold.csv"),
        _undotted(ICD9 / "run_overcoder.csv", tmp_path / "run_overcoder.csv"),
    )


def _score(capsys, *argv: str) -> tuple[int, str, str]:
    code = main(["score", *argv])
    out = capsys.readouterr()
    return code, out.out, out.err


def test_the_undotted_sample_is_refused_with_the_system_to_name(undotted, capsys):
    gold, run = undotted
    code, out, err = _score(capsys, "--gold", str(gold), "--pred", str(run))
    assert code == 2 and out == ""  # no table: nothing to paste into a paper
    n_gold = len(pd.read_csv(gold, dtype=str))
    assert f"gold.csv: 7,200 of its {n_gold:,} rows (45.0%) cannot be scored" in err
    assert "gold.csv:2, value '8820'" in err  # an example line: file:line and value
    assert "run_overcoder.csv:" in err  # every refused file is named
    assert "--system diagnosis" in err and "--max-rejected 0.5" in err


def test_naming_the_system_scores_it(undotted, capsys):
    gold, run = undotted
    code, out, _ = _score(capsys, "--gold", str(gold), "--pred", str(run), "--system", "diagnosis")
    assert code == 0 and "cophe      overall" in out


def test_a_larger_share_scores_anyway_and_the_json_counts_the_rows(undotted, tmp_path, capsys):
    gold, run = undotted
    rejected = tmp_path / "rejected.csv"
    argv = ["--gold", str(gold), "--pred", str(run), "--max-rejected", "0.5", "--format", "json"]
    code, out, _ = _score(capsys, *argv, "--rejected", str(rejected))
    assert code == 0
    result = json.loads(out)
    assert round(result["cophe"]["overall"]["f1"], 3) == 0.722  # the figure the issue quotes
    listed = pd.read_csv(rejected, dtype=str).file.value_counts()
    for path in (gold, run):
        frame = pd.read_csv(path, dtype=str)
        rows = result["rows"][path.name]
        assert rows["given"] == len(frame)
        assert rows["rejected"] == listed[path.name]
        assert rows["scored"] == len(frame) - listed[path.name]
        assert rows["duplicates"] == 0


def test_collapsed_duplicates_are_scored_and_counted(tmp_path, capsys):
    gold, pred = tmp_path / "g.csv", tmp_path / "p.csv"
    gold.write_text("doc_id,code\n1,401.9\n1,401.9\n2,428.0\n")
    pred.write_text("doc_id,code\n1,401.9\n")
    code, out, _ = _score(capsys, "--gold", str(gold), "--pred", str(pred), "--format", "json")
    assert code == 0
    assert json.loads(out)["rows"]["g.csv"] == {"given": 3, "scored": 3, "rejected": 0, "duplicates": 1}


def _hundred(tmp_path: Path, bad: int) -> tuple[Path, Path]:
    """A gold standard of 100 rows, ``bad`` of them not codes, and a clean run."""
    rows = pd.read_csv(ICD9 / "gold.csv", dtype=str).drop_duplicates().head(100 - bad)
    junk = pd.DataFrame({"doc_id": ["D100001"] * bad, "code": [f"XYZ{i}" for i in range(bad)]})
    gold, pred = tmp_path / f"gold{bad}.csv", tmp_path / "pred.csv"
    pd.concat([rows, junk]).to_csv(gold, index=False)
    rows.to_csv(pred, index=False)
    return gold, pred


@pytest.mark.parametrize("stream", [[], ["--stream"]])
def test_the_bound_holds_at_exactly_one_percent(tmp_path, capsys, stream):
    gold, pred = _hundred(tmp_path, 1)
    assert _score(capsys, "--gold", str(gold), "--pred", str(pred), *stream)[0] == 0
    gold, pred = _hundred(tmp_path, 2)
    code, _, err = _score(capsys, "--gold", str(gold), "--pred", str(pred), *stream)
    assert code == 2 and "gold2.csv: 2 of its 100 rows (2.0%)" in err and "--max-rejected 0.02" in err
    assert "gold2.csv:100, value 'XYZ0'" in err
    assert _score(capsys, "--gold", str(gold), "--pred", str(pred), "--max-rejected", "0.02", *stream)[0] == 0


@given(st.integers(1, 1000), st.integers(0, 1000), st.integers(0, 100))
def test_a_file_is_refused_when_its_share_is_over_the_bound(n, k, percent):
    k = min(k, n)
    bound = RowBound.lifted(percent / 100)
    assert bound.refuses(FileRows("f", n, k)) == (k * 100 > percent * n)  # integers: exact


def test_one_undotted_code_asks_for_the_system_whatever_the_share(tmp_path, capsys):
    rows = pd.read_csv(ICD9 / "gold.csv", dtype=str).drop_duplicates()
    # dotted diagnoses: a category (428) would read undotted too, a procedure not as a diagnosis
    rows = rows[rows.code.str.match(r"^\d{3}\.")].head(300)
    gold, pred = tmp_path / "g.csv", tmp_path / "p.csv"
    rows.to_csv(pred, index=False)
    pd.concat([rows, pd.DataFrame({"doc_id": ["D100001"], "code": ["4019"]})]).to_csv(gold, index=False)
    code, _, err = _score(capsys, "--gold", str(gold), "--pred", str(pred))  # 1 of 301 rows: 0.3%
    assert code == 2 and "g.csv:302, value '4019'" in err and "--system diagnosis" in err
    assert _score(capsys, "--gold", str(gold), "--pred", str(pred), "--system", "diagnosis")[0] == 0


def test_streamed_scoring_refuses_and_counts_alike(undotted, capsys):
    gold, run = undotted
    code, out, err = _score(capsys, "--gold", str(gold), "--pred", str(run), "--stream")
    assert code == 2 and out == "" and "--system diagnosis" in err and "gold.csv:2, value '8820'" in err
    argv = ["--gold", str(gold), "--pred", str(run), "--max-rejected", "0.5", "--format", "json"]
    streamed = json.loads(_score(capsys, *argv, "--stream")[1])
    assert streamed["rows"] == json.loads(_score(capsys, *argv)[1])["rows"]


def test_aggregate_refuses_a_bad_run_and_writes_nothing(undotted, tmp_path, capsys):
    good, junk = ICD9 / "run_siblings.csv", _junk_run(tmp_path)
    out = tmp_path / "a.cophe"
    runs = ["--run", f"good={good}", "--run", f"bad={junk}"]
    for stream in ([], ["--stream"]):  # the good run alone would be scored: the file would lack one asked for
        code = main(["aggregate", "--gold", str(ICD9 / "gold.csv"), *runs, "--out", str(out), *stream])
        err = capsys.readouterr().err
        assert code == 2 and not out.exists() and "junk.csv: 1,111 of its 22,219 rows (5.0%)" in err
        assert "--max-rejected 0.1" in err and "junk.csv:2, value 'XYZ'" in err
    gold, bad = undotted
    runs = ["--run", f"good={good}", "--run", f"bad={bad}"]
    argv = ["aggregate", "--gold", str(gold), *runs, "--out", str(out), "--max-rejected", "0.5"]
    assert main(argv) == 0 and out.exists()
    assert main([*argv, "--stream"]) == 0


def _junk_run(tmp_path: Path) -> Path:
    """The overcoder run with one code in 20 replaced by junk, and documents of its own."""
    run = pd.read_csv(ICD9 / "run_overcoder.csv", dtype=str)
    run.loc[::20, "code"] = "XYZ"
    run["doc_id"] = run["doc_id"].str.replace("D1", "E1")  # a run's own documents widen the evaluated set
    run.to_csv(tmp_path / "junk.csv", index=False)
    return tmp_path / "junk.csv"


def test_the_library_keeps_the_good_runs_beside_a_bad_one(tmp_path):
    bad = _junk_run(tmp_path)
    gold, good = ICD9 / "gold.csv", ICD9 / "run_siblings.csv"
    both = score_files(gold, {"good": good, "bad": bad}, bound=RowBound())
    assert both.run_names == ["good"] and list(both.refused) == ["bad"]
    refused = both.refused["bad"]
    n_junk = len(range(0, len(pd.read_csv(bad)), 20))
    assert isinstance(refused, TooManyRejected) and not refused.needs_system and refused.run == "bad"
    assert refused.rows is not None and refused.rows.rejected == len(refused.rejected) == n_junk
    alone = score_files(gold, {"good": good})
    assert both.evaluation("good").to_dict() == alone.evaluation("good").to_dict()
    assert both.corpus.docs.tolist() == alone.corpus.docs.tolist()  # not the bad run's documents
    with pytest.raises(TooManyRejected, match=f"junk.csv: {n_junk:,} of its"):  # every run refused
        score_files(gold, {"bad": bad}, bound=RowBound())
