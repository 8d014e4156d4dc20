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

**Validation** (one path for CSV rows, edge lists and networkx graphs, in arrays so
that the cost follows the rows): a cycle (named by ``networkx.find_cycle`` once it
is found), a node that is its own parent, parents that are not themselves listed
(CSV), several roots without a common root, and more levels than the ancestors can be kept for
(``MAX_ANCESTOR_CELLS`` levels × nodes, and at most ``MAX_LEVELS``) are
rejected with an :class:`~cophe_core.files.InputError` naming the rows at fault
(file and line numbers) or, for a graph, the edges. In the JSON form, two entries
that give one ancestor two different parents are rejected.

Every ontology built here records its source in
:attr:`~cophe_core.ontology.base.Ontology.code_sets`: ``{name: "file.csv, sha256
<first 12 hex digits of the file's SHA-256>"}``, or ``"networkx graph"``.
"""

from __future__ import annotations

import hashlib
import io
import json
import re
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np
import pandas as pd
from numpy.typing import NDArray

from ..files import InputError, Source, decode_text, excerpt, line_numbers, load_bytes, number_too_long
from .base import Ontology, OntologyBuilder

if TYPE_CHECKING:
    import networkx as nx

__all__ = [
    "load_hierarchy",
    "hierarchy_from_edges",
    "hierarchy_from_cophe_json",
    "hierarchy_from_networkx",
    "file_code_set",
    "GRAPH_CODE_SET",
]

GRAPH_CODE_SET = "networkx graph"
MAX_LEVELS = 32_767  # levels are stored as int16: no hierarchy people write comes near
# Each node's ancestor at every level is kept (Ontology.ancestors, int32) and the closure has one entry per
# (node, ancestor) pair, so a hierarchy costs its levels × its nodes: a chain 32,766 deep (0.4 MB of rows) took
# 5.3 GB. This bound (80 MB of ancestors) holds ICD-10-CM 36 times over and a 350,000-node, 57-level hierarchy.
MAX_ANCESTOR_CELLS = 20_000_000


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
    data, name = load_bytes(source, name)
    text = decode_text(data, name)
    label = Path(name).stem or "custom"
    code_set = file_code_set(name, data)
    if text.lstrip().startswith("{"):
        try:
            obj = json.loads(text)
        except json.JSONDecodeError as e:
            raise InputError(f"{name}, line {e.lineno}: not valid JSON ({e.msg})") from None
        except ValueError:  # a number longer than Python reads: 4,300 digits
            raise number_too_long(text, name) from None
        except RecursionError:
            raise InputError(f"{name}: the JSON is nested too deeply to be a hierarchy file") from None
        return hierarchy_from_cophe_json(obj, name=label, source=name, code_set=code_set)
    return _from_rows(_edge_rows(text, name), name=label, source=name, code_set=code_set)


def _edge_rows(text: str, name: str) -> pd.DataFrame:
    """The rows of a ``child,parent[,title]`` file as columns ``child, parent, title, line`` (cells stripped),
    without the header and the blank rows. One pandas parse of the first three fields of each row, so the
    cost follows the bytes, not the widest row.

    >>> _edge_rows('child,parent\\nroot,\\n\\n"a",root,"A\\ntitle",x\\n', "h.csv").to_numpy().tolist()
    [['root', '', '', 2], ['a', 'root', 'A\\ntitle', 4]]
    """
    try:
        try:
            frame = _first_fields(text, _widest(text))
        except (
            ValueError
        ) as e:  # a quoted comma made the count too high: pandas says how many fields there are
            found = re.search(r"Too many columns specified: expected \d+ and found (\d+)", str(e))
            if not found:
                raise
            frame = _first_fields(text, int(found.group(1)))
    except pd.errors.ParserError:  # a quoted field that spans lines can hide a field from the count
        quote = text.rfind('"')  # in our words, not pandas': the parser's refusal is a quote left open
        raise InputError(
            f"{name}: cannot read it as comma-separated text; a quote near line "
            f"{text.count(chr(10), 0, max(quote, 0)) + 1} may be left open",
            fix='close each quoted value with a second " (rows are child,parent[,title])',
        ) from None
    frame.columns = pd.Index(["child", "parent", "title"])
    frame["line"] = np.asarray(line_numbers(frame, text, ",", header=False))
    for column in ("child", "parent", "title"):
        frame[column] = frame[column].str.strip()
    if (
        len(frame)
        and frame.line.iloc[0] == 1
        and [str(c).lower() for c in frame.iloc[0, :2]] == ["child", "parent"]
    ):
        frame = frame.iloc[1:]
    frame = frame[(frame[["child", "parent", "title"]] != "").any(axis=1)]
    alone = frame.line[frame.parent.eq("") & frame.title.eq("")]  # a root, or a row of one field?
    lines = np.asarray(text.split("\n") if len(alone) else [], dtype=object)
    raw = pd.Series(lines[alone.to_numpy() - 1], dtype=object)
    if len(one := raw[~raw.str.contains(",", regex=False)]):
        raise InputError(
            f"{name}, line {alone.iloc[one.index[0]]}: expected child,parent[,title], got "
            f"{excerpt(one.iloc[0])!r}"
        )
    return frame.reset_index(drop=True)


def _widest(text: str) -> int:
    """At least the number of fields of the widest record: one more than its commas, a record running on
    over the lines that end inside quotes (an odd count of ``"`` so far). Counted on the UTF-8 bytes, where
    a comma, a quote and a newline are one byte each.

    >>> _widest('a,b\\n"x,\\ny",z,w\\n')
    4
    """
    data = np.frombuffer(text.encode("utf-8"), dtype=np.uint8)
    ends = np.r_[np.flatnonzero(data == ord("\n")), len(data)]  # each line's end, the last one unterminated

    def per_line(byte: str) -> np.ndarray:
        return np.diff(np.searchsorted(np.flatnonzero(data == ord(byte)), ends), prepend=0)

    open_after = np.cumsum(per_line('"') % 2) % 2
    record = np.cumsum(np.r_[1, open_after[:-1] == 0])  # a line after a closed one starts a record
    return int(np.bincount(record, weights=per_line(",")).max()) + 1


def _first_fields(text: str, width: int) -> pd.DataFrame:
    """The first three fields of each row of a file whose widest row has ``width`` fields (pandas needs it
    exactly to read only some columns), padded with empty strings."""
    return pd.read_csv(
        io.StringIO(text),
        header=None,
        names=range(max(width, 3)),
        usecols=[0, 1, 2] if width > 3 else None,
        dtype=str,
        keep_default_na=False,
        skip_blank_lines=True,
        engine="c",
    ).iloc[:, :3]


def hierarchy_from_edges(
    edges: list[tuple[str, str, str, int]],
    *,
    name: str = "custom",
    source: str = "<edges>",
    code_set: str | None = None,
) -> Ontology:
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
    rows = pd.DataFrame(list(edges), columns=["child", "parent", "title", "line"], dtype=object)
    return _from_rows(rows, name=name, source=source, code_set=code_set or source)


def hierarchy_from_networkx(graph: nx.DiGraph, *, name: str | None = None) -> Ontology:
    """Build a tree or DAG from a ``networkx.DiGraph`` with edges parent → child.

    Each node is a code named ``str(node)``, titled by its ``title`` (else
    ``label``) attribute, else its name. Levels are longest-path depths from the
    single root, as for a CSV hierarchy (see the module docs), unless the graph
    declares them: a graph attribute ``levels`` (names, bottom-up) and a
    ``level`` attribute naming one of them on every node, each parent's level
    above its children's. Declared levels are kept (with the graph's
    ``default_max_level``, if it names one), and the graph may then have several
    roots: the levels, not a common root, say where each top node sits. So
    :meth:`Ontology.to_networkx` of any ontology, ICD included (a forest of
    chapters, with ICD-10-CM codes that skip a level), reads back with the same
    nodes, parents, titles, levels and scores. No virtual root is added: it
    would be a node, and a level, that the ontology does not have. A node's
    primary parent (for display paths) is the first parent in the graph's order,
    unless an edge into it has ``primary=True``. A ``MultiDiGraph``'s parallel
    edges count once.

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
        (the edges on it are named), several roots without declared levels, a
        node whose declared level is not one of the graph's, a parent not above
        its child, or two nodes whose names print alike.

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
    cophe_core.files.InputError: networkx graph: the hierarchy has a cycle a → b → a (each node the parent of the next), from the edges a → b, b → a; a node cannot be its own ancestor: remove or reverse one of them

    Declared levels, two roots:

    >>> F = nx.DiGraph([("A", "a1"), ("B", "b1")], levels=["code", "group"])
    >>> nx.set_node_attributes(F, {"A": "group", "B": "group", "a1": "code", "b1": "code"}, "level")
    >>> f = hierarchy_from_networkx(F)
    >>> f.levels, sorted((k, f.levels[f.level[n]]) for k, n in f.codes.items())
    (('code', 'group'), [('A', 'group'), ('B', 'group'), ('a1', 'code'), ('b1', 'code')])
    """
    import networkx as nx

    source = GRAPH_CODE_SET
    if not isinstance(graph, nx.DiGraph):
        hint = (
            "; build a directed graph with edges parent → child, e.g. nx.DiGraph(edges)"
            if isinstance(graph, nx.Graph)
            else ""
        )
        raise InputError(
            f"{source}: expected a networkx.DiGraph with edges parent → child, got "
            f"{type(graph).__module__}.{type(graph).__name__}{hint}"
        )
    if graph.number_of_nodes() == 0:
        raise InputError(f"{source}: no nodes; expected edges parent → child")
    if graph.is_multigraph():
        graph = nx.DiGraph(graph)
    key_of: dict[Any, str] = {}
    first: dict[str, Any] = {}
    for node in graph:
        key = str(node).strip()
        if not key:
            raise InputError(f"{source}: node {node!r} has an empty name; every node is a code")
        if key in first:
            raise InputError(
                f"{source}: nodes {first[key]!r} and {node!r} both read as code {key!r}; rename one"
            )
        first[key], key_of[node] = node, key
    rows = []
    for node, attrs in graph.nodes(data=True):
        title = attrs.get("title", attrs.get("label"))
        title = "" if title is None else str(title)
        primary = [bool(graph.edges[p, node].get("primary", False)) for p in graph.pred[node]]
        parents = [p for p, first in zip(graph.pred[node], primary) if first]  # the primary parent first
        parents += [p for p, first in zip(graph.pred[node], primary) if not first]
        rows += [(key_of[node], key_of[p], title) for p in parents] or [(key_of[node], "", title)]
    frame = pd.DataFrame(rows, columns=["child", "parent", "title"], dtype=object)
    declared = _declared_levels(graph, key_of, source)
    return _from_rows(
        frame, name=name or graph.name or "custom", source=source, code_set=source, declared=declared
    )


class _Declared:
    """Levels a graph declares: their names (bottom-up), each node's level index by name, and the default
    highest level (None when the graph names none of its levels)."""

    def __init__(self, levels: tuple[str, ...], level_of: dict[str, int], default: str | None):
        self.levels, self.level_of, self.default = levels, level_of, default


def _declared_levels(graph: nx.DiGraph, key_of: dict[Any, str], source: str) -> _Declared | None:
    """The levels ``graph`` declares (graph attribute ``levels``, node attribute ``level``), or None when it
    declares none. A graph that declares them must give every node one of them."""
    names = graph.graph.get("levels")
    if names is None:
        return None
    levels = tuple(str(x) for x in names) if isinstance(names, list | tuple) else ()
    if not levels or len(set(levels)) < len(levels):
        raise InputError(
            f"{source}: the graph attribute levels is {excerpt(repr(names))}; expected a list of distinct "
            "level names, bottom-up (or no such attribute, to have levels computed as depths)"
        )
    index = {lv: i for i, lv in enumerate(levels)}
    level_of = {}
    for node, lv in graph.nodes(data="level"):
        if lv not in index:
            raise InputError(
                f"{source}: node {excerpt(str(node))!r} has level {excerpt(repr(lv))}, not one of the graph's "
                f"levels ({', '.join(levels)}); give every node one of them, or remove the graph's levels "
                "attribute to have levels computed as depths"
            )
        level_of[key_of[node]] = index[lv]
    default = graph.graph.get("default_max_level")
    return _Declared(levels, level_of, default if default in index else None)


def _from_rows(
    rows: pd.DataFrame, *, name: str, source: str, code_set: str, declared: _Declared | None = None
) -> Ontology:
    """Validate and freeze rows ``child, parent, title[, line]`` (one per node and parent; an empty parent
    makes a root) into an ontology whose levels are longest-path depths, or the ``declared`` ones (which
    allow several roots, and must put every parent above its children).

    Nodes are numbered in the order they are first listed, then ordered by depth. The first row of a child
    gives its primary parent; a repeated ``(child, parent)`` counts once; the last title given wins. Arrays
    throughout, so the cost grows with the rows; networkx is called only to name the edges of a cycle.

    >>> o = _from_rows(pd.DataFrame({"child": ["r", "a", "b", "b"], "parent": ["", "r", "r", "a"],
    ...                              "title": ["", "", "Bee", ""]}), name="t", source="t.csv", code_set="t")
    >>> [(str(k), o.levels[lv], int(p)) for k, lv, p in zip(o.keys, o.level, o.parent)], o.titles[2]
    ([('r', 'd0', -1), ('a', 'd1', 0), ('b', 'd2', 0)], 'Bee')
    """
    if rows.empty:
        raise InputError(f"{source}: no rows; expected child,parent[,title]")
    child, parent, title = (rows[c].to_numpy(dtype=object) for c in ("child", "parent", "title"))
    line = rows["line"].to_numpy() if "line" in rows else None
    if len(empty := np.flatnonzero(child == "")):
        raise InputError(f"{source}{_at(line, empty[0])}: empty child name")
    ids, uniques = pd.factorize(child)  # node ids in the order nodes are first listed
    names = pd.Index(uniques, dtype=object)
    n = len(names)
    titles = names.to_numpy(dtype=object).copy()
    titled = pd.Series(title[title != ""], index=ids[title != ""], dtype=object)
    titled = titled[~titled.index.duplicated(keep="last")]  # the last title given wins
    titles[titled.index.to_numpy()] = titled.to_numpy()
    e_row = np.flatnonzero(parent != "")
    e_parent = names.get_indexer(parent[e_row])
    if len(unknown := np.flatnonzero(e_parent < 0)):
        r = e_row[unknown[0]]
        raise InputError(
            f"{source}{_at(line, r)}: parent {excerpt(parent[r])!r} of {excerpt(child[r])!r} is not "
            f"listed as a node ({len(unknown)} such); add a row for it (an empty parent makes a root)"
        )
    e_child = ids[e_row]
    once = np.sort(np.unique(e_parent.astype(np.int64) * n + e_child, return_index=True)[1])
    edges = _Edges(
        names, line, np.unique(ids, return_index=True)[1], e_parent[once], e_child[once], e_row[once]
    )
    if len(loop := np.flatnonzero(edges.parent == edges.child)):
        raise InputError(
            _cycle_message(edges.graph(loop[:1]), [(edges.name(edges.child[loop[0]]),) * 2], source)
        )
    depth = _depths(edges, source, one_root=declared is None)
    level = None
    if declared is not None:
        level = _checked_levels(edges, declared, source)
    return _ontology(
        name,
        code_set,
        names.to_numpy(dtype=object),
        titles,
        depth,
        edges.parent,
        edges.child,
        declared,
        level,
    )


def _checked_levels(edges: _Edges, declared: _Declared, source: str) -> NDArray[np.int16]:
    """Each node's declared level index (node ids as listed), checked to put every parent above its
    children."""
    level: NDArray[np.int16] = pd.Series(declared.level_of).reindex(edges.names).to_numpy(dtype=np.int16)
    if len(wrong := np.flatnonzero(level[edges.parent] <= level[edges.child])):
        p, c = edges.parent[wrong[0]], edges.child[wrong[0]]
        raise InputError(
            f"{source}: the edge {excerpt(edges.name(p))} → {excerpt(edges.name(c))} goes from level "
            f"{declared.levels[level[p]]} to level {declared.levels[level[c]]} ({len(wrong)} such); "
            "a parent's level must be above its child's (levels are listed bottom-up)"
        )
    return level


class _Edges:
    """A hierarchy's edges, each once and in row order (``parent``, ``child`` node ids and the ``row`` that
    gave it), with what messages need: node names, and line numbers when the rows came from a file."""

    def __init__(
        self,
        names: pd.Index,
        line: np.ndarray | None,
        first_row: np.ndarray,
        parent: np.ndarray,
        child: np.ndarray,
        row: np.ndarray,
    ):
        self.names, self.line, self.first_row = names, line, first_row
        self.parent, self.child, self.row = parent, child, row

    @property
    def n_nodes(self) -> int:
        return len(self.names)

    def name(self, node: int) -> str:
        return str(self.names[node])

    def where(self, node: int) -> str:
        """``"name at line L"`` (the node's first row), or the name alone for a graph."""
        return excerpt(self.name(node)) + _at(self.line, self.first_row[node]).replace(", line", " at line")

    def graph(self, edges: np.ndarray) -> nx.DiGraph:
        """The given edges as a networkx graph parent → child, each with its ``line``."""
        import networkx as nx

        g = nx.DiGraph()
        g.add_nodes_from(self.name(v) for v in np.unique(np.r_[self.parent[edges], self.child[edges]]))
        for e in edges.tolist():  # nodes as listed, so that find_cycle starts where the old reader did
            line = None if self.line is None else int(self.line[self.row[e]])
            g.add_edge(self.name(self.parent[e]), self.name(self.child[e]), line=line)
        return g


def _at(line: np.ndarray | None, row: int) -> str:
    return "" if line is None else f", line {int(line[row])}"


def _depths(edges: _Edges, source: str, *, one_root: bool = True) -> np.ndarray:
    """Each node's depth, the length of the longest path from a root to it, by Kahn's generations: a node
    joins generation k once all its parents are in earlier ones, so k = 1 + the largest parent depth.

    Raises ``InputError`` for a cycle (naming the rows, with their line numbers, or the edges on it), for
    several roots when ``one_root`` (depths named as levels need one root to count from), and for more
    levels than ``MAX_LEVELS`` or than ``MAX_ANCESTOR_CELLS`` / nodes.

    >>> e = _Edges(pd.Index(["r", "a", "b"]), None, np.arange(3), np.array([0, 1, 0]), np.array([1, 2, 2]),
    ...            np.arange(3))
    >>> _depths(e, "g").tolist()  # r → b is a shortcut
    [0, 1, 2]
    """
    n, parent, child = edges.n_nodes, edges.parent, edges.child
    kids = child[np.argsort(parent, kind="stable")]
    indptr = np.concatenate([[0], np.cumsum(np.bincount(parent, minlength=n))])
    waiting = np.bincount(child, minlength=n)  # parents not yet placed
    depth = np.full(n, -1, dtype=np.int64)
    roots = frontier = np.flatnonzero(waiting == 0)
    most = min(MAX_LEVELS, MAX_ANCESTOR_CELLS // n)
    for d in range(most + 1):
        if not len(frontier):
            break
        if d == most:
            raise InputError(
                f"{source}: the hierarchy is {most + 1:,} or more levels deep (down to "
                f"{edges.where(frontier[0])}); "
                + (
                    f"at most {MAX_LEVELS:,} levels are supported"
                    if most == MAX_LEVELS
                    else f"cophe keeps each node's ancestor at every level, at most {MAX_ANCESTOR_CELLS:,} "
                    f"(levels × nodes), so a hierarchy of {n:,} nodes may have at most {most:,} levels"
                )
            )
        depth[frontier] = d
        starts, counts = indptr[frontier], indptr[frontier + 1] - indptr[frontier]
        ends = np.cumsum(counts)
        reached, times = np.unique(
            kids[np.repeat(starts - ends + counts, counts) + np.arange(ends[-1])], return_counts=True
        )
        waiting[reached] -= times
        frontier = reached[waiting[reached] == 0]
    if (depth < 0).any():  # a cycle, or below one: networkx finds one among the edges left
        import networkx as nx

        g = edges.graph(np.flatnonzero((depth[parent] < 0) & (depth[child] < 0)))
        raise InputError(_cycle_message(g, [(u, v) for u, v, *_ in nx.find_cycle(g)], source))
    if one_root and len(roots) != 1:  # an acyclic graph has at least one
        shown = ", ".join(edges.where(r) for r in roots[:5]) + (", …" if len(roots) > 5 else "")
        raise InputError(
            f"{source}: {len(roots)} roots without a common root ({shown}); "
            "add one root node and make these its children"
        )
    return depth


def _ontology(
    name: str,
    code_set: str,
    names: np.ndarray,
    titles: np.ndarray,
    depth: np.ndarray,
    parent: np.ndarray,
    child: np.ndarray,
    declared: _Declared | None = None,
    declared_level: np.ndarray | None = None,
) -> Ontology:
    """The ontology of validated nodes (ids in listed order) and edges (in row order: the first edge into a
    node gives its primary parent), its nodes ordered by depth, then as listed; its levels named by depth,
    or the ``declared`` ones (``declared_level``: each node's index, ids as listed)."""
    n, top = len(names), int(depth.max())
    order = np.lexsort((np.arange(n), depth))
    new = np.empty(n, dtype=np.int64)
    new[order] = np.arange(n)
    primary = np.zeros(len(child), dtype=bool)
    primary[np.unique(child, return_index=True)[1]] = True
    first_parent = np.full(n, -1, dtype=np.int64)
    first_parent[child[primary]] = parent[primary]
    first_parent = first_parent[order]
    extra = np.flatnonzero(~primary)
    extra = extra[np.lexsort((extra, new[child[extra]]))]  # by child, then row
    keys = names[order]
    return Ontology(
        name=name,
        levels=tuple(f"d{d}" for d in range(top, -1, -1)) if declared is None else declared.levels,
        keys=keys,
        titles=titles[order],
        level=(top - depth if declared_level is None else declared_level)[order].astype(np.int16),
        parent=np.where(first_parent >= 0, new[np.maximum(first_parent, 0)], -1).astype(np.int32),
        listed=np.ones(n, dtype=bool),
        codes=dict(zip(keys.tolist(), range(n))),
        default_max_level=("d1" if top >= 1 else "d0") if declared is None else declared.default,
        extra_edges=(new[child[extra]], new[parent[extra]]) if len(extra) else None,
        code_sets={name: code_set},
    )


# A cycle's message lists at most this many of its edges (a 10,000-node cycle once printed all 10,000 rows).
CYCLE_SHOWN = 20


def _cycle_message(g: nx.DiGraph, cycle: list[tuple[str, str]], source: str) -> str:
    """The cycle in words: its path and rows (line numbers when it came from a file), the first
    :data:`CYCLE_SHOWN` of them and then how many more.

    >>> import networkx as nx
    >>> g = nx.DiGraph([(str(i), str((i + 1) % 30)) for i in range(30)])
    >>> m = _cycle_message(g, list(g.edges), "tree.csv")
    >>> "0 → 1 → " in m, "19 → 20" in m, "… and 10 more" in m, "20 → 21" in m
    (True, True, True, False)
    """
    lines = [g.edges[e].get("line") for e in cycle]
    if None not in lines:  # start at the earliest row, so the message follows the file
        k = lines.index(min(lines))
        cycle, lines = cycle[k:] + cycle[:k], lines[k:] + lines[:k]
    if len(cycle) == 1:
        node = cycle[0][0]
        where = f", line {lines[0]}" if lines[0] is not None else ""
        return (
            f"{source}{where}: {node!r} is its own parent; a node cannot be its own ancestor: "
            "remove that " + ("row" if where else "edge")
        )
    more = len(cycle) - CYCLE_SHOWN
    shown, lines = cycle[:CYCLE_SHOWN], lines[:CYCLE_SHOWN]
    path = " → ".join([u for u, _ in shown] + (["…"] if more > 0 else []) + [cycle[0][0]])
    rest = f", … and {more:,} more (a cycle of {len(cycle):,} nodes)" if more > 0 else ""
    if None in lines:
        rows = "the edges " + ", ".join(f"{u} → {v}" for u, v in shown) + rest
        fix = "remove or reverse one of them"
    else:
        rows = "the rows at lines " + ", ".join(f"{ln} ({v},{u})" for (u, v), ln in zip(shown, lines)) + rest
        fix = "remove or fix one of these rows"
    return (
        f"{source}: the hierarchy has a cycle {path} (each node the parent of the next), "
        f"from {rows}; a node cannot be its own ancestor: {fix}"
    )


def hierarchy_from_cophe_json(
    obj: dict[str, Any], *, name: str = "cophe-json", source: str = "<json>", code_set: str | None = None
) -> Ontology:
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
        raise InputError(f'{source}: expected an object of code → {{"parents": [...], "label": ...}}')
    for code, entry in obj.items():  # the form, checked entry by entry before anything is built
        parents = entry.get("parents") if isinstance(entry, dict) else None
        if not isinstance(parents, list) or not all(isinstance(x, str) and x.strip() for x in parents):
            raise InputError(
                f"{source}: entry {excerpt(code)!r}: 'parents' must be a list of codes (strings), "
                f"got {excerpt(json.dumps(parents) if isinstance(entry, dict) else entry)}"
            )
        if not isinstance(entry.get("label", ""), str | int | float):
            raise InputError(f"{source}: entry {excerpt(code)!r}: 'label' must be text")
    sizes = {len(v["parents"]) for v in obj.values()}
    if len(sizes) != 1 or 0 in sizes:
        raise InputError(
            f"{source}: every entry needs a 'parents' list of the same length (found lengths {sorted(sizes)})"
        )
    k = sizes.pop()
    levels = tuple(f"L{i}" for i in range(k + 1))
    b = OntologyBuilder(name, levels)
    b.default_max_level = levels[-2]
    b.code_sets = {name: code_set or source}
    chains = []
    stated: dict[
        tuple[int, str], tuple[tuple[int, str], str]
    ] = {}  # node → (its parent, the entry saying so)
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
                raise InputError(
                    f"{source}: entry {code!r} puts {child[1]!r} (level {levels[child[0]]}) under "
                    f"{parent[1]!r}, but entry {said_by!r} puts it under {other[1]!r}; "
                    "in this form a node has one parent"
                )
    labels = {code: str(entry.get("label", code)) for code, entry in obj.items()}
    for j in range(k, -1, -1):  # top level first, so parents exist before children
        for code, own, p in chains:
            if j > own:
                key, up = p[j - 1], ((levels[j + 1], p[j]) if j < k else None)
                if (levels[j], key) not in b:
                    b.add(levels[j], key, labels.get(key, key), parent=up)
            elif j == own:
                up = (levels[own + 1], p[own]) if own < k else None
                if (levels[j], code) not in b:
                    b.add(levels[j], code, labels[code], parent=up, code=True)
                else:  # listed earlier as someone's ancestor: make it a label too
                    b.add(levels[j], code, labels[code], code=True)
    return b.build()
