"""Shared fixtures: the ICD-9 ontology (built once) and helpers to score small inputs."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from hypothesis import settings

from cophe_core import score_files
from cophe_core.ontology import icd9_ontology

ROOT = Path(__file__).resolve().parents[1]
SAMPLE = ROOT / "sample_data" / "icd9"  # the bundled synthetic ICD-9 sample

#: How many of each property test's examples to run. The test command's second run, at the lowest declared
#: versions, is there to show that those versions work, not to search the inputs again: it runs a quarter
#: (scripts/test.sh), the first run all of them.
EXAMPLES_SCALE = float(os.environ.get("COPHE_TEST_EXAMPLES", "1"))


def examples(n: int) -> int:
    """``n`` property-test examples, scaled by :data:`EXAMPLES_SCALE`, never fewer than 10 (or ``n``)."""
    return min(n, max(10, round(n * EXAMPLES_SCALE)))


# the tests that give no count of their own: Hypothesis's default of 100, scaled
settings.register_profile("cophe", max_examples=examples(100))
settings.load_profile("cophe")


@pytest.fixture(scope="session")
def icd9():
    return icd9_ontology()


def long_csv(rows: list[tuple[str, str]]) -> bytes:
    """``doc_id,code`` CSV bytes from (doc, code) pairs."""
    return ("doc_id,code\n" + "".join(f"{d},{c}\n" for d, c in rows)).encode()


def score_pairs(gold: list[tuple[str, str]], pred: list[tuple[str, str]], max_level: str = "block"):
    """Evaluation of one run given as (doc, code) pairs."""
    return score_files(long_csv(gold), {"run": long_csv(pred)}, ontology="icd9").evaluation(
        "run", max_level=max_level
    )
