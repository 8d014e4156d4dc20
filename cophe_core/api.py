"""The one-call entry points: files in, evaluations out."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field

from .labels import Corpus, encode
from .metrics import Evaluation, evaluate_corpus
from .ontology import Ontology, load_ontology
from .readers import InputError, RawLabels, Source, read_labels
from .scores import RawScores

__all__ = ["Scoring", "score_files", "score_labels", "decide_run", "read_prediction_scores"]


@dataclass(eq=False)
class Scoring:
    """A validated :class:`~cophe_core.labels.Corpus` with its evaluations cached per run and level."""

    corpus: Corpus
    _detection: str | None = None
    _cache: dict[tuple[str, str], Evaluation] = field(default_factory=dict, repr=False)

    @property
    def run_names(self) -> list[str]:
        return list(self.corpus.runs)

    @property
    def detection(self) -> str | None:
        """How the ontology was chosen, when it was detected from the codes."""
        return self._detection

    def evaluation(self, run: str, *, max_level: str | None = None) -> Evaluation:
        max_level = max_level or self.corpus.ontology.default_level
        key = (run, max_level)
        if key not in self._cache:
            self._cache[key] = evaluate_corpus(self.corpus, run, max_level=max_level)
        return self._cache[key]


def score_labels(
    gold: RawLabels,
    runs: Mapping[str, RawLabels],
    *,
    ontology: str | Ontology = "auto",
    system: str = "auto",
) -> Scoring:
    """Validate already-read labels against an ontology (see :func:`cophe_core.labels.encode`).

    ``ontology="auto"`` detects the code system from the codes of all inputs
    (:func:`cophe_core.ontology.detect.detect_system`) and raises ``InputError``
    when they mix systems or none is recognised.
    """
    detection = None
    if ontology == "auto":
        from .ontology.detect import detect_system

        codes = set().union(*(set(r.pairs.code) for r in (gold, *runs.values())))
        found = detect_system(codes)
        if found.ontology is None:
            raise InputError(f"cannot tell the code system: {found.message}")
        ontology, detection = found.ontology, f"detected {found.message}"
    onto = load_ontology(ontology) if isinstance(ontology, str) else ontology
    return Scoring(encode(gold, dict(runs), onto, system=system), detection)


def score_files(
    gold: Source,
    runs: Mapping[str, Source],
    *,
    ontology: str | Ontology = "auto",
    system: str = "auto",
    doc_col: str | None = None,
    code_col: str | None = None,
) -> Scoring:
    """Read a gold file and named prediction files, and validate them.

    >>> s = score_files(b"doc_id,code\\n1,401.9\\n", {"A": b"doc_id,code\\n1,401.1\\n"})
    >>> round(s.evaluation("A").score("cophe", "e0")["f1"], 3)
    1.0
    """
    kw = {"doc_col": doc_col, "code_col": code_col}
    raw_gold = read_labels(gold, name=_name(gold, "gold"), **kw)
    raw_runs = {name: read_labels(src, name=_name(src, name), **kw) for name, src in runs.items()}
    return score_labels(raw_gold, raw_runs, ontology=ontology, system=system)


def _name(source: Source, fallback: str) -> str | None:
    return fallback if isinstance(source, bytes) else None


def read_prediction_scores(source: Source, *, name: str | None = None, **kw) -> RawScores | None:
    """The file's scores if it holds any (a score column, or one numeric column per code), else None."""
    from .scores import read_scores

    try:
        return read_scores(source, name=name, **kw)
    except InputError:
        return None


def decide_run(
    gold: RawLabels,
    scores: RawScores,
    *,
    threshold: float | None = None,
    top_k: int | None = None,
    tune_on: tuple[Source, Source] | None = None,
    ontology: str | Ontology = "auto",
    system: str = "auto",
    measure: str = "cophe",
    max_level: str | None = None,
) -> tuple[Scoring, dict]:
    """Turn a run's scores into decisions and score them.

    Exactly one of ``threshold``, ``top_k`` or ``tune_on`` = (dev gold, dev
    scores): the threshold that maximises ``measure`` overall F1 on that
    development split is applied to these scores. Returns the :class:`Scoring`
    and a dict with the decision rule and the threshold-free ranking metrics.
    """
    from .scores import decide, read_scores, score_run, tune_threshold

    if sum(x is not None for x in (threshold, top_k, tune_on)) != 1:
        raise InputError("the predictions are scores: give a threshold, a top-k, or a development split to "
                         "tune the threshold on (--threshold T, --top-k K or --tune-on DEV_GOLD DEV_SCORES)")
    info: dict = {}
    if tune_on is not None:
        dev_gold, dev_scores = tune_on
        dev_raw, dev_sc = read_labels(dev_gold), read_scores(dev_scores)
        onto = _ontology_for(ontology, [dev_raw, gold], dev_sc)
        curve = score_run(dev_raw, dev_sc, onto, system=system, max_level=max_level).curve()
        threshold = tune_threshold(curve, measure)
        info["tuned_on"] = {"gold": dev_raw.name, "scores": dev_sc.name, "measure": measure,
                            "curve": curve.to_dict(orient="list")}
    labels = decide(scores, threshold=threshold, top_k=top_k)
    scoring = score_labels(gold, {"pred": labels}, ontology=ontology, system=system)
    run = score_run(gold, scores, scoring.corpus.ontology, system=system,
                    max_level=max_level or scoring.corpus.ontology.default_level)
    info.update({"threshold": threshold, "top_k": top_k, "ranking": run.ranking()})
    return scoring, info


def _ontology_for(ontology: str | Ontology, labels: list[RawLabels], scores: RawScores) -> Ontology:
    if not isinstance(ontology, str):
        return ontology
    if ontology != "auto":
        return load_ontology(ontology)
    from .ontology.detect import detect_system

    codes = set(scores.frame.code).union(*(set(r.pairs.code) for r in labels))
    found = detect_system(codes)
    if found.ontology is None:
        raise InputError(f"cannot tell the code system: {found.message}")
    return load_ontology(found.ontology)
