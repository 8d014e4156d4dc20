"""The public names: those of ``cophe_core`` and of each module the README, the docs, the tutorial and
CONTRIBUTING name, listed here as they were before the regrouping into subpackages. Each imports from its
documented (old) path and from where it lives now, as the same object; and every ``cophe_core.x.y`` the
documents name imports.
"""

from __future__ import annotations

import importlib
import json
import re

import pytest

from tests.conftest import ROOT

# old path -> {where the names live now: [names]}
PUBLIC = {
    "cophe_core": {
        "cophe_core": [
            "AccumulatedEvaluation",
            "Accumulator",
            "Corpus",
            "Evaluation",
            "InputError",
            "NothingScorable",
            "Ontology",
            "RawLabels",
            "RawScores",
            "Scoring",
            "encode",
            "evaluate",
            "load_ontology",
            "prf",
            "read_input",
            "read_labels",
            "score_files",
            "score_labels",
        ]
    },
    "cophe_core.metrics": {
        "cophe_core.metrics": [
            "DocumentCounts",
            "Evaluation",
            "Figures",
            "MEASURES",
            "MEASURE_WORDS",
            "MacroScore",
            "NodeCounts",
            "Score",
            "balance",
            "cophe_score",
            "cophe_score_from_scores",
            "evaluate",
            "evaluate_corpus",
            "on_shared_documents",
            "precision_recall_fscore_hierarchical",
            "precision_recall_fscore_hierarchical_from_scores",
            "prf",
            "set_based_score",
            "set_based_score_from_scores",
        ]
    },
    "cophe_core.ontology": {
        "cophe_core.ontology": [
            "CodeSystem",
            "NAMES",
            "Ontology",
            "OntologyBuilder",
            "REGISTRY",
            "choose_ontology",
            "family_level",
            "hierarchy_from_networkx",
            "icd10_ontology",
            "icd10cm_ontology",
            "icd10pcs_ontology",
            "icd9_ontology",
            "level_name",
            "level_names",
            "load_hierarchy",
            "load_ontology",
            "system_of",
        ]
    },
    "cophe_core.files": {
        "cophe_core.base.files": [
            "InputError",
            "MAX_BYTES",
            "MAX_COLUMNS",
            "MB",
            "Reason",
            "Source",
            "binary_as_text",
            "check_width",
            "column_list",
            "decode_text",
            "detect_format",
            "excerpt",
            "first_line",
            "line_numbers",
            "load_bytes",
            "number_too_long",
            "parse_delimited",
            "pick_column",
            "read_binary_table",
            "sniff_separator",
            "unparsable",
        ]
    },
    "cophe_core.readers": {
        "cophe_core.inputs.readers": [
            "CODE_COLUMNS",
            "DOC_COLUMNS",
            "HeaderUnclear",
            "InputError",
            "MAX_CODE_CHARS",
            "MAX_ID_CHARS",
            "RawLabels",
            "RawScores",
            "SCORE_COLUMNS",
            "decode_text",
            "excerpt",
            "headerless_columns",
            "input_kind",
            "line_numbers",
            "load_bytes",
            "read_frame",
            "read_input",
            "read_labels",
            "read_scores",
        ]
    },
    "cophe_core.stats": {
        "cophe_core.breakdown.stats": [
            "HEADLINES",
            "NO_CLEAR",
            "Outcome",
            "Verdict",
            "bootstrap",
            "bootstrap_runs",
            "compare_runs",
            "describe_difference",
            "document_weights",
            "holm",
            "p_text",
            "paired_bootstrap",
            "paired_significance",
            "randomisation_test",
            "runs_wide",
            "verdict",
            "verdicts",
        ]
    },
    "cophe_core.compare": {
        "cophe_core.breakdown.compare": [
            "HEADLINE_COLUMNS",
            "compare_nodes",
            "disagreements",
            "figure_parts",
            "headlines",
            "level_deltas",
            "levels_side_by_side",
        ]
    },
    "cophe_core.families": {
        "cophe_core.breakdown.families": [
            "describe_gaps",
            "family_changes",
            "family_errors",
            "gap_statement",
            "within_family",
        ]
    },
    "cophe_core.substitutions": {
        "cophe_core.breakdown.substitutions": [
            "DOCUMENT_COLUMNS",
            "PAIR_COLUMNS",
            "TABLE_COLUMNS",
            "document_substitutions",
            "substitution_pairs",
            "substitution_summary",
            "substitution_table",
        ]
    },
    "cophe_core.tree": {"cophe_core.breakdown.tree": ["COUNTS", "ROOT", "focused_subtree", "with_rates"]},
    "cophe_core.suite": {
        "cophe_core.scoring.suite": [
            "ALPHA1",
            "ALPHA2",
            "BETA",
            "Frequencies",
            "PROPERTIES",
            "document_sums",
            "icm_left_out",
            "icm_note",
            "information_content",
            "left_out_note",
            "per_document",
            "suite",
            "suite_of_sums",
            "sum_frequencies",
        ]
    },
    "cophe_core.comparison": {
        "cophe_core.breakdown.comparison": [
            "ALPHA",
            "Comparison",
            "FAMILY_ROWS",
            "FDR",
            "MAX_RUNS",
            "Memo",
            "RESAMPLES",
            "SEED",
            "p_text",
        ]
    },
    "cophe_core.stream": {
        "cophe_core.scoring.kernel": [
            "CodeTable",
            "PartitionCounts",
            "count_partition",
            "nothing_scorable",
            "rejected_codes",
            "resolve_table",
            "resolve_tables",
            "suite_partition",
        ],
        "cophe_core.scale.pipeline": [
            "CountedFigures",
            "DEFAULT_CHUNK_ROWS",
            "StreamedEvaluation",
            "score_dataset",
        ],
        "cophe_core.inputs.datasets": ["dataset_files", "is_dataset"],
    },
    "cophe_core.cluster": {"cophe_core.scale.cluster": ["combine_counted", "count_batches", "score_dask"]},
    "cophe_core.aggregate": {
        "cophe_core.scale.aggregate": [
            "Aggregate",
            "AggregateEvaluation",
            "FORMAT_VERSION",
            "KIND",
            "MAX_RUNS",
            "aggregate_of",
            "aggregate_scoring",
            "counts_only",
            "write_aggregate",
        ],
        "cophe_core.scale.aggregate_reader": ["is_aggregate", "read_aggregate"],
    },
    "cophe_core.plotting": {
        "cophe_core.output.plotting": [
            "CHART_WORDS",
            "COLOUR_BY",
            "COLOUR_UNITS",
            "COUNT_COLOURS",
            "DIVERGING",
            "FITTED_QUANTILE",
            "MARGIN",
            "MEASURE_COLOURS",
            "MEASURE_NAMES",
            "OTHER_COLOUR",
            "PANELS_PER_ROW",
            "ROOT_COLOUR",
            "RUN_COLOURS",
            "SEQUENTIAL",
            "TREE_WORDS",
            "VERDICT_COLOURS",
            "colour_range",
            "coloured",
            "delta_bar",
            "levels_bar",
            "runs_chart",
            "slices_chart",
            "threshold_curve",
            "tile_colours",
            "tree_figure",
            "tree_labels",
        ]
    },
    "cophe_core.analysis": {
        "cophe_core.output.analysis": [
            "Analysis",
            "FORMAT",
            "FORMAT_VERSION",
            "INPUT_MB",
            "InputFile",
            "MAX_BYTES",
            "MAX_MANIFEST",
            "MAX_MEMBERS",
            "analysis_checksum",
            "analysis_from_files",
            "creation_time",
            "read_analysis",
            "score_analysis",
            "write_analysis",
        ]
    },
}
DOCUMENTS = ["README.md", "CONTRIBUTING.md", "docs/architecture.md", "docs/analysis-format.md"]
OLD_AND_NEW = [
    (old, new, name) for old, homes in PUBLIC.items() for new, names in homes.items() for name in names
]


@pytest.mark.parametrize(("old", "new", "name"), OLD_AND_NEW, ids=[f"{o}.{n}" for o, _, n in OLD_AND_NEW])
def test_a_public_name_imports_from_its_old_path_and_its_new_one(old, new, name):
    assert getattr(importlib.import_module(old), name) is getattr(importlib.import_module(new), name)


@pytest.mark.parametrize("old", sorted(PUBLIC))
def test_an_old_path_offers_its_names(old):
    """``from cophe_core.stream import *`` gives what it gave."""
    listed = {n for names in PUBLIC[old].values() for n in names}
    assert listed - set(importlib.import_module(old).__all__) == set()


def documented_paths() -> list[str]:
    """Every ``cophe_core.a.b`` the documents and the tutorial's cells name."""
    texts = [(ROOT / d).read_text() for d in DOCUMENTS]
    notebook = json.loads((ROOT / "docs" / "tutorial.ipynb").read_text())
    texts += ["".join(cell["source"]) for cell in notebook["cells"]]
    return sorted({m for t in texts for m in re.findall(r"\bcophe_core(?:\.[A-Za-z_]\w*)+", t)})


def resolves(path: str) -> bool:
    """A module, or a name of one (``cophe_core.metrics.cophe_score``)."""
    parts = path.split(".")
    for i in range(len(parts), 0, -1):
        try:
            found: object = importlib.import_module(".".join(parts[:i]))
        except ModuleNotFoundError:
            continue
        for attr in parts[i:]:
            if not hasattr(found, attr):
                return False
            found = getattr(found, attr)
        return True
    return False


def test_every_path_the_documents_name_imports():
    paths = documented_paths()
    assert "cophe_core.metrics" in paths and len(paths) > 10
    assert [p for p in paths if not resolves(p)] == []


def test_a_path_to_nothing_is_seen():
    assert not resolves("cophe_core.metrics.no_such_name") and not resolves("cophe_core.no_such_module")
    assert resolves("cophe_core.metrics.cophe_score")
