"""Moved to cophe_core.scale.cluster; this path stays for existing code."""

from cophe_core.scale.cluster import (
    COUNTED_SCHEMA,
    SUMMED_COLUMNS,
    SUMMED_KEYS,
    SUMMED_KINDS,
    combine_counted,
    count_batches,
    score_dask,
)

__all__ = [
    "COUNTED_SCHEMA",
    "SUMMED_COLUMNS",
    "SUMMED_KEYS",
    "SUMMED_KINDS",
    "combine_counted",
    "count_batches",
    "score_dask",
]
