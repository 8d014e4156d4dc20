"""The one-call entry points: files in, evaluations out.

Inputs are read once each by :func:`cophe_core.inputs.readers.read_input`, which tells
labels from scores by their columns, and validated together by
:func:`cophe_core.scoring.labels.encode`. Runs given as scores become code sets by one
decision rule (:meth:`cophe_core.scoring.scores.ScoredRun.decide`: a threshold or a
top-k); their :class:`~cophe_core.scoring.scores.ScoredRun` stays available for ranking
metrics and threshold curves.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, Any, ClassVar

import numpy as np
import pandas as pd
import scipy.sparse as sp

from .base.files import InputError, Source
from .inputs.readers import RawLabels, RawScores, read_input, read_labels
from .metrics import MEASURE_WORDS, Evaluation, evaluate_corpus
from .ontology import Ontology, choose_ontology
from .scoring.decisions import Rule, check_rule
from .scoring.labels import Corpus, RowBound, TooManyRejected, encode, refusals
from .scoring.scores import ScoredRun, score_run, tune_threshold

if TYPE_CHECKING:
    import networkx as nx

__all__ = ["Scoring", "NotScored", "score_files", "score_labels", "decide_run", "Decision", "TunedOn"]


@dataclass(frozen=True, eq=False)
class TunedOn:
    """Where a threshold was tuned: the development split's files, the measure whose overall F1 it
    maximises, and the curve (threshold against the F1 of each measure) it was read from."""

    gold: str
    scores: str
    measure: str
    curve: pd.DataFrame


@dataclass(frozen=True, eq=False)
class Decision:
    """How :func:`decide_run` turned scores into code sets, and the run's threshold-free ranking metrics.

    Exactly one of ``threshold`` and ``top_k`` is set; ``tuned_on`` says where a tuned threshold came
    from. ``ranking`` maps ``p@k``, ``r@k``, ``micro_auc`` and ``macro_auc`` to values
    (:meth:`~cophe_core.scoring.scores.ScoredRun.ranking`).
    """

    threshold: float | None
    top_k: int | None
    ranking: dict[str, float]
    tuned_on: TunedOn | None = None

    @property
    def rule(self) -> Rule:
        """The rule as ``("threshold", t)`` or ``("top_k", k)``."""
        if self.threshold is not None:
            return ("threshold", self.threshold)
        if self.top_k is not None:
            return ("top_k", self.top_k)
        raise ValueError("a decision holds a threshold or a top-k; this one holds neither")

    def to_dict(self) -> dict[str, Any]:
        """The CLI JSON's ``decision`` object: ``tuned_on`` (when tuned: gold, scores, measure and the
        curve as lists), ``threshold``, ``top_k`` and ``ranking``."""
        out: dict[str, Any] = {}
        if self.tuned_on is not None:
            t = self.tuned_on
            out["tuned_on"] = {
                "gold": t.gold,
                "scores": t.scores,
                "measure": t.measure,
                "curve": t.curve.to_dict(orient="list"),
            }
        return out | {"threshold": self.threshold, "top_k": self.top_k, "ranking": dict(self.ranking)}


@dataclass(frozen=True, eq=False)
class NotScored:
    """The rows of a set of inputs that were not scored (``rejected``) and scored with a caveat (``flagged``),
    each listed once (``file, line, value, reason, kind``), the notes about them, and whether undotted codes
    would be read once told their code system (``needs_system``)."""

    rejected: pd.DataFrame
    flagged: pd.DataFrame
    notes: list[str]
    needs_system: bool = False


@dataclass(eq=False)
class Scoring:
    """A validated :class:`~cophe_core.scoring.labels.Corpus` with its evaluations cached per run and level.

    Attributes
    ----------
    corpus : Corpus
        Gold and runs; a run given as scores holds its decisions under ``rule``.
    scored : dict of str → ScoredRun
        The runs given as scores, with their scores (for ranking metrics and curves), each on the
        documents of the gold standard and of that run only, so that its P@k and AUC do not depend on
        which other runs are loaded.
    rule : tuple, optional
        ``("threshold", t)`` or ``("top_k", k)``: how the scored runs were decided.
    dev : ScoredRun, optional
        The development split a threshold was tuned on (:func:`decide_run`).
    refused : dict of str → TooManyRejected
        The runs left out because too many of their rows cannot be scored (:func:`score_labels` with a
        ``bound``), each with its error: the runs scored beside them are scored as if they had not been
        given.

    Every run, scored or not, is evaluated on its own documents (:meth:`~cophe_core.scoring.labels.Corpus.run_rows`:
    the gold standard's and the run's), so that none of its figures depends on the other runs loaded;
    :func:`~cophe_core.metrics.on_shared_documents` puts two runs on the same documents to compare them.
    """

    corpus: Corpus
    _detection: str | None = None
    scored: dict[str, ScoredRun] = field(default_factory=dict)
    rule: Rule | None = None
    dev: ScoredRun | None = None
    _cache: dict[tuple[str, str], Evaluation] = field(default_factory=dict, repr=False)
    refused: dict[str, TooManyRejected] = field(default_factory=dict)

    # Each document's codes are here: the views that read them (one document, thresholds, the ICM paper's
    # metrics, slices by document) are available; an aggregate analysis (counts only) says False.
    has_codes: ClassVar[bool] = True

    @property
    def run_names(self) -> list[str]:
        return list(self.corpus.runs)

    @property
    def ontology(self) -> Ontology:
        """The ontology the codes were placed in (with the unlisted codes placed)."""
        return self.corpus.ontology

    @property
    def max_level(self) -> str:
        """The highest level evaluated by default: the ontology's."""
        return self.corpus.ontology.default_level

    @property
    def n_documents(self) -> int:
        """Documents of any input (the gold standard's and every run's together)."""
        return len(self.corpus.docs)

    def not_scored(self) -> NotScored:
        """The rows not scored and scored with a caveat, and the notes, of every input."""
        c = self.corpus
        return NotScored(c.rejected, c.flagged, list(c.notes), c.needs_system)

    @property
    def detection(self) -> str | None:
        """How the ontology was chosen, when it was detected from the codes."""
        return self._detection

    def evaluation(self, run: str, *, max_level: str | None = None) -> Evaluation:
        """The :class:`~cophe_core.metrics.Evaluation` of ``run`` up to ``max_level`` (default: the
        ontology's) on the run's own documents (:func:`~cophe_core.metrics.evaluate_corpus`), computed once
        and kept."""
        max_level = self.corpus.ontology.top_level(max_level)
        key = (run, max_level)
        if key not in self._cache:
            self._cache[key] = evaluate_corpus(self.corpus, run, max_level=max_level)
        return self._cache[key]

    def _repr_html_(self) -> str:
        """In Jupyter: each run's overall F1 by measure, and the rows that were not scored."""
        import html

        import pandas as pd

        rows = []
        for run in self.run_names:
            ev = self.evaluation(run)
            rows.append({"run": run, **{m: ev.score(m).f1 for m in ("flat", "set_based", "cophe")}})
        c = self.corpus
        head = (
            f"<p><b>Scoring</b>: {len(c.docs):,} documents, {len(self.run_names)} run(s), ontology "
            f"{html.escape(c.ontology.name)}; {len(c.rejected):,} row(s) not scored (<code>corpus.rejected</code>)"
            "</p>"
        )
        table = pd.DataFrame(rows).rename(columns={m: f"{tech} F1" for m, (_, tech) in MEASURE_WORDS.items()})
        body: str = table.to_html(index=False, float_format="{:.4f}".format)
        return head + body

    def with_rule(self, *, threshold: float | None = None, top_k: int | None = None) -> Scoring:
        """The same validated inputs with the scored runs decided by another rule (nothing is read or
        validated again).

        Examples
        --------
        >>> s = score_files(b"doc_id,code\\n1,401.9\\n", {"A": b"doc_id,code,score\\n1,401.9,0.4\\n"},
        ...                 threshold=0.5)
        >>> s.evaluation("A").score("flat").tp, s.with_rule(threshold=0.3).evaluation("A").score("flat").tp
        (0, 1)
        """
        rule = check_rule(threshold, top_k)
        n_docs = len(self.corpus.docs)
        runs = dict(self.corpus.runs)
        for name, run in self.scored.items():
            # the run's decisions, placed back on the corpus's document rows
            rows = self.corpus.run_rows(name)
            place = sp.csr_matrix(
                (np.ones(len(rows), dtype=np.int8), (rows, np.arange(len(rows)))), shape=(n_docs, len(rows))
            )
            runs[name] = (place @ run.decide(**_keywords(rule))).astype(np.int8).tocsr()
        return Scoring(
            replace(self.corpus, runs=runs),
            self._detection,
            self.scored,
            rule,
            self.dev,
            refused=self.refused,
        )

    def warnings_of(self, run: str) -> list[str]:
        """The warnings about ``run``'s inputs: its own and the gold standard's, not another run's."""
        return self.corpus.run_warnings(run)


def score_labels(
    gold: RawLabels,
    runs: Mapping[str, RawLabels | RawScores],
    *,
    ontology: str | Ontology | nx.DiGraph = "auto",
    system: str = "auto",
    threshold: float | None = None,
    top_k: int | None = None,
    bound: RowBound | None = None,
) -> Scoring:
    """Validate already-read inputs against an ontology (see :func:`cophe_core.scoring.labels.encode`).

    Parameters
    ----------
    gold : RawLabels
    runs : dict of name → RawLabels or RawScores
    ontology : str, Ontology or networkx.DiGraph
        A name or hierarchy file (:func:`cophe_core.ontology.load_ontology`), an
        ontology, or a ``networkx.DiGraph`` with edges parent → child. ``"auto"`` detects the code system from the codes of all inputs
        (:func:`cophe_core.ontology.detect.detect_system`) and raises ``InputError``
        when they mix systems or none is recognised.
    system : {"auto", "diagnosis", "procedure"}
        For ICD-9: which table undotted codes come from.
    threshold, top_k : optional
        The decision rule for the runs given as scores (exactly one is needed when there are any;
        see :mod:`cophe_core.scoring.scores`). Ignored when every run is a code set.
    bound : RowBound, optional
        How much of a file may go unscored (:class:`cophe_core.scoring.labels.RowBound`; default: no bound). A gold
        standard it refuses raises :class:`~cophe_core.scoring.labels.TooManyRejected`; a run it refuses is left
        out and listed in :attr:`Scoring.refused`, the other runs scored as if it had not been given; when
        it refuses every run, that raises too (one error naming each file).

    Examples
    --------
    >>> from cophe_core.inputs.readers import read_input
    >>> s = score_labels(read_input(b"doc_id,code\\n1,401.9\\n"),
    ...                  {"A": read_input(b"doc_id,code,score\\n1,401.9,0.7\\n1,401.1,0.7\\n")}, top_k=1)
    >>> s.rule, s.evaluation("A").score("flat").fp  # the tie goes to 401.1
    (('top_k', 1), 1)
    """
    if isinstance(gold, RawScores):
        raise InputError(
            f"{gold.name}: the gold standard holds scores; give its code sets (doc_id,code rows)"
        )
    scored_names = [name for name, raw in runs.items() if isinstance(raw, RawScores)]
    rule = None
    if scored_names:
        if threshold is None and top_k is None:
            raise InputError(
                f"{', '.join(runs[n].name for n in scored_names)}: holds scores; give a threshold or a "
                "top-k to turn them into code sets"
            )
        rule = check_rule(threshold, top_k)
    onto, detection = choose_ontology(
        ontology, _codes([gold, *runs.values()])
    )  # a name, path, Ontology or DiGraph
    corpus = encode(gold, dict(runs), onto, system=system)
    refused = refusals(corpus, bound)
    if "" in refused or (refused and len(refused) == len(runs)):
        raise TooManyRejected.together(list(refused.values()))  # the gold standard's first
    if refused:  # the other runs, scored as if the refused ones had not been given
        good = {name: raw for name, raw in runs.items() if name not in refused}
        kept = score_labels(
            gold, good, ontology=ontology, system=system, threshold=threshold, top_k=top_k, bound=bound
        )
        kept.refused = refused
        return kept
    rows = {name: corpus.run_rows(name) for name in scored_names}
    scored = {
        name: ScoredRun(corpus.ontology, corpus.docs[r], corpus.gold[r], corpus.runs[name][r], None, corpus)
        for name, r in rows.items()
    }
    scoring = Scoring(corpus, detection, scored)
    return scoring.with_rule(**_keywords(rule)) if rule else scoring


def score_files(
    gold: Source,
    runs: Mapping[str, Source],
    *,
    ontology: str | Ontology | nx.DiGraph = "auto",
    system: str = "auto",
    doc_col: str | None = None,
    code_col: str | None = None,
    threshold: float | None = None,
    top_k: int | None = None,
    bound: RowBound | None = None,
    header: bool | None = None,
) -> Scoring:
    """Read a gold file and named prediction files (code sets or scores), and validate them.

    Each file is read once by :func:`cophe_core.inputs.readers.read_input`; runs given as scores need a
    ``threshold`` or a ``top_k``, and ``bound`` says how much of a file may go unscored (see
    :func:`score_labels`). ``header`` says whether the first row of each CSV/TSV file names its columns
    (None: decided per file from its content, :func:`cophe_core.inputs.readers.headerless_columns`).

    >>> s = score_files(b"doc_id,code\\n1,401.9\\n", {"A": b"doc_id,code\\n1,401.1\\n"})
    >>> round(s.evaluation("A").score("cophe", "e0").f1, 3)
    1.0
    """
    raw_gold = _read(gold, "gold", doc_col, code_col, gold=True, header=header)
    raw_runs = {name: _read(src, name, doc_col, code_col, header=header) for name, src in runs.items()}
    return score_labels(
        raw_gold, raw_runs, ontology=ontology, system=system, threshold=threshold, top_k=top_k, bound=bound
    )


def _name(source: Source, fallback: str) -> str | None:
    return fallback if isinstance(source, bytes) else None


def _read(
    source: RawLabels | Source,
    fallback: str,
    doc_col: str | None,
    code_col: str | None,
    *,
    gold: bool = False,
    header: bool | None = None,
) -> RawLabels:
    """An input already read, or read now: a gold standard as code sets, anything else as its columns say."""
    if isinstance(source, RawLabels):
        return source
    read = read_labels if gold else read_input
    return read(source, name=_name(source, fallback), doc_col=doc_col, code_col=code_col, header=header)


def decide_run(
    gold: RawLabels | Source,
    scores: RawScores | Source,
    *,
    threshold: float | None = None,
    top_k: int | None = None,
    tune_on: tuple[RawLabels | Source, RawScores | Source] | None = None,
    ontology: str | Ontology | nx.DiGraph = "auto",
    system: str = "auto",
    measure: str = "cophe",
    max_level: str | None = None,
    doc_col: str | None = None,
    code_col: str | None = None,
    bound: RowBound | None = None,
    header: bool | None = None,
) -> tuple[Scoring, Decision]:
    """Turn a run's scores into decisions and score them (the run is named ``pred``).

    Exactly one of ``threshold``, ``top_k`` or ``tune_on`` = (dev gold, dev
    scores), already read or files (read with ``doc_col``/``code_col``/``header``): the
    threshold that maximises ``measure`` overall F1 on that development split is
    applied to these scores. Returns the :class:`Scoring` (with the development
    split's :class:`~cophe_core.scoring.scores.ScoredRun` as ``dev``) and the :class:`Decision`: the rule,
    where it was tuned, and the threshold-free ranking metrics. ``bound`` applies to every file, the
    development split's included (:func:`score_labels`).

    Examples
    --------
    >>> from cophe_core.inputs.readers import read_input
    >>> s, info = decide_run(read_input(b"doc_id,code\\n1,401.9\\n"),
    ...                      read_input(b"doc_id,code,score\\n1,401.9,0.8\\n1,428.0,0.3\\n"), threshold=0.5)
    >>> s.evaluation("pred").score("flat").f1, info.rule, info.ranking["p@5"]
    (1.0, ('threshold', 0.5), 0.2)
    """
    if sum(x is not None for x in (threshold, top_k, tune_on)) != 1:
        raise InputError(
            "the predictions are scores: give a threshold, a top-k, or a development split to "
            "tune the threshold on",
            fix="choose one with {rule}",
        )
    gold = _read(gold, "gold", doc_col, code_col, gold=True, header=header)
    read = _read(scores, "scores", doc_col, code_col, header=header)
    if not isinstance(read, RawScores):
        raise InputError(
            f"{read.name}: holds code sets, not scores; a threshold, a top-k and a tuned threshold need a "
            "scores file (doc_id,code,score rows, or one score column per code)",
            fix="give the scores file, or leave out {rule}",
        )
    tuned = None
    dev = None
    detection = None
    if tune_on is not None:
        dev_gold = _read(tune_on[0], "dev_gold", doc_col, code_col, gold=True, header=header)
        dev_scores = _read(tune_on[1], "dev_scores", doc_col, code_col, header=header)
        if not isinstance(dev_scores, RawScores):
            raise InputError(
                f"{dev_scores.name}: holds code sets, not scores; tuning needs the development "
                "split's scores (doc_id,code,score rows, or one score column per code)",
                fix="give the development split's scores to {tune_on}",
            )
        ontology, detection = choose_ontology(ontology, _codes([dev_gold, gold, dev_scores, read]))
        dev = score_run(dev_gold, dev_scores, ontology, system=system, max_level=max_level, bound=bound)
        curve = dev.curve()
        threshold = tune_threshold(curve, measure)
        tuned = TunedOn(dev_gold.name, dev_scores.name, measure, curve)
    scoring = score_labels(
        gold, {"pred": read}, ontology=ontology, system=system, threshold=threshold, top_k=top_k, bound=bound
    )
    scoring.dev = dev
    if detection:
        scoring._detection = detection
    return scoring, Decision(threshold, top_k, scoring.scored["pred"].ranking(), tuned)


def _keywords(rule: Rule) -> dict[str, Any]:
    """``("threshold", 0.5)`` → ``{"threshold": 0.5}``: a checked rule as the keywords of ``decide``."""
    return {rule[0]: rule[1]}


def _codes(inputs: list[RawLabels]) -> set[str]:
    """The distinct codes of the inputs, for detecting their code system (distinct first: no Python object per
    row)."""
    return set().union(*(r.pairs.code.unique().tolist() for r in inputs))
