"""Ontologies: the base model and one module per code system."""

from .base import Ontology, OntologyBuilder
from .icd9 import icd9_ontology

__all__ = ["Ontology", "OntologyBuilder", "icd9_ontology", "load_ontology"]


def load_ontology(name: str) -> Ontology:
    """Load a named ontology (cached per process)."""
    if name == "icd9":
        return icd9_ontology()
    raise ValueError(f"unknown ontology {name!r}; available: icd9")
