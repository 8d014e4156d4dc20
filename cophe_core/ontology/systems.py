"""Code systems: what the rest of cophe asks of ICD-9-CM, ICD-10-CM, ICD-10-PCS and the like.

A code system builds its ontology, reads and places code strings (normalising them, placing well-formed
codes missing from its code set by their structure, rejecting the rest with a reason), and tells its codes
by their form for detection. :data:`REGISTRY` lists the built-in ones by ontology name; every switch on a
code system goes through it. A user hierarchy is no code system: its codes are its node names
(:func:`resolve_exact`).

Adding a code system is one module that defines an object with the attributes of :class:`CodeSystem`, and
one line in :data:`REGISTRY`.
"""

from __future__ import annotations

from typing import Protocol, runtime_checkable

import numpy as np

from ..files import Reason
from . import icd9, icd10
from .base import Ontology, Placement

__all__ = ["CodeSystem", "REGISTRY", "system_of", "family_level", "resolve", "resolve_exact"]


@runtime_checkable
class CodeSystem(Protocol):
    """The interface of a code system.

    Attributes
    ----------
    name : str
        The ontology's name (``"icd9"``), as users choose it.
    description : str
        What it holds, in words for a chooser on screen.
    parts : frozenset of str
        The systems its codes come from, by the names of the single systems: ``{"icd9"}``; the combined
        ICD-10 holds ``{"icd10cm", "icd10pcs"}``. Detection picks the system whose parts cover the codes.
    family_level : str
        The level of a code's family (the category, ``"e0"``), where over- and under-coding is counted.
    common_families : tuple of str
        Families that hold the most codes in discharge summaries, for the synthetic sample generator.
    """

    name: str
    description: str
    parts: frozenset[str]
    family_level: str
    common_families: tuple[str, ...]

    def build(self) -> Ontology:
        """The ontology of the code set (cached by its module)."""
        ...

    def resolve(self, codes: np.ndarray, onto: Ontology, system: str) -> Placement:
        """Place distinct code strings in ``onto`` (an ontology of this system, perhaps extended): each
        normalised, placed or rejected with a :class:`~cophe_core.files.Reason`, unlisted ones added."""
        ...

    def has_form(self, code: str) -> bool:
        """The code is written as only this system writes codes (detection by form)."""
        ...

    def in_code_list(self, code: str) -> bool:
        """The code is in this system's official list (detection when the form is shared)."""
        ...

    def readable_with_system(self, code: str) -> bool:
        """A rejected code would be read if the user said which list it comes from (ICD-9's undotted
        diagnoses and procedures); the interface then asks instead of guessing."""
        ...


REGISTRY: dict[str, CodeSystem] = {
    s.name: s for s in (icd9.SYSTEM, icd10.CM_SYSTEM, icd10.PCS_SYSTEM, icd10.SYSTEM)
}


def system_of(onto: Ontology) -> CodeSystem | None:
    """The code system of an ontology, or None for a user hierarchy.

    >>> system_of(icd9.icd9_ontology()).description
    'ICD-9-CM (diagnoses, V/E codes, procedures)'
    """
    return REGISTRY.get(onto.code_system) if onto.code_system is not None else None


def family_level(onto: Ontology) -> str:
    """The level of a code's family: the code system's (ICD: the category, ``e0``), else for a user
    hierarchy the level one below the top (the top alone for a one-level hierarchy).

    >>> import networkx as nx
    >>> from .custom import hierarchy_from_networkx
    >>> family_level(icd9.icd9_ontology()), family_level(hierarchy_from_networkx(nx.DiGraph([("r", "a"), ("a", "b")])))
    ('e0', 'd1')
    """
    system = system_of(onto)
    if system is not None:
        return system.family_level
    return onto.levels[max(len(onto.levels) - 2, 0)]


def resolve(codes: np.ndarray, onto: Ontology, system: str = "auto") -> Placement:
    """Place distinct code strings in ``onto`` by its code system, or by name in a user hierarchy.

    >>> p = resolve(np.array(["401.9", "zz"]), icd9.icd9_ontology())
    >>> int(p.nodes[1]), p.reasons[1][0].value
    (-1, 'malformed_code')
    """
    found = system_of(onto)
    return found.resolve(codes, onto, system) if found is not None else resolve_exact(codes, onto)


def resolve_exact(codes: np.ndarray, onto: Ontology) -> Placement:
    """A user hierarchy's codes: its node names, matched without regard to case or surrounding spaces.

    >>> import networkx as nx
    >>> from .custom import hierarchy_from_networkx
    >>> onto = hierarchy_from_networkx(nx.DiGraph([("root", "Cardio")]))
    >>> p = resolve_exact(np.array([" cardio", "renal"]), onto)
    >>> p.nodes.tolist() == [onto.codes["Cardio"], -1], p.reasons[1][0].value
    (True, 'not_in_hierarchy')
    """
    ids = np.full(len(codes), -1, dtype=np.int64)
    reasons: dict[int, tuple[Reason, str]] = {}
    folded = {k.casefold(): v for k, v in onto.codes.items()}
    for i, c in enumerate(codes):
        key = c.strip()
        hit = onto.codes.get(key, folded.get(key.casefold()))
        if hit is None:
            reasons[i] = (Reason.NOT_IN_HIERARCHY, f"not a node of the {onto.name} hierarchy")
        else:
            ids[i] = hit
    return Placement(ids, reasons, {}, onto)
