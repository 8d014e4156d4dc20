"""The first page's chart: flat, set-based and CoPHE F1 by level, per run, each a dot with its 95% interval, as
a Vega-Lite specification (drawn by the dashboard with the charting library its page already has, so the first
view needs no plotly.js). Pure functions: tables in, a frame and a dictionary out; no metric maths.

    >>> from cophe_core import score_files
    >>> from cophe_core.stats import bootstrap
    >>> ev = score_files(b"doc_id,code\\n1,401.9\\n2,428.0\\n", {"A": b"doc_id,code\\n1,401.9\\n2,428.1\\n"}).evaluation("A")
    >>> t = levels_points({"A": ev}, {"A": bootstrap(ev, n_resamples=50)})
    >>> t[t.measure == "cophe"][["level", "value"]].round(3).values.tolist()[-2:]
    [['block', 1.0], ['overall', 0.833]]
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

import numpy as np
import pandas as pd

from .compare import levels_side_by_side
from .metrics import MEASURE_WORDS, Figures

__all__ = ["levels_points", "levels_chart_spec", "COLOURS"]

COLOURS = {"flat": "#999999", "set_based": "#56B4E9", "cophe": "#D55E00"}  # as cophe_core.plotting draws them


def _figure(measure: str, level: str) -> str:
    return "flat f1" if measure == "flat" else f"{measure} {level} f1"


def levels_points(
    evals: Mapping[str, Figures], intervals: Mapping[str, pd.DataFrame] | None = None
) -> pd.DataFrame:
    """F1 of each run, measure and level (``overall`` last), with ``low`` and ``high`` from each run's
    :func:`cophe_core.stats.bootstrap` table when given (NaN otherwise, and for a level holding no code).

    Columns ``run, measure, level, value, low, high, empty`` (``empty``: no gold and no predicted code there,
    nothing to score).

    >>> from cophe_core import score_files
    >>> ev = score_files(b"doc_id,code\\n1,401.9\\n", {"A": b"doc_id,code\\n1,401.1\\n"}).evaluation("A")
    >>> p = levels_points({"A": ev})
    >>> p[p.measure == "cophe"][["level", "value", "empty"]].round(3).values.tolist()
    [['e2', nan, True], ['e1', 0.0, False], ['e0', 1.0, False], ['block', 1.0, False], ['overall', 0.667, False]]
    """
    t = levels_side_by_side(dict(evals))
    low = np.full(len(t), np.nan)
    high = np.full(len(t), np.nan)
    for run, table in (intervals or {}).items():
        ci = table.set_index("figure")
        for i in np.flatnonzero(t.run.to_numpy() == run):
            fig = _figure(t.measure.iat[i], t.level.iat[i])
            if fig in ci.index:
                low[i], high[i] = ci.at[fig, "low"], ci.at[fig, "high"]
    empty = (t.tp + t.fp + t.fn == 0).to_numpy()
    return pd.DataFrame(
        {
            "run": t.run,
            "measure": t.measure,
            "level": t.level,
            "value": np.where(empty, np.nan, t.f1),
            "low": np.where(empty, np.nan, low),
            "high": np.where(empty, np.nan, high),
            "empty": empty,
        }
    )


def levels_chart_spec(
    points: pd.DataFrame,
    *,
    level_name: Callable[[str], str] = str,
    measure_name: Callable[[str], str] = lambda m: MEASURE_WORDS[m][0],
    words: Mapping[str, str] | None = None,
    columns: int = 3,
) -> tuple[pd.DataFrame, dict[str, Any]]:
    """(data, Vega-Lite specification) of :func:`levels_points`: a panel per run (``columns`` to a row), the
    levels down the side in their order, a dot per measure with its interval as a line, the value written
    beside it with 3 decimals. Names come from ``level_name``, ``measure_name`` and ``words`` (keys ``run``,
    ``level``, ``measure``, ``f1``, ``low``, ``high``); the data's text is plain (Vega-Lite draws text, not
    HTML).

    >>> from cophe_core import score_files
    >>> ev = score_files(b"doc_id,code\\n1,401.9\\n", {"A": b"doc_id,code\\n1,401.1\\n"}).evaluation("A")
    >>> data, spec = levels_chart_spec(levels_points({"A": ev}), columns=2)
    >>> spec["columns"], spec["facet"]["field"], data.label.tolist()[:3]
    (2, 'run', ['0.000', '–', '0.000'])
    """
    w = {
        "run": "Run",
        "level": "Level",
        "measure": "Measure",
        "f1": "F1",
        "low": "95% low",
        "high": "95% high",
    }
    w |= dict(words or {})
    levels = list(dict.fromkeys(points.level))
    measures = [m for m in COLOURS if m in set(points.measure)]
    data = points.assign(
        level=points.level.map(level_name),
        measure=points.measure.map(measure_name),
        label=[("–" if np.isnan(v) else f"{v:.3f}") for v in points.value],
        text_at=points.high.fillna(points.value).fillna(0.0),  # beside the interval, or the dot without one
    )
    data = data.drop(columns="empty").astype({"run": str})
    y = {
        "field": "level",
        "type": "nominal",
        "sort": [level_name(lv) for lv in levels],
        "title": None,
        "axis": {"labelLimit": 220},
    }
    colour = {
        "field": "measure",
        "type": "nominal",
        "title": w["measure"],
        "scale": {"domain": [measure_name(m) for m in measures], "range": [COLOURS[m] for m in measures]},
        "legend": {"orient": "top", "direction": "horizontal", "labelLimit": 320},
    }
    offset = {"field": "measure", "type": "nominal", "sort": [measure_name(m) for m in measures]}
    x = {
        "type": "quantitative",
        "scale": {"domain": [0, 1.12]},
        "title": w["f1"],
        "axis": {"values": [0, 0.5, 1]},
    }
    tooltip = [
        {"field": "run", "title": w["run"]},
        {"field": "measure", "title": w["measure"]},
        {"field": "level", "title": w["level"]},
        {"field": "value", "title": w["f1"], "format": ".3f"},
        {"field": "low", "title": w["low"], "format": ".3f"},
        {"field": "high", "title": w["high"], "format": ".3f"},
    ]
    spec = {
        "facet": {"field": "run", "type": "nominal", "title": None, "sort": list(dict.fromkeys(data.run))},
        "columns": columns,
        "spacing": 12,
        "spec": {
            "width": 230,
            "height": {"step": 9},
            "layer": [
                {
                    "mark": {"type": "rule", "strokeWidth": 2},
                    "encoding": {
                        "y": y,
                        "yOffset": offset,
                        "x": {**x, "field": "low"},
                        "x2": {"field": "high"},
                        "color": colour,
                    },
                },
                {
                    "mark": {"type": "point", "filled": True, "size": 40},
                    "encoding": {
                        "y": y,
                        "yOffset": offset,
                        "x": {**x, "field": "value"},
                        "color": colour,
                        "tooltip": tooltip,
                    },
                },
                {
                    "mark": {"type": "text", "align": "left", "dx": 6, "fontSize": 10},
                    "encoding": {
                        "y": y,
                        "yOffset": offset,
                        "x": {"field": "text_at", "type": "quantitative"},
                        "text": {"field": "label"},
                        "color": colour,
                    },
                },
            ],
        },
    }
    return data, spec
