"""One interface for the three kinds of evaluation (in memory, streamed, of an aggregate analysis).

Each is a :class:`cophe_core.metrics.Figures`, says what it can do by its capabilities (``has_documents``,
``has_codes``), and gives the same tables on the same data. The source holds no ``isinstance`` switch on the
kinds, no ``type: ignore`` to borrow another class's methods and no proxy: checked on the code itself.
"""

from __future__ import annotations

import ast
import re
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from cophe_core import score_files
from cophe_core.breakdown.stats import bootstrap
from cophe_core.metrics import Evaluation, Figures
from cophe_core.scale.aggregate import (
    AggregateEvaluation,
    aggregate_of,
    aggregate_scoring,
    counts_only,
    write_aggregate,
)
from cophe_core.scale.aggregate_reader import read_aggregate
from cophe_core.scale.pipeline import StreamedEvaluation, score_dataset
from tests.conftest import ROOT

ICD9 = ROOT / "sample_data" / "icd9"
GOLD, RUN = ICD9 / "gold.csv", ICD9 / "run_siblings.csv"
# the members every kind offers: the interface the dashboard, the CLI and the functions of stats read
INTERFACE = (
    "ontology",
    "max_level",
    "docs",
    "node_counts",
    "levels",
    "levels_table",
    "systems_table",
    "macro_table",
    "nodes",
    "documents",
    "documents_long",
    "score",
    "macro",
    "document_counts",
    "document_block",
    "to_dict",
    "with_codes",
    "code_slice_counts",
    "has_documents",
    "has_codes",
    "n_documents",
)


@pytest.fixture(scope="module")
def kinds() -> dict[str, Figures]:
    """The sample's run as each kind: in memory, streamed, and from an aggregate file written and read back."""
    s = score_files(GOLD.read_bytes(), {"A": RUN.read_bytes()})
    memory = s.evaluation("A")
    streamed = score_dataset(GOLD, RUN, chunk_rows=2_000)
    agg = read_aggregate(write_aggregate(aggregate_scoring(s)), name="sample.cophe")
    return {"memory": memory, "streamed": streamed, "aggregate": agg.evaluation("A")}


def test_each_kind_is_a_figures_with_the_whole_interface(kinds):
    assert [type(ev) for ev in kinds.values()] == [Evaluation, StreamedEvaluation, AggregateEvaluation]
    for name, ev in kinds.items():
        assert isinstance(ev, Figures), name
        missing = [m for m in INTERFACE if not hasattr(ev, m)]
        assert not missing, (name, missing)


def test_the_capabilities_say_what_each_kind_can_do(kinds):
    memory, streamed, aggregate = kinds.values()
    assert [ev.has_documents for ev in kinds.values()] == [True, True, True]
    assert [ev.has_codes for ev in kinds.values()] == [True, False, False]
    assert memory.with_codes() is memory
    for ev in (streamed, aggregate):
        with pytest.raises(ValueError, match="counts, not each document's codes"):
            ev.with_codes()
    assert [ev.n_documents for ev in kinds.values()] == [1000, 1000, 1000]


def sorted_documents(ev: Figures) -> pd.DataFrame:
    return ev.documents.sort_values("doc_id", ignore_index=True).astype({"doc_id": str})


def test_the_three_kinds_give_identical_tables_on_the_sample(kinds):
    memory = kinds["memory"]
    for name, ev in kinds.items():
        assert ev.levels == memory.levels == ["e2", "e1", "e0", "block"], name
        pd.testing.assert_frame_equal(ev.levels_table, memory.levels_table, obj=name)
        pd.testing.assert_frame_equal(ev.macro_table, memory.macro_table, obj=name)
        pd.testing.assert_frame_equal(ev.nodes, memory.nodes, obj=name)
        pd.testing.assert_frame_equal(sorted_documents(ev), sorted_documents(memory), obj=name)
        assert ev.systems_table is None and memory.systems_table is None
        assert ev.to_dict() == memory.to_dict(), name
        for measure in ("flat", "set_based", "cophe"):
            for level in ("overall", *ev.levels):
                assert ev.score(measure, level) == memory.score(measure, level), (name, measure, level)
                assert ev.macro(measure, level if level != "overall" else "e0") == memory.macro(
                    measure, level if level != "overall" else "e0"
                )
        order = np.argsort(np.asarray(memory.docs).astype(str), kind="stable")
        for measure, level in (("cophe", "overall"), ("set_based", "e1"), ("flat", "leaf")):
            got, want = ev.document_counts(measure, level), memory.document_counts(measure, level)
            for field in ("tp", "fp", "fn"):
                assert (getattr(got, field) == getattr(want, field)[order]).all(), (name, measure, field)


def test_the_bootstrap_reads_the_interface_alone(kinds):
    want = bootstrap(kinds["memory"], n_resamples=30, seed=4)
    for name in ("streamed", "aggregate"):
        pd.testing.assert_frame_equal(bootstrap(kinds[name], n_resamples=30, seed=4), want, obj=name)


def test_an_aggregate_gives_its_json_without_reading_its_documents():
    s = score_files(b"doc_id,code\n1,401.9\n2,428.0\n", {"A": b"doc_id,code\n1,401.1\n2,428.0\n"})
    agg = aggregate_of({"A": s.evaluation("A")}, slice_edges=None)
    reads = []

    opened = read_aggregate(write_aggregate(agg))

    def loader():
        reads.append("A")
        return opened.documents("A")

    ev = opened.evaluation("A")
    counted = AggregateEvaluation(
        ev.ontology, ev.max_level, ev.node_counts, 2, ev.rejected, ev.flagged, load_documents=loader
    )
    assert counted.to_dict()["documents"] == 2 and counted.n_documents == 2 and counted.has_documents
    assert reads == []  # the number of documents is the file's, not a count of the ids read
    assert counted.to_dict() == s.evaluation("A").to_dict()
    assert counted.docs.tolist() == ["1", "2"] and reads == ["A"]


def test_a_scoring_and_an_aggregate_answer_the_same_questions():
    s = score_files(GOLD.read_bytes(), {"A": RUN.read_bytes()})
    agg = aggregate_scoring(s)
    assert (s.has_codes, agg.has_codes) == (True, False)
    assert (counts_only(s), counts_only(agg)) == (False, True)
    assert s.ontology is s.corpus.ontology and agg.ontology.name == s.ontology.name
    assert s.max_level == agg.max_level == "block"
    assert s.n_documents == agg.n_documents == 1000
    assert agg.detection is None and not agg.scored and not agg.refused
    for found in (s.not_scored(), agg.not_scored()):
        assert list(found.rejected.columns) == ["file", "line", "value", "reason", "kind"]


def test_the_code_slice_counts_of_each_kind_agree():
    s = score_files(GOLD.read_bytes(), {"A": RUN.read_bytes()})
    memory = s.evaluation("A")
    agg = aggregate_of({"A": memory}, slice_edges=(10,))
    streamed = score_dataset(GOLD, RUN, chunk_rows=5_000, slice_edges=(10,))
    for sl in agg.slices:
        want = memory.code_slice_counts(sl.key, sl.mask)
        got = streamed.code_slice_counts(sl.key, sl.mask)
        assert all(
            (getattr(want, f) == getattr(got, f)).all() for f in ("tp", "fp", "fn", "set_tp", "flat_fn")
        )
    with pytest.raises(ValueError, match="no counts of the slice"):
        streamed.code_slice_counts("nowhere", agg.slices[0].mask)


# ------------------------------------------------------------------ the source itself

KINDS = {
    "Evaluation",
    "StreamedEvaluation",
    "AggregateEvaluation",
    "CountedFigures",
    "Figures",
    "Scoring",
    "Aggregate",
}


def sources() -> list[Path]:
    return sorted((ROOT / "cophe_core").rglob("*.py")) + sorted((ROOT / "dashboard").rglob("*.py"))


def kind_switches(path: Path) -> list[str]:
    """``isinstance(x, K)`` (or a tuple holding K) with K one of the evaluation kinds, as file:line."""
    found = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == "isinstance":
            classes = node.args[1] if len(node.args) > 1 else None
            names = classes.elts if isinstance(classes, ast.Tuple) else [classes]
            named = {
                n.id if isinstance(n, ast.Name) else n.attr if isinstance(n, ast.Attribute) else ""
                for n in names
            }
            if named & KINDS:
                found.append(f"{path.name}:{node.lineno}")
    return found


def test_no_isinstance_switch_on_the_evaluation_kinds():
    assert [hit for path in sources() for hit in kind_switches(path)] == []


def test_the_switch_finder_sees_a_switch(tmp_path):
    module = tmp_path / "m.py"
    module.write_text("if isinstance(s, Aggregate) or isinstance(e, (int, m.Evaluation)):\n    pass\n")
    assert len(kind_switches(module)) == 2


def test_no_borrowed_methods_proxy_or_cast_between_the_kinds():
    root = ROOT / "cophe_core"
    core = {str(p.relative_to(root)): p.read_text(encoding="utf-8") for p in root.rglob("*.py")}
    for name in ("metrics.py", "scale/pipeline.py", "scale/aggregate.py", "breakdown/stats.py", "api.py"):
        assert not re.search(r"type: ignore\[(arg-type|override)\]", core[name]), name
        assert not re.search(r"\bEvaluation\.\w+\(self\b", core[name]), name  # a method borrowed
    assert "__getattr__" not in core["scale/aggregate.py"] + core["scale/aggregate_reader.py"]
    for path in (ROOT / "dashboard").rglob("*.py"):
        text = path.read_text(encoding="utf-8")
        assert not re.search(r"cast\((Evaluation|Scoring|Aggregate)\b", text), path.name


def test_max_level_is_defaulted_and_checked_in_one_place():
    """``Ontology.top_level`` alone writes ``max_level or …`` and checks the level."""
    hits = [
        f"{p.relative_to(ROOT)}:{i}"
        for p in sources()
        for i, line in enumerate(p.read_text(encoding="utf-8").splitlines(), 1)
        if re.search(r"max_level or [\w.]*default_level|max_level or (onto|ontology|tree)\b", line)
        and p.name != "base.py"
    ]
    assert hits == []


def core_imports(path: Path) -> set[str]:
    """The cophe_core modules a module imports anywhere, in a function too, by their last name."""
    out = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.ImportFrom) and node.level and node.module:
            out.add(node.module.split(".")[-1])
    return out


def test_metrics_and_scores_do_not_import_each_other():
    core = ROOT / "cophe_core"
    assert "scores" not in core_imports(core / "metrics.py")
    assert "metrics" in core_imports(core / "scoring" / "scores.py")
    assert {"metrics", "scores", "api"}.isdisjoint(core_imports(core / "scoring" / "decisions.py"))


# ------------------------------------------------------------------ one scoring path on the command line


def test_the_command_line_reports_a_streamed_scoring_as_one_in_memory(tmp_path, capsys):
    """``cophe score`` scores in memory or streamed, then reports either the same way: the same figures, the
    same warnings in the JSON and on stderr (the ICM note included, which the streamed path once left off
    stderr)."""
    import json

    from cophe_core.cli import main

    gold, pred = tmp_path / "gold.csv", tmp_path / "pred.csv"
    gold.write_text("doc_id,code\n1,401.9\n2,428.0\n")
    pred.write_text(
        "doc_id,code\n1,401.1\n2,428.0\n3,250.00\n"
    )  # document 3 has no gold code: ICM leaves it out
    said = {}
    for how in ([], ["--stream"]):
        assert (
            main(
                [
                    "score",
                    "--gold",
                    str(gold),
                    "--pred",
                    str(pred),
                    "--metrics",
                    "suite",
                    "--format",
                    "json",
                    *how,
                ]
            )
            == 0
        )
        out, err = capsys.readouterr()
        said[bool(how)] = json.loads(out), err.splitlines()
    (memory, memory_err), (streamed, streamed_err) = said[False], said[True]
    for key in ("flat", "set_based", "cophe", "macro", "documents", "levels"):
        assert streamed[key] == memory[key], key
    assert streamed["suite"] == pytest.approx(memory["suite"], rel=1e-12)
    assert streamed["warnings"] == memory["warnings"]
    assert any("ICM and ICM-Norm leave out 1 document" in w for w in memory["warnings"])
    assert streamed_err == memory_err and any("ICM" in line for line in streamed_err)
