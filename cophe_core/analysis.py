"""Moved to cophe_core.output.analysis; this path stays for existing code."""

from cophe_core.output.analysis import (
    FORMAT,
    FORMAT_VERSION,
    INPUT_MB,
    MAX_BYTES,
    MAX_MANIFEST,
    MAX_MEMBERS,
    Analysis,
    InputFile,
    analysis_checksum,
    analysis_from_files,
    creation_time,
    read_analysis,
    score_analysis,
    write_analysis,
)

__all__ = [
    "Analysis",
    "FORMAT",
    "FORMAT_VERSION",
    "INPUT_MB",
    "InputFile",
    "MAX_BYTES",
    "MAX_MANIFEST",
    "MAX_MEMBERS",
    "analysis_checksum",
    "analysis_from_files",
    "creation_time",
    "read_analysis",
    "score_analysis",
    "write_analysis",
]
