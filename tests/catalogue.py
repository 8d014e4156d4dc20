"""The catalogue of bad inputs found by the adversarial campaign of issue 12, one entry per defect, run through
the CLI and the library (tests/core/test_catalogue.py) and the dashboard (tests/app/test_catalogue_app.py), so
that each stays fixed.

An entry is a file given in one role (``gold``, ``run`` or ``hierarchy``; the other files are :data:`GOLD`,
:data:`RUN` and no hierarchy) and what must happen:

- ``refused``: an ``InputError`` naming the file and saying ``said``; the CLI exits 2 with one line; the
  dashboard shows it in its error panel;
- ``reported``: the file is scored, and the rows it loses are listed with a reason that says ``said`` (the
  library's rejected rows, the CLI's warning, the dashboard's table of rows not scored);
- ``read``: the file is scored with nothing lost (``said`` is unused).
"""

from __future__ import annotations

import io
import json
from dataclasses import dataclass

import pandas as pd

GOLD = ("gold.csv", b"doc_id,code\n1,401.9\n2,428.0\n3,250.00\n")
RUN = ("run.csv", b"doc_id,code\n1,401.9\n2,428.1\n3,250.00\n")
THRESHOLD = 0.5  # runs given as scores are decided at the dashboard's default


@dataclass(frozen=True)
class Case:
    id: str
    role: str
    name: str
    data: bytes
    outcome: str
    said: str = ""
    gold: tuple[str, bytes] = GOLD  # the other files, where the case's file is not them
    run: tuple[str, bytes] = RUN

    def files(self) -> tuple[tuple[str, bytes], tuple[str, bytes], tuple[str, bytes] | None]:
        """Gold, run and hierarchy (or None) as ``(name, bytes)``, the case's file in its role."""
        mine = (self.name, self.data)
        return (
            mine if self.role == "gold" else self.gold,
            mine if self.role == "run" else self.run,
            mine if self.role == "hierarchy" else None,
        )


def _parquet(frame: pd.DataFrame) -> bytes:
    out = io.BytesIO()
    frame.to_parquet(out)
    return out.getvalue()


def _deep_chain(levels: int) -> bytes:
    return "\n".join(["child,parent", "n0,"] + [f"n{i},n{i - 1}" for i in range(1, levels)]).encode()


CASES = [
    # uncaught errors, once a traceback
    Case(
        "deep-json",
        "gold",
        "deep.json",
        b"[" * 100_000 + b"]" * 100_000,
        "refused",
        "deep.json: JSON nested too deeply to read",
    ),
    Case(
        "deep-jsonl",
        "gold",
        "deep.jsonl",
        b'{"doc_id": "1", "codes": ["401.9"]}\n' + b"[" * 100_000 + b"]" * 100_000 + b"\n",
        "refused",
        "deep.jsonl, line 2: JSON nested too deeply to read",
    ),
    Case(
        "corrupt-parquet",
        "gold",
        "broken.parquet",
        b"PAR1" + b"\x00" * 64 + b"PAR1",
        "refused",
        "broken.parquet: cannot read as Parquet",
    ),
    Case(
        "parents-5",
        "hierarchy",
        "h.json",
        json.dumps({"401.9": {"parents": 5}}).encode(),
        "refused",
        "h.json: entry '401.9': 'parents' must be a list of codes (strings), got 5",
    ),
    Case(
        "parents-null",
        "hierarchy",
        "h.json",
        json.dumps({"401.9": {"parents": None}}).encode(),
        "refused",
        "h.json: entry '401.9': 'parents' must be a list of codes (strings), got null",
    ),
    Case(
        "parents-string",
        "hierarchy",
        "h.json",
        json.dumps({"401.9": {"parents": "AR"}}).encode(),
        "refused",
        "h.json: entry '401.9': 'parents' must be a list of codes (strings), got \"AR\"",
    ),
    Case(
        "parents-conflict",
        "hierarchy",
        "h.json",
        json.dumps({"401.9": {"parents": ["401", "@"]}, "428.0": {"parents": ["401", "X"]}}).encode(),
        "refused",
        "h.json: entry '428.0' puts '401' (level L1) under 'X', but entry '401.9' puts it under '@'",
    ),
    Case(
        "deeper-than-127-levels",
        "hierarchy",
        "deep.csv",
        _deep_chain(300),
        "read",
        gold=("gold.csv", b"doc_id,code\n1,n299\n"),
        run=("run.csv", b"doc_id,code\n1,n298\n"),
    ),
    Case(
        "not-text", "gold", "junk.csv", b"\x00\x01binary junk", "refused", "junk.csv: this is not a text file"
    ),
    # silent loss
    Case(
        "wide-scores-bad-cells",
        "run",
        "scores.csv",
        b"doc_id,401.9,428.0,250.00\n1,0.9,,0.2\n2,1.5,text,0.1\n3,0.3,0.8,-0.2\n",
        "reported",
        "the score is outside [0, 1] or not finite",
    ),
    Case(
        "wide-scores-text-cell",
        "run",
        "scores.csv",
        b"doc_id,401.9,428.0,250.00\n1,0.9,0.1,0.2\n2,0.1,text,0.1\n3,0.3,0.8,0.7\n",
        "reported",
        "the score is not a number",
    ),
    Case(
        "long-scores-out-of-range",
        "run",
        "scores.csv",
        b"doc_id,code,score\n1,401.9,1.5\n2,428.0,-0.2\n3,250.00,1e308\n1,428.0,0.7\n",
        "reported",
        "the score is outside [0, 1]",
    ),
    Case(
        "null-id-parquet",
        "gold",
        "gold.parquet",
        _parquet(pd.DataFrame({"doc_id": ["1", None, "3"], "code": ["401.9", "428.0", "250.00"]})),
        "reported",
        "empty document id",
    ),
    Case(
        "numeric-json-codes",
        "gold",
        "gold.json",
        b'[{"doc_id": "1", "codes": [401.9]}, {"doc_id": "2", "codes": ["428.0"]}, '
        b'{"doc_id": "3", "codes": ["250.00"]}]',
        "reported",
        "a number, not a code",
    ),
    # bounded cost, and a bounded echo of the value
    Case(
        "10000-character-code",
        "gold",
        "long.csv",
        b"doc_id,code\n1,401.9\n2," + b"9" * 10_000 + b"\n2,428.0\n3,250.00\n",
        "reported",
        "longer than 64 characters: not a code",
    ),
    Case(
        "300-character-id",
        "gold",
        "ids.csv",
        b"doc_id,code\n1,401.9\n" + b"d" * 300 + b",428.0\n2,428.0\n3,250.00\n",
        "reported",
        "a document id longer than 256 characters",
    ),
    # wrong reports
    Case(
        "utf16", "gold", "unicode.csv", "doc_id,code\n1,401.9\n2,428.0\n3,250.00\n".encode("utf-16"), "read"
    ),
]
