"""Label sets: raw (document, code) pairs → sparse documents × nodes matrices.

:func:`encode` is the single place where input is validated against an
ontology. It decides, for every row, whether it is scored or rejected, and
collects the warnings a user must see (SPEC §1):

- duplicate rows collapse, and are counted (a scores input keeps each
  (document, code)'s highest score);
- ill-formed codes are rejected with their reason;
- well-formed codes outside the official list are placed by structure and
  flagged; codes that look like a diagnosis with a stripped leading zero are
  flagged;
- ids present on one side only get the empty set on the other, and are counted;
- an input none of whose rows can be scored stops with :class:`NothingScorable`
  (a file with nothing scorable is an error, not a score of zero).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field, replace

import numpy as np
import pandas as pd
import scipy.sparse as sp

from ..base.files import InputError, Reason, counted, excerpt
from ..base.options import Where, say
from ..inputs.readers import REJECTED_COLUMNS, RawLabels, RawScores
from ..ontology import Ontology, systems
from ..ontology.base import Placement

__all__ = [
    "DEFAULT_MAX_REJECTED",
    "Corpus",
    "FileRows",
    "NothingScorable",
    "Reason",
    "Resolution",
    "RowBound",
    "TooManyRejected",
    "check_rows",
    "encode",
    "main_reasons",
    "refusals",
    "resolve_codes",
    "summarise_rows",
    "undotted_mask",
]


DEFAULT_MAX_REJECTED = 0.01  # the share of a file's rows that may go unscored before it is refused


@dataclass(frozen=True)
class FileRows:
    """How many rows of one input were given, scored and rejected.

    ``given`` counts every row of the file that the readers took apart into (document, code) rows, plus the
    rows they rejected; ``rejected`` the rows listed in the rejected table; ``scored`` the rest, duplicates
    included: ``duplicates`` counts the scored rows that repeat a (document, code) and collapse into it.
    ``undotted`` counts the rejected rows whose undotted codes the code system reads once told which list
    they come from (ICD-9's ``4019``).

    >>> r = FileRows("gold.csv", given=100, rejected=2, duplicates=3)
    >>> r.scored, r.share, r.to_dict()
    (98, 0.02, {'given': 100, 'scored': 98, 'rejected': 2, 'duplicates': 3})
    """

    file: str
    given: int
    rejected: int
    duplicates: int = 0
    undotted: int = 0

    @property
    def scored(self) -> int:
        return self.given - self.rejected

    @property
    def share(self) -> float:
        """The share of the rows rejected (0 for a file without rows)."""
        return self.rejected / self.given if self.given else 0.0

    def to_dict(self) -> dict[str, int]:
        """The CLI JSON's entry for the file: ``given``, ``scored``, ``rejected``, ``duplicates``."""
        return {
            "given": self.given,
            "scored": self.scored,
            "rejected": self.rejected,
            "duplicates": self.duplicates,
        }


@dataclass(frozen=True)
class RowBound:
    """How much of a file may go unscored before the file is refused (no score is given for it).

    A file whose rejected rows are more than ``max_share`` of its rows is refused; with ``ask_system``, so is
    a file with any undotted code that the code system reads once told which list it comes from, whatever
    the share: that is one question for the whole file, never answered by scoring part of it. The default
    refuses more than 1% and asks for undotted codes; a share the user gives (``--max-rejected``) is their
    decision to score the rest anyway, so it does not ask.

    >>> RowBound(), RowBound.lifted(0.5)
    (RowBound(max_share=0.01, ask_system=True), RowBound(max_share=0.5, ask_system=False))
    """

    max_share: float = DEFAULT_MAX_REJECTED
    ask_system: bool = True

    @classmethod
    def lifted(cls, max_share: float = 1.0) -> RowBound:
        """The user's own bound (1: every file is scored, however much of it is rejected)."""
        if not 0.0 <= max_share <= 1.0:
            raise ValueError(f"the share of rows that may be rejected is from 0 to 1, not {max_share}")
        return cls(max_share, ask_system=False)

    def refuses(self, rows: FileRows) -> bool:
        """Whether a file with these rows is refused. The share is compared as a quotient, so that 1 row
        of 100 is exactly 1%.

        >>> [RowBound().refuses(FileRows("g.csv", 100, n)) for n in (1, 2)]
        [False, True]
        """
        return rows.share > self.max_share or (self.ask_system and rows.undotted > 0)


# the fix of a file refused for its rejected rows: the next of these shares at or above its own
_SHARES = (0.02, 0.05, 0.1, 0.2, 0.5, 1.0)


class TooManyRejected(InputError):
    """An input of which too many rows cannot be scored (:class:`RowBound`): no score is given for it.

    Attributes
    ----------
    file : str
        The input's name.
    rejected : DataFrame
        Its rejected rows: ``file, line, value, reason, kind``.
    needs_system : bool
        Its rejected codes include undotted ICD-9 codes (MIMIC's ``4019``) that can be read once the user
        says which system they are: ``system="diagnosis"`` or ``"procedure"``.
    summary : str
        What is wrong, without the advice on what to pass (for an interface that asks instead).
    rows : FileRows, optional
        Its counts of rows given and rejected.
    run : str, optional
        The run's name when the input is a run; None for the gold standard.
    each : list of TooManyRejected
        Every input refused with this one (itself first), when several are: the message names them all.
    """

    def __init__(
        self,
        message: str,
        *,
        file: str,
        rejected: pd.DataFrame,
        needs_system: bool,
        summary: str | None = None,
        rows: FileRows | None = None,
        run: str | None = None,
        fix: str = "",
    ):
        super().__init__(message, fix=fix)
        self.summary = summary or message
        self.file = file
        self.rejected = rejected
        self.needs_system = needs_system
        self.rows = rows
        self.run = run
        self.each: list[TooManyRejected] = [self]

    @property
    def fix_share(self) -> float:
        """The smallest round share that would score the file anyway (``--max-rejected``)."""
        share = self.rows.share if self.rows is not None else 1.0
        return next(s for s in _SHARES if s >= share)

    @classmethod
    def for_file(
        cls, rows: FileRows, rejected: pd.DataFrame, bound: RowBound, *, run: str | None = None
    ) -> TooManyRejected:
        """The error for a file refused by ``bound``: how many of its rows cannot be scored, its main reasons
        (the three most frequent kinds) with an example row each, and what to do: name the system of
        undotted codes, or score the rest anyway with a larger share.

        >>> rows = pd.DataFrame({"file": ["g.csv"] * 2, "line": [2, 5], "value": ["zz", "yy"],
        ...                      "reason": ["not a code"] * 2, "kind": ["malformed_code"] * 2})
        >>> print(TooManyRejected.for_file(FileRows("g.csv", 100, 2), rows, RowBound()))
        g.csv: 2 of its 100 rows (2.0%) cannot be scored, more than the 1% allowed, so no score is given. Main reasons:
          - 2 rows like g.csv:2, value 'zz': not a code
        Check that it holds codes of the chosen code system, in the expected columns; or score the other rows anyway: --max-rejected 0.02.
        """
        needs_system = rows.undotted > 0
        allowed = (
            f"{bound.max_share:.0%}"
            if bound.max_share * 100 == round(bound.max_share * 100)
            else f"{bound.max_share:.1%}"
        )
        over = rows.share > bound.max_share
        summary = (
            f"{rows.file}: {rows.rejected:,} of its {rows.given:,} rows ({rows.share:.1%}) cannot be scored"
            + (f", more than the {allowed} allowed" if over else "")
            + ", so no score is given. Main reasons:\n"
            + "\n".join(f"  - {line}" for line in main_reasons(rejected))
        )
        error = cls(
            summary,
            file=rows.file,
            rejected=rejected,
            needs_system=needs_system,
            summary=summary,
            rows=rows,
            run=run,
        )
        error.fix = (
            "say which system its undotted codes are: {system}; or score the other rows anyway: {anyway}"
            if needs_system
            else "check that it holds codes of the chosen code system, in the expected columns; or score the "
            "other rows anyway: {anyway}"
        )
        error.args = (error.words("cli"),)
        return error

    def words(self, where: Where) -> str:
        """The summary, then what to do as a sentence in the words of ``where``: on the command line the share
        to pass (``--max-rejected 0.5``), in the dashboard its button."""
        if not self.fix or "{anyway}" not in self.fix:
            return super().words(where)
        anyway = f"--max-rejected {self.fix_share:g}" if where == "cli" else 'the "Score anyway" button'
        advice = say(self.fix.replace("{anyway}", anyway), where)
        return f"{self.summary}\n{advice[0].upper()}{advice[1:]}."

    @classmethod
    def together(cls, errors: list[TooManyRejected]) -> TooManyRejected:
        """One error for several refused inputs: the first's attributes, every message, all in ``each``."""
        first = errors[0]
        if len(errors) == 1:
            return first
        joined = cls(
            "\n".join(str(e) for e in errors),
            file=first.file,
            rejected=pd.concat([e.rejected for e in errors], ignore_index=True),
            needs_system=any(e.needs_system for e in errors),
            summary="\n".join(e.summary for e in errors),
            rows=first.rows,
            run=first.run,
        )
        joined.each = list(errors)
        return joined


def main_reasons(rejected: pd.DataFrame, n: int = 3) -> list[str]:
    """The ``n`` most frequent kinds of rejected rows, each with its count and its first row as an example
    (``file:line``, value and reason), most frequent first.

    >>> rows = pd.DataFrame({"file": ["g.csv"] * 3, "line": [2, 3, 9], "value": ["4019", "zz", "4011"],
    ...                      "reason": ["ambiguous", "not a code", "ambiguous"], "kind": ["ambiguous", "malformed_code", "ambiguous"]})
    >>> main_reasons(rows)
    ["2 rows like g.csv:2, value '4019': ambiguous", "1 row like g.csv:3, value 'zz': not a code"]
    """
    if not len(rejected):
        return []
    kinds = rejected["kind"].astype(str).to_numpy()
    counts = pd.Series(kinds).value_counts(sort=True)
    out = []
    for kind, count in counts.head(n).items():
        first = rejected.iloc[int(np.argmax(kinds == kind))]
        where = f"{first.file}:{first.line}" if not pd.isna(first.line) else f"{first.file}"
        out.append(
            f"{count:,} row{'s' if count != 1 else ''} like {where}, value {first.value!r}: {first.reason}"
        )
    return out


def check_rows(
    rows: FileRows, rejected: pd.DataFrame, bound: RowBound | None, *, run: str | None = None
) -> None:
    """Raise :class:`TooManyRejected` when ``bound`` refuses a file with these ``rows`` (``rejected``: its
    rejected rows); no bound refuses nothing. The one check every scoring path (in memory, streamed, the
    command line's and the dashboard's) makes of each input file.

    >>> rows = pd.DataFrame({"file": ["g.csv"], "line": [2], "value": ["zz"], "reason": ["not a code"],
    ...                      "kind": ["malformed_code"]})
    >>> check_rows(FileRows("g.csv", 100, 1), rows, RowBound())  # 1% passes at 1%
    >>> check_rows(FileRows("g.csv", 50, 1), rows, RowBound())
    Traceback (most recent call last):
    ...
    cophe_core.scoring.labels.TooManyRejected: g.csv: 1 of its 50 rows (2.0%) cannot be scored, more than the 1% allowed, ...
    """
    if bound is not None and bound.refuses(rows):
        raise TooManyRejected.for_file(rows, rejected, bound, run=run)


def refusals(corpus: Corpus, bound: RowBound | None) -> dict[str, TooManyRejected]:
    """The inputs of ``corpus`` that ``bound`` refuses, by key (``""`` for the gold standard, else the run's
    name), each with its error (:func:`check_rows`).

    >>> from cophe_core.ontology import icd9_ontology
    >>> from cophe_core.inputs.readers import read_labels
    >>> g = read_labels(b"doc_id,code\\n1,401.9\\n2,428.0\\n", name="g.csv")
    >>> c = encode(g, {"A": read_labels(b"doc_id,code\\n1,401.9\\n2,XYZ\\n", name="a.csv")}, icd9_ontology())
    >>> list(refusals(c, RowBound())), len(refusals(c, RowBound())["A"].rejected), refusals(c, RowBound.lifted(0.5))
    (['A'], 1, {})
    """
    out: dict[str, TooManyRejected] = {}
    if bound is None:
        return out
    by_file = corpus.rejected.groupby("file", sort=False) if len(corpus.rejected) else None
    for key, rows in corpus.file_rows.items():
        if not bound.refuses(rows):
            continue
        mine = (
            by_file.get_group(rows.file)
            if by_file is not None and rows.file in by_file.groups
            else corpus.rejected.iloc[:0]
        )
        try:
            check_rows(rows, mine.reset_index(drop=True), bound, run=key or None)
        except TooManyRejected as e:
            out[key] = e
    return out


class NothingScorable(TooManyRejected):
    """An input has rows but none of them can be scored: refused whatever the bound (a file with nothing
    scorable is an error, not a score of zero).

    Attributes are those of :class:`TooManyRejected`.
    """

    def words(self, where: Where) -> str:
        """The summary, then what to do as a sentence, in the words of ``where`` (see :class:`InputError`)."""
        if not self.fix:
            return self.problem
        advice = say(self.fix, where)
        return f"{self.problem} {advice[0].upper()}{advice[1:]}."

    @classmethod
    def of(cls, name: str, n_rows: int, rows: pd.DataFrame, *, needs_system: bool) -> NothingScorable:
        """The error for an input whose ``n_rows`` rows cannot be scored, ``rows`` the rejected ones: it names
        the input and the first rejected value (its file when another, its line when known), and says what
        to do: name the system of undotted codes when ``needs_system``, else check the codes and columns.

        >>> rows = pd.DataFrame({"file": ["g.csv"], "line": [2], "value": ["zz"], "reason": ["not a code"]})
        >>> str(NothingScorable.of("g.csv", 1, rows, needs_system=False)).split("; ")[1]
        "e.g. line 2, value 'zz': not a code. Check that it holds codes of the chosen code system, in the expected columns."
        """
        first = rows.iloc[0]
        advice = (
            "say which system its undotted codes are: {system}"
            if needs_system
            else "check that it holds codes of the chosen code system, in the expected columns"
        )
        summary = (
            f"{name}: none of its {n_rows:,} rows can be scored, so no score is given; e.g. "
            + (f"{first.file}, " if first.file != name else "")
            + (f"line {first.line}, " if not pd.isna(first.line) else "")
            + f"value {excerpt(first.value)!r}: {first.reason}."
        )
        return cls(
            summary,
            file=name,
            rejected=rows,
            needs_system=needs_system,
            summary=summary,
            fix=advice,
            rows=FileRows(name, n_rows, n_rows),
        )


@dataclass(frozen=True, eq=False)
class Corpus:
    """Gold labels and one or more runs, aligned on one document index and ontology.

    Attributes
    ----------
    ontology : Ontology
        The ontology, extended with any unlisted codes found in the inputs.
    docs : ndarray of str
        Every input's documents: the union of the ids of all inputs, sorted. A run is evaluated on its own
        rows of them only (:attr:`rows`).
    gold : csr_matrix
        ``(n_docs, n_nodes)`` 0/1 int8: the gold codes of each document.
    runs : dict of str → csr_matrix
        The same for each named prediction run. A run read as scores (a ``RawScores``, whose
        pairs have a ``score`` column) holds each code's highest score instead (float64, 0 not
        stored); :class:`cophe_core.api.Scoring` replaces it by the decisions.
    rejected : DataFrame
        Every row not scored: ``file, line, value, reason``.
    flagged : DataFrame
        Rows scored with a caveat: ``file, line, value, reason``.
    warnings : list of str
        One line per kind of problem, with counts: :attr:`notes`, then one line per file summing up its
        rejected rows and one its flagged rows.
    notes : list of str
        The warnings that are not about rows listed in ``rejected`` or ``flagged`` (duplicates collapsed,
        documents missing from a run…): what a reader of those tables has not seen yet.
    needs_system : bool
        Some rows were rejected only because their undotted ICD-9 codes need the
        system (diagnosis or procedure) to be read; ask the user, never guess.
    rows : dict of str → ndarray of int
        Per run, the rows of :attr:`docs` it is evaluated on, ascending: the gold standard's documents and
        the run's own (the ids in its input), never another run's, so that a run's figures do not depend
        on which other runs are scored beside it (:meth:`run_rows`).
    files : dict of str → str
        The file name of each input: ``""`` the gold standard's, else each run's.
    note_inputs : list of str
        For each of :attr:`notes`, the input it is about (``""``: the gold standard).
    file_rows : dict of str → FileRows
        Each input's rows given, scored and rejected, by key: ``""`` for the gold standard, else the run's
        name (:func:`refusals` checks them against a :class:`RowBound`).
    """

    ontology: Ontology
    docs: np.ndarray
    gold: sp.csr_matrix
    runs: dict[str, sp.csr_matrix]
    rejected: pd.DataFrame
    flagged: pd.DataFrame
    warnings: list[str] = field(default_factory=list)
    needs_system: bool = False
    notes: list[str] = field(default_factory=list)
    rows: dict[str, np.ndarray] = field(default_factory=dict)
    files: dict[str, str] = field(default_factory=dict)
    note_inputs: list[str] = field(default_factory=list)
    file_rows: dict[str, FileRows] = field(default_factory=dict)

    def run_rows(self, run: str) -> np.ndarray:
        """The rows of :attr:`docs` that ``run`` is evaluated on: the gold standard's documents and the run's
        own, ascending (every row for a corpus built without them). The one place a run's documents are
        chosen: its evaluation, its scores and the per-run warnings all follow it.

        >>> from cophe_core.ontology import icd9_ontology
        >>> from cophe_core.inputs.readers import read_labels
        >>> g = read_labels(b"doc_id,code\\n1,401.9\\n")
        >>> c = encode(g, {"A": read_labels(b"doc_id,code\\n1,401.9\\n"), "B": read_labels(b"doc_id,code\\n2,428.0\\n")},
        ...            icd9_ontology())
        >>> c.docs.tolist(), c.run_rows("A").tolist(), c.run_rows("B").tolist()
        (['1', '2'], [0], [0, 1])
        """
        if run not in self.runs:
            raise KeyError(f"no run {run!r}; the runs are {', '.join(self.runs)}")
        return self.rows.get(run, np.arange(len(self.docs)))

    def _mine(self, run: str) -> set[str]:
        """The input keys whose rows and warnings belong to ``run``: the gold standard and the run."""
        self.run_rows(run)
        return {"", run}

    def run_notes(self, run: str) -> list[str]:
        """The :attr:`notes` about the gold standard and ``run`` only (none of another run's)."""
        if not self.note_inputs:
            return list(self.notes)
        mine = self._mine(run)
        return [n for n, key in zip(self.notes, self.note_inputs) if key in mine]

    def run_rejected(self, run: str) -> pd.DataFrame:
        """The rows of :attr:`rejected` read from the gold standard's file or ``run``'s."""
        return self._own_rows(self.rejected, run)

    def run_flagged(self, run: str) -> pd.DataFrame:
        """The rows of :attr:`flagged` read from the gold standard's file or ``run``'s."""
        return self._own_rows(self.flagged, run)

    def _own_rows(self, rows: pd.DataFrame, run: str) -> pd.DataFrame:
        if not self.files:
            return rows
        files = {self.files[k] for k in self._mine(run) if k in self.files}
        return rows[rows["file"].isin(files).to_numpy()].reset_index(drop=True)

    def run_warnings(self, run: str) -> list[str]:
        """:attr:`warnings` as ``run`` alone would give them: its own and the gold standard's, with the rows
        summed up for those two files only.

        >>> from cophe_core.ontology import icd9_ontology
        >>> from cophe_core.inputs.readers import read_labels
        >>> g = read_labels(b"doc_id,code\\n1,401.9\\n", name="g.csv")
        >>> c = encode(g, {"A": read_labels(b"doc_id,code\\n1,401.9\\n", name="a.csv"),
        ...                "B": read_labels(b"doc_id,code\\n2,XYZ\\n2,428.0\\n", name="b.csv")}, icd9_ontology())
        >>> c.run_warnings("A"), len(c.warnings)
        ([], 3)
        >>> [w.split(";")[0] for w in c.run_warnings("B")][1:]
        ['b.csv: 1 document is not in the gold standard', 'b.csv: 1 row not scored']
        """
        if not self.files:
            return list(self.warnings)
        return (
            self.run_notes(run)
            + summarise_rows(self.run_rejected(run), "not scored")
            + summarise_rows(self.run_flagged(run), "scored with a caveat")
        )


Resolution = Placement  # the name this module gave it first


def resolve_codes(codes: Sequence[str], ontology: Ontology, *, system: str = "auto") -> Resolution:
    """Place code strings as the file readers do: normalised by the code system (``4019`` with
    ``system="diagnosis"`` is 401.9), unlisted but well-formed codes placed under their family, anything else
    rejected with a reason.

    Examples
    --------
    >>> from cophe_core.ontology import icd9_ontology
    >>> r = resolve_codes(["401.9", "428", "XYZ"], icd9_ontology())
    >>> [r.ontology.keys[n] if n >= 0 else None for n in r.nodes]
    ['401.9', '428', None]
    >>> kind, words = r.reasons[2]
    >>> kind, words[:34]
    (<Reason.MALFORMED_CODE: 'malformed_code'>, 'not a well-formed ICD-9-CM code (d')
    >>> r.flags[1]
    (<Reason.NOT_BILLABLE: 'not_billable'>, '428 is not a billable CMS v32 code; placed by its structure at e0')
    """
    return systems.resolve(np.asarray(list(codes), dtype=str), ontology, system)


def _frame(rows: pd.DataFrame, files: np.ndarray, notes: list[tuple[Reason, str]]) -> pd.DataFrame:
    """The rejected or flagged table of ``rows`` (from the files ``files``, one per row), with each row's
    (kind, reason)."""
    return pd.DataFrame(
        {
            "file": files,
            "line": rows["line"].to_numpy(),
            "value": rows["code"].to_numpy(),
            "reason": [text for _, text in notes],
            "kind": [kind for kind, _ in notes],
        },
        columns=REJECTED_COLUMNS,
    )


def encode(
    gold: RawLabels,
    runs: dict[str, RawLabels],
    ontology: Ontology,
    *,
    system: str = "auto",
) -> Corpus:
    """Validate and align gold and runs into a :class:`Corpus`.

    Parameters
    ----------
    gold : RawLabels
    runs : dict of name → RawLabels
    ontology : Ontology
    system : {"auto", "diagnosis", "procedure"}
        For ICD-9: which table undotted codes come from (SPEC §4).

    Examples
    --------
    >>> from cophe_core.ontology import icd9_ontology
    >>> from cophe_core.inputs.readers import read_labels
    >>> c = encode(read_labels(b"doc_id,code\\n1,401.9\\n2,XYZ\\n2,428.0\\n"), {"A": read_labels(b"doc_id,code\\n1,401.1\\n")}, icd9_ontology())
    >>> c.docs.tolist(), c.gold.nnz, c.runs["A"].nnz, c.rejected.value.tolist()
    (['1', '2'], 2, 1, ['XYZ'])
    """
    inputs = _distinct_names({"": gold, **runs})
    gold, runs = inputs[""], {key: raw for key, raw in inputs.items() if key}
    pairs = pd.concat([raw.pairs for raw in inputs.values()], ignore_index=True)
    # each row's input key and file name, repeated from the inputs themselves (not columns of the table: a
    # string column of one value costs as much as any other)
    lengths = [len(raw.pairs) for raw in inputs.values()]
    which = np.repeat(np.array(list(inputs), dtype=object), lengths)
    files = np.repeat(np.array([raw.name for raw in inputs.values()], dtype=object), lengths)
    codes, inverse, placed = _resolve_inputs(pairs["code"], which, list(inputs), ontology, system)
    reasons, flags, onto = placed.reasons, placed.flags, placed.ontology
    node = placed.nodes[inverse]

    bad = node < 0
    rejected = [raw.rejected for raw in inputs.values()]
    if bad.any():
        rejected.append(_frame(pairs.loc[bad], files[bad], [reasons[i] for i in inverse[bad]]))
    undotted = bad & np.isin(inverse, _readable_with_system(codes, np.unique(inverse[bad]), ontology, system))
    _check_scorable(inputs, which, bad, undotted, rejected[-1] if bad.any() else None)
    flagged_mask = np.isin(inverse, list(flags)) & ~bad
    flagged = _frame(pairs.loc[flagged_mask], files[flagged_mask], [flags[i] for i in inverse[flagged_mask]])

    all_docs = np.unique(np.concatenate([raw.docs.astype(str) for raw in inputs.values()]))
    # each distinct id looked up once (factorised where the strings are, no Python object per row)
    doc_codes, doc_uniques = pd.factorize(pairs["doc_id"], use_na_sentinel=False)
    doc_idx = pd.Index(all_docs).get_indexer(np.asarray(doc_uniques, dtype=object))[doc_codes]
    warnings: list[str] = []
    owners: list[str] = []  # the input each warning is about
    matrices: dict[str, sp.csr_matrix] = {}
    counts: dict[str, FileRows] = {}
    for key, raw in inputs.items():
        mine = which == key
        mask = mine & ~bad
        m = sp.csr_matrix(
            (np.ones(mask.sum(), dtype=np.int32), (doc_idx[mask], node[mask])),
            shape=(len(all_docs), onto.n_nodes),
        )
        m.sum_duplicates()
        dups = int(mask.sum() - m.nnz)
        counts[key] = FileRows(
            raw.name,
            given=int(mine.sum()) + len(raw.rejected),
            rejected=int((mine & bad).sum()) + len(raw.rejected),
            duplicates=dups,
            undotted=int((mine & undotted).sum()),
        )
        scored = isinstance(raw, RawScores)  # one test of kind, as in cophe_core.api.score_labels
        if dups:
            owners.append(key)
            warnings.append(duplicates_note(raw.name, dups, scored=scored))
        if scored:
            matrices[key] = _highest_scores(
                doc_idx[mask], node[mask], pairs["score"].to_numpy(dtype=float)[mask], m.shape
            )
            continue
        m.data[:] = 1
        matrices[key] = m.astype(np.int8)
    gold_docs = set(gold.docs.astype(str))
    for key, raw in runs.items():
        run_docs = set(raw.docs.astype(str))
        notes = coverage_notes(raw.name, len(gold_docs - run_docs), len(run_docs - gold_docs))
        owners += [key] * len(notes)
        warnings += notes
    rejected_df = (
        pd.concat([r for r in rejected if len(r)], ignore_index=True)
        if any(len(r) for r in rejected)
        else pd.DataFrame(columns=REJECTED_COLUMNS)
    )
    notes = warnings + [w for raw in inputs.values() for w in raw.warnings]
    owners += [key for key, raw in inputs.items() for _ in raw.warnings]
    gold_ids = gold.docs.astype(str)
    rows = {
        key: np.flatnonzero(np.isin(all_docs, np.union1d(gold_ids, raw.docs.astype(str))))
        for key, raw in runs.items()
    }
    summaries = summarise_rows(rejected_df, "not scored") + summarise_rows(flagged, "scored with a caveat")
    return Corpus(
        onto,
        all_docs,
        matrices.pop(""),
        matrices,
        rejected_df,
        flagged,
        notes + summaries,
        needs_system=bool(undotted.any()),
        notes=notes,
        rows=rows,
        files={key: raw.name for key, raw in inputs.items()},
        note_inputs=owners,
        file_rows=counts,
    )


def _distinct_names(inputs: dict[str, RawLabels]) -> dict[str, RawLabels]:
    """The inputs, those sharing a file name told apart by their role (``test.csv (gold standard)``,
    ``test.csv (run B)``), so that no two files share a warning or a rejected row's ``file``.

    >>> from cophe_core.inputs.readers import read_labels
    >>> same = _distinct_names({"": read_labels(b"doc_id,code\\n1,401.9\\n", name="t.csv"),
    ...                         "B": read_labels(b"doc_id,code\\n1,401.9\\n", name="t.csv")})
    >>> [raw.name for raw in same.values()]
    ['t.csv (gold standard)', 't.csv (run B)']
    """
    names = [raw.name for raw in inputs.values()]
    out = {}
    for key, raw in inputs.items():
        if names.count(raw.name) < 2:
            out[key] = raw
            continue
        name = f"{raw.name} ({'gold standard' if key == '' else f'run {key}'})"
        rejected = raw.rejected.assign(file=name) if len(raw.rejected) else raw.rejected
        out[key] = replace(
            raw, name=name, rejected=rejected, warnings=[w.replace(raw.name, name, 1) for w in raw.warnings]
        )
    return out


def _resolve_inputs(
    values: pd.Series, which: np.ndarray, keys: list[str], ontology: Ontology, system: str
) -> tuple[np.ndarray, np.ndarray, Placement]:
    """Each input's codes placed on its own evidence, in one ontology (:func:`systems.resolve_inputs`): an
    undotted run makes no 684 of the gold standard ambiguous. Returns the distinct (input, code) strings,
    each row's index into them, and their placement (one entry per input and code)."""
    # factorised by hashing where the strings are (Arrow's, under pandas' str dtype): a fixed-width string array
    # would cost every row the longest code's width, and a Python object per row its time
    inverse, unique_codes = pd.factorize(values, sort=True)
    codes = np.asarray(unique_codes, dtype=object).astype(str)
    rows_of = [which == key for key in keys]
    # each input's distinct codes, sorted, and each row's place among them: counted and looked up by index
    # (linear in the rows, where sorting them cost more than the rest of the placement)
    used = [np.flatnonzero(np.bincount(inverse[rows], minlength=len(codes))) for rows in rows_of]
    placed = systems.resolve_inputs([codes[u] for u in used], ontology, system)
    ids = np.empty(len(inverse), dtype=np.int64)
    reasons: dict[int, tuple[Reason, str]] = {}
    flags: dict[int, tuple[Reason, str]] = {}
    at = 0
    place = np.empty(len(codes), dtype=np.int64)
    for rows, u, p in zip(rows_of, used, placed):
        place[u] = np.arange(len(u))
        ids[rows] = at + place[inverse[rows]]
        reasons |= {at + i: r for i, r in p.reasons.items()}
        flags |= {at + i: f for i, f in p.flags.items()}
        at += len(u)
    nodes = np.concatenate([p.nodes for p in placed]) if placed else np.empty(0, np.int64)
    onto = placed[0].ontology if placed else ontology
    return np.concatenate([codes[u] for u in used]), ids, Placement(nodes, reasons, flags, onto)


def _readable_with_system(
    codes: np.ndarray, candidates: np.ndarray, onto: Ontology, system: str
) -> np.ndarray:
    """The indices among ``candidates`` of codes that the code system would read once the user says which
    list they come from (ICD-9's undotted ``4019``): the interface asks rather than guesses."""
    found = systems.system_of(onto)
    if found is None or system != "auto":
        return np.empty(0, dtype=np.int64)
    return np.asarray([i for i in candidates if found.readable_with_system(str(codes[i]))], dtype=np.int64)


def undotted_mask(values: np.ndarray, ontology: Ontology, system: str) -> np.ndarray:
    """Which of ``values`` (rejected codes) the code system would read once the user says which list they
    come from (ICD-9's undotted ``4019``); all False once a system is given. Each distinct value is tested
    once.

    >>> from cophe_core.ontology import icd9_ontology
    >>> undotted_mask(np.array(["4019", "zz", "4019"]), icd9_ontology(), "auto").tolist()
    [True, False, True]
    """
    at, distinct = pd.factorize(pd.Series(values, dtype=object).astype(str))
    found = _readable_with_system(np.asarray(distinct, dtype=str), np.arange(len(distinct)), ontology, system)
    return np.isin(at, found)


def _check_scorable(
    inputs: dict[str, RawLabels],
    which: np.ndarray,
    bad: np.ndarray,
    undotted: np.ndarray,
    bad_rows: pd.DataFrame | None,
) -> None:
    """Raise :class:`NothingScorable` for the first input with rows of which none can be scored.

    An input's rows are its code rows plus the rows its reader rejected; the gold
    standard must also have at least one scorable code.
    """
    for key, raw in inputs.items():
        mine = which == key
        n_rows = int(mine.sum()) + len(raw.rejected)
        if int((mine & ~bad).sum()) or (n_rows == 0 and key != ""):
            continue
        what = "gold standard" if key == "" else "run"
        # this input's rows only (two inputs may share a file name): its reader's and its code rejections
        mine_bad = [bad_rows[which[bad] == key]] if bad_rows is not None else []
        rows = pd.concat(
            [r for r in (raw.rejected, *mine_bad) if len(r)] or [pd.DataFrame(columns=REJECTED_COLUMNS)],
            ignore_index=True,
        )
        needs_system = bool((mine & undotted).any())
        if not n_rows:
            raise NothingScorable(
                f"{raw.name}: the {what} holds no codes; give one row per (document, code)",
                file=raw.name,
                rejected=rows,
                needs_system=False,
            )
        raise NothingScorable.of(raw.name, n_rows, rows, needs_system=needs_system)


def _highest_scores(
    rows: np.ndarray, cols: np.ndarray, scores: np.ndarray, shape: tuple[int, int]
) -> sp.csr_matrix:
    """Documents × nodes scores (float64): a repeated (document, node) keeps its highest score; 0 is not stored."""
    order = np.lexsort((-scores, cols, rows))
    r, c, s = rows[order], cols[order], scores[order]
    first = np.ones(len(r), dtype=bool)
    first[1:] = (r[1:] != r[:-1]) | (c[1:] != c[:-1])
    m = sp.csr_matrix((s[first], (r[first], c[first])), shape=shape)
    m.eliminate_zeros()
    m.sort_indices()
    return m


def duplicates_note(name: str, n: int, *, scored: bool = False) -> str:
    """The note on an input's (document, code) rows given more than once.

    >>> duplicates_note("g.csv", 1), duplicates_note("s.csv", 2, scored=True)
    ('g.csv: 1 duplicate (document, code) row collapsed', 's.csv: 2 duplicate (document, code) rows collapsed; each keeps its highest score')
    """
    return f"{name}: {counted(n, 'duplicate (document, code) row')} collapsed" + (
        "; each keeps its highest score" if scored else ""
    )


def coverage_notes(name: str, only_gold: int, only_run: int) -> list[str]:
    """The notes on a run's documents that only one side has: gold documents it has no row for, and its
    documents the gold standard does not have (each scored against an empty set on the other side).

    >>> coverage_notes("r.csv", 1, 2)
    ['r.csv: 1 gold document has no predictions row; scored as predicting nothing', 'r.csv: 2 documents are not in the gold standard; scored with an empty gold set']
    """
    notes = []
    if only_gold:
        has = "has" if only_gold == 1 else "have"
        notes.append(
            f"{name}: {counted(only_gold, 'gold document')} {has} no predictions row; scored as predicting nothing"
        )
    if only_run:
        are = "is" if only_run == 1 else "are"
        notes.append(
            f"{name}: {counted(only_run, 'document')} {are} not in the gold standard; scored with an empty gold set"
        )
    return notes


def summarise_rows(rows: pd.DataFrame, what: str) -> list[str]:
    """One warning per file of a rejected or flagged table: the count and its first line's row as an example.

    >>> rows = pd.DataFrame({"file": ["g.csv", "g.csv"], "line": [3, 7], "value": ["zz", "yy"],
    ...                      "reason": ["not a code", "not a code"]})
    >>> summarise_rows(rows, "not scored")
    ["g.csv: 2 rows not scored; e.g. line 3, value 'zz': not a code"]
    """
    out = []
    for file, group in rows.groupby("file", sort=False):
        # the example is the first line (rows without a line last): the same whatever order the rows
        # were gathered in, in memory or bucket by bucket
        first = group.iloc[int(np.argmin(group["line"].fillna(np.iinfo(np.int64).max).to_numpy()))]
        out.append(
            f"{file}: {counted(len(group), 'row')} {what}; e.g. line {first.line}, value {excerpt(first.value)!r}: "
            f"{excerpt(first.reason, 300)}"
        )
    return out
