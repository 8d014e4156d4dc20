"""`cophe aggregate`: the file it writes, in memory or streamed, opens to the figures of `score_files`; bad
input exits 2 with one error line on stderr, no traceback and no file written."""

from __future__ import annotations

import json
import zipfile

import pandas as pd
import pytest

from cophe_core import score_files
from cophe_core.cli import main
from cophe_core.scale.aggregate_reader import read_aggregate
from tests.conftest import SAMPLE

GOLD = SAMPLE / "gold.csv"
SIBLINGS, OVERCODER = SAMPLE / "run_siblings.csv", SAMPLE / "run_overcoder.csv"
RUNS = ["siblings", "run_overcoder"]  # the second is given without NAME=: named by its file's stem


@pytest.fixture(scope="module")
def scoring():
    return score_files(GOLD, {"siblings": SIBLINGS, "run_overcoder": OVERCODER})


def aggregate(capsys, *argv: str) -> tuple[int, str, list[str]]:
    """Exit code, stdout and stderr's lines of `cophe aggregate ARGV` (argparse's own exits included)."""
    try:
        code = main(["aggregate", *argv])
    except SystemExit as e:
        code = e.code
    captured = capsys.readouterr()
    return code, captured.out, captured.err.splitlines()


def same(a: pd.DataFrame, b: pd.DataFrame) -> None:
    pd.testing.assert_frame_equal(a.reset_index(drop=True), b.reset_index(drop=True), check_dtype=False)


@pytest.mark.parametrize("streamed", [[], ["--stream", "--chunk-rows", "700"]], ids=["memory", "streamed"])
def test_the_file_opens_to_the_figures_of_score_files(tmp_path, capsys, scoring, streamed):
    out = tmp_path / "year.cophe"
    code, stdout, err = aggregate(
        capsys, "--gold", str(GOLD), "--run", f"siblings={SIBLINGS}", "--run", str(OVERCODER), "--out", str(out),
        *streamed,
    )  # fmt: skip
    assert code == 0, err
    assert not [line for line in err if "error" in line or "Traceback" in line]
    lines = stdout.splitlines()
    for run in RUNS:
        assert any(line.startswith(f"{run}: 1,000 documents") for line in lines), stdout
    assert lines[-1].startswith(f"wrote {out} (")
    agg = read_aggregate(out)
    assert agg.run_names == RUNS and agg.n_documents == 1000
    assert [s.key for s in agg.slices] == [f"codes:freq:10,100:{i}" for i in range(3)]
    for run in RUNS:
        got, want = agg.evaluation(run), scoring.evaluation(run)
        same(got.levels_table, want.levels_table)
        same(got.nodes, want.nodes)
    m = json.loads(zipfile.ZipFile(out).read("manifest.json"))
    assert m["kind"] == "aggregate" and m["format_version"] == 2
    assert m["runs"][0]["sources"] == {"gold": "gold.csv", "pred": "run_siblings.csv"}


def test_slice_edges_none_counts_no_slice(tmp_path, capsys):
    out = tmp_path / "plain.cophe"
    code, stdout, _ = aggregate(
        capsys, "--gold", str(GOLD), "--run", f"a={SIBLINGS}", "--out", str(out), "--slice-edges", "none"
    )
    assert code == 0 and "wrote" in stdout
    agg = read_aggregate(out)
    assert agg.slices == [] and agg.slice_counts == {}
    assert json.loads(zipfile.ZipFile(out).read("manifest.json"))["slices"] == {"edges": None, "keys": []}


@pytest.mark.parametrize(
    "case, said",
    [
        ("missing folder", "cophe: error: --out {out_missing}: no such folder"),
        ("same names", "cophe: error: --run: two runs have the same name"),
        ("same stems", "cophe: error: --run: two runs have the same name"),
        ("edges decreasing", "argument --slice-edges: 100,10: give increasing whole numbers"),
        ("edges zero", "argument --slice-edges: 0,10: give increasing whole numbers"),
        ("edges too many", "argument --slice-edges: 21 edges: give at most 20"),
        (
            "nothing scorable",
            "cophe: error: DIAGNOSES_ICD.csv (gold standard): none of its 3 rows can be scored",
        ),
        ("nothing scorable streamed", "cophe: error: DIAGNOSES_ICD.csv (gold standard): none of its 3 rows"),
        ("missing gold", "cophe: error: {missing}: no such file"),
        ("missing run", "cophe: error: {missing}: no such file"),
        ("missing run streamed", "cophe: error: {missing}: no such file or folder"),
    ],
)
def test_bad_input_exits_2_with_one_error_line(tmp_path, capsys, case, said):
    out, missing = tmp_path / "out.cophe", tmp_path / "nope.csv"
    mimic = tmp_path / "DIAGNOSES_ICD.csv"
    mimic.write_text("HADM_ID,ICD9_CODE\n1,4019\n1,4280\n2,5849\n")  # undotted: diagnosis or procedure?
    gold, runs, extra = str(GOLD), [f"a={SIBLINGS}"], []
    if case == "missing folder":
        out = tmp_path / "no" / "out.cophe"
    elif case == "same names":
        runs = [f"a={SIBLINGS}", f"a={OVERCODER}"]
    elif case == "same stems":
        (tmp_path / "x").mkdir()
        (tmp_path / "x" / SIBLINGS.name).write_bytes(SIBLINGS.read_bytes())
        runs = [str(SIBLINGS), str(tmp_path / "x" / SIBLINGS.name)]
    elif case.startswith("edges"):
        extra = [
            "--slice-edges",
            "100,10"
            if "decreasing" in case
            else ",".join(map(str, range(1, 22)))
            if "many" in case
            else "0,10",
        ]
    elif case.startswith("nothing scorable"):
        gold, runs = str(mimic), [f"a={mimic}"]
    elif case == "missing gold":
        gold = str(missing)
    elif case.startswith("missing run"):
        runs = [f"a={missing}"]
    if case.endswith("streamed"):
        extra = ["--stream", "--chunk-rows", "700"]
    argv = ["--gold", gold, *(x for r in runs for x in ("--run", r)), "--out", str(out), *extra]
    code, stdout, err = aggregate(capsys, *argv)
    assert code == 2 and stdout == ""
    assert not any("Traceback" in line for line in err)
    errors = [line for line in err if "error:" in line]
    assert len(errors) == 1 and err[-1] == errors[0]  # argparse's usage may come first, never after
    if not case.startswith("edges"):
        assert len(err) == 1  # cophe's own errors: that line alone
    assert said.format(out_missing=out, missing=missing) in errors[0]
    assert not out.exists()


def test_a_run_path_with_an_equals_sign_is_a_path_and_out_must_be_a_file(tmp_path, capsys):
    hive = tmp_path / "year=2024"
    hive.mkdir()
    run = hive / "preds.csv"
    run.write_bytes(SIBLINGS.read_bytes())
    out = tmp_path / "hive.cophe"
    code, stdout, _ = aggregate(capsys, "--gold", str(GOLD), "--run", str(run), "--out", str(out))
    assert code == 0 and read_aggregate(out).run_names == ["preds"]
    code, stdout, err = aggregate(capsys, "--gold", str(GOLD), "--run", str(run), "--out", str(tmp_path))
    assert code == 2 and err == [
        f"cophe: error: --out {tmp_path}: is a folder; give the path of the file to write"
    ]
