"""Document ids one click away, the document list's filters, and the tree's ranking per 100 gold codes.

A click on a row of a table of documents (the tree's "Documents behind", Compare's disagreements; of the tree's
"written instead" examples, then on one of the row's documents) opens that document on One document in the same
session; the filters list only the matching
documents, worked out here naively from the sample's files; the rate ranking is checked against a naive count.
"""

from __future__ import annotations

import csv
from collections import defaultdict

import pytest
import streamlit

from tests.app.conftest import SAMPLE, choose_segment, goto, is_tree, run_app

# AppTest of Streamlit 1.56 (the declared floor) gives no table its key, and these tests find and select
# tables by key; the browser test (tests/browser/test_document_links_browser.py) clicks them at any version.
_TABLE_KEYS = tuple(int(x) for x in streamlit.__version__.split(".")[:2]) >= (1, 57)
needs_table_keys = pytest.mark.skipif(not _TABLE_KEYS, reason="AppTest of Streamlit 1.56 keys no table")

RUNS = ("siblings", "overcoder")  # the sample's first two runs: the sidebar's run and One document's run B


def code_sets(path) -> dict[str, set[str]]:
    sets: dict[str, set[str]] = defaultdict(set)
    with open(path, newline="") as f:
        for row in csv.DictReader(f):
            sets[row["doc_id"]].add(row["code"])
    return sets


@pytest.fixture(scope="module")
def files():
    return code_sets(SAMPLE / "gold.csv"), {r: code_sets(SAMPLE / f"run_{r}.csv") for r in RUNS}


def select_row(at, key: str, row: int):
    """Click row ``row`` of the table keyed ``key`` (its selection, as the browser sends it)."""
    at.session_state[key] = {"selection": {"rows": [row], "columns": [], "cells": []}}
    return at.run()


def follow_link(at, doc: str):
    """The selection drew the page link to ``doc`` and the script that follows it at once in the browser (the
    click itself is the browser test's: AppTest runs no script); following it (a page change in the same
    session) shows One document on it."""
    links = [e for e in at.main if getattr(e, "type", "") == "page_link"]
    assert [e.proto.label for e in links] == [f"Open document {doc} →"]
    assert links[0].proto.page.endswith("document")
    scripts = [e.proto.body for e in at.main.get("html") if "stPageLink-NavLink" in e.proto.body]
    assert len(scripts) == 1 and f'"Open document {doc}"' in scripts[0]
    return goto(at, "views/document.py").run()


def on_document(at) -> bool:
    return any(t.value == "One document" for t in at.title)


def listed(at) -> list[str]:
    return [o.split(" · ")[0] for o in at.selectbox(key="doc_pick").options]


@needs_table_keys
def test_documents_behind_a_family_open_on_one_document():
    at = run_app("views/tree.py")
    at.text_input(key="tree_find").set_value("428").run()
    table = next(d for d in at.dataframe if d.key and d.key.startswith("detail_"))
    want = str(table.value.doc_id.iloc[2])
    select_row(at, table.key, 2)
    assert not at.exception, [e.value for e in at.exception]
    follow_link(at, want)
    assert on_document(at)
    assert at.session_state["doc_id"] == want
    assert at.selectbox(key="doc_pick").value == want


@needs_table_keys
def test_written_instead_examples_each_open_their_document_in_one_click(siblings_pairs):
    """Every example document of the "written instead" pairs has a row of its own, which one click opens
    (a row listing a pair's documents needed a second click, on one of them: issue 26, point 6)."""
    at = run_app("views/tree.py")
    table = next(d for d in at.dataframe if d.key and d.key.startswith("instead_") and "doc_id" in d.value)
    ids = table.value.doc_id.astype(str).tolist()
    # the pairs' example documents, each once per pair, in the pairs' order, and no row with two
    want = [d for e in siblings_pairs.head(50).examples for d in str(e).split(", ") if d]
    assert ids == want and not any("," in d for d in ids)
    third = ids[2]
    select_row(at, table.key, 2)  # the one click
    assert not [p for p in at.main.get("button_group") if p.key and p.key.startswith(table.key)]
    follow_link(at, third)
    assert on_document(at)
    assert at.selectbox(key="doc_pick").value == third


@pytest.fixture
def siblings_pairs():
    """The "written instead" pairs of the sidebar's first run (siblings), as the tree page lists them."""
    from cophe_core import score_files
    from cophe_core.breakdown.substitutions import substitution_table

    s = score_files(SAMPLE / "gold.csv", {"siblings": SAMPLE / "run_siblings.csv"})
    ev = s.evaluation("siblings")
    return substitution_table(s.evaluation("siblings", max_level=ev.ontology.levels[-1]))


@needs_table_keys
def test_compare_disagreements_open_on_one_document():
    at = run_app("views/compare.py")
    table = next(d for d in at.dataframe if d.key and d.key.startswith("cmp_docs_"))
    want = str(table.value.doc_id.iloc[0])
    select_row(at, table.key, 0)
    follow_link(at, want)
    assert on_document(at)
    assert at.selectbox(key="doc_pick").value == want


@needs_table_keys
def test_an_opened_document_clears_a_filter_that_would_hide_it():
    at = run_app("views/document.py")
    at.selectbox(key="doc_filter").set_value("a_right").run()
    only = listed(at)
    goto(at, "views/tree.py").run()
    at.text_input(key="tree_find").set_value("428").run()
    table = next(d for d in at.dataframe if d.key and d.key.startswith("detail_"))
    i = next(i for i, d in enumerate(table.value.doc_id.astype(str)) if d not in only)
    select_row(at, table.key, i)
    follow_link(at, str(table.value.doc_id.iloc[i]))
    assert at.selectbox(key="doc_pick").value == str(table.value.doc_id.iloc[i])
    assert at.selectbox(key="doc_filter").value == "all"


def test_filter_run_a_right_run_b_wrong(files):
    gold, preds = files
    a, b = (preds[r] for r in RUNS)
    docs = set(gold) | set(a) | set(b)
    want = {
        d for d in docs if a.get(d, set()) == gold.get(d, set()) and b.get(d, set()) != gold.get(d, set())
    }
    at = run_app("views/document.py")
    at.selectbox(key="doc_filter").set_value("a_right").run()
    assert set(listed(at)) == want and want


def test_filter_in_a_family(files):
    gold, preds = files
    want = {
        d
        for sets in (gold, *preds.values())
        for d, codes in sets.items()
        if any(c == "428" or c.startswith("428.") for c in codes)
    }
    at = run_app("views/document.py")
    at.selectbox(key="doc_filter").set_value("family").run()
    at.text_input(key="doc_family").set_value("428").run()
    assert set(listed(at)) == want and want


def test_filter_wrong_code_in_the_right_family(files):
    """A document of either run with a missed gold code and an extra code of the same 3-digit category."""
    gold, preds = files

    def category(code: str) -> str:
        return code.split(".")[0]

    want = set()
    for pred in preds.values():
        for d in set(gold) | set(pred):
            g, p = gold.get(d, set()), pred.get(d, set())
            if {category(c) for c in g - p} & {category(c) for c in p - g}:
                want.add(d)
    at = run_app("views/document.py")
    at.selectbox(key="doc_filter").set_value("swap").run()
    assert set(listed(at)) == want and want


def test_tree_ranks_families_per_100_gold_codes_with_a_minimum_support():
    """The rate panel: families with at least 10 gold codes, by extra codes per 100 gold codes, naively."""
    at = run_app("views/tree.py")
    count = next(d.value for d in at.dataframe if "extra_share" in d.value.columns)  # the count ranking's
    choose_segment(at, "rank_by", "rate")
    over = next(d.value for d in at.dataframe if "extra_per_100" in d.value.columns)
    assert (over.gold >= 10).all()
    assert list(over.extra_per_100) == pytest.approx(list(100 * over.fp / over.gold))
    assert list(over.extra_per_100) == sorted(over.extra_per_100, reverse=True)
    assert list(over.code) != list(count.code)  # the rate ranking is not the count ranking
    text = "\n".join(m.value for m in at.main.markdown)
    assert "fewer than 10 gold codes are left out" in text


def test_tree_colours_by_extra_codes_per_100_gold_codes():
    """The colour choice exists, its legend says what grey means, and the tiles below 10 gold codes are grey."""
    from cophe_core.output.plotting import OTHER_COLOUR

    at = run_app("views/tree.py")
    at.text_input(key="tree_find").set_value("428").run()  # a category: its codes, some with few gold codes
    at.selectbox(key="tree_colour").set_value("extra_per_100").run()
    assert not at.exception, [e.value for e in at.exception]
    legend = next(c.value for c in at.main.caption if "**Colour**" in c.value)
    assert "per 100 gold codes" in legend and "fewer than 10 gold codes" in legend
    import json

    chart = json.loads(next(e for e in at.main.get("plotly_chart")).proto.spec)
    trace = chart["data"][0]
    assert is_tree(trace)
    colours, custom = trace["marker"]["color"], trace["customdata"]
    gold = [row[2] for row in custom]
    ids = trace["ids"]
    small = [i for i, (g, n) in enumerate(zip(gold, ids)) if str(n).startswith("n") and g < 10]
    large = [i for i, (g, n) in enumerate(zip(gold, ids)) if str(n).startswith("n") and g >= 10]
    assert small and large, (ids[:5], gold[:5])
    assert all(colours[i] == OTHER_COLOUR for i in small)
    assert all(colours[i] != OTHER_COLOUR for i in large)


def test_the_follow_script_holds_a_document_id_as_text():
    """A document id from an upload cannot close the script that follows its link, nor add markup."""
    from cophe_dashboard.components import follow_script

    script = follow_script('D1</script><img src=x onerror="alert(1)">', 3)
    body = script.split("<script>", 1)[1].rsplit("</script>", 1)[0]
    assert "</script" not in body.lower() and "<img" not in body  # the id stays inside its string
    assert '"Open document D1\\u003c/script\\u003e\\u003cimg src=x onerror=\\"alert(1)\\"\\u003e"' in body
