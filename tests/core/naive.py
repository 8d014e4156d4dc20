"""A deliberately naive CoPHE: dictionaries and loops, written from the paper's definitions.

Used only to cross-check :mod:`cophe_core.metrics`. It walks each code's
ancestors by string structure, not through the ontology arrays.
"""

from __future__ import annotations

from collections import Counter

from cophe_core.ontology.icd9 import parse_code


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
