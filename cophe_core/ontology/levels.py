"""Names of the levels, in the words of the code system, for people who read the codes.

Level ids (``e0``, ``block``, ``body_part``) are stable identifiers used in files, the CLI and the JSON
output. Coders know the levels by their names: in ICD-9-CM a *category* has three digits (428), a
*subcategory* four (428.2) and a *specific code* five (428.21); categories group into *sections*
(401-405) and sections into *chapters*. ICD-10-CM counts characters the same way; ICD-10-PCS names each
character of its seven (section, body system, root operation, body part, approach, device, qualifier).
The combined ICD-10 ontology aligns PCS with CM by depth, so its names give both.
"""

from __future__ import annotations

from .base import Ontology

__all__ = ["LEVEL_NAMES", "level_name", "level_names"]

_ICD9 = {
    "e2": "Specific code (5th digit)",
    "e1": "Subcategory (4th digit)",
    "e0": "Category (3 digits)",
    "block": "Section",
    "chapter": "Chapter",
}
_CM = {
    "e4": "7th character",
    "e3": "6th character",
    "e2": "5th character",
    "e1": "Subcategory (4th character)",
    "e0": "Category (3 characters)",
    "block": "Block",
    "chapter": "Chapter",
}
_PCS = {
    "qualifier": "Qualifier (7th character)",
    "device": "Device (6th character)",
    "approach": "Approach (5th character)",
    "body_part": "Body part (4th character)",
    "operation": "Root operation (3rd character)",
    "body_system": "Body system (2nd character)",
    "section": "Section (1st character)",
}
_BOTH = {
    "e4": "7th character · PCS qualifier",
    "e3": "6th character · PCS device",
    "e2": "5th character · PCS approach",
    "e1": "Subcategory · PCS body part",
    "e0": "Category · PCS root operation",
    "block": "Block · PCS body system",
    "chapter": "Chapter · PCS section",
}
#: Built-in ontology name → level id → name.
LEVEL_NAMES: dict[str, dict[str, str]] = {"icd9": _ICD9, "icd10cm": _CM, "icd10pcs": _PCS, "icd10": _BOTH}
#: Rows of the level tables that are not ontology levels.
_ROWS = {"leaf": "Codes as given", "overall": "All levels together"}


def level_name(ontology: Ontology, level: str) -> str:
    """The name of ``level`` in ``ontology``'s own words.

    Built-in ICD ontologies use the tabular list's terms; a user hierarchy's depth levels ``d0, d1, …``
    read "Depth 0 (top)", "Depth 1", …, and the CoPHE JSON levels ``L0, L1, …`` read "Codes",
    "Level 1", …. The table rows ``leaf`` and ``overall`` have names too. Anything else is returned as
    it is, with underscores as spaces.

    >>> from cophe_core.ontology import icd9_ontology
    >>> onto = icd9_ontology()
    >>> [level_name(onto, lv) for lv in ("e0", "block", "overall")]
    ['Category (3 digits)', 'Section', 'All levels together']
    """
    names = LEVEL_NAMES.get(ontology.name, {})
    if level in names:
        return names[level]
    if level in _ROWS:
        return _ROWS[level]
    if level in ontology.levels and level[1:].isdigit():
        n = int(level[1:])
        if level[0] == "d":
            return "Depth 0 (top)" if n == 0 else f"Depth {n}"
        if level[0] == "L":
            return "Codes" if n == 0 else f"Level {n}"
    return level.replace("_", " ")


def level_names(ontology: Ontology) -> dict[str, str]:
    """Every level id of ``ontology``, bottom-up, with its :func:`level_name`.

    >>> from cophe_core.ontology import icd9_ontology
    >>> level_names(icd9_ontology())["e2"]
    'Specific code (5th digit)'
    """
    return {lv: level_name(ontology, lv) for lv in ontology.levels}
