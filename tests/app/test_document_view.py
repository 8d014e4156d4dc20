"""The "One document" page for review sessions: documents ranked by extra + missed codes, Previous / Next, two runs side by
side, an optional notes file with the gold titles marked (and escaped), and only the coder's words."""

from __future__ import annotations

import csv
import re
from collections import defaultdict

import pytest

from cophe_core import score_files
from tests.app.conftest import SAMPLE, run_app

SNAKE = re.compile(r"\b[a-z][a-z0-9]*\\?_[a-z0-9]")  # doc_id, also as data.md escapes it: doc\_id


def code_sets(path) -> dict[str, set[str]]:
    """doc → its codes, read naively (every row of the sample is valid: nothing is rejected)."""
    sets: dict[str, set[str]] = defaultdict(set)
    with open(path, newline="") as f:
        for row in csv.DictReader(f):
            sets[row["doc_id"]].add(row["code"])
    return sets


def naive_ranking(runs: list[str]) -> list[str]:
    """The documents by extra + missed codes over ``runs``, most first, ties in document-id order."""
    gold = code_sets(SAMPLE / "gold.csv")
    preds = [code_sets(SAMPLE / f"run_{r}.csv") for r in runs]
    docs = set(gold).union(*preds)
    errors = {}
    for d in docs:
        errors[d] = 0
        for pred in preds:
            errors[d] += len(pred.get(d, set()) - gold.get(d, set())) + len(
                gold.get(d, set()) - pred.get(d, set())
            )
    return sorted(docs, key=lambda d: (-errors[d], d))


@pytest.fixture(scope="module")
def sample():
    return score_files(SAMPLE / "gold.csv", {r: SAMPLE / f"run_{r}.csv" for r in ("siblings", "overcoder")})


def page_text(at) -> str:
    return "\n".join(e.value for e in [*at.main.markdown, *at.main.caption])


def mark_title(sample, doc: str) -> str:
    """A title of one of ``doc``'s gold codes with letters and spaces only (so nothing in it is escaped)."""
    ev = sample.evaluation("siblings")
    o, r = ev.ontology, list(ev.docs).index(doc)
    titles = [str(o.titles[i]) for i in ev.gold[r].indices]
    return next(t for t in sorted(titles, key=len, reverse=True) if re.fullmatch(r"[A-Za-z ]+", t))


def test_first_document_has_the_most_errors_of_the_sidebar_run():
    """Run B none: the ranking is the sidebar run's (siblings) alone; Next goes to the second document and
    Previous back, and the document list follows the buttons."""
    expected = naive_ranking(["siblings"])
    at = run_app("views/document.py", doc_run_b="")
    assert at.selectbox(key="doc_run_b").value == ""
    assert at.selectbox(key="doc_pick").value == expected[0]
    assert at.session_state["doc_id"] == expected[0]
    assert "Document 1 of 1,000 by extra + missed codes" in page_text(at)
    at.button(key="doc_next").click().run()
    assert at.selectbox(key="doc_pick").value == expected[1] == at.session_state["doc_id"]
    assert "Document 2 of 1,000 by extra + missed codes" in page_text(at)
    at.button(key="doc_prev").click().run()
    assert at.selectbox(key="doc_pick").value == expected[0]
    at.selectbox(key="doc_pick").set_value(expected[9]).run()
    assert at.session_state["doc_id"] == expected[9]
    assert "Document 10 of 1,000 by extra + missed codes" in page_text(at)
    assert at.button(key="doc_prev").disabled is False


def test_two_runs_side_by_side_ranked_by_both():
    """By default run B is the run after the sidebar's (overcoder): both are shown, and the ranking counts
    the errors of both."""
    expected = naive_ranking(["siblings", "overcoder"])
    at = run_app("views/document.py")
    assert at.selectbox(key="doc_run_b").value == "overcoder"
    assert at.selectbox(key="doc_pick").value == expected[0]
    at.button(key="doc_next").click().run()
    assert at.selectbox(key="doc_pick").value == expected[1]
    text = page_text(at)
    assert "#### Run siblings" in text and "#### Run overcoder" in text
    summaries = [m.value for m in at.main.markdown if m.value.startswith(":green-badge[Correct")]
    assert len(summaries) == 2
    assert all(
        re.fullmatch(
            r":green-badge\[Correct \d+\] · :red-badge\[Extra \d+\] · :blue-badge\[Missed \d+\] · "
            r":violet-badge\[Wrong code in the right family \d+\]",
            s,
        )
        for s in summaries
    )


def test_summary_counts_match_the_naive_sets(sample):
    """Run siblings on the top document: correct = |gold ∩ written|; each pair (wrong code in the right family)
    is one extra and one missed code, so extra + pairs and missed + pairs are the naive set differences."""
    doc = naive_ranking(["siblings"])[0]
    gold, pred = code_sets(SAMPLE / "gold.csv")[doc], code_sets(SAMPLE / "run_siblings.csv")[doc]
    at = run_app("views/document.py", doc_run_b="")
    summary = next(m.value for m in at.main.markdown if m.value.startswith(":green-badge[Correct"))
    correct, extra, missed, pairs = map(int, re.findall(r"(\d+)\]", summary))
    assert correct == len(gold & pred)
    assert extra + pairs == len(pred - gold) and missed + pairs == len(gold - pred)
    assert pairs > 0  # the siblings run writes sibling codes: some rows read "instead of"
    assert "instead of" in page_text(at)


def test_another_page_opens_a_document():
    """doc_id, set by the tree page (or a link), is the document shown, at its place in the ranking."""
    expected = naive_ranking(["siblings", "overcoder"])
    at = run_app("views/document.py", doc_id=expected[41])
    assert at.selectbox(key="doc_pick").value == expected[41]
    assert "Document 42 of 1,000 by extra + missed codes" in page_text(at)


def test_notes_mark_gold_titles_and_escape_html(sample):
    ranking = naive_ranking(["siblings", "overcoder"])
    doc = ranking[0]
    title = mark_title(sample, doc)
    note = f"Seen today.\nHistory of {title.upper()}, stable. <script>alert(1)</script> *not bold*"
    notes = f'doc_id,text\n{doc},"{note}"\n'.encode()
    at = run_app("views/document.py")
    at.file_uploader(key="notes_file").set_value(("notes.csv", notes, "text/csv")).run()
    assert not at.exception, [e.value for e in at.exception]
    shown = [m.value for m in at.main.markdown if "<mark" in m.value]
    assert len(shown) == 1
    html = shown[0]
    assert re.search(rf"<mark[^>]*>{re.escape(title.upper())}</mark>", html)
    assert "<script>" not in html and "&lt;script&gt;alert(1)&lt;/script&gt;" in html
    assert "*not bold*" not in html  # Markdown signs are entities: the note shows as written
    assert f"#### Note of {doc}" in page_text(at)
    # the next document has no note in the file: no note is shown for it
    at.button(key="doc_next").click().run()
    assert not [m for m in at.main.markdown if "<mark" in m.value or "Note of" in m.value]
    assert f"The notes file has no note for {ranking[1]}" in page_text(at)


def test_a_bad_notes_file_says_what_to_do():
    at = run_app("views/document.py")
    at.file_uploader(key="notes_file").set_value(("notes.csv", b"doc_id,note\n1,x\n", "text/csv")).run()
    assert not at.exception
    errors = " ".join(e.value for e in at.main.error).replace("\\", "")
    assert "notes.csv, line 1" in errors and "no column text" in errors


def test_only_coder_words_on_the_page(sample):
    """No snake_case, no TP/FP/FN, no level ids such as e0 in what a coder reads."""
    doc = naive_ranking(["siblings", "overcoder"])[0]
    at = run_app("views/document.py")
    notes = f"doc_id,text\n{doc},{mark_title(sample, doc)}\n".encode()
    at.file_uploader(key="notes_file").set_value(("notes.csv", notes, "text/csv")).run()
    words = [
        e.value
        for e in [
            *at.main.markdown,
            *at.main.caption,
            *at.main.subheader,
            *at.main.title,
            *at.main.info,
            *at.main.error,
        ]
    ]
    words += [str(c) for d in at.main.dataframe for c in d.value.columns]
    words += [w.label for w in [*at.main.selectbox, *at.main.button, *at.main.get("expander")]]
    words += [t.label for t in at.main.tabs]
    assert words and not [w for w in words if SNAKE.search(w.replace("white-space", ""))]
    assert not [w for w in words if re.search(r"\b(TP|FP|FN)\b", w)]
    labels = [t.label for t in at.main.tabs]
    assert labels and not [t for t in labels if re.fullmatch(r"e\d|block|chapter", t)]
    assert "Category (3 digits)" in labels
