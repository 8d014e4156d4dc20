"""Typed results: frozen records in place of string-keyed dicts, per-node counts that add up over documents,
the decision of a scores run, and the verdict of a comparison."""

from __future__ import annotations

import dataclasses
import json

import numpy as np
import pandas as pd
import pytest

from cophe_core import score_files
from cophe_core.api import Decision, decide_run
from cophe_core.breakdown.stats import Outcome, Verdict, describe_difference, paired_significance, verdicts
from cophe_core.inputs.readers import read_input
from cophe_core.metrics import (
    DocumentCounts,
    MacroScore,
    NodeCounts,
    Score,
    evaluate,
    levels_table,
    macro_table,
    nodes_table,
    prf,
)
from tests.conftest import SAMPLE


@pytest.fixture(scope="module")
def sample():
    return score_files(
        SAMPLE / "gold.csv",
        {"overcoder": SAMPLE / "run_overcoder.csv", "siblings": SAMPLE / "run_siblings.csv"},
    )


def test_score_is_frozen_and_matches_the_levels_table(sample):
    ev = sample.evaluation("overcoder")
    s = ev.score("cophe", "e0")
    row = ev.levels_table.set_index(["measure", "level"]).loc[("cophe", "e0")]
    assert (s.tp, s.fp, s.fn) == (row.tp, row.fp, row.fn)
    assert (s.precision, s.recall, s.f1) == (row.precision, row.recall, row.f1)
    assert type(s.tp) is int and type(s.f1) is float  # plain numbers: JSON and == behave
    with pytest.raises(dataclasses.FrozenInstanceError):
        s.f1 = 1.0  # type: ignore[misc]
    assert json.loads(json.dumps(s.as_dict())) == s.as_dict()


def test_score_of_counts_by_hand():
    # Table 1 of the CoPHE paper, overall: TP 6, FP 5, FN 2
    s = Score.of(6, 5, 2)
    assert (s.precision, s.recall) == (6 / 11, 6 / 8)
    assert s.f1 == pytest.approx(2 * (6 / 11) * 0.75 / (6 / 11 + 0.75))
    assert Score.of(0, 0, 0) == Score(0, 0, 0, 0.0, 0.0, 0.0)


def test_dict_access_still_works_with_a_warning(sample):
    s = sample.evaluation("overcoder").score("flat")
    with pytest.warns(DeprecationWarning, match=r"Score\['f1'\] is deprecated: read the attribute \.f1"):
        assert s["f1"] == s.f1


def test_macro_score_is_the_macro_table_row(sample):
    ev = sample.evaluation("siblings")
    for (measure, level), row in ev.macro_table.set_index(["measure", "level"]).iterrows():
        m = ev.macro(measure, level)
        assert m == MacroScore(
            int(row.n_codes), row.macro_precision, row.macro_recall, row.macro_f1, row.macro_f1_of_means
        )
    # by hand: per-node F1 of 1 and 0 average to 0.5; the means' F1 is of P = R = 0.5
    m = MacroScore.of(np.array([1, 0]), np.array([0, 1]), np.array([0, 1]))
    assert (m.n_codes, m.precision, m.recall, m.f1, m.f1_of_means) == (2, 0.5, 0.5, 0.5, 0.5)
    with pytest.raises(KeyError, match="no cophe score at level 'nowhere'"):
        ev.macro("cophe", "nowhere")


def test_document_counts_sum_to_the_micro_counts(sample):
    ev = sample.evaluation("overcoder")
    for measure, level in [("flat", "leaf"), ("cophe", "e0"), ("set_based", "block"), ("cophe", "overall")]:
        c = ev.document_counts(measure, level)
        assert isinstance(c, DocumentCounts) and len(c.tp) == len(ev.docs)
        s = ev.score(measure, level)
        assert (int(c.tp.sum()), int(c.fp.sum()), int(c.fn.sum())) == (s.tp, s.fp, s.fn), (measure, level)
        np.testing.assert_array_equal(c.f1, prf(c.tp, c.fp, c.fn)[2])
    with pytest.raises(KeyError):
        ev.document_counts("cophe", "nowhere")
    with pytest.raises(KeyError, match="no measure 'hamming'"):
        ev.document_counts("hamming")


def _halves(sample, run: str):
    """The run's evaluation and its two halves by document, on the same ontology."""
    ev = sample.evaluation(run)
    cut = len(ev.docs) // 3
    parts = [slice(0, cut), slice(cut, None)]
    return ev, [evaluate(ev.gold[p], ev.pred[p], ev.ontology, docs=ev.docs[p]) for p in parts]


@pytest.mark.parametrize("run", ["overcoder", "siblings"])
def test_node_counts_add_up_over_documents(sample, run):
    """The counts are sums over documents: those of two parts add up to the whole's, and so do every
    table made from them (what a streamed or distributed scorer relies on)."""
    ev, (a, b) = _halves(sample, run)
    total = a.node_counts + b.node_counts
    for f in dataclasses.fields(NodeCounts):
        np.testing.assert_array_equal(getattr(total, f.name), getattr(ev.node_counts, f.name), err_msg=f.name)
    pd.testing.assert_frame_equal(levels_table(total, ev.ontology, ev.levels), ev.levels_table)
    pd.testing.assert_frame_equal(macro_table(total, ev.ontology, ev.levels), ev.macro_table)
    pd.testing.assert_frame_equal(nodes_table(total, ev.ontology), ev.nodes)


def test_node_counts_pad_for_nodes_added_later():
    a = NodeCounts.zeros(2)
    b = dataclasses.replace(NodeCounts.zeros(3), tp=np.array([0, 0, 4]))
    assert (a + b).tp.tolist() == [0, 0, 4] and (b + a).n_nodes == 3
    with pytest.raises(ValueError, match="cannot shrink"):
        b.padded(2)
    # counts without documents over and under stay without them
    partial = dataclasses.replace(a, docs_over=None, docs_under=None)
    assert (partial + a).docs_over is None
    with pytest.raises(ValueError, match="docs_over"):
        from cophe_core.ontology import icd9_ontology

        nodes_table(partial, icd9_ontology())


def test_decision_is_a_record_and_its_json_keeps_its_shape():
    gold = read_input(b"doc_id,code\n1,401.9\n2,428.0\n")
    scores = read_input(b"doc_id,code,score\n1,401.9,0.8\n1,428.0,0.3\n2,428.0,0.6\n")
    _, d = decide_run(gold, scores, threshold=0.5)
    assert isinstance(d, Decision) and d.rule == ("threshold", 0.5) and d.tuned_on is None
    assert list(d.to_dict()) == ["threshold", "top_k", "ranking"]
    _, k = decide_run(gold, scores, top_k=1)
    assert k.rule == ("top_k", 1) and k.ranking["p@5"] == pytest.approx(0.2)
    _, t = decide_run(gold, scores, tune_on=(gold, scores))
    assert t.tuned_on is not None and t.tuned_on.measure == "cophe" and t.threshold is not None
    out = t.to_dict()
    assert list(out) == ["tuned_on", "threshold", "top_k", "ranking"]
    assert out["tuned_on"]["curve"]["threshold"] == t.tuned_on.curve.threshold.tolist()
    json.dumps(out)


def test_verdicts_agree_with_the_table_and_the_sentence(sample):
    a, b = sample.evaluation("overcoder"), sample.evaluation("siblings")
    table = paired_significance(a, b, n_resamples=200, seed=0)
    vs = verdicts(a, b, n_resamples=200, seed=0)
    assert [v.figure for v in vs] == table.figure.tolist()
    for v, row in zip(vs, table.itertuples()):
        assert (v.delta, v.low, v.high, v.p_value) == (row.delta, row.low, row.high, row.p_value)
        assert v.describe("A", "B") == describe_difference(row, "A", "B")
    assert {v.outcome for v in vs} <= set(Outcome)


def test_verdict_by_hand():
    better = Verdict("cophe overall f1", 0.6, 0.65, 0.05, 0.01, 0.09, 0.001)
    assert better.outcome is Outcome.BETTER and better.outcome == "better"
    assert better.describe("A", "B", figure="CoPHE F1").startswith("CoPHE F1: B − A = +0.050")
    worse = dataclasses.replace(better, delta=-0.05, low=-0.09, high=-0.01)
    assert worse.outcome is Outcome.WORSE
    # an interval across 0, or p at alpha, is no clear difference
    assert dataclasses.replace(better, low=-0.01).outcome is Outcome.NO_CLEAR
    assert dataclasses.replace(better, p_value=0.05).outcome is Outcome.NO_CLEAR
    # a figure where lower is better turns the outcome around
    assert dataclasses.replace(better, figure="eb_hamm").outcome is Outcome.WORSE


def test_documents_long_has_stable_columns_and_the_same_counts(sample):
    ev = sample.evaluation("siblings")
    long = ev.documents_long
    assert list(long.columns) == ["doc_id", "measure", "level", "tp", "fp", "fn"]
    assert len(long) == len(ev.docs) * (1 + 2 * len(ev.levels))
    wide = ev.documents.set_index("doc_id")
    for (measure, level), part in long.groupby(["measure", "level"], sort=False):
        infix = {"flat": "flat", "set_based": f"{level}_set", "cophe": level}[measure]
        for k in ("tp", "fp", "fn"):
            np.testing.assert_array_equal(
                part.set_index("doc_id")[k].loc[wide.index].to_numpy(), wide[f"{infix}_{k}"].to_numpy()
            )
    sums = long.groupby(["measure", "level"])[["tp", "fp", "fn"]].sum()
    for (measure, level), row in sums.iterrows():
        s = ev.score(measure, level)
        assert (row.tp, row.fp, row.fn) == (s.tp, s.fp, s.fn)
