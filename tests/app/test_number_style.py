"""One style for the numbers people read (issue 26, point 8's review): counts with thousands separators,
percentages to one decimal, the true minus "−" for negatives, in every table of the pages that show the most
numbers. A table's numbers reach the screen as the Styler wrote them (its display values), unless a column's
settings give a format of their own, which Streamlit's grid writes with a hyphen and no separators."""

from __future__ import annotations

import json
import re

import pandas as pd
import pyarrow as pa
import pytest

from tests.app.conftest import run_app


def display(table) -> pd.DataFrame | None:
    """What the grid shows in each cell: the Styler's display values, None for a table without them."""
    raw = table.proto.arrow_data.styler.display_values
    return pa.ipc.open_stream(raw).read_all().to_pandas() if raw else None


def faults(table) -> list[str]:
    """The numeric columns of ``table`` shown in another style than the page's one."""
    data, shown = table.value, display(table)
    config = json.loads(table.proto.columns or "{}")
    out = []
    for i, col in enumerate(data.columns):
        values = pd.to_numeric(data[col], errors="coerce") if data[col].dtype != object else None
        if values is None or values.isna().all() or data[col].dtype == bool:
            continue
        settings = config.get(str(col)) or {}
        if settings.get("hidden"):
            continue
        own_format = settings.get("type_config", {}).get("format")
        needs_style = (values < 0).any() or (values.abs() >= 1000).any()
        if shown is None and not own_format and (values % 1 != 0).any():
            out.append(f"{col}: decimals as the grid trims them (0.9979 beside 0.003)")
            continue
        if own_format or shown is None:
            if needs_style and not (own_format or "").endswith("%"):
                out.append(
                    f"{col}: formatted by the grid ({own_format or 'default'}), hyphen or no separators"
                )
            continue
        for v, text in zip(values, shown.iloc[:, i].astype(str)):
            if pd.isna(v):
                continue
            if "-" in text or (v < 0 and "−" not in text):
                out.append(f"{col}: {text!r} has no true minus")
            if abs(v) >= 1000 and text.endswith("%") is False and "," not in text:
                out.append(f"{col}: {text!r} has no thousands separator")
            if text.endswith("%") and not re.fullmatch(r"[−+]?[\d,]+\.\d%", text):
                out.append(f"{col}: {text!r} is not a percentage to one decimal")
        decimals = {
            len(t.split(".")[1]) for t in shown.iloc[:, i].astype(str) if re.fullmatch(r"[−+]?[\d,]+\.\d+", t)
        }
        if len(decimals) > 1:
            out.append(f"{col}: numbers to {sorted(decimals)} decimals in one column")
    return out


@pytest.mark.parametrize(
    "page",
    [None, "views/tree.py", "views/compare.py", "views/metrics.py"],
    ids=["levels", "tree", "compare", "more-metrics"],
)
def test_every_table_shows_its_numbers_in_one_style(page):
    at = run_app(page)
    assert not at.exception
    found = {f"{t.key or i}": f for i, t in enumerate(at.dataframe) if (f := faults(t))}
    assert found == {}


def test_the_levels_table_counts_with_separators():
    at = run_app()
    shown = display(at.dataframe[0])
    assert shown is not None and "32,520" in set(shown.iloc[:, 3])  # siblings, right family, all levels


def test_ranked_shares_are_percentages_to_one_decimal():
    at = run_app("views/tree.py")
    shown = display(at.dataframe[0])
    assert shown is not None and shown.iloc[:, 3].str.fullmatch(r"\d+\.\d%").all(), shown.iloc[:, 3].tolist()
