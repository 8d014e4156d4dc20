"""A notes file cannot make the One document page large or break out of the note's box: each note is shown
up to its first characters (45 MB of Markdown signs once made a 236 MB message, 4 GB on the server and 27 s
per page), no message echoes the file, and a note's line ends (``\\r`` too) stay inside its HTML block."""

from __future__ import annotations

import json

import pytest

from tests.app.conftest import run_app
from tests.app.test_injection import BEACON, _texts, _unescaped

SIGNS = "*_[]!#`|~<>&\\-+{}$:"  # each one an entity or an escape: the most a character can grow
MB = 10**6  # cophe_core.base.files.MB


def page_chars(at) -> int:
    """Every character the page sends: each element's text as the browser gets it."""
    found: list[tuple[str, str]] = []
    _texts(at._tree, found)
    return sum(len(text) for _, text in found)


def with_notes(name: str, content: bytes):
    """The One document page of the sample, with a notes file; the document shown is the first ranked."""
    at = run_app("views/document.py")
    at.file_uploader(key="notes_file").set_value((name, content, "application/octet-stream")).run()
    assert not at.exception, [e.value for e in at.exception]
    return at


@pytest.fixture(scope="module")
def first_doc() -> str:
    return run_app("views/document.py").session_state["doc_id"]


def test_a_note_of_megabytes_of_signs_is_shown_bounded(first_doc):
    note = (SIGNS * (3 * MB // len(SIGNS) + 1))[: 3 * MB]
    content = ("doc_id,text\n" + f'{first_doc},"{note.replace(chr(34), chr(34) * 2)}"\n').encode()
    at = with_notes("notes.csv", content)
    boxes = [m.value for m in at.main.markdown if m.value.startswith("<div")]
    assert len(boxes) == 1 and "&#42;&#95;&#91;" in boxes[0]  # the note, escaped
    assert page_chars(at) < 1_000_000, page_chars(at)  # 100,000 characters of at most ~6 each, and the rest
    said = " ".join(c.value for c in at.main.caption)
    assert f"This note has {3 * MB:,} characters: the first 100,000 are shown." in said
    assert "Up to 50 MB per file; each note is shown up to its first 100,000 characters" in (
        at.main.get("file_uploader")[0].proto.help
    )


@pytest.mark.parametrize(
    "name, content",
    [
        ("notes.csv", (SIGNS * (3 * MB // len(SIGNS))).encode()),  # one header line, no text column
        ("notes.csv", ("*," * (3 * MB // 2)).encode()),  # a header of 1.5 million fields
        ("notes.tsv", ("\t".join(["doc_id", *("#" * 5000 for _ in range(400))]) + "\n1\tx\n").encode()),
        ("notes.jsonl", ('{"doc_id": "1", "text": "' + "*" * 3 * MB).encode()),  # no closing quote
    ],
)
def test_no_message_echoes_the_notes_file(name, content):
    at = with_notes(name, content)
    panels = [e.value.replace("\\", "") for e in at.main.error]
    assert len(panels) == 1 and panels[0].startswith(name), panels
    assert len(panels[0]) < 1_000, len(panels[0])
    assert page_chars(at) < 100_000


@pytest.mark.parametrize("ends", ["\r\r", "\n\n", "\r\n\r\n", "\r \r", "\u2028\u2028", "\x0c\x0c"], ids=repr)
def test_a_note_cannot_end_its_html_block(first_doc, ends):
    text = (
        f"Seen today.{ends}![x]({BEACON}/x.png){ends}**bold**{ends}# Heading{ends}1. item{ends}"
        f"    indented{ends}<img src={BEACON}/y.png>"
    )
    line = json.dumps({"doc_id": first_doc, "text": text})
    at = with_notes("notes.jsonl", f"{line}\n".encode())
    boxes = [m.value for m in at.main.markdown if m.value.startswith("<div")]
    assert len(boxes) == 1
    box = boxes[0]
    assert "\r" not in box and "\n" not in box  # one line of Markdown: nothing in it can end the block
    assert box.endswith("</div>") and box.count("<br>") == 12
    assert "**bold**" not in box and "<img" not in box and "&#42;&#42;bold" in box
    assert _unescaped(at) == []
