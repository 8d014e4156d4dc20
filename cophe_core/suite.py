"""Moved to cophe_core.scoring.suite; this path stays for existing code."""

from cophe_core.scoring.suite import (
    ALPHA1,
    ALPHA2,
    BETA,
    PROPERTIES,
    Frequencies,
    document_sums,
    icm_left_out,
    icm_note,
    information_content,
    left_out_note,
    per_document,
    suite,
    suite_of_sums,
    sum_frequencies,
)

__all__ = [
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
