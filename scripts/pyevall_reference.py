"""Reference ICM / ICM-Norm figures from PyEvALL, for tests/fixtures/pyevall_icm.json.

PyEvALL pins numpy 1.26.4 and pandas 2.2.3, which would break this project's
environment, so it runs in a virtual environment of its own:

    python -m venv /tmp/pyevall && /tmp/pyevall/bin/pip install PyEvALL==0.2.11
    /tmp/pyevall/bin/python scripts/pyevall_reference.py

Random small trees (seeded) and random gold / predicted label sets. Cases 0-29
give every document at least one gold label. Cases 30-49 add documents with no
gold label, which PyEvALL leaves out of ICM and ICM-Norm (as cophe does):

- prediction-only ids (``p0``, ``p1``, …): in the predictions, not in the gold;
- empty-gold ids (``e0``, ``e1``, …): in the gold file with ``"value": []``,
  with or without a prediction.

In the output, an empty-gold id has ``[]`` in ``gold`` and a prediction-only id
appears in ``pred`` only; ``no_gold`` counts both kinds. The output holds the
inputs and PyEvALL's answers, and tests/core/test_suite.py checks cophe against
them (an empty-gold id becomes a gold row with an empty code, which cophe
rejects, so the document is listed with no gold code).

Where PyEvALL 0.2.11 leaves those documents out (site-packages/pyevall/):

- comparators/formats.py, ``check_format_json``: a record whose value is empty
  (``is_empty_value``: None, "", [] or {}) is not kept, and for the gold file
  its id goes into ``ignored_gold_ids_by_tc``; ``get_pyevall_comparators``
  then drops predictions for those ids.
- metrics/metrics.py, ``ICM.generate_prob``: ``gold_size = len(gold_df)`` and
  P(c) = (gold rows with c or a descendant) / gold_size; ``get_prob_class``
  gives an unseen class 1 / len(gold_df).
- metrics/metrics.py, ``ICM.evaluate``: ICM is computed for each row of
  ``gold_df`` (``calculate_icm_row`` looks the prediction up by the gold id, an
  empty set when there is none) and the sum is divided by ``len(gold_df)``; a
  prediction-only id is never visited. ``ICMNorm.evaluate`` builds ICM(G, G)
  from the same ``gold_df``.

Re-running this script reproduces cases 0-29 input for input; PyEvALL's answers
may move in the last digit, as it sums over Python sets.
"""

from __future__ import annotations

import json
import random
import tempfile
from pathlib import Path

from pyevall.evaluation import PyEvALLEvaluation
from pyevall.utils.utils import PyEvALLUtils

OUT = Path(__file__).resolve().parents[1] / "tests" / "fixtures" / "pyevall_icm.json"


def random_tree(rng: random.Random) -> tuple[dict, list[str]]:
    """A nested dict hierarchy (PyEvALL's form) with 2-3 top classes, depth up to 3."""
    nodes: list[str] = []

    def grow(prefix: str, depth: int):
        kids = rng.randint(1, 3) if depth < 3 else 0
        if kids == 0:
            return []
        out = {}
        for i in range(kids):
            name = f"{prefix}{i}" if prefix else "ABC"[i]
            nodes.append(name)
            sub = grow(name, depth + 1) if rng.random() < 0.7 else []
            out[name] = sub
        return out

    tree = {}
    for i in range(rng.randint(2, 3)):
        top = "ABC"[i]
        nodes.append(top)
        tree[top] = grow(top, 1)
    return tree, nodes


def run_case(rng: random.Random, case: int, no_gold: bool = False) -> dict:
    tree, nodes = random_tree(rng)
    docs = [str(d) for d in range(rng.randint(3, 8))]
    gold = {d: sorted(set(rng.sample(nodes, rng.randint(1, min(3, len(nodes)))))) for d in docs}
    pred = {d: sorted(set(rng.sample(nodes, rng.randint(0, min(3, len(nodes)))))) for d in docs}
    if no_gold:
        for i in range(rng.randint(0, 3)):  # prediction-only ids, never with an empty prediction
            pred[f"p{i}"] = sorted(set(rng.sample(nodes, rng.randint(1, min(3, len(nodes))))))
        for i in range(rng.randint(1 if case % 2 else 0, 3)):  # empty gold, predicted or not
            gold[f"e{i}"] = []
            if rng.random() < 0.7:
                pred[f"e{i}"] = sorted(set(rng.sample(nodes, rng.randint(1, min(3, len(nodes))))))
    with tempfile.TemporaryDirectory() as tmp:
        gpath, ppath = Path(tmp) / "gold.json", Path(tmp) / "pred.json"
        gpath.write_text(json.dumps([{"test_case": "T1", "id": d, "value": v} for d, v in gold.items()]))
        ppath.write_text(json.dumps([{"test_case": "T1", "id": d, "value": v} for d, v in pred.items()]))
        params = {
            PyEvALLUtils.PARAM_REPORT: PyEvALLUtils.PARAM_OPTION_REPORT_DATAFRAME,
            PyEvALLUtils.PARAM_HIERARCHY: json.loads(json.dumps(tree)),
        }
        report = PyEvALLEvaluation().evaluate(str(ppath), str(gpath), ["ICM", "ICMNorm"], **params)
        df = report.df_average
    return {
        "case": case,
        "hierarchy": tree,
        "gold": gold,
        "pred": pred,
        "no_gold": len((set(gold) | set(pred)) - {d for d, v in gold.items() if v}),
        "icm": float(df["ICM"].iloc[0]),
        "icm_norm": float(df["ICM-Norm"].iloc[0]),
    }


def main() -> None:
    rng = random.Random(2022)
    cases = [run_case(rng, i) for i in range(30)]  # drawn first, so that they do not change
    cases += [run_case(rng, i, no_gold=True) for i in range(30, 50)]
    OUT.parent.mkdir(exist_ok=True)
    OUT.write_text(
        json.dumps(
            {"generator": "scripts/pyevall_reference.py", "pyevall": "0.2.11", "cases": cases}, indent=1
        )
    )
    print(f"wrote {len(cases)} cases to {OUT}")


if __name__ == "__main__":
    main()
