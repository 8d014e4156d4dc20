"""A rerun that changes nothing recomputes nothing (issue 28, point 5): Scores by level and the code-family tree
find every table and figure they drew in the one cache, and draw the same thing again.

Each rerun of a page is a click somewhere on it (a selectbox, an expander's table, a breadcrumb); on a
MIMIC-sized upload the tree's figure (2,000 tiles), the sentences of the within-family gaps and the documents
behind a family took most of such a rerun's time when they were computed anew every time.
"""

from __future__ import annotations

import gc
import threading
from collections import Counter

import pytest

from cophe_core import score_files
from cophe_core.metrics import Evaluation
from cophe_dashboard import loading, memo
from cophe_dashboard.views import levels, tree
from tests.app.conftest import SAMPLE, plotly_specs, run_app, upload


@pytest.fixture
def calls(monkeypatch) -> Counter:
    """Counts the calls of the page functions whose results the pages keep (patched where the views look
    them up, before the first run: the one cache keys a result by the function it was asked for)."""
    seen: Counter = Counter()

    def counting(module, name):
        plain = getattr(module, name)

        def wrapper(*args, **kwargs):
            seen[name] += 1
            return plain(*args, **kwargs)

        monkeypatch.setattr(module, name, wrapper)

    for name in ("gap_statement", "headlines", "levels_points", "levels_side_by_side"):
        counting(levels, name)
    for name in ("tree_figure", "per_gold_rates"):
        counting(tree, name)
    counting(Evaluation, "node_documents")
    return seen


def test_a_rerun_of_scores_by_level_recomputes_nothing(calls):
    at = run_app()
    first = dict(calls)
    assert first["gap_statement"] >= 1 and first["headlines"] >= 1 and first["levels_points"] == 1
    shown = drawn(at)
    at.run()
    assert not at.exception
    assert dict(calls) == first  # nothing computed again
    assert drawn(at) == shown


def drawn(at) -> list:
    """What the page shows: its text, tables and charts, as comparable values."""
    return [
        [m.value for m in at.markdown],
        [t.value.to_json() for t in at.table],
        [d.value.to_json() for d in at.dataframe],
        [c.proto.SerializeToString() for c in at.get("vega_lite_chart")],
    ]


def test_a_rerun_of_the_tree_recomputes_nothing(calls):
    onto = score_files(SAMPLE / "gold.csv", {"siblings": SAMPLE / "run_siblings.csv"}).corpus.ontology
    at = run_app("views/tree.py", focus=onto.codes["428"], run="siblings")
    first = dict(calls)
    assert {k: first.get(k) for k in ("tree_figure", "per_gold_rates", "node_documents")} == dict.fromkeys(
        ("tree_figure", "per_gold_rates", "node_documents"), 1
    )
    figure = plotly_specs(at)
    documents = next(d.value for d in at.dataframe if "gold_codes" in d.value.columns)
    at.run()
    assert not at.exception
    assert dict(calls) == first  # the figure, its rates and the documents behind 428: found, not made again
    assert plotly_specs(at) == figure
    assert next(d.value for d in at.dataframe if "gold_codes" in d.value.columns).equals(documents)


def test_runs_uploaded_before_the_gold_are_parsed_ahead_and_score_the_same(sample_bytes):
    # named otherwise than the bundled sample's files, which the app parsed when it opened
    runs = [(f"my_{n}", sample_bytes[n]) for n in ("run_siblings.csv", "run_overcoder.csv")]
    gold = ("my_gold.csv", sample_bytes["gold.csv"])
    at = run_app()
    at.radio(key="source").set_value("Upload files").run()
    kept = at.session_state["_memo"]
    sample = kept.count(loading._parsed)
    at.file_uploader(key="run_files").set_value([(n, b, "text/csv") for n, b in runs]).run()
    for work in kept.pending():
        work.result(60)
    assert kept.count(loading._parsed) == sample + 2  # both runs parsed while the gold is still to come
    at.file_uploader(key="gold_file").set_value((gold[0], gold[1], "text/csv")).run()
    assert not at.exception and kept.count(loading._parsed) == sample + 3
    at_once = upload(run_app(), gold, runs)  # every file at once: nothing parsed ahead
    assert drawn(at) == drawn(at_once)


def test_work_still_queued_ahead_is_computed_where_it_is_asked_for():
    """The one thread ahead may be busy with other work (the slices of the data opened before); a result
    queued behind it is computed at once when a view asks, not waited for."""
    m, gate, calls = memo.Memo(), threading.Event(), []

    def parsed(name):
        calls.append(name)
        return f"{name} parsed"

    m.ahead(gate.wait, 30)  # the thread ahead, busy
    m.ahead(parsed, "run.csv")  # queued behind it
    asked: list[str] = []
    view = threading.Thread(target=lambda: asked.append(m.get(parsed, "run.csv")))
    view.start()
    view.join(10)
    done_first = not view.is_alive()
    gate.set()
    view.join(30)
    for work in m.pending():
        work.result(30)
    assert done_first and asked == ["run.csv parsed"] and calls == ["run.csv"]  # computed once, here
    assert m.get(parsed, "run.csv") == "run.csv parsed" and calls == ["run.csv"]


def test_the_long_lived_objects_are_out_of_the_collectors_sight():
    """Streamlit collects the garbage after every run; the objects of the modules (most of those the collector
    tracks) are frozen once the app's modules are imported, so that a collection does not walk them again."""
    import cophe_dashboard.app  # noqa: F401 - importing it freezes what is there

    assert gc.get_freeze_count() > 10_000
