"""One document, as a clinical coder reads it: codes grouped by family, each marked.

Status words are the coder's:

- *correct*: in the gold standard and written by the model;
- *extra*: written by the model, not in the gold standard;
- *missed*: in the gold standard, not written by the model;
- *wrong code in the right family*: an extra code that took the place of a
  missed gold code of the same family (the ICD category), one pair of
  :func:`cophe_core.breakdown.substitutions.document_substitutions`. :func:`document_review`
  shows such a pair as one row: the written code, ``instead_of`` the gold code.

For a family (a node above the codes: e1, e0, block… in ICD) the status
compares counts: *correct* when the model writes as many codes of the family as
the gold standard holds, otherwise *k extra* or *k missed*: the CoPHE view.

:func:`rank_documents` orders the documents by their errors (extra plus missed
codes) over one or more runs, for a review session; :func:`read_notes` reads an
optional file of note texts, and :func:`highlight_titles` finds the titles of
codes in a note's text.
"""

from __future__ import annotations

import io
import json
import re
from collections.abc import Iterable, Mapping
from pathlib import Path

import numpy as np
import pandas as pd

from ..base.files import InputError, Source, check_width, excerpt, load_bytes, number_too_long, unparsable
from ..metrics import Evaluation, on_shared_documents
from ..ontology import Ontology, family_level
from .substitutions import document_substitutions

__all__ = [
    "document_codes",
    "document_families",
    "document_review",
    "family_level",
    "rank_documents",
    "read_notes",
    "highlight_titles",
    "STATUS",
    "SUBSTITUTED",
    "REVIEW_COLUMNS",
    "RANK_COLUMNS",
]

SUBSTITUTED = "wrong code in the right family"
STATUS = {
    "correct": "in the gold standard and written by the model (true positive)",
    "extra": "written by the model but not in the gold standard (false positive)",
    "missed": "in the gold standard but not written by the model (false negative)",
    SUBSTITUTED: "written by the model instead of a gold code of the same family: one extra and one "
    "missed code, shown as one row (a false positive and a false negative)",
}
REVIEW_COLUMNS = ["family", "family_title", "code", "title", "status", "instead_of", "instead_of_title"]
RANK_COLUMNS = ["doc_id", "gold", "errors", "extra", "missed"]
NOTE_COLUMNS = ("doc_id", "text")


def _row(ev: Evaluation, doc_id: str) -> int:
    hits = np.nonzero(ev.docs == doc_id)[0]
    if not len(hits):
        raise KeyError(f"no document {doc_id!r}")
    return int(hits[0])


def _family_level(o: Ontology) -> int:
    """The index of the family level (:func:`cophe_core.ontology.family_level`)."""
    return o.level_index(family_level(o))


def document_codes(ev: Evaluation, doc_id: str) -> pd.DataFrame:
    """The codes of one document, each with its status.

    Parameters
    ----------
    ev : Evaluation
    doc_id : str

    Returns
    -------
    DataFrame
        ``code, title, level, family, family_title, block, status`` (``correct``,
        ``extra`` or ``missed``), sorted by top-level group (the chapter, in the
        code system's order), then family, then code. The family is the
        code's category (e0) in ICD, or its ancestor one level below the top in
        other hierarchies (a code above that level is its own family); ``block``
        is the level above the family, as ``"code title"``.

    Raises
    ------
    KeyError
        If the document is not in the evaluation.

    Examples
    --------
    >>> from cophe_core import score_files
    >>> gold = b"doc_id,code\\n1,428.21\\n1,401.9\\n"
    >>> pred = b"doc_id,code\\n1,428.22\\n1,401.9\\n"
    >>> document_codes(score_files(gold, {"A": pred}).evaluation("A"), "1")[["code", "family", "status"]]
         code family   status
    0   401.9    401  correct
    1  428.21    428   missed
    2  428.22    428    extra
    """
    r = _row(ev, doc_id)
    o = ev.ontology
    g = ev.gold.indices[ev.gold.indptr[r] : ev.gold.indptr[r + 1]]
    p = ev.pred.indices[ev.pred.indptr[r] : ev.pred.indptr[r + 1]]
    ids = np.union1d(g, p).astype(np.int64)
    fam_level = _family_level(o)
    blk_level = min(fam_level + 1, len(o.levels) - 1)
    # a code above the family level is its own family
    fam = np.where(o.ancestors[ids, fam_level] >= 0, o.ancestors[ids, fam_level], ids)
    block = np.where(o.ancestors[ids, blk_level] >= 0, o.ancestors[ids, blk_level], fam)
    in_g, in_p = np.isin(ids, g), np.isin(ids, p)
    status = np.where(in_g & in_p, "correct", np.where(in_p, "extra", "missed")).astype(object)
    df = pd.DataFrame(
        {
            "code": o.keys[ids].astype(str),
            "title": o.titles[ids].astype(str),
            "level": np.asarray(o.levels, dtype=object)[o.level[ids]],
            "family": o.keys[fam].astype(str),
            "family_title": o.titles[fam].astype(str),
            "block": pd.Series(o.keys[block].astype(str), dtype=object) + " " + o.titles[block].astype(str),
            "status": status,
        }
    )
    # in the code system's order: by top-level group (its node order is the tabular list's: diagnoses,
    # V codes, E codes, procedures), then family, then code
    top = np.where(o.ancestors[ids, -1] >= 0, o.ancestors[ids, -1], ids)
    return df.assign(_top=top).sort_values(["_top", "family", "code"], ignore_index=True).drop(columns="_top")


def document_review(ev: Evaluation, doc_id: str) -> pd.DataFrame:
    """The codes of one document for a review: a substitution pair is one row.

    Like :func:`document_codes`, but each "right family, wrong code" pair of
    :func:`cophe_core.breakdown.substitutions.document_substitutions` (a missed gold code
    and an extra written code of the same family) becomes one row: the written
    code, with status ``"wrong code in the right family"`` and the gold code it
    took the place of in ``instead_of``. The statuses of a document's rows are
    therefore disjoint: every extra and missed code is counted once, in a pair
    or alone.

    Parameters
    ----------
    ev : Evaluation
    doc_id : str

    Returns
    -------
    DataFrame
        :data:`REVIEW_COLUMNS`: ``family, family_title, code, title, status,
        instead_of, instead_of_title`` (the last two empty strings but for
        pairs), in the order of :func:`document_codes`.

    Raises
    ------
    KeyError
        If the document is not in the evaluation.

    Examples
    --------
    >>> from cophe_core import score_files
    >>> gold = b"doc_id,code\\n1,428.21\\n1,401.9\\n1,250.00\\n"
    >>> pred = b"doc_id,code\\n1,428.22\\n1,401.9\\n1,493.90\\n"
    >>> t = document_review(score_files(gold, {"A": pred}).evaluation("A"), "1")
    >>> t[["family", "code", "instead_of", "status"]]
      family    code instead_of                          status
    0    250  250.00                                     missed
    1    401   401.9                                    correct
    2    428  428.22     428.21  wrong code in the right family
    3    493  493.90                                      extra
    """
    codes = document_codes(ev, doc_id)
    o = ev.ontology
    pairs = document_substitutions(ev, doc_id, level=o.levels[_family_level(o)])
    out = codes[~codes.code.isin(pairs.gold_code)].copy()
    gold_of = dict(zip(pairs.written_code, zip(pairs.gold_code, pairs.gold_title)))
    paired = out.code.isin(pairs.written_code)
    out["status"] = out.status.where(~paired, SUBSTITUTED)
    out["instead_of"] = out.code.map(lambda c: gold_of[c][0] if c in gold_of else "")
    out["instead_of_title"] = out.code.map(lambda c: gold_of[c][1] if c in gold_of else "")
    return out[REVIEW_COLUMNS].reset_index(drop=True)


def document_families(ev: Evaluation, doc_id: str) -> pd.DataFrame:
    """The families of one document at each evaluated level above the codes.

    Parameters
    ----------
    ev : Evaluation
    doc_id : str

    Returns
    -------
    DataFrame
        ``level, code, title, gold, predicted, status``: the numbers of the
        document's gold and written codes in the family, and ``correct`` when
        they agree, else ``k extra`` or ``k missed``. Bottom-up by level, then
        by code.

    Raises
    ------
    KeyError
        If the document is not in the evaluation.

    Examples
    --------
    >>> from cophe_core import score_files
    >>> gold = b"doc_id,code\\n1,428.21\\n"
    >>> pred = b"doc_id,code\\n1,428.22\\n1,428.1\\n"
    >>> ev = score_files(gold, {"A": pred}).evaluation("A", max_level="e0")
    >>> document_families(ev, "1")[["level", "code", "gold", "predicted", "status"]]
      level   code  gold  predicted   status
    0    e1  428.1     0          1  1 extra
    1    e1  428.2     1          1  correct
    2    e0    428     1          2  1 extra
    """
    r = _row(ev, doc_id)
    o = ev.ontology
    x, y = ev.X.getrow(r).tocoo(), ev.Y.getrow(r).tocoo()
    counts = pd.DataFrame(
        {
            "node": np.concatenate([x.col, y.col]),
            "predicted": np.concatenate([x.data, np.zeros_like(y.data)]),
            "gold": np.concatenate([np.zeros_like(x.data), y.data]),
        }
    )
    counts = counts.groupby("node", as_index=False).sum()
    nodes = counts.node.to_numpy()
    counts["level"] = np.asarray(o.levels, dtype=object)[o.level[nodes]]
    counts = counts[counts.level != o.levels[0]]
    nodes = counts.node.to_numpy()
    counts["code"] = o.keys[nodes].astype(str)
    counts["title"] = o.titles[nodes].astype(str)
    d = counts.predicted - counts.gold
    counts["status"] = np.where(
        d == 0, "correct", np.where(d > 0, d.astype(str) + " extra", (-d).astype(str) + " missed")
    )
    order = {lv: i for i, lv in enumerate(o.levels)}
    counts = counts.sort_values(["level", "code"], key=lambda s: s.map(order) if s.name == "level" else s)
    return counts[["level", "code", "title", "gold", "predicted", "status"]].reset_index(drop=True)


def _row_counts(ev: Evaluation) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """Per document of ``ev``: gold codes, extra codes, missed codes, written codes."""
    gold = np.asarray(ev.gold.sum(axis=1), dtype=np.int64).ravel()
    pred = np.asarray(ev.pred.sum(axis=1), dtype=np.int64).ravel()
    both = np.asarray(ev.gold.multiply(ev.pred).sum(axis=1), dtype=np.int64).ravel()
    return gold, pred - both, gold - both, pred


def rank_documents(evaluations: Mapping[str, Evaluation]) -> pd.DataFrame:
    """The documents ranked by their errors over one or more runs, most first.

    Parameters
    ----------
    evaluations : dict of run name → Evaluation
        The runs to count; the documents are the union of theirs (each run is
        evaluated on the gold standard's documents and its own; a document a run
        lacks adds no error from that run).

    Returns
    -------
    DataFrame
        :data:`RANK_COLUMNS`, one row per document: ``doc_id``, ``gold`` (the
        document's gold codes), ``extra`` and ``missed`` (its extra and missed
        exact codes, summed over the runs) and ``errors`` = extra + missed.
        Sorted by ``errors`` descending, then the documents with no gold code
        and no written code in any run last, then in the order of the first
        evaluation's ``docs``.

    Raises
    ------
    ValueError
        If no evaluation is given.

    Examples
    --------
    >>> from cophe_core import score_files
    >>> gold = b"doc_id,code\\n1,401.9\\n2,428.0\\n2,250.00\\n3,486\\n4,\\n"
    >>> s = score_files(gold, {"A": b"doc_id,code\\n1,401.9\\n2,428.1\\n3,486\\n",
    ...                        "B": b"doc_id,code\\n1,401.1\\n2,428.0\\n3,486\\n"})
    >>> rank_documents({"A": s.evaluation("A"), "B": s.evaluation("B")})
      doc_id  gold  errors  extra  missed
    0      2     2       4      1       3
    1      1     1       2      1       1
    2      3     1       0      0       0
    3      4     0       0      0       0
    """
    if not evaluations:
        raise ValueError("rank_documents needs at least one evaluation")
    evs = list(evaluations.values())
    if len({len(ev.docs) for ev in evs}) > 1 or any(not np.array_equal(ev.docs, evs[0].docs) for ev in evs):
        evs = list(on_shared_documents({str(i): ev for i, ev in enumerate(evs)}).values())
    docs = np.asarray(evs[0].docs).astype(str)
    n = len(docs)
    gold = _row_counts(evs[0])[0]
    extra, missed, written = np.zeros(n, np.int64), np.zeros(n, np.int64), np.zeros(n, np.int64)
    for ev in evs:  # one step per run, never per document
        counts = _row_counts(ev)[1:]
        own = np.asarray(ev.docs).astype(str)
        if len(own) != n or not np.array_equal(own, docs):  # align on the first evaluation's documents
            counts = tuple(
                pd.Series(c, index=own).reindex(docs, fill_value=0).to_numpy(np.int64) for c in counts
            )
        extra += counts[0]
        missed += counts[1]
        written += counts[2]
    errors = extra + missed
    empty = (gold == 0) & (written == 0)
    order = np.lexsort((np.arange(n), empty, -errors))
    out = pd.DataFrame(
        {"doc_id": docs.astype(object), "gold": gold, "errors": errors, "extra": extra, "missed": missed}
    )
    return out.iloc[order].reset_index(drop=True)


def _note_format(name: str, text: str) -> str:
    suffix = Path(name).suffix.lower()
    if suffix in (".jsonl", ".ndjson", ".json"):
        return "jsonl"
    if suffix in (".tsv", ".tab"):
        return "tsv"
    if suffix == ".csv":
        return "csv"
    first = text.lstrip().split("\n", 1)[0]
    return "jsonl" if first.startswith("{") else "tsv" if "\t" in first else "csv"


MAX_NOTE_COLUMNS = 1_000  # a notes table's header has doc_id, text and a few others

_NEEDS = (
    "A notes file needs the columns doc_id and text (CSV or TSV), or one JSON object per line with "
    'the fields "doc_id" and "text" (JSONL).'
)


def _too_deep(lines: np.ndarray, kept: np.ndarray) -> int:
    """The file's line number of the first of ``lines[kept]`` that JSON cannot parse without recursing too deep
    (on the way to an error only)."""
    for i in kept:
        try:
            json.loads(lines[i])
        except RecursionError:
            return int(i) + 1
        except ValueError:
            continue
    return int(kept[0]) + 1  # the lines parse one by one, so the whole array was too deep


def _notes_table(name: str, text: str) -> pd.DataFrame:
    """The notes file as a frame with ``doc_id`` and ``text`` (cells as read)."""
    fmt = _note_format(name, text)
    if fmt == "jsonl":
        lines = np.array(text.split("\n"), dtype=object)
        kept = np.flatnonzero([bool(line.strip()) for line in lines])
        try:  # the lines as one JSON array: one parse, and the error's line maps back to the file
            records = json.loads("[\n" + ",\n".join(lines[kept]) + "\n]")
        except json.JSONDecodeError as e:
            at = int(kept[min(max(e.lineno - 2, 0), len(kept) - 1)]) + 1
            raise InputError(
                f"{name}, line {at}: not one JSON object ({e.msg}). Each line must hold one "
                f'object, such as {{"doc_id": "1", "text": "…"}}.'
            ) from None
        except ValueError:  # a number longer than Python reads: 4,300 digits
            raise number_too_long(text, name) from None
        except (
            RecursionError
        ):  # nested deeper than Python's parser goes: found again line by line, to name it
            raise InputError(
                f"{name}, line {_too_deep(lines, kept)}: JSON nested too deeply to read. Each line must hold one "
                f'object, such as {{"doc_id": "1", "text": "…"}}.'
            ) from None
        bad = [i for i, rec in enumerate(records) if not isinstance(rec, dict)]
        if bad:
            raise InputError(f"{name}, line {int(kept[bad[0]]) + 1}: not a JSON object. {_NEEDS}")
        for col in NOTE_COLUMNS:
            absent = [
                i for i, rec in enumerate(records) if col not in rec or (col == "doc_id" and rec[col] is None)
            ]
            if absent:
                raise InputError(f'{name}, line {int(kept[absent[0]]) + 1}: no field "{col}". {_NEEDS}')
        table = pd.DataFrame.from_records(records, columns=list(NOTE_COLUMNS))
        return table
    sep = "\t" if fmt == "tsv" else ","
    check_width(text, name, sep, limit=MAX_NOTE_COLUMNS)  # a header of millions of fields: not parsed
    try:
        table = pd.read_csv(io.StringIO(text), sep=sep, dtype=str, keep_default_na=False)
    except pd.errors.ParserError:
        raise unparsable(text, name, sep) from None
    table.columns = [str(c).strip().lower() for c in table.columns]
    for col in NOTE_COLUMNS:
        if col not in table:
            found = excerpt(", ".join(map(str, table.columns[:20])), 200) or "none"  # not a whole file
            raise InputError(f"{name}, line 1 (the header): no column {col} (found: {found}). {_NEEDS}")
    return table


def read_notes(source: Source, *, name: str | None = None) -> dict[str, str]:
    """Read a notes file: the text of each document, for reading beside its codes.

    Parameters
    ----------
    source : path, bytes or binary stream
        CSV or TSV with the columns ``doc_id`` and ``text`` (other columns are
        ignored), or JSONL, one ``{"doc_id": …, "text": …}`` object per line.
        The format comes from the file name (``.csv``, ``.tsv``, ``.jsonl``),
        else from the content. UTF-8 text.
    name : str, optional
        The file name for messages (default: the path's or stream's name).

    Returns
    -------
    dict of str → str
        Document id → its text. The texts of a document given on several rows
        are joined by a blank line, in file order.

    Raises
    ------
    InputError
        If the file is empty, is not UTF-8 text, cannot be parsed, or lacks a
        column (or, in JSONL, a line lacks a field); the message names the file
        and the line and says what the file needs.

    Examples
    --------
    >>> read_notes(b"doc_id,text\\n1,Chest pain.\\n2,Fever.\\n1,Hypertension.\\n", name="notes.csv")
    {'1': 'Chest pain.\\n\\nHypertension.', '2': 'Fever.'}
    >>> read_notes(b'{"doc_id": 7, "text": "Sepsis"}\\n', name="notes.jsonl")
    {'7': 'Sepsis'}
    >>> read_notes(b"doc_id,note\\n1,Fever.\\n", name="notes.csv")
    Traceback (most recent call last):
    cophe_core.base.files.InputError: notes.csv, line 1 (the header): no column text (found: doc_id, note). ...
    """
    data, label = load_bytes(source, name)
    try:
        text = data.decode("utf-8-sig")
    except UnicodeDecodeError as e:
        line = data[: e.start].count(b"\n") + 1
        raise InputError(
            f"{label}, line {line}: is not UTF-8 text (byte {data[e.start]:#04x}); "
            "save it as UTF-8 and upload it again."
        ) from None
    text = text.replace("\r\n", "\n").replace("\r", "\n")
    if not text.strip():
        raise InputError(f"{label}: the file is empty. {_NEEDS}")
    table = _notes_table(label, text)
    if table.empty:
        raise InputError(f"{label}: has a header but no notes; add one line per document. {_NEEDS}")
    table = table.assign(  # a JSON string may hold "\r": every line end read as one "\n"
        doc_id=table.doc_id.astype(str).str.strip(),
        text=table.text.where(table.text.notna(), "").astype(str).str.replace(r"\r\n?", "\n", regex=True),
    )
    table = table[table.doc_id != ""]
    if table.empty:
        raise InputError(f"{label}: every doc_id is empty; give each note the id of its document. {_NEEDS}")
    joined = table.groupby("doc_id", sort=False).text.agg("\n\n".join)
    return dict(zip(joined.index.astype(str), joined.to_numpy(dtype=str).tolist()))


def _head(title: str) -> str | None:
    """The part of a title before its first comma, for a title of more than three words."""
    if len(title.split()) <= 3 or "," not in title:
        return None
    head = title.split(",", 1)[0].strip()
    return head or None


def highlight_titles(text: str, titles: Iterable[str], *, heads: bool = True) -> list[tuple[int, int, str]]:
    """Where code titles occur in a text: spans to highlight.

    Parameters
    ----------
    text : str
    titles : iterable of str
        Code titles, searched for as whole words (not inside a longer word),
        case-insensitively, with any run of white space in the text matching a
        space of the title. Every character of a title is literal:
        ``"(", "+", "."`` are not patterns.
    heads : bool
        Also search for the part of each title before its first comma, when the
        title is longer than three words ("Congestive heart failure" for
        "Congestive heart failure, unspecified").

    Returns
    -------
    list of (start, end, title)
        Non-overlapping spans of ``text``, in order; ``title`` is the title
        found (or whose first part was found). Where titles overlap, the one
        that starts first wins, and of those starting at the same place the
        longest.

    Examples
    --------
    >>> note = "Known HYPERTENSION; congestive heart failure (CHF+) treated."
    >>> highlight_titles(note, ["Hypertension", "Heart failure", "Congestive heart failure", "CHF+"])
    [(6, 18, 'Hypertension'), (20, 44, 'Congestive heart failure'), (46, 50, 'CHF+')]
    >>> highlight_titles("History of congestive  heart failure.", ["Congestive heart failure, unspecified"])
    [(11, 36, 'Congestive heart failure, unspecified')]
    """
    phrases: dict[str, str] = {}  # phrase (case-folded) → title, the first title given wins
    for title in titles:
        title = str(title).strip()
        for phrase in (title, _head(title) if heads else None):
            if phrase and phrase.casefold() not in phrases:
                phrases[phrase.casefold()] = title
    if not phrases or not text:
        return []
    ordered = sorted(phrases, key=lambda p: (-len(p), p))
    # one group per phrase, longest first; a space of a phrase matches any white space
    alternatives = "|".join("(" + r"\s+".join(map(re.escape, p.split())) + ")" for p in ordered)
    found = re.compile(r"(?<!\w)(?:" + alternatives + r")(?!\w)", re.IGNORECASE)
    return [(m.start(), m.end(), phrases[ordered[(m.lastindex or 1) - 1]]) for m in found.finditer(text)]
