"""Probability outputs: decisions, ranking metrics and threshold curves.

Scores are read by :func:`cophe_core.inputs.readers.read_input` (a long file with a
score column, or a wide matrix with one column per code; see
:mod:`cophe_core.inputs.readers`) and validated, like every input, by
:func:`cophe_core.scoring.labels.encode`: each row is scored or rejected with file, line,
value and reason, codes resolve to their canonical form, and a (document, code)
given more than once keeps its **highest** score (the collapsed rows are counted
in a warning). A code not listed for a document scores 0.

**The decision rule** (:meth:`ScoredRun.decide`, the only implementation; the
command line, :mod:`cophe_core.api`, the dashboard, P@k/R@k and the threshold
curve all call it):

- ``threshold=t``: predict the codes scoring **at least** t. A threshold is a
  finite number with 0 < t ≤ 1 (:func:`check_rule`): scores are probabilities,
  every unlisted code scores 0, so t = 0 would predict every code of the
  ontology, and t > 1 predicts nothing.
- ``top_k=k``: predict each document's k best codes with a positive score
  (k ≥ 1): highest score first; **ties broken by the canonical code string,
  ascending** (``401.1`` before ``401.9``, whatever the order of the rows or of
  the ontology's node ids). A code scoring 0 is never predicted, as it is not
  by any threshold.

Definitions, over the evaluated documents:

- **P@k** = |top-k ∩ g| / k, averaged over documents; **R@k** = |top-k ∩ g| / |g|,
  averaged over documents with a gold code (k = 5, 8, 15 by default). The top k
  are the ``top_k=k`` decisions, so P@k's hits are exactly their true positives.
- **micro AUC**: the probability that a random (document, code) pair of the gold
  standard outscores a random pair outside it (ties count one half), over all
  documents and the codes in play; **macro AUC**: the mean over codes with at
  least one positive and one negative document of the same within the code.
- A **threshold curve** gives flat, set-based and CoPHE overall F1 of the
  ``threshold=t`` decisions for each t. Tune the threshold on a development
  split (:func:`tune_threshold`) and apply it to the test split: tuning on the
  test set overstates every score.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from functools import cached_property

import numpy as np
import pandas as pd
import scipy.sparse as sp

from ..base.files import InputError
from ..inputs.readers import SCORE_COLUMNS, RawLabels, RawScores, read_scores
from ..metrics import Evaluation, evaluate
from ..ontology import Ontology
from .decisions import check_rule, decide, ranks
from .labels import Corpus, RowBound, TooManyRejected, encode, refusals

__all__ = [
    "RawScores",
    "read_scores",
    "check_rule",
    "ScoredRun",
    "score_run",
    "tune_threshold",
    "SCORE_COLUMNS",
    "DEFAULT_THRESHOLDS",
]

DEFAULT_THRESHOLDS = tuple(np.round(np.arange(0.05, 0.951, 0.05), 2).tolist())


@dataclass(frozen=True, eq=False)
class ScoredRun:
    """Gold labels and one run's scores on one document index and ontology (see :func:`score_run`).

    Attributes
    ----------
    ontology : Ontology
    docs : ndarray of str
        The evaluated documents.
    gold : csr_matrix
        Documents × nodes, 0/1.
    scores : csr_matrix
        Documents × nodes, each (document, code)'s highest score; 0 (not stored) for codes not listed.
    max_level : str, optional
        The highest level evaluated (default: the ontology's).
    corpus : Corpus, optional
        The validated inputs: rejected and flagged rows, and warnings.
    """

    ontology: Ontology
    docs: np.ndarray
    gold: sp.csr_matrix
    scores: sp.csr_matrix
    max_level: str | None = None
    corpus: Corpus | None = None

    def decide(self, *, threshold: float | None = None, top_k: int | None = None) -> sp.csr_matrix:
        """The binary decisions of the rule (see the module docs): documents × nodes, 0/1 int8.

        Examples
        --------
        >>> from cophe_core import read_labels
        >>> from cophe_core.ontology import icd9_ontology
        >>> run = score_run(read_labels(b"doc_id,code\\n1,401.9\\n"),
        ...                 read_scores(b"doc_id,code,score\\n1,401.9,0.5\\n1,401.1,0.5\\n1,428.0,0.2\\n"),
        ...                 icd9_ontology())
        >>> [run.ontology.keys[n] for n in run.decide(top_k=1).indices]  # a tie: 401.1 sorts first
        ['401.1']
        >>> sorted(run.ontology.keys[n] for n in run.decide(threshold=0.5).indices)
        ['401.1', '401.9']
        """
        rule = check_rule(threshold, top_k)
        return decide(self.scores, rule, ranks=self._ranks if rule[0] == "top_k" else None)

    @cached_property
    def _ranks(self) -> np.ndarray:
        """Rank of each stored score within its document (0 = best): by score descending, then by the
        canonical code string ascending."""
        return ranks(self.scores, self.ontology.keys)

    def evaluate(
        self, *, threshold: float | None = None, top_k: int | None = None, max_level: str | None = None
    ) -> Evaluation:
        """The evaluation of the rule's decisions (:meth:`decide`) up to ``max_level``.

        Examples
        --------
        >>> from cophe_core import read_labels
        >>> from cophe_core.ontology import icd9_ontology
        >>> run = score_run(read_labels(b"doc_id,code\\n1,401.9\\n"),
        ...                 read_scores(b"doc_id,code,score\\n1,401.9,0.9\\n1,428.0,0.2\\n"), icd9_ontology())
        >>> run.evaluate(threshold=0.5).score("flat").f1
        1.0
        """
        pred = self.decide(threshold=threshold, top_k=top_k)
        return evaluate(
            self.gold,
            pred,
            self.ontology,
            docs=self.docs,
            max_level=self.ontology.top_level(max_level, default=self.max_level),
        )

    def curve(
        self, thresholds: Iterable[float] | None = None, *, max_level: str | None = None
    ) -> pd.DataFrame:
        """``threshold, flat_f1, set_based_f1, cophe_f1`` (overall up to the max level) of the
        ``threshold=t`` decisions, for each t (default 0.05, 0.10, …, 0.95).

        Examples
        --------
        >>> from cophe_core import read_labels
        >>> from cophe_core.ontology import icd9_ontology
        >>> run = score_run(read_labels(b"doc_id,code\\n1,401.9\\n"),
        ...                 read_scores(b"doc_id,code,score\\n1,401.9,0.9\\n1,428.0,0.2\\n"), icd9_ontology())
        >>> run.curve([0.1, 0.5]).flat_f1.round(3).tolist()
        [0.667, 1.0]
        """
        rows = []
        for t in DEFAULT_THRESHOLDS if thresholds is None else thresholds:
            ev = self.evaluate(threshold=float(t), max_level=max_level)
            rows.append((float(t), ev.score("flat").f1, ev.score("set_based").f1, ev.score("cophe").f1))
        return pd.DataFrame(rows, columns=["threshold", "flat_f1", "set_based_f1", "cophe_f1"])

    def ranking(self, ks: tuple[int, ...] = (5, 8, 15)) -> dict[str, float]:
        """P@k and R@k of the ``top_k=k`` decisions, and micro and macro AUC (see the module docs).

        Examples
        --------
        >>> from cophe_core import read_labels
        >>> from cophe_core.ontology import icd9_ontology
        >>> run = score_run(read_labels(b"doc_id,code\\n1,401.9\\n"),
        ...                 read_scores(b"doc_id,code,score\\n1,401.9,0.9\\n1,428.0,0.2\\n"), icd9_ontology())
        >>> {k: v for k, v in run.ranking(ks=(1, 2)).items() if "@" in k}
        {'p@1': 1.0, 'r@1': 1.0, 'p@2': 0.5, 'r@2': 1.0}
        """
        n_gold = np.asarray(self.gold.sum(1)).ravel()
        with_gold = n_gold > 0
        out: dict[str, float] = {}
        for k in ks:
            hits = np.asarray(self.decide(top_k=k).multiply(self.gold).sum(1)).ravel()
            out[f"p@{k}"] = float((hits / k).mean()) if len(self.docs) else 0.0
            out[f"r@{k}"] = float((hits[with_gold] / n_gold[with_gold]).mean()) if with_gold.any() else 0.0
        out.update(self._auc())
        return out

    def _auc(self) -> dict[str, float]:
        in_play = np.union1d(self.gold.indices, self.scores.indices)
        n_docs = len(self.docs)
        s = self.scores.tocsc()[:, in_play]
        g = self.gold.tocsc()[:, in_play]
        g.data[:] = 1
        # micro: all (doc, code) pairs of the codes in play
        gcoo, scoo = g.tocoo(), s.tocoo()
        pos_key = gcoo.row.astype(np.int64) * len(in_play) + gcoo.col
        sc_key = scoo.row.astype(np.int64) * len(in_play) + scoo.col
        sc_map = pd.Series(scoo.data, index=sc_key)
        pos = sc_map.reindex(pos_key).fillna(0.0).to_numpy()
        neg_nz = scoo.data[~np.isin(sc_key, pos_key)]
        n_neg = n_docs * len(in_play) - len(pos)
        micro = _mann_whitney(pos, neg_nz, n_neg - len(neg_nz))
        # macro: per code
        aucs = []
        for j in range(len(in_play)):
            docs_pos = g.indices[g.indptr[j] : g.indptr[j + 1]]
            if len(docs_pos) in (0, n_docs):
                continue
            col_docs = s.indices[s.indptr[j] : s.indptr[j + 1]]
            col_scores = s.data[s.indptr[j] : s.indptr[j + 1]]
            is_pos = np.isin(col_docs, docs_pos)
            p = np.zeros(len(docs_pos))
            p[: is_pos.sum()] = col_scores[is_pos]
            neg = col_scores[~is_pos]
            aucs.append(_mann_whitney(p, neg, n_docs - len(docs_pos) - len(neg)))
        return {"auc_micro": micro, "auc_macro": float(np.mean(aucs)) if aucs else float("nan")}


def _mann_whitney(pos: np.ndarray, neg_nonzero: np.ndarray, neg_zeros: int) -> float:
    """P(pos > neg) + ½ P(pos = neg), with ``neg_zeros`` further negatives scoring 0."""
    n_neg = len(neg_nonzero) + neg_zeros
    if len(pos) == 0 or n_neg == 0:
        return float("nan")
    neg = np.sort(neg_nonzero)
    below = np.searchsorted(neg, pos, side="left") + np.where(pos > 0, neg_zeros, 0)
    equal = (
        np.searchsorted(neg, pos, side="right")
        - np.searchsorted(neg, pos, side="left")
        + np.where(pos == 0, neg_zeros, 0)
    )
    return float((below + 0.5 * equal).sum() / (len(pos) * n_neg))


def score_run(
    gold: RawLabels,
    scores: RawScores,
    ontology: Ontology,
    *,
    system: str = "auto",
    max_level: str | None = None,
    bound: RowBound | None = None,
) -> ScoredRun:
    """Validate gold labels and one run's scores through :func:`cophe_core.scoring.labels.encode`, and align them.

    Rejected rows of either file (with file, line, value and reason), flagged rows and warnings are in
    the returned run's ``corpus``.

    Parameters
    ----------
    gold : RawLabels
    scores : RawScores
    ontology : Ontology
    system : {"auto", "diagnosis", "procedure"}
        For ICD-9: which table undotted codes come from.
    max_level : str, optional
        The highest level evaluated (default: the ontology's).
    bound : RowBound, optional
        How much of each file may go unscored (:class:`cophe_core.scoring.labels.RowBound`; default: no bound): a
        file it refuses raises :class:`~cophe_core.scoring.labels.TooManyRejected` (one error naming each), as the
        other inputs are refused; a development split is held to it.

    Examples
    --------
    >>> from cophe_core import read_labels
    >>> from cophe_core.ontology import icd9_ontology
    >>> run = score_run(read_labels(b"doc_id,code\\n1,401.9\\n"),
    ...                 read_scores(b"doc_id,code,score\\n1,401.9,0.9\\n1,zz,0.5\\n", name="s.csv"), icd9_ontology())
    >>> run.corpus.rejected[["file", "line", "value"]].values.tolist()
    [['s.csv', 3, 'zz']]
    >>> score_run(read_labels(b"doc_id,code\\n1,401.9\\n"),
    ...           read_scores(b"doc_id,code,score\\n1,401.9,0.9\\n1,zz,0.5\\n", name="s.csv"), icd9_ontology(),
    ...           bound=RowBound())
    Traceback (most recent call last):
    ...
    cophe_core.scoring.labels.TooManyRejected: s.csv: 1 of its 2 rows (50.0%) cannot be scored, more than the 1% allowed, ...
    """
    if not isinstance(scores, RawScores):
        raise InputError(
            f"{scores.name}: holds code sets, not scores (doc_id,code,score rows, or one score column "
            "per code)"
        )
    if isinstance(gold, RawScores):
        raise InputError(
            f"{gold.name}: the gold standard holds scores; give its code sets (doc_id,code rows)"
        )
    corpus = encode(gold, {"scores": scores}, ontology, system=system)
    if refused := refusals(corpus, bound):
        raise TooManyRejected.together(list(refused.values()))
    return ScoredRun(corpus.ontology, corpus.docs, corpus.gold, corpus.runs["scores"], max_level, corpus)


def tune_threshold(curve: pd.DataFrame, measure: str = "cophe") -> float:
    """The threshold of a (development-split) curve with the highest F1 for ``measure`` (the lowest such
    threshold on a tie).

    Examples
    --------
    >>> tune_threshold(pd.DataFrame({"threshold": [0.3, 0.5], "cophe_f1": [0.6, 0.7]}))
    0.5
    """
    if measure not in ("flat", "set_based", "cophe"):
        raise InputError(f"unknown measure {measure!r} to tune on; choose flat, set_based or cophe")
    col = f"{measure}_f1"
    return float(curve.loc[curve[col].idxmax(), "threshold"])
