"""Reference ICM / ICM-Norm figures from PyEvALL, for tests/fixtures/pyevall_icm.json.

PyEvALL pins numpy 1.26.4 and pandas 2.2.3, which would break this project's
environment, so it runs in a virtual environment of its own:

    python -m venv /tmp/pyevall && /tmp/pyevall/bin/pip install PyEvALL==0.2.11
    /tmp/pyevall/bin/python scripts/pyevall_reference.py

Random small trees (seeded) and random gold / predicted label sets, every
document with at least one gold label; the output holds the inputs and PyEvALL's
answers, and tests/core/test_suite.py checks cophe against them.
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


def run_case(rng: random.Random, case: int) -> dict:
    tree, nodes = random_tree(rng)
    docs = [str(d) for d in range(rng.randint(3, 8))]
    gold = {d: sorted(set(rng.sample(nodes, rng.randint(1, min(3, len(nodes)))))) for d in docs}
    pred = {d: sorted(set(rng.sample(nodes, rng.randint(0, min(3, len(nodes)))))) for d in docs}
    with tempfile.TemporaryDirectory() as tmp:
        gpath, ppath = Path(tmp) / "gold.json", Path(tmp) / "pred.json"
        gpath.write_text(json.dumps([{"test_case": "T1", "id": d, "value": v} for d, v in gold.items()]))
        ppath.write_text(json.dumps([{"test_case": "T1", "id": d, "value": v} for d, v in pred.items()]))
        params = {PyEvALLUtils.PARAM_REPORT: PyEvALLUtils.PARAM_OPTION_REPORT_DATAFRAME,
                  PyEvALLUtils.PARAM_HIERARCHY: json.loads(json.dumps(tree))}
        report = PyEvALLEvaluation().evaluate(str(ppath), str(gpath), ["ICM", "ICMNorm"], **params)
        df = report.df_average
    return {"case": case, "hierarchy": tree, "gold": gold, "pred": pred,
            "icm": float(df["ICM"].iloc[0]), "icm_norm": float(df["ICM-Norm"].iloc[0])}


def main() -> None:
    rng = random.Random(2022)
    cases = [run_case(rng, i) for i in range(30)]
    OUT.parent.mkdir(exist_ok=True)
    OUT.write_text(json.dumps({"generator": "scripts/pyevall_reference.py", "pyevall": "0.2.11",
                               "cases": cases}, indent=1))
    print(f"wrote {len(cases)} cases to {OUT}")


if __name__ == "__main__":
    main()
