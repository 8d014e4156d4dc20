"""User-supplied hierarchies: a CSV of edges, or the JSON form released with the CoPHE paper.

**CSV** ``child,parent[,title]``: one row per node and parent. A root has an
empty parent; a node with several parents (a DAG) has one row per parent, the
first being its primary parent (used for display paths only).

**Levels of a DAG.** A node's depth is the length of the *longest* path from
the root to it, so every parent sits strictly above its children. Levels are
named by depth, listed bottom-up: ``d3, d2, d1, d0`` (``d0`` is the root).
A code counts at its own level and at every ancestor's level, **once per
ancestor**: an ancestor reached through two paths counts the code once
(no double counting), and two different ancestors at one level each count it.
In a tree this is exactly CoPHE's depth-based propagation.

**JSON** (the CoPHE paper's ``icd9_graph_desc.json`` form): ``{code: {"parents":
[…], "label": …}}``, where ``parents`` lists, bottom-up, the code's ancestor at
each level above the deepest; a code sits at the level of the first slot that
does not name itself (``"364.3": {"parents": ["364.3", "364", …]}`` is one level
up). Levels are named ``L0`` (deepest) … ``Lk``.

Validation rejects cycles, parents that are not themselves listed, and several
roots without a common root, each with a message naming the rows.
"""

from __future__ import annotations

import csv
import io
import json
from pathlib import Path

from ..readers import InputError, Source, _decode, _load_bytes
from .base import Ontology, OntologyBuilder

__all__ = ["load_hierarchy", "hierarchy_from_edges", "hierarchy_from_cophe_json"]


def load_hierarchy(source: Source, *, name: str | None = None) -> Ontology:
    """Read a hierarchy file (CSV edges or CoPHE JSON, told apart by content)."""
    data, name = _load_bytes(source, name)
    text = _decode(data, name)
    label = Path(name).stem or "custom"
    if text.lstrip().startswith("{"):
        try:
            obj = json.loads(text)
        except json.JSONDecodeError as e:
            raise InputError(f"{name}, line {e.lineno}: not valid JSON ({e.msg})") from None
        return hierarchy_from_cophe_json(obj, name=label, source=name)
    rows = list(csv.reader(io.StringIO(text)))
    if rows and [c.strip().lower() for c in rows[0][:2]] == ["child", "parent"]:
        rows = rows[1:]
        start = 2
    else:
        start = 1
    edges = []
    for i, row in enumerate(rows, start=start):
        if not row or not any(c.strip() for c in row):
            continue
        if len(row) < 2:
            raise InputError(f"{name}, line {i}: expected child,parent[,title], got {','.join(row)[:60]!r}")
        edges.append((row[0].strip(), row[1].strip(), row[2].strip() if len(row) > 2 else "", i))
    return hierarchy_from_edges(edges, name=label, source=name)


def hierarchy_from_edges(edges: list[tuple[str, str, str, int]], *, name: str = "custom",
                         source: str = "<edges>") -> Ontology:
    """Build a tree or DAG from ``(child, parent, title, line)`` rows; see the module docs."""
    if not edges:
        raise InputError(f"{source}: no rows; expected child,parent[,title]")
    parents: dict[str, list[str]] = {}
    titles: dict[str, str] = {}
    lines: dict[str, int] = {}
    for child, parent, title, line in edges:
        if not child:
            raise InputError(f"{source}, line {line}: empty child name")
        parents.setdefault(child, [])
        lines.setdefault(child, line)
        if parent and parent not in parents[child]:
            parents[child].append(parent)
        if title:
            titles[child] = title
    unknown = [(c, p) for c, ps in parents.items() for p in ps if p not in parents]
    if unknown:
        c, p = unknown[0]
        raise InputError(f"{source}, line {lines[c]}: parent {p!r} of {c!r} is not listed as a node "
                         f"({len(unknown)} such); add a row for it (an empty parent makes a root)")
    roots = [c for c, ps in parents.items() if not ps]
    if len(roots) != 1:
        if not roots:
            raise InputError(f"{source}: no root (every node has a parent), so the hierarchy has a cycle")
        raise InputError(f"{source}: {len(roots)} roots without a common root ({', '.join(roots[:5])}); "
                         "add one root node and make these its children")
    depth = _longest_depths(parents, source, lines)
    top = max(depth.values())
    levels = tuple(f"d{d}" for d in range(top, -1, -1))
    b = OntologyBuilder(name, levels)
    b.default_max_level = "d1" if top >= 1 else "d0"
    for node in sorted(parents, key=lambda n: (depth[n], lines[n])):
        first = parents[node][0] if parents[node] else None
        b.add(f"d{depth[node]}", node, titles.get(node, node),
              parent=(f"d{depth[first]}", first) if first else None, code=True)
        for extra in parents[node][1:]:
            b.add_parent((f"d{depth[node]}", node), (f"d{depth[extra]}", extra))
    return b.build()


def _longest_depths(parents: dict[str, list[str]], source: str, lines: dict[str, int]) -> dict[str, int]:
    """Longest-path depth from the root, by Kahn's algorithm; a cycle is reported with its members."""
    children: dict[str, list[str]] = {n: [] for n in parents}
    missing = {n: len(ps) for n, ps in parents.items()}
    for n, ps in parents.items():
        for p in ps:
            children[p].append(n)
    depth = {n: 0 for n, k in missing.items() if k == 0}
    queue = list(depth)
    while queue:
        node = queue.pop()
        for c in children[node]:
            depth[c] = max(depth.get(c, 0), depth[node] + 1)
            missing[c] -= 1
            if missing[c] == 0:
                queue.append(c)
    if len(depth) < len(parents) or any(missing[n] for n in depth):
        cycle = _find_cycle({n: ps for n, ps in parents.items() if missing[n] > 0})
        raise InputError(f"{source}, line {lines[cycle[0]]}: the hierarchy has a cycle: "
                         + " → ".join(cycle + [cycle[0]]) + "; a node cannot be its own ancestor")
    return depth


def _find_cycle(parents: dict[str, list[str]]) -> list[str]:
    node = next(iter(parents))
    seen: list[str] = []
    while node not in seen:
        seen.append(node)
        node = next(p for p in parents[node] if p in parents)
    return seen[seen.index(node):]


def hierarchy_from_cophe_json(obj: dict, *, name: str = "cophe-json", source: str = "<json>") -> Ontology:
    """Build the tree described by a CoPHE-paper hierarchy file (see the module docs)."""
    if not isinstance(obj, dict) or not obj:
        raise InputError(f"{source}: expected an object of code → {{\"parents\": [...], \"label\": ...}}")
    sizes = {len(v.get("parents", [])) for v in obj.values() if isinstance(v, dict)}
    if len(sizes) != 1 or 0 in sizes:
        raise InputError(f"{source}: every entry needs a 'parents' list of the same length (found lengths "
                         f"{sorted(sizes)})")
    k = sizes.pop()
    levels = tuple(f"L{i}" for i in range(k + 1))
    b = OntologyBuilder(name, levels)
    b.default_max_level = levels[-2]
    chains = []
    for code, entry in obj.items():
        if not isinstance(entry, dict):
            raise InputError(f"{source}: entry {code!r} is not an object")
        p = [str(x) for x in entry["parents"]]
        own = 0
        while own < k and p[own] == code:
            own += 1
        # node at level j (> own) is p[j-1]
        chains.append((code, own, p))
    labels = {code: str(entry.get("label", code)) for code, entry in obj.items()}
    for j in range(k, -1, -1):  # top level first, so parents exist before children
        for code, own, p in chains:
            if j > own:
                key, parent = p[j - 1], ((levels[j + 1], p[j]) if j < k else None)
                if (levels[j], key) not in b:
                    b.add(levels[j], key, labels.get(key, key), parent=parent)
            elif j == own:
                parent = (levels[own + 1], p[own]) if own < k else None
                if (levels[j], code) not in b:
                    b.add(levels[j], code, labels[code], parent=parent, code=True)
                else:  # listed earlier as someone's ancestor: make it a label too
                    b.add(levels[j], code, labels[code], code=True)
    return b.build()
