"""Which code system do these codes come from? ICD-9-CM, ICD-10-CM, ICD-10-PCS, or a mix.

Most codes tell by their form alone: ``401.9``, ``39.95`` and MIMIC's undotted
``4019`` are ICD-9; ``I10`` and ``S52.044Q`` ICD-10-CM; seven characters
starting with a digit (``0DTJ4ZZ``) ICD-10-PCS. V and E codes exist in both
ICD-9 and ICD-10-CM, and a few seven-character codes could be CM or PCS; they
follow the system the other codes decide. Only when the forms alone decide
nothing are the official code lists consulted, so detecting an ICD-9 file does
not load ICD-10.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass
from functools import lru_cache

from . import icd9
from .icd10 import CM_CATEGORY, normalise_cm, normalise_pcs, pcs_code_list

__all__ = ["Detection", "detect_system"]

_ICD9 = re.compile(r"^(\d{3}(\.\d{0,2})?|\d{2}\.\d{1,2}|\d{2,5})$")
_PCS = re.compile(r"^[0-9][0-9A-HJ-NP-Z]{6}$")
# The ICD-10-CM form (QA0.0131 included), except a leading E or V: those exist in ICD-9 too.
_CM = re.compile(rf"^(?![EV]){CM_CATEGORY}(\.?[0-9A-Z]{{1,4}})?$")


@dataclass(frozen=True)
class Detection:
    """The chosen ontology name (or None), the counts of distinct codes per system, and why."""

    ontology: str | None
    counts: dict[str, int]
    message: str


def _form(code: str) -> str:
    c = code.strip().upper()
    if _ICD9.match(c):
        return "icd9"
    if _PCS.match(c):
        return "icd10pcs"
    if _CM.match(c) and not (len(c) == 7 and "." not in c):
        return "icd10cm"
    return "shared-form"


@lru_cache(maxsize=1)
def _cm_codes() -> frozenset[str]:
    import simple_icd_10_cm as cm

    return frozenset(c for c in cm.get_all_codes(True) if cm.is_category_or_subcategory(c))


def _by_lists(code: str) -> str:
    """For codes whose form is shared: the system whose official list holds it."""
    kinds = set()
    try:
        if icd9.parse_code(code).code in icd9.icd9_ontology().codes:
            kinds.add("icd9")
    except ValueError:
        pass
    cm = normalise_cm(code)
    if cm is not None and cm in _cm_codes():
        kinds.add("icd10cm")
    pcs = normalise_pcs(code)
    if pcs is not None and pcs in pcs_code_list():
        kinds.add("icd10pcs")
    return kinds.pop() if len(kinds) == 1 else ("ambiguous" if kinds else "unknown")


def _decide(counts: Counter, threshold: float) -> str | None:
    icd9_n = counts.get("icd9", 0)
    cm, pcs = counts.get("icd10cm", 0), counts.get("icd10pcs", 0)
    total = icd9_n + cm + pcs
    if not total:
        return None
    if icd9_n >= threshold * total:
        return "icd9"
    if cm + pcs >= threshold * total:
        return "icd10" if cm and pcs else ("icd10cm" if cm else "icd10pcs")
    return None


def detect_system(codes: Iterable[str], *, threshold: float = 0.9) -> Detection:
    """Guess the ontology from distinct codes.

    ICD-10-CM with ICD-10-PCS gives ``icd10``; one system holding at least
    ``threshold`` of the recognised codes gives that system; ICD-9 and ICD-10
    together give no answer and a message saying so.

    >>> detect_system(["401.9", "428.0", "39.95", "V45.81"]).ontology
    'icd9'
    >>> detect_system(["I10", "E11.9", "0DTJ4ZZ"]).ontology
    'icd10'
    """
    distinct = set(codes)
    forms = {c: _form(c) for c in distinct}
    counts = Counter(forms.values())
    decided = _decide(counts, threshold)
    if decided is None:  # only then do the shared-form codes (V, E, …) need the official lists
        counts = Counter(_by_lists(c) if f == "shared-form" else f for c, f in forms.items())
        decided = _decide(counts, threshold)
    summary = ", ".join(f"{v} {k}" for k, v in counts.most_common())
    if decided is not None:
        return Detection(decided, dict(counts), f"{decided} ({summary})")
    if not any(counts.get(k) for k in ("icd9", "icd10cm", "icd10pcs")):
        return Detection(
            None,
            dict(counts),
            f"no code was recognised as ICD-9-CM, ICD-10-CM or ICD-10-PCS "
            f"({summary}); choose the ontology or upload a hierarchy",
        )
    return Detection(
        None,
        dict(counts),
        f"the codes mix ICD-9 and ICD-10 ({summary}); score each version separately or choose the ontology",
    )
