"""Words shown to users: a coder's terms by default, the technical terms on request, and one-line helps.

Every label a view shows for a count, a measure or a level comes from here, so that the same thing has the
same name on every page. :func:`term` picks the coder's word ("Extra") or, when the sidebar switch
"Technical terms" is on, the researcher's ("FP"). :func:`columns` renames a table's columns the same way
before it is shown, so no identifier such as ``docs_over`` reaches the screen.
"""

from __future__ import annotations

import numbers
import threading
from collections.abc import Callable
from contextlib import contextmanager
from typing import Any

import pandas as pd
import streamlit as st

from cophe_core.breakdown.compare import figure_parts
from cophe_core.metrics import MEASURE_WORDS
from cophe_core.ontology import Ontology, level_name

TECHNICAL_KEY = "technical_terms"  # the session-state key of the sidebar switch

# key → (coder's word, technical term)
TERMS: dict[str, tuple[str, str]] = {
    "tp": ("Correct", "TP"),
    "fp": ("Extra", "FP"),
    "fn": ("Missed", "FN"),
    "gold": ("Gold codes", "Gold"),
    "predicted": ("Codes written", "Predicted"),
    "precision": ("Precision", "Precision"),
    "recall": ("Recall", "Recall"),
    "f1": ("F1", "F1"),
    "set_f1": ("F1, families only", "Set-based F1"),
    "balance": ("Extra vs missed", "Balance"),
    "error_share": ("Share of the run's errors", "Error share"),
    **MEASURE_WORDS,
    "docs_over": ("Docs with extra", "Docs over"),
    "docs_under": ("Docs with missed", "Docs under"),
    "code": ("Code", "Code"),
    "title": ("Title", "Title"),
    "level": ("Level", "Level"),
    "run": ("Run", "Run"),
    "measure": ("Measure", "Measure"),
    "doc_id": ("Document", "Document"),
    "value": ("Value", "Value"),
    "low": ("95% interval from", "Low (95%)"),
    "high": ("to", "High (95%)"),
    "interval": ("95% interval", "95% CI"),
    "statistic": ("Figure", "Statistic"),
    "macro_precision": ("Precision, per-code average", "Macro precision"),
    "macro_recall": ("Recall, per-code average", "Macro recall"),
    "macro_f1": ("F1, per-code average", "Macro F1"),
    "macro_f1_of_means": ("F1 of the average precision and recall", "Macro F1 of means"),
    "n_codes": ("Codes averaged over", "Codes"),
    "delta": ("Change (B − A)", "Δ (B − A)"),
    "p_value": ("p-value (randomisation)", "p (randomisation)"),
    "p_bootstrap": ("p-value (bootstrap)", "p (bootstrap)"),
}

HELP = {
    "flat": "Exact codes (flat): only the exact code counts; writing 401.1 for 401.9 is simply wrong.",
    "set_based": "Right family (set-based): a code in the right family counts at each level (401.x at the "
    "category), but a family counts once per document however many of its codes there are.",
    "cophe": "Right family and count (CoPHE, Falis et al. 2021): a code in the right family counts at each "
    "level, and so does the number of codes, so writing three codes where the gold standard has "
    "one shows as extra codes.",
    "precision": "Precision: of the codes the model wrote, the share that are right.",
    "recall": "Recall: of the codes in the gold standard, the share the model found.",
    "f1": "F1: one figure from precision and recall (their harmonic mean; 0 when both are 0).",
    "set_f1": "F1 when only the families count, not how many codes are in them (set-based).",
    "tp": "Correct (TP): codes both written by the model and in the gold standard, counted per level.",
    "fp": "Extra (FP): codes the model wrote beyond what the gold standard holds.",
    "fn": "Missed (FN): gold-standard codes the model did not write.",
    "gold": "Codes of this family in the gold standard, over all documents.",
    "predicted": "Codes of this family the model wrote, over all documents.",
    "balance": "Extra vs missed: (extra − missed) / (correct + extra + missed). Red: the model writes too "
    "many codes here; blue: it misses codes; white: balanced.",
    "error_share": "The family's extra plus missed codes, as a share of all the run's extra and missed codes "
    "at this level (error coverage).",
    "docs_over": "Documents in which the model writes more codes of this family than the gold standard.",
    "docs_under": "Documents in which the model writes fewer codes of this family than the gold standard.",
    "level": "Codes are scored at each level of the code system, from the exact codes up to the families "
    "that hold them (category, section, chapter).",
    "macro_f1": "Per-code average F1: the F1 of each code, averaged over the codes (as scikit-learn and "
    "Edin et al. 2023 report it).",
    "interval": "95% interval: the range the figure keeps in 95% of 1,000 bootstrap resamples of the "
    "documents (seed 0). Two runs whose intervals overlap may still differ: Compare runs tests them.",
    "n_codes": "The codes (or families) in the gold standard or the predictions at this level: the average runs "
    "over them.",
    "p_value": "The share of random swaps of the two runs' outputs, document by document, that give a change "
    "at least this large (approximate randomisation test); below 0.05, the change is beyond noise.",
    "p_bootstrap": "The same question answered by the paired bootstrap (shifted to the null).",
    "macro_f1_of_means": "Per-code average, second definition: the F1 of the average precision and the average "
    "recall (CAML, LAAT and the CoPHE scripts report this).",
}

#: measure id → its name, in both vocabularies (see :func:`measure`).
MEASURES = ("flat", "set_based", "cophe")


# the vocabulary fixed by :func:`labeller` while a widget's label is written, whenever Streamlit writes it
_FIXED = threading.local()


def technical() -> bool:
    """Whether the user asked for the technical terms (sidebar switch)."""
    fixed = getattr(_FIXED, "technical", None)
    if fixed is not None:
        return bool(fixed)
    return bool(st.session_state.get(TECHNICAL_KEY, False))


@contextmanager
def _vocabulary(tech: bool):
    before = getattr(_FIXED, "technical", None)
    _FIXED.technical = tech
    try:
        yield
    finally:
        _FIXED.technical = before


def labeller(words: Callable[..., str], *args: Any) -> Callable[[Any], str]:
    """A choice widget's ``format_func``: ``words(*args, value)`` in the vocabulary of the run that draws it.

    Streamlit calls ``format_func`` again after the run that drew the widget: to read back the value the browser
    sends (its label) at the start of the next run, when the switch may already have changed, and in tests.
    Read then, the switch named each label in the next run's words: a label one step behind the switch, or a
    label that matched no option ("unknown level 'Section'"). Fixed here, each label is read back in the words it
    was written in.

    >>> with _vocabulary(True):
    ...     label = labeller(term)
    >>> label("fp")
    'FP'
    """
    tech = technical()

    def label(value: Any) -> str:
        with _vocabulary(tech):
            return words(*args, value)

    return label


def term(key: str) -> str:
    """The word for ``key``: the coder's by default, the technical one when asked for."""
    coder, tech = TERMS[key]
    return tech if technical() else coder


def measure(key: str) -> str:
    """A measure's name; in the coder's words, the technical name follows in brackets."""
    coder, tech = TERMS[key]
    return tech if technical() else (f"{coder} ({tech})" if coder != tech else coder)


def level(onto: Ontology, lv: str) -> str:
    """A level's name (:func:`cophe_core.ontology.level_name`); with the technical terms, its id too."""
    name = level_name(onto, lv)
    return f"{name} ({lv})" if technical() and name != lv else name


def chart_words() -> dict[str, str]:
    """The words of the charts (counts, statistics, measures) in the user's vocabulary."""
    return {**{k: term(k) for k in TERMS}, **{m: measure(m) for m in MEASURES}}


def figure_name(figure: str, onto: Ontology) -> str:
    """A figure id of :mod:`cophe_core.breakdown.stats` in words: ``set_based e0 f1`` is "Right family (Set-based) F1 at
    Category (3 digits)"."""
    m, lv, stat = figure_parts(figure)
    name = f"{measure(m)} {term(stat)}"
    return name if lv is None or lv == "overall" else f"{name} at {level(onto, lv)}"


def columns(df: pd.DataFrame, extra: dict[str, str] | None = None) -> pd.DataFrame:
    """``df`` with its columns renamed for display: known keys by :func:`term`, others by ``extra``;
    a column with neither keeps its name with underscores as spaces, capitalised."""
    extra = extra or {}

    def name(col: object) -> str:
        c = str(col)
        if c in extra:
            return extra[c]
        if c in TERMS:
            return term(c)
        return c.replace("_", " ").capitalize()

    return df.rename(columns={c: name(c) for c in df.columns})


def helps(keys: list[str]) -> str:
    """The one-line helps of several keys, as one paragraph."""
    return " ".join(HELP[k] for k in keys if k in HELP)


#: Transitional: the technical measure names, for views not yet moved to :func:`measure`.
MEASURE = {k: TERMS[k][1] for k in MEASURES}


MINUS = "\u2212"  # the true minus sign, as the charts (d3-format) write it


def number(value: object, kind: str = "count", decimals: int = 3) -> str:
    """A number as the dashboard shows it to people, one style everywhere: counts with thousands separators,
    shares as percentages to one decimal, the true minus "−" for negatives, "+" before a signed change, and
    "–" for no value. ``kind``: ``count``, ``percent`` (a share from 0 to 1), ``decimal`` or ``signed``
    (``decimals`` places). Files keep plain numbers: this is for the screen only.

    >>> number(32520), number(0.5639, "percent"), number(-0.159, "signed"), number(12, "signed", 0)
    ('32,520', '56.4%', '−0.159', '+12')
    >>> number(float("nan"), "decimal"), number(0.05, "decimal", 2)
    ('–', '0.05')
    """
    if not isinstance(value, numbers.Real):
        return "–" if value is None else str(value)
    v = float(value)
    if v != v:  # NaN
        return "–"
    text = {
        "count": f"{v:,.0f}",
        "percent": f"{v:.1%}",
        "decimal": f"{v:,.{decimals}f}",
        "signed": f"{v:+,.{decimals}f}",
    }[kind]
    return text.replace("-", MINUS)


def styled(frame: Any, **kinds: str | tuple[str, int]) -> Any:
    """``frame`` with its columns shown in the one style of :func:`number`: each keyword names a column and its
    kind (``"count"``, ``"percent"``) or a ``(kind, decimals)`` pair. A Styler: the values stay numbers, so
    the table still sorts by them; the column settings then must not give these columns a format of their
    own (Streamlit's would win, with its hyphen and no separators)."""
    style = frame.style
    for col, kind in kinds.items():
        if col in frame.columns:
            style = style.format(_formatter(kind), subset=[col])
    return style


def number_format(kind: str | tuple[str, int]) -> str:
    """The grid's own format (printf, as Streamlit's tables write it) for a column that :func:`number` would
    write as ``kind`` (a kind, or a kind and its decimals), when the column holds no negative and no missing
    number: those need :func:`styled`, for the true minus and the "–". A ``percent`` column must hold percent
    points (a share × 100: :func:`in_percent`), which the format cannot scale.

    The grid then writes the same text as :func:`number`, keeps the numbers (the table sorts by them), and a
    rerun marshals no Styler: on the tree page, the Stylers of its five tables took about 40% of the script's
    time on every focus change.

    >>> number_format("count"), number_format(("decimal", 2)), number_format("percent")
    ('%,.0f', '%,.2f', '%.1f%%')
    """
    k, d = (kind, 3) if isinstance(kind, str) else kind
    formats = {"count": "%,.0f", "percent": "%.1f%%", "decimal": f"%,.{d}f"}
    if k not in formats:
        raise ValueError(f"no grid format writes {k!r} numbers as number() does: use styled()")
    return formats[k]


def number_column(label: str, kind: str | tuple[str, int] = "count", **settings: Any) -> Any:
    """A table column of numbers (``st.column_config.NumberColumn``, with ``settings``) written in the page's
    one style by the grid itself (:func:`number_format`: no negative or missing numbers)."""
    return st.column_config.NumberColumn(label, format=number_format(kind), **settings)


def in_percent(frame: pd.DataFrame, *shares: str) -> pd.DataFrame:
    """``frame`` with its columns ``shares`` (from 0 to 1) in percent points, for :func:`number_format`.

    >>> in_percent(pd.DataFrame({"share": [0.25, 1.0]}), "share").share.tolist()
    [25.0, 100.0]
    """
    return frame.assign(**{c: frame[c] * 100 for c in shares})


def _formatter(kind: str | tuple[str, int]) -> Callable[[object], str]:
    """The :func:`number` of one column's ``kind`` (a kind, or a kind and its decimals)."""
    k, d = (kind, 3) if isinstance(kind, str) else kind
    return lambda v: number(v, str(k), int(d))
