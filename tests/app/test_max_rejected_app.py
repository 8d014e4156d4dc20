"""The bound on rows not scored, in the dashboard (issue 24): a file too much of which cannot be scored gets a
panel naming it and the fix in the sidebar's words, never a number; "Score anyway" scores that upload; a bad
run never hides the good runs uploaded with it."""

from __future__ import annotations

import io

import pandas as pd

from tests.app.conftest import run_app, upload
from tests.conftest import SAMPLE


def _undotted(name: str) -> tuple[str, bytes]:
    frame = pd.read_csv(SAMPLE / name, dtype=str, keep_default_na=False)
    frame["code"] = frame["code"].str.replace(".", "", regex=False)
    return name, frame.to_csv(index=False).encode()


def _junk_run() -> tuple[str, bytes]:
    """The overcoder run with one code in 20 replaced by junk."""
    frame = pd.read_csv(SAMPLE / "run_overcoder.csv", dtype=str)
    frame.loc[::20, "code"] = "XYZ"
    return "junk.csv", frame.to_csv(index=False).encode()


def _text(at) -> str:
    return (
        " ".join(str(e.value) for kind in ("error", "markdown") for e in at.get(kind))
        .replace("\\", "")
        .replace("**", "")
    )


def test_an_undotted_upload_is_refused_with_the_fix_in_the_sidebars_words_then_scored_anyway():
    at = upload(run_app(), _undotted("gold.csv"), [_undotted("run_overcoder.csv")])
    shown = _text(at)
    assert "No scores yet: too many rows of gold.csv, run_overcoder.csv cannot be scored" in shown
    assert "gold.csv: 7,200 of its 16,001 rows (45.0%) cannot be scored" in shown
    assert "Undotted ICD-9 codes such as 4019 are" in shown and "Reading options" in shown
    assert "--" not in shown  # no command-line flag on screen
    reasons = at.dataframe[0].value
    assert reasons.iloc[0].to_dict() == {
        "rows": "7,200 rows",  # with the thousands separator
        "example": "gold.csv, line 2",
        "value": "8820",
        "reason": "undotted code 8820 is ambiguous: it may be diagnosis 882.0 or procedure 88.20; say which "
        "system the file holds: diagnoses or procedures",
    }
    assert not _has_run(at)  # no run, no figure
    at.button(key="score_anyway").click().run()
    assert not at.exception
    assert "too many rows" not in _text(at)
    assert at.selectbox(key="run").options == ["run_overcoder"]


def _has_run(at) -> bool:
    return any(getattr(s, "key", None) == "run" for s in at.selectbox)


def test_answering_the_system_question_scores_it():
    at = upload(run_app(), _undotted("gold.csv"), [_undotted("run_overcoder.csv")])
    at.button(key="sys_dx").click().run()
    assert "too many rows" not in _text(at) and at.selectbox(key="run").options == ["run_overcoder"]


def test_a_bad_run_is_listed_and_the_good_runs_are_scored_beside_it():
    good = ("run_siblings.csv", (SAMPLE / "run_siblings.csv").read_bytes())
    at = upload(run_app(), ("gold.csv", (SAMPLE / "gold.csv").read_bytes()), [good, _junk_run()])
    shown = _text(at)
    n_junk = len(range(0, len(pd.read_csv(io.BytesIO(_junk_run()[1]))), 20))
    assert "Not scored: junk.csv." in shown and f"junk.csv: {n_junk:,} of its" in shown
    assert at.selectbox(key="run").options == ["run_siblings"]  # the good run, scored and shown
    at.button(key="score_anyway").click().run()
    assert at.selectbox(key="run").options == ["run_siblings", "junk"]
    assert "Not scored" not in _text(at)
