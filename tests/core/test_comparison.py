"""One comparison, computed once: its runs table (Holm), paired tests and family table (Benjamini–Hochberg) are
the core functions' own, each computed once however often it is read, with the corrections checked against
naive loops of their textbook definitions, and ``cophe compare`` printing the same object."""

from __future__ import annotations

import io
import json
import math

import numpy as np
import pandas as pd
import pytest

import cophe_core.breakdown.comparison as comparison_module
from cophe_core import score_files
from cophe_core.breakdown.comparison import FDR, MAX_RUNS, Comparison
from cophe_core.breakdown.families import family_changes
from cophe_core.breakdown.stats import HEADLINES, compare_runs, p_text, paired_significance
from cophe_core.cli import main
from tests.conftest import SAMPLE, long_csv
from tests.core.test_multirun import naive_bh, naive_holm

RUNS = ("siblings", "overcoder", "conservative")


@pytest.fixture(scope="module")
def evals():
    s = score_files(SAMPLE / "gold.csv", {r: SAMPLE / f"run_{r}.csv" for r in RUNS}, ontology="icd9")
    return {r: s.evaluation(r) for r in RUNS}


@pytest.fixture(scope="module")
def cmp(evals):
    return Comparison.of(evals, baseline="overcoder", b="conservative", n_resamples=300, seed=3)


def test_defaults_and_names_checked(evals):
    c = Comparison.of(evals)
    assert (c.baseline, c.a, c.b, c.n_resamples, c.seed) == ("siblings", "siblings", "overcoder", 1000, 0)
    assert c.family_level == "e0"  # ICD-9's category, the family the page and the report open on
    assert Comparison.of(evals, a="conservative").b == "siblings"
    with pytest.raises(ValueError, match="baseline 'nope' is not one of the runs: siblings, overcoder"):
        Comparison.of(evals, baseline="nope")
    with pytest.raises(ValueError, match="runs A and B are both 'overcoder'"):
        Comparison.of(evals, a="overcoder", b="overcoder")
    with pytest.raises(ValueError, match="two runs or more"):
        Comparison.of({"siblings": evals["siblings"]})


def test_parts_are_the_core_functions_figures(cmp, evals):
    """Every figure identical to the functions the page and the report called before."""
    pd.testing.assert_frame_equal(
        cmp.run_table, compare_runs(evals, baseline="overcoder", n_resamples=300, seed=3)
    )
    a, b = evals["overcoder"], evals["conservative"]
    pd.testing.assert_frame_equal(cmp.paired, paired_significance(a, b, n_resamples=300, seed=3))
    pd.testing.assert_frame_equal(cmp.families(), family_changes(a, b, "e0", n_resamples=300, seed=3))
    pd.testing.assert_frame_equal(
        cmp.families("block"), family_changes(a, b, "block", n_resamples=300, seed=3)
    )
    assert [v.figure for v in cmp.headline_verdicts] == list(HEADLINES)
    row = cmp.paired.set_index("figure").loc["cophe overall f1"]
    v = cmp.headline_verdicts[-1]
    assert (v.delta, v.low, v.high, v.p_value) == (row.delta, row.low, row.high, row.p_value)


def test_holm_in_the_runs_table_is_the_textbook_step_down(cmp):
    """Per figure, over the runs compared with the baseline: Holm (1979) by a naive loop."""
    t = cmp.run_table[cmp.run_table.run != cmp.baseline]
    checked = 0
    for _, rows in t.groupby("figure"):
        p = rows.p_value.tolist()
        if not any(math.isnan(x) for x in p):
            assert rows.p_holm.to_numpy() == pytest.approx(naive_holm(p))
            checked += 1
    assert checked > 20
    # a verdict counts only where the corrected p-value does, not the raw one
    said = t[t.verdict != "no clear difference"]
    assert len(said) and (said.p_holm < 0.05).all()


@pytest.mark.parametrize("level", ["e0", "block"])
def test_benjamini_hochberg_in_the_family_table_is_the_textbook_step_up(cmp, level):
    f = cmp.families(level)
    assert f.q_value.to_numpy() == pytest.approx(naive_bh(f.p_value.tolist()))
    assert (f.flagged == (f.q_value <= FDR)).all()
    assert f.flagged.any() and not f.flagged.all()


def test_each_part_is_computed_once(evals, monkeypatch):
    calls: dict[str, int] = {"runs": 0, "paired": 0, "families": 0}

    def counted(name, fn):
        def wrapper(*args, **kw):
            calls[name] += 1
            return fn(*args, **kw)

        return wrapper

    monkeypatch.setattr(comparison_module, "compare_runs", counted("runs", compare_runs))
    monkeypatch.setattr(comparison_module, "paired_significance", counted("paired", paired_significance))
    monkeypatch.setattr(comparison_module, "family_changes", counted("families", family_changes))
    c = Comparison.of(evals, n_resamples=50)
    for _ in range(3):
        c.run_table, c.paired, c.headline_verdicts, c.families(), c.families("e0"), c.to_dict()
    assert calls == {"runs": 1, "paired": 1, "families": 1}
    other = c.with_pair("siblings", "conservative")  # another pair: the runs table is shared
    other.run_table, other.paired, other.families()
    assert calls == {"runs": 1, "paired": 2, "families": 2}
    c.with_pair("siblings", "overcoder").families()  # back to the first pair: nothing computed again
    assert calls == {"runs": 1, "paired": 2, "families": 2}


def test_a_callers_store_keeps_the_parts_under_keys_naming_what_they_depend_on(evals):
    store: dict = {}

    def memo(key, compute):
        if key not in store:
            store[key] = compute()
        return store[key]

    c = Comparison.of(evals, baseline="conservative", n_resamples=50, seed=2, memo=memo)
    c.run_table, c.paired, c.families()
    assert set(store) == {
        ("runs_table", RUNS, "conservative", 50, 2),
        ("paired", "conservative", "siblings", 50, 2),
        ("family_changes", "conservative", "siblings", "e0", 50, 2),
    }
    key, compute = c.part("families", "block")  # what a caller computes ahead, in the background
    pd.testing.assert_frame_equal(compute(), c.families("block"))
    assert key in store


def test_runs_beyond_the_table_are_said_and_can_still_be_compared_in_depth():
    gold = [(f"d{i}", "401.9") for i in range(4)]
    runs = {f"r{i:02d}": long_csv(gold[: 1 + i % 4]) for i in range(MAX_RUNS + 2)}
    s = score_files(long_csv(gold), runs, ontology="icd9")
    c = Comparison.of({r: s.evaluation(r) for r in runs}, b="r11", n_resamples=20)
    assert c.runs == list(runs)[:MAX_RUNS] and c.left_out == ["r10", "r11"]
    assert set(c.run_table.run) == set(c.runs) and c.paired.b.notna().all()


def test_to_dict_is_json_without_nan(cmp):
    d = json.loads(json.dumps(cmp.to_dict(), allow_nan=False))
    assert (d["baseline"], d["a"], d["b"], d["resamples"], d["seed"]) == ("overcoder",) * 2 + (
        "conservative",
        300,
        3,
    )
    base = next(r for r in d["runs"] if r["run"] == "overcoder")
    assert base["delta"] is None and base["p_holm"] is None and base["best"] in (True, False)
    assert len(d["families"]["rows"]) == len(cmp.families()) and d["families"]["level"] == "e0"


def test_p_values_are_never_written_as_zero():
    assert [p_text(p) for p in (0.0, 1 / 1001, 0.001, 0.0494, float("nan"))] == [
        "p < 0.001",
        "p < 0.001",
        "p = 0.001",
        "p = 0.049",
        "no test",
    ]


# ------------------------------------------------------------------------------------------------ cophe compare
def run_cli(args: list[str], capsys) -> tuple[int, str, str]:
    code = main(args)
    out = capsys.readouterr()
    return code, out.out, out.err


def cli_args(*extra: str) -> list[str]:
    return [
        "compare",
        "--gold",
        str(SAMPLE / "gold.csv"),
        *(x for r in RUNS for x in ("--run", f"{r}={SAMPLE / f'run_{r}.csv'}")),
        "--bootstrap",
        "300",
        "--seed",
        "3",
        "--baseline",
        "overcoder",
        "--versus",
        "conservative",
        *extra,
    ]


def test_cli_json_is_the_comparisons(cmp, capsys):
    code, out, _ = run_cli(cli_args("--format", "json"), capsys)
    assert code == 0
    d = json.loads(out)
    assert {k: d[k] for k in ("documents", "ontology")} == {"documents": 1000, "ontology": "icd9"}
    assert {
        k: v for k, v in d.items() if k not in ("version", "documents", "ontology", "levels")
    } == json.loads(json.dumps(cmp.to_dict()))


def test_cli_csv_is_the_runs_table_and_the_families_file(cmp, capsys, tmp_path):
    families = tmp_path / "families.csv"
    code, out, _ = run_cli(cli_args("--format", "csv", "--families", str(families)), capsys)
    assert code == 0
    back = pd.read_csv(io.StringIO(out), keep_default_na=False, na_values=[""])
    assert list(back.columns) == list(cmp.run_table.columns)
    np.testing.assert_allclose(back.p_holm.to_numpy(float), cmp.run_table.p_holm.to_numpy(float))
    assert list(pd.read_csv(families, dtype={"code": str}).code) == list(cmp.families().code)


def test_cli_table_says_the_verdicts_and_never_p_zero(cmp, capsys):
    code, out, _ = run_cli(cli_args(), capsys)
    assert code == 0
    assert "every run against overcoder (p-values corrected by Holm over the runs)" in out
    for v in cmp.headline_verdicts:
        assert v.describe("overcoder", "conservative") in out
    assert "Benjamini–Hochberg" in out and f"of {len(cmp.families())} differ beyond chance" in out
    assert "< 0.001" in out and "0.000" not in out and "nan" not in out.lower()


@pytest.mark.parametrize(
    ("extra", "message"),
    [
        (["--baseline", "nope"], "baseline 'nope' is not one of the runs: siblings, overcoder, conservative"),
        (["--versus", "overcoder"], "runs A and B are both 'overcoder'"),
    ],
)
def test_cli_names_a_wrong_run(capsys, extra, message):
    code, out, err = run_cli([*cli_args(), *extra], capsys)
    assert code == 2 and out == "" and message in err


def test_cli_needs_two_distinct_runs(capsys):
    gold = str(SAMPLE / "gold.csv")
    code, _, err = run_cli(["compare", "--gold", gold, "--run", f"a={gold}"], capsys)
    assert code == 2 and "give two runs or more" in err
    code, _, err = run_cli(["compare", "--gold", gold, "--run", f"a={gold}", "--run", f"a={gold}"], capsys)
    assert code == 2 and "two runs have the same name" in err
