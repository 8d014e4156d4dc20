"""The decision rule that turns a run's scores (probabilities) into code sets: a threshold or a top-k.

- **Threshold** t: predict the codes scoring at least t (a finite number with 0 < t ≤ 1: scores are
  probabilities, and every unlisted code scores 0, so t = 0 would predict every code).
- **Top-k**: predict each document's k highest-scoring codes, ties broken by the code string, ascending.

A module of its own, below both :mod:`cophe_core.metrics` (its functions of probabilities) and
:mod:`cophe_core.scoring.scores` (the runs given as scores), so that neither imports the other.
"""

from __future__ import annotations

import math
import numbers

import numpy as np
import scipy.sparse as sp

from ..base.files import InputError

__all__ = ["Rule", "check_rule", "decide", "ranks"]

Rule = tuple[str, float | int]


def check_rule(threshold: float | None = None, top_k: int | None = None) -> Rule:
    """Validate a decision rule: exactly one of a threshold (finite, 0 < t ≤ 1) and a top-k (integer ≥ 1).

    Parameters
    ----------
    threshold : float, optional
        Predict the codes scoring at least this.
    top_k : int, optional
        Predict each document's ``top_k`` best codes.

    Returns
    -------
    ("threshold", float) or ("top_k", int)

    Raises
    ------
    InputError
        With a message saying what a valid rule is.

    Examples
    --------
    >>> check_rule(threshold=0.5)
    ('threshold', 0.5)
    >>> check_rule(top_k=np.int64(5))
    ('top_k', 5)
    >>> check_rule(threshold=float("nan"))
    Traceback (most recent call last):
    ...
    cophe_core.base.files.InputError: the threshold is nan; give a number above 0 and at most 1, such as 0.5
    """
    if (threshold is None) == (top_k is None):
        raise InputError("give exactly one decision rule: a threshold (such as 0.5) or a top-k (such as 15)")
    if threshold is not None:
        if isinstance(threshold, bool) or not isinstance(threshold, numbers.Real):
            raise InputError(
                f"the threshold {threshold!r} is not a number; give a number above 0 and at most 1, "
                "such as 0.5"
            )
        t = float(threshold)
        if math.isnan(t):
            raise InputError("the threshold is nan; give a number above 0 and at most 1, such as 0.5")
        if not 0 < t <= 1:
            raise InputError(
                f"the threshold {t:g} is outside (0, 1]: scores are probabilities and every code not "
                "listed scores 0, so give a number above 0 and at most 1, such as 0.5"
            )
        return "threshold", t
    if isinstance(top_k, bool) or not isinstance(top_k, numbers.Integral) or top_k < 1:
        raise InputError(f"top-k must be a whole number of at least 1, not {top_k!r}")
    return "top_k", int(top_k)


def ranks(scores: sp.csr_matrix, keys: np.ndarray) -> np.ndarray:
    """The rank of each stored score within its document (0 = best): by score descending, then by the code
    string (``keys`` of the columns) ascending.

    >>> s = sp.csr_matrix(np.array([[0.5, 0.9, 0.5]]))
    >>> ranks(s, np.array(["b", "c", "a"])).tolist()  # the tie at 0.5 goes to "a"
    [2, 0, 1]
    """
    s = scores
    rows = np.repeat(np.arange(s.shape[0]), np.diff(s.indptr))
    in_play, pos = np.unique(s.indices, return_inverse=True)
    keys = np.asarray(keys, dtype=object)[in_play].astype(str)
    key_rank = np.empty(len(in_play), dtype=np.int64)
    key_rank[np.argsort(keys, kind="stable")] = np.arange(len(in_play))
    order = np.lexsort((key_rank[pos], -s.data, rows))
    out = np.empty(len(order), dtype=np.int64)
    out[order] = np.arange(len(order)) - s.indptr[rows[order]]
    return out


def decide(scores: sp.csr_matrix, rule: Rule, *, ranks: np.ndarray | None = None) -> sp.csr_matrix:
    """The binary decisions (documents × columns, 0/1 int8) of a checked ``rule`` (:func:`check_rule`) on
    ``scores``; a top-k needs the :func:`ranks` of the scores.

    >>> s = sp.csr_matrix(np.array([[0.5, 0.9, 0.2]]))
    >>> decide(s, ("threshold", 0.5)).toarray().tolist()
    [[1, 1, 0]]
    >>> decide(s, ("top_k", 1), ranks=ranks(s, np.array(["a", "b", "c"]))).toarray().tolist()
    [[0, 1, 0]]
    """
    kind, value = rule
    if kind == "threshold":
        keep = np.asarray(scores.data >= value)
    elif ranks is None:
        raise ValueError("a top-k decision needs the ranks of the scores")
    else:
        keep = np.asarray(ranks < value)
    # new index arrays: eliminate_zeros() works in place and must not touch the scores
    m = sp.csr_matrix((keep.astype(np.int8), scores.indices.copy(), scores.indptr.copy()), shape=scores.shape)
    m.eliminate_zeros()
    return m
