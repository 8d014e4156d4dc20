"""Every view under AppTest: no exception, the sample's numbers visible, uploads, and bad input."""

from __future__ import annotations

import pytest

from cophe_core import score_files
from tests.app.conftest import (
    SAMPLE,
    asking,
    goto,
    is_tree,
    plotly_array,
    plotly_specs,
    run_app,
    upload,
    upload_with_hierarchy,
)

RUNS = ["siblings", "overcoder", "conservative"]  # plus "model", given as scores
F1_COLUMNS = ["Exact codes (Flat) F1", "Right family (Set-based) F1", "Right family and count (CoPHE) F1"]


def headline_f1(at, run: str | None = None) -> list[str]:
    """The overall F1 of the three measures in the Scores-by-level headline table (first run by default),
    to 3 decimals as shown."""
    t = at.table[0].value.set_index("Run")
    row = t.iloc[0] if run is None else t.loc[run]
    return [f"{row[c]:.3f}" for c in F1_COLUMNS]


@pytest.fixture(scope="module")
def sample():
    return score_files(SAMPLE / "gold.csv", {r: SAMPLE / f"run_{r}.csv" for r in RUNS})


@pytest.fixture(scope="module")
def model():
    """The sample's scores run, decided at the default threshold 0.5."""
    from cophe_core import read_labels
    from cophe_core.api import decide_run
    from cophe_core.scoring.scores import read_scores

    scoring, _ = decide_run(
        read_labels(SAMPLE / "gold.csv"),
        read_scores(SAMPLE / "scores_model.csv"),
        threshold=0.5,
        ontology="icd9",
    )
    return scoring.evaluation("pred")


def test_levels_view_shows_the_sample_numbers(sample, model):
    at = run_app()
    for run, ev in zip([*RUNS, "model"], [sample.evaluation(r) for r in RUNS] + [model]):
        assert headline_f1(at, run) == [f"{ev.score(m).f1:.3f}" for m in ("flat", "set_based", "cophe")]
    assert any(
        "Exact codes (flat): only the exact code counts" in e.value.replace("\\", "") for e in at.markdown
    )  # each measure's help sentence
    text = " ".join(m.value for m in at.markdown).replace("\\", "")
    # one ranked sentence per run: the largest gap first, with its cause
    assert (
        "Run overcoder: right family and count F1 falls below right family most at Category (3 digits)"
        in text
    )
    assert "42.3% more codes than the gold standard" in text
    assert "Category (3 digits)" in text and "At e0" not in text
    table = at.dataframe[0].value
    assert set(table.run) == set(RUNS) | {"model"} and len(table) == 4 * 11
    assert "Codes as given" in set(table.level) and "Right family and count (CoPHE)" in set(table.measure)
    # the first page draws no plotly chart (no plotly.js to load) and no switch for one: the levels chart is
    # shown at once, and its files (bars of the same figures) are made on request, right below it
    assert not at.get("plotly_chart") and not [t for t in at.toggle if t.key == "levels_chart_on"]
    assert "Chart as HTML" in asking(at)
    at.toggle(key="levels_ci").set_value(True).run()
    ci = at.dataframe[1].value.set_index(["run", "measure", "level", "statistic"])
    row = ci.loc[("overcoder", "Right family and count (CoPHE)", "All levels together", "F1")]
    assert row.low <= row.value <= row.high
    assert row.value == pytest.approx(sample.evaluation("overcoder").score("cophe").f1)


def test_max_level_changes_the_levels(sample):
    at = run_app()
    at.selectbox(key="max_level_icd9").set_value("e0").run()
    assert set(at.dataframe[0].value.level) == {
        "Codes as given",
        "Specific code (5th digit)",
        "Subcategory (4th digit)",
        "Category (3 digits)",
        "All levels together",
    }
    expected = sample.evaluation("siblings", max_level="e0").score("cophe").f1
    assert headline_f1(at)[2] == f"{expected:.3f}"


def test_upload_of_a_small_file_changes_the_numbers():
    gold = b"doc_id,code\n1,364.11\n1,364.24\n1,364.9\n"
    pred = b"doc_id,code\n1,364.11\n1,364.21\n1,364.3\n1,364.41\n"
    at = upload(run_app(), ("gold.csv", gold), [("paper.csv", pred)])
    at.selectbox(key="max_level_icd9").set_value("e0").run()
    assert headline_f1(at) == ["0.286", "0.571", "0.632"]  # Table 1 of the CoPHE paper
    assert at.selectbox(key="run").options == ["paper"]
    assert not at.error


def test_bad_upload_shows_the_error_panel_not_a_traceback():
    at = upload(run_app(), ("gold.csv", b"\x00\x01binary junk"), [("run.csv", b"doc_id,code\n1,401.9\n")])
    assert not at.exception
    assert any("gold.csv: this is not a text file" in e.value.replace("\\", "") for e in at.error)


def test_rejected_rows_are_counted_listed_and_downloadable():
    gold = b"doc_id,code\n1,401.9\n1,zz9\n2,428.0\n"
    at = upload(run_app(), ("gold.csv", gold), [("run.csv", b"doc_id,code\n1,401.1\n2,428.0\n")])
    at.button(key="score_anyway").click().run()  # a third of the gold rejected on purpose
    assert any("1 input row was not scored" in e.value for e in at.error)
    rejected = at.dataframe[1].value
    assert rejected.iloc[0].to_dict() | {"reason": ""} == {
        "file": "gold.csv",
        "line": 3,
        "value": "zz9",
        "reason": "",
    }
    assert any(b.label == "Download all rejected rows (CSV)" for b in at.get("download_button"))


def test_undotted_codes_ask_for_the_code_system():
    """Nothing scorable: no number is shown until the question is answered."""
    at = upload(run_app(), ("gold.csv", b"doc_id,code\n1,4019\n"), [("run.csv", b"doc_id,code\n1,4011\n")])
    assert any("4019" in w.value for w in at.warning)
    assert any("No scores yet" in e.value and "gold.csv" in e.value.replace("\\", "") for e in at.error)
    assert not at.table and not at.get("plotly_chart")
    at.button(key="sys_dx").click().run()
    assert at.session_state["system"] == "diagnosis"
    assert not at.error
    assert headline_f1(at)[2] == "0.667"  # 401.9 vs 401.1: e0 and block match, e1 misses


def test_tree_root_is_bounded(sample):
    at = run_app("views/tree.py")
    spec = plotly_specs(at)[0]
    trace = spec["data"][0]
    # the chapters are the top tiles: no column spent on an "All codes" root (issue 26); the first column is
    # at the chart's left edge
    column = plotly_array(trace["x"])
    assert "root" not in trace["ids"] and column[0] == 0 and len(trace["ids"]) <= 2000
    assert min(column) == 0 and spec["layout"]["xaxis"]["range"][0] == -0.5
    assert any(i.startswith("other:") for i in trace["ids"])


def test_compare_view(sample):
    at = run_app("views/compare.py")
    a, b = sample.evaluation("siblings"), sample.evaluation("overcoder")
    values = {m.label: m.value for m in at.metric}
    assert values["Right family and count F1 · overcoder"] == f"{b.score('cophe').f1:.3f}"
    assert [m.delta for m in at.metric if m.label == "Right family and count F1 · overcoder"][
        0
    ] == f"{b.score('cophe').f1 - a.score('cophe').f1:+.3f}"
    assert any(is_tree(s["data"][0]) for s in plotly_specs(at))
    dis = at.dataframe[-1].value
    assert len(dis) > 0 and (dis.codes_disagreed.diff().dropna() <= 0).all()
    at.radio(key="cmp_tree_layout").set_value("Side by side").run()
    trees = [s["data"][0] for s in plotly_specs(at) if is_tree(s["data"][0])]
    assert len(trees) == 2 and trees[0]["ids"] == trees[1]["ids"]


def test_compare_needs_two_runs():
    at = upload(run_app(), ("gold.csv", b"doc_id,code\n1,401.9\n"), [("run.csv", b"doc_id,code\n1,401.1\n")])
    goto(at, "views/compare.py").run()
    assert any("two or more runs" in i.value for i in at.info)


def test_export_view_offers_every_download():
    """Tables are files at once; figures and reports are made when asked for (tests/app/test_downloads.py)."""
    at = run_app("views/export.py")
    files = [b.label for b in at.get("download_button")]
    for want in (
        "Scores by level, all runs",
        "Every code and family · siblings",
        "Document by document · siblings",
        "Rows that were not scored",
    ):
        assert want in files
    made = asking(at)
    for want in (
        "Levels chart, all runs",
        "Code-family tree · siblings (current focus)",
        "Report for run siblings",
        "Comparison report: overcoder − siblings",
    ):
        assert want in made


def test_icd10_sample_is_selectable():
    at = run_app()
    at.radio(key="source").set_value("Sample: ICD-10").run()
    assert not at.exception
    icd10 = score_files(
        SAMPLE.parent / "icd10" / "gold.csv",
        {r: SAMPLE.parent / "icd10" / f"run_{r}.csv" for r in ("siblings", "overcoder")},
    )
    assert at.selectbox(key="run").options == ["siblings", "overcoder"]
    assert at.selectbox(key="max_level_icd10").value == "block"
    assert headline_f1(at)[2] == f"{icd10.evaluation('siblings').score('cophe').f1:.3f}"
    goto(at, "views/tree.py").run()
    assert not at.exception and is_tree(plotly_specs(at)[0]["data"][0])


def test_custom_hierarchy_upload():
    at = upload_with_hierarchy(
        ("tree.csv", b"child,parent,title\nroot,,All\nA,root,Alpha\nB,root,Beta\na1,A,\na2,A,\nb1,B,\n"),
        ("gold.csv", b"doc_id,code\n1,a1\n2,b1\n"),
        [("run.csv", b"doc_id,code\n1,a2\n2,b1\n")],
    )
    assert not at.error
    assert at.selectbox(key="max_level_tree").options == [
        "Depth 2",
        "Depth 1",
        "Depth 0 (top)",
    ]  # levels by name
    # flat: 1 of 2 right; d2 TP1 FP1 FN1 plus d1 TP2 gives 3/4 for both hierarchical measures
    assert headline_f1(at) == ["0.500", "0.750", "0.750"]


def test_bad_hierarchy_upload_shows_the_error():
    at = upload_with_hierarchy(
        ("h.csv", b"child,parent\nr,\na,b\nb,a\n"),
        ("gold.csv", b"doc_id,code\n1,a\n"),
        [("run.csv", b"doc_id,code\n1,b\n")],
    )
    assert any("cycle" in e.value for e in at.error)


def test_more_metrics_page(sample):
    from cophe_core.scoring.suite import suite

    at = run_app("views/metrics.py")
    table = at.dataframe[0].value
    expected = suite(sample.evaluation("overcoder"))
    # the values themselves (shown to 3 decimals by the table's Styler, tests/app/test_number_style.py)
    assert table.loc["ICM-Norm", "overcoder"] == pytest.approx(expected["icm_norm"])
    assert table.loc["Hierarchical F (HF)", "siblings"] == pytest.approx(
        suite(sample.evaluation("siblings"))["hf"]
    )
    assert table.loc["ICM", "rewards"].startswith("Information shared")
    props = at.dataframe[1].value
    assert props.set_index("metric").loc["ICM", "hierarchical proximity"] == "yes"
    at.toggle(key="metrics_ci").set_value(True).run()
    assert not at.exception and "–" in at.dataframe[0].value.loc["ICM", "overcoder"]


def test_compare_says_whether_a_difference_is_noise():
    at = run_app("views/compare.py")
    boxes = {
        kind: [x.value.replace("\\", "") for x in getattr(at, kind)] for kind in ("success", "info", "error")
    }
    verdicts = {kind: [line for line in lines if " F1: " in line] for kind, lines in boxes.items()}
    assert sum(map(len, verdicts.values())) == 3
    # overcoder writes more codes: better on exact codes and right family, worse on right family and count
    assert [v.split(":")[0] for v in verdicts["success"]] == [
        "Exact codes (Flat) F1",
        "Right family (Set-based) F1",
    ]
    assert all(v.endswith("is better, beyond resampling noise.") for v in verdicts["success"])
    (worse,) = verdicts["error"]  # a worse result is never in a green box
    assert worse.startswith("Right family and count (CoPHE) F1: overcoder − siblings") and "is worse" in worse
    assert not verdicts["info"]
    table = next(d.value for d in at.dataframe if "p_value" in d.value.columns)  # all figures, with p-values
    assert "set_based" not in " ".join(table.measure) and "All levels together" in set(table.level)


def test_threshold_slider_updates_every_view_and_tuning_on_dev():
    at = run_app()
    assert "model" in at.selectbox(key="run").options  # the sample's scores run
    before = headline_f1(at, "model")
    at.slider(key="threshold").set_value(0.3).run()
    assert headline_f1(at, "model") != before
    goto(at, "views/threshold.py").run()
    assert not at.exception
    at.toggle(key="use_dev").set_value(True).run()
    assert any("peaks at threshold" in s.value for s in at.success)
    at.button(key="use_tuned").click().run()
    assert at.session_state["threshold"] == 0.5 and not at.exception
    ranking = at.dataframe[0].value
    assert {"p@5", "r@15", "auc_micro", "auc_macro"} <= set(ranking.columns)


def _values(v) -> list[float]:
    """A Plotly array from the figure JSON (plain list or typed array)."""
    import base64

    import numpy as np

    if isinstance(v, dict):
        return np.frombuffer(base64.b64decode(v["bdata"]), dtype=v["dtype"]).tolist()
    return list(v)


def test_threshold_page_follows_the_reading_options():
    """Undotted codes in columns adm,dx: the Threshold page reads them as the sidebar says (it re-read the
    gold without the column options and scored without the code system)."""
    from cophe_core import score_files

    gold = b"adm,dx\nA,4019\nA,4280\nB,25000\n"
    scores = b"adm,dx,score\nA,4019,0.9\nA,4281,0.6\nB,25000,0.7\nB,4019,0.2\n"
    at = upload(run_app(), ("gold.csv", gold), [("model.csv", scores)])
    at.text_input(key="doc_col").set_value("adm").run()
    at.text_input(key="code_col").set_value("dx").run()
    at.selectbox(key="system").set_value("diagnosis").run()
    assert not at.error, [e.value for e in at.error]
    decided = b"adm,dx\nA,4019\nA,4281\nB,25000\n"  # the scores at least 0.5, by hand
    expected = (
        score_files(gold, {"m": decided}, ontology="icd9", system="diagnosis", doc_col="adm", code_col="dx")
        .evaluation("m")
        .score("cophe")
        .f1
    )
    assert headline_f1(at)[2] == f"{expected:.3f}"
    goto(at, "views/threshold.py").run()
    assert not at.exception and not at.error, [e.value for e in at.error]
    cophe = next(t for t in plotly_specs(at)[0]["data"] if t["name"] == "Right family and count (CoPHE)")
    at_half = dict(zip(_values(cophe["x"]), _values(cophe["y"])))[0.5]
    assert at_half == pytest.approx(expected) and expected > 0


def test_rejected_rows_of_a_scores_file_reach_the_problems_panel():
    """Every row is scored or listed, whatever the threshold (zz9 scores below it)."""
    gold = b"doc_id,code\n1,401.9\n2,428.0\n"
    scores = b"doc_id,code,score\n1,401.9,0.9\n1,zz9,0.2\n2,428.0,abc\n"
    at = upload(run_app(), ("gold.csv", gold), [("s.csv", scores)])
    at.button(key="score_anyway").click().run()  # two thirds of the run rejected on purpose
    assert any("2 input rows were not scored" in e.value for e in at.error)
    rejected = at.dataframe[1].value
    assert sorted(zip(rejected.file, rejected.line, rejected.value)) == [
        ("s.csv", 3, "zz9"),
        ("s.csv", 4, "abc"),
    ]


def test_each_upload_is_parsed_once_across_reruns(monkeypatch):
    import hashlib
    import io
    import uuid
    from collections import Counter

    import pandas as pd

    parsed: Counter = Counter()
    read_csv = pd.read_csv

    def counting(source, *args, **kwargs):
        if isinstance(source, io.StringIO):
            parsed[hashlib.sha256(source.getvalue().encode()).hexdigest()] += 1
        return read_csv(source, *args, **kwargs)

    monkeypatch.setattr(pd, "read_csv", counting)
    tag = uuid.uuid4().hex  # content no other test has parsed
    gold = f"doc_id,code\n{tag},401.9\n{tag},428.0\n".encode()
    labels = f"doc_id,code,is_primary\n{tag},401.9,1\n".encode()
    scores = f"doc_id,code,score\n{tag},401.9,0.9\n{tag},428.1,0.4\n".encode()
    at = upload(run_app(), ("gold.csv", gold), [("labels.csv", labels), ("scores.csv", scores)])
    assert at.selectbox(key="run").options == ["labels", "scores"]
    at.slider(key="threshold").set_value(0.3).run()
    at.selectbox(key="max_level_icd9").set_value("e0").run()
    goto(at, "views/threshold.py").run()
    goto(at, "views/levels.py").run()
    assert not at.exception and not at.error
    for data in (gold, labels, scores):
        assert parsed[hashlib.sha256(data).hexdigest()] == 1


def test_partly_undotted_input_is_not_scored_until_answered(sample_bytes):
    """One question for the whole file (issue 24): never a score of its dotted part alone."""
    gold = b"doc_id,code\n1,401.9\n1,4280\n"
    at = upload(run_app(), ("gold.csv", gold), [("run.csv", b"doc_id,code\n1,401.9\n1,428.0\n")])
    assert not at.table and at.button(key="sys_dx")
    at.button(key="sys_dx").click().run()
    assert at.session_state["system"] == "diagnosis" and not at.error and at.table


def test_code_set_releases_are_shown():
    at = run_app()
    assert any("Code sets: ICD-9-CM (CMS v32" in c.value.replace("\\", "") for c in at.sidebar.caption)
