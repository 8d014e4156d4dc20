"""Moved to cophe_core.scale.cluster; this path stays for existing code."""

from cophe_core.scale.cluster import combine_counted, count_batches, score_dask

__all__ = ["combine_counted", "count_batches", "score_dask"]
