"""Right family, wrong code (:mod:`cophe_core.breakdown.substitutions`): hand-worked cases, a naive
sequential greedy loop, invariants (hypothesis) and the substitutions planted in the sample."""

from __future__ import annotations

import random
from collections import defaultdict
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from cophe_core import load_ontology, score_files
from cophe_core.breakdown.substitutions import (
    DOCUMENT_COLUMNS,
    PAIR_COLUMNS,
    TABLE_COLUMNS,
    document_substitutions,
    substitution_pairs,
    substitution_summary,
    substitution_table,
)
from cophe_core.inputs.synthetic import PLANTED, generate, generate_gold, generate_run
from cophe_core.ontology import icd9_ontology
from cophe_core.ontology.icd9 import parse_code
from tests.conftest import examples, score_pairs

SAMPLES = Path(__file__).resolve().parents[2] / "sample_data"
_O = icd9_ontology()


def triples(ev, **kw) -> list[tuple[str, str, str]]:
    p = substitution_pairs(ev, **kw)
    return list(zip(p.doc_id, p.gold_code, p.written_code))


# ------------------------------------------------------------------ naive sequential greedy
def _path(code: str) -> dict[str, str]:
    """{level: ancestor key} from the code's string form, not the ontology arrays."""
    return dict(parse_code(code).path)


def naive_pairs(gold: dict[str, set[str]], pred: dict[str, set[str]]) -> list[tuple[str, str, str]]:
    """ICD-9 families at e0: per document, every candidate in (shared depth desc, gold, written)
    order, taken when neither code is taken yet."""
    out = []
    for doc in sorted(set(gold) | set(pred)):
        g_codes, p_codes = gold.get(doc, set()), pred.get(doc, set())
        cands = []
        for g in g_codes - p_codes:
            pg = _path(g)
            for w in p_codes - g_codes:
                pw = _path(w)
                if pg["e0"] != pw["e0"]:
                    continue
                depth = sum(1 for lv in ("e2", "e1") if lv in pg and pg[lv] == pw.get(lv))
                cands.append((-depth, g, w))
        used_g: set[str] = set()
        used_w: set[str] = set()
        for _, g, w in sorted(cands):
            if g not in used_g and w not in used_w:
                used_g.add(g), used_w.add(w)
                out.append((doc, g, w))
    return sorted(out)


def as_sets(rows) -> dict[str, set[str]]:
    out: dict[str, set[str]] = defaultdict(set)
    for d, c in rows:
        out[d].add(c)
    return dict(out)


# ------------------------------------------------------------------ hand-worked cases
def test_worked_example_pairs_within_families_only():
    ev = score_pairs([("a", "428.21"), ("a", "401.9")], [("a", "428.22"), ("a", "401.1"), ("a", "250.00")])
    p = substitution_pairs(ev)
    assert list(p.columns) == PAIR_COLUMNS
    assert triples(ev) == [("a", "401.9", "401.1"), ("a", "428.21", "428.22")]
    assert list(p.family_code) == ["401", "428"]
    assert p.family.tolist() == [_O.node("e0", "401"), _O.node("e0", "428")]
    assert p.gold.tolist() == [_O.codes["401.9"], _O.codes["428.21"]]
    assert p.written.tolist() == [_O.codes["401.1"], _O.codes["428.22"]]
    assert substitution_summary(ev) == {
        "pairs": 2,
        "missed": 2,
        "extra": 3,
        "missed_share": 1.0,
        "extra_share": pytest.approx(2 / 3),
    }


def test_closest_first():
    # 428.21 and 428.22 share 428.2; 428.0 and 428.1 share only 428
    ev = score_pairs([("a", "428.21"), ("a", "428.0")], [("a", "428.22"), ("a", "428.1")])
    assert triples(ev) == [("a", "428.0", "428.1"), ("a", "428.21", "428.22")]
    # one written code for two missed codes: the closer one takes it, though 428.0 sorts first
    ev = score_pairs([("a", "428.0"), ("a", "428.21")], [("a", "428.22")])
    assert triples(ev) == [("a", "428.21", "428.22")]
    # equal depth: by gold code, then written code
    ev = score_pairs([("a", "428.1"), ("a", "428.0")], [("a", "428.9"), ("a", "428.20")])
    assert triples(ev) == [("a", "428.0", "428.20"), ("a", "428.1", "428.9")]


def test_module_doc_example():
    ev = score_pairs(
        [("a", "428.21"), ("a", "428.0"), ("a", "401.9")],
        [("a", "428.22"), ("a", "428.1"), ("a", "401.1"), ("a", "250.00")],
    )
    assert triples(ev) == [("a", "401.9", "401.1"), ("a", "428.0", "428.1"), ("a", "428.21", "428.22")]


def test_unpaired_matched_and_cross_document_codes():
    # a missed code with no extra code in its family stays unpaired
    ev = score_pairs([("a", "250.00"), ("a", "401.9")], [("a", "401.1")])
    assert triples(ev) == [("a", "401.9", "401.1")]
    # a matched code is neither missed nor extra
    ev = score_pairs([("a", "428.21"), ("a", "428.22")], [("a", "428.22"), ("a", "428.23")])
    assert triples(ev) == [("a", "428.21", "428.23")]
    # different documents never pair
    ev = score_pairs([("a", "428.21"), ("b", "401.9")], [("b", "428.22"), ("a", "401.1")])
    assert triples(ev) == []
    s = substitution_summary(ev)
    assert (s["pairs"], s["missed"], s["extra"], s["missed_share"]) == (0, 2, 2, 0.0)


def test_summary_with_nothing_extra():
    ev = score_pairs([("a", "428.21")], [("a", "428.21")])
    assert substitution_summary(ev) == {
        "pairs": 0,
        "missed": 0,
        "extra": 0,
        "missed_share": 0.0,
        "extra_share": 0.0,
    }


def test_levels():
    gold, pred = [("a", "401.9")], [("a", "402.10"), ("a", "403.00")]
    ev = score_pairs(gold, pred)
    assert triples(ev) == []  # three categories at e0
    assert triples(ev, level="block") == [("a", "401.9", "402.10")]  # block 401-405
    assert substitution_pairs(ev, level="block").family_code.tolist() == ["401-405"]
    # at block the pair that also shares the category comes first
    ev = score_pairs(gold, pred + [("a", "401.1")])
    assert triples(ev, level="block") == [("a", "401.9", "401.1")]
    # at e1, 428.21 and 428.0 are in different families
    ev = score_pairs([("a", "428.21")], [("a", "428.0")])
    assert triples(ev, level="e1") == [] and triples(ev) == [("a", "428.21", "428.0")]
    with pytest.raises(ValueError, match="e2, e1, e0, block, chapter"):
        substitution_pairs(ev, level="category")
    for f in (substitution_table, substitution_summary):
        with pytest.raises(ValueError, match="unknown level 'category'"):
            f(ev, level="category")


def test_a_code_above_the_family_level_is_its_own_family():
    ev = score_pairs([("a", "428")], [("a", "428.0")])
    assert triples(ev, level="e1") == []  # 428 has no ancestor at e1
    assert triples(ev) == [("a", "428", "428.0")]  # at e0, 428 is the family itself
    ev = score_pairs([("a", "428"), ("a", "035")], [("a", "401"), ("a", "V45")])
    assert triples(ev, level="e1") == []  # four families of their own, not one family "none"
    assert substitution_summary(ev, level="e1")["missed"] == 2


def _table_case():
    gold = [
        ("d1", "428.21"),
        ("d2", "428.21"),
        ("d3", "428.21"),
        ("d3", "401.9"),
        ("d4", "428.21"),
        ("d5", "401.9"),
    ]
    pred = [
        ("d1", "428.22"),
        ("d2", "428.23"),
        ("d3", "428.21"),
        ("d3", "401.1"),
        ("d4", "428.22"),
        ("d5", "401.9"),
    ]
    return score_pairs(gold, pred)


def test_table_counts_and_rates_by_hand():
    t = substitution_table(_table_case())
    assert list(t.columns) == TABLE_COLUMNS
    assert t[
        ["gold_code", "written_code", "family_code", "documents", "gold_documents", "examples"]
    ].values.tolist() == [
        ["428.21", "428.22", "428", 2, 4, "d1, d4"],
        ["401.9", "401.1", "401", 1, 2, "d3"],
        ["428.21", "428.23", "428", 1, 4, "d2"],
    ]
    assert t.rate.tolist() == [0.5, 0.5, 0.25]
    assert t.gold_title[0] == "Acute systolic heart failure"
    assert t.written_title[0] == "Chronic systolic heart failure"
    assert t.family_title[0] == "Heart failure"


def test_examples_keep_three_in_document_order():
    docs = [f"d{i}" for i in range(1, 6)]
    ev = score_pairs([(d, "428.21") for d in docs], [(d, "428.22") for d in docs])
    t = substitution_table(ev)
    assert t.examples.tolist() == ["d1, d2, d3"] and t.documents.tolist() == [5] and t.rate.tolist() == [1.0]


def test_table_family_filter():
    ev = _table_case()
    o = ev.ontology

    def kept(node):
        return list(zip(*(substitution_table(ev, family=node)[c] for c in ("gold_code", "written_code"))))

    assert kept(o.node("e0", "428")) == [("428.21", "428.22"), ("428.21", "428.23")]
    assert kept(o.node("e1", "428.2")) == [("428.21", "428.22"), ("428.21", "428.23")]
    assert kept(o.codes["428.21"]) == [("428.21", "428.22"), ("428.21", "428.23")]  # the gold code itself
    assert kept(o.node("block", "401-405")) == [("401.9", "401.1")]
    assert len(kept(o.ancestors[o.codes["401.9"], o.level_index("chapter")])) == 3
    empty = substitution_table(ev, family=o.codes["428.22"])  # a written code, never a gold one
    assert list(empty.columns) == TABLE_COLUMNS and empty.empty
    with pytest.raises(ValueError, match="no node"):
        substitution_table(ev, family=o.n_nodes)


def test_empty_results_keep_their_columns():
    ev = score_pairs([("a", "428.21")], [("a", "428.21")])
    assert list(substitution_pairs(ev).columns) == PAIR_COLUMNS and substitution_pairs(ev).empty
    assert list(substitution_table(ev).columns) == TABLE_COLUMNS and substitution_table(ev).empty
    assert list(document_substitutions(ev, "a").columns) == DOCUMENT_COLUMNS


def test_document_substitutions():
    ev = _table_case()
    d = document_substitutions(ev, "d3")
    assert list(d.columns) == DOCUMENT_COLUMNS
    assert d.values.tolist() == [
        [
            "401.9",
            "Unspecified essential hypertension",
            "401.1",
            "Benign essential hypertension",
            "401",
            "Essential hypertension",
        ]
    ]
    assert document_substitutions(ev, "d5").empty
    with pytest.raises(KeyError, match="nope"):
        document_substitutions(ev, "nope")


# ------------------------------------------------------------------ against the naive loop
def _sample_sets(path: Path) -> dict[str, set[str]]:
    df = pd.read_csv(path, dtype=str)
    return as_sets(zip(df.doc_id, df.code))


@pytest.fixture(scope="module")
def icd9_sample():
    files = {
        n: (SAMPLES / "icd9" / f"{n}.csv").read_bytes() for n in ("gold", "run_siblings", "run_overcoder")
    }
    return score_files(
        files["gold"],
        {"siblings": files["run_siblings"], "overcoder": files["run_overcoder"]},
        ontology="icd9",
    )


@pytest.mark.parametrize("run", ["siblings", "overcoder"])
def test_sample_equals_naive_loop(icd9_sample, run):
    ev = icd9_sample.evaluation(run)
    got = substitution_pairs(ev)
    expected = naive_pairs(
        _sample_sets(SAMPLES / "icd9" / "gold.csv"), _sample_sets(SAMPLES / "icd9" / f"run_{run}.csv")
    )
    assert len(expected) > 1000
    assert sorted(zip(got.doc_id, got.gold_code, got.written_code)) == expected
    # ordered by document (as in ev.docs), then gold code
    row = {d: i for i, d in enumerate(ev.docs)}
    keys = list(zip(got.doc_id.map(row), got.gold_code))
    assert keys == sorted(keys)
    s = substitution_summary(ev)
    assert s["pairs"] == len(expected)
    assert s["missed"] == int(ev.documents.flat_fn.sum()) and s["extra"] == int(ev.documents.flat_fp.sum())
    # the per-document view agrees with the run-wide pairs
    doc = got.doc_id.iloc[0]
    assert document_substitutions(ev, doc).gold_code.tolist() == got[got.doc_id == doc].gold_code.tolist()


_ALL = sorted(c for c, n in _O.codes.items() if _O.listed[n])
_BUSY = [c for c in _ALL if c.split(".")[0] in {"401", "428", "427", "250", "V45", "E849", "38", "96"}]
_E0 = ["428", "401", "035", "E954", "V45"]  # codes at e0: above the family level e1
POOL = sorted(set(_BUSY) | set(random.Random(1).sample(_ALL, 60)) | set(_E0))
SETTINGS = settings(max_examples=examples(80), deadline=None, suppress_health_check=[HealthCheck.too_slow])
docs_strategy = st.dictionaries(
    st.sampled_from([f"d{i}" for i in range(6)]), st.sets(st.sampled_from(POOL), max_size=12), max_size=6
)


def _evaluate(gold: dict[str, set[str]], pred: dict[str, set[str]]):
    rows = [(d, c) for d, codes in sorted(gold.items()) for c in sorted(codes)]
    return score_pairs(
        rows or [("d0", "401.9")], [(d, c) for d, codes in sorted(pred.items()) for c in sorted(codes)]
    )


@SETTINGS
@given(gold=docs_strategy, pred=docs_strategy)
def test_equals_naive_loop(gold, pred):
    if not any(gold.values()):
        gold = {"d0": {"401.9"}}  # a gold standard with no code is refused (NothingScorable)
    ev = _evaluate(gold, pred)
    assert sorted(triples(ev)) == naive_pairs(gold, pred)


@SETTINGS
@given(gold=docs_strategy, pred=docs_strategy, level=st.sampled_from(["e1", "e0", "block", "chapter"]))
def test_invariants(gold, pred, level):
    if not any(gold.values()):
        gold = {"d0": {"401.9"}}
    ev = _evaluate(gold, pred)
    o, lv = ev.ontology, ev.ontology.level_index(level)
    p = substitution_pairs(ev, level=level)
    missed = {(d, c) for d, codes in gold.items() for c in codes - pred.get(d, set())}
    extra = {(d, c) for d, codes in pred.items() for c in codes - gold.get(d, set())}
    assert all((d, g) in missed for d, g in zip(p.doc_id, p.gold_code))
    assert all((d, w) in extra for d, w in zip(p.doc_id, p.written_code))
    assert not p.duplicated(["doc_id", "gold"]).any() and not p.duplicated(["doc_id", "written"]).any()
    assert (p.family >= 0).all()
    assert (o.ancestors[p.gold.to_numpy(), lv] == p.family.to_numpy()).all()
    assert (o.ancestors[p.written.to_numpy(), lv] == p.family.to_numpy()).all()
    # maximal: no unpaired missed code and unpaired extra code share a document and a family
    paired = set(zip(p.doc_id, p.gold_code)) | set(zip(p.doc_id, p.written_code))

    def families(codes):
        return {
            (d, int(o.ancestors[o.codes[c], lv]))
            for d, c in codes - paired
            if o.ancestors[o.codes[c], lv] >= 0
        }

    assert not families(missed) & families(extra)
    s = substitution_summary(ev, level=level)
    assert (s["missed"], s["extra"]) == (len(missed), len(extra))
    assert s["pairs"] == len(p) <= min(len(missed), len(extra))
    t = substitution_table(ev, level=level)
    assert t.documents.sum() == len(p) and (t.rate <= 1).all() and (t.documents <= t.gold_documents).all()


# ------------------------------------------------------------------ planted substitutions
@pytest.mark.parametrize("name", ["icd9", "icd10"])
def test_planted_pairs_top_the_sample_table(name):
    folder = SAMPLES / name
    s = score_files(
        (folder / "gold.csv").read_bytes(),
        {"siblings": (folder / "run_siblings.csv").read_bytes()},
        ontology=name,
    )
    t = substitution_table(s.evaluation("siblings"))
    planted = set(PLANTED[name].items())
    top = set(zip(t.gold_code[:3], t.written_code[:3]))
    assert top == planted
    assert (t.rate[:3] > 0.3).all() and t.documents[2] > 2 * t.documents[3]


def test_generate_run_plants_them_and_leaves_the_other_profiles_alone():
    onto = load_ontology("icd9")
    gold = generate_gold(300, seed=5, onto=onto)
    gold_rows = list(zip(gold.doc_id, gold.code))
    run = generate_run(gold, "siblings", seed=6, onto=onto)
    t = substitution_table(score_pairs(gold_rows, list(zip(run.doc_id, run.code))))
    assert set(zip(t.gold_code[:3], t.written_code[:3])) == set(PLANTED["icd9"].items())
    assert (t.rate[:3] > 0.4).all()
    # the other profiles write a planted code in place of its gold code by chance only
    for profile in ("overcoder", "conservative"):
        other = generate_run(gold, profile, seed=6, onto=onto)
        t = substitution_table(score_pairs(gold_rows, list(zip(other.doc_id, other.code))))
        planted = np.array(
            [(g, w) in PLANTED["icd9"].items() for g, w in zip(t.gold_code, t.written_code)], dtype=bool
        )
        hits = t.loc[planted]
        assert (hits.rate < 0.15).all(), (profile, hits)


def _generator_sets() -> dict:
    """The options sample_data/generate.py writes the bundled samples with."""
    import importlib.util

    spec = importlib.util.spec_from_file_location("generate", SAMPLES / "generate.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module.SETS


@pytest.mark.parametrize("name", ["icd9", "icd10"])
def test_bundled_samples_are_what_the_generator_writes(name):
    """sample_data/generate.py reproduces every bundled file: nothing in the samples is hand-edited or stale."""
    gold, runs = generate(ontology=name, **_generator_sets()[name])
    for file, df in [("gold", gold)] + [(f"run_{k}", v) for k, v in runs.items()]:
        pd.testing.assert_frame_equal(df, pd.read_csv(SAMPLES / name / f"{file}.csv", dtype=str), obj=file)
    assert np.isin(list(PLANTED[name]), gold.code).all()


def test_bundled_document_details_are_what_the_generator_writes():
    import importlib.util

    spec = importlib.util.spec_from_file_location("generate", SAMPLES / "generate.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    gold = pd.read_csv(SAMPLES / "icd9" / "gold.csv", dtype=str)
    written = pd.read_csv(SAMPLES / "icd9" / "documents.csv", dtype=str)
    pd.testing.assert_frame_equal(module.document_details(gold, seed=11).astype(str), written)
    assert set(written.doc_id) == set(gold.doc_id)
