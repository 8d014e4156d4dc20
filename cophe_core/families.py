"""Moved to cophe_core.breakdown.families; this path stays for existing code."""

from cophe_core.breakdown.families import (
    MIN_SUPPORT,
    describe_gaps,
    family_changes,
    family_errors,
    gap_statement,
    per_gold_rates,
    within_family,
)

__all__ = [
    "MIN_SUPPORT",
    "describe_gaps",
    "family_changes",
    "family_errors",
    "gap_statement",
    "per_gold_rates",
    "within_family",
]
