"""One document, as a clinical coder reads it: codes grouped by family, each marked.

Status words are the coder's: *matched* (in the gold standard and predicted),
*over-coded* (predicted, not in the gold standard), *missed* (in the gold
standard, not predicted). For a family (a node at e1, e0 or block) the status
compares counts: matched when the model predicts as many codes of the family as
the gold standard holds, over-coded by k, or k missed — the CoPHE view.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from .metrics import Evaluation

__all__ = ["document_codes", "document_families", "STATUS"]

STATUS = {"matched": "in the gold standard and predicted (true positive)",
          "over-coded": "predicted but not in the gold standard (false positive)",
          "missed": "in the gold standard but not predicted (false negative)"}


def _row(ev: Evaluation, doc_id: str) -> int:
    hits = np.nonzero(ev.docs == doc_id)[0]
    if not len(hits):
        raise KeyError(f"no document {doc_id!r}")
    return int(hits[0])


def document_codes(ev: Evaluation, doc_id: str) -> pd.DataFrame:
    """Codes of one document: ``code, title, level, family, family_title, block, status``,
    sorted by family then code. The family is the code's category (e0) in ICD, or its
    ancestor one level below the top in other hierarchies; ``block`` the level above."""
    r = _row(ev, doc_id)
    o = ev.ontology
    g = set(ev.gold.indices[ev.gold.indptr[r]:ev.gold.indptr[r + 1]])
    p = set(ev.pred.indices[ev.pred.indptr[r]:ev.pred.indptr[r + 1]])
    ids = np.array(sorted(g | p), dtype=np.int64)
    fam_level = o.level_index("e0") if "e0" in o.levels else max(len(o.levels) - 2, 0)
    blk_level = min(fam_level + 1, len(o.levels) - 1)
    # a code above the family level is its own family
    fam = np.where(o.ancestors[ids, fam_level] >= 0, o.ancestors[ids, fam_level], ids)
    block = np.where(o.ancestors[ids, blk_level] >= 0, o.ancestors[ids, blk_level], fam)
    status = ["matched" if i in g and i in p else "over-coded" if i in p else "missed" for i in ids]
    df = pd.DataFrame({
        "code": o.keys[ids].astype(str), "title": o.titles[ids].astype(str),
        "level": np.asarray(o.levels, dtype=object)[o.level[ids]],
        "family": o.keys[fam].astype(str), "family_title": o.titles[fam].astype(str),
        "block": [f"{o.keys[b]} {o.titles[b]}" for b in block], "status": status,
    })
    return df.sort_values(["family", "code"], ignore_index=True)


def document_families(ev: Evaluation, doc_id: str) -> pd.DataFrame:
    """Families of one document at each evaluated level above e2: ``level, code, title,
    gold, predicted, status`` (``matched``, ``over-coded by k``, ``k missed``)."""
    r = _row(ev, doc_id)
    o = ev.ontology
    x, y = ev.X.getrow(r).tocoo(), ev.Y.getrow(r).tocoo()
    counts = pd.DataFrame({"node": np.concatenate([x.col, y.col]),
                           "predicted": np.concatenate([x.data, np.zeros_like(y.data)]),
                           "gold": np.concatenate([np.zeros_like(x.data), y.data])})
    counts = counts.groupby("node", as_index=False).sum()
    nodes = counts.node.to_numpy()
    counts["level"] = np.asarray(o.levels, dtype=object)[o.level[nodes]]
    counts = counts[counts.level != o.levels[0]]
    nodes = counts.node.to_numpy()
    counts["code"] = o.keys[nodes].astype(str)
    counts["title"] = o.titles[nodes].astype(str)
    d = counts.predicted - counts.gold
    counts["status"] = np.where(d == 0, "matched", np.where(d > 0, "over-coded by " + d.astype(str),
                                                            (-d).astype(str) + " missed"))
    order = {lv: i for i, lv in enumerate(o.levels)}
    counts = counts.sort_values(["level", "code"], key=lambda s: s.map(order) if s.name == "level" else s)
    return counts[["level", "code", "title", "gold", "predicted", "status"]].reset_index(drop=True)
