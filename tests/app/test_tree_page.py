"""The code-family tree page under AppTest: the ranked panel, focus, "Other", colours, words on every page."""

from __future__ import annotations

import csv
import json
import re

import pytest

from cophe_core import score_files
from cophe_core.breakdown.tree import focused_subtree
from cophe_core.output.plotting import OTHER_COLOUR, colour_range, coloured
from tests.app.conftest import PAGES, SAMPLE, asking, choose_segment, is_tree, plotly_specs, run_app
from tests.core.test_families import naive_family_errors

SNAKE = re.compile(r"\b[a-z0-9]+(?:_[a-z0-9]+)+\b")
FILE_NAME = re.compile(r"\S+\.(?:csv|tsv|psv|txt|json|jsonl|ndjson|parquet|feather|arrow|html)\b")


@pytest.fixture(scope="module")
def overcoder():
    s = score_files(SAMPLE / "gold.csv", {"overcoder": SAMPLE / "run_overcoder.csv"})
    return s.evaluation("overcoder", max_level="chapter")


def rows(name: str) -> list[tuple[str, str]]:
    with open(SAMPLE / name) as f:
        return [(r["doc_id"], r["code"]) for r in csv.DictReader(f)]


def test_ranked_panel_lists_the_worst_families_with_their_share(overcoder):
    """The two ranked lists equal a plain count over the sample's rows, in order, with their shares."""
    onto = overcoder.ontology
    at = run_app("views/tree.py", run="overcoder")
    assert "Where this run goes wrong" in expanders(at)
    extra_t, missed_t = at.dataframe[0].value, at.dataframe[1].value

    def category(code):
        return str(onto.keys[onto.ancestors[onto.codes[code], onto.level_index("e0")]])

    extra, missed = naive_family_errors(rows("gold.csv"), rows("run_overcoder.csv"), category)
    for table, counts, col, share in (
        (extra_t, extra, "fp", "extra_share"),
        (missed_t, missed, "fn", "missed_share"),
    ):
        want = sorted(counts.items(), key=lambda kv: (-kv[1], kv[0]))[:6]
        assert sorted(zip(table.code, table[col])) == sorted(want)
        assert list(table[col]) == sorted(table[col], reverse=True)
        # shares in percent points, which the grid writes to one decimal with a "%"
        assert table[share].tolist() == pytest.approx([100 * c / sum(counts.values()) for c in table[col]])
        assert all(t == onto.titles[onto.codes[c]] for c, t in zip(table.code, table.title))
    words = " ".join(m.value for m in at.markdown)
    # a percentage to one decimal, as every percentage on screen (the table's shares too)
    assert f"hold {extra_t.extra_share.sum() / 100:.1%} of the run's extra codes" in words


def test_focus_children_written_instead_and_documents():
    s = score_files(SAMPLE / "gold.csv", {"siblings": SAMPLE / "run_siblings.csv"})
    onto = s.corpus.ontology
    focus = onto.codes["428"]
    at = run_app("views/tree.py", focus=focus, run="siblings")
    trace = plotly_specs(at)[0]["data"][0]
    assert is_tree(trace) and trace["ids"][0] == f"n{focus}"
    assert trace["text"][0] == "<b>428</b> Heart failure"  # the focused tile carries its label
    tables = [d.value for d in at.dataframe]
    kids = next(t for t in tables if "docs_over" in t.columns)
    assert set(kids.code) == {"428.0", "428.1", "428.2", "428.3", "428.4", "428.9"}
    swaps = next(t for t in tables if "written" in t.columns)
    assert swaps.gold.str.startswith("428").all() and len(swaps) > 0
    # how often: in percent points, which the grid writes to one decimal with a "%"
    assert swaps.rate.tolist() == pytest.approx((100 * swaps.documents / swaps.gold_documents).tolist())
    assert any(s.value.startswith("Documents behind 428 Heart failure") for s in at.subheader)
    # the documents behind 428: the siblings run misses more than it adds there, so those with missed codes
    detail = next(t for t in tables if "gold_codes" in t.columns)
    node = s.evaluation("siblings").nodes.set_index("code").loc["428"]
    assert node.fn > node.fp and len(detail) == min(100, node.docs_under) > 0
    # written − gold, split: a document shown for its missed codes has no extra one in the family
    assert "extra" not in detail and (detail.missed == detail.gold - detail.predicted).all()
    assert (detail.missed > 0).all() and list(detail.missed) == sorted(detail.missed, reverse=True)
    # any codes: both columns, each document's written − gold on one side only; in a family that has
    # both (001-009, 42 documents: all listed)
    family = list(onto.keys).index("001-009")  # a range: a family, not a code
    at.session_state["focus"] = family
    at.run()
    choose_segment(at, f"detail_kind_{family}", "any codes")
    both = next(d.value for d in at.dataframe if "gold_codes" in d.value.columns)
    docs = s.evaluation("siblings").node_documents(family)
    assert len(both) == len(docs) == 42 and set(both.doc_id) == set(docs.doc_id)
    assert (both.extra == (both.predicted - both.gold).clip(lower=0)).all()
    assert (both.missed == (both.gold - both.predicted).clip(lower=0)).all()
    assert (both.extra > 0).sum() == 7 and (both.missed > 0).sum() == 6  # its documents over and under


def test_other_opens_into_the_list_of_what_it_merged(overcoder):
    at = run_app("views/tree.py", run="overcoder")
    ids = plotly_specs(at)[0]["data"][0]["ids"]
    bucket = next(i for i in ids if i.startswith("other:"))
    at.session_state["other_open"] = bucket
    at.run()
    sub = focused_subtree(
        overcoder.nodes, overcoder.ontology, None, depth=2, max_children=30, min_share=0.018
    )
    merged = set(sub.set_index("id").loc[bucket, "merged"])
    listed = next(d.value for d in at.dataframe if set(d.value.get("node", [])) == merged)
    assert len(listed) == len(merged) > 1
    assert any("smaller families" in m.value for m in at.markdown)


def test_colour_scales_are_fitted_and_stated(overcoder):
    at = run_app("views/tree.py", run="overcoder")
    tiles, bar = plotly_specs(at)[0]["data"]
    sub = focused_subtree(
        overcoder.nodes, overcoder.ontology, None, depth=2, max_children=30, min_share=0.018
    )
    shown = coloured(sub)
    lo, hi = colour_range(shown.balance, shown.value, signed=True)
    assert (bar["marker"]["cmin"], bar["marker"]["cmax"]) == (lo, hi) and 0 < hi < 1 and lo == -hi
    assert f"{hi:.2f}" in bar["marker"]["colorbar"]["title"]["text"]
    assert any(f"from {lo:+.2f} to {hi:+.2f}".replace("-", "−") in c.value for c in at.caption)
    # "Other" tiles are grey, the families take the scale's colours
    colours = dict(zip(tiles["ids"], tiles["marker"]["color"]))
    others = [i for i in tiles["ids"] if i.startswith("other:")]
    assert others and all(colours[i] == OTHER_COLOUR for i in others)
    assert all(colours[i] != OTHER_COLOUR for i in shown.id)
    at.selectbox(key="tree_colour").set_value("error_share").run()
    bar = plotly_specs(at)[0]["data"][1]
    assert bar["marker"]["cmin"] == 0 and bar["marker"]["cmax"] == pytest.approx(shown.error_share.max())
    at.selectbox(key="tree_colour").set_value("fp").run()
    bar = plotly_specs(at)[0]["data"][1]
    assert (
        bar["marker"]["cmax"] == shown.fp.max()
        and "Extra codes" in bar["marker"]["colorbar"]["title"]["text"]
    )


def expanders(at) -> list[str]:
    """Expander labels (AppTest 1.56 lists an expander with an icon as a status block)."""
    return [e.label for e in at.expander] + [e.label for e in at.status]


def screen_text(at) -> list[str]:
    """Every string the page shows: headings, text, widget labels and options, table headers and cells,
    chart titles and legends."""
    out: list[str] = []
    for kind in (
        "title",
        "header",
        "subheader",
        "markdown",
        "caption",
        "info",
        "warning",
        "error",
        "success",
    ):
        out += [str(e.value) for e in getattr(at, kind)]
    out += expanders(at) + [m.label for m in at.metric] + [b.label for b in at.button] + asking(at)
    for kind in ("selectbox", "multiselect", "radio", "segmented_control"):
        for w in getattr(at, kind, []):  # AppTest gained segmented_control after 1.56
            out.append(w.label)
            out += [str(o) for o in w.options]
    for kind in ("toggle", "slider", "text_input", "select_slider", "number_input"):
        out += [w.label for w in getattr(at, kind)]
    for d in at.dataframe:
        config = json.loads(d.proto.columns or "{}")
        df = d.value
        for col in df.columns:
            conf = config.get(str(col), {})
            if not conf.get("hidden"):
                out.append(conf.get("label", str(col)))
                if df[col].dtype == object:
                    out += [str(v) for v in df[col].head(30)]
        out += [str(i) for i in df.index[:30]] if df.index.dtype == object else []
    for spec in plotly_specs(at):
        out += [str(t.get("name", "")) for t in spec["data"]]
        layout = spec.get("layout", {})
        out += [str(a.get("text", "")) for a in layout.get("annotations", [])]
        out += [
            str(v.get("title", {}).get("text", ""))
            for k, v in layout.items()
            if k.startswith(("xaxis", "yaxis"))
        ]
    return out


@pytest.mark.parametrize("page", PAGES)
def test_no_identifier_reaches_the_screen(page):
    """No snake_case identifier on any page, in the coder's words (the default)."""
    at = run_app(page)
    found = set()
    for text in screen_text(at):
        text = FILE_NAME.sub("", text.replace("\\", ""))
        found |= set(SNAKE.findall(text))
    assert not found, f"{page} shows identifiers: {sorted(found)}"


def ranked_codes(at) -> dict[str, list[str]]:
    """The codes above each ranked list (pills), by their key."""
    return {g.key: list(g.options) for g in at.button_group if g.key and g.key.startswith("go_")}


def test_each_ranked_family_is_one_click_from_focus(overcoder):
    """Above each ranked list, its codes in its rows' order; a click on one focuses the tree on that family
    (its breadcrumb and documents show) and renews that list's codes alone, drawn again with none chosen,
    so the same code focuses again after the way back. A focus from elsewhere keeps their keys."""
    onto = overcoder.ontology
    at = run_app("views/tree.py", run="overcoder")
    codes = ranked_codes(at)
    extra_t, missed_t = at.dataframe[0].value, at.dataframe[1].value
    assert codes == {"go_rank_fp_e0_0": list(extra_t.code), "go_rank_fn_e0_0": list(missed_t.code)}
    at.text_input(key="tree_find").set_value("428").run()  # a focus from the find box keeps them
    assert at.session_state["focus"] is not None and ranked_codes(at) == codes
    at.button(key="crumb_root").click().run()
    second = onto.codes[missed_t.code.iloc[1]]  # the second family of "Most missed codes"
    for key in ("go_rank_fn_e0_0", "go_rank_fn_e0_1"):  # the same family twice, the way back between
        at.button_group(key=key).set_value(second).run()
        assert not at.exception, [e.value for e in at.exception]
        assert at.session_state["focus"] == second
        assert at.button(key=f"crumb_{second}").label.startswith(f"› {missed_t.code.iloc[1]}")
        assert any(h.value.startswith(f"Documents behind {missed_t.code.iloc[1]} ") for h in at.subheader)
        assert set(ranked_codes(at)) == {"go_rank_fp_e0_0", key[:-1] + str(int(key[-1]) + 1)}
        assert at.button_group(key=key[:-1] + str(int(key[-1]) + 1)).value is None  # none chosen
        at.button(key="crumb_root").click().run()
        assert at.session_state["focus"] is None


def test_the_ranked_codes_are_escaped():
    """A code is the user's (a code system read from a file): its pill shows it as text, never as Markdown."""
    from streamlit.testing.v1 import AppTest

    def app() -> None:
        import pandas as pd

        from cophe_dashboard.views import tree

        tree.ranked_codes(
            pd.DataFrame({"code": ["[x](http://e.x)", "**V45**", "428"], "node": [4, 5, 6]}), "r"
        )

    at = AppTest.from_function(app).run()
    assert not at.exception, [e.value for e in at.exception]
    assert list(at.button_group(key="go_r_0").options) == [r"\[x\]\(http://e\.x\)", r"\*\*V45\*\*", "428"]
