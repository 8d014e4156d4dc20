"""Slices: scores on part of the data, as masks applied to the scored matrices (nothing is read again).

A **slice** is a boolean mask over the documents (a *document slice*) or over the ontology's nodes, which
are the label columns of ``gold`` and ``pred`` (a *code slice*). :func:`restrict` applies it to an
:class:`~cophe_core.metrics.Evaluation` and returns another, so every table and score works on a slice.

- A **document slice** keeps its documents' rows. Every count (flat, set-based, CoPHE, at every level) is a
  sum over documents, so the counts of document slices that partition the documents add up to the whole,
  for every measure and level.
- A **code slice** keeps every document and only the slice's codes: ``gold`` and ``pred`` lose the codes
  of the other label columns (``gold @ diag(mask)``) before the ancestor closure. At every level a node's
  x (predicted) and y (gold) then count only the slice's codes at or below it, and a node with none of them
  counts nothing: a category's TP is min(x, y) over the slice's codes in that category.

  Flat counts are sums over codes, so they add up over a partition of the codes, and so do the counts at
  the bottom level, where a node is one code. Above it they need not: for CoPHE
  min(x₁ + x₂, y₁ + y₂) ≠ min(x₁, y₁) + min(x₂, y₂), and for set-based 1[x₁ + x₂ > 0] ≠ 1[x₁ > 0] + 1[x₂ > 0].
  Gold {401.9} and predicted {401.1} give category 401 a true positive; split into the slices {401.9} and
  {401.1}, category 401 has a false negative in one and a false positive in the other. (Counts at a node do
  add up over a partition that puts all the codes at or below that node in one slice.)

Slices are built from:

- the **frequency of each code** (:func:`code_frequency_slices`): how many documents of the gold standard,
  or of a training-label file (:func:`training_frequency`, as papers define rare codes), hold it, binned by
  edges such as 10 and 100 (rare < 10, medium, frequent ≥ 100);
- the **number of gold codes** of each document (:func:`gold_count_slices`), in quantile bins;
- any column of a **metadata** table (:func:`read_metadata`, :func:`metadata_slices`: ``doc_id`` and columns
  such as length, admission type, year): numbers in quantile bins, text by value.

Every family of slices built here partitions what it slices (the documents, or the codes in play), with a
slice for what has no value ("No value", "No gold code") when there is any. :func:`slice_scores` scores
each run on each slice, with bootstrap intervals.
"""

from __future__ import annotations

import hashlib
import io
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

import numpy as np
import pandas as pd
import scipy.sparse as sp
from numpy.typing import NDArray

from ..base.files import MAX_EDGES, MB, InputError, binary_as_text, parse_delimited, sniff_separator
from ..inputs.readers import DOC_COLUMNS as LABEL_DOC_COLUMNS
from ..inputs.readers import RawLabels
from ..metrics import Evaluation, NodeCounts, evaluate
from ..scoring.labels import Corpus, NothingScorable, encode
from .stats import bootstrap

__all__ = [
    "Slice",
    "restrict",
    "codes_in_play",
    "code_frequency",
    "code_frequency_slices",
    "parse_edges",
    "MAX_EDGES",
    "counted_frequency",
    "training_frequency",
    "TrainingFrequency",
    "gold_count_slices",
    "read_metadata",
    "metadata_columns",
    "metadata_slices",
    "slice_scores",
    "slice_rows",
    "DOC_COLUMNS",
]

# Recognised document id columns of a metadata table, in order of preference (any case): those of the
# label readers, and "document".
DOC_COLUMNS: tuple[str, ...] = tuple(dict.fromkeys(("doc_id", "hadm_id", "document", *LABEL_DOC_COLUMNS)))
MAX_METADATA_ROWS = 10_000_000
MAX_METADATA_BYTES = 200 * MB
GOLD_SOURCE = "the gold standard"
_NAME_CHARS = 60  # a category's value is cut to this length in a slice name


@dataclass(frozen=True, eq=False)
class Slice:
    """Part of the data: a boolean ``mask`` over the documents (``kind="documents"``) or over the ontology's
    nodes, that is the label columns (``kind="codes"``).

    ``key`` identifies it in a URL or a saved analysis ("codes:freq:10,100:0"), ``dimension`` says what was
    sliced ("Code frequency in the gold standard"), ``name`` which part ("Rare: fewer than 10 documents"),
    ``size`` how many documents or codes it holds, ``members`` who they are, as words ("the codes seen in
    fewer than 10 documents of the gold standard"), and ``note`` anything else worth saying. The mask is
    copied and read-only.
    """

    key: str
    dimension: str
    name: str
    kind: Literal["documents", "codes"]
    mask: np.ndarray
    size: int
    note: str = ""
    members: str = ""

    def __post_init__(self) -> None:
        if self.kind not in ("documents", "codes"):
            raise ValueError(f"slice {self.name!r}: kind {self.kind!r}; use 'documents' or 'codes'")
        mask = np.asarray(self.mask)
        if mask.ndim != 1 or mask.dtype != np.bool_:
            raise ValueError(
                f"slice {self.name!r}: the mask must be a 1-D boolean array, not {mask.dtype} of "
                f"shape {mask.shape}"
            )
        mask = mask.copy()
        mask.setflags(write=False)
        object.__setattr__(self, "mask", mask)

    def describe(self) -> str:
        """The slice in one sentence.

        >>> Slice("codes:freq:10,100:0", "Code frequency in the gold standard", "Rare: fewer than 10 documents",
        ...       "codes", np.array([True, True, False]), 2,
        ...       members="the codes seen in fewer than 10 documents of the gold standard").describe()
        'Only the codes seen in fewer than 10 documents of the gold standard (2 codes), in every document.'
        >>> Slice("d", "Documents", "first", "documents", np.array([True, False]), 1).describe()
        'Only the 1 document of this slice.'
        """
        unit = "code" if self.kind == "codes" else "document"
        count = f"{self.size:,} {unit}{'s' if self.size != 1 else ''}"
        head = f"Only {self.members} ({count})" if self.members else f"Only the {count} of this slice"
        what = f"{head}, in every document." if self.kind == "codes" else f"{head}."
        return f"{what} {self.note}".strip()

    @property
    def fingerprint(self) -> str:
        """16 hex digits of the SHA-256 of the kind and the mask: two slices with the same fingerprint select
        the same data (the ``key`` names a slice within one family; a cache should use this).

        >>> a = Slice("a", "T", "a", "documents", np.array([True, False]), 1)
        >>> b = Slice("b", "T", "b", "documents", np.array([True, False]), 1)
        >>> a.fingerprint == b.fingerprint, len(a.fingerprint)
        (True, 16)
        """
        h = hashlib.sha256(f"{self.kind}:{len(self.mask)}:".encode())
        h.update(np.packbits(self.mask).tobytes())
        return h.hexdigest()[:16]


def restrict(ev: Evaluation, s: Slice | None) -> Evaluation:
    """``ev`` on the slice ``s`` (``None``: ``ev`` itself), as a new :class:`~cophe_core.metrics.Evaluation`.

    A document slice keeps the rows of its documents (``gold``, ``pred`` and ``docs``); a code slice keeps
    every document and removes the label columns outside the mask from ``gold`` and ``pred`` (the same shape,
    ``m @ diag(mask)``), so that at every level a node counts only the slice's codes below it. A document mask
    may be over the evaluation's documents or over its corpus's (a run evaluated on its own rows of them,
    :meth:`~cophe_core.scoring.labels.Corpus.run_rows`); a mask of another length is a ``ValueError``.

    >>> from cophe_core import score_files
    >>> s = score_files(b"doc_id,code\\n1,401.9\\n2,428.0\\n", {"A": b"doc_id,code\\n1,401.9\\n2,428.1\\n"})
    >>> ev = s.evaluation("A")
    >>> first = Slice("d", "Documents", "first", "documents", np.array([True, False]), 1)
    >>> restrict(ev, first).score("flat").f1, restrict(ev, first).docs.tolist()
    (1.0, ['1'])
    >>> mask = np.zeros(ev.ontology.n_nodes, dtype=bool)
    >>> mask[[ev.ontology.codes["428.0"], ev.ontology.codes["428.1"]]] = True
    >>> sub = restrict(ev, Slice("c", "Codes", "428", "codes", mask, 2))
    >>> sub.score("flat").tp, sub.score("cophe", "e0").tp, len(sub.docs)
    (0, 1, 2)
    """
    if s is None:
        return ev
    if s.kind == "documents":
        mask, own = s.mask, ev.corpus_mask
        if len(mask) != len(ev.docs) and own is not None and len(mask) == len(own):
            mask = mask[own]  # a mask over the corpus's documents, read on the run's own
        if len(mask) != len(ev.docs):
            raise ValueError(
                f"slice {s.name!r}: a mask of {len(s.mask):,} documents for an evaluation of "
                f"{len(ev.docs):,} documents"
            )
        keep = np.flatnonzero(mask)
        return evaluate(ev.gold[keep], ev.pred[keep], ev.ontology, docs=ev.docs[keep], max_level=ev.max_level)
    if len(s.mask) != ev.ontology.n_nodes:
        raise ValueError(
            f"slice {s.name!r}: a mask of {len(s.mask):,} codes for an ontology of "
            f"{ev.ontology.n_nodes:,} nodes (label columns)"
        )
    return ev.on_codes(s.mask)


def _binary(m: sp.spmatrix) -> sp.csr_matrix:
    """A canonical copy of ``m``: duplicates summed, zeros removed."""
    out = sp.csr_matrix(m, copy=True)
    out.sum_duplicates()
    out.eliminate_zeros()
    return out


def codes_in_play(*labels: sp.spmatrix) -> np.ndarray:
    """The label columns that hold a code in any of the matrices (the gold standard and the runs).

    >>> codes_in_play(sp.csr_matrix(np.array([[1, 0, 0]])), sp.csr_matrix(np.array([[0, 0, 1]]))).tolist()
    [True, False, True]
    """
    if not labels:
        raise ValueError("give the gold standard and the runs")
    used = np.zeros(labels[0].shape[1], dtype=bool)
    for m in labels:
        used[_binary(m).indices] = True
    return used


def code_frequency(labels: sp.spmatrix) -> np.ndarray:
    """Documents per label column: how many documents (rows) of ``labels`` hold each code.

    >>> code_frequency(sp.csr_matrix(np.array([[1, 0, 1], [1, 0, 0]]))).tolist()
    [2, 0, 1]
    """
    m = _binary(labels)
    return np.bincount(m.indices, minlength=m.shape[1]).astype(np.int64)


def _check_edges(edges: Iterable[int] | int) -> tuple[int, ...]:
    """Bin edges as increasing positive whole numbers, at most :data:`MAX_EDGES` of them; anything else is a
    ``ValueError``."""
    given = [edges] if isinstance(edges, (int, np.integer)) else edges
    problem = ValueError(
        f"bin edges {_excerpt(edges)}: give one or more increasing positive whole numbers of documents, "
        "such as 10, 100"
    )
    try:
        items = list(given)
    except TypeError:
        raise problem from None
    if len(items) > MAX_EDGES:
        raise ValueError(
            f"bin edges: {len(items):,} given, at most {MAX_EDGES} can be used ({MAX_EDGES + 1} bins); "
            "give fewer, such as 10, 100"
        )
    try:
        values = [float(e) for e in items]
    except (TypeError, ValueError):
        raise problem from None
    if not values or any(isinstance(e, (bool, np.bool_, str, bytes)) for e in items):
        raise problem
    if any(not v.is_integer() or v <= 0 for v in values) or any(b <= a for a, b in zip(values, values[1:])):
        raise problem
    return tuple(int(v) for v in values)


def _excerpt(edges: object) -> str:
    """The edges as given, cut short: a message never echoes a long list whole."""
    text = repr(edges)
    return text if len(text) <= 60 else f"{text[:57]}..."


def parse_edges(text: str) -> tuple[int, ...]:
    """Bin edges typed as text, such as ``"10, 100"`` (commas or semicolons between whole numbers of
    documents): increasing, positive, at most :data:`MAX_EDGES` of them; anything else is an
    :class:`~cophe_core.base.files.InputError` saying what to type.

    >>> parse_edges("10, 100")
    (10, 100)
    >>> parse_edges(", ".join(map(str, range(1, 30))))
    Traceback (most recent call last):
    cophe_core.base.files.InputError: bin edges: 29 given, at most 20 can be used (21 bins); give fewer, such as 10, 100
    """
    if not isinstance(text, str):
        raise InputError(
            f"bin edges {_excerpt(text)}: type whole numbers separated by commas, such as 10, 100"
        )
    parts = [p.strip() for p in text.replace(";", ",").split(",") if p.strip()]
    if len(parts) > MAX_EDGES:  # before any number is read: a long list costs nothing
        raise InputError(
            f"bin edges: {len(parts):,} given, at most {MAX_EDGES} can be used ({MAX_EDGES + 1} bins); "
            "give fewer, such as 10, 100"
        )
    try:
        edges = tuple(int(p) for p in parts)
    except ValueError:
        raise InputError(
            f"bin edges {_excerpt(text)}: type whole numbers of documents separated by commas, such as 10, 100"
        ) from None
    try:
        return _check_edges(edges)
    except ValueError:
        raise InputError(
            f"bin edges {_excerpt(text)}: give increasing positive numbers, such as 10, 100"
        ) from None


def _documents(n: int) -> str:
    return f"{n:,} document{'s' if n != 1 else ''}"


def _bin_ranges(edges: tuple[int, ...]) -> list[str]:
    """The bins [0, e₁), [e₁, e₂), …, [e_N, ∞) of document counts, as words."""
    out = [f"fewer than {_documents(edges[0])}"]
    for lo, hi in zip(edges, edges[1:]):
        out.append(_documents(lo) if hi - 1 == lo else f"{lo:,} to {hi - 1:,} documents")
    out.append(f"{_documents(edges[-1])} or more")
    return out


def _slug(text: str) -> str:
    words = re.sub(r"[^a-z0-9]+", "-", text.lower()).strip("-")
    return words.removeprefix("the-") or "source"


def code_frequency_slices(
    frequency: np.ndarray,
    edges: Iterable[int] | int = (10, 100),
    *,
    in_play: np.ndarray | None = None,
    source: str = GOLD_SOURCE,
) -> list[Slice]:
    """Code slices by frequency: the codes in play binned by the number of documents of ``source`` that hold
    them (``frequency``, per label column: :func:`code_frequency` or :func:`training_frequency`).

    N edges make N + 1 bins: [0, e₁), [e₁, e₂), …, [e_N, ∞); the edges must be increasing positive whole
    numbers (else ``ValueError``). The masks cover only the codes in play, ``in_play`` (use
    :func:`codes_in_play` on the gold standard and the runs; default: the codes with a frequency), so that
    they partition them. A code in play that ``source`` never holds (with the gold standard, one that is
    only predicted) has frequency 0: it is in the first bin, and that slice's note says how many there are.
    Keys are ``codes:freq:EDGES:BIN`` for the gold standard and ``codes:freq-SOURCE:EDGES:BIN`` otherwise.

    >>> s = code_frequency_slices(np.array([0, 3, 12, 150, 0]), (10, 100), in_play=np.array([1, 1, 1, 1, 0], bool))
    >>> [(x.name, x.size) for x in s]
    [('Rare: fewer than 10 documents', 2), ('Medium: 10 to 99 documents', 1), ('Frequent: 100 documents or more', 1)]
    >>> s[0].key, s[0].describe()  # doctest: +NORMALIZE_WHITESPACE
    ('codes:freq:10,100:0', 'Only the codes seen in fewer than 10 documents of the gold standard (2 codes), in
    every document. It includes 1 code that never occurs in the gold standard (predicted only).')
    """
    cut = _check_edges(edges)
    given = np.asarray(frequency)
    try:
        as_float = given.astype(float)
    except (TypeError, ValueError):
        as_float = np.array([np.nan])
    if given.ndim != 1 or not np.all(np.isfinite(as_float) & (as_float >= 0) & (np.mod(as_float, 1) == 0)):
        raise ValueError(
            f"frequency must be a 1-D array of whole numbers of documents, not {given.dtype} of "
            f"shape {given.shape}"
        )
    freq = as_float.astype(np.int64)
    used = freq > 0 if in_play is None else np.asarray(in_play, dtype=bool)
    if used.shape != freq.shape:
        raise ValueError(f"in_play has {used.shape[0]:,} label columns for {freq.shape[0]:,} frequencies")
    which = np.searchsorted(np.asarray(cut), freq, side="right")  # 0 below e₁, …, N from e_N up
    unseen = int((used & (freq == 0)).sum())
    words = (
        ["Rare", "Frequent"]
        if len(cut) == 1
        else ["Rare", "Medium", "Frequent"]
        if len(cut) == 2
        else [f"Bin {i + 1}" for i in range(len(cut) + 1)]
    )
    dimension = f"Code frequency in {source}"
    family = "freq" if source == GOLD_SOURCE else f"freq-{_slug(source)}"
    out = []
    for i, (word, span) in enumerate(zip(words, _bin_ranges(cut))):
        mask = used & (which == i)
        note = ""
        if i == 0 and unseen:
            note = (
                f"It includes {unseen:,} code{' that never occurs' if unseen == 1 else 's that never occur'} "
                f"in {source}{' (predicted only)' if source == GOLD_SOURCE else ''}."
            )
        out.append(
            Slice(
                f"codes:{family}:{','.join(map(str, cut))}:{i}",
                dimension,
                f"{word}: {span}",
                "codes",
                mask,
                int(mask.sum()),
                note,
                members=f"the codes seen in {span} of {source}",
            )
        )
    return out


def counted_frequency(counts: NodeCounts) -> tuple[np.ndarray, np.ndarray]:
    """The gold standard's :func:`code_frequency` and the :func:`codes_in_play`, from an evaluation's summed
    per-node counts (no matrices): a node's flat counts compare its own label column, so the documents whose
    gold holds the code are its flat TP + FN, and those predicting it its flat TP + FP.

    >>> from cophe_core import score_files
    >>> s = score_files(b"doc_id,code\\n1,401.9\\n2,401.9\\n", {"A": b"doc_id,code\\n1,428.0\\n"})
    >>> ev = s.evaluation("A")
    >>> freq, in_play = counted_frequency(ev.node_counts)
    >>> bool((freq == code_frequency(ev.gold)).all()), bool((in_play == codes_in_play(ev.gold, ev.pred)).all())
    (True, True)
    """
    c = counts
    frequency = (c.flat_tp + c.flat_fn).astype(np.int64)
    return frequency, (frequency > 0) | (c.flat_fp > 0)


@dataclass(frozen=True, eq=False)
class TrainingFrequency:
    """What :func:`training_frequency` counted.

    ``frequency``: documents of the training labels per label column of the corpus; ``documents``: the
    training documents; ``unknown_codes``: the distinct training codes that are no label column of the
    corpus (not a code of its ontology, or not readable as one), not counted; ``examples``: a few of them;
    ``needs_system``: some were rejected only because their undotted ICD-9 codes need the system (pass
    ``system="diagnosis"`` or ``"procedure"``).
    """

    frequency: np.ndarray
    documents: int
    unknown_codes: int
    examples: tuple[str, ...] = ()
    needs_system: bool = False

    def describe(self, name: str = "the training labels") -> str:
        """The count in words, for a message.

        >>> TrainingFrequency(np.zeros(3, np.int64), 2, 1, ("XYZ",)).describe("train.csv")
        'train.csv: 2 documents; 1 code is not a code of the evaluated data and was not counted (e.g. XYZ).'
        """
        head = f"{name}: {_documents(self.documents)}"
        if not self.unknown_codes:
            return f"{head}; every code is a code of the evaluated data."
        verb = (
            "is not a code of the evaluated data and was"
            if self.unknown_codes == 1
            else "are not codes of the evaluated data and were"
        )
        eg = f" (e.g. {', '.join(self.examples)})" if self.examples else ""
        hint = " Undotted ICD-9 codes need the system: diagnosis or procedure." if self.needs_system else ""
        return f"{head}; {self.unknown_codes:,} code{'s' if self.unknown_codes != 1 else ''} {verb} not counted{eg}.{hint}"


def training_frequency(raw: RawLabels, corpus: Corpus, *, system: str = "auto") -> TrainingFrequency:
    """How many documents of a training-label file hold each label column of ``corpus``.

    Each distinct training code is read as :func:`cophe_core.scoring.labels.encode` reads the gold standard's (so
    ``401.9`` and, with ``system="diagnosis"``, MIMIC's ``4019`` are the same code). A code that is no label
    column of the corpus (unknown to its ontology, or ill-formed) is not counted, and is counted in
    ``unknown_codes``. A file none of whose codes can be read is an :class:`~cophe_core.base.files.InputError`.

    >>> from cophe_core import read_labels, score_files
    >>> s = score_files(b"doc_id,code\\n1,401.9\\n", {"A": b"doc_id,code\\n1,401.9\\n"})
    >>> t = training_frequency(read_labels(b"doc_id,code\\nt1,401.9\\nt2,401.9\\nt2,XYZ\\n"), s.corpus)
    >>> int(t.frequency[s.corpus.ontology.codes["401.9"]]), t.documents, t.unknown_codes, t.examples
    (2, 2, 1, ('XYZ',))
    """
    n = corpus.ontology.n_nodes
    pairs = raw.pairs
    documents = len(pd.unique(np.asarray(raw.docs).astype(str)))
    if pairs.empty:
        raise InputError(f"{raw.name}: the training labels hold no codes; give one row per (document, code)")
    strings = pairs["code"].astype(str).str.strip().to_numpy(dtype=str)
    codes, inverse = np.unique(strings, return_inverse=True)
    node, needs_system = _label_columns(codes, corpus, system, raw.name)
    ids = node[inverse]
    known = ids >= 0
    held = pd.DataFrame({"doc": pairs["doc_id"].astype(str).to_numpy()[known], "node": ids[known]})
    held = held.drop_duplicates()
    freq = np.bincount(held["node"].to_numpy(dtype=np.int64), minlength=n).astype(np.int64)
    unknown = codes[node < 0]
    return TrainingFrequency(
        freq, documents, int(len(unknown)), tuple(str(c) for c in unknown[:5]), needs_system
    )


def _label_columns(codes: np.ndarray, corpus: Corpus, system: str, name: str) -> tuple[np.ndarray, bool]:
    """The corpus label column of each code (-1: none), read by :func:`~cophe_core.scoring.labels.encode` with one
    made-up document per code; and whether undotted codes needed the system."""
    width = len(str(len(codes)))
    docs = np.array([f"{i:0{width}d}" for i in range(len(codes))], dtype=object)  # sorted as the codes
    probe = RawLabels(
        name,
        docs,
        pd.DataFrame(
            {
                "doc_id": docs,
                "code": codes.astype(object),
                "line": np.arange(1, len(codes) + 1, dtype=np.int64),
            }
        ),
    )
    try:
        encoded = encode(probe, {}, corpus.ontology, system=system)
    except NothingScorable as e:
        first = e.rejected.iloc[0] if len(e.rejected) else None
        eg = f" (e.g. {first.value!r}: {first.reason})" if first is not None else ""
        raise InputError(
            f"{name}: none of its {len(codes):,} distinct codes is a code of the "
            f"{corpus.ontology.name} hierarchy{eg}"
        ) from None
    m = encoded.gold.tocsr()
    rows, cols = m.nonzero()
    node = np.full(len(codes), -1, dtype=np.int64)
    node[rows] = cols
    node[node >= corpus.ontology.n_nodes] = -1  # placed by structure as a new node: not a corpus column
    return node, bool(encoded.needs_system)


def _check_bins(bins: int) -> int:
    if isinstance(bins, bool) or not isinstance(bins, (int, np.integer)) or bins < 1:
        raise ValueError(f"bins {bins!r}: give a whole number of quantile bins, 1 or more")
    return int(bins)


def _quantile_bins(values: np.ndarray, bins: int) -> np.ndarray:
    """The bin of each value: quantile bins (``pandas.qcut``, coinciding edges dropped), or one bin per value
    when there are at most ``bins`` distinct values."""
    distinct = np.unique(values)
    if len(distinct) <= bins:
        return np.searchsorted(distinct, values)
    return np.asarray(pd.qcut(values, bins, labels=False, duplicates="drop"), dtype=np.int64)


def _number(v: float, digits: int) -> str:
    return (
        str(int(v))
        if float(v).is_integer()
        else np.format_float_positional(v, precision=digits, fractional=False, trim="-")
    )


def _ranges(values: np.ndarray, which: np.ndarray) -> list[tuple[int, str, str]]:
    """(bin, lowest, highest) of each non-empty bin, written with enough digits to tell the bins apart."""
    present = np.unique(which)
    lows = np.array([values[which == i].min() for i in present])
    highs = np.array([values[which == i].max() for i in present])
    out: list[tuple[int, str, str]] = []
    for digits in (4, 6, 10, 17):
        out = [(int(i), _number(lo, digits), _number(hi, digits)) for i, lo, hi in zip(present, lows, highs)]
        distinct = len({(lo, hi) for _, lo, hi in out}) == len(out)
        faithful = all((lo == hi) == (a == b) for (_, lo, hi), a, b in zip(out, lows, highs))
        if distinct and faithful:
            break
    return out


def _span(lo: str, hi: str) -> str:
    return lo if lo == hi else f"{lo} to {hi}"


def gold_count_slices(gold: sp.spmatrix, bins: int = 4) -> list[Slice]:
    """Document slices by the number of gold codes per document: quantile bins (``pandas.qcut``; fewer when
    quantiles coincide, one per number when there are at most ``bins`` numbers) of the documents with a gold
    code, named by the numbers their documents have ("1 to 5 gold codes"); the documents with no gold code
    make a slice of their own ("No gold code") when there are any. The slices partition the documents.

    >>> g = sp.csr_matrix(np.array([[1, 1, 0], [1, 0, 0], [0, 0, 0], [1, 1, 1], [1, 1, 1]]))
    >>> [(s.name, s.size) for s in gold_count_slices(g, bins=2)]
    [('1 to 2 gold codes', 2), ('3 gold codes', 2), ('No gold code', 1)]
    """
    bins = _check_bins(bins)
    m = _binary(gold)
    n = np.diff(m.indptr)
    dimension = "Gold codes per document"
    out = []
    some = np.flatnonzero(n > 0)
    if len(some):
        counts = n[some].astype(float)
        which = _quantile_bins(counts, bins)
        for i, lo, hi in _ranges(counts, which):
            mask = np.zeros(len(n), dtype=bool)
            mask[some[which == i]] = True
            words = f"{_span(lo, hi)} gold code{'' if hi == '1' else 's'}"
            out.append(
                Slice(
                    f"docs:gold:{i}",
                    dimension,
                    words,
                    "documents",
                    mask,
                    int(mask.sum()),
                    members=f"the documents with {words}",
                )
            )
    if len(some) < len(n):
        none = n == 0
        out.append(
            Slice(
                "docs:gold:none",
                dimension,
                "No gold code",
                "documents",
                none,
                int(none.sum()),
                members="the documents with no gold code",
            )
        )
    return out


def read_metadata(
    source: bytes | str | Path, *, name: str | None = None, doc_col: str | None = None
) -> pd.DataFrame:
    """A table of document details: a document id column and any other columns, every value as text (empty
    for a missing one), indexed by document id (str).

    The id column is ``doc_col`` if given, else the first of :data:`DOC_COLUMNS` present (``doc_id``,
    ``hadm_id``, ``document``, ``id``…, any case). CSV or TSV (UTF-8, the delimiter sniffed), or Parquet or
    Feather (read by pandas; nothing is evaluated or unpickled). An
    :class:`~cophe_core.base.files.InputError` names the file, and the line and value where there is one, when
    the file is empty or unreadable, has no id column, gives a document twice or a row without an id.

    >>> read_metadata(b"doc_id,length,admission\\n1,812,EMERGENCY\\n2,,ELECTIVE\\n", name="m.csv").to_dict("index")
    {'1': {'length': '812', 'admission': 'EMERGENCY'}, '2': {'length': '', 'admission': 'ELECTIVE'}}
    >>> read_metadata(b"doc_id,length\\n1,812\\n1,90\\n", name="m.csv")
    Traceback (most recent call last):
    ...
    cophe_core.base.files.InputError: m.csv, line 3: document '1' is given twice (first on line 2); give one row per document
    """
    if isinstance(source, (str, Path)):
        path = Path(source)
        label = name or path.name
        if not path.is_file():
            raise InputError(f"{path}: no such file")
        if path.stat().st_size > MAX_METADATA_BYTES:
            raise InputError(f"{label}: larger than {MAX_METADATA_BYTES // MB} MB")
        data = path.read_bytes()
    else:
        label, data = name or "document details", bytes(source)
    if not data.strip():
        raise InputError(
            f"{label}: the file is empty; give a doc_id column and one or more columns of details"
        )
    binary = data[:4] == b"PAR1" or data[:6] == b"ARROW1"
    frame = _binary_table(data, label) if binary else _text_table(data, label)
    where = "row" if binary else "line"
    if frame.empty:
        raise InputError(f"{label}: no documents, only a header; give one row per document")
    if len(frame) > MAX_METADATA_ROWS:
        raise InputError(
            f"{label}: {len(frame):,} rows; at most {MAX_METADATA_ROWS:,} documents are supported"
        )
    header = "the columns" if binary else "line 1 (the header)"
    id_col = _id_column([str(c) for c in frame.columns], doc_col, f"{label}, {header}")
    ids = frame[id_col].astype(str).str.strip()
    empty = (ids == "").to_numpy()
    if empty.any():
        raise InputError(f"{label}, {where} {frame.index[np.argmax(empty)]}: a row without a document id")
    dup = ids.duplicated(keep="first").to_numpy()
    if dup.any():
        at = int(np.argmax(dup))
        value = ids.iloc[at]
        first = frame.index[int(np.argmax((ids == value).to_numpy()))]
        raise InputError(
            f"{label}, {where} {frame.index[at]}: document {value[:40]!r} is given twice (first on "
            f"{where} {first}); give one row per document"
        )
    # a trailing delimiter makes a column with no name (pandas calls it "Unnamed: k")
    blank = [c for c in frame.columns if not str(c).strip() or str(c).startswith("Unnamed: ")]
    out = frame.drop(columns=[id_col, *blank]).astype(str)
    out.columns = [str(c).strip() for c in out.columns]
    out.index = pd.Index(ids.to_numpy(dtype=object), name="doc_id")
    if out.shape[1] == 0:
        raise InputError(f"{label}: only a document id column ({id_col}); add columns of details to slice by")
    return out


def _id_column(columns: list[str], wanted: str | None, where: str) -> str:
    """The document id column: ``wanted`` (any case), else the first of :data:`DOC_COLUMNS` present."""
    lower = {c.strip().lower(): c for c in columns}
    if wanted is not None:
        if wanted.strip().lower() not in lower:
            raise InputError(f"{where}: no column {wanted!r}; the columns are {', '.join(columns[:12])}")
        return lower[wanted.strip().lower()]
    found = next((lower[c] for c in DOC_COLUMNS if c in lower), None)
    if found is None:
        raise InputError(
            f"{where}: no document id column (found: {', '.join(columns[:8])}); name it doc_id "
            f"(or one of {', '.join(DOC_COLUMNS)})"
        )
    return found


def _text_table(data: bytes, label: str) -> pd.DataFrame:
    if b"\x00" in data[:8192]:
        raise InputError(f"{label}: not a text file (it holds NUL bytes); give CSV, TSV or Parquet")
    try:
        text = data.decode("utf-8-sig")
    except UnicodeDecodeError as e:
        line = data[: e.start].count(b"\n") + 1
        raise InputError(
            f"{label}, line {line}: not UTF-8 text (byte {data[e.start]:#04x}); save it as UTF-8 CSV"
        ) from None
    sep = "\t" if label.lower().endswith(".tsv") else None
    if sep is None:
        try:
            sep = sniff_separator(text, label)
        except InputError:
            raise InputError(
                f"{label}, line 1: a single column; give a doc_id column and one or more columns "
                "of details, separated by commas or tabs"
            ) from None
    return parse_delimited(text, label, sep)


def _binary_table(data: bytes, label: str) -> pd.DataFrame:
    parquet = data[:4] == b"PAR1"
    try:
        frame = (pd.read_parquet if parquet else pd.read_feather)(io.BytesIO(data))
    except Exception as e:  # pyarrow raises several types for a damaged file
        raise InputError(
            f"{label}: cannot read it as {'Parquet' if parquet else 'Feather'} "
            f"({type(e).__name__}); export it again"
        ) from None
    frame = frame.reset_index(drop=True)
    frame.columns = [str(c) for c in frame.columns]
    frame = binary_as_text(frame, label)
    text = {}
    for c in frame.columns:
        col = frame[c]
        whole = col.dropna().to_numpy() if pd.api.types.is_float_dtype(col) else None
        if whole is not None and np.all((np.mod(whole, 1) == 0) & (np.abs(whole) < 2**53)):
            col = col.astype("Int64")  # ids and counts with a missing value are floats in Parquet: 12.0 → 12
        text[c] = col.astype(object).where(col.notna(), "").astype(str)
    out = pd.DataFrame(text, columns=frame.columns)
    out.index = pd.RangeIndex(1, len(out) + 1)  # rows, in lieu of lines
    return out


def metadata_columns(meta: pd.DataFrame) -> list[str]:
    """The columns of :func:`read_metadata` that can slice the documents: those with two or more distinct
    values, except other document id columns (:data:`DOC_COLUMNS`, ``subject_id``) and text columns whose
    every value is different (identifiers, free text).

    >>> meta = read_metadata(b"doc_id,note_id,kind,length,site\\n1,a,x,10,h\\n2,b,y,20,h\\n3,c,x,30,h\\n")
    >>> metadata_columns(meta)
    ['kind', 'length']
    """
    out = []
    for c in meta.columns:
        if str(c).strip().lower() in (*DOC_COLUMNS, "subject_id"):
            continue
        values = meta[c].astype(str).str.strip()
        values = values[values != ""]
        distinct = values.nunique()
        if distinct < 2:
            continue
        if distinct == len(values) and not _numbers(values.to_numpy(dtype=object)).all():
            continue
        out.append(str(c))
    return out


def _numbers(values: np.ndarray) -> NDArray[np.bool_]:
    """Per text value: whether it is a finite number."""
    nums: NDArray[np.float64] = pd.to_numeric(pd.Series(values, dtype=object), errors="coerce").to_numpy(
        dtype=float
    )
    return np.isfinite(nums)


def _cut(value: str) -> str:
    return value if len(value) <= _NAME_CHARS else value[: _NAME_CHARS - 1] + "…"


def metadata_slices(
    meta: pd.DataFrame, docs: np.ndarray, column: str, *, bins: int = 4, max_categories: int = 12
) -> list[Slice]:
    """Document slices of the evaluation's ``docs`` by one column of :func:`read_metadata`.

    A column whose every non-empty value (over ``docs``) is a finite number is numeric: quantile bins
    (``pandas.qcut``, coinciding edges dropped; one slice per value when there are at most ``bins``), named by
    the values they hold ("length 120 to 850"). Otherwise each value is a slice ("admission: EMERGENCY"),
    the most frequent first; the values beyond the ``max_categories`` most frequent share "Other values"
    (unless only one would: it keeps its own slice). The documents absent from the table or with an empty
    value share "No value", so the slices partition ``docs``.

    >>> meta = read_metadata(b"doc_id,type,length\\n1,A,100\\n2,B,300\\n3,A,200\\n", name="m.csv")
    >>> [(s.name, s.size) for s in metadata_slices(meta, np.array(["1", "2", "3", "4"]), "type")]
    [('type: A', 2), ('type: B', 1), ('No value', 1)]
    >>> [(s.name, s.size) for s in metadata_slices(meta, np.array(["1", "2", "3"]), "length", bins=2)]
    [('length 100 to 200', 2), ('length 300', 1)]
    """
    if column not in meta.columns:
        raise ValueError(
            f"no column {column!r} in the document details (columns: {', '.join(map(str, meta.columns))})"
        )
    bins = _check_bins(bins)
    if (
        isinstance(max_categories, bool)
        or not isinstance(max_categories, (int, np.integer))
        or max_categories < 1
    ):
        raise ValueError(f"max_categories {max_categories!r}: give a whole number, 1 or more")
    if not meta.index.is_unique:
        raise ValueError("the document details give a document twice; read them with read_metadata")
    ids = pd.Index(np.asarray(docs).astype(str))
    table = pd.Series(meta[column].to_numpy(dtype=object), index=meta.index.astype(str))
    in_table = ids.isin(table.index)
    values = table.reindex(ids).astype(object).where(lambda v: v.notna(), "").astype(str).str.strip()
    values = values.to_numpy(dtype=object)
    given = values != ""
    dimension = f"Document details: {column}"
    key = f"docs:meta:{column}"
    out: list[Slice] = []
    at = np.flatnonzero(given)
    if len(at) and _numbers(values[at]).all():
        nums = pd.to_numeric(pd.Series(values[at], dtype=object)).to_numpy(dtype=float)
        which = _quantile_bins(nums, bins)
        for i, lo, hi in _ranges(nums, which):
            mask = np.zeros(len(ids), dtype=bool)
            mask[at[which == i]] = True
            span = _span(lo, hi)
            out.append(
                Slice(
                    f"{key}:{i}",
                    dimension,
                    f"{column} {span}",
                    "documents",
                    mask,
                    int(mask.sum()),
                    members=f"the documents whose {column} is {'from ' if lo != hi else ''}{span}",
                )
            )
    elif len(at):
        counts = pd.Series(values[at]).value_counts()
        ordered = sorted(counts.index, key=lambda v: (-counts[v], v))
        kept = ordered if len(ordered) <= max_categories + 1 else ordered[:max_categories]
        names = _distinct([f"{column}: {_cut(v)}" for v in kept])
        for i, (value, name) in enumerate(zip(kept, names)):
            mask = values == value
            out.append(
                Slice(
                    f"{key}:v{i}",
                    dimension,
                    name,
                    "documents",
                    mask,
                    int(mask.sum()),
                    members=f"the documents whose {column} is {_cut(value)}",
                )
            )
        rest = given & ~np.isin(values, np.asarray(kept, dtype=object))
        if rest.any():
            others = ordered[len(kept) :]
            listed = ", ".join(_cut(v) for v in others[:5]) + (", …" if len(others) > 5 else "")
            out.append(
                Slice(
                    f"{key}:other",
                    dimension,
                    f"Other values ({len(others):,})",
                    "documents",
                    rest,
                    int(rest.sum()),
                    f"The values: {listed}.",
                    members=f"the documents whose {column} is one of {len(others):,} less frequent values",
                )
            )
    missing = ~given
    if missing.any():
        absent = int((missing & ~in_table).sum())
        blank = int((missing & in_table).sum())
        parts = ([f"{_documents(absent)} not in the table"] if absent else []) + (
            [f"{_documents(blank)} with an empty value"] if blank else []
        )
        out.append(
            Slice(
                f"{key}:none",
                dimension,
                "No value",
                "documents",
                missing,
                int(missing.sum()),
                f"{'; '.join(parts)[0].upper()}{'; '.join(parts)[1:]}.",
                members=f"the documents without a value of {column}",
            )
        )
    return out


def _distinct(names: list[str]) -> list[str]:
    """``names`` made distinct with a counter where they repeat (values cut to the same prefix)."""
    seen: dict[str, int] = {}
    out = []
    for n in names:
        seen[n] = seen.get(n, 0) + 1
        out.append(n if seen[n] == 1 else f"{n} ({seen[n]})")
    return out


def _slice_figures(
    ev: Evaluation, s: Slice, n_resamples: int, seed: int, confidence: float
) -> tuple[int, int, int, dict[str, tuple[float, float, float]] | None]:
    """Documents, gold and predicted codes in the slice, and each headline figure's (value, low, high), from
    the bootstrap of :func:`restrict` (None when the slice holds nothing to score)."""
    sub = restrict(ev, s)
    n_docs, n_gold, n_pred = len(sub.docs), int(sub.gold.nnz), int(sub.pred.nnz)
    if not n_docs or not (n_gold or n_pred):
        return n_docs, n_gold, n_pred, None
    table = bootstrap(sub, n_resamples=n_resamples, seed=seed, confidence=confidence)
    return (
        n_docs,
        n_gold,
        n_pred,
        {r.figure: (float(r.value), float(r.low), float(r.high)) for r in table.itertuples()},
    )


def slice_rows(
    run: str,
    s: Slice,
    n_docs: int,
    n_gold: int,
    n_pred: int,
    figures: Mapping[str, tuple[float, float, float]] | None,
) -> list[tuple[object, ...]]:
    """The rows of :func:`slice_scores` for one run on one slice: its sizes, and each headline figure's
    ``(value, low, high)`` by its :func:`cophe_core.breakdown.stats.bootstrap` name (``"cophe overall f1"``; None when
    there is nothing to score). Undefined figures are NaN, and ``note`` says why.

    >>> s = Slice("c", "Codes", "rare", "codes", np.array([True]), 1)
    >>> rows = slice_rows("A", s, 10, 0, 3, {"flat precision": (0.0, np.nan, np.nan)})
    >>> rows[0][9:12], rows[0][-1][:22]
    (('flat', 'precision', 0.0), 'No gold code in this s')
    """
    note = (
        "No document in this slice."
        if not n_docs
        else "No gold or predicted code in this slice."
        if not (n_gold or n_pred)
        else "No gold code in this slice: recall and F1 are undefined, and every predicted code is "
        "a false positive."
        if not n_gold
        else "No predicted code in this slice: precision is 0 by convention."
        if not n_pred
        else ""
    )
    rows: list[tuple[object, ...]] = []
    for measure, pattern in _HEADLINE.items():
        for stat in _STATISTICS:
            value = low = high = np.nan
            if figures is not None and (n_gold or stat == "precision"):
                value, low, high = figures.get(pattern.format(stat), (np.nan, np.nan, np.nan))
            rows.append(
                (
                    run,
                    s.name,
                    s.key,
                    s.dimension,
                    s.kind,
                    s.size,
                    n_docs,
                    n_gold,
                    n_pred,
                    measure,
                    stat,
                    value,
                    low,
                    high,
                    note,
                )
            )
    return rows


_HEADLINE = {"flat": "flat {}", "set_based": "set_based overall {}", "cophe": "cophe overall {}"}
_STATISTICS = ("precision", "recall", "f1")
SCORE_COLUMNS = [
    "run",
    "slice",
    "key",
    "dimension",
    "kind",
    "size",
    "documents",
    "gold_codes",
    "predicted_codes",
    "measure",
    "statistic",
    "value",
    "low",
    "high",
    "note",
]


def slice_scores(
    evals: Mapping[str, Evaluation],
    slices: Iterable[Slice],
    *,
    n_resamples: int = 200,
    seed: int = 0,
    confidence: float = 0.95,
) -> pd.DataFrame:
    """Each run's overall precision, recall and F1 of each measure (flat, set-based, CoPHE) on each slice,
    with percentile bootstrap intervals: :func:`cophe_core.breakdown.stats.bootstrap` of :func:`restrict`, the slice's
    documents resampled (every document, for a code slice).

    One row per (slice, run, measure, statistic), slices in their order: ``run, slice`` (its name), ``key,
    dimension, kind, size, documents`` (in the slice), ``gold_codes, predicted_codes`` (labels left in it),
    ``measure, statistic, value, low, high, note``. It never raises on an empty slice: with no document, or
    no gold and no predicted code, every value is NaN; with predicted codes and no gold code, recall and F1
    are NaN (undefined) and precision is scored; ``note`` says so.

    >>> from cophe_core import score_files
    >>> s = score_files(b"doc_id,code\\n1,401.9\\n2,428.0\\n", {"A": b"doc_id,code\\n1,401.9\\n2,428.1\\n"})
    >>> first = Slice("d", "Documents", "first", "documents", np.array([True, False]), 1)
    >>> none = Slice("n", "Documents", "none", "documents", np.array([False, False]), 0)
    >>> t = slice_scores({"A": s.evaluation("A")}, [first, none], n_resamples=20)
    >>> t.set_index(["key", "measure", "statistic"]).loc[("d", "flat", "f1"), ["value", "low", "high"]].tolist()
    [1.0, 1.0, 1.0]
    >>> bool(t[t.key == "n"].value.isna().all()), t[t.key == "n"].note.iloc[0]
    (True, 'No document in this slice.')
    """
    rows = []
    for s in slices:
        for run, ev in evals.items():
            rows += slice_rows(run, s, *_slice_figures(ev, s, n_resamples, seed, confidence))
    return pd.DataFrame(rows, columns=SCORE_COLUMNS)
