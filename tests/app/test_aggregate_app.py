"""The dashboard on an aggregate analysis (counts of runs too large to upload, cophe aggregate): the views that
aggregates feed show the same numbers as the inputs themselves; the others say they are not available."""

from __future__ import annotations

import re

import pytest
from streamlit.testing.v1 import AppTest

from cophe_core import score_files
from cophe_core.scale.aggregate import aggregate_scoring, write_aggregate
from tests.app.conftest import goto, run_app
from tests.conftest import SAMPLE

RUNS = {"siblings": "run_siblings.csv", "overcoder": "run_overcoder.csv"}


@pytest.fixture(scope="module")
def scoring():
    return score_files(SAMPLE / "gold.csv", {r: SAMPLE / f for r, f in RUNS.items()})


@pytest.fixture(scope="module")
def aggregate_file(scoring) -> bytes:
    data = write_aggregate(aggregate_scoring(scoring))
    assert data is not None
    return data


def opened(data: bytes, page: str | None = None) -> AppTest:
    at = run_app()
    at.radio(key="source").set_value("Open a saved analysis").run()
    at.file_uploader(key="analysis_file").set_value(("year.cophe", data, "application/zip")).run()
    assert not at.exception, [e.value for e in at.exception]
    if page:
        goto(at, page).run()
        assert not at.exception, [e.value for e in at.exception]
    return at


def texts(at: AppTest) -> str:
    return " ".join(
        [m.value for m in at.markdown] + [c.value for c in at.caption] + [i.value for i in at.info]
    ).replace("\\", "")


def test_the_levels_page_shows_the_inputs_numbers(scoring, aggregate_file):
    at = opened(aggregate_file)
    table = next(d.value for d in at.dataframe if "level" in map(str.lower, d.value.columns))
    want = scoring.evaluation("siblings").levels_table
    got = table[table.iloc[:, 0] == "siblings"]
    assert len(got) == len(want)
    f1 = [c for c in table.columns if "F1" in c or c == "f1"][0]
    assert sorted(got[f1].round(6)) == sorted(want.f1.round(6))
    captions = " ".join(c.value for c in at.sidebar.caption).replace("\\", "")
    assert "aggregate analysis (counts) of 2 runs on 1,000 documents" in captions
    assert "1,000 documents" in texts(at)


@pytest.mark.parametrize("page", ["views/tree.py", "views/compare.py", "views/slices.py", "views/export.py"])
def test_the_views_aggregates_feed_draw_without_error(aggregate_file, page):
    at = opened(aggregate_file, page)
    assert not [e.value for e in at.error if "fault in cophe" in e.value]  # the error panel of a crash


@pytest.mark.parametrize(
    "page, what",
    [
        ("views/document.py", "One document"),
        ("views/threshold.py", "Choosing a threshold"),
        ("views/metrics.py", "The ICM paper's metrics"),
    ],
)
def test_views_that_need_documents_codes_say_so(aggregate_file, page, what):
    at = opened(aggregate_file, page)
    assert f"{what} is not available for an aggregate analysis" in texts(at)


def test_a_code_slice_of_an_aggregate_restricts_the_levels_page(scoring, aggregate_file):
    at = opened(aggregate_file)
    at.selectbox(key="slice_dimension").set_value("code_frequency").run()
    at.radio(key="slice_name").set_value("codes:freq:10,100:0").run()
    assert not at.exception, [e.value for e in at.exception]
    from cophe_core.breakdown.slices import code_frequency, code_frequency_slices, codes_in_play, restrict

    corpus = scoring.corpus
    rare = code_frequency_slices(
        code_frequency(corpus.gold), (10, 100), in_play=codes_in_play(corpus.gold, *corpus.runs.values())
    )[0]
    want = restrict(scoring.evaluation("siblings"), rare).score("cophe").f1
    headline = at.table[0].value
    assert f"{want:.3f}" in headline.to_string()


def test_the_slices_page_gives_values_without_intervals(aggregate_file):
    at = opened(aggregate_file, "views/slices.py")
    assert "No intervals: an aggregate analysis" in texts(at)


def test_the_tree_of_an_aggregate_gives_a_family_counts_not_its_documents(scoring, aggregate_file):
    at = opened(aggregate_file)
    onto = scoring.corpus.ontology
    at.session_state["focus"] = onto.codes["428"]
    goto(at, "views/tree.py").run()
    assert not at.exception, [e.value for e in at.exception]
    row = scoring.evaluation("siblings", max_level="chapter").nodes.set_index("node").loc[onto.codes["428"]]
    said = texts(at)
    assert f"**{row.gold:,}**" in said and f"**{row.docs_over:,}** documents" in said
    assert "an aggregate analysis holds counts only" in said
    assert not any("Documents behind" in h.value for h in at.subheader)
    assert any(h.value.startswith("Counts of 428") for h in at.subheader)


def test_compare_on_a_slice_of_an_aggregate_says_it_is_not_available(aggregate_file):
    at = opened(aggregate_file)
    at.selectbox(key="slice_dimension").set_value("code_frequency").run()
    goto(at, "views/compare.py").run()
    assert not at.exception
    assert "Comparing runs on a slice of an aggregate analysis is not available" in texts(at)


def test_the_families_that_changed_come_without_tests(aggregate_file):
    at = opened(aggregate_file, "views/compare.py")
    assert "no test: an aggregate analysis's family counts are summed over the documents" in texts(at)


def test_a_damaged_aggregate_is_a_panel_naming_it(aggregate_file):
    import io
    import zipfile

    src = zipfile.ZipFile(io.BytesIO(aggregate_file))
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w") as z:
        for info in src.infolist():
            data = src.read(info)
            z.writestr(info, data[:-5] + b"xxxxx" if info.filename == "counts.parquet" else data)
    at = run_app()
    at.radio(key="source").set_value("Open a saved analysis").run()
    at.file_uploader(key="analysis_file").set_value(("year.cophe", out.getvalue(), "application/zip")).run()
    assert not at.exception
    assert any(
        "year.cophe: counts.parquet does not match its size and SHA-256" in e.value.replace("\\", "")
        for e in at.error
    )


def test_an_upload_over_its_uploaders_limit_is_refused_naming_its_size():
    """The server takes files up to the largest uploader's limit (an analysis's); each uploader's own is
    checked again on the server, for a request that bypassed the browser's check."""
    big = b"doc_id,code\n" + b"1,401.9\n" * (51 * 10**6 // 8)  # 51 MB of 10^6 bytes, the unit on screen
    at = run_app()
    at.radio(key="source").set_value("Upload files").run()
    at.file_uploader(key="gold_file").set_value(("huge.csv", big, "text/csv"))
    at.file_uploader(key="run_files").set_value([("run.csv", b"doc_id,code\n1,401.9\n", "text/csv")])
    at.run()
    assert not at.exception
    said = [e.value.replace("\\", "") for e in at.error]
    assert any(s.startswith("huge.csv: 51.0 MB; this upload takes files of at most 50 MB") for s in said), (
        said
    )


def test_an_analysis_over_its_limit_is_refused(aggregate_file, monkeypatch):
    from cophe_dashboard import sidebar

    monkeypatch.setattr(sidebar, "MAX_ANALYSIS_MB", 1)  # the sample's aggregate is about 1 MB
    at = run_app()
    at.radio(key="source").set_value("Open a saved analysis").run()
    at.file_uploader(key="analysis_file").set_value(
        ("year.cophe", aggregate_file + b"\0" * 2**20, "application/zip")
    )
    at.run()
    assert not at.exception
    said = [e.value.replace("\\", "") for e in at.error]
    assert any(
        re.match(r"year.cophe: \d+\.\d MB; this upload takes files of at most 1 MB", s) for s in said
    ), said


def test_a_large_aggregate_resamples_on_request(aggregate_file, monkeypatch):
    from cophe_dashboard import state

    monkeypatch.setattr(state, "ON_REQUEST_ABOVE", 1_000)  # the sample's 1,000 documents × 2 runs is "large"
    at = opened(aggregate_file)
    assert "on request" in at.table[0].value.to_string()
    at.toggle(key="levels_agg_ci").set_value(True).run()
    assert "on request" not in at.table[0].value.to_string() and not at.exception
    goto(at, "views/compare.py").run()
    assert not at.exception, [e.value for e in at.exception]
    said = texts(at)
    assert "are computed on request (Compute intervals and tests, above)" in said
    assert "Tested on request" in said
    at.toggle(key="cmp_agg_tests").set_value(True).run()
    assert not at.exception and "Tested on request" not in texts(at)
