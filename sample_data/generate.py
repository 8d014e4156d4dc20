"""Regenerate the bundled sample data (seeded, synthetic; no patient data, no MIMIC text).

    python sample_data/generate.py

Writes ``icd9/`` (a gold standard and three runs, MIMIC-III-like) and ``icd10/``
(a gold standard and two runs, ICD-10-CM diagnoses with ICD-10-PCS procedures,
MIMIC-IV-like) next to this file, from :mod:`cophe_core.inputs.synthetic`. The ``siblings``
runs carry the planted systematic substitutions of :data:`cophe_core.inputs.synthetic.PLANTED`.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd

from cophe_core.inputs.synthetic import generate, generate_scores

HERE = Path(__file__).resolve().parent
SETS = {
    "icd9": {"n_docs": 1000, "seed": 2021, "profiles": ("siblings", "overcoder", "conservative")},
    "icd10": {"n_docs": 1000, "seed": 2026, "profiles": ("siblings", "overcoder"), "n_families": 1200},
}


def main() -> None:
    for ontology, options in SETS.items():
        folder = HERE / ontology
        folder.mkdir(exist_ok=True)
        gold, runs = generate(ontology=ontology, **options)
        gold.to_csv(folder / "gold.csv", index=False)
        for name, run in runs.items():
            run.to_csv(folder / f"run_{name}.csv", index=False)
    # probability outputs on the ICD-9 test set, and a development split to tune the threshold on
    test_gold = pd.read_csv(HERE / "icd9" / "gold.csv", dtype=str)
    generate_scores(test_gold, seed=7).to_csv(HERE / "icd9" / "scores_model.csv", index=False)
    dev_gold, _ = generate(n_docs=500, seed=99, ontology="icd9", profiles=())
    dev_gold.to_csv(HERE / "icd9" / "dev_gold.csv", index=False)
    generate_scores(dev_gold, seed=8).to_csv(HERE / "icd9" / "dev_scores.csv", index=False)
    document_details(test_gold, seed=11).to_csv(HERE / "icd9" / "documents.csv", index=False)


def document_details(gold: pd.DataFrame, seed: int) -> pd.DataFrame:
    """Made-up details of each document, to slice by: the note's length in words (longer with more codes),
    the admission type and the year. Synthetic, like every sample file."""
    rng = np.random.default_rng(seed)
    n_codes = gold.groupby("doc_id", sort=False).size()
    words = np.round(np.exp(rng.normal(6.6 + 0.06 * n_codes.to_numpy(), 0.35))).astype(int)
    kinds = rng.choice(["EMERGENCY", "ELECTIVE", "URGENT"], size=len(n_codes), p=[0.72, 0.18, 0.10])
    years = rng.integers(2001, 2013, size=len(n_codes))
    return pd.DataFrame(
        {"doc_id": n_codes.index, "note_length": words, "admission_type": kinds, "year": years}
    )


if __name__ == "__main__":
    main()
