"""Moved to cophe_core.breakdown.tree; this path stays for existing code."""

from cophe_core.breakdown.tree import COUNTS, ROOT, focused_subtree, with_rates

__all__ = ["COUNTS", "ROOT", "focused_subtree", "with_rates"]
