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

from .files import InputError, Reason, excerpt
from .ontology import Ontology, systems
from .ontology.base import Placement
from .options import Where, say
from .readers import REJECTED_COLUMNS, RawLabels, RawScores

__all__ = ["Corpus", "NothingScorable", "Reason", "Resolution", "encode", "resolve_codes", "summarise_rows"]


class NothingScorable(InputError):
    """An input has rows but none of them can be scored.

    Attributes
    ----------
    file : str
        The input's name.
    rejected : DataFrame
        Its rejected rows: ``file, line, value, reason``.
    needs_system : bool
        Its codes are undotted ICD-9 codes (MIMIC's ``4019``) that can be read once
        the user says which system they are: ``system="diagnosis"`` or ``"procedure"``.
    summary : str
        What is wrong, without the advice on what to pass (for an interface that asks instead).
    """

    def __init__(
        self,
        message: str,
        *,
        file: str,
        rejected: pd.DataFrame,
        needs_system: bool,
        summary: str | None = None,
        fix: str = "",
    ):
        super().__init__(message, fix=fix)
        self.summary = summary or message
        self.file = file
        self.rejected = rejected
        self.needs_system = needs_system

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
        return cls(summary, file=name, rejected=rows, needs_system=needs_system, summary=summary, fix=advice)


@dataclass(frozen=True, eq=False)
class Corpus:
    """Gold labels and one or more runs, aligned on one document index and ontology.

    Attributes
    ----------
    ontology : Ontology
        The ontology, extended with any unlisted codes found in the inputs.
    docs : ndarray of str
        Evaluated documents: the union of the ids of all inputs, sorted.
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


def _frame(rows: pd.DataFrame, name_col: str, notes: list[tuple[Reason, str]]) -> pd.DataFrame:
    """The rejected or flagged table of ``rows``, with each row's (kind, reason)."""
    return pd.DataFrame(
        {
            "file": rows[name_col].to_numpy(),
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
    >>> from cophe_core.readers import read_labels
    >>> c = encode(read_labels(b"doc_id,code\\n1,401.9\\n2,XYZ\\n2,428.0\\n"), {"A": read_labels(b"doc_id,code\\n1,401.1\\n")}, icd9_ontology())
    >>> c.docs.tolist(), c.gold.nnz, c.runs["A"].nnz, c.rejected.value.tolist()
    (['1', '2'], 2, 1, ['XYZ'])
    """
    inputs = _distinct_names({"": gold, **runs})
    gold, runs = inputs[""], {key: raw for key, raw in inputs.items() if key}
    tagged = [raw.pairs.assign(_input=key, _file=raw.name) for key, raw in inputs.items()]
    pairs = pd.concat(tagged, ignore_index=True)
    # factorised by hashing: a fixed-width string array would cost every row the longest code's width
    inverse, unique_codes = pd.factorize(pairs["code"].to_numpy(dtype=object), sort=True)
    codes = unique_codes.astype(str)
    placed = systems.resolve(codes, ontology, system)
    reasons, flags, onto = placed.reasons, placed.flags, placed.ontology
    node = placed.nodes[inverse]

    bad = node < 0
    rejected = [raw.rejected for raw in inputs.values()]
    if bad.any():
        rejected.append(_frame(pairs.loc[bad], "_file", [reasons[i] for i in inverse[bad]]))
    undotted = bad & np.isin(inverse, _readable_with_system(codes, np.unique(inverse[bad]), ontology, system))
    _check_scorable(inputs, pairs["_input"].to_numpy(), bad, undotted, rejected[-1] if bad.any() else None)
    flagged_mask = np.isin(inverse, list(flags)) & ~bad
    flagged = _frame(pairs.loc[flagged_mask], "_file", [flags[i] for i in inverse[flagged_mask]])

    all_docs = np.unique(np.concatenate([raw.docs.astype(str) for raw in inputs.values()]))
    doc_idx = pd.Index(all_docs).get_indexer(pairs["doc_id"].to_numpy(dtype=object))
    warnings: list[str] = []
    matrices: dict[str, sp.csr_matrix] = {}
    for key, raw in inputs.items():
        mask = (pairs["_input"].to_numpy() == key) & ~bad
        m = sp.csr_matrix(
            (np.ones(mask.sum(), dtype=np.int32), (doc_idx[mask], node[mask])),
            shape=(len(all_docs), onto.n_nodes),
        )
        m.sum_duplicates()
        dups = int(mask.sum() - m.nnz)
        scored = isinstance(raw, RawScores)  # one test of kind, as in cophe_core.api.score_labels
        if dups:
            warnings.append(
                f"{raw.name}: {dups} duplicate (document, code) rows collapsed"
                + ("; each keeps its highest score" if scored else "")
            )
        if scored:
            matrices[key] = _highest_scores(
                doc_idx[mask], node[mask], pairs["score"].to_numpy(dtype=float)[mask], m.shape
            )
            continue
        m.data[:] = 1
        matrices[key] = m.astype(np.int8)
    gold_docs = set(gold.docs.astype(str))
    for raw in runs.values():
        run_docs = set(raw.docs.astype(str))
        if only_gold := len(gold_docs - run_docs):
            warnings.append(
                f"{raw.name}: {only_gold} gold documents have no predictions row; scored as predicting nothing"
            )
        if only_run := len(run_docs - gold_docs):
            warnings.append(
                f"{raw.name}: {only_run} documents are not in the gold standard; scored with an empty gold set"
            )
    rejected_df = (
        pd.concat([r for r in rejected if len(r)], ignore_index=True)
        if any(len(r) for r in rejected)
        else pd.DataFrame(columns=REJECTED_COLUMNS)
    )
    notes = warnings + [w for raw in inputs.values() for w in raw.warnings]
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
    )


def _distinct_names(inputs: dict[str, RawLabels]) -> dict[str, RawLabels]:
    """The inputs, those sharing a file name told apart by their role (``test.csv (gold standard)``,
    ``test.csv (run B)``), so that no two files share a warning or a rejected row's ``file``.

    >>> from cophe_core.readers import read_labels
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


def _readable_with_system(
    codes: np.ndarray, candidates: np.ndarray, onto: Ontology, system: str
) -> np.ndarray:
    """The indices among ``candidates`` of codes that the code system would read once the user says which
    list they come from (ICD-9's undotted ``4019``): the interface asks rather than guesses."""
    found = systems.system_of(onto)
    if found is None or system != "auto":
        return np.empty(0, dtype=np.int64)
    return np.asarray([i for i in candidates if found.readable_with_system(str(codes[i]))], dtype=np.int64)


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
            f"{file}: {len(group)} rows {what}; e.g. line {first.line}, value {excerpt(first.value)!r}: "
            f"{excerpt(first.reason, 300)}"
        )
    return out
