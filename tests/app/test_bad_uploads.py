"""The catalogue of bad uploads, in the app: each shows the user's problem in a panel naming the file, never a
traceback and never "a fault in cophe"."""

from __future__ import annotations

import pytest

from tests.app.conftest import run_app, upload, upload_with_hierarchy

RUN = ("run.csv", b"doc_id,code\n1,401.9\n2,428.0\n")
GOLD = ("gold.csv", b"doc_id,code\n1,401.9\n2,428.0\n")


def _shown(at) -> str:
    return " ".join(e.value for e in at.error).replace("\\", "")


@pytest.mark.parametrize(
    "gold, said",
    [
        (("deep.json", b"[" * 100_000 + b"]" * 100_000), "deep.json: JSON nested too deeply to read"),
        (
            (
                "deep.jsonl",
                b'{"doc_id": "1", "codes": ["401.9"]}\n' + b"[" * 100_000 + b"]" * 100_000 + b"\n",
            ),
            "deep.jsonl, line 2: JSON nested too deeply to read",
        ),
        (("broken.parquet", b"PAR1" + b"\x00" * 64 + b"PAR1"), "broken.parquet: cannot read as Parquet"),
        (("junk.csv", b"\x00\x01binary junk"), "junk.csv: this is not a text file"),
        (("empty.csv", b"   \n"), "empty.csv: the file is empty"),
        (
            ("long.csv", b"doc_id,code\n1," + b"9" * 10_000 + b"\n"),
            "No scores yet: long.csv has no row that can be scored",
        ),
        (("bad.json", b'{"doc_id": 1, "codes": 5}'), "No scores yet: bad.json has no row that can be scored"),
    ],
)
def test_a_bad_gold_file_is_a_panel_naming_it(gold, said):
    at = upload(run_app(), gold, [RUN])
    assert not at.exception, [e.value for e in at.exception]
    shown = _shown(at)
    assert said in shown and "fault in cophe" not in shown, shown[:500]


@pytest.mark.parametrize(
    "run, said",
    [
        (
            (
                "logits.csv",
                b"_id,401.9,428.0\n1,3.2,-1.5\n2,2.1,-0.7\n3,4.0,1.9\n4,-2.2,5.1\n5,1.1,2.2\n6,3.3,-4.4\n",
            ),
            "logits.csv: ",
        ),
        (("deep.json", b"[" * 100_000 + b"]" * 100_000), "deep.json: JSON nested too deeply to read"),
    ],
)
def test_a_bad_run_file_is_a_panel_naming_it(run, said):
    at = upload(run_app(), GOLD, [run])
    assert not at.exception, [e.value for e in at.exception]
    shown = _shown(at)
    assert said in shown and "fault in cophe" not in shown, shown[:500]


def test_a_malformed_cophe_json_hierarchy_is_a_panel_naming_the_entry():
    at = upload_with_hierarchy(
        ("h.json", b'{"a": {"parents": 5}}'),
        ("gold.csv", b"doc_id,code\n1,a\n"),
        [("run.csv", b"doc_id,code\n1,a\n")],
    )
    assert not at.exception
    assert "h.json: entry 'a': 'parents' must be a list of codes (strings), got 5" in _shown(at)
