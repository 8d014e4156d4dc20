"""Slices: scores on part of the data, as masks applied to the scored matrices (nothing is read again).

A **document slice** keeps some documents (rows): every count over it is the sum of its documents' counts,
so the counts of slices that partition the documents add up to the whole, at every level and for every
measure.

A **code slice** keeps every document and only some codes (label columns): ``gold`` and ``pred`` lose the
other columns' codes before the ancestor closure, so at every level a node's x (predicted) and y (gold)
count only the slice's codes below it, and a node with none of them counts nothing. Flat counts of codes
that partition the codes add up to the whole; CoPHE counts above the codes' own level need not, since
min(x₁ + x₂, y₁ + y₂) ≠ min(x₁, y₁) + min(x₂, y₂): gold {401.9} and predicted {401.1} give category 401 a
true positive, but split into the slices {401.9} and {401.1} each has none.

Slices are built from:

- the **frequency of each code**: the documents of the gold standard (or of a training-label file, as papers
  define rare codes) that hold it, binned by edges such as 10 and 100 (rare < 10, medium, frequent ≥ 100);
- the **number of gold codes** of each document, in quantile bins;
- any column of a **metadata** table (``doc_id`` and columns such as length, admission type, year): numbers
  in quantile bins, text by value.

Every family of slices built here partitions what it slices (documents, or the codes in play), with a slice
for what has no value ("No value", "No gold code") when there is any.
"""

from __future__ import annotations

import io
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

import numpy as np
import pandas as pd
import scipy.sparse as sp

from .labels import Corpus
from .metrics import Evaluation, evaluate
from .readers import InputError, RawLabels, parse_delimited, sniff_separator
from .stats import bootstrap

__all__ = ["Slice", "restrict", "code_frequency", "code_frequency_slices", "training_frequency",
           "TrainingFrequency", "gold_count_slices", "read_metadata", "metadata_columns", "metadata_slices",
           "slice_scores", "DOC_COLUMNS"]

DOC_COLUMNS = ("doc_id", "hadm_id", "document", "id", "note_id")  # recognised document id columns, in order
MAX_METADATA_ROWS = 10_000_000


@dataclass(frozen=True, eq=False)
class Slice:
    """Part of the data: a boolean ``mask`` over the documents (``kind="documents"``) or over the ontology's
    nodes, that is the label columns (``kind="codes"``).

    ``dimension`` says what was sliced ("Code frequency in the gold standard"), ``name`` which part ("Rare:
    fewer than 10 documents"), ``size`` how many documents or codes it holds, and ``key`` identifies it in a
    URL or a saved analysis.
    """

    key: str
    dimension: str
    name: str
    kind: Literal["documents", "codes"]
    mask: np.ndarray
    size: int
    note: str = ""

    def describe(self) -> str:
        """The slice in one sentence.

        >>> Slice("codes:freq:0", "Code frequency", "Rare", "codes", np.array([True, False]), 1).describe()
        'Only the 1 code of this slice, in every document.'
        """
        if self.kind == "codes":
            what = f"Only the {self.size:,} code{'s' if self.size != 1 else ''} of this slice, in every document."
        else:
            what = f"Only the {self.size:,} document{'s' if self.size != 1 else ''} of this slice."
        return f"{what} {self.note}".strip()


def restrict(ev: Evaluation, s: Slice | None) -> Evaluation:
    """``ev`` on the slice: its documents (rows), or its codes (the other label columns emptied).

    >>> from cophe_core import score_files
    >>> s = score_files(b"doc_id,code\\n1,401.9\\n2,428.0\\n", {"A": b"doc_id,code\\n1,401.9\\n2,428.1\\n"})
    >>> ev = s.evaluation("A")
    >>> docs = Slice("d", "Documents", "first", "documents", np.array([True, False]), 1)
    >>> restrict(ev, docs).score("flat")["f1"]
    1.0
    """
    if s is None:
        return ev
    if s.kind == "documents":
        if len(s.mask) != len(ev.docs):
            raise ValueError(f"slice {s.name!r}: a mask of {len(s.mask)} documents for {len(ev.docs)} documents")
        rows = np.flatnonzero(s.mask)
        return evaluate(ev.gold[rows], ev.pred[rows], ev.ontology, docs=ev.docs[rows], max_level=ev.max_level)
    if len(s.mask) != ev.gold.shape[1]:
        raise ValueError(f"slice {s.name!r}: a mask of {len(s.mask)} codes for {ev.gold.shape[1]} label columns")
    return evaluate(_keep_columns(ev.gold, s.mask), _keep_columns(ev.pred, s.mask), ev.ontology, docs=ev.docs,
                    max_level=ev.max_level)


def _keep_columns(m: sp.csr_matrix, mask: np.ndarray) -> sp.csr_matrix:
    """``m`` with the entries outside the ``mask`` columns removed (same shape and dtype)."""
    out = sp.csr_matrix(m, copy=True)
    out.data = out.data * mask[out.indices].astype(out.data.dtype)
    out.eliminate_zeros()
    return out


def code_frequency(labels: sp.spmatrix) -> np.ndarray:
    """Documents per label column: how many documents (rows) hold each code.

    >>> code_frequency(sp.csr_matrix(np.array([[1, 0, 1], [1, 0, 0]]))).tolist()
    [2, 0, 1]
    """
    m = sp.csr_matrix(labels)
    return np.bincount(m.indices[m.data != 0], minlength=m.shape[1]).astype(np.int64)


def _check_edges(edges) -> tuple[int, ...]:
    out = tuple(int(e) for e in edges)
    if not out or any(e <= 0 for e in out) or any(b <= a for a, b in zip(out, out[1:])):
        raise ValueError(f"bin edges {list(edges)}: give one or more increasing positive numbers, such as 10, 100")
    return out


def _bin_names(edges: tuple[int, ...]) -> list[str]:
    """Names of the bins [0, e1), [e1, e2), …, [ek, ∞) of document counts."""
    words = (["Rare", "Frequent"] if len(edges) == 1 else ["Rare", "Medium", "Frequent"] if len(edges) == 2
             else [f"Bin {i + 1}" for i in range(len(edges) + 1)])
    names = [f"{words[0]}: fewer than {edges[0]:,} documents"]
    names += [f"{words[i + 1]}: {lo:,} to {hi - 1:,} documents" for i, (lo, hi) in enumerate(zip(edges, edges[1:]))]
    names.append(f"{words[-1]}: {edges[-1]:,} documents or more")
    return names


def code_frequency_slices(frequency: np.ndarray, edges=(10, 100), *, in_play: np.ndarray | None = None,
                          source: str = "the gold standard") -> list[Slice]:
    """Code slices by frequency: the codes in play (``in_play``; default: every code with a frequency) binned
    by ``edges`` on their ``frequency`` (documents per label column, :func:`code_frequency`).

    N edges make N + 1 bins: [0, e₁), [e₁, e₂), …, [e_N, ∞). A code in play that ``source`` never holds
    (predicted only) has frequency 0, so it is in the first bin, and the slice says so.

    >>> s = code_frequency_slices(np.array([0, 3, 12, 150, 0]), (10, 100), in_play=np.array([1, 1, 1, 1, 0], bool))
    >>> [(x.name, x.size) for x in s]
    [('Rare: fewer than 10 documents', 2), ('Medium: 10 to 99 documents', 1), ('Frequent: 100 documents or more', 1)]
    """
    edges = _check_edges(edges)
    freq = np.asarray(frequency, dtype=np.int64)
    used = freq > 0 if in_play is None else np.asarray(in_play, dtype=bool)
    if used.shape != freq.shape:
        raise ValueError(f"in_play has {used.shape[0]} columns for {freq.shape[0]} frequencies")
    which = np.searchsorted(np.asarray(edges), freq, side="right")  # 0 below e₁, …, N from e_N up
    unseen = int((used & (freq == 0)).sum())
    dimension = f"Code frequency in {source}"
    out = []
    for i, name in enumerate(_bin_names(edges)):
        mask = used & (which == i)
        note = (f"It includes {unseen:,} code{'s' if unseen != 1 else ''} that {source} never holds (predicted "
                "only)." if i == 0 and unseen else "")
        out.append(Slice(f"codes:freq:{','.join(map(str, edges))}:{i}", dimension, name, "codes", mask,
                         int(mask.sum()), note))
    return out


@dataclass(frozen=True)
class TrainingFrequency:
    """Documents per label column in a training-label file, and how many of its codes the ontology lacks."""

    frequency: np.ndarray
    documents: int
    unknown_codes: int


def training_frequency(raw: RawLabels, corpus: Corpus) -> TrainingFrequency:
    """How many documents of a training-label file hold each label column of ``corpus``, by exact code.

    Codes the corpus's ontology does not know are counted in ``unknown_codes`` and otherwise ignored.

    >>> from cophe_core import read_labels, score_files
    >>> s = score_files(b"doc_id,code\\n1,401.9\\n", {"A": b"doc_id,code\\n1,401.9\\n"})
    >>> t = training_frequency(read_labels(b"doc_id,code\\nt1,401.9\\nt2,401.9\\nt2,XYZ\\n"), s.corpus)
    >>> int(t.frequency[s.corpus.ontology.codes["401.9"]]), t.documents, t.unknown_codes
    (2, 2, 1)
    """
    pairs = raw.pairs[["doc_id", "code"]].drop_duplicates()
    lookup = corpus.ontology.codes
    ids = np.fromiter((lookup.get(c, -1) for c in pairs.code.astype(str)), dtype=np.int64, count=len(pairs))
    known = ids >= 0
    freq = np.bincount(ids[known], minlength=corpus.gold.shape[1]).astype(np.int64)
    unknown = int(pairs.code[~known].nunique())
    return TrainingFrequency(freq, int(pairs.doc_id.nunique()), unknown)


def _quantile_slices(values: pd.Series, docs_total: int, dimension: str, key: str, label: str,
                     bins: int, whole: bool) -> list[tuple[str, np.ndarray, str]]:
    """(name, mask, key) per quantile bin of the non-missing ``values``; bins that coincide are merged."""
    ok = values.notna().to_numpy()
    if not ok.any():
        return []
    v = values[ok].to_numpy(dtype=float)
    edges = np.unique(np.quantile(v, np.linspace(0, 1, bins + 1)))
    if whole:
        edges = np.unique(np.round(edges))
    if len(edges) == 1:
        edges = np.array([edges[0], edges[0]])
    which = np.clip(np.searchsorted(edges, values.to_numpy(dtype=float), side="right") - 1, 0, len(edges) - 2)
    out = []
    for i in range(len(edges) - 1):
        mask = ok & (which == i)
        if not mask.any():
            continue
        lo, hi = v[(which[ok] == i)].min(), v[(which[ok] == i)].max()
        fmt = "{:,.0f}" if whole else "{:,.4g}"
        rng = fmt.format(lo) if lo == hi else f"{fmt.format(lo)} to {fmt.format(hi)}"
        out.append((f"{label} {rng}", mask, f"{key}:{i}"))
    return out


def gold_count_slices(gold: sp.spmatrix, bins: int = 4) -> list[Slice]:
    """Document slices by the number of gold codes per document, in ``bins`` quantile bins (fewer when
    quantiles coincide); documents with no gold code make a slice of their own.

    >>> g = sp.csr_matrix(np.array([[1, 1, 0], [1, 0, 0], [0, 0, 0], [1, 1, 1]]))
    >>> [(s.name, s.size) for s in gold_count_slices(g, bins=2)]
    [('1 gold code', 1), ('2 to 3 gold codes', 2), ('No gold code', 1)]
    """
    n = np.asarray((sp.csr_matrix(gold) != 0).sum(axis=1)).ravel()
    dimension = "Gold codes per document"
    values = pd.Series(np.where(n > 0, n, np.nan))
    parts = _quantile_slices(values, len(n), dimension, "docs:gold", "", bins, whole=True)
    out = [Slice(key, dimension, f"{name.strip()} gold code{'s' if name.strip() != '1' else ''}",
                 "documents", mask, int(mask.sum())) for name, mask, key in parts]
    if (n == 0).any():
        out.append(Slice("docs:gold:none", dimension, "No gold code", "documents", n == 0, int((n == 0).sum())))
    return out


def read_metadata(source: bytes | str | Path, *, name: str | None = None) -> pd.DataFrame:
    """A table of document details: a document id column (``doc_id``, ``hadm_id``, ``document``, ``id`` or
    ``note_id``, any case) and any other columns, every value as text (empty for a missing one).

    CSV/TSV (UTF-8) or Parquet. The result is indexed by document id (str); its columns are the others.
    Raises :class:`~cophe_core.readers.InputError` naming the file, and the line and value where there is one,
    when the file is empty, has no id column, or gives a document twice.

    >>> read_metadata(b"doc_id,length,admission\\n1,812,EMERGENCY\\n2,,ELECTIVE\\n", name="m.csv").to_dict("index")
    {'1': {'length': '812', 'admission': 'EMERGENCY'}, '2': {'length': '', 'admission': 'ELECTIVE'}}
    """
    if isinstance(source, (str, Path)):
        path = Path(source)
        label, data = name or path.name, path.read_bytes()
    else:
        label, data = name or "metadata", bytes(source)
    if not data.strip():
        raise InputError(f"{label}: the file is empty; give a doc_id column and one or more columns of details")
    if data[:4] == b"PAR1":
        frame = _parquet(data, label)
    else:
        try:
            text = data.decode("utf-8-sig")
        except UnicodeDecodeError as e:
            raise InputError(f"{label}: is not UTF-8 text (byte {e.start}); save it as UTF-8 CSV") from None
        try:
            sep = sniff_separator(text, label)
        except InputError:
            raise InputError(f"{label}, line 1: a single column; give a doc_id column and one or more columns of "
                             "details, separated by commas or tabs") from None
        frame = parse_delimited(text, label, sep)
    if len(frame) > MAX_METADATA_ROWS:
        raise InputError(f"{label}: {len(frame):,} rows; at most {MAX_METADATA_ROWS:,} documents are supported")
    lower = {str(c).strip().lower(): c for c in frame.columns}
    id_col = next((lower[c] for c in DOC_COLUMNS if c in lower), None)
    if id_col is None:
        found = ", ".join(str(c) for c in list(frame.columns)[:8])
        raise InputError(f"{label}, line 1 (the header): no document id column (found: {found}); name it doc_id")
    ids = frame[id_col].astype(str).str.strip()
    dup = ids.duplicated(keep="first") & (ids != "")
    if dup.any():
        line = frame.index[np.argmax(dup.to_numpy())]
        raise InputError(f"{label}, line {line}: document {ids[dup].iloc[0][:40]!r} is given twice; give one row "
                         "per document")
    empty = ids == ""
    if empty.any():
        raise InputError(f"{label}, line {frame.index[np.argmax(empty.to_numpy())]}: a row without a document id")
    # a trailing delimiter makes a column with no name (pandas calls it "Unnamed: k")
    blank = [c for c in frame.columns if not str(c).strip() or str(c).startswith("Unnamed: ")]
    out = frame.drop(columns=[id_col, *blank]).astype(str)
    out.index = pd.Index(ids.to_numpy(), name="doc_id")
    if out.shape[1] == 0:
        raise InputError(f"{label}: only a document id column; add columns of details to slice by")
    return out


def _parquet(data: bytes, label: str) -> pd.DataFrame:
    try:
        frame = pd.read_parquet(io.BytesIO(data))
    except Exception as e:  # pyarrow raises several types for a damaged file
        raise InputError(f"{label}: cannot read it as Parquet ({type(e).__name__}); export it again") from None
    frame = frame.astype(object).where(frame.notna(), "").astype(str)
    frame.index = pd.RangeIndex(1, len(frame) + 1)  # rows, in lieu of lines
    return frame


def metadata_columns(meta: pd.DataFrame) -> list[str]:
    """The columns of :func:`read_metadata` that can slice: those with at least two distinct values."""
    return [str(c) for c in meta.columns if meta[c].replace("", np.nan).nunique() >= 2]


def metadata_slices(meta: pd.DataFrame, docs: np.ndarray, column: str, *, bins: int = 4,
                    max_categories: int = 12) -> list[Slice]:
    """Document slices by one column of :func:`read_metadata`, over the evaluation's ``docs``.

    A column whose every non-empty value is a number is cut into ``bins`` quantile bins; otherwise each value
    is a slice, the most frequent first, and the values beyond ``max_categories`` share "Other values".
    Documents missing from the table, or with an empty value, share "No value", so the slices partition
    ``docs``.

    >>> meta = read_metadata(b"doc_id,type\\n1,A\\n2,B\\n3,A\\n", name="m.csv")
    >>> [(s.name, s.size) for s in metadata_slices(meta, np.array(["1", "2", "3", "4"]), "type")]
    [('type: A', 2), ('type: B', 1), ('No value', 1)]
    """
    if column not in meta.columns:
        raise ValueError(f"no column {column!r} in the document details (columns: {', '.join(meta.columns)})")
    values = meta[column].reindex(pd.Index(np.asarray(docs).astype(str))).fillna("").astype(str).str.strip()
    given = values != ""
    numbers = pd.to_numeric(values[given], errors="coerce")
    dimension = f"Document details: {column}"
    key = f"docs:meta:{column}"
    out: list[Slice] = []
    if given.any() and numbers.notna().all():
        series = pd.Series(np.nan, index=values.index)
        series[given.to_numpy()] = numbers.to_numpy(dtype=float)
        whole = bool(np.all(np.mod(numbers.to_numpy(dtype=float), 1) == 0))
        for name, mask, k in _quantile_slices(series.reset_index(drop=True), len(docs), dimension, key, column,
                                             bins, whole):
            out.append(Slice(k, dimension, name, "documents", mask, int(mask.sum())))
    elif given.any():
        counts = values[given].value_counts(sort=True)
        ordered = sorted(counts.index, key=lambda v: (-counts[v], v))
        kept = ordered[:max_categories] if len(ordered) > max_categories + 1 else ordered
        v = values.to_numpy()
        for i, value in enumerate(kept):
            mask = v == value
            out.append(Slice(f"{key}:v{i}", dimension, f"{column}: {value}", "documents", mask, int(mask.sum())))
        rest = given.to_numpy() & ~np.isin(v, kept)
        if rest.any():
            n_rest = len(ordered) - len(kept)
            out.append(Slice(f"{key}:other", dimension, f"Other values ({n_rest})", "documents", rest,
                             int(rest.sum())))
    missing = ~given.to_numpy()
    if missing.any():
        out.append(Slice(f"{key}:none", dimension, "No value", "documents", missing, int(missing.sum()),
                         "Documents without this detail in the table."))
    return out


_HEADLINE = {"flat": "flat {}", "set_based": "set_based overall {}", "cophe": "cophe overall {}"}


def slice_scores(evals: dict[str, Evaluation], slices: list[Slice], *, n_resamples: int = 200, seed: int = 0,
                 confidence: float = 0.95) -> pd.DataFrame:
    """Each run's overall precision, recall and F1 of each measure on each slice, with bootstrap intervals
    (:func:`cophe_core.stats.bootstrap` of :func:`restrict`, the slice's documents resampled).

    One row per (run, slice, measure, statistic): ``run, slice, key, dimension, kind, size, documents,
    gold_codes, measure, statistic, value, low, high``. A slice without a document or a gold code gets NaN
    values rather than an error.

    >>> from cophe_core import score_files
    >>> s = score_files(b"doc_id,code\\n1,401.9\\n2,428.0\\n", {"A": b"doc_id,code\\n1,401.9\\n2,428.1\\n"})
    >>> first = Slice("d", "Documents", "first", "documents", np.array([True, False]), 1)
    >>> t = slice_scores({"A": s.evaluation("A")}, [first], n_resamples=20)
    >>> float(t.set_index(["measure", "statistic"]).loc[("flat", "f1"), "value"])
    1.0
    """
    rows = []
    for s in slices:
        for run, ev in evals.items():
            sub = restrict(ev, s)
            n_docs, n_gold = len(sub.docs), int(sub.gold.nnz)
            table = None
            if n_docs and n_gold:
                table = bootstrap(sub, n_resamples=n_resamples, seed=seed, confidence=confidence).set_index("figure")
            for measure, pattern in _HEADLINE.items():
                for stat in ("precision", "recall", "f1"):
                    fig = pattern.format(stat)
                    value, low, high = ((table.loc[fig, "value"], table.loc[fig, "low"], table.loc[fig, "high"])
                                        if table is not None else (np.nan, np.nan, np.nan))
                    rows.append((run, s.name, s.key, s.dimension, s.kind, s.size, n_docs, n_gold, measure, stat,
                                 float(value), float(low), float(high)))
    return pd.DataFrame(rows, columns=["run", "slice", "key", "dimension", "kind", "size", "documents",
                                       "gold_codes", "measure", "statistic", "value", "low", "high"])
