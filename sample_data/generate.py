"""Regenerate the bundled sample data (seeded, synthetic; no patient data, no MIMIC text).

    python sample_data/generate.py

Writes ``gold.csv`` and one ``run_<profile>.csv`` per error profile of
:mod:`cophe_core.synthetic` next to this file.
"""

from __future__ import annotations

from pathlib import Path

from cophe_core.synthetic import generate

HERE = Path(__file__).resolve().parent
N_DOCS = 1000
SEED = 2021


def main() -> None:
    gold, runs = generate(N_DOCS, seed=SEED)
    gold.to_csv(HERE / "gold.csv", index=False)
    for name, run in runs.items():
        run.to_csv(HERE / f"run_{name}.csv", index=False)


if __name__ == "__main__":
    main()
