"""Counts summed part by part: streamed sources, disk spill, the pipeline, Dask, the accumulator, aggregate analyses."""
