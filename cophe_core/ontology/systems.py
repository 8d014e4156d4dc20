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

from collections.abc import Sequence
from typing import Protocol, runtime_checkable

import numpy as np

from ..base.files import Reason
from . import icd9, icd10
from .base import Ontology, Placement

__all__ = [
    "CodeSystem",
    "REGISTRY",
    "system_of",
    "family_level",
    "resolve",
    "resolve_exact",
    "resolve_inputs",
]


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
        normalised, placed or rejected with a :class:`~cophe_core.base.files.Reason`, unlisted ones added.

        ``codes`` are one input's: the other codes beside a code may make it ambiguous (ICD-9's ``684``
        among undotted codes), and may do nothing else: a code placed is placed on the same node whatever
        codes come with it (:func:`resolve_inputs` relies on it)."""
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


def resolve_inputs(inputs: Sequence[np.ndarray], onto: Ontology, system: str = "auto") -> list[Placement]:
    """Place the distinct code strings of several inputs (a gold standard, each run), each input read on its
    own evidence, in one ontology extended once for all.

    Whether a code is ambiguous may depend on the input it is in: ICD-9's ``684`` is a category in a file of
    dotted codes, but may be procedure 68.4 in a file of MIMIC's undotted ones (``4019``). So each input's
    codes are read alone, and one input's form never changes how another's codes are read. The unlisted
    codes placed in any input extend the ontology once, in the sorted order of their strings, so that every
    path (in memory, streamed, on a cluster) gives them the same node ids; and where no input finds a code
    ambiguous, every placement is the one of all the codes read together.

    Returns one :class:`Placement` per input, over its codes in their order, all sharing one ontology.

    >>> onto = icd9.icd9_ontology()
    >>> gold, run = resolve_inputs([np.array(["401.9", "684"]), np.array(["4019", "684"])], onto)
    >>> gold.nodes.tolist() == [onto.codes["401.9"], onto.codes["684"]], sorted(run.reasons)
    (True, [0, 1])
    """
    texts = [np.asarray(c, dtype=str) for c in inputs]
    union = np.unique(np.concatenate(texts)) if texts else np.array([], dtype=str)
    joint = resolve(union, onto, system)
    found = system_of(onto)
    if (
        found is None
        or len(texts) < 2
        or all(kind is not Reason.AMBIGUOUS for kind, _ in joint.reasons.values())
    ):
        # no code is ambiguous among all of them, so none is in one input: each input's share of the joint reading
        return [_part(joint, union, t) for t in texts]
    own = [found.resolve(t, onto, system) for t in texts]
    placed = np.unique(np.concatenate([t[p.nodes >= 0] for t, p in zip(texts, own)]))
    extended = found.resolve(placed, onto, system)  # the one extension: the codes placed in any input, sorted
    out = []
    for t, p in zip(texts, own):
        mine = _part(extended, placed, t)  # the codes this input placed, as placed together
        ok = p.nodes >= 0
        reasons = p.reasons | {i: r for i, r in mine.reasons.items() if ok[i]}
        out.append(Placement(np.where(ok, mine.nodes, -1), reasons, p.flags, extended.ontology))
    return out


def _part(joint: Placement, keys: np.ndarray, codes: np.ndarray) -> Placement:
    """The placement of distinct ``codes`` as ``joint`` places ``keys`` (sorted), renumbered from 0; a code
    not among the keys gets node -1 and no reason."""
    at = np.minimum(np.searchsorted(keys, codes), max(len(keys) - 1, 0))
    hit = keys[at] == codes if len(keys) else np.zeros(len(codes), dtype=bool)
    where = np.full(len(keys), -1, dtype=np.int64)
    where[at[hit]] = np.flatnonzero(hit)
    nodes = np.where(hit, joint.nodes[at] if len(keys) else -1, -1).astype(np.int64)
    reasons = {int(where[j]): r for j, r in joint.reasons.items() if where[j] >= 0}
    flags = {int(where[j]): f for j, f in joint.flags.items() if where[j] >= 0}
    return Placement(nodes, reasons, flags, joint.ontology)


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
