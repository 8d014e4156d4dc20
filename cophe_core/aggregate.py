"""Moved to cophe_core.scale.aggregate; this path stays for existing code."""

from cophe_core.scale.aggregate import (
    FORMAT_VERSION,
    KIND,
    MAX_RUNS,
    Aggregate,
    AggregateEvaluation,
    aggregate_of,
    aggregate_scoring,
    counts_only,
    write_aggregate,
)
from cophe_core.scale.aggregate_reader import is_aggregate, read_aggregate

__all__ = [
    "Aggregate",
    "AggregateEvaluation",
    "FORMAT_VERSION",
    "KIND",
    "MAX_RUNS",
    "aggregate_of",
    "aggregate_scoring",
    "counts_only",
    "is_aggregate",
    "read_aggregate",
    "write_aggregate",
]
