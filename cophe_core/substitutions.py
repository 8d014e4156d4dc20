"""Moved to cophe_core.breakdown.substitutions; this path stays for existing code."""

from cophe_core.breakdown.substitutions import (
    DOCUMENT_COLUMNS,
    PAIR_COLUMNS,
    TABLE_COLUMNS,
    document_substitutions,
    substitution_pairs,
    substitution_summary,
    substitution_table,
)

__all__ = [
    "DOCUMENT_COLUMNS",
    "PAIR_COLUMNS",
    "TABLE_COLUMNS",
    "document_substitutions",
    "substitution_pairs",
    "substitution_summary",
    "substitution_table",
]
