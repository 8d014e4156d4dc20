"""A MIMIC-III-full-sized upload in CAML's file shape, for the browser benchmark (no patient data).

    python benchmarks/mimic_upload.py --out /tmp/mimic_upload

Writes into ``--out``:

- ``test_full.csv``: the gold standard, shaped like CAML's ``test_full.csv``
  (``SUBJECT_ID,HADM_ID,TEXT,LABELS,length``; ``LABELS`` holds ';'-joined dotted
  ICD-9-CM codes, ``TEXT`` a placeholder, never a note);
- ``preds_siblings.csv`` and ``preds_overcoder.csv``: two runs in the same shape
  (profiles of :mod:`cophe_core.inputs.synthetic`), one row per gold document;
- ``scores_model.csv``: a model's probabilities, ``doc_id,code,score``, whose
  ``doc_id`` is the gold's ``HADM_ID`` (the readers take ``HADM_ID`` as the
  document id of a CAML file, see ``cophe_core.inputs.readers.DOC_COLUMNS``).

3,372 documents (the size of MIMIC-III-full's test split), about 15.9 codes per
document drawn from 1,200 ICD-9 families, real code strings from the built-in
ICD-9 ontology. Seeded: the same files every time.
"""

from __future__ import annotations

import argparse
from pathlib import Path

import numpy as np
import pandas as pd

N_DOCS = 3372  # MIMIC-III full, test split (Mullenbach et al. 2018)
N_FAMILIES = 1200
CODES_PER_DOC = 15.9
SEED = 3372
PLACEHOLDER = "synthetic note"
RUNS = {"siblings": "preds_siblings.csv", "overcoder": "preds_overcoder.csv"}
# more runs for the comparison benchmark: file → profile
MORE_RUNS = {"preds_conservative.csv": "conservative", "preds_siblings_retrained.csv": "siblings"}
GOLD = "test_full.csv"
SCORES = "scores_model.csv"
# generate_gold's codes_per_doc: duplicates are dropped and small families cap the codes drawn, so
# the mean lands about 3% below it; this gives CODES_PER_DOC (checked by `check`)
_GOLD_RATE = CODES_PER_DOC / 0.97


def _ids(n: int, rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray]:
    """MIMIC-like ids: distinct HADM_IDs (six digits, 100001–199999, up to 49,999 documents), and SUBJECT_IDs."""
    hadm = np.sort(rng.choice(np.arange(100001, max(200000, 100001 + 2 * n)), n, replace=False))
    subject = rng.integers(2, 99999, n)
    return hadm.astype(str), subject.astype(str)


def _caml(
    pairs: pd.DataFrame, order: np.ndarray, hadm: dict[str, str], subject: dict[str, str]
) -> pd.DataFrame:
    """One CAML row per document in ``order`` (a document with no codes gets an empty LABELS)."""
    joined = pairs.groupby("doc_id", sort=False).code.agg(";".join)
    labels = joined.reindex(order).fillna("")
    return pd.DataFrame(
        {
            "SUBJECT_ID": [subject[d] for d in order],
            "HADM_ID": [hadm[d] for d in order],
            "TEXT": PLACEHOLDER,
            "LABELS": labels.to_numpy(),
            "length": len(PLACEHOLDER.split()),
        }
    )


def write_upload(out: Path, *, n_docs: int = N_DOCS, seed: int = SEED, more: bool = False) -> dict[str, Path]:
    """Write the gold, the two runs and the scores into ``out``; return their paths by role. With ``more``,
    also the runs of :data:`MORE_RUNS` (keyed by file name), for five runs in all."""
    from cophe_core.inputs.synthetic import generate_gold, generate_run, generate_scores
    from cophe_core.ontology import load_ontology

    onto = load_ontology("icd9")
    gold = generate_gold(n_docs, seed=seed, n_families=N_FAMILIES, codes_per_doc=_GOLD_RATE, onto=onto)
    order = gold.doc_id.unique()
    hadm_ids, subject_ids = _ids(len(order), np.random.default_rng(seed))
    hadm, subject = dict(zip(order, hadm_ids)), dict(zip(order, subject_ids))
    out.mkdir(parents=True, exist_ok=True)
    paths = {"gold": out / GOLD}
    _caml(gold, order, hadm, subject).to_csv(paths["gold"], index=False)
    for i, (profile, file) in enumerate(RUNS.items()):
        run = generate_run(gold, profile, seed=seed + 1 + i, onto=onto)
        paths[profile] = out / file
        _caml(run, order, hadm, subject).to_csv(paths[profile], index=False)
    for i, (file, profile) in enumerate(MORE_RUNS.items() if more else ()):
        run = generate_run(gold, profile, seed=seed + 20 + i, onto=onto)
        paths[file] = out / file
        _caml(run, order, hadm, subject).to_csv(paths[file], index=False)
    scores = generate_scores(gold, seed=seed + 10, onto=onto)
    scores = scores.assign(doc_id=scores.doc_id.map(hadm))
    paths["scores"] = out / SCORES
    scores.to_csv(paths["scores"], index=False)
    return paths


def check(paths: dict[str, Path]) -> dict:
    """Score the files as the dashboard would and check that every run document is in the gold."""
    from cophe_core import read_labels, score_files
    from cophe_core.inputs.readers import read_input

    gold = read_labels(paths["gold"])
    runs = {role: read_input(p) for role, p in paths.items() if role != "gold"}
    gold_docs = set(gold.docs)
    for role, raw in runs.items():
        missing = set(raw.docs) - gold_docs
        if missing:
            raise SystemExit(
                f"{paths[role].name}: {len(missing)} documents not in the gold, e.g. {sorted(missing)[:3]}"
            )
    scoring = score_files(
        paths["gold"], {role: p for role, p in paths.items() if role != "gold"}, threshold=0.5
    )
    c = scoring.corpus
    if len(c.docs) != len(gold_docs) or len(c.rejected) or any("not in the gold" in w for w in c.warnings):
        raise SystemExit(
            f"the files do not line up: {len(c.docs)} documents, {len(c.rejected)} rejected rows, "
            f"warnings {c.warnings}"
        )
    return {
        "docs": len(gold_docs),
        "gold_codes": len(gold.pairs),
        "codes_per_doc": len(gold.pairs) / len(gold_docs),
        "families": int(pd.Series([k.split(".")[0] for k in gold.pairs.code]).nunique()),
        **{f"{role}_rows": len(raw.pairs) for role, raw in runs.items()},
        "kinds": {role: type(raw).__name__ for role, raw in runs.items()},
        "cophe_f1_e0": {
            r: round(scoring.evaluation(r).score("cophe", "e0").f1, 3) for r in scoring.run_names
        },
    }


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--out", type=Path, required=True, help="folder to write the files into")
    ap.add_argument("--no-check", action="store_true", help="skip scoring the files to check they line up")
    args = ap.parse_args()
    paths = write_upload(args.out)
    for role, p in paths.items():
        print(f"{role:10} {p}  ({p.stat().st_size / 1e6:.1f} MB)")
    if not args.no_check:
        print(check(paths))


if __name__ == "__main__":
    main()
