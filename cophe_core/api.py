"""The one-call entry points: files in, evaluations out."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field

from .labels import Corpus, encode
from .metrics import Evaluation, evaluate_corpus
from .ontology import Ontology, load_ontology
from .readers import InputError, RawLabels, Source, read_labels

__all__ = ["Scoring", "score_files", "score_labels"]


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
