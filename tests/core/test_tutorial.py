"""The tutorial notebook (docs/tutorial.ipynb) runs from top to bottom, as a reader runs it from docs/."""

from __future__ import annotations

import json

import plotly.graph_objects as go

from tests.conftest import ROOT


def test_the_tutorial_runs_and_draws(monkeypatch):
    """Each code cell is executed in order in one namespace (what a kernel does with them), and each cell's
    last expression is kept: the scoring, tables and figures the text talks about."""
    notebook = json.loads((ROOT / "docs" / "tutorial.ipynb").read_text())
    monkeypatch.chdir(ROOT / "docs")
    namespace: dict = {}
    shown = []
    for cell in notebook["cells"]:
        if cell["cell_type"] != "code":
            continue
        assert not cell["outputs"], "the notebook is stored without outputs"
        source = "".join(cell["source"])
        *body, last = source.rstrip().split("\n")
        exec(compile("\n".join(body), "tutorial", "exec"), namespace)
        try:
            shown.append(eval(compile(last, "tutorial", "eval"), namespace))
        except SyntaxError:  # the last line is a statement
            exec(compile(last, "tutorial", "exec"), namespace)
            shown.append(None)
    scoring, levels, bars, tree, families, diff = shown[:6]
    assert "<b>Scoring</b>: 1,000 documents, 2 run(s)" in scoring._repr_html_()
    assert set(levels.measure) == {"flat", "set_based", "cophe"}
    assert isinstance(bars, go.Figure) and isinstance(tree, go.Figure) and tree.data[0].type == "bar"
    assert len(tree.data[0].ids) and tree.data[0].base is not None  # the tree's tiles, each named and placed
    assert len(families) == 10 and {"fp", "fn"} <= set(families.columns)
    assert list(diff.figure) == ["flat f1", "set_based overall f1", "cophe overall f1"]
    # the training loop: batches dealt to two workers, merged, logged to a local MLflow store, equal to the
    # functional API on all the rows at once
    from cophe_core.metrics import precision_recall_fscore_hierarchical_from_scores

    logged = shown[-1]
    assert set(logged) == {"val/cophe/e0/f1", "val/set_based/e0/f1"}
    y_true, y_score, labels = namespace["y_true"], namespace["y_score"], namespace["labels"]
    _, _, f1 = precision_recall_fscore_hierarchical_from_scores(
        y_true, y_score, labels=labels, ontology="icd9", threshold=0.5, level="e0"
    )
    assert logged["val/cophe/e0/f1"] == round(f1, 3)
