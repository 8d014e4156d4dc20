"""The command line: JSON shape, table, exported tables, exit codes."""

from __future__ import annotations

import json
import subprocess
import sys

import pandas as pd
import pytest

from cophe_core.cli import main

GOLD = "doc_id,code\n1,364.11\n1,364.24\n1,364.9\n2,401.9\n"
PRED = "doc_id,code\n1,364.11\n1,364.21\n1,364.3\n1,364.41\n2,401.1\n"
SIX = ["tp", "fp", "fn", "precision", "recall", "f1"]


@pytest.fixture
def files(tmp_path):
    g, p = tmp_path / "gold.csv", tmp_path / "pred.csv"
    g.write_text(GOLD)
    p.write_text(PRED)
    return g, p


def test_json_shape_in_a_real_process(files):
    g, p = files
    out = subprocess.run(
        [sys.executable, "-m", "cophe_core", "score", "--gold", str(g), "--pred", str(p), "--format", "json"],
        capture_output=True,
        text=True,
        check=True,
    )
    result = json.loads(out.stdout)
    assert result["ontology"] == "icd9"
    assert result["levels"] == ["e2", "e1", "e0", "block"]
    assert result["documents"] == 2
    assert list(result["flat"]) == SIX
    for measure in ("set_based", "cophe"):
        assert list(result[measure]["levels"]) == result["levels"]
        assert all(list(v) == SIX for v in result[measure]["levels"].values())
        assert list(result[measure]["overall"]) == SIX
    assert result["warnings"] == []
    # overall sums TP/FP/FN over the evaluated levels
    cophe = result["cophe"]
    assert cophe["overall"]["tp"] == sum(v["tp"] for v in cophe["levels"].values())
    # 401.9 vs 401.1: a miss at e1, a match at e0 and block
    assert cophe["levels"]["e0"] == {
        "tp": 4,
        "fp": 1,
        "fn": 0,
        "precision": 0.8,
        "recall": 1.0,
        "f1": pytest.approx(8 / 9),
    }


def test_max_level_and_exports(files, tmp_path, capsys):
    g, p = files
    nodes, docs = tmp_path / "nodes.csv", tmp_path / "docs.csv"
    assert (
        main(
            [
                "score",
                "--gold",
                str(g),
                "--pred",
                str(p),
                "--max-level",
                "chapter",
                "--format",
                "table",
                "--nodes",
                str(nodes),
                "--documents",
                str(docs),
            ]
        )
        == 0
    )
    out = capsys.readouterr().out
    assert "cophe      overall" in out and "chapter" in out
    table = pd.read_csv(nodes, dtype={"code": str})
    assert {"code", "title", "gold", "predicted", "tp", "fp", "fn", "balance", "docs_over"} <= set(
        table.columns
    )
    assert table.set_index("code").loc["364", "fp"] == 1
    assert len(pd.read_csv(docs)) == 2


@pytest.mark.parametrize(
    "args,fragment",
    [
        (["--gold", "missing.csv"], "no such file"),
        (["--max-level", "galaxy"], "unknown level 'galaxy'"),
        (["--ontology", "snomed"], "unknown ontology"),
    ],
)
def test_bad_input_exits_non_zero_with_message_on_stderr(files, capsys, args, fragment):
    g, p = files
    base = {"--gold": str(g), "--pred": str(p)}
    argv = ["score"]
    for k, v in base.items():
        if k not in args:
            argv += [k, v]
    assert main(argv + args) == 2
    err = capsys.readouterr().err
    assert err.startswith("cophe: error:") and fragment in err


def test_bad_file_content(tmp_path, files, capsys):
    _, p = files
    bad = tmp_path / "bad.csv"
    bad.write_bytes(b"\x00\x00junk")
    assert main(["score", "--gold", str(bad), "--pred", str(p)]) == 2
    assert "bad.csv: this is not a text file" in capsys.readouterr().err


def test_warnings_reach_json_and_stderr(tmp_path, files, capsys):
    g, _ = files
    p = tmp_path / "p.csv"
    p.write_text("doc_id,code\n1,4019\n1,401.9\n")
    # half the run rejected on purpose: scored with the bound lifted
    assert main(["score", "--gold", str(g), "--pred", str(p), "--format", "json", "--max-rejected", "1"]) == 0
    captured = capsys.readouterr()
    warnings = json.loads(captured.out)["warnings"]
    assert any("ambiguous" in w for w in warnings)
    assert "cophe: warning:" in captured.err


def test_ontology_choices(tmp_path, capsys):
    gold, pred = tmp_path / "g.csv", tmp_path / "p.csv"
    gold.write_text("doc_id,code\n1,I50.21\n1,I50.31\n1,I50.9\n2,0DTJ4ZZ\n")
    pred.write_text("doc_id,code\n1,I50.21\n1,I50.22\n1,I50.32\n1,I50.9\n2,0DTJ0ZZ\n")
    assert main(["score", "--gold", str(gold), "--pred", str(pred), "--format", "json"]) == 0
    captured = capsys.readouterr()
    result = json.loads(captured.out)
    assert result["ontology"] == "icd10" and "ontology icd10 detected ICD-10-CM + ICD-10-PCS" in captured.err
    assert set(result["systems"]) == {"ICD-10-CM", "ICD-10-PCS"}
    assert result["systems"]["ICD-10-CM"]["cophe"]["levels"]["e0"]["tp"] == 3
    lifted = ["--max-rejected", "1"]  # a quarter of the rows are PCS codes, rejected under icd10cm on purpose
    assert main(["score", "--gold", str(gold), "--pred", str(pred), "--ontology", "icd10cm", *lifted]) == 0
    assert "0DTJ4ZZ" in capsys.readouterr().err  # PCS codes rejected under icd10cm, and said so


def test_hierarchy_file_as_ontology(tmp_path, capsys):
    h = tmp_path / "tree.csv"
    h.write_text("child,parent\nroot,\nA,root\nB,root\na1,A\na2,A\nb1,B\n")
    gold, pred = tmp_path / "g.csv", tmp_path / "p.csv"
    gold.write_text("doc_id,code\n1,a1\n")
    pred.write_text("doc_id,code\n1,a2\n")
    assert (
        main(["score", "--gold", str(gold), "--pred", str(pred), "--ontology", str(h), "--format", "json"])
        == 0
    )
    result = json.loads(capsys.readouterr().out)
    assert result["levels"] == ["d2", "d1"]
    assert result["cophe"]["levels"]["d1"]["tp"] == 1 and result["flat"]["tp"] == 0
    bad = tmp_path / "cyc.csv"
    bad.write_text("child,parent\nr,\na,b\nb,a\n")
    assert main(["score", "--gold", str(gold), "--pred", str(pred), "--ontology", str(bad)]) == 2
    assert "cycle" in capsys.readouterr().err


def test_a_file_with_no_scorable_row_stops_and_says_what_to_pass(tmp_path, capsys):
    """MIMIC's undotted codes without --system: exit 2 and the flag to pass, not F1 = 0."""
    gold, pred = tmp_path / "DIAGNOSES_ICD.csv", tmp_path / "pred.csv"
    gold.write_text("HADM_ID,ICD9_CODE\n1,4019\n1,4280\n2,5849\n")
    pred.write_text("HADM_ID,ICD9_CODE\n1,4019\n2,5849\n")
    rejected = tmp_path / "rejected.csv"
    assert (
        main(
            [
                "score",
                "--gold",
                str(gold),
                "--pred",
                str(pred),
                "--format",
                "json",
                "--rejected",
                str(rejected),
            ]
        )
        == 2
    )
    assert rejected.read_text().count("DIAGNOSES_ICD.csv") == 3  # the rows at fault, written all the same
    captured = capsys.readouterr()
    assert captured.out == ""
    assert "DIAGNOSES_ICD.csv: none of its 3 rows can be scored" in captured.err
    assert "--system diagnosis" in captured.err
    assert (
        main(["score", "--gold", str(gold), "--pred", str(pred), "--format", "json", "--system", "diagnosis"])
        == 0
    )
    assert json.loads(capsys.readouterr().out)["flat"]["tp"] == 2


def test_output_piped_into_head_ends_quietly():
    """`cophe score … | head -1`: no BrokenPipeError traceback."""
    import subprocess
    import sys

    from tests.conftest import SAMPLE

    proc = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "cophe_core",
            "score",
            "--gold",
            str(SAMPLE / "gold.csv"),
            "--pred",
            str(SAMPLE / "run_overcoder.csv"),
            "--format",
            "json",
        ],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    proc.stdout.read(1)
    proc.stdout.close()  # the reader goes away before the output is written
    err = proc.stderr.read().decode()
    proc.wait(timeout=60)
    assert "Traceback" not in err and "BrokenPipeError" not in err


# ---------------------------------------------------------------- bad input: exit 2, one line, no traceback
def _run(capsys, *argv):
    try:
        code = main(["score", *argv])
    except SystemExit as e:  # argparse's own errors
        code = e.code
    err = capsys.readouterr().err
    return code, [line for line in err.splitlines() if "warning:" not in line]


@pytest.mark.parametrize(
    "option, value, said",
    [
        ("--bootstrap", "-5", "--bootstrap: invalid whole number ≥ 0 value: '-5'"),
        ("--seed", "-1", "--seed: invalid whole number ≥ 0 value: '-1'"),
        ("--threshold", "nan", "--threshold: invalid number from 0 to 1 value: 'nan'"),
        ("--threshold", "1.5", "--threshold: invalid number from 0 to 1 value: '1.5'"),
        ("--top-k", "-3", "--top-k: invalid whole number ≥ 1 value: '-3'"),
        ("--top-k", "0", "--top-k: invalid whole number ≥ 1 value: '0'"),
    ],
)
def test_bad_option_values_are_refused(files, capsys, option, value, said):
    g, p = files
    code, lines = _run(capsys, "--gold", str(g), "--pred", str(p), option, value)
    assert code == 2 and lines[-1].endswith(said) and not any("Traceback" in line for line in lines)


@pytest.mark.parametrize("option", ["--nodes", "--documents", "--rejected", "--save"])
def test_an_output_into_a_missing_folder_is_refused_before_any_work(files, capsys, tmp_path, option):
    g, p = files
    target = tmp_path / "missing" / "out.csv"
    code, lines = _run(capsys, "--gold", str(g), "--pred", str(p), option, str(target))
    assert code == 2 and lines == [
        f"cophe: error: {option} {target}: no folder '{target.parent}'; give a path in a folder that exists"
    ]


@pytest.mark.parametrize(
    "suffix, text, said",
    [
        ("json", "[" * 100_000 + "]" * 100_000, "deep.json: JSON nested too deeply to read"),
        (
            "jsonl",
            '{"doc_id": "1", "codes": ["401.9"]}\n' + "[" * 100_000 + "]" * 100_000 + "\n",
            "deep.jsonl, line 2: JSON nested too deeply to read",
        ),
    ],
)
def test_deeply_nested_json_is_an_input_error(files, capsys, tmp_path, suffix, text, said):
    g, _ = files
    deep = tmp_path / f"deep.{suffix}"
    deep.write_text(text)
    code, lines = _run(capsys, "--gold", str(g), "--pred", str(deep))
    assert code == 2 and len(lines) == 1 and said in lines[0]


def test_an_unexpected_error_is_one_line_unless_debugging(files, capsys, monkeypatch):
    g, p = files

    def broken(*args, **kwargs):
        raise RuntimeError("boom " + "x" * 5000)

    monkeypatch.setattr("cophe_core.cli.score_labels", broken)
    code, lines = _run(capsys, "--gold", str(g), "--pred", str(p))
    assert code == 2 and len(lines) == 1
    assert lines[0].startswith("cophe: error: unexpected RuntimeError: boom xxx") and "--debug" in lines[0]
    assert len(lines[0]) < 400  # the message is an excerpt
    with pytest.raises(RuntimeError, match="boom"):
        main(["score", "--gold", str(g), "--pred", str(p), "--debug"])


def test_memory_exhaustion_is_one_line(files, capsys, monkeypatch):
    g, p = files

    def exhausted(*args, **kwargs):
        raise MemoryError

    monkeypatch.setattr("cophe_core.cli.score_labels", exhausted)
    code, lines = _run(capsys, "--gold", str(g), "--pred", str(p))
    assert code == 2 and lines == [
        "cophe: error: out of memory reading or scoring the inputs; split them, or "
        "score on a machine with more memory"
    ]


def test_an_ontology_path_that_is_not_a_hierarchy_file_is_not_read(files, capsys, tmp_path):
    """Its error must not quote the file: --ontology /etc/hostname used to echo the machine's name."""
    g, p = files
    secret = tmp_path / "notes.txt"
    secret.write_text("password=hunter2,x\nsecond line\n")
    code, lines = _run(capsys, "--gold", str(g), "--pred", str(p), "--ontology", str(secret))
    assert code == 2 and lines == [
        "cophe: error: notes.txt: not a hierarchy file; give a .csv file of "
        "child,parent[,title] rows or the .json hierarchy of the CoPHE paper"
    ]


CODIESP_GOLD = (
    "S0004-06142005000700014-1\tq64.4\nS0004-06142005000700014-1\tr69\nS0004-06142005000700014-1\tq64.4\n"
)
CODIESP_RUN = "S0004-06142005000700014-1\tq64.4\nS0004-06142005000700014-1\tn20.0\n"


def test_headerless_shared_task_files_are_scored_and_the_flags_override(tmp_path, capsys):
    g, p = tmp_path / "gold.tsv", tmp_path / "run.tsv"
    g.write_text(CODIESP_GOLD)
    p.write_text(CODIESP_RUN)
    # gold {q64.4, r69} (q64.4 twice), run {q64.4, n20.0}: TP 1, FP 1, FN 1, F1 = 2/(2+1+1) = 1/2
    assert main(["score", "--gold", str(g), "--pred", str(p), "--format", "json"]) == 0
    flat = json.loads(capsys.readouterr().out)["flat"]
    assert (flat["tp"], flat["fp"], flat["fn"], flat["f1"]) == (1, 1, 1, 0.5)
    # --header: the first row names the columns, which then lack a document id column
    assert main(["score", "--gold", str(g), "--pred", str(p), "--header"]) == 2
    assert "gold.tsv: cannot find the document id column" in capsys.readouterr().err
    # a first row that is neither column names nor a code: one message naming both options
    g.write_text("case\tdiagnosis\n" + CODIESP_GOLD)
    assert main(["score", "--gold", str(g), "--pred", str(p)]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and err[0].startswith("cophe: error: gold.tsv, line 1: cannot tell whether")
    assert "pass --no-header" in err[0] and "pass --header" in err[0]
    # --no-header: read as data ('diagnosis' of case 'case' is then a rejected row, on line 1)
    rejected = tmp_path / "rejected.csv"
    args = ["score", "--gold", str(g), "--pred", str(p), "--no-header", "--rejected", str(rejected)]
    args += ["--max-rejected", "1"]  # the header row read as data is rejected on purpose
    assert main([*args, "--format", "json"]) == 0
    assert json.loads(capsys.readouterr().out)["flat"]["tp"] == 1
    assert pd.read_csv(rejected)[["file", "line", "value"]].values.tolist() == [["gold.tsv", 1, "diagnosis"]]
    # cophe aggregate takes the same options
    out = tmp_path / "a.cophe"
    assert main(["aggregate", "--gold", str(g), "--run", f"A={p}", "--out", str(out)]) == 2
    assert "--no-header" in capsys.readouterr().err
    aggregate = ["aggregate", "--gold", str(g), "--run", f"A={p}", "--out", str(out), "--no-header"]
    assert main([*aggregate, "--max-rejected", "1"]) == 0
    assert out.is_file()


def test_the_table_keeps_its_columns_for_long_level_names(tmp_path, capsys):
    """ICD-10-PCS's levels (body_system) are longer than the level column was: every row's figures moved."""
    gold = tmp_path / "g.tsv"
    gold.write_text("S1\t0bh1\nS2\t5a19\n")
    assert main(["score", "--gold", str(gold), "--pred", str(gold)]) == 0
    table = [
        line for line in capsys.readouterr().out.splitlines() if line.startswith(("measure", "flat", "cophe"))
    ]
    assert len(table) > 5 and len({len(line) for line in table}) == 1  # every row ends at the F1 column


@pytest.mark.parametrize("command", ["score", "compare", "aggregate", "figure", "report", "dashboard"])
def test_help_prints_a_percent_sign_as_one(command, capsys):
    """argparse formats an option's help with %, but a description only when it names %(prog)s: a '%%' in a
    description was printed as written."""
    with pytest.raises(SystemExit):
        main([command, "--help"])
    said = capsys.readouterr().out
    assert "%%" not in said and "%(" not in said


def test_the_streamed_command_lets_its_process_reuse_freed_memory(monkeypatch, capsys):
    """`cophe score --stream` asks glibc (where it runs) to keep the blocks it frees for reuse, and the
    in-memory command leaves the allocator alone; the figures are the same either way."""
    import ctypes

    import cophe_core.cli as cli

    calls: list[tuple[int, int]] = []

    class Libc:
        def mallopt(self, param: int, value: int) -> int:
            calls.append((param, value))
            return 1

    monkeypatch.setattr(ctypes, "CDLL", lambda name: Libc())
    gold, pred = "sample_data/icd9/gold.csv", "sample_data/icd9/run_siblings.csv"
    assert main(["score", "--gold", gold, "--pred", pred, "--format", "json"]) == 0
    assert calls == []
    in_memory = json.loads(capsys.readouterr().out)["cophe"]["overall"]
    assert main(["score", "--gold", gold, "--pred", pred, "--format", "json", "--stream"]) == 0
    assert calls == [(-3, 32 << 20), (-1, 1 << 30)]  # M_MMAP_THRESHOLD 32 MB, M_TRIM_THRESHOLD 1 GB
    assert json.loads(capsys.readouterr().out)["cophe"]["overall"] == in_memory
    assert cli._keep_freed_memory()
