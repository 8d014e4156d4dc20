"""The comparison report says what the Compare page says: the same direction, tests, intervals, family table
and slice, with the cophe version and the code-set releases."""

from __future__ import annotations

import html
import re
from html.parser import HTMLParser

import pandas as pd
import pytest

import cophe_core.breakdown.comparison as comparison
from cophe_core import __version__, load_ontology, score_files
from cophe_core.breakdown.slices import code_frequency, code_frequency_slices
from cophe_dashboard import downloads, reports, state
from cophe_dashboard.texts import figure_name
from tests.app.conftest import SAMPLE, ask, goto, run_app

RUNS = ["siblings", "overcoder", "conservative"]


@pytest.fixture(scope="module")
def scoring():
    return score_files(SAMPLE / "gold.csv", {r: SAMPLE / f"run_{r}.csv" for r in RUNS})


def report(scoring, slice_=None) -> str:
    ctx = state.Context(scoring, "Sample: ICD-9", "block", "siblings", slice=slice_)
    return reports.compare_report(
        ctx, reports.comparison(ctx, RUNS, "siblings", "siblings", "overcoder", resamples=200)
    )


def test_the_report_keeps_the_pages_direction_tests_and_tables(scoring):
    page = report(scoring)
    text = re.sub(r"<[^>]+>", " ", page)
    assert "cophe comparison · overcoder − siblings" in page
    assert "siblings − overcoder" not in page  # one direction throughout: B − A
    assert "overcoder − siblings = −0.035" in text and "overcoder is worse, beyond resampling noise" in text
    assert "corrected for comparing several runs (Holm)" in text and "p-value, Holm" in text
    assert "Which families changed, at Category (3 digits)" in text and "Benjamini–Hochberg" in text
    assert f"cophe {__version__}" in text and "ICD-9-CM (CMS v32" in text
    assert "Every document and code." in text
    assert text.count("Essential hypertension") >= 1  # a family of the family table, by its title


def test_the_report_states_the_slice_it_was_made_on(scoring):
    rare = code_frequency_slices(code_frequency(scoring.corpus.gold), (10, 100))[0]
    text = re.sub(r"<[^>]+>", " ", report(scoring, rare))
    assert "Slice: Code frequency in the gold standard: Rare: fewer than 10 documents." in text


def test_compare_pair_follows_the_compare_page():
    assert reports.compare_pair(RUNS, {}) == ("siblings", "overcoder")
    assert reports.compare_pair(RUNS, {"cmp_baseline": "conservative"}) == ("conservative", "siblings")
    assert reports.compare_pair(RUNS, {"cmp_a": "overcoder", "cmp_b": "conservative"}) == (
        "overcoder",
        "conservative",
    )
    assert reports.compare_pair(RUNS, {"cmp_a": "overcoder", "cmp_b": "overcoder"}) == (
        "overcoder",
        "siblings",
    )


class Tables(HTMLParser):
    """The tables of an HTML page as lists of rows of cell text (the header row first)."""

    def __init__(self, page: str):
        super().__init__()
        self.tables: list[list[list[str]]] = []
        self.cell: list[str] | None = None
        self.feed(page)

    def handle_starttag(self, tag, attrs):
        if tag == "table":
            self.tables.append([])
        elif tag == "tr":
            self.tables[-1].append([])
        elif tag in ("td", "th"):
            self.cell = []

    def handle_endtag(self, tag):
        if tag in ("td", "th") and self.cell is not None:
            self.tables[-1][-1].append("".join(self.cell).strip())
            self.cell = None

    def handle_data(self, data):
        if self.cell is not None:
            self.cell.append(data)


def frames(page: str) -> list[pd.DataFrame]:
    """The page's tables, their text with no-break spaces as spaces."""
    return [pd.DataFrame(t[1:], columns=t[0]).replace("\u00a0", " ", regex=True) for t in Tables(page).tables]


def plain(page: str) -> str:
    return html.unescape(re.sub(r"<script.*?</script>|<[^>]+>", " ", page, flags=re.S))


@pytest.fixture(scope="module")
def page_and_report():
    """The Compare page as drawn, then the comparison report made from the Export page in the same session."""
    at = run_app("views/compare.py")
    calls: list[tuple] = []
    before = (comparison.compare_runs, comparison.paired_significance, comparison.family_changes)

    def counted(fn):
        def wrapper(*args, **kw):
            calls.append((fn.__name__, *args[2:]))  # family_changes' level; the others take keywords
            return fn(*args, **kw)

        return wrapper

    comparison.compare_runs, comparison.paired_significance, comparison.family_changes = map(counted, before)
    try:
        goto(at, "views/export.py").run()
        ask(at, "dl_cmp_report_make")
    finally:
        comparison.compare_runs, comparison.paired_significance, comparison.family_changes = before
    assert not at.exception
    goto(at, "views/compare.py").run()
    report = at.session_state[downloads.STORE]["dl_cmp_report"][1].decode()
    # the page computes the family tables of the other levels ahead, in the background: not the report's
    return at, report, [c for c in calls if c[0] != "family_changes" or c[1] == "e0"]


def test_the_report_reuses_the_comparison_the_page_computed(page_and_report):
    *_, computed = page_and_report
    assert computed == []  # the runs table, the paired tests and the family table: none computed twice


def test_the_page_and_the_report_show_the_same_numbers(page_and_report):
    at, report, _ = page_and_report
    runs, paired, _, families = frames(report)[:4]
    onto = load_ontology("icd9")
    col = "Right family and count F1"
    scores = next(d for d in at.dataframe if col in d.value.columns).value
    deltas = next(t for t in at.table if col in t.value.columns).value
    rows = runs[runs.Figure == figure_name("cophe overall f1", onto)].set_index("Run")
    assert list(rows.index) == list(scores.index)  # every run, in the page's order
    for run in scores.index:
        assert scores.loc[run, col].removeprefix("★ ") == rows.loc[run, "Value (95% interval)"]
        assert (rows.loc[run, "Best"] == "★") == scores.loc[run, col].startswith("★")
    for run in deltas.index:
        said = rows.loc[run, "Verdict"]
        diff = rows.loc[run, "Difference from siblings (95% interval)"]
        assert deltas.loc[run, col] == (diff if said == "no clear difference" else f"{diff} {said}")
    # the headline verdicts, word for word
    boxes = [re.sub(r"\\(.)", r"\1", b.value) for b in [*at.success, *at.error, *at.info] if " − " in b.value]
    text = plain(report)
    assert len(boxes) == 3 and all(b in text for b in boxes)
    # the family table: the same families in the same order, with the same changes
    fam = next(d for d in at.dataframe if "change_errors" in d.value.columns).value
    assert list(families.Code) == list(fam.code[: len(families)])
    assert [int(x.replace("−", "-")) for x in families["Change in errors"]] == list(
        fam.change_errors[: len(families)]
    )
    assert list(families["Change in F1 (overcoder − siblings)"]) == [
        f"{v:+.3f}".replace("-", "−") for v in fam.delta_f1[: len(families)]
    ]
    assert len(paired) > 10


def test_the_report_has_no_nan_true_false_or_p_zero(page_and_report):
    _, report, _ = page_and_report
    text = plain(report)
    assert not re.search(r"\bnan\b", text, re.I)
    assert not re.search(r"\b(True|False)\b", text)
    assert "p = 0.000" not in text
    tested = 0
    for t in frames(report):
        for col in t.columns:
            if re.search(r"p-value|q-value|\bp \(", col):
                assert not t[col].isin(["0.000", "nan", "NaN"]).any(), col
                tested += t[col].eq("< 0.001").sum()
    assert tested > 10  # the sample's clear differences are written p < 0.001
    runs = frames(report)[0].set_index("Run")
    assert (runs.loc["siblings", "Difference from siblings (95% interval)"] == "baseline").all()
    assert (runs.loc["siblings", "p-value, Holm"] == "–").all()


def _ask_report(at) -> None:
    """Ask for the comparison report (its pill's key changes each time the report is made again)."""
    key = next(g.key for g in at.button_group if g.key and g.key.startswith("dl_cmp_report_make"))
    ask(at, key)


def test_a_focus_set_on_the_tree_page_is_named_where_the_report_opens_and_limits_only_its_tree():
    """Issue 26.5: the comparison report carries no focus from another view unless it says so. A family
    focused on the tree page limits the report's last section (its tree) only, and the report says so in
    its settings, before any number; every table is the one of the report made with no focus."""
    at = run_app("views/tree.py")
    at.text_input(key="tree_find").set_value("428").run()
    onto = load_ontology("icd9")
    assert at.session_state["focus"] == onto.codes["428"]
    goto(at, "views/export.py").run()
    _ask_report(at)
    assert not at.exception
    focused = at.session_state[downloads.STORE]["dl_cmp_report"][1].decode()
    text = plain(focused)
    settings = text[: text.index("Every run against")]
    assert "Family in focus on the tree: 428 Heart failure" in settings
    assert "only the last section" in settings
    assert "Within 428 Heart failure" in text[text.index("Where the change happens") :]
    # the same report with no family in focus: the same tables, and no word of a focus
    at.session_state["focus"] = None
    at.run()
    _ask_report(at)
    unfocused = at.session_state[downloads.STORE]["dl_cmp_report"][1].decode()
    assert "in focus" not in plain(unfocused) and "Every code family." in plain(unfocused)
    assert [f.to_dict() for f in frames(focused)] == [f.to_dict() for f in frames(unfocused)]
