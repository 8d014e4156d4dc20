"""The bound on rows not scored, where it was missing (issue 24, point 3): the Threshold page's development
split is held to it like every other input, and a saved analysis remembers "Score anyway"."""

from __future__ import annotations

import pandas as pd

from cophe_core.output.analysis import Analysis, InputFile, write_analysis
from tests.app.conftest import goto, run_app, upload
from tests.conftest import SAMPLE


def _junk(name: str, every: int = 20) -> tuple[str, bytes]:
    """A sample file with one code in ``every`` replaced by junk: 5% of its rows cannot be scored."""
    frame = pd.read_csv(SAMPLE / name, dtype=str, keep_default_na=False)
    frame.loc[::every, "code"] = "XYZ"
    return f"junk_{name}", frame.to_csv(index=False).encode()


def _text(at) -> str:
    return " ".join(str(e.value) for kind in ("error", "markdown") for e in at.get(kind)).replace("\\", "")


def _sample(name: str) -> tuple[str, bytes]:
    return name, (SAMPLE / name).read_bytes()


def test_the_development_split_is_refused_like_any_input_then_scored_anyway():
    at = upload(run_app(), _sample("gold.csv"), [_sample("scores_model.csv")])
    goto(at, "views/threshold.py").run()
    dev_gold, dev_scores = _sample("dev_gold.csv"), _junk("dev_scores.csv")
    at.file_uploader(key="dev_gold").set_value((*dev_gold, "text/csv"))
    at.file_uploader(key="dev_scores").set_value((*dev_scores, "text/csv")).run()
    assert not at.exception, [e.value for e in at.exception]
    shown = _text(at)
    n = len(range(0, 23685, 20))
    assert f"junk_dev_scores.csv: {n:,} of its 23,685 rows" in shown.replace("**", "")
    assert not any("peaks at threshold" in s.value for s in at.success)  # no threshold from part of it
    at.button(key="score_anyway").click().run()
    assert not at.exception
    assert any("peaks at threshold" in s.value for s in at.success)


def _analysis(**options) -> bytes:
    gold = InputFile("gold.csv", (SAMPLE / "gold.csv").read_bytes())
    good = InputFile("run_siblings.csv", (SAMPLE / "run_siblings.csv").read_bytes())
    junk = InputFile(*_junk("run_overcoder.csv"))
    return write_analysis(
        Analysis(gold, {"good": good, "junk": junk}, options={"ontology": "icd9", **options})
    )


def _open(data: bytes):
    at = run_app()
    at.radio(key="source").set_value("Open a saved analysis").run()
    at.file_uploader(key="analysis_file").set_value(("shared.cophe", data, "application/zip")).run()
    assert not at.exception, [e.value for e in at.exception]
    return at


def test_an_analysis_saved_after_score_anyway_scores_the_same_rows_and_says_so():
    bounded = _open(_analysis())
    assert bounded.selectbox(key="run").options == ["good"]  # the junk run refused, as on the day
    assert "Not scored: junk_run_overcoder.csv" in _text(bounded).replace("**", "")
    anyway = _open(_analysis(score_anyway=True))
    assert anyway.selectbox(key="run").options == ["good", "junk"]
    assert "Not scored" not in _text(anyway)
    assert any("Scored anyway" in c.value for c in anyway.caption)


def test_save_records_score_anyway():
    from cophe_core.ontology import icd9_ontology
    from cophe_core.output.analysis import read_analysis
    from cophe_dashboard import saved

    files = {
        "gold": _sample("gold.csv"),
        "runs": [("junk", *_junk("run_overcoder.csv"))],
        "hierarchy": None,
        "ontology": "icd9",
        "max_level": None,
        "scored": False,
        "doc_col": None,
        "code_col": None,
        "system": "auto",
        "score_anyway": True,
    }
    a = read_analysis(saved.write_analysis(saved.build(files, "tree", icd9_ontology(), {})))
    assert a.options["score_anyway"] is True
    files["score_anyway"] = False
    a = read_analysis(saved.write_analysis(saved.build(files, "tree", icd9_ontology(), {})))
    assert "score_anyway" not in a.options  # the bound kept: as every analysis saved before
