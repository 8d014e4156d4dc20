"""The headline table of Scores by level: one row per run, the overall figures with their 95% intervals,
the best of each column in bold, in the page's words."""

from __future__ import annotations

import re

import pytest

from cophe_core import score_files
from cophe_core.breakdown.stats import bootstrap
from tests.app.conftest import run_app, upload
from tests.conftest import long_csv

GOLD = [
    ("1", "401.9"),
    ("1", "428.0"),
    ("2", "250.00"),
    ("2", "272.4"),
    ("3", "584.9"),
    ("3", "V45.81"),
    ("4", "427.31"),
    ("4", "414.01"),
    ("5", "285.9"),
    ("6", "530.81"),
]
WRONG = ["401.1", "428.9", "250.01", "272.0", "584.5", "V45.89", "427.89", "414.00", "285.1", "530.11"]
COLUMNS = {  # shown column → (measure, statistic)
    "Exact codes (Flat) F1": ("flat", "f1"),
    "Right family (Set-based) F1": ("set_based", "f1"),
    "Right family and count (CoPHE) F1": ("cophe", "f1"),
    "Right family and count: Precision": ("cophe", "precision"),
    "Right family and count: Recall": ("cophe", "recall"),
}
INTERVALS = {
    "Exact codes (Flat) F1": ("Exact codes: 95% interval", "flat f1"),
    "Right family (Set-based) F1": ("Right family: 95% interval", "set_based overall f1"),
    "Right family and count (CoPHE) F1": ("Right family and count: 95% interval", "cophe overall f1"),
}


def run_rows(i: int) -> list[tuple[str, str]]:
    """Run i: gold codes kept, swapped for a sibling, dropped or doubled, differently for each run."""
    rows = []
    for j, (doc, code) in enumerate(GOLD):
        kind = (i + j) % 4
        if kind == 0:
            rows.append((doc, code))
        elif kind == 1:
            rows.append((doc, WRONG[j]))
        elif kind == 2 and i % 2:
            rows += [(doc, code), (doc, WRONG[j])]
        elif kind == 3 and i > 3:
            rows.append((doc, code))
    return rows


@pytest.fixture(scope="module")
def eight():
    runs = {f"model_{i}": long_csv(run_rows(i)) for i in range(8)}
    at = upload(
        run_app(), ("gold.csv", long_csv(GOLD)), [(f"{name}.csv", data) for name, data in runs.items()]
    )
    at.selectbox(key="max_level_icd9").set_value("e0").run()
    scoring = score_files(long_csv(GOLD), runs, ontology="icd9")
    return at, {name: scoring.evaluation(name, max_level="e0") for name in runs}


def bold_cells(table) -> set[tuple[int, int]]:
    """(row, column) of the cells the table's style sets in bold."""
    css = table.proto.arrow_data.styler.styles
    cells = set()
    for selectors, body in re.findall(r"([^{}]+)\{([^}]*)\}", css):
        if "font-weight: bold" in body:
            cells |= {(int(r), int(c)) for r, c in re.findall(r"_row(\d+)_col(\d+)", selectors)}
    return cells


def test_eight_runs_one_row_each_with_the_core_scores(eight):
    at, evals = eight
    assert not at.exception and not at.error
    table = at.table[0].value
    assert len(table) == 8 and list(table.Run) == list(evals)
    for _, row in table.iterrows():
        ev = evals[row.Run]
        for col, (measure, stat) in COLUMNS.items():
            assert row[col] == pytest.approx(getattr(ev.score(measure), stat)), (row.Run, col)


def test_intervals_are_the_bootstrap_percentiles(eight):
    at, evals = eight
    table = at.table[0].value.set_index("Run")
    for run, ev in evals.items():
        ci = bootstrap(ev, n_resamples=1000, seed=0).set_index("figure")
        for col, (shown, figure) in INTERVALS.items():
            low, high = ci.loc[figure, "low"], ci.loc[figure, "high"]
            assert table.loc[run, shown] == f"{low:.3f}–{high:.3f}"  # the values' intervals, not "…"
            assert low - 1e-9 <= table.loc[run, col] <= high + 1e-9


def test_the_best_value_of_each_column_is_bold(eight):
    at, _ = eight
    table = at.table[0].value
    want = set()
    for col in COLUMNS:
        j = list(table.columns).index(col)
        best = table[col].round(3).max()
        want |= {(i, j) for i, v in enumerate(table[col].round(3)) if v == best}
    assert bold_cells(at.table[0]) == want


def test_technical_terms_name_the_columns_as_papers_do():
    at = run_app(technical_terms=True)
    cols = list(at.table[0].value.columns)
    assert cols[:3] == ["Run", "Flat F1", "Flat: 95% CI"] and "CoPHE: Precision" in cols
    assert "Category (3 digits) (e0)" in set(at.dataframe[0].value.level)


def test_one_run_has_no_best_and_the_run_name_is_escaped():
    gold = long_csv([("1", "401.9")])
    at = upload(run_app(), ("gold.csv", gold), [("my_*run*.csv", long_csv([("1", "401.1")]))])
    table = at.table[0]
    assert list(table.value.Run) == ["my_*run*"] and not bold_cells(table)
    assert r"my\_\*run\*" in table.proto.arrow_data.styler.display_values.decode("latin-1", "replace")
