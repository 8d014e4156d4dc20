"""Moved to cophe_core.scale.pipeline; this path stays for existing code."""

from cophe_core.inputs.datasets import DEFAULT_CHUNK_ROWS, dataset_files, is_dataset
from cophe_core.scale.pipeline import CountedFigures, SortedDocuments, StreamedEvaluation, score_dataset
from cophe_core.scale.sources import STREAMED_FORMATS
from cophe_core.scoring.kernel import (
    CodeTable,
    PartitionCounts,
    Tables,
    count_partition,
    nothing_scorable,
    rejected_codes,
    resolve_table,
    resolve_tables,
    suite_partition,
)

__all__ = [
    "CodeTable",
    "CountedFigures",
    "DEFAULT_CHUNK_ROWS",
    "PartitionCounts",
    "STREAMED_FORMATS",
    "SortedDocuments",
    "StreamedEvaluation",
    "Tables",
    "count_partition",
    "dataset_files",
    "is_dataset",
    "nothing_scorable",
    "rejected_codes",
    "resolve_table",
    "resolve_tables",
    "score_dataset",
    "suite_partition",
]
