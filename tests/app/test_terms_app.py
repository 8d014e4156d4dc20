"""Technical terms switched on and off on every page: each label follows the switch in the same run, never one
step behind it, and a choice worded by it keeps its value (issue 25).

A choice widget's labels were written in the vocabulary of whatever run read them back: the level a user chose
came back as "Section" while the switch said "Section (block)", and Streamlit read it as no option at all."""

from __future__ import annotations

import pytest

from tests.app.conftest import PAGES, run_app


def _labels(at) -> list[str]:
    """Every choice's options and every table's column names, on the page and in the sidebar."""
    shown = [
        f"{w.label}: {list(w.options)}"
        for kind in ("selectbox", "radio", "multiselect")
        for w in getattr(at, kind)
    ]
    shown += [f"{w.label}: {w.options[w.index]}" for w in at.selectbox if w.index is not None]  # as shown
    shown += [", ".join(map(str, df.value.columns)) for df in at.dataframe]
    return shown + [t.label for t in at.tabs]


def _switch(at, on: bool):
    at.toggle(key="technical_terms").set_value(on).run()
    assert not at.exception, [e.value for e in at.exception]
    return _labels(at)


@pytest.mark.parametrize("page", PAGES)
def test_technical_terms_word_every_label_at_once(page):
    at = run_app(page)
    at.selectbox(key="max_level_icd9").set_value("block").run()  # a level worded by the switch, chosen
    plain = _labels(at)
    technical = _switch(at, True)
    assert "Highest level: Section (block)" in technical, technical
    at.run()  # nothing changed: nothing to catch up with
    assert _labels(at) == technical
    assert _switch(at, False) == plain
    assert at.selectbox(key="max_level_icd9").value == "block"
