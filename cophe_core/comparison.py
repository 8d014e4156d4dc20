"""Moved to cophe_core.breakdown.comparison; this path stays for existing code."""

from cophe_core.breakdown.comparison import (
    ALPHA,
    FAMILY_ROWS,
    FDR,
    MAX_RUNS,
    RESAMPLES,
    SEED,
    Comparison,
    Memo,
    p_text,
)

__all__ = ["ALPHA", "Comparison", "FAMILY_ROWS", "FDR", "MAX_RUNS", "Memo", "RESAMPLES", "SEED", "p_text"]
