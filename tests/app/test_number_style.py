"""One style for the numbers people read (issue 26, point 8's review): counts with thousands separators,
percentages to one decimal, the true minus "−" for negatives, in every table of the pages that show the most
numbers. A table's numbers reach the screen as the Styler wrote them (its display values), or as the grid writes
them with a column's own printf format: Streamlit's sprintf, whose "%,.2f" puts in the separators but writes a
hyphen for a minus and an empty cell for a missing number, so such a column must hold neither."""

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


GRID_FORMAT = re.compile(r"%(,?)\.(\d)f(%%)?")  # the formats texts.number_format gives


def grid_text(fmt: str, value: float) -> str:
    """What the grid writes for ``value`` with the printf format ``fmt`` (one of :data:`GRID_FORMAT`'s)."""
    sep, decimals, percent = GRID_FORMAT.fullmatch(fmt).groups()
    return f"{value:{sep}.{decimals}f}" + ("%" if percent else "")


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
        if own_format and GRID_FORMAT.fullmatch(own_format):  # the page's style, for numbers that allow it
            if (values < 0).any() or values.isna().any():
                out.append(f"{col}: the grid's {own_format} writes a hyphen or an empty cell")
            else:
                out += text_faults(col, values, [grid_text(own_format, v) for v in values])
            continue
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
        out += text_faults(col, values, shown.iloc[:, i].astype(str).tolist())
    return out


def text_faults(col: str, values: pd.Series, texts: list[str]) -> list[str]:
    """How the ``texts`` shown for a column's ``values`` stray from the page's style."""
    out = []
    for v, text in zip(values, texts):
        if pd.isna(v):
            continue
        if "-" in text or (v < 0 and "−" not in text):
            out.append(f"{col}: {text!r} has no true minus")
        if abs(v) >= 1000 and text.endswith("%") is False and "," not in text:
            out.append(f"{col}: {text!r} has no thousands separator")
        if text.endswith("%") and not re.fullmatch(r"[−+]?[\d,]+\.\d%", text):
            out.append(f"{col}: {text!r} is not a percentage to one decimal")
    decimals = {len(t.split(".")[1]) for t in texts if re.fullmatch(r"[−+]?[\d,]+\.\d+", t)}
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
    table = at.dataframe[0]
    share = json.loads(table.proto.columns)["extra_share"]["type_config"]["format"]
    texts = [grid_text(share, v) for v in table.value.extra_share]
    assert all(re.fullmatch(r"\d+\.\d%", t) for t in texts) and 0 < table.value.extra_share.sum() <= 100, (
        texts
    )


def test_the_grid_formats_write_numbers_as_the_page_does():
    """The grid's format for each kind writes what texts.number writes, for numbers neither negative nor
    missing (a share given in percent points)."""
    from cophe_dashboard.texts import number, number_format

    for v in (0, 7, 999, 1000, 32520, 1234567.0, 0.5, 0.125, 12.3456):
        for kind in ("count", ("decimal", 2), ("decimal", 3)):
            k, d = (kind, 3) if isinstance(kind, str) else kind
            assert grid_text(number_format(kind), v) == number(v, k, d)
        assert grid_text(number_format("percent"), v * 100) == number(v, "percent")
    with pytest.raises(ValueError, match="styled"):
        number_format(("signed", 2))
