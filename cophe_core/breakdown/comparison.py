"""One comparison of runs, computed once: what the Compare page, the comparison report and ``cophe compare`` show.

A :class:`Comparison` is the runs scored against one gold standard, a baseline, and two runs looked at in
depth (A and B). Its parts are computed from the evaluations when first asked for, then kept:

- :attr:`Comparison.run_table`: every run's figures with 95% intervals, and each run's difference from the
  baseline, tested, with the p-values corrected by Holm over the runs compared on the same figure
  (:func:`cophe_core.breakdown.stats.compare_runs`);
- :attr:`Comparison.paired`: B − A on every figure, with the paired bootstrap's interval and the
  randomisation test's p-value (:func:`cophe_core.breakdown.stats.paired_significance`), and
  :attr:`Comparison.headline_verdicts` saying what it means for the headline figures;
- :meth:`Comparison.families`: B − A family by family at a level, with Benjamini–Hochberg q-values
  (:func:`cophe_core.breakdown.families.family_changes`);
- :attr:`Comparison.deltas`: B − A by measure and level (:func:`cophe_core.breakdown.compare.level_deltas`).

Every renderer takes these tables as they are, so the same settings give the same numbers everywhere. A part is
kept under a key naming everything it depends on (:meth:`Comparison.part`): a comparison derived with
:meth:`Comparison.with_pair` shares the parts that do not depend on the pair, and a caller may hand its own
store (``memo``), such as a per-session cache.
"""

from __future__ import annotations

from collections.abc import Callable, Hashable, Mapping
from dataclasses import dataclass, field
from typing import Any, TypeVar

import pandas as pd

from ..metrics import Evaluation, Figures
from ..ontology import family_level
from .compare import headlines, level_deltas
from .families import family_changes
from .stats import HEADLINES, Verdict, compare_runs, p_text, paired_significance

__all__ = [
    "Comparison",
    "MAX_RUNS",
    "FAMILY_ROWS",
    "RESAMPLES",
    "SEED",
    "ALPHA",
    "FDR",
    "p_text",
    "Memo",
]

MAX_RUNS = 10  # runs in the runs table: it stays readable, and its resampling under a few seconds
FAMILY_ROWS = 50  # families shown on a page or in a report; the CSV and the JSON hold them all
RESAMPLES = 1000  # bootstrap resamples of the documents for the intervals and the tests
SEED = 0
ALPHA = 0.05  # a difference from the baseline counts when its Holm-corrected p-value is below this
FDR = 0.05  # a family is flagged when its Benjamini–Hochberg q-value is at most this

T = TypeVar("T")
#: A store of computed parts: ``memo(key, compute)`` returns the value kept under ``key``, computing it once.
Memo = Callable[[tuple[Hashable, ...], Callable[[], Any]], Any]


def _dict_memo() -> Memo:
    """A plain dictionary as the store of a comparison's parts (the default: kept as long as the comparison)."""
    store: dict[tuple[Hashable, ...], Any] = {}

    def memo(key: tuple[Hashable, ...], compute: Callable[[], Any]) -> Any:
        if key not in store:
            store[key] = compute()
        return store[key]

    return memo


def families_level(ev: Figures) -> str:
    """The level whose nodes a coder calls families in ``ev``: its code system's family level (ICD's category,
    ``e0``), else the level above the codes (a user hierarchy's only level when it has one).

    >>> from cophe_core import score_files
    >>> families_level(score_files(b"doc_id,code\\n1,401.9\\n", {"A": b"doc_id,code\\n1,401.1\\n"}).evaluation("A"))
    'e0'
    """
    fam = family_level(ev.ontology)
    return fam if fam in ev.levels else ev.levels[min(1, len(ev.levels) - 1)]


@dataclass(frozen=True, eq=False)
class Comparison:
    """Runs scored against one gold standard, compared: with a baseline for the runs table, and runs A and B
    in depth (B − A throughout). Build it with :meth:`of`, which checks the names and fills the defaults.

    >>> from cophe_core import score_files
    >>> gold = b"doc_id,code\\n1,401.9\\n2,428.0\\n3,250.00\\n"
    >>> runs = {"A": gold, "B": b"doc_id,code\\n1,401.9\\n2,401.1\\n3,250.01\\n"}
    >>> s = score_files(gold, runs)
    >>> c = Comparison.of({r: s.evaluation(r) for r in runs}, n_resamples=200)
    >>> c.baseline, c.a, c.b, c.family_level
    ('A', 'A', 'B', 'e0')
    >>> row = c.run_table.set_index(["run", "figure"]).loc[("B", "flat f1")]
    >>> round(float(row.delta), 3), row.verdict
    (-0.667, 'no clear difference')
    >>> c.families().set_index("code").loc["428", ["a_missed", "b_missed", "change_errors"]].tolist()
    [0, 1, 1]
    """

    evals: Mapping[str, Evaluation]
    baseline: str
    a: str
    b: str
    n_resamples: int = RESAMPLES
    seed: int = SEED
    memo: Memo = field(default_factory=_dict_memo, repr=False)

    @classmethod
    def of(
        cls,
        evals: Mapping[str, Evaluation],
        *,
        baseline: str | None = None,
        a: str | None = None,
        b: str | None = None,
        n_resamples: int = RESAMPLES,
        seed: int = SEED,
        memo: Memo | None = None,
    ) -> Comparison:
        """A comparison of ``evals`` (run name → evaluation, in the order shown). ``baseline`` defaults to the
        first run, A to the baseline and B to the first other run. A name that is not a run, or A = B, is a
        ``ValueError`` that names the runs there are."""
        names = list(evals)
        if len(names) < 2:
            raise ValueError(f"a comparison needs two runs or more; there is {len(names)}")
        for what, name in (("baseline", baseline), ("run A", a), ("run B", b)):
            if name is not None and name not in evals:
                raise ValueError(f"{what} {name!r} is not one of the runs: {', '.join(names)}")
        baseline = names[0] if baseline is None else baseline
        a = baseline if a is None else a
        b = next(r for r in names if r != a) if b is None else b
        if a == b:
            raise ValueError(f"runs A and B are both {a!r}: compare two different runs")
        return cls(evals, baseline, a, b, n_resamples, seed, memo or _dict_memo())

    def with_pair(self, a: str, b: str) -> Comparison:
        """The same comparison with other runs A and B (the runs table, already computed, is shared)."""
        return Comparison.of(
            self.evals,
            baseline=self.baseline,
            a=a,
            b=b,
            n_resamples=self.n_resamples,
            seed=self.seed,
            memo=self.memo,
        )

    # ------------------------------------------------------------------------------------------------ parts
    def part(self, name: str, *args: Hashable) -> tuple[tuple[Hashable, ...], Callable[[], Any]]:
        """The key a part is kept under, naming everything it depends on, and the pure computation of it:
        ``"runs"``, ``"paired"`` or ``"families"`` (with its level). For a caller that computes a part
        ahead, in the background, under the same key."""
        n, seed = self.n_resamples, self.seed
        if name == "runs":
            shown, base = tuple(self.runs), self.baseline
            return (
                ("runs_table", shown, base, n, seed),
                lambda: compare_runs(
                    {r: self.evals[r] for r in shown}, baseline=base, n_resamples=n, seed=seed, alpha=ALPHA
                ),
            )
        ea, eb = self.evals[self.a], self.evals[self.b]
        if name == "paired":
            return ("paired", self.a, self.b, n, seed), lambda: paired_significance(
                ea, eb, n_resamples=n, seed=seed
            )
        if name == "families":
            (level,) = args
            return ("family_changes", self.a, self.b, level, n, seed), lambda: family_changes(
                ea, eb, str(level), n_resamples=n, seed=seed, fdr=FDR
            )
        raise ValueError(f"no part {name!r}: runs, paired or families")

    def _get(self, name: str, *args: Hashable) -> Any:
        return self.memo(*self.part(name, *args))

    @property
    def runs(self) -> list[str]:
        """The runs of the runs table: the first :data:`MAX_RUNS`."""
        return list(self.evals)[:MAX_RUNS]

    @property
    def left_out(self) -> list[str]:
        """Runs beyond :data:`MAX_RUNS`, not in the runs table (they can still be A or B)."""
        return list(self.evals)[MAX_RUNS:]

    @property
    def run_table(self) -> pd.DataFrame:
        """:func:`~cophe_core.breakdown.stats.compare_runs` of :attr:`runs` against the baseline: one row per (run,
        figure), ``p_holm`` the p-value of the difference corrected by Holm over the runs on that figure."""
        return self._get("runs")

    @property
    def headlines(self) -> pd.DataFrame:
        """The runs' headline figures without resampling (:func:`~cophe_core.breakdown.compare.headlines`)."""
        return headlines({r: self.evals[r] for r in self.runs})

    @property
    def paired(self) -> pd.DataFrame:
        """B − A on every figure: :func:`~cophe_core.breakdown.stats.paired_significance`."""
        return self._get("paired")

    @property
    def headline_verdicts(self) -> list[Verdict]:
        """What the paired tests say of B − A on the headline figures (:data:`~cophe_core.breakdown.stats.HEADLINES`),
        in that order."""
        by_figure = {v.figure: v for v in Verdict.all_of(self.paired, alpha=ALPHA)}
        return [by_figure[f] for f in HEADLINES]

    @property
    def deltas(self) -> pd.DataFrame:
        """B − A for precision, recall and F1 by measure and level (:func:`~cophe_core.breakdown.compare.level_deltas`)."""
        return level_deltas(self.evals[self.a], self.evals[self.b])

    @property
    def family_level(self) -> str:
        """The level families are compared at unless another is asked for: the code system's family level
        (ICD's category), else the second level."""
        return families_level(self.evals[self.a])

    def families(self, level: str | None = None) -> pd.DataFrame:
        """B − A family by family at ``level`` (default :attr:`family_level`), ranked by the change in errors,
        with Benjamini–Hochberg ``q_value`` and ``flagged`` (q ≤ :data:`FDR`): see
        :func:`~cophe_core.breakdown.families.family_changes`."""
        return self._get("families", level or self.family_level)

    # ----------------------------------------------------------------------------------------------- output
    def to_dict(self, *, figures: list[str] | None = None) -> dict[str, Any]:
        """The comparison as JSON-ready data: settings, the runs table (``figures`` only, default all), the
        paired tests of B − A, and the family table at :attr:`family_level`. An undefined number (the
        baseline's own difference, an untested family) is ``None``, never NaN."""
        runs = self.run_table if figures is None else self.run_table[self.run_table.figure.isin(figures)]
        return {
            "baseline": self.baseline,
            "a": self.a,
            "b": self.b,
            "resamples": self.n_resamples,
            "seed": self.seed,
            "confidence": 0.95,
            "alpha": ALPHA,
            "fdr": FDR,
            "runs": _records(runs),
            "left_out": self.left_out,
            "paired": _records(self.paired),
            "families": {"level": self.family_level, "rows": _records(self.families())},
        }


def _records(table: pd.DataFrame) -> list[dict[str, Any]]:
    """Rows as dictionaries of plain Python values, NaN as None."""
    plain = table.astype(object).where(table.notna(), None)
    return [
        {k: v.item() if hasattr(v, "item") else v for k, v in row.items()} for row in plain.to_dict("records")
    ]
