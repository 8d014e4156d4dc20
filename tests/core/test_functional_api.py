"""The scikit-learn-style functions on indicator matrices (cophe_core.metrics): hand-worked values, the
file-based path on the sample, scikit-learn and a naive loop as oracles, make_scorer in a cross-validation,
and every refusal."""

from __future__ import annotations

from collections import Counter

import numpy as np
import pandas as pd
import pytest
import scipy.sparse as sp
from hypothesis import given, settings
from hypothesis import strategies as st
from sklearn.linear_model import LogisticRegression
from sklearn.metrics import make_scorer, precision_recall_fscore_support
from sklearn.model_selection import KFold, cross_val_score
from sklearn.multiclass import OneVsRestClassifier
from sklearn.preprocessing import MultiLabelBinarizer

from cophe_core import score_files
from cophe_core.metrics import (
    cophe_score,
    cophe_score_from_scores,
    precision_recall_fscore_hierarchical,
    precision_recall_fscore_hierarchical_from_scores,
    set_based_score,
)
from cophe_core.ontology import icd9_ontology
from cophe_core.scoring.labels import resolve_codes
from tests.conftest import SAMPLE, examples

LABELS = ["401.9", "401.1", "428.0", "250.00", "38.93"]


def binarize(frame: pd.DataFrame, docs: list[str], labels: list[str]) -> sp.csr_matrix:
    """A (doc_id, code) table as a documents × labels indicator matrix (scikit-learn's MultiLabelBinarizer)."""
    sets = (
        frame.groupby("doc_id")
        .code.apply(set)
        .reindex(docs)
        .apply(lambda s: s if isinstance(s, set) else set())
    )
    return MultiLabelBinarizer(classes=labels, sparse_output=True).fit_transform(sets).tocsr()


@pytest.fixture(scope="module")
def sample():
    """The ICD-9 sample's gold standard and siblings run as indicator matrices, over the codes that place."""
    gold = pd.read_csv(SAMPLE / "gold.csv", dtype=str)
    run = pd.read_csv(SAMPLE / "run_siblings.csv", dtype=str)
    codes = sorted(set(gold.code) | set(run.code))
    placed = resolve_codes(codes, icd9_ontology())
    labels = [c for c, n in zip(codes, placed.nodes) if n >= 0]
    docs = sorted(set(gold.doc_id) | set(run.doc_id))
    return binarize(gold, docs, labels), binarize(run, docs, labels), labels


def test_hand_worked_right_family_wrong_code():
    """Document 1: gold 401.9 and 428.0, predicted 401.1 and 428.0; document 2: gold 428.0, nothing
    predicted. At the category (e0): 401 TP 1; 428 TP 1 and FN 1 → P = 2/2, R = 2/3, F1 = 4/5. At the code
    level (e1): 428.0 TP 1, 401.9 FN, 401.1 FP, 428.0 FN → P = 1/2, R = 1/3, F1 = 2/5."""
    y_true = np.array([[1, 0, 1, 0, 0], [0, 0, 1, 0, 0]])
    y_pred = np.array([[0, 1, 1, 0, 0], [0, 0, 0, 0, 0]])
    kw = {"labels": LABELS, "ontology": "icd9"}
    assert precision_recall_fscore_hierarchical(y_true, y_pred, level="e0", **kw) == pytest.approx(
        (1, 2 / 3, 0.8)
    )
    assert precision_recall_fscore_hierarchical(y_true, y_pred, level="e1", **kw) == pytest.approx(
        (0.5, 1 / 3, 0.4)
    )
    # macro at e0: 401 (1, 1, 1) and 428 (1, 1/2, 2/3)
    macro = precision_recall_fscore_hierarchical(y_true, y_pred, level="e0", average="macro", **kw)
    assert macro == pytest.approx((1, 0.75, (1 + 2 / 3) / 2))
    # sparse input and booleans give the same
    assert cophe_score(sp.csr_matrix(y_true), y_pred.astype(bool), level="e0", **kw) == pytest.approx(0.8)


def test_counts_preserved_where_sets_are_not():
    """Two gold codes of 401, one predicted: CoPHE at e0 TP 1, FN 1 (F1 2/3); set-based TP 1 (F1 1)."""
    y_true, y_pred = np.array([[1, 1, 0, 0, 0]]), np.array([[1, 0, 0, 0, 0]])
    kw = {"labels": LABELS, "ontology": "icd9", "level": "e0"}
    assert cophe_score(y_true, y_pred, **kw) == pytest.approx(2 / 3)
    assert set_based_score(y_true, y_pred, **kw) == 1.0


@pytest.mark.parametrize("zero_division", [0.0, 1.0])
def test_zero_division_follows_scikit_learn(zero_division):
    """Nothing predicted and nothing in the gold standard: every ratio is zero_division. Gold only: P is
    zero_division, R and F1 are 0 — as scikit-learn's precision_recall_fscore_support gives them."""
    kw = {"labels": LABELS, "ontology": "icd9", "level": "e0", "zero_division": zero_division}
    empty = np.zeros((2, 5))
    assert precision_recall_fscore_hierarchical(empty, empty, **kw) == (zero_division,) * 3
    gold = np.array([[1, 0, 0, 0, 0], [0, 0, 0, 0, 0]])
    ours = precision_recall_fscore_hierarchical(gold, empty, **kw)
    theirs = precision_recall_fscore_support(gold, empty, average="micro", zero_division=zero_division)[:3]
    assert ours == pytest.approx(theirs)


@pytest.mark.parametrize("level", ["overall", "e2", "e1", "e0", "block"])
@pytest.mark.parametrize("measure", ["cophe", "set_based"])
def test_agrees_with_the_file_based_path_on_the_sample(sample, measure, level):
    y_true, y_pred, labels = sample
    ev = score_files(SAMPLE / "gold.csv", {"run": SAMPLE / "run_siblings.csv"}, ontology="icd9").evaluation(
        "run"
    )
    kw = {"labels": labels, "ontology": "icd9", "measure": measure, "level": level}
    expected = ev.score(measure, level)
    assert precision_recall_fscore_hierarchical(y_true, y_pred, **kw) == pytest.approx(
        (expected.precision, expected.recall, expected.f1), abs=1e-12
    )
    if level != "overall":
        row = ev.macro_table[(ev.macro_table.measure == measure) & (ev.macro_table.level == level)].iloc[0]
        macro = precision_recall_fscore_hierarchical(y_true, y_pred, average="macro", **kw)
        assert macro == pytest.approx((row.macro_precision, row.macro_recall, row.macro_f1), abs=1e-12)


def test_set_based_at_the_category_is_scikit_learn_on_the_categories(sample):
    """An independent formulation: each code's category is its text before the dot; the set-based measure
    at e0 is scikit-learn's micro P/R/F1 of the category indicator matrices."""
    y_true, y_pred, labels = sample
    families = sorted({c.split(".")[0] for c in labels})
    to_family = sp.csr_matrix(
        (np.ones(len(labels)), (np.arange(len(labels)), [families.index(c.split(".")[0]) for c in labels])),
        shape=(len(labels), len(families)),
    )
    fam_true, fam_pred = ((y_true @ to_family) > 0).astype(int), ((y_pred @ to_family) > 0).astype(int)
    theirs = precision_recall_fscore_support(fam_true, fam_pred, average="micro")[:3]
    ours = precision_recall_fscore_hierarchical(
        y_true, y_pred, labels=labels, ontology="icd9", measure="set_based", level="e0"
    )
    assert ours == pytest.approx(theirs, abs=1e-12)


codes_of_rows = st.lists(st.lists(st.sampled_from(LABELS), unique=True, max_size=5), min_size=1, max_size=8)


@settings(max_examples=examples(60), deadline=None)
@given(gold=codes_of_rows, pred=codes_of_rows)
def test_cophe_at_the_category_is_a_naive_count(gold, pred):
    """CoPHE at e0 against a loop over documents and categories: TP = Σ min(x, y), FP = Σ max(x − y, 0),
    FN = Σ max(y − x, 0)."""
    n = min(len(gold), len(pred))
    gold, pred = gold[:n], pred[:n]
    tp = fp = fn = 0
    for g, p in zip(gold, pred):
        y, x = Counter(c.split(".")[0] for c in g), Counter(c.split(".")[0] for c in p)
        for family in set(x) | set(y):
            tp, fp, fn = (
                tp + min(x[family], y[family]),
                fp + max(x[family] - y[family], 0),
                fn + max(y[family] - x[family], 0),
            )
    matrix = MultiLabelBinarizer(classes=LABELS)
    y_true, y_pred = matrix.fit_transform(gold), matrix.fit_transform(pred)
    got = precision_recall_fscore_hierarchical(y_true, y_pred, labels=LABELS, ontology="icd9", level="e0")
    p = tp / (tp + fp) if tp + fp else 0.0
    r = tp / (tp + fn) if tp + fn else 0.0
    f = 2 * tp / (2 * tp + fp + fn) if tp + fp + fn else 0.0
    assert got == pytest.approx((p, r, f))


def test_scores_decided_as_the_file_based_path_decides_them():
    """The sample's probability run at threshold 0.5 and at top-3, against score_files with the same rule."""
    gold = pd.read_csv(SAMPLE / "gold.csv", dtype=str)
    scores = pd.read_csv(SAMPLE / "scores_model.csv", dtype={"doc_id": str, "code": str})
    codes = sorted(set(gold.code) | set(scores.code))
    placed = resolve_codes(codes, icd9_ontology())
    labels = [c for c, n in zip(codes, placed.nodes) if n >= 0]
    docs = sorted(set(gold.doc_id) | set(scores.doc_id))
    y_true = binarize(gold, docs, labels)
    kept = scores[scores.code.isin(labels)]
    y_score = sp.csr_matrix(
        (kept.score, (pd.Index(docs).get_indexer(kept.doc_id), pd.Index(labels).get_indexer(kept.code))),
        shape=(len(docs), len(labels)),
    )
    for rule in ({"threshold": 0.5}, {"top_k": 3}):
        ev = score_files(SAMPLE / "gold.csv", {"m": SAMPLE / "scores_model.csv"}, ontology="icd9", **rule)
        expected = ev.evaluation("m").score("cophe", "e0")
        got = precision_recall_fscore_hierarchical_from_scores(
            y_true, y_score, labels=labels, ontology="icd9", level="e0", **rule
        )
        assert got == pytest.approx((expected.precision, expected.recall, expected.f1), abs=1e-12), rule


def test_make_scorer_in_a_cross_validation(sample):
    """cophe_score as a scikit-learn scorer: each fold's score is the function on that fold's predictions,
    and the probability variant works through response_method="predict_proba"."""
    y_true, _, labels = sample
    frequent = np.argsort(-np.asarray(y_true.sum(axis=0)).ravel(), kind="stable")[:12]
    y = y_true[:400][:, frequent].toarray()
    names = [labels[i] for i in frequent]
    rng = np.random.default_rng(0)
    x = y + rng.normal(0, 0.8, size=y.shape)  # features that carry the labels, with noise
    model = OneVsRestClassifier(LogisticRegression(max_iter=200))
    folds = KFold(n_splits=3, shuffle=True, random_state=0)
    kw = {"labels": names, "ontology": "icd9", "level": "e0"}
    scores = cross_val_score(model, x, y, cv=folds, scoring=make_scorer(cophe_score, **kw))
    by_hand = [
        cophe_score(y[test], model.fit(x[train], y[train]).predict(x[test]), **kw)
        for train, test in folds.split(x)
    ]
    assert scores.tolist() == pytest.approx(by_hand, abs=1e-12)
    assert min(scores) > 0.3 and max(scores) < 1.0  # a real model, neither broken nor perfect
    proba = make_scorer(cophe_score_from_scores, response_method="predict_proba", threshold=0.5, **kw)
    assert cross_val_score(model, x, y, cv=folds, scoring=proba).tolist() == pytest.approx(by_hand, abs=1e-12)


@pytest.mark.parametrize(
    ("change", "message"),
    [
        ({"y_pred": np.zeros((2, 4))}, r"y_pred has shape \(2, 4\); it needs one column per label \(5\)"),
        ({"y_pred": np.full((2, 5), 0.5)}, r"y_pred must hold 0/1 indicators; for probabilities use"),
        ({"y_true": np.full((2, 5), 2)}, r"y_true holds values outside \[0, 1\]"),
        ({"y_pred": np.zeros((3, 5))}, r"y_true \(2, 5\) and y_pred \(3, 5\) must have the same shape"),
        (
            {"labels": ["401.9", "401.9", "428.0", "250.00", "38.93"]},
            r"labels must be distinct; repeated: '401.9'",
        ),
        (
            {"labels": ["401.9", "XYZ", "428.0", "250.00", "38.93"]},
            r"1 of the labels cannot be placed in icd9: 'XYZ'",
        ),
        (
            {"labels": ["401.9", "4019", "428.0", "250.00", "V45.81"], "system": "diagnosis"},
            r"labels name the same code twice: '4019' is 401.9",
        ),
        ({"average": "macro"}, r"a macro average is per level: give level= one of e2, e1, e0, block"),
        ({"level": "chapter"}, r"level must be 'overall' or one of e2, e1, e0, block \(up to max_level\)"),
        ({"measure": "flat"}, r"measure must be one of cophe, set_based, not 'flat'"),
        ({"average": "weighted"}, r"average must be one of micro, macro, not 'weighted'"),
    ],
)
def test_refusals_name_what_is_wrong(change, message):
    args = {
        "y_true": np.zeros((2, 5)),
        "y_pred": np.zeros((2, 5)),
        "labels": LABELS,
        "ontology": "icd9",
    } | change
    with pytest.raises(ValueError, match=message):
        precision_recall_fscore_hierarchical(args.pop("y_true"), args.pop("y_pred"), **args)


def test_scores_outside_the_unit_interval_and_bad_rules_are_refused():
    kw = {"labels": LABELS, "ontology": "icd9"}
    with pytest.raises(ValueError, match=r"y_score holds values outside \[0, 1\]$"):
        cophe_score_from_scores(np.zeros((1, 5)), np.full((1, 5), 3.0), threshold=0.5, **kw)
    with pytest.raises(ValueError, match="threshold"):
        cophe_score_from_scores(np.zeros((1, 5)), np.zeros((1, 5)), threshold=0.5, top_k=2, **kw)
