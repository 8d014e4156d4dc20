"""The bound on rows not scored, where it was missing (issue 24, point 3): a development split scored by
:func:`cophe_core.scoring.scores.score_run`, and a saved analysis scored again (``options.score_anyway``)."""

from __future__ import annotations

import pandas as pd
import pytest

from cophe_core.inputs.readers import read_labels, read_scores
from cophe_core.ontology import icd9_ontology
from cophe_core.output.analysis import Analysis, InputFile, score_analysis
from cophe_core.scoring.labels import RowBound, TooManyRejected
from cophe_core.scoring.scores import score_run
from tests.conftest import SAMPLE


def _junk(name: str) -> bytes:
    """A sample file with one code in 20 replaced by junk: 5% of its rows cannot be scored."""
    frame = pd.read_csv(SAMPLE / name, dtype=str, keep_default_na=False)
    frame.loc[::20, "code"] = "XYZ"
    return frame.to_csv(index=False).encode()


def test_a_development_split_is_held_to_the_bound():
    gold = read_labels((SAMPLE / "dev_gold.csv").read_bytes(), name="dev_gold.csv")
    scores = read_scores(_junk("dev_scores.csv"), name="dev_scores.csv")
    with pytest.raises(TooManyRejected, match=r"dev_scores\.csv: 1,185 of its 23,685 rows \(5\.0%\)") as e:
        score_run(gold, scores, icd9_ontology(), bound=RowBound())
    assert [x.file for x in e.value.each] == ["dev_scores.csv"]
    lifted = score_run(gold, scores, icd9_ontology(), bound=RowBound.lifted(0.1))
    assert lifted.curve().equals(score_run(gold, scores, icd9_ontology()).curve())


def _analysis(**options) -> Analysis:
    gold = InputFile("gold.csv", (SAMPLE / "gold.csv").read_bytes())
    good = InputFile("run_siblings.csv", (SAMPLE / "run_siblings.csv").read_bytes())
    junk = InputFile("junk.csv", _junk("run_overcoder.csv"))
    return Analysis(gold, {"good": good, "junk": junk}, options={"ontology": "icd9", **options})


def test_a_saved_analysis_scores_the_rows_it_was_saved_with():
    bounded = score_analysis(_analysis())
    assert bounded.run_names == ["good"] and list(bounded.refused) == ["junk"]  # as the dashboard showed it
    anyway = score_analysis(_analysis(score_anyway=True))
    assert anyway.run_names == ["good", "junk"] and not anyway.refused
    assert len(anyway.corpus.run_rejected("junk")) == len(range(0, 22218, 20))
    with pytest.raises(ValueError, match="options: score_anyway must be true or false, not 'yes'"):
        _analysis(score_anyway="yes")
