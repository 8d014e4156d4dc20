"""Moved to cophe_core.breakdown.compare; this path stays for existing code."""

from cophe_core.breakdown.compare import (
    HEADLINE_COLUMNS,
    compare_nodes,
    disagreements,
    figure_parts,
    headlines,
    level_deltas,
    levels_side_by_side,
)

__all__ = [
    "HEADLINE_COLUMNS",
    "compare_nodes",
    "disagreements",
    "figure_parts",
    "headlines",
    "level_deltas",
    "levels_side_by_side",
]
