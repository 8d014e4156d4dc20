"""The metric families surveyed by Amigó & Delgado (ACL 2022, seed 004), and their ICM.

All are computed on the leaf codes of each document (``s`` predicted, ``g``
gold) and, for HF and ICM, on the ontology. Every example-based score is the
mean over the evaluated documents; a document whose ``s`` and ``g`` are both
empty scores 1 (and 0 for Hamming loss).

- **LB-ACC**, label-based accuracy: mean over the codes in play of
  (TP + TN) / |documents|.
- **LB-F**: mean over the codes in play of their F1 (the flat ``macro_f1``).
- **EB-JACC**, Jaccard: |s ∩ g| / |s ∪ g|.
- **EB-HAMM**, Hamming *loss* (lower is better): |s xor g| / |C_g|, with
  C_g the set of codes annotated anywhere in the gold standard.
- **EB-SUBACC**, subset accuracy: s = g.
- **EB-F**: F1 of |s ∩ g| / |s| and |s ∩ g| / |g|.
- **PROP-F**, propensity F with the paper's modification: the empty class c∅
  is added to s and g, and each hit is weighted by 1/p_c and normalised by the
  summed inverse propensities of s (precision) or g (recall);
  p_c = 1 / (1 + C e^(−A ln(N_c + B))), C = (ln N − 1)(B + 1)^A, A = 0.55, B = 1.5,
  N_c the gold documents with c, N the documents (c∅: N).
- **HF**, hierarchical F: EB-F on s and g each augmented with all ancestors.
- **ICM** = α1·IC(s) + α2·IC(g) − β·IC(s ∪ g), α1 = α2 = 2, β = 3, averaged
  over the *gold documents*: those with at least one gold code. IC(c) =
  −log2 P(c), P(c) the share of gold documents with c or a descendant,
  1/|gold documents| when that share is 0. The IC of a set follows the
  paper's recursion IC({c1} ∪ S) = IC(c1) + IC(S) − IC({lso(c1, c) : c ∈ S}).
  Because lso is the intersection of root paths, that recursion is
  inclusion–exclusion of the measure that gives node v the weight
  IC(v) − IC(parent(v)): **IC(S) is the sum of those weights over the union of
  the root paths of S**. One sparse product per document set computes it
  exactly, instead of the exponential recursion.
- **ICM-Norm** = (ICM + ICM(g, g)) / (2·ICM(g, g)), floored at 0, where
  ICM(g, g) = (α1 + α2 − β)·mean IC(g) over the same documents; NaN when that
  is 0 (every gold document holds the same codes, so the gold carries no
  information) or when no document has a gold code.

**Documents with no gold code** (ids found only in a run, or gold documents
whose codes were all rejected) are left out of ICM and ICM-Norm entirely:
they count neither in P(c) nor in the mean, and :func:`per_document` gives
them NaN. This is what PyEvALL 0.2.11, the metric authors' implementation,
does: its reader drops a gold entry with an empty value, ICM iterates over
the gold entries only (a prediction-only id is never looked up) and divides
both the class frequencies and the sum by their number. For example, with
gold {d1: A0}, {d2: A1, B0}, {d3: B} in the tree A → {A0, A1}, B → {B0, B1},
predictions {d1: A0}, {d2: A0}, {d3: B1} give ICM = (2·log2 3 − 5)/3 ≈ −0.610,
and adding a fourth, prediction-only id {d4: A, B0} leaves that unchanged
(counting d4 with an empty gold set would make P(A) = 2/4 instead of 2/3).
:func:`icm_left_out` counts those documents and :func:`icm_note` words it
for the CLI and the dashboard. The other metrics still average over every
document.

In a DAG, P(c) counts documents with a descendant of c along any path, but
"root paths" follow each node's **first parent**, so that the weights
telescope: the root path of c below its first parent p is the path of p plus c.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd
import scipy.sparse as sp
from numpy.typing import NDArray

from .metrics import Evaluation, NodeCounts, prf

__all__ = [
    "suite",
    "suite_of_sums",
    "document_sums",
    "per_document",
    "Frequencies",
    "sum_frequencies",
    "information_content",
    "icm_left_out",
    "icm_note",
    "left_out_note",
    "PROPERTIES",
    "ALPHA1",
    "ALPHA2",
    "BETA",
]

ALPHA1 = ALPHA2 = 2.0
BETA = 3.0
PROP_A, PROP_B = 0.55, 1.5


@dataclass(frozen=True)
class Frequencies:
    """What the example-based metrics and ICM need of the whole gold standard, before any document is scored:
    its documents (``n_docs``, and ``n_gold_docs`` with a gold code), per node the gold documents that hold
    the code (``holding``: propensities, and the codes annotated anywhere for Hamming loss) and those that
    hold it or a descendant (``covering``: ICM's P(c)). Every field is a sum over documents, so a streamed
    scoring gets them from its first pass (:meth:`of_counts`) and scores each chunk of documents with them
    in the second.

    >>> from cophe_core import score_files
    >>> s = score_files(b"doc_id,code\\n1,401.9\\n2,401.1\\n", {"A": b"doc_id,code\\n3,428.0\\n"})
    >>> f = Frequencies.of(s.evaluation("A", max_level="chapter"))
    >>> f.n_docs, f.n_gold_docs, int(f.covering[s.corpus.ontology.codes["401"]])
    (3, 2, 2)
    """

    n_docs: int
    n_gold_docs: int
    holding: np.ndarray
    covering: np.ndarray

    @classmethod
    def of(cls, ev: Evaluation, covered: sp.csr_matrix | None = None) -> Frequencies:
        """The frequencies of ``ev``'s own documents (the in-memory scoring's); ``covered``, the gold codes with
        their ancestors (documents × nodes, 0/1), when computed already."""
        g = ev.gold
        if covered is None:
            covered = _covered(g, ev.ontology.closure_of(g.indices))
        n = ev.ontology.n_nodes
        return cls(
            len(ev.docs),
            int(_gold_docs(ev).sum()),
            np.bincount(_binary(g).indices, minlength=n).astype(np.int64),
            np.bincount(covered.indices, minlength=n).astype(np.int64),
        )

    @classmethod
    def of_counts(cls, counts: NodeCounts, n_docs: int, n_gold_docs: int) -> Frequencies:
        """From the summed per-node counts of an evaluation up to the ontology's top level: a node's flat gold
        count is the documents holding it, its set-based gold count (TP + FN) those covering it."""
        return cls(
            n_docs,
            n_gold_docs,
            (counts.flat_tp + counts.flat_fn).astype(np.int64),
            (counts.set_tp + counts.set_fn).astype(np.int64),
        )

    @property
    def gold_codes(self) -> int:
        """Codes annotated anywhere in the gold standard (at least 1: Hamming loss divides by it)."""
        return max(int(np.count_nonzero(self.holding)), 1)

    @property
    def information_content(self) -> np.ndarray:
        """IC(v) = −log2 P(v) per node (see :func:`information_content`)."""
        n_gold = max(self.n_gold_docs, 1)  # no gold document: every ICM value is masked anyway
        p = np.where(self.covering > 0, self.covering / n_gold, 1.0 / n_gold)
        return 0.0 - np.log2(p)  # not -log2: IC 0.0 rather than -0.0 for a node every gold document holds


def sum_frequencies(parts: list[Frequencies]) -> Frequencies:
    """The frequencies of the union of disjoint sets of documents (the node arrays padded with zeros for
    nodes added by a later extension of the ontology).

    >>> a = Frequencies(2, 1, np.array([1, 0]), np.array([1, 1]))
    >>> sum_frequencies([a, Frequencies(1, 1, np.array([0, 1, 1]), np.array([1, 1, 1]))]).covering.tolist()
    [2, 2, 1]
    """
    n = max(len(p.holding) for p in parts)

    def total(name: str) -> np.ndarray:
        out = np.zeros(n, dtype=np.int64)
        for p in parts:
            values = getattr(p, name)
            out[: len(values)] += values
        return out

    return Frequencies(
        sum(p.n_docs for p in parts), sum(p.n_gold_docs for p in parts), total("holding"), total("covering")
    )


def _binary(m: sp.csr_matrix) -> sp.csr_matrix:
    out = sp.csr_matrix(m, copy=True)
    out.sum_duplicates()
    out.eliminate_zeros()
    return out


def information_content(ev: Evaluation) -> np.ndarray:
    """IC(v) = −log2 P(v) for every node: P(v) is the share of gold documents (those with a gold code) that
    hold v or a descendant, and 1/|gold documents| when none does.

    With gold {d1: 401.9}, {d2: 401.1} and a prediction-only d3, P(401) = 2/2, so IC(401) = 0, and
    IC(401.9) = −log2(1/2) = 1 (counting d3 would make them log2(3/2) and log2 3):

    >>> from cophe_core import score_files
    >>> s = score_files(b"doc_id,code\\n1,401.9\\n2,401.1\\n", {"A": b"doc_id,code\\n3,428.0\\n"})
    >>> ev = s.evaluation("A")
    >>> ic = information_content(ev)
    >>> float(ic[ev.ontology.codes["401"]]), float(ic[ev.ontology.codes["401.9"]])
    (0.0, 1.0)
    """
    return Frequencies.of(ev).information_content


def _gold_docs(ev: Evaluation) -> np.ndarray:
    """Boolean mask of the documents with at least one gold code: the documents ICM is defined on."""
    return np.asarray((ev.gold != 0).sum(axis=1)).ravel() > 0


def icm_left_out(ev: Evaluation) -> int:
    """How many documents ICM and ICM-Norm leave out because they have no gold code (see the module docs).

    >>> from cophe_core import score_files
    >>> s = score_files(b"doc_id,code\\n1,401.9\\n", {"A": b"doc_id,code\\n1,401.9\\n2,428.0\\n"})
    >>> icm_left_out(s.evaluation("A"))
    1
    """
    return int(len(ev.docs) - _gold_docs(ev).sum())


def icm_note(ev: Evaluation) -> str | None:
    """The sentence that tells a user ICM left documents out, or ``None`` when it left none out.

    >>> from cophe_core import score_files
    >>> s = score_files(b"doc_id,code\\n1,401.9\\n", {"A": b"doc_id,code\\n1,401.9\\n2,428.0\\n"})
    >>> icm_note(s.evaluation("A"))
    'ICM and ICM-Norm leave out 1 document with no gold codes, as PyEvALL does'
    """
    return left_out_note(icm_left_out(ev))


def left_out_note(n: int) -> str | None:
    """:func:`icm_note` for ``n`` documents left out (the streamed scoring counts them in its first pass).

    >>> left_out_note(0), left_out_note(2)
    (None, 'ICM and ICM-Norm leave out 2 documents with no gold codes, as PyEvALL does')
    """
    if n == 0:
        return None
    return (
        f"ICM and ICM-Norm leave out {n} document{'s' if n != 1 else ''} with no gold codes, as PyEvALL does"
    )


def _covered(labels: sp.csr_matrix, closure: sp.csr_matrix) -> sp.csr_matrix:
    """0/1 documents × nodes: the labels and all their ancestors."""
    covered = (labels.astype(np.int32) @ closure).tocsr()
    covered.data[:] = 1
    return covered


def _weights(ev: Evaluation, ic: np.ndarray) -> np.ndarray:
    parent = ev.ontology.parent
    parent_ic = np.where(parent >= 0, ic[np.maximum(parent, 0)], 0.0)
    return ic - parent_ic


def _tree_closure(ev: Evaluation) -> sp.csr_matrix:
    """Ancestors along first parents (the closure itself for a tree)."""
    o = ev.ontology
    if not o.is_dag:
        return o.closure
    anc = o.ancestors
    rows, cols = np.nonzero(anc >= 0)
    return sp.csr_matrix(
        (np.ones(len(rows), dtype=np.int32), (rows, anc[rows, cols])), shape=(o.n_nodes,) * 2
    )


def per_document(ev: Evaluation, frequencies: Frequencies | None = None) -> pd.DataFrame:
    """Per-document values of every example-based metric, one row per document of ``ev.docs``.

    Columns ``eb_jacc, eb_hamm, eb_subacc, eb_precision, eb_recall, eb_f, prop_f, hf`` (module docs), then
    ``icm`` = α1·IC(s) + α2·IC(g) − β·IC(s ∪ g), ``icm_gold`` = ICM(g, g) = (α1 + α2 − β)·IC(g), and
    ``icm_scored``: whether the document has a gold code. ICM is defined on those documents only (as in
    PyEvALL), so ``icm`` and ``icm_gold`` are NaN where ``icm_scored`` is False; their means over the
    scored rows are :func:`suite`'s ICM and ICM(g, g).

    ``frequencies`` are those of the whole gold standard when ``ev`` holds a part of its documents (a chunk
    of a streamed scoring); by default, ``ev``'s own (:meth:`Frequencies.of`).

    Example (tree A → {A0, A1}, B → {B0, B1}; gold {d1: A0}, {d2: A1, B0}, {d3: B}; so P(A) = P(B) = 2/3 and
    every leaf has P = 1/3): predicting {A0} for d2 gives IC(s) = log2 3, IC(g) = 2·log2 3 and
    IC(s ∪ g) = 2·log2 3 + 1, so ``icm`` = 2·log2 3 + 4·log2 3 − 3·(2·log2 3 + 1) = −3; a prediction-only
    d4 gets ``icm`` NaN and ``icm_scored`` False.

    Examples
    --------
    >>> from cophe_core import score_files
    >>> gold = b"doc_id,code\\n1,401.9\\n1,428.0\\n2,250.00\\n"
    >>> runs = {"A": b"doc_id,code\\n1,401.1\\n2,250.00\\n", "B": b"doc_id,code\\n1,401.9\\n1,428.0\\n2,250.01\\n"}
    >>> s = score_files(gold, runs)
    >>> a, b = s.evaluation("A"), s.evaluation("B")
    >>> per_document(b)[["eb_jacc", "eb_f"]].round(3).values.tolist()
    [[1.0, 1.0], [0.0, 0.0]]
    """
    g, p = ev.gold, ev.pred
    # the codes with their ancestors (hierarchical F, ICM), and the gold's frequencies unless given
    closure = ev.ontology.closure_of(np.union1d(g.indices, p.indices))
    ga, pa = _covered(g, closure), _covered(p, closure)
    f = Frequencies.of(ev, ga) if frequencies is None else frequencies  # the gold's own, unless given
    n_g = np.asarray(g.sum(1)).ravel().astype(float)
    n_p = np.asarray(p.sum(1)).ravel().astype(float)
    inter = np.asarray(g.multiply(p).sum(1)).ravel().astype(float)
    union = n_g + n_p - inter
    both_empty = union == 0
    gold_codes = f.gold_codes
    prec = np.where(n_p > 0, inter / np.maximum(n_p, 1), 0.0)
    rec = np.where(n_g > 0, inter / np.maximum(n_g, 1), 0.0)
    ebf = np.where(both_empty, 1.0, prf(inter, n_p - inter, n_g - inter)[2])

    # propensity F with the empty class
    n_docs = max(f.n_docs, 1)
    n_c = f.holding.astype(float)
    big_c = (np.log(n_docs) - 1) * (PROP_B + 1) ** PROP_A

    def inv_prop(n: float | NDArray[np.float64]) -> float | NDArray[np.float64]:
        scaled: float | NDArray[np.float64] = 1 + big_c * np.exp(-PROP_A * np.log(n + PROP_B))
        return scaled

    inv = inv_prop(n_c)
    inv_empty = float(inv_prop(n_docs))
    hit = np.asarray(g.multiply(p) @ inv).ravel() + inv_empty
    pp = hit / (np.asarray(p @ inv).ravel() + inv_empty)
    pr = hit / (np.asarray(g @ inv).ravel() + inv_empty)
    propf = np.where(pp + pr > 0, 2 * pp * pr / (pp + pr), 0.0)

    # hierarchical F on ancestor-augmented sets
    h_inter = np.asarray(ga.multiply(pa).sum(1)).ravel()
    h_g, h_p = np.asarray(ga.sum(1)).ravel(), np.asarray(pa.sum(1)).ravel()
    hf = np.where((h_g + h_p) == 0, 1.0, prf(h_inter, h_p - h_inter, h_g - h_inter)[2])

    # ICM, on the documents with a gold code only (module docs)
    scored = _gold_docs(ev)
    w = _weights(ev, f.information_content)
    if ev.ontology.is_dag:  # root paths follow first parents
        tc = _tree_closure(ev)
        ga, pa = _covered(g, tc), _covered(p, tc)
    ic_g, ic_p = np.asarray(ga @ w).ravel(), np.asarray(pa @ w).ravel()
    paths_u = (ga + pa).tocsr()  # the root paths of s ∪ g are the union of theirs
    paths_u.data[:] = 1
    ic_u = np.asarray(paths_u @ w).ravel()
    icm = np.where(scored, ALPHA1 * ic_p + ALPHA2 * ic_g - BETA * ic_u, np.nan)
    icm_gold = np.where(scored, (ALPHA1 + ALPHA2 - BETA) * ic_g, np.nan)

    return pd.DataFrame(
        {
            "doc_id": ev.docs,
            "eb_jacc": np.where(both_empty, 1.0, inter / np.maximum(union, 1)),
            "eb_hamm": (union - inter) / gold_codes,
            "eb_subacc": (union == inter).astype(float),
            "eb_precision": np.where(both_empty, 1.0, prec),
            "eb_recall": np.where(both_empty, 1.0, rec),
            "eb_f": ebf,
            "prop_f": propf,
            "hf": hf,
            "icm": icm,
            "icm_gold": icm_gold,
            "icm_scored": scored,
        }
    )


def suite(ev: Evaluation, frequencies: Frequencies | None = None) -> dict[str, float]:
    """Every metric of the module docstring, as one dict (the CLI's ``"suite"`` key).

    >>> from cophe_core import score_files
    >>> s = score_files(b"doc_id,code\\n1,401.9\\n2,428.0\\n", {"A": b"doc_id,code\\n1,401.9\\n2,428.0\\n"})
    >>> r = suite(s.evaluation("A"))
    >>> r["eb_f"], r["hf"], r["icm_norm"]
    (1.0, 1.0, 1.0)
    """
    return suite_of_sums(document_sums(per_document(ev, frequencies)), ev.node_counts, len(ev.docs))


EXAMPLE_BASED = ("eb_jacc", "eb_hamm", "eb_subacc", "eb_f", "prop_f", "hf")


def document_sums(docs: pd.DataFrame) -> dict[str, float]:
    """The sums of :func:`per_document`'s columns that :func:`suite` averages: each example-based metric
    over every document, ``icm`` and ``icm_gold`` over the documents with a gold code, and their number
    (``icm_scored``). Sums of disjoint sets of documents add up.

    >>> d = pd.DataFrame({"eb_jacc": [1.0, 0.5], "eb_hamm": [0, 0.1], "eb_subacc": [1.0, 0], "eb_f": [1.0, 0.5],
    ...                   "prop_f": [1.0, 0.5], "hf": [1.0, 0.8], "icm": [2.0, np.nan], "icm_gold": [2.0, np.nan],
    ...                   "icm_scored": [True, False]})
    >>> document_sums(d)["icm"], document_sums(d)["icm_scored"], document_sums(d)["eb_jacc"]
    (2.0, 1.0, 1.5)
    """
    scored = docs.icm_scored.to_numpy(dtype=bool)
    out = {k: float(docs[k].to_numpy(dtype=float).sum()) for k in EXAMPLE_BASED}
    out["icm"] = float(docs.icm.to_numpy(dtype=float)[scored].sum())
    out["icm_gold"] = float(docs.icm_gold.to_numpy(dtype=float)[scored].sum())
    out["icm_scored"] = float(scored.sum())
    return out


def suite_of_sums(sums: dict[str, float], counts: NodeCounts, n_docs: int) -> dict[str, float]:
    """:func:`suite` from the :func:`document_sums` of every document (summed over chunks, for a streamed
    scoring), the flat per-node counts (label-based metrics) and the number of documents.

    >>> from cophe_core import score_files
    >>> s = score_files(b"doc_id,code\\n1,401.9\\n2,428.0\\n", {"A": b"doc_id,code\\n1,401.9\\n"})
    >>> ev = s.evaluation("A")
    >>> suite_of_sums(document_sums(per_document(ev)), ev.node_counts, 2) == suite(ev)
    True
    """
    c = counts
    tp, fp, fn = c.flat_tp, c.flat_fp, c.flat_fn
    in_play = (tp + fp + fn) > 0
    n = max(n_docs, 1)
    tn = n - tp - fp - fn
    lb_acc = float(((tp + tn)[in_play] / n).mean()) if in_play.any() else 1.0
    lb_f = float(prf(tp[in_play], fp[in_play], fn[in_play])[2].mean()) if in_play.any() else 1.0
    scored = sums["icm_scored"]
    if scored:  # the documents with a gold code (module docs)
        icm, icm_gold = sums["icm"] / scored, sums["icm_gold"] / scored
    else:
        icm = icm_gold = float("nan")
    # undefined when the gold sets carry no information (every document has the same codes)
    icm_norm = max(0.0, (icm + icm_gold) / (2 * icm_gold)) if icm_gold > 0 else float("nan")
    out = {"lb_acc": lb_acc, "lb_f": lb_f}
    for k in EXAMPLE_BASED:
        out[k] = sums[k] / n if n_docs else float("nan")
    out["icm"], out["icm_norm"] = icm, icm_norm
    return out


# Table 1 of the ICM paper: which metric satisfies which formal property.
PROPERTIES = pd.DataFrame(
    [
        ("Label-based", "Accuracy (LB-ACC)", "yes", "", "", "", "yes", ""),
        ("Label-based", "F-measure (LB-F)", "yes", "yes", "yes", "", "yes", ""),
        ("Example-based", "Jaccard (EB-JACC)", "yes", "", "", "", "yes", "yes"),
        ("Example-based", "Hamming (EB-HAMM)", "yes", "", "", "", "yes", ""),
        ("Example-based", "Subset accuracy (EB-SUBACC)", "yes", "", "", "", "", "yes"),
        ("Example-based", "F-measure (EB-F)", "yes", "", "", "", "yes", "yes"),
        ("Example-based", "Propensity F (PROP-F)", "yes", "yes", "yes", "", "yes", "yes"),
        ("Set-based", "Hierarchical F (HF)", "yes", "", "", "yes", "yes", "yes"),
        ("Information-based", "ICM", "yes", "yes", "yes", "yes", "yes", ""),
    ],
    columns=[
        "family",
        "metric",
        "strict monotonicity",
        "true category specificity",
        "wrong category specificity",
        "hierarchical proximity",
        "multi-label monotonicity",
        "label vs item quantity",
    ],
)

REWARDS = {
    "lb_acc": "Each code's yes/no decisions across documents, averaged over codes; dominated by true negatives.",
    "lb_f": "Each code's F1, averaged over codes: rare codes weigh as much as common ones.",
    "eb_jacc": "Per document, the overlap of predicted and gold codes over their union.",
    "eb_hamm": "Per document, wrong decisions (missed plus extra codes); a loss, lower is better.",
    "eb_subacc": "Per document, an exact match of the whole code set; very strict.",
    "eb_f": "Per document, F1 of the code sets, averaged over documents.",
    "prop_f": "Like EB-F, but hits on rare codes (low propensity) count more.",
    "hf": "Like EB-F on code sets augmented with their ancestors: near misses in the right family earn credit.",
    "icm": "Information shared by the predicted and gold code sets minus what differs, weighting rare codes and "
    "families by their information content; near misses in specific families earn more.",
    "icm_norm": "ICM rescaled so that predicting the gold standard scores 1 (and floored at 0).",
}
