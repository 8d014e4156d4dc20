"""The options a message may tell a person to set, in the words of each place that sets them.

One table, :data:`OPTIONS`: each option's command-line flag and the dashboard control that sets it. An
:class:`~cophe_core.InputError` names an option as a ``{field}`` of its ``fix``; the command line (and
``str()`` of the error) says the flag, the dashboard says the control (:func:`say`). So a message is
written once, and neither place rewrites the other's words.
"""

from __future__ import annotations

from typing import Literal, NamedTuple

__all__ = ["Option", "OPTIONS", "Where", "say"]

Where = Literal["cli", "dashboard"]


class Option(NamedTuple):
    """How each place names an option: ``cli`` the flag with its values (and the keyword, where the
    library's callers need it too), ``dashboard`` the control."""

    cli: str
    dashboard: str


OPTIONS: dict[str, Option] = {
    "doc_col": Option("--doc-col", "Reading options › Document id column (sidebar)"),
    "code_col": Option("--code-col", "Reading options › Code column (sidebar)"),
    "system": Option(
        "system='diagnosis' or 'procedure' (command line: --system diagnosis or --system procedure)",
        "Reading options › Undotted ICD-9 codes such as 4019 are (sidebar)",
    ),
    "rule": Option(
        "--threshold T, --top-k K or --tune-on DEV_GOLD DEV_SCORES",
        "Decisions › Threshold or k (sidebar)",
    ),
    "tune_on": Option("--tune-on DEV_GOLD DEV_SCORES", "the Threshold page"),
    "in_memory_rule": Option("--threshold or --top-k", "Decisions › Threshold or k (sidebar)"),
    "save": Option("Save analysis in the dashboard or `cophe score … --save`", "Save analysis"),
    "no_header": Option("pass --no-header", 'tick "First row is data" beside the uploads'),
    "header": Option(
        "pass --header (and --doc-col and --code-col to say which they are)",
        "type the names of its document id and code columns under Reading options",
    ),
}


def say(fix: str, where: Where) -> str:
    """``fix`` with each ``{option}`` field in the words of ``where``.

    >>> say("name the column with {doc_col}", "cli")
    'name the column with --doc-col'
    >>> say("name the column with {doc_col}", "dashboard")
    'name the column with Reading options › Document id column (sidebar)'
    """
    return fix.format_map({key: getattr(option, where) for key, option in OPTIONS.items()})
