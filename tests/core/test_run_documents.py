"""A run's figures belong to that run (issue 24, point 4): each run is evaluated on the gold standard's
documents and its own, whichever other runs are scored beside it; comparisons use the union of the two runs'."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from sklearn.metrics import f1_score
from sklearn.preprocessing import MultiLabelBinarizer

from cophe_core import score_files
from cophe_core.breakdown.compare import disagreements
from cophe_core.breakdown.families import family_changes
from cophe_core.breakdown.slices import Slice, restrict
from cophe_core.breakdown.stats import (
    bootstrap,
    bootstrap_runs,
    compare_runs,
    paired_bootstrap,
    randomisation_test,
)
from cophe_core.metrics import on_shared_documents
from cophe_core.scale.aggregate import aggregate_scoring, write_aggregate
from cophe_core.scale.aggregate_reader import read_aggregate
from cophe_core.scale.pipeline import score_dataset
from cophe_core.scoring.suite import per_document, suite
from tests.conftest import examples

GOLD = b"doc_id,code\n1,401.9\n3,250.00\n"
RUN_A = b"doc_id,code\n1,401.9\n3,250.01\n"
RUN_B = b"doc_id,code\n1,401.9\n2,428.0\n3,250.00\n2,XYZ\n"  # document 2 is B's alone; XYZ is rejected
CODES = ["401.9", "401.1", "428.0", "428.1", "250.00", "250.01", "V45.81", "E849.7", "486"]


def csv(rows: list[tuple[str, str]]) -> bytes:
    return ("doc_id,code\n" + "".join(f"{d},{c}\n" for d, c in rows)).encode()


def same(a: pd.DataFrame, b: pd.DataFrame) -> None:
    pd.testing.assert_frame_equal(a.reset_index(drop=True), b.reset_index(drop=True), check_dtype=False)


def test_the_worked_example_example_based_f1_is_the_run_alone_and_scikit_learns():
    # gold {1: 401.9, 3: 250.00}, A {1: 401.9, 3: 250.01}: per document F1 1 and 0, mean 0.5
    mlb = MultiLabelBinarizer().fit([["401.9", "250.00", "250.01"]])
    want = f1_score(
        mlb.transform([["401.9"], ["250.00"]]), mlb.transform([["401.9"], ["250.01"]]), average="samples"
    )
    assert want == 0.5
    alone = score_files(GOLD, {"A": RUN_A}).evaluation("A")
    beside = score_files(GOLD, {"A": RUN_A, "B": RUN_B}).evaluation("A")
    assert suite(alone)["eb_f"] == suite(beside)["eb_f"] == want  # beside B it was 0.667 (B's 2 as 1)
    assert beside.to_dict()["documents"] == 2 and beside.docs.tolist() == ["1", "3"]


# ------------------------------------------------------------------ every figure, alone and beside others
doc_ids = st.integers(0, 9).map(str)
label_rows = st.lists(st.tuples(doc_ids, st.sampled_from(CODES)), min_size=1, max_size=14)


def figures(ev) -> dict:
    """Every figure of an evaluation that must not depend on the runs beside it."""
    return {
        "dict": ev.to_dict(),
        "tables": [ev.levels_table, ev.macro_table, ev.nodes, ev.documents],
        "suite": suite(ev),
        "per_document": per_document(ev),
        "bootstrap": bootstrap(ev, n_resamples=20, seed=1, with_suite=True),
    }


def assert_same_figures(a: dict, b: dict) -> None:
    assert a["dict"] == b["dict"]
    for x, y in zip(a["tables"], b["tables"]):
        same(x, y)
    assert a["suite"].keys() == b["suite"].keys()
    np.testing.assert_array_equal(list(a["suite"].values()), list(b["suite"].values()))
    same(a["per_document"], b["per_document"])
    same(a["bootstrap"], b["bootstrap"])


@settings(max_examples=examples(25), deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(gold=label_rows, runs=st.lists(label_rows, min_size=2, max_size=3))
def test_every_figure_of_a_run_is_the_same_alone_and_beside_other_runs(gold, runs):
    named = {f"R{i}": csv(rows) for i, rows in enumerate(runs)}
    together = score_files(csv(gold), named)
    for name, data in named.items():
        alone = score_files(csv(gold), {name: data}, ontology=together.corpus.ontology)
        assert_same_figures(figures(together.evaluation(name)), figures(alone.evaluation(name)))
    # the same runs' intervals drawn together (runs on the same documents share their resamples)
    evs = {r: together.evaluation(r) for r in named}
    for r, table in bootstrap_runs(evs, n_resamples=20, seed=2).items():
        same(table, bootstrap(evs[r], n_resamples=20, seed=2))


def test_a_scored_run_decides_and_ranks_the_same_beside_another_run():
    scores = b"doc_id,code,score\n1,401.9,0.9\n3,250.01,0.6\n3,250.00,0.4\n"
    alone = score_files(GOLD, {"S": scores}, threshold=0.5)
    beside = score_files(GOLD, {"S": scores, "B": RUN_B}, threshold=0.5)
    assert beside.evaluation("S").to_dict() == alone.evaluation("S").to_dict()
    assert beside.scored["S"].ranking() == alone.scored["S"].ranking()
    same(beside.scored["S"].curve(), alone.scored["S"].curve())


# ------------------------------------------------------------------ comparisons: the union of the two runs'
def test_a_paired_comparison_uses_both_runs_documents_whatever_else_is_loaded():
    c = b"doc_id,code\n1,401.9\n3,250.00\n4,486\n"  # a third run with a document of its own
    pair = score_files(GOLD, {"A": RUN_A, "B": RUN_B})
    three = score_files(GOLD, {"A": RUN_A, "B": RUN_B, "C": c})
    a, b = three.evaluation("A"), three.evaluation("B")
    shared = on_shared_documents({"A": a, "B": b})
    assert shared["A"].docs.tolist() == ["1", "2", "3"]  # gold ∪ A ∪ B, not C's 4
    # A on the union predicts nothing on B's document 2, whose gold is empty
    assert shared["A"].documents.set_index("doc_id").loc["2", ["n_gold", "n_predicted"]].tolist() == [0, 0]
    pa, pb = pair.evaluation("A"), pair.evaluation("B")
    same(paired_bootstrap(a, b, n_resamples=50), paired_bootstrap(pa, pb, n_resamples=50))
    same(randomisation_test(a, b, n_permutations=50), randomisation_test(pa, pb, n_permutations=50))
    same(
        compare_runs({"A": a, "B": b}, n_resamples=50),
        compare_runs({"A": pa, "B": pb}, n_resamples=50),
    )
    same(
        family_changes(a, b, "e0", n_resamples=50),
        family_changes(pa, pb, "e0", n_resamples=50),
    )
    assert disagreements(a, b).doc_id.tolist() == ["3", "2"]


def test_evaluations_of_other_gold_standards_are_not_compared():
    a = score_files(GOLD, {"A": RUN_A}).evaluation("A")
    other = score_files(b"doc_id,code\n1,401.1\n3,250.00\n", {"A": RUN_A}).evaluation("A")
    with pytest.raises(ValueError, match="same gold standard"):
        paired_bootstrap(a, other, n_resamples=10)


def test_a_document_slice_over_the_corpus_is_read_on_the_runs_own_documents():
    s = score_files(GOLD, {"A": RUN_A, "B": RUN_B})
    # corpus documents 1, 2, 3: the slice of documents 2 and 3
    part = Slice("d", "Documents", "2 and 3", "documents", np.array([False, True, True]), 2)
    assert restrict(s.evaluation("A"), part).docs.tolist() == ["3"]
    assert restrict(s.evaluation("B"), part).docs.tolist() == ["2", "3"]


# ------------------------------------------------------------------ the aggregate analysis and streaming
def test_an_aggregate_files_each_warning_and_row_under_its_own_run():
    s = score_files(GOLD, {"A": RUN_A, "B": RUN_B})
    agg = read_aggregate(write_aggregate(aggregate_scoring(s)))
    assert agg.warnings["A"] == [] and agg.evaluation("A").rejected.empty
    assert [w.split(";")[0] for w in agg.warnings["B"]] == [
        "B: 1 document is not in the gold standard",
        "B: 1 row not scored",
    ]
    assert agg.evaluation("B").rejected.value.tolist() == ["XYZ"]


def test_an_aggregate_gives_each_run_its_own_documents():
    s = score_files(GOLD, {"A": RUN_A, "B": RUN_B})
    agg = read_aggregate(write_aggregate(aggregate_scoring(s)), name="two.cophe")
    assert agg.n_documents == 3
    for run in ("A", "B"):
        want, got = s.evaluation(run), agg.evaluation(run, max_level="block")
        assert got.to_dict() == want.to_dict()
        assert got.docs.tolist() == want.docs.tolist()
        same(got.documents, want.documents)
        same(bootstrap(got, n_resamples=50, seed=4), bootstrap(want, n_resamples=50, seed=4))
    assert agg.evaluation("A").to_dict()["documents"] == 2
    same(
        paired_bootstrap(agg.evaluation("A"), agg.evaluation("B"), n_resamples=50),
        paired_bootstrap(s.evaluation("A"), s.evaluation("B"), n_resamples=50),
    )


def test_streamed_runs_agree_with_the_in_memory_runs(tmp_path):
    runs = {"A": RUN_A, "B": RUN_B, "C": b"doc_id,code\n1,401.1\n4,486\n5,428.0\n"}
    (tmp_path / "gold.csv").write_bytes(GOLD)
    memory = score_files(GOLD, runs)
    ontology = memory.corpus.ontology
    for name, data in runs.items():
        (tmp_path / f"{name}.csv").write_bytes(data)
        streamed = score_dataset(
            tmp_path / "gold.csv", tmp_path / f"{name}.csv", ontology=ontology, chunk_rows=2, suite=True
        )
        ev = memory.evaluation(name)
        assert streamed.to_dict() == ev.to_dict()
        same(streamed.documents, ev.documents)
        assert streamed.suite == pytest.approx(suite(ev))
