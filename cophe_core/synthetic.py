"""Seeded synthetic ICD-9 label sets with a MIMIC-like shape (no patient data).

Used by ``sample_data/generate.py`` and the benchmarks. A gold standard has a
long-tailed code distribution in which a few busy families (401, 427, 428, 250,
584, V45 and common procedures) dominate, and documents often hold several
codes of one family, as discharge summaries do.

Model runs are derived from the gold standard with a documented error profile:

- ``siblings``: confuses a code with a sibling in its family (right family,
  wrong leaf). Flat scores drop; set-based and CoPHE recover at e1/e0. It also
  makes a few *systematic* substitutions, :data:`PLANTED`: where the gold
  standard holds one of these codes, the run writes the planted sibling instead
  with probability :data:`PLANT_RATE` (drawn from a stream of its own), and
  otherwise behaves as above. They are the top rows of
  :func:`cophe_core.substitutions.substitution_table` on the bundled samples.
- ``overcoder``: keeps most gold codes but adds extra codes inside families
  already present. Set-based e0 barely notices; CoPHE shows the over-coding.
- ``conservative``: predicts only the codes it is sure of and misses many.
  Precision stays high and recall drops, most visibly in CoPHE at e0.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd
from numpy.typing import NDArray

from .ontology import Ontology, load_ontology, system_of

__all__ = [
    "PROFILES",
    "PLANTED",
    "PLANT_RATE",
    "generate_gold",
    "generate_run",
    "generate_scores",
    "generate",
]

# Systematic substitutions of the ``siblings`` profile: gold code → the sibling (same category) written
# instead. Frequent codes of busy families, each a plausible coder's confusion.
PLANTED = {
    "icd9": {
        "401.0": "401.9",  # malignant → unspecified essential hypertension
        "427.31": "427.32",  # atrial fibrillation → atrial flutter
        "428.20": "428.22",
    },  # systolic heart failure, unspecified → chronic systolic
    "icd10": {
        "I48.91": "I48.92",  # unspecified atrial fibrillation → unspecified atrial flutter
        "N17.9": "N17.0",  # acute kidney failure, unspecified → with tubular necrosis
        "I50.9": "I50.20",
    },  # heart failure, unspecified → unspecified systolic heart failure
}
PLANT_RATE = 0.7
PROFILES = {
    "siblings": "confuses codes with siblings in the same family (right family, wrong leaf)",
    "overcoder": "adds extra codes inside families already present (over-codes within families)",
    "conservative": "predicts only what it is sure of and misses many codes (under-codes)",
}


def _families(onto: Ontology) -> dict[int, np.ndarray]:
    """Category node id → listed code ids below it, in node order. Keyed by node, not by key: in the
    combined ICD-10 ontology a diagnosis category and a procedure prefix may share a key (B24)."""
    e0 = onto.level_index("e0")
    codes = np.array(sorted({n for n in onto.codes.values() if onto.listed[n]}))
    cats = onto.ancestors[codes, e0]
    codes, cats = codes[cats >= 0], cats[cats >= 0]  # codes above e0 (sections, blocks) form no family
    order = np.argsort(cats, kind="stable")
    cats, codes = cats[order], codes[order]
    bounds = np.flatnonzero(np.diff(cats)) + 1
    return {int(grp_cat[0]): grp for grp_cat, grp in zip(np.split(cats, bounds), np.split(codes, bounds))}


def _categories(gold: pd.DataFrame, onto: Ontology) -> NDArray[np.int32]:
    """The category (e0 node id) of each gold row."""
    ids = np.array([onto.codes[c] for c in gold.code])
    cats: NDArray[np.int32] = onto.ancestors[ids, onto.level_index("e0")]
    return cats


def generate_gold(
    n_docs: int,
    *,
    seed: int = 0,
    n_families: int = 900,
    codes_per_doc: float = 16.0,
    onto: Ontology | None = None,
) -> pd.DataFrame:
    """A gold standard: DataFrame ``doc_id, code`` with about ``codes_per_doc`` codes per document.

    Families (ICD-9 categories) are drawn with Zipf-like weights, the busy
    families first; within a family a few leaves dominate. About a third of
    the drawn families contribute two or more codes to the document.

    Examples
    --------
    >>> gold = generate_gold(5, seed=0)
    >>> list(gold.columns), gold.doc_id.nunique()
    (['doc_id', 'code'], 5)
    """
    onto = onto or load_ontology("icd9")
    rng = np.random.default_rng(seed)
    fams = _families(onto)
    by_key: dict[str, list[int]] = {}
    for cat in fams:
        by_key.setdefault(str(onto.keys[cat]), []).append(cat)
    system = system_of(onto)
    common = system.common_families if system is not None else ()
    busy = [cat for key in common for cat in by_key.get(key, [])]
    others = [cat for cat in fams if cat not in set(busy)]
    chosen = busy + list(rng.choice(others, n_families - len(busy), replace=False))
    weights = 1.0 / np.arange(1, len(chosen) + 1) ** 0.9
    weights /= weights.sum()
    sizes = np.clip(rng.negative_binomial(8, 8 / (8 + codes_per_doc / 1.45), n_docs), 1, None)
    rows_doc, rows_code = [], []
    for d, size in enumerate(sizes):
        fam_idx = rng.choice(len(chosen), size=size, replace=False, p=weights)
        for f in fam_idx:
            members = fams[chosen[f]]
            k = min(len(members), 1 + rng.binomial(2, 0.22))
            w = 1.0 / np.arange(1, len(members) + 1) ** 1.2
            picked = rng.choice(members, size=k, replace=False, p=w / w.sum())
            rows_doc += [d] * k
            rows_code += list(picked)
    doc_ids = np.char.add("D", np.char.zfill(np.arange(100001, 100001 + n_docs).astype(str), 6))
    df = pd.DataFrame({"doc_id": doc_ids[rows_doc], "code": onto.keys[np.array(rows_code)]})
    return df.drop_duplicates(ignore_index=True)


def generate_run(
    gold: pd.DataFrame, profile: str, *, seed: int = 0, onto: Ontology | None = None
) -> pd.DataFrame:
    """Predictions with one of the :data:`PROFILES` error profiles, from a gold DataFrame.

    The ``siblings`` profile also writes the :data:`PLANTED` substitutes of the
    ontology (by its name) in place of their gold codes, with probability
    :data:`PLANT_RATE`.

    Examples
    --------
    >>> gold = generate_gold(20, seed=0)
    >>> run = generate_run(gold, "overcoder", seed=1)
    >>> len(run) > len(gold), set(run.doc_id) <= set(gold.doc_id)
    (True, True)
    """
    if profile not in PROFILES:
        raise ValueError(f"unknown profile {profile!r}; choose one of {', '.join(PROFILES)}")
    onto = onto or load_ontology("icd9")
    rng = np.random.default_rng(seed)
    fams, cats = _families(onto), _categories(gold, onto)
    u = rng.random(len(gold))
    planted = PLANTED.get(onto.name, {}) if profile == "siblings" else {}
    # a stream of its own, so that planting leaves the draws of the other profiles as they were
    plant = np.random.default_rng([seed, 1]).random(len(gold))
    pool = np.concatenate(list(fams.values()))
    frequent = gold.code.value_counts()
    out_doc: list[str] = []
    out_code: list[str] = []

    def add(doc: str, code: str) -> None:
        out_doc.append(doc)
        out_code.append(code)

    def sibling(cat: int, exclude: str) -> str | None:
        members = [str(onto.keys[m]) for m in fams[cat] if onto.keys[m] != exclude]
        return members[rng.integers(len(members))] if members else None

    for doc, code, cat, r, v in zip(gold.doc_id, gold.code, cats, u, plant):
        if profile == "siblings":
            if code in planted and v < PLANT_RATE:
                add(doc, planted[code])
            elif r < 0.55:
                add(doc, code)
            elif r < 0.85 and (s := sibling(cat, code)):
                add(doc, s)
        elif profile == "overcoder":
            if r < 0.78:
                add(doc, code)
            if rng.random() < 0.45:
                for _ in range(1 + rng.binomial(1, 0.4)):
                    if s := sibling(cat, code):
                        add(doc, s)
        else:  # conservative: keeps frequent codes more often
            keep = 0.35 + 0.4 * min(frequent.get(code, 0) / frequent.iloc[0], 1.0) ** 0.3
            if r < keep:
                add(doc, code)
    n_noise = {"siblings": 1.2, "overcoder": 1.5, "conservative": 0.25}[profile]
    docs = gold.doc_id.unique()
    for doc in docs:
        for m in rng.choice(pool, size=rng.poisson(n_noise)):
            add(doc, str(onto.keys[m]))
    return pd.DataFrame({"doc_id": out_doc, "code": out_code}).drop_duplicates(ignore_index=True)


def generate_scores(gold: pd.DataFrame, *, seed: int = 0, onto: Ontology | None = None) -> pd.DataFrame:
    """A model's probability outputs: ``doc_id, code, score``.

    Gold codes mostly score high (Beta(5, 2); a fifth Beta(2, 5)), two siblings
    per gold code score in between (Beta(2, 4)), and ten random codes per
    document score low (Beta(1, 8)). Thresholds near 0.5 then trade missed gold
    codes against siblings predicted in the same families.

    Examples
    --------
    >>> scores = generate_scores(generate_gold(5, seed=0), seed=2)
    >>> list(scores.columns), bool(scores.score.between(0, 1).all())
    (['doc_id', 'code', 'score'], True)
    """
    onto = onto or load_ontology("icd9")
    rng = np.random.default_rng(seed)
    fams, cats = _families(onto), _categories(gold, onto)
    hard = rng.random(len(gold)) < 0.2
    rows = {
        "doc_id": list(gold.doc_id),
        "code": list(gold.code),
        "score": list(np.where(hard, rng.beta(2, 5, len(gold)), rng.beta(5, 2, len(gold)))),
    }

    def add_scored(doc: str, code: str, score: float) -> None:
        rows["doc_id"].append(doc)
        rows["code"].append(code)
        rows["score"].append(score)

    for doc, cat in zip(gold.doc_id, cats):
        members = fams[cat]
        for m in rng.choice(members, size=min(2, len(members)), replace=False):
            add_scored(doc, str(onto.keys[m]), rng.beta(2, 4))
    pool = np.concatenate(list(fams.values()))
    for doc in gold.doc_id.unique():
        for m in rng.choice(pool, size=10):
            add_scored(doc, str(onto.keys[m]), rng.beta(1, 8))
    out = pd.DataFrame(rows)
    out["score"] = out.score.round(4)
    return out.groupby(["doc_id", "code"], as_index=False, sort=False).score.max()


def generate(
    n_docs: int,
    *,
    seed: int = 0,
    ontology: str = "icd9",
    profiles: tuple[str, ...] = tuple(PROFILES),
    **kw: Any,
) -> tuple[pd.DataFrame, dict[str, pd.DataFrame]]:
    """A gold standard and one run per profile, on a built-in ICD ontology.

    Examples
    --------
    >>> gold, runs = generate(10, seed=0, profiles=("siblings",))
    >>> list(runs), gold.doc_id.nunique()
    (['siblings'], 10)
    """
    onto = load_ontology(ontology)
    gold = generate_gold(n_docs, seed=seed, onto=onto, **kw)
    runs = {p: generate_run(gold, p, seed=seed + i + 1, onto=onto) for i, p in enumerate(profiles)}
    return gold, runs
