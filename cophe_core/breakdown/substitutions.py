"""What the model writes instead: right family, wrong code.

At a family level L (by default the code system's, ``"e0"``, the ICD category;
in a user hierarchy the second level from the bottom, or the only level), in
each document:

- a *missed* code is a gold code that was not predicted;
- an *extra* code is a predicted code that is not in the gold standard.

A missed code and an extra code of the same document and the same family (the
same ancestor at L) form a *candidate pair*. A code above L has no ancestor at
L: it is its own family and never pairs.

Pairs are made greedily, closest first. Candidates are ordered by

1. *shared depth*, descending: the number of levels below L at which both codes
   have the same ancestor (e.g. 428.21 and 428.22 share 428.2 at e1: depth 1;
   428.0 and 428.1 share nothing below 428: depth 0);
2. the gold code's key, then the written code's key;

and a candidate is accepted when neither of its codes is paired already. Each
accepted pair (gold code g, written code w) reads "where the gold standard has
g, the model wrote w".

Worked example (ICD-9, L = e0). A document's gold standard holds 428.21, 428.0
and 401.9; the model predicts 428.22, 428.1, 401.1 and 250.00. Missed: 401.9,
428.0, 428.21; extra: 250.00, 401.1, 428.1, 428.22. The candidates are, in
order,

=========  =======  =======  =====
shared     gold     written  taken
=========  =======  =======  =====
1 (428.2)  428.21   428.22   yes
0          401.9    401.1    yes
0          428.0    428.1    yes
0          428.0    428.22   no: 428.22 is taken
0          428.21   428.1    no: both are taken
=========  =======  =======  =====

so the pairs are 428.21 → 428.22, 401.9 → 401.1 and 428.0 → 428.1; 250.00
(family 250) has no missed code to pair with and stays an extra code.

The matching runs without a loop over documents: in each round, every
candidate that comes first among the remaining candidates of its gold code
and first among those of its written code (in the order above) is accepted,
the candidates touching an accepted code are dropped, and rounds repeat until
no candidate is left. For a strict total order this yields exactly the
sequential greedy matching (Preis 1999: the globally first candidate is always
locally first, and a locally first candidate is never blocked by an earlier
one).
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd
import scipy.sparse as sp

from ..metrics import Evaluation
from ..ontology import Ontology, system_of

__all__ = [
    "substitution_pairs",
    "substitution_table",
    "document_substitutions",
    "substitution_summary",
    "PAIR_COLUMNS",
    "TABLE_COLUMNS",
    "DOCUMENT_COLUMNS",
]

PAIR_COLUMNS = ["doc_id", "family", "gold", "written", "family_code", "gold_code", "written_code"]
TABLE_COLUMNS = [
    "gold_code",
    "gold_title",
    "written_code",
    "written_title",
    "family_code",
    "family_title",
    "documents",
    "gold_documents",
    "rate",
    "examples",
]
DOCUMENT_COLUMNS = ["gold_code", "gold_title", "written_code", "written_title", "family_code", "family_title"]


def _family_level(o: Ontology, level: str | None) -> int:
    """Index of the family level: ``level`` validated, or the default (see the module doc)."""
    if level is not None:
        return o.level_index(level)
    system = system_of(o)
    if system is not None:
        return o.level_index(system.family_level)
    return 1 if len(o.levels) >= 2 else 0


def _difference(a: sp.csr_matrix, b: sp.csr_matrix) -> tuple[np.ndarray, np.ndarray]:
    """(rows, cols) of the entries of 0/1 matrix ``a`` that ``b`` lacks, row-major."""
    d = (a.astype(np.int8) - a.multiply(b).astype(np.int8)).tocsr()
    d.eliminate_zeros()
    d.sort_indices()
    rows = np.repeat(np.arange(d.shape[0]), np.diff(d.indptr))
    return rows.astype(np.int64), d.indices.astype(np.int64)


def _match(o: Ontology, gold: sp.csr_matrix, pred: sp.csr_matrix, lv: int) -> pd.DataFrame:
    """Greedy closest-first pairs: ``row, family, gold, written`` (ints), by row then gold key."""
    anc = o.ancestors
    mr, mc = _difference(gold, pred)  # missed
    er, ec = _difference(pred, gold)  # extra
    missed = pd.DataFrame({"row": mr, "family": anc[mc, lv].astype(np.int64), "gold": mc})
    extra = pd.DataFrame({"row": er, "family": anc[ec, lv].astype(np.int64), "written": ec})
    missed, extra = missed[missed.family >= 0], extra[extra.family >= 0]  # above L: own family, no pair
    cand = missed.merge(extra, on=["row", "family"])
    if not cand.empty:
        g, w = cand.gold.to_numpy(), cand.written.to_numpy()
        below_g, below_w = anc[g, :lv], anc[w, :lv]
        cand["depth"] = ((below_g == below_w) & (below_g >= 0)).sum(axis=1)
        cand["gold_key"] = o.keys[g].astype(str)
        cand["written_key"] = o.keys[w].astype(str)
        # a strict total order: node ids break the (rare) ties of equal keys
        cand = cand.sort_values(
            ["row", "depth", "gold_key", "written_key", "gold", "written"],
            ascending=[True, False, True, True, True, True],
            ignore_index=True,
        )
    n = np.int64(o.n_nodes)
    gk = cand.row.to_numpy(np.int64) * n + cand.gold.to_numpy(np.int64)  # (doc, gold code)
    wk = cand.row.to_numpy(np.int64) * n + cand.written.to_numpy(np.int64)  # (doc, written code)
    alive = np.arange(len(cand))
    taken: list[np.ndarray] = []
    while len(alive):
        # candidates are in the total order, so "first of its group" is the first occurrence
        first_g = np.zeros(len(alive), dtype=bool)
        first_g[np.unique(gk[alive], return_index=True)[1]] = True
        first_w = np.zeros(len(alive), dtype=bool)
        first_w[np.unique(wk[alive], return_index=True)[1]] = True
        won = alive[first_g & first_w]
        taken.append(won)
        alive = alive[~(np.isin(gk[alive], gk[won]) | np.isin(wk[alive], wk[won]))]
    chosen = np.sort(np.concatenate(taken)) if taken else np.zeros(0, dtype=np.int64)
    out = cand.iloc[chosen]
    if "gold_key" in out:
        out = out.sort_values(["row", "gold_key", "gold"], kind="stable")
    return out[["row", "family", "gold", "written"]].reset_index(drop=True).astype(np.int64)


def substitution_pairs(ev: Evaluation, *, level: str | None = None) -> pd.DataFrame:
    """Right family, wrong code: the missed gold codes paired with what the model wrote instead.

    See the module doc for the definition: in each document, a missed gold code
    and an extra predicted code of the same family at ``level`` pair up,
    greedily, closest first.

    Parameters
    ----------
    ev : Evaluation
    level : str, optional
        The family level; default ``"e0"`` (the ICD category) when the ontology
        has it, else its second level from the bottom.

    Returns
    -------
    DataFrame
        One row per pair: ``doc_id`` (str), ``family``, ``gold``, ``written``
        (node ids), ``family_code``, ``gold_code``, ``written_code`` (str);
        documents in the order of ``ev.docs``, then by gold code.

    Raises
    ------
    ValueError
        If ``level`` is not a level of the ontology.

    Examples
    --------
    >>> from cophe_core import score_files
    >>> gold = b"doc_id,code\\n1,428.21\\n1,428.0\\n1,401.9\\n"
    >>> pred = b"doc_id,code\\n1,428.22\\n1,428.1\\n1,401.1\\n1,250.00\\n"
    >>> ev = score_files(gold, {"A": pred}).evaluation("A")
    >>> substitution_pairs(ev)[["doc_id", "family_code", "gold_code", "written_code"]]
      doc_id family_code gold_code written_code
    0      1         401     401.9        401.1
    1      1         428     428.0        428.1
    2      1         428    428.21       428.22
    """
    o = ev.ontology
    pairs = _match(o, ev.gold, ev.pred, _family_level(o, level))
    return _named(o, pairs, np.asarray(ev.docs))


def _named(o: Ontology, pairs: pd.DataFrame, docs: np.ndarray) -> pd.DataFrame:
    """Pairs with ``doc_id`` and codes added, in :data:`PAIR_COLUMNS`."""
    out = pd.DataFrame(
        {
            "doc_id": docs[pairs.row.to_numpy()].astype(str).astype(object),
            "family": pairs.family.to_numpy(np.int64),
            "gold": pairs.gold.to_numpy(np.int64),
            "written": pairs.written.to_numpy(np.int64),
        }
    )
    for col in ("family", "gold", "written"):
        out[f"{col}_code"] = o.keys[out[col].to_numpy()].astype(str).astype(object)
    return out[PAIR_COLUMNS]


def _described(o: Ontology, pairs: pd.DataFrame) -> dict[str, Any]:
    """``gold_code, gold_title, written_code, ...`` columns for pairs of node ids."""
    cols: dict[str, Any] = {}
    for col in ("gold", "written", "family"):
        ids = pairs[col].to_numpy(np.int64)
        cols[f"{col}_code"] = o.keys[ids].astype(str).astype(object)
        cols[f"{col}_title"] = o.titles[ids].astype(str).astype(object)
    return cols


def substitution_table(
    ev: Evaluation, *, level: str | None = None, family: int | None = None
) -> pd.DataFrame:
    """The substitutions of a run, one row per (gold code, written code), most frequent first.

    Parameters
    ----------
    ev : Evaluation
    level : str, optional
        The family level (see :func:`substitution_pairs`).
    family : int, optional
        A node id at any level: keep only the pairs whose gold code is that
        node or lies below it.

    Returns
    -------
    DataFrame
        Columns ``gold_code, gold_title, written_code, written_title,
        family_code, family_title``, ``documents`` (documents with this pair),
        ``gold_documents`` (documents whose gold standard holds the gold code),
        ``rate`` = documents / gold_documents, and ``examples`` (up to three
        document ids, ", "-joined, in document order). Sorted by ``documents``
        descending, then gold code and written code. No pair: the same
        columns, no row.

    Examples
    --------
    >>> from cophe_core import score_files
    >>> gold = b"doc_id,code\\n1,428.21\\n2,428.21\\n3,428.21\\n3,401.9\\n"
    >>> pred = b"doc_id,code\\n1,428.22\\n2,428.22\\n3,428.21\\n3,401.1\\n"
    >>> t = substitution_table(score_files(gold, {"A": pred}).evaluation("A"))
    >>> t[["gold_code", "written_code", "documents", "gold_documents", "rate", "examples"]]
      gold_code written_code  documents  gold_documents      rate examples
    0    428.21       428.22          2               3  0.666667     1, 2
    1     401.9        401.1          1               1  1.000000        3
    """
    o = ev.ontology
    pairs = _match(o, ev.gold, ev.pred, _family_level(o, level))
    if family is not None:
        if not 0 <= family < o.n_nodes:
            raise ValueError(f"no node {family} in ontology {o.name} ({o.n_nodes} nodes)")
        gold = pairs.gold.to_numpy()
        under = np.asarray(o.closure_of(gold)[gold, :][:, [family]].todense()).ravel() > 0
        pairs = pairs[under]
    if pairs.empty:
        return pd.DataFrame(
            {
                c: pd.Series(
                    dtype=float
                    if c == "rate"
                    else np.int64
                    if c in ("documents", "gold_documents")
                    else object
                )
                for c in TABLE_COLUMNS
            }
        )
    pairs = pairs.assign(doc_id=np.asarray(ev.docs)[pairs.row.to_numpy()].astype(str))
    grouped = pairs.groupby(["gold", "written"], sort=False)
    counts = grouped.agg(
        family=("family", "first"),
        documents=("row", "size"),
        examples=("doc_id", lambda s: ", ".join(s.iloc[:3])),
    ).reset_index()
    gold_docs = np.bincount(ev.gold.indices, minlength=o.n_nodes)
    out = pd.DataFrame(_described(o, counts))
    out["documents"] = counts.documents.to_numpy(np.int64)
    out["gold_documents"] = gold_docs[counts.gold.to_numpy()].astype(np.int64)
    out["rate"] = out.documents / out.gold_documents
    out["examples"] = counts.examples.to_numpy()
    out = out.sort_values(
        ["documents", "gold_code", "written_code"], ascending=[False, True, True], ignore_index=True
    )
    return out[TABLE_COLUMNS]


def document_substitutions(ev: Evaluation, doc_id: str, *, level: str | None = None) -> pd.DataFrame:
    """The substitutions in one document: ``gold_code, gold_title, written_code, written_title,
    family_code, family_title``, by gold code.

    Raises
    ------
    KeyError
        If the document is not in the evaluation.

    Examples
    --------
    >>> from cophe_core import score_files
    >>> gold = b"doc_id,code\\n1,428.21\\n1,401.9\\n2,250.00\\n"
    >>> pred = b"doc_id,code\\n1,428.22\\n1,401.9\\n2,250.01\\n"
    >>> ev = score_files(gold, {"A": pred}).evaluation("A")
    >>> document_substitutions(ev, "1")[["gold_code", "written_code", "family_title"]]
      gold_code written_code   family_title
    0    428.21       428.22  Heart failure
    >>> document_substitutions(ev, "9")
    Traceback (most recent call last):
    KeyError: "no document '9'"
    """
    hits = np.nonzero(np.asarray(ev.docs).astype(str) == str(doc_id))[0]
    if not len(hits):
        raise KeyError(f"no document {doc_id!r}")
    r = int(hits[0])
    o = ev.ontology
    pairs = _match(o, ev.gold[r : r + 1], ev.pred[r : r + 1], _family_level(o, level))
    return pd.DataFrame(_described(o, pairs), columns=DOCUMENT_COLUMNS)[DOCUMENT_COLUMNS]


def substitution_summary(ev: Evaluation, *, level: str | None = None) -> dict[str, int | float]:
    """How much of a run's error is substitution: ``pairs``, ``missed``, ``extra`` (all missed and
    extra codes of the run) and ``missed_share`` = pairs / missed, ``extra_share`` = pairs / extra
    (0.0 when the denominator is 0).

    Examples
    --------
    >>> from cophe_core import score_files
    >>> gold = b"doc_id,code\\n1,428.21\\n1,401.9\\n"
    >>> pred = b"doc_id,code\\n1,428.22\\n1,250.00\\n"
    >>> substitution_summary(score_files(gold, {"A": pred}).evaluation("A"))
    {'pairs': 1, 'missed': 2, 'extra': 2, 'missed_share': 0.5, 'extra_share': 0.5}
    """
    o = ev.ontology
    n_pairs = len(_match(o, ev.gold, ev.pred, _family_level(o, level)))
    missed = len(_difference(ev.gold, ev.pred)[0])
    extra = len(_difference(ev.pred, ev.gold)[0])
    return {
        "pairs": n_pairs,
        "missed": missed,
        "extra": extra,
        "missed_share": n_pairs / missed if missed else 0.0,
        "extra_share": n_pairs / extra if extra else 0.0,
    }
