"""Shared fixtures: the ICD-9 ontology (built once) and helpers to score small inputs."""

from __future__ import annotations

from pathlib import Path

import pytest

from cophe_core import score_files
from cophe_core.ontology import icd9_ontology

ROOT = Path(__file__).resolve().parents[1]
SAMPLE = ROOT / "sample_data" / "icd9"  # the bundled synthetic ICD-9 sample


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
