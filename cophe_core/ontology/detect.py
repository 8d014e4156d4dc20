"""Which code system do these codes come from? ICD-9-CM, ICD-10-CM, ICD-10-PCS, or a mix.

Most codes tell by their form alone: ``401.9``, ``39.95`` and MIMIC's undotted
``4019`` are ICD-9; ``I10`` and ``S52.044Q`` ICD-10-CM; seven characters
starting with a digit (``0DTJ4ZZ``) ICD-10-PCS, and so are the prefixes of 3 to 6
characters that shared tasks' procedure gold holds (``0bh1``, ``bw21``). V and E
codes exist in both ICD-9 and ICD-10-CM, a few seven-character codes could be
CM or PCS, ``B20`` is a CM category and a PCS prefix, and ``3023`` an undotted
ICD-9 code and a PCS prefix. The official code lists are consulted only when
the forms alone decide nothing, or the chosen system's list lacks some of the
codes of shared form, so detecting an ICD-9 file does not load ICD-10.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass

from .systems import REGISTRY, CodeSystem

__all__ = ["Detection", "detect_system"]

#: how a summary names each kind of code form
FORM_WORDS = {
    "icd9": "ICD-9-CM",
    "icd10cm": "ICD-10-CM",
    "icd10pcs": "ICD-10-PCS",
    "shared-form": "of a form two systems share",
}


@dataclass(frozen=True)
class Detection:
    """The chosen ontology name (or None), the counts of distinct codes per system, and why."""

    ontology: str | None
    counts: dict[str, int]
    message: str


def _single_systems() -> list[CodeSystem]:
    """The code systems that are one system each (ICD-9-CM, ICD-10-CM, ICD-10-PCS), not unions of them."""
    return [s for s in REGISTRY.values() if s.parts == {s.name}]


def _forms(codes: Iterable[str]) -> dict[str, str]:
    """Each code's system by its form alone (the first single system whose form it has), else "shared-form".

    Each system asks only the codes no earlier system claimed: an ICD-9 file's codes are asked once each.

    >>> _forms(["401.9", "I10", "0DTJ4ZZ", "V45.81"])
    {'401.9': 'icd9', 'I10': 'icd10cm', '0DTJ4ZZ': 'icd10pcs', 'V45.81': 'shared-form'}
    """
    forms = dict.fromkeys(codes, "shared-form")
    left = list(forms)
    for system in _single_systems():
        has_form = system.has_form
        claimed = [c for c in left if has_form(c)]
        forms.update(dict.fromkeys(claimed, system.name))
        if claimed:
            left = [c for c in left if forms[c] == "shared-form"]
    return forms


def _by_form_and_lists(code: str, form: str) -> str:
    """A code's system when the forms alone decide nothing: a shared form by the lists, and a code of one
    system's form by the lists too if another system's list holds it (``3023``, an undotted ICD-9 code by its
    form, is also the ICD-10-PCS prefix of a transfusion into a peripheral vein)."""
    if form == "shared-form" or any(s.name != form and s.in_code_list(code) for s in _single_systems()):
        return _by_lists(code)
    return form


def _by_lists(code: str) -> str:
    """For codes whose form is shared: the system whose official list holds it."""
    kinds = {s.name for s in _single_systems() if s.in_code_list(code)}
    return kinds.pop() if len(kinds) == 1 else ("ambiguous" if kinds else "unknown")


def _decide(counts: Counter[str], threshold: float) -> str | None:
    """The registered system whose parts hold at least ``threshold`` of the recognised codes: of those, the
    one that holds the most, and of equals the one of fewest parts (ICD-10-CM codes alone give icd10cm, with
    a PCS code among them icd10)."""
    single = {s.name for s in _single_systems()}
    total = sum(n for k, n in counts.items() if k in single)
    if not total:
        return None
    held = {name: sum(counts.get(p, 0) for p in s.parts) for name, s in REGISTRY.items()}
    fits = [name for name in REGISTRY if held[name] >= threshold * total]
    if not fits:
        return None
    return max(fits, key=lambda name: (held[name], -len(REGISTRY[name].parts)))


def detect_system(codes: Iterable[str], *, threshold: float = 0.9) -> Detection:
    """Guess the ontology from distinct codes.

    ICD-10-CM with ICD-10-PCS gives ``icd10``; one system holding at least
    ``threshold`` of the recognised codes gives that system; ICD-9 and ICD-10
    together give no answer and a message saying so.

    >>> detect_system(["401.9", "428.0", "39.95", "V45.81"]).ontology
    'icd9'
    >>> detect_system(["I10", "E11.9", "0DTJ4ZZ"]).ontology
    'icd10'
    >>> detect_system(["0bh1", "bw21", "5a19", "b24b", "3023"]).ontology
    'icd10pcs'
    """
    forms = _forms(set(codes))
    counts = Counter(forms.values())
    decided = _decide(counts, threshold)
    shared = [c for c, f in forms.items() if f == "shared-form"]
    if decided is not None and not all(REGISTRY[decided].in_code_list(c) for c in shared):
        decided = None  # codes of shared form (B20: a CM category or a PCS prefix) that it does not hold
    if decided is None:  # only then are the official lists needed
        counts = Counter(_by_form_and_lists(c, f) for c, f in forms.items())
        decided = _decide(counts, threshold)
    summary = ", ".join(f"{v:,} {FORM_WORDS.get(k, k)}" for k, v in counts.most_common())
    if decided is not None:
        found = f"{REGISTRY[decided].description}, from {sum(counts.values()):,} distinct codes"
        return Detection(decided, dict(counts), f"{found}: {summary}")
    if not any(counts.get(s.name) for s in _single_systems()):
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
