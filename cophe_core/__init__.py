"""cophe_core: flat, set-based and CoPHE evaluation of hierarchical multi-label classifiers.

Start with :func:`score_files`, which reads a gold file and prediction runs,
validates every row against an ontology, and returns a :class:`Scoring` whose
:meth:`~Scoring.evaluation` gives per-level, per-node and per-document tables.
"""

__version__ = "0.1.0"  # the one place the version is written (pyproject.toml reads it)

from typing import TYPE_CHECKING

# First, before any of the core's modules imports scipy.sparse: it imports scipy.sparse without numpy's test
# and Fortran tools, which SciPy's array-API layer would import for nothing (cophe_core/base/lean.py).
from .base import lean  # noqa: F401

# isort: split
from .api import Scoring, score_files, score_labels
from .base.files import InputError
from .inputs.readers import RawLabels, RawScores, read_input, read_labels
from .metrics import Evaluation, evaluate, prf
from .ontology import Ontology, load_ontology
from .scoring.labels import Corpus, NothingScorable, encode

if TYPE_CHECKING:  # loaded on first use: see __getattr__
    from .scale.accumulate import AccumulatedEvaluation, Accumulator

__all__ = [
    "AccumulatedEvaluation",
    "Accumulator",
    "Corpus",
    "Evaluation",
    "InputError",
    "NothingScorable",
    "Ontology",
    "RawLabels",
    "RawScores",
    "Scoring",
    "encode",
    "evaluate",
    "load_ontology",
    "prf",
    "read_input",
    "read_labels",
    "score_files",
    "score_labels",
]


def __getattr__(name: str) -> object:
    """The accumulator (:mod:`cophe_core.scale.accumulate`) on first use: it needs the streamed path's modules
    (pyarrow's dataset scanner), which a plain ``import cophe_core`` does not load."""
    if name in ("Accumulator", "AccumulatedEvaluation"):
        from .scale import accumulate

        return getattr(accumulate, name)
    raise AttributeError(f"module 'cophe_core' has no attribute {name!r}")
