"""A focused, bounded view of the code tree for drawing (SPEC §6).

Browsers choke on large Plotly trees (16,895 nodes take 24-36 s; 78,770 never
finish), so a view holds only the subtree under a focus node, down to a depth
limit, with the smallest siblings folded into an "Other" bucket. Bucket counts
are sums of the children's counts, and every rate (P/R/F1, balance) is
recomputed from the summed counts, never averaged.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from ..metrics import balance, prf
from ..ontology import Ontology

__all__ = ["COUNTS", "ROOT", "focused_subtree", "with_rates"]

COUNTS = ["gold", "predicted", "tp", "fp", "fn", "set_tp", "set_fp", "set_fn", "docs_over", "docs_under"]
ROOT = "root"


def with_rates(df: pd.DataFrame, prefix: str = "") -> pd.DataFrame:
    """Add ``precision, recall, f1``, set-based rates and ``balance`` from the count columns.

    balance: :func:`~cophe_core.metrics.balance`.

    Examples
    --------
    >>> import pandas as pd
    >>> counts = pd.DataFrame({"tp": [2], "fp": [1], "fn": [0], "set_tp": [1], "set_fp": [0], "set_fn": [0]})
    >>> with_rates(counts)[["precision", "f1", "set_f1", "balance"]].round(3).values.tolist()
    [[0.667, 0.8, 1.0, 0.333]]
    """
    c = {k: df[prefix + k].to_numpy(dtype=float) for k in ("tp", "fp", "fn", "set_tp", "set_fp", "set_fn")}
    df = df.copy()
    for name, (tp, fp, fn) in (
        ("", (c["tp"], c["fp"], c["fn"])),
        ("set_", (c["set_tp"], c["set_fp"], c["set_fn"])),
    ):
        p, r, f = prf(tp, fp, fn)
        df[f"{prefix}{name}precision"], df[f"{prefix}{name}recall"], df[f"{prefix}{name}f1"] = p, r, f
    df[prefix + "balance"] = balance(c["tp"], c["fp"], c["fn"])
    return df


def _children_by_mass(table: pd.DataFrame, size_cols: list[str]) -> dict[int, np.ndarray]:
    """Parent id (-1 for the top) → child ids, largest mass first, in one sort."""
    ids = table.index.to_numpy()
    parent = table["parent"].to_numpy()
    parent = np.where(np.isin(parent, ids), parent, -1)
    mass = table[size_cols].to_numpy().sum(axis=1)
    order = np.lexsort((-mass, parent))
    parent, ids = parent[order], ids[order]
    cuts = np.flatnonzero(np.diff(parent)) + 1
    return {int(grp[0]): kids for grp, kids in zip(np.split(parent, cuts), np.split(ids, cuts)) if len(grp)}


def focused_subtree(
    nodes: pd.DataFrame,
    ontology: Ontology,
    focus: int | None = None,
    *,
    depth: int = 2,
    max_children: int = 40,
    max_nodes: int = 2000,
    min_share: float = 0.0,
    prefixes: tuple[str, ...] = ("",),
    size: str = "gold+predicted",
) -> pd.DataFrame:
    """The rows to draw for a focus node.

    Parameters
    ----------
    nodes : DataFrame
        A per-node table (``Evaluation.nodes``, or a comparison table with
        prefixed count columns), with columns ``node``, ``parent`` and the
        :data:`COUNTS` columns for each prefix.
    focus : int, optional
        Node id to centre on; ``None`` for the whole tree under a virtual root.
    depth : int
        Levels drawn below the focus.
    max_children : int
        Children kept per node, largest first; the rest become one "Other" row.
    max_nodes : int
        Hard cap on the rows returned.
    min_share : float
        Children whose size is below this share of the view's size (the focus, or all codes) fold into
        "Other" as well: a tile too thin to carry a label is better read in the Other list. Below the
        first level, an "Other" itself below this share is left out: its families are the blank remainder
        of their family's tile (whose counts still hold them), listed when the view focuses on it.
    size : str
        ``"+"``-joined count columns (of the first prefix) that give each row its size.

    Returns
    -------
    DataFrame
        ``id, parent_id, node`` (-1 for Other and the root), ``code, title, label, level, depth,
        n_children, value`` plus the summed counts and rates per prefix; ``merged``, for an "Other" row,
        the node ids it folds together (empty otherwise); and ``error_share``, the row's extra plus missed
        codes (first prefix) over all of them at its level.

    Examples
    --------
    >>> from cophe_core import score_files
    >>> gold = b"doc_id,code\\n1,401.9\\n1,428.0\\n2,250.00\\n"
    >>> runs = {"A": b"doc_id,code\\n1,401.1\\n2,250.00\\n", "B": b"doc_id,code\\n1,401.9\\n1,428.0\\n2,250.01\\n"}
    >>> s = score_files(gold, runs)
    >>> a, b = s.evaluation("A"), s.evaluation("B")
    >>> sub = focused_subtree(b.nodes, b.ontology)
    >>> sub.code.tolist()[:3]
    ['', '249-259', '401-405']
    """
    cols = [p + k for p in prefixes for k in COUNTS if p + k in nodes.columns]
    table = nodes.set_index("node")
    size_cols = [prefixes[0] + s for s in size.split("+")]
    children = _children_by_mass(table, size_cols)
    present = set(table.index)

    levels = np.asarray(ontology.levels, dtype=object)
    mass_of = table[size_cols].sum(axis=1)
    view = (
        mass_of.loc[children.get(-1, [])].sum()
        if focus is None or focus not in present
        else mass_of.loc[focus]
    )
    floor = min_share * float(view)
    real: list[tuple[str, str, int, int]] = []  # id, parent id, node, depth
    buckets: list[dict[str, object]] = []
    if focus is None or focus not in present:
        top = children.get(-1, np.array([], dtype=int))
        buckets.append(
            {
                "id": ROOT,
                "parent_id": "",
                "title": "All codes",
                "depth": 0,
                "merged": (),
                "level": "",
                **table.loc[top, cols].sum().to_dict(),
            }
        )
        frontier = [(ROOT, -1)]
    else:
        real.append((f"n{focus}", "", focus, 0))
        frontier = [(f"n{focus}", focus)]

    for d in range(1, depth + 1):
        nxt = []
        for pid, node in frontier:
            kids = children.get(node, np.array([], dtype=int))
            cap = max(0, min(max_children, max_nodes - len(real) - len(buckets) - 1))
            big = int(np.count_nonzero(mass_of.loc[kids].to_numpy() >= floor)) if len(kids) else 0
            budget = min(cap, big)  # kids come largest first
            keep, rest = kids[:budget], kids[budget:]
            if len(rest) == 1 and cap > budget:  # an "Other" of one is that one
                keep, rest = kids, kids[:0]
            if d > 1 and not len(keep):
                # Below the top, a family none of whose children is large enough for a label stays one
                # tile: an "Other" of all its children would repeat it, and such tiles would outnumber
                # the named families. Its children are one click away (focus on it).
                continue
            real += [(f"n{k}", pid, int(k), d) for k in keep]
            nxt += [(f"n{k}", int(k)) for k in keep]
            if d > 1 and len(rest) and mass_of.loc[rest].sum() < floor:
                # Below the top, an "Other" too thin for its label is not drawn: its families stay in the
                # blank remainder of their family's tile, one click away (focus on it). Drawn, such grey
                # slivers outnumbered the named families.
                continue
            if len(rest) and len(real) + len(buckets) < max_nodes:
                buckets.append(
                    {
                        "id": f"other:{pid}",
                        "parent_id": pid,
                        "title": f"Other ({len(rest)} smaller)",
                        "depth": d,
                        "merged": tuple(int(k) for k in rest),
                        "level": str(levels[ontology.level[rest[0]]]),
                        **table.loc[rest, cols].sum().to_dict(),
                    }
                )
        frontier = nxt
    ids = np.array([r[2] for r in real], dtype=np.int64)
    rows = pd.DataFrame(
        {
            "id": [r[0] for r in real],
            "parent_id": [r[1] for r in real],
            "node": ids,
            "code": ontology.keys[ids].astype(str) if len(ids) else [],
            "title": ontology.titles[ids].astype(str) if len(ids) else [],
            "level": levels[ontology.level[ids]] if len(ids) else [],
            "depth": [r[3] for r in real],
        }
    )
    rows["merged"] = [()] * len(rows)
    rows[cols] = table.loc[ids, cols].to_numpy() if len(ids) else np.zeros((0, len(cols)))
    other = pd.DataFrame(
        buckets, columns=["id", "parent_id", "title", "depth", "merged", "level", *cols]
    ).assign(node=-1, code="")
    rows = pd.concat([other[other.id == ROOT], rows, other[other.id != ROOT]], ignore_index=True)
    df = rows
    df[cols] = df[cols].astype(np.int64)
    df["n_children"] = [len(children.get(n, ())) if n >= 0 else 0 for n in df.node]
    df.loc[df.id == ROOT, "n_children"] = len(children.get(-1, ()))
    df["value"] = df[size_cols].sum(axis=1)
    df["label"] = np.where(df.code != "", df.code + " " + df.title.str.slice(0, 40), df.title)
    for p in prefixes:
        df = with_rates(df, p)
    # error coverage: a tile's extra + missed codes over all of the run's at the tile's level
    errors = table[prefixes[0] + "fp"] + table[prefixes[0] + "fn"]
    per_level = errors.groupby(levels[ontology.level[table.index.to_numpy()]]).sum()
    total = df.level.map(per_level).fillna(0).to_numpy(dtype=float)
    mine = (df[prefixes[0] + "fp"] + df[prefixes[0] + "fn"]).to_numpy(dtype=float)
    df["error_share"] = np.divide(mine, total, out=np.zeros_like(mine), where=total > 0)
    return df
