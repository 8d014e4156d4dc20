"""User-supplied hierarchies: a CSV of edges, the JSON form released with the CoPHE paper, or a networkx graph.

**CSV** ``child,parent[,title]``: one row per node and parent. A root has an
empty parent; a node with several parents (a DAG) has one row per parent, the
first being its primary parent (used for display paths only).

**networkx** (:func:`hierarchy_from_networkx`): a ``networkx.DiGraph`` with
edges parent → child, node titles from a ``title`` (or ``label``) node
attribute. It is read exactly like the CSV: each node is a code, named by
``str(node)``, and its primary parent is the first of its parents in the graph's
order (the order the edges were added), unless an edge has ``primary=True``.

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

**Validation** (:func:`_depths`, one function for CSV and networkx input, with
networkx): a cycle (``networkx.find_cycle``), a node that is its own parent,
parents that are not themselves listed (CSV), and several roots without a common
root are rejected with an :class:`~cophe_core.readers.InputError` naming the
rows at fault (file and line numbers) or, for a graph, the edges. In the JSON
form, two entries that give one ancestor two different parents are rejected.

Every ontology built here records its source in
:attr:`~cophe_core.ontology.base.Ontology.code_sets`: ``{name: "file.csv, sha256
<first 12 hex digits of the file's SHA-256>"}``, or ``"networkx graph"``.
"""

from __future__ import annotations

import csv
import hashlib
import io
import json
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..readers import InputError, Source, _decode, _load_bytes, excerpt
from .base import Ontology, OntologyBuilder

if TYPE_CHECKING:
    import networkx as nx

__all__ = ["load_hierarchy", "hierarchy_from_edges", "hierarchy_from_cophe_json", "hierarchy_from_networkx",
           "file_code_set", "GRAPH_CODE_SET"]

GRAPH_CODE_SET = "networkx graph"
MAX_LEVELS = 32_767  # levels are stored as int16: no hierarchy people write comes near


def file_code_set(name: str, data: bytes) -> str:
    """How :attr:`Ontology.code_sets` names a hierarchy file: its name and a short SHA-256.

    The short digest is the first 12 hex digits of the SHA-256 of the file's
    bytes, enough to tell two versions of a file apart.

    >>> file_code_set("h.csv", b"child,parent\\nroot,\\n")
    'h.csv, sha256 7598716e0e73'
    """
    return f"{Path(name).name}, sha256 {hashlib.sha256(data).hexdigest()[:12]}"


def load_hierarchy(source: Source, *, name: str | None = None) -> Ontology:
    """Read a hierarchy file: CSV ``child,parent[,title]`` edges or CoPHE JSON, told apart by content.

    Parameters
    ----------
    source : path, bytes or binary file
        The file. A header row ``child,parent…`` is optional.
    name : str, optional
        The file name used in messages and in ``code_sets`` (default: the path's name).

    Returns
    -------
    Ontology
        Named after the file's stem, with ``code_sets`` ``{stem: "name, sha256 …"}``.

    Raises
    ------
    InputError
        If the file is not valid or the hierarchy has a cycle, several roots or unlisted parents.

    Examples
    --------
    >>> o = load_hierarchy(b"child,parent,title\\nroot,,All\\nA,root,Alpha\\nx,A,\\n", name="h.csv")
    >>> o.levels, o.titles[o.codes["A"]], o.code_sets
    (('d2', 'd1', 'd0'), 'Alpha', {'h': 'h.csv, sha256 85d7f44ae856'})
    """
    data, name = _load_bytes(source, name)
    text = _decode(data, name)
    label = Path(name).stem or "custom"
    code_set = file_code_set(name, data)
    if text.lstrip().startswith("{"):
        try:
            obj = json.loads(text)
        except json.JSONDecodeError as e:
            raise InputError(f"{name}, line {e.lineno}: not valid JSON ({e.msg})") from None
        return hierarchy_from_cophe_json(obj, name=label, source=name, code_set=code_set)
    reader = csv.reader(io.StringIO(text))
    edges, first = [], 1  # the line a row starts on: a quoted title may hold a newline
    for row in reader:
        line, first = first, reader.line_num + 1
        if line == 1 and [c.strip().lower() for c in row[:2]] == ["child", "parent"]:
            continue  # the header
        if len(row) < 2 or not row[0].strip():
            if not any(c.strip() for c in row):
                continue  # a blank row
            if len(row) < 2:
                raise InputError(f"{name}, line {line}: expected child,parent[,title], got {','.join(row)[:60]!r}")
        edges.append((row[0].strip(), row[1].strip(), row[2].strip() if len(row) > 2 else "", line))
    return hierarchy_from_edges(edges, name=label, source=name, code_set=code_set)


def hierarchy_from_edges(edges: list[tuple[str, str, str, int]], *, name: str = "custom",
                         source: str = "<edges>", code_set: str | None = None) -> Ontology:
    """Build a tree or DAG from ``(child, parent, title, line)`` rows (see the module docs).

    An empty ``parent`` makes ``child`` a root; a repeated ``(child, parent)``
    row counts once; the last non-empty title of a node wins (default: its name).

    Parameters
    ----------
    edges : list of (child, parent, title, line)
        ``line`` is the row's line number in ``source``, quoted in messages.
    name : str
        The ontology's name.
    source : str
        The file name, for messages.
    code_set : str, optional
        The ``code_sets`` entry (default: ``source``).

    Returns
    -------
    Ontology

    Raises
    ------
    InputError
        Naming the rows at fault, for a cycle, an unlisted parent or several roots.

    Examples
    --------
    >>> o = hierarchy_from_edges([("r", "", "Root", 1), ("a", "r", "", 2), ("b", "a", "", 3),
    ...                           ("b", "r", "", 4)])
    >>> {k: o.levels[o.level[n]] for k, n in o.codes.items()}  # b: longest path r → a → b
    {'r': 'd0', 'a': 'd1', 'b': 'd2'}
    """
    import networkx as nx

    if not edges:
        raise InputError(f"{source}: no rows; expected child,parent[,title]")
    g = nx.DiGraph()
    for child, _parent, title, line in edges:  # nodes in the order they are first listed
        if not child:
            raise InputError(f"{source}, line {line}: empty child name")
        if child not in g:
            g.add_node(child, line=line, title=child)
        if title:
            g.nodes[child]["title"] = title
    unknown = [(c, p, line) for c, p, _, line in edges if p and p not in g]
    if unknown:
        c, p, line = unknown[0]
        raise InputError(f"{source}, line {line}: parent {p!r} of {c!r} is not listed as a node "
                         f"({len(unknown)} such); add a row for it (an empty parent makes a root)")
    for child, parent, _title, line in edges:  # the first row of a child is its primary parent
        if parent and not g.has_edge(parent, child):
            g.add_edge(parent, child, line=line)
    return _from_graph(g, name=name, source=source, code_set=code_set or source)


def hierarchy_from_networkx(graph: nx.DiGraph, *, name: str | None = None) -> Ontology:
    """Build a tree or DAG from a ``networkx.DiGraph`` with edges parent → child.

    Each node is a code named ``str(node)``, titled by its ``title`` (else
    ``label``) attribute, else its name. Levels are longest-path depths from the
    single root, as for a CSV hierarchy (see the module docs). A node's primary
    parent (for display paths) is the first parent in the graph's order, unless
    an edge into it has ``primary=True``. A ``MultiDiGraph``'s parallel edges
    count once. :meth:`Ontology.to_networkx` of a CSV or networkx hierarchy reads
    back with the same nodes, levels and scores (an ICD ontology has several roots,
    so it does not).

    Parameters
    ----------
    graph : networkx.DiGraph
    name : str, optional
        The ontology's name (default: the graph's ``name``, else ``"custom"``).

    Returns
    -------
    Ontology
        With ``code_sets`` ``{name: "networkx graph"}``.

    Raises
    ------
    InputError
        If ``graph`` is not a DiGraph, is empty, has a self-loop or a cycle
        (the edges on it are named), several roots, or two nodes whose names
        print alike.

    Examples
    --------
    >>> import networkx as nx
    >>> G = nx.DiGraph([("root", "A"), ("root", "B"), ("A", "x"), ("B", "x")])
    >>> G.nodes["A"]["title"] = "Alpha"
    >>> o = hierarchy_from_networkx(G, name="toy")
    >>> o.levels, o.titles[o.codes["A"]], o.is_dag, o.code_sets
    (('d2', 'd1', 'd0'), 'Alpha', True, {'toy': 'networkx graph'})
    >>> hierarchy_from_networkx(nx.DiGraph([("a", "b"), ("b", "a")]))
    Traceback (most recent call last):
    ...
    cophe_core.readers.InputError: networkx graph: the hierarchy has a cycle a → b → a (each node the parent of the next), from the edges a → b, b → a; a node cannot be its own ancestor: remove or reverse one of them
    """
    import networkx as nx

    source = GRAPH_CODE_SET
    if not isinstance(graph, nx.DiGraph):
        hint = ("; build a directed graph with edges parent → child, e.g. nx.DiGraph(edges)"
                if isinstance(graph, nx.Graph) else "")
        raise InputError(f"{source}: expected a networkx.DiGraph with edges parent → child, got "
                         f"{type(graph).__module__}.{type(graph).__name__}{hint}")
    if graph.is_multigraph():
        graph = nx.DiGraph(graph)
    g = nx.DiGraph()
    key_of: dict[Any, str] = {}
    first: dict[str, Any] = {}
    for node, attrs in graph.nodes(data=True):
        key = str(node).strip()
        if not key:
            raise InputError(f"{source}: node {node!r} has an empty name; every node is a code")
        if key in first:
            raise InputError(f"{source}: nodes {first[key]!r} and {node!r} both read as code {key!r}; "
                             "rename one")
        first[key], key_of[node] = node, key
        title = attrs.get("title", attrs.get("label"))
        g.add_node(key, title=str(title) if title is not None and str(title) else key)
    for node in graph:
        parents = list(graph.pred[node])
        parents.sort(key=lambda p, n=node: not graph.edges[p, n].get("primary", False))  # stable
        g.add_edges_from((key_of[p], key_of[node]) for p in parents)
    return _from_graph(g, name=name or graph.name or "custom", source=source, code_set=source)


def _from_graph(g: nx.DiGraph, *, name: str, source: str, code_set: str) -> Ontology:
    """Freeze a validated graph of str nodes (``title`` attribute, edges parent → child)."""
    depth = _depths(g, source)
    top = max(depth.values())
    levels = tuple(f"d{d}" for d in range(top, -1, -1))
    b = OntologyBuilder(name, levels)
    b.default_max_level = "d1" if top >= 1 else "d0"
    b.code_sets = {name: code_set}
    order = {n: i for i, n in enumerate(g)}
    for node in sorted(g, key=lambda n: (depth[n], order[n])):
        parents = list(g.pred[node])
        first = parents[0] if parents else None
        b.add(f"d{depth[node]}", node, g.nodes[node]["title"],
              parent=(f"d{depth[first]}", first) if first else None, code=True)
        for extra in parents[1:]:
            b.add_parent((f"d{depth[node]}", node), (f"d{depth[extra]}", extra))
    return b.build()


def _depths(g: nx.DiGraph, source: str) -> dict[str, int]:
    """Validate a hierarchy graph (edges parent → child) and give each node its depth.

    The depth of a node is the length of the longest path from the root to it:
    ``networkx.topological_generations`` puts a node in generation k once all
    its parents are in earlier ones, so k = 1 + the largest parent depth.

    Raises ``InputError`` for an empty graph, a cycle or self-loop (naming the
    rows, with their line numbers, or the edges on it), for several roots, and
    for more than ``MAX_LEVELS`` levels.

    >>> import networkx as nx
    >>> _depths(nx.DiGraph([("r", "a"), ("a", "b"), ("r", "b")]), "g")  # r → b is a shortcut
    {'r': 0, 'a': 1, 'b': 2}
    """
    import networkx as nx

    if g.number_of_nodes() == 0:
        raise InputError(f"{source}: no nodes; expected edges parent → child")
    try:  # the generations find a cycle too; only then is it looked for, to name its edges
        depth = {n: d for d, generation in enumerate(nx.topological_generations(g)) for n in generation}
    except nx.NetworkXUnfeasible:
        cycle = nx.find_cycle(g)
        raise InputError(_cycle_message(g, [(u, v) for u, v, *_ in cycle], source)) from None
    roots = [n for n, d in g.in_degree() if d == 0]
    if len(roots) != 1:  # an acyclic graph has at least one
        shown = ", ".join(_node_where(g, n) for n in roots[:5]) + (", …" if len(roots) > 5 else "")
        raise InputError(f"{source}: {len(roots)} roots without a common root ({shown}); "
                         "add one root node and make these its children")
    deepest = max(depth, key=depth.__getitem__)
    if depth[deepest] >= MAX_LEVELS:
        raise InputError(f"{source}: the hierarchy is {depth[deepest] + 1} levels deep (down to "
                         f"{_node_where(g, deepest)}); at most {MAX_LEVELS} levels are supported")
    return depth


def _node_where(g: nx.DiGraph, node: str) -> str:
    line = g.nodes[node].get("line")
    return node if line is None else f"{node} at line {line}"


def _cycle_message(g: nx.DiGraph, cycle: list[tuple[str, str]], source: str) -> str:
    lines = [g.edges[e].get("line") for e in cycle]
    if None not in lines:  # start at the earliest row, so the message follows the file
        k = lines.index(min(lines))
        cycle, lines = cycle[k:] + cycle[:k], lines[k:] + lines[:k]
    if len(cycle) == 1:
        node = cycle[0][0]
        where = f", line {lines[0]}" if lines[0] is not None else ""
        return (f"{source}{where}: {node!r} is its own parent; a node cannot be its own ancestor: "
                "remove that " + ("row" if where else "edge"))
    path = " → ".join([u for u, _ in cycle] + [cycle[0][0]])
    if None in lines:
        rows = "the edges " + ", ".join(f"{u} → {v}" for u, v in cycle)
        fix = "remove or reverse one of them"
    else:
        rows = "the rows at lines " + ", ".join(f"{ln} ({v},{u})" for (u, v), ln in zip(cycle, lines))
        fix = "remove or fix one of these rows"
    return (f"{source}: the hierarchy has a cycle {path} (each node the parent of the next), from {rows}; "
            f"a node cannot be its own ancestor: {fix}")


def hierarchy_from_cophe_json(obj: dict, *, name: str = "cophe-json", source: str = "<json>",
                              code_set: str | None = None) -> Ontology:
    """Build the tree described by a CoPHE-paper hierarchy file (see the module docs).

    Parameters
    ----------
    obj : dict
        ``{code: {"parents": [...], "label": ...}}``, every ``parents`` list of one length k;
        levels are ``L0`` (deepest) … ``Lk``.
    name, source : str
        The ontology's name, and the file name for messages.
    code_set : str, optional
        The ``code_sets`` entry (default: ``source``).

    Returns
    -------
    Ontology

    Raises
    ------
    InputError
        If entries are malformed, or two entries give one node two different parents.
        (Levels are the slots, so this form cannot have a cycle.)

    Examples
    --------
    >>> o = hierarchy_from_cophe_json({"3.1": {"parents": ["3", "@"], "label": "three one"},
    ...                                "3": {"parents": ["3", "@"], "label": "three"}})
    >>> sorted((k, o.levels[o.level[n]]) for k, n in o.codes.items())
    [('3', 'L1'), ('3.1', 'L0')]
    """
    if not isinstance(obj, dict) or not obj:
        raise InputError(f"{source}: expected an object of code → {{\"parents\": [...], \"label\": ...}}")
    for code, entry in obj.items():  # the form, checked entry by entry before anything is built
        parents = entry.get("parents") if isinstance(entry, dict) else None
        if not isinstance(parents, list) or not all(isinstance(x, str) and x.strip() for x in parents):
            raise InputError(f"{source}: entry {excerpt(code)!r}: 'parents' must be a list of codes (strings), "
                             f"got {excerpt(json.dumps(parents) if isinstance(entry, dict) else entry)}")
        if not isinstance(entry.get("label", ""), str | int | float):
            raise InputError(f"{source}: entry {excerpt(code)!r}: 'label' must be text")
    sizes = {len(v["parents"]) for v in obj.values()}
    if len(sizes) != 1 or 0 in sizes:
        raise InputError(f"{source}: every entry needs a 'parents' list of the same length (found lengths "
                         f"{sorted(sizes)})")
    k = sizes.pop()
    levels = tuple(f"L{i}" for i in range(k + 1))
    b = OntologyBuilder(name, levels)
    b.default_max_level = levels[-2]
    b.code_sets = {name: code_set or source}
    chains = []
    stated: dict[tuple[int, str], tuple[tuple[int, str], str]] = {}  # node → (its parent, the entry saying so)
    for code, entry in obj.items():
        if not isinstance(entry, dict):
            raise InputError(f"{source}: entry {code!r} is not an object")
        p = [str(x) for x in entry["parents"]]
        own = 0
        while own < k and p[own] == code:
            own += 1
        # node at level j (> own) is p[j-1]
        chains.append((code, own, p))
        chain = [(own, code)] + [(j, p[j - 1]) for j in range(own + 1, k + 1)]
        for child, parent in zip(chain, chain[1:]):
            other, said_by = stated.setdefault(child, (parent, code))
            if other != parent:
                raise InputError(f"{source}: entry {code!r} puts {child[1]!r} (level {levels[child[0]]}) under "
                                 f"{parent[1]!r}, but entry {said_by!r} puts it under {other[1]!r}; "
                                 "in this form a node has one parent")
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
