"""Moved to cophe_core.breakdown.families; this path stays for existing code."""

from cophe_core.breakdown.families import (
    describe_gaps,
    family_changes,
    family_errors,
    gap_statement,
    within_family,
)

__all__ = ["describe_gaps", "family_changes", "family_errors", "gap_statement", "within_family"]
