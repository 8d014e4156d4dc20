"""Slices restrict every page and say so; the Slices page scores each slice; a saved analysis opens exactly."""

from __future__ import annotations

import pytest

from cophe_core import score_files
from cophe_core.breakdown.slices import (
    code_frequency,
    code_frequency_slices,
    codes_in_play,
    metadata_slices,
    read_metadata,
    restrict,
)
from cophe_core.output.analysis import Analysis, InputFile, write_analysis
from tests.app.conftest import SAMPLE, goto, run_app

RUNS = ["siblings", "overcoder", "conservative"]
PAGES = [
    "views/tree.py",
    "views/compare.py",
    "views/slices.py",
    "views/document.py",
    "views/metrics.py",
    "views/export.py",
    "views/threshold.py",
]


@pytest.fixture(scope="module")
def scoring():
    """The sample as the dashboard scores it: the scores run decided at its default threshold, 0.5."""
    return score_files(
        SAMPLE / "gold.csv",
        {**{r: SAMPLE / f"run_{r}.csv" for r in RUNS}, "model": SAMPLE / "scores_model.csv"},
        threshold=0.5,
    )


def rare_codes(scoring):
    """The page's rare-code slice: codes in play in the gold standard or any run, seen in < 10 documents."""
    c = scoring.corpus
    return code_frequency_slices(
        code_frequency(c.gold), (10, 100), in_play=codes_in_play(c.gold, *c.runs.values())
    )


def headline(at, run: str) -> float:
    return float(at.table[0].value.set_index("Run").loc[run, "Right family and count (CoPHE) F1"])


def banner(at) -> str:
    return " ".join(m.value for m in at.markdown if "Showing only" in m.value).replace("\\", "")


def test_a_code_slice_restricts_every_page_and_says_so(scoring):
    at = run_app()
    at.selectbox(key="slice_dimension").set_value("code_frequency").run()
    assert at.radio(key="slice_name").value == "codes:freq:10,100:0"
    rare = rare_codes(scoring)[0]
    for run in RUNS:
        assert headline(at, run) == pytest.approx(
            restrict(scoring.evaluation(run), rare).score("cophe").f1, abs=5e-4
        )
    assert "Showing only Rare: fewer than 10 documents" in banner(at)
    for page in PAGES:
        goto(at, page).run()
        assert not at.exception, (page, [e.value for e in at.exception])
        assert "Showing only Rare" in banner(at), page
    at.button(key="slice_clear").click().run()
    assert not banner(at) and at.selectbox(key="slice_dimension").value == "none"


def test_bin_edges_are_checked_and_change_the_slices():
    at = run_app()
    at.selectbox(key="slice_dimension").set_value("code_frequency").run()
    at.text_input(key="slice_edges").set_value("5").run()
    assert at.radio(key="slice_name").options[0].startswith("Rare: fewer than 5 documents")
    at.text_input(key="slice_edges").set_value("100, 10").run()
    assert any("increasing positive numbers" in e.value for e in at.error) and not banner(at)


def test_the_slices_page_scores_each_slice_of_each_run(scoring):
    at = run_app("views/slices.py")
    table = at.dataframe[0].value
    slices = rare_codes(scoring)
    assert list(table.index) == [s.name for s in slices]
    for s in slices:
        for run in RUNS:
            assert table.loc[s.name, run] == pytest.approx(
                restrict(scoring.evaluation(run), s).score("cophe").f1
            )


def test_document_details_upload_slices_by_a_column(scoring):
    at = run_app()
    details = (SAMPLE / "documents.csv").read_bytes()
    at.file_uploader(key="metadata_file").set_value(("documents.csv", details, "text/csv")).run()
    options = at.selectbox(key="slice_dimension").options  # as the user reads them
    assert {"Documents, by admission_type", "Documents, by note_length", "Documents, by year"} <= set(options)
    at.selectbox(key="slice_dimension").set_value("meta:admission_type").run()
    key = "docs:meta:admission_type:v1"  # the second most frequent value
    assert "admission_type: ELECTIVE (177)" in at.radio(key="slice_name").options
    at.radio(key="slice_name").set_value(key).run()
    want = [
        s
        for s in metadata_slices(
            read_metadata(details, name="documents.csv"), scoring.corpus.docs, "admission_type"
        )
        if s.key == key
    ][0]
    assert want.name == "admission_type: ELECTIVE"
    assert headline(at, "overcoder") == pytest.approx(
        restrict(scoring.evaluation("overcoder"), want).score("cophe").f1, abs=5e-4
    )
    assert "Showing only admission_type: ELECTIVE" in banner(at)


def test_an_opened_analysis_restores_inputs_names_rule_slice_and_view(scoring):
    gold = InputFile("gold.csv", (SAMPLE / "gold.csv").read_bytes())
    a = Analysis(
        gold,
        {
            "my model": InputFile("scores_model.csv", (SAMPLE / "scores_model.csv").read_bytes()),
            "baseline": InputFile("run_siblings.csv", (SAMPLE / "run_siblings.csv").read_bytes()),
        },
        options={"ontology": "icd9", "system": "auto", "doc_col": None, "code_col": None, "max_level": "e0"},
        rule=("threshold", 0.3),
        slice={
            "slice_dimension": "code_frequency",
            "slice_edges": "10, 100",
            "slice_name": "codes:freq:10,100:2",
        },
        view={"page": "compare", "cmp_baseline": "baseline", "run": "my model"},
    )
    at = run_app()
    at.radio(key="source").set_value("Open a saved analysis").run()
    at.file_uploader(key="analysis_file").set_value(
        ("shared.cophe", write_analysis(a), "application/zip")
    ).run()
    assert not at.exception, [e.value for e in at.exception]
    assert at.session_state["threshold"] == 0.3 and at.selectbox(key="max_level_icd9").value == "e0"
    assert at.selectbox(key="run").value == "my model" and at.session_state["cmp_baseline"] == "baseline"
    assert at.radio(key="slice_name").value == "codes:freq:10,100:2"
    assert "Showing only Frequent: 100 documents or more" in banner(at)
    links = [el.proto.label for el in at.get("page_link")]
    assert links == ["Go to the view the analysis was saved on: Compare runs"]
    goto(at, "views/compare.py").run()  # what the link does
    assert not at.exception and not at.get("page_link")
    base = next(
        t for t in at.table if "Right family and count F1" in t.value.columns
    ).value  # the differences
    assert list(base.index) == ["my model"]  # compared with the saved baseline


def test_a_bad_analysis_file_is_a_panel_naming_it():
    at = run_app()
    at.radio(key="source").set_value("Open a saved analysis").run()
    at.file_uploader(key="analysis_file").set_value(("shared.cophe", b"not a zip", "application/zip")).run()
    assert not at.exception
    assert any("shared.cophe: not a cophe analysis file" in e.value.replace("\\", "") for e in at.error)


def test_save_writes_what_the_session_shows(scoring):
    from cophe_core.output.analysis import read_analysis
    from cophe_dashboard import saved

    gold = ("gold.csv", (SAMPLE / "gold.csv").read_bytes())
    runs = [("mine", "run_overcoder.csv", (SAMPLE / "run_overcoder.csv").read_bytes())]
    files = {
        "gold": gold,
        "runs": runs,
        "hierarchy": None,
        "ontology": "icd9",
        "max_level": "e0",
        "scored": False,
        "doc_col": None,
        "code_col": None,
        "system": "auto",
    }
    onto = scoring.corpus.ontology
    state = {
        "_rule": ("threshold", 0.5),
        "focus": int(onto.codes["428"]),
        "tree_colour": "fn",
        "cmp_baseline": "mine",
        "slice_dimension": "gold_codes",
        "slice_name": "docs:gold:0",
        "slice_edges": None,
        "metadata_file": ("documents.csv", b"doc_id,x\n1,2\n"),
        "training_file": None,
    }
    a = read_analysis(saved.write_analysis(saved.build(files, "tree", onto, state)))
    assert (
        a.gold.data == gold[1] and a.runs["mine"].data == runs[0][2] and a.rule is None
    )  # no run holds scores
    assert a.options == {
        "ontology": "icd9",
        "system": "auto",
        "doc_col": None,
        "code_col": None,
        "header": None,
        "max_level": "e0",
    }
    assert a.view == {"page": "tree", "focus": "428", "colour": "fn", "cmp_baseline": "mine"}
    assert a.slice == {"slice_dimension": "gold_codes", "slice_name": "docs:gold:0"}
    assert a.metadata.name == "documents.csv" and a.training is None
    assert a.code_sets == dict(onto.code_sets)


def test_training_labels_define_the_rare_codes(scoring):
    from cophe_core import read_labels
    from cophe_core.breakdown.slices import training_frequency

    at = run_app()
    at.selectbox(key="slice_dimension").set_value("code_frequency").run()
    dev = (SAMPLE / "dev_gold.csv").read_bytes()
    at.file_uploader(key="training_file").set_value(("dev_gold.csv", dev, "text/csv")).run()
    assert not at.exception
    c = scoring.corpus
    used = codes_in_play(c.gold, *c.runs.values())
    freq = training_frequency(read_labels(dev, name="dev_gold.csv"), c).frequency
    rare = code_frequency_slices(freq, (10, 100), in_play=used, source="the training labels")[0]
    assert at.radio(key="slice_name").value == rare.key and rare.key != "codes:freq:10,100:0"
    assert "Code frequency in the training labels" in banner(at)
    assert headline(at, "overcoder") == pytest.approx(
        restrict(scoring.evaluation("overcoder"), rare).score("cophe").f1, abs=5e-4
    )


def test_an_opened_analysis_is_not_hashed_again_and_keys_its_inputs_as_uploads(monkeypatch):
    """The inputs of an opened analysis are hashed once, as it is read (their SHA-256 checked against its
    manifest, kept on each InputFile): the dashboard keys its caches by that digest, not by hashing the same
    bytes again on every rerun, and the key is the one the same file uploaded would have."""
    import hashlib

    from cophe_dashboard import loading

    # the sample's files under other document ids: not the bytes of the sample the app opens with
    gold, run = ((SAMPLE / f).read_bytes().replace(b"\nD", b"\nX") for f in ("gold.csv", "run_siblings.csv"))
    for name, data in (("gold.csv", gold), ("run_siblings.csv", run)):
        known = hashlib.sha256(data).hexdigest()
        assert loading.file_digest(name, data, sha256=known) == loading.file_digest(name, data)
    real, hashed = hashlib.sha256, []

    def counting(content=b"", *args, **kw):
        hashed.append(bytes(content))
        return real(content, *args, **kw)

    saved = write_analysis(
        Analysis(InputFile("gold.csv", gold), {"siblings": InputFile("run_siblings.csv", run)})
    )
    monkeypatch.setattr(loading.hashlib, "sha256", counting)  # hashlib's own: cophe_core's reading counts too
    at = run_app()
    at.radio(key="source").set_value("Open a saved analysis").run()
    at.file_uploader(key="analysis_file").set_value(("shared.cophe", saved, "application/zip")).run()
    assert not at.exception, [e.value for e in at.exception]
    at.run()  # a rerun: nothing hashed again either
    assert [c for c in hashed if c in (gold, run)].count(gold) == 1  # read_analysis's check, once
    assert [c for c in hashed if c in (gold, run)].count(run) == 1
    at.radio(key="source").set_value("Upload files").run()  # the same files uploaded: hashed by the dashboard
    at.file_uploader(key="gold_file").set_value(("gold.csv", gold, "text/csv"))
    at.file_uploader(key="run_files").set_value([("run_siblings.csv", run, "text/csv")]).run()
    assert not at.exception, [e.value for e in at.exception]
    assert hashed.count(gold) > 1  # the counting sees the dashboard's own hashing
