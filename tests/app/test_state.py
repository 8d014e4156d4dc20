"""State kept across reruns: renamed runs stay selected, same-named files get distinct names."""

from __future__ import annotations

from tests.app.conftest import SAMPLE, run_app, upload


def test_same_named_files_get_distinct_names_and_a_rename_keeps_the_selection():
    gold = ("gold.csv", (SAMPLE / "gold.csv").read_bytes())
    runs = [
        ("preds.csv", (SAMPLE / "run_conservative.csv").read_bytes()),
        ("preds.csv", (SAMPLE / "run_overcoder.csv").read_bytes()),
    ]
    at = upload(run_app(), gold, runs)
    boxes = [t for t in at.text_input if t.label.startswith("Name of run")]
    assert [b.value for b in boxes] == ["preds", "preds-2"]
    assert at.selectbox(key="run").options == ["preds", "preds-2"]
    at.selectbox(key="run").set_value("preds-2").run()
    at.multiselect(key="levels_runs").set_value(["preds-2"]).run()

    boxes[1].set_value("overcoder").run()
    assert not at.exception
    assert at.selectbox(key="run").value == "overcoder"
    assert at.multiselect(key="levels_runs").value == ["overcoder"]
    assert "Choose at least one run" not in " ".join(i.value for i in at.info)

    # a name already taken is made unique rather than merging two runs
    [b for b in at.text_input if b.label.startswith("Name of run 2")][0].set_value("preds").run()
    assert at.selectbox(key="run").options == ["preds", "preds-2"]
