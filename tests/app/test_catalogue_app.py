"""The catalogue of bad inputs (tests/catalogue.py) uploaded in the dashboard: a refused file is a panel with
the library's message, a reported row is in the table of rows not scored, and there is never a traceback."""

from __future__ import annotations

import re

import pytest

from tests.app.conftest import run_app, upload, upload_with_hierarchy
from tests.catalogue import CASES


def _errors(at) -> str:
    return " ".join(e.value for e in at.error).replace("\\", "")  # the panel escapes Markdown


@pytest.mark.parametrize("case", CASES, ids=[c.id for c in CASES])
def test_the_dashboard(case):
    gold, run, hierarchy = case.files()
    at = upload_with_hierarchy(hierarchy, gold, [run]) if hierarchy else upload(run_app(), gold, [run])
    assert not at.exception, [e.value for e in at.exception]
    shown = _errors(at)
    assert "fault in cophe" not in shown, shown[:500]
    if case.outcome == "refused":
        assert case.said in shown, shown[:500]
    elif case.outcome == "reported":
        # a catalogue file is a few rows, one of them bad on purpose: refused by the bound on rows not scored
        # (tests/app/test_max_rejected_app.py) until scored anyway, to see how each bad row is reported
        assert "cannot be scored" in shown, shown[:500]
        at.button(key="score_anyway").click().run()
        shown = _errors(at)
        assert re.search(r"input rows? (was|were) not scored", shown), shown[:500]
        reasons = " ".join(" ".join(map(str, d.value.to_numpy().ravel())) for d in at.dataframe)
        assert case.said in reasons, reasons[:500]
    else:
        assert not shown, shown[:500]
