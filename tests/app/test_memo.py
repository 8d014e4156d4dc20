"""The one cache (issue 25): results kept per session, keyed by the function and its arguments, bounded; no
entry kept on a core object and no key written by hand."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

import tests.app.conftest  # noqa: F401 - puts the dashboard's folder on the path, as streamlit run does
from cophe_core.breakdown.slices import Slice
from cophe_dashboard import memo


class Box:
    """An object compared by identity, as a Scoring or an Evaluation is."""


def _counting():
    calls: list[tuple] = []

    def table(run, level, *, seed=0, _data=b""):
        calls.append((run, level, seed))
        return f"{run} at {level}, seed {seed}"

    return table, calls


def test_a_result_is_keyed_by_the_function_and_its_arguments():
    m, (table, calls) = memo.Memo(), _counting()
    assert m.get(table, "siblings", "e1") == "siblings at e1, seed 0"
    assert m.get(table, "siblings", level="e1") == "siblings at e1, seed 0"  # the same call, named otherwise
    assert (
        m.get(table, "siblings", "e1", seed=0, _data=b"other bytes") == "siblings at e1, seed 0"
    )  # _: not key
    assert calls == [("siblings", "e1", 0)]
    m.get(table, "siblings", "e1", seed=1)
    m.get(table, "overcoder", "e1")
    other, other_calls = _counting()  # another function, the same arguments: its own entry
    m.get(other, "siblings", "e1")
    assert len(calls) == 3 and len(other_calls) == 1


def test_objects_are_keys_by_identity_and_slices_by_what_they_select():
    m, calls = memo.Memo(), []

    def f(thing, part=None):
        calls.append(1)
        return len(calls)

    a, b = Box(), Box()
    assert m.get(f, a) == m.get(f, a) == 1 and m.get(f, b) == 2  # the same object, not an equal one
    assert m.get(f, {"r": a}) == m.get(f, {"r": a}) == 3  # a dict by its items
    mask = np.array([True, False, True])
    one = Slice(key="k", dimension="Length", name="Long", kind="documents", mask=mask, size=2)
    same = Slice(key="k", dimension="Length", name="Long", kind="documents", mask=mask.copy(), size=2)
    assert one is not same and m.get(f, a, one) == m.get(f, a, same) == 4


def test_each_function_keeps_its_last_results_only():
    m, (table, calls) = memo.Memo(), _counting()
    memo.bounded(2)(table)
    m.get(table, "a", "e0")
    m.get(table, "b", "e0")
    m.get(table, "a", "e0")  # used again: the most recent
    m.get(table, "c", "e0")  # "b" goes
    assert m.count(table) == 2 and m.has(table, "a", "e0") and not m.has(table, "b", "e0")
    m.get(table, "b", "e0")
    assert calls == [("a", "e0", 0), ("b", "e0", 0), ("c", "e0", 0), ("b", "e0", 0)]


@pytest.mark.parametrize("page", ["views/tree.py", "views/compare.py", "views/levels.py"])
def test_no_result_is_kept_on_a_core_object_and_each_session_has_its_own(page):
    from tests.app.conftest import run_app

    first, second = run_app(page), run_app(page)
    scoring = first.session_state["_ctx"].scoring
    assert scoring is second.session_state["_ctx"].scoring  # the sample: scored once for everybody
    assert [k for k in vars(scoring) if k.startswith("_dashboard")] == []
    assert first.session_state["_memo"] is not second.session_state["_memo"]


def test_a_key_does_not_keep_its_objects_alive():
    import gc
    import weakref

    m, box = memo.Memo(), Box()
    m.get(lambda thing: "table", box)
    gone = weakref.ref(box)
    del box
    gc.collect()
    assert gone() is None  # an upload's scoring, let go by the session, is freed though results named it


def test_a_samples_parse_is_shared_by_every_session_and_left_as_read(monkeypatch):
    """A bundled sample is parsed once for every session, as it is scored (it holds no user's data), and
    no page changes the shared parse: after two sessions went through every page, it equals a new parse."""
    from cophe_dashboard import loading
    from tests.app.conftest import PAGES, goto, run_app

    parsed: list[str] = []
    for reader in ("read_labels", "read_input"):
        real = getattr(loading, reader)
        monkeypatch.setattr(
            loading, reader, lambda f, *a, _r=real, **k: parsed.append(f.name) or _r(f, *a, **k)
        )
    loading.sample_read.clear()
    sessions = [run_app(), run_app()]
    gold, runs, _ = loading.sample_inputs("Sample: ICD-9")
    assert sorted(parsed) == sorted(["gold.csv", *(name for _, name, _ in runs)])  # once, for both sessions
    for at in sessions:
        for page in PAGES:
            goto(at, page).run()
            assert not at.exception, (page, [e.value for e in at.exception])
    shared = loading.sample_read("Sample: ICD-9")[3]
    fresh = loading.read_inputs(gold, runs, kept=False)
    assert shared.digest == fresh.digest and list(shared.runs) == list(fresh.runs)
    for was, new in [(shared.gold, fresh.gold)] + [(shared.runs[r], fresh.runs[r]) for r in fresh.runs]:
        assert type(was) is type(new) and was.name == new.name and was.warnings == new.warnings
        np.testing.assert_array_equal(was.docs, new.docs)
        for part in ("pairs", "rejected"):
            pd.testing.assert_frame_equal(getattr(was, part), getattr(new, part))
