"""Probability outputs: reading scores, decisions, ranking metrics and threshold curves.

Scores come as a long file with a score column (``doc_id, code, score``) or as
a wide matrix with one column per code (Edin et al. store sigmoid outputs per
code in a feather file with ``_id`` and ``target``). From a wide matrix (every
numeric column with values in [0, 1] is a code) only each document's 100
highest non-zero scores are kept; every code not listed for
a document scores 0.

Definitions, over the evaluated documents:

- **P@k** = |top-k ∩ g| / k, averaged over documents; **R@k** = |top-k ∩ g| / |g|,
  averaged over documents with a gold code (k = 5, 8, 15 by default).
- **micro AUC**: the probability that a random (document, code) pair of the gold
  standard outscores a random pair outside it (ties count one half), over all
  documents and the codes in play; **macro AUC**: the mean over codes with at
  least one positive and one negative document of the same within the code.
- A **threshold curve** gives flat, set-based and CoPHE overall F1 for each
  decision threshold (score ≥ t). Tune the threshold on a development split
  (:func:`tune_threshold`) and apply it to the test split: tuning on the test
  set overstates every score.
"""

from __future__ import annotations

import io
from dataclasses import dataclass, field
from functools import cached_property
from pathlib import Path

import numpy as np
import pandas as pd
import scipy.sparse as sp

from .labels import _resolve_codes
from .metrics import Evaluation, evaluate
from .ontology import Ontology
from .readers import (
    DOC_COLUMNS,
    REJECTED_COLUMNS,
    InputError,
    RawLabels,
    Source,
    _decode,
    _load_bytes,
    _pick,
    parse_delimited,
    sniff_separator,
)

__all__ = ["RawScores", "read_scores", "decide", "ScoredRun", "score_run", "tune_threshold", "SCORE_COLUMNS"]

SCORE_COLUMNS = ("score", "prob", "probability", "confidence", "pred_score")
WIDE_KEEP = 100


@dataclass
class RawScores:
    """Scored (document, code) pairs from one file: ``frame`` has ``doc_id, code, score, line``."""

    name: str
    docs: np.ndarray
    frame: pd.DataFrame
    rejected: pd.DataFrame = field(default_factory=lambda: pd.DataFrame(columns=REJECTED_COLUMNS))


def read_scores(source: Source, *, name: str | None = None, doc_col: str | None = None,
                code_col: str | None = None, score_col: str | None = None) -> RawScores:
    """Read a long scores file or a wide per-code score matrix (CSV, TSV, Parquet or Feather)."""
    data, name = _load_bytes(source, name)
    suffix = Path(name).suffix.lower()
    if suffix in (".feather", ".arrow") or data[:6] == b"ARROW1":
        try:
            frame = pd.read_feather(io.BytesIO(data))
        except Exception as e:  # pyarrow raises several types for corrupt files
            raise InputError(f"{name}: cannot read as Feather ({type(e).__name__}: {e})") from None
        frame.index = frame.index + 1
    elif suffix == ".parquet" or data[:4] == b"PAR1":
        frame = pd.read_parquet(io.BytesIO(data))
        frame.index = frame.index + 1
    else:
        text = _decode(data, name)
        frame = parse_delimited(text, name, sniff_separator(text, name))
    cols = [str(c) for c in frame.columns]
    frame.columns = cols
    lower = {c.lower(): c for c in cols}
    score = lower.get(score_col.lower()) if score_col else next((lower[c] for c in SCORE_COLUMNS if c in lower), None)
    if score is not None:
        return _long(frame, name, doc_col, code_col, score)
    return _wide(frame, name, doc_col)


def _long(frame: pd.DataFrame, name: str, doc_col, code_col, score: str) -> RawScores:
    cols = [c for c in frame.columns if c != score]
    doc = _pick(cols, doc_col, DOC_COLUMNS, "document id", name)
    code = _pick([c for c in cols if c != doc], code_col, ("code", "icd9_code", "icd_code", "label", "codes"),
                 "code", name)
    values = pd.to_numeric(frame[score], errors="coerce")
    bad = values.isna() | ~np.isfinite(values.fillna(0)) | (frame[doc].astype(str).str.strip() == "") \
        | (frame[code].astype(str).str.strip() == "")
    rejected = pd.DataFrame({"file": name, "line": frame.index[bad], "value": frame.loc[bad, score].astype(str),
                             "reason": "score is not a number, or the document or code is empty"})
    ok = frame.loc[~bad]
    out = pd.DataFrame({"doc_id": ok[doc].astype(str).str.strip(), "code": ok[code].astype(str),
                        "score": values[~bad].astype(float), "line": ok.index})
    return RawScores(name, out.doc_id.unique(), out.reset_index(drop=True), rejected.reset_index(drop=True))


def _wide(frame: pd.DataFrame, name: str, doc_col) -> RawScores:
    cols = list(frame.columns)
    doc = _pick(cols, doc_col, DOC_COLUMNS, "document id", name)
    code_cols = [c for c in cols if c != doc and c.lower() not in ("target", "targets", "labels", "text")]
    numeric = frame[code_cols].apply(pd.to_numeric, errors="coerce")
    # per-code probabilities lie in [0, 1]; id or sequence columns (ROW_ID, SEQ_NUM) do not
    code_cols = [c for c in code_cols if numeric[c].notna().all() and numeric[c].between(0, 1).all()]
    if len(code_cols) < 2:
        raise InputError(f"{name}: no score column ({', '.join(SCORE_COLUMNS)}) and no per-code score columns; "
                         "expected doc_id,code,score rows or one numeric column per code")
    values = numeric[code_cols].to_numpy(dtype=float)
    keep = min(WIDE_KEEP, values.shape[1])
    top = np.argpartition(-values, keep - 1, axis=1)[:, :keep]
    rows = np.repeat(np.arange(len(frame)), keep)
    picked = values[rows, top.ravel()]
    nz = picked > 0
    out = pd.DataFrame({"doc_id": frame[doc].astype(str).to_numpy()[rows[nz]],
                        "code": np.asarray(code_cols, dtype=object)[top.ravel()[nz]],
                        "score": picked[nz], "line": frame.index.to_numpy()[rows[nz]]})
    return RawScores(name, frame[doc].astype(str).unique(), out)


def decide(scores: RawScores, *, threshold: float | None = None, top_k: int | None = None) -> RawLabels:
    """Binary decisions: codes scoring ≥ ``threshold``, or each document's ``top_k`` best (ties by code)."""
    f = scores.frame
    if (threshold is None) == (top_k is None):
        raise ValueError("give exactly one of threshold and top_k")
    if threshold is not None:
        chosen = f[f.score >= threshold]
    else:
        order = f.sort_values(["doc_id", "score", "code"], ascending=[True, False, True])
        chosen = order[order.groupby("doc_id").cumcount() < top_k]
    return RawLabels(scores.name, scores.docs, chosen[["doc_id", "code", "line"]].reset_index(drop=True),
                     scores.rejected)


@dataclass(frozen=True, eq=False)
class ScoredRun:
    """Gold labels and one run's scores on one document index and ontology (see :func:`score_run`)."""

    ontology: Ontology
    docs: np.ndarray
    gold: sp.csr_matrix  # docs × nodes, 0/1
    scores: sp.csr_matrix  # docs × nodes, score (0 = not scored)
    max_level: str | None = None

    def decisions(self, *, threshold: float | None = None, top_k: int | None = None) -> sp.csr_matrix:
        s = self.scores
        if (threshold is None) == (top_k is None):
            raise ValueError("give exactly one of threshold and top_k")
        if threshold is not None:
            if threshold <= 0:
                raise ValueError("a threshold must be above 0 (unscored codes score 0)")
            keep = s.data >= threshold
            # copies: eliminate_zeros() below works in place and must not touch the scores
            m = sp.csr_matrix((keep.astype(np.int8), s.indices.copy(), s.indptr.copy()), shape=s.shape)
        else:
            m = self._top_k_mask(top_k)
        m.eliminate_zeros()
        return m

    def _top_k_mask(self, k: int) -> sp.csr_matrix:
        rank = self._ranks
        keep = rank < k
        coo = self.scores.tocoo()
        return sp.csr_matrix((np.ones(keep.sum(), dtype=np.int8), (coo.row[keep], coo.col[keep])),
                             shape=self.scores.shape)

    @cached_property
    def _ranks(self) -> np.ndarray:
        """Rank of each stored score within its document, best first (ties by node id)."""
        coo = self.scores.tocoo()
        order = np.lexsort((coo.col, -coo.data, coo.row))
        ranks = np.empty(len(order), dtype=np.int64)
        starts = np.searchsorted(coo.row[order], coo.row[order], side="left")
        ranks[order] = np.arange(len(order)) - starts
        return ranks

    def evaluate(self, *, threshold: float | None = None, top_k: int | None = None) -> Evaluation:
        pred = self.decisions(threshold=threshold, top_k=top_k)
        return evaluate(self.gold, pred, self.ontology, docs=self.docs, max_level=self.max_level)

    def curve(self, thresholds=None) -> pd.DataFrame:
        """``threshold, flat_f1, set_based_f1, cophe_f1`` (overall up to the max level)."""
        if thresholds is None:
            thresholds = np.round(np.arange(0.05, 0.951, 0.05), 2)
        rows = []
        for t in thresholds:
            ev = self.evaluate(threshold=float(t))
            rows.append((float(t), ev.score("flat")["f1"], ev.score("set_based")["f1"], ev.score("cophe")["f1"]))
        return pd.DataFrame(rows, columns=["threshold", "flat_f1", "set_based_f1", "cophe_f1"])

    def ranking(self, ks: tuple[int, ...] = (5, 8, 15)) -> dict[str, float]:
        """P@k, R@k, micro and macro AUC (see the module docs)."""
        coo = self.scores.tocoo()
        gold_hit = np.asarray(self.gold[coo.row, coo.col]).ravel() > 0
        n_gold = np.asarray(self.gold.sum(1)).ravel()
        out: dict[str, float] = {}
        for k in ks:
            hits = np.bincount(coo.row[(self._ranks < k) & gold_hit], minlength=len(self.docs))
            out[f"p@{k}"] = float((hits / k).mean()) if len(self.docs) else 0.0
            with_gold = n_gold > 0
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
            docs_pos = g.indices[g.indptr[j]:g.indptr[j + 1]]
            if len(docs_pos) in (0, n_docs):
                continue
            col_docs = s.indices[s.indptr[j]:s.indptr[j + 1]]
            col_scores = s.data[s.indptr[j]:s.indptr[j + 1]]
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
    equal = np.searchsorted(neg, pos, side="right") - np.searchsorted(neg, pos, side="left") \
        + np.where(pos == 0, neg_zeros, 0)
    return float((below + 0.5 * equal).sum() / (len(pos) * n_neg))


def score_run(gold: RawLabels, scores: RawScores, ontology: Ontology, *, system: str = "auto",
              max_level: str | None = None) -> ScoredRun:
    """Align gold labels and scores (codes resolved as for labels; unresolvable ones dropped and listed
    in ``scores.rejected`` by :func:`read_scores`' caller)."""
    codes = np.unique(np.concatenate([gold.pairs.code.to_numpy(dtype=str), scores.frame.code.to_numpy(dtype=str)]))
    ids, _reasons, _flags, onto = _resolve_codes(codes, ontology, system)
    lookup = dict(zip(codes, ids))
    docs = np.unique(np.concatenate([gold.docs.astype(str), scores.docs.astype(str)]))
    gi = np.array([lookup[c] for c in gold.pairs.code], dtype=np.int64)
    si = np.array([lookup[c] for c in scores.frame.code], dtype=np.int64)
    gd = np.searchsorted(docs, gold.pairs.doc_id.to_numpy(dtype=str))
    sd = np.searchsorted(docs, scores.frame.doc_id.to_numpy(dtype=str))
    g = sp.csr_matrix((np.ones((gi >= 0).sum(), dtype=np.int8), (gd[gi >= 0], gi[gi >= 0])),
                      shape=(len(docs), onto.n_nodes))
    g.sum_duplicates()
    g.data[:] = 1
    # duplicate (doc, code) scores keep the maximum
    keep = si >= 0
    frame = pd.DataFrame({"d": sd[keep], "n": si[keep], "s": scores.frame.score.to_numpy()[keep]})
    frame = frame.groupby(["d", "n"], as_index=False).s.max()
    s = sp.csr_matrix((frame.s.to_numpy(), (frame.d.to_numpy(), frame.n.to_numpy())), shape=(len(docs), onto.n_nodes))
    return ScoredRun(onto, docs, g, s, max_level)


def tune_threshold(curve: pd.DataFrame, measure: str = "cophe") -> float:
    """The threshold of a (development-split) curve with the highest F1 for ``measure``."""
    col = f"{measure}_f1"
    return float(curve.loc[curve[col].idxmax(), "threshold"])
