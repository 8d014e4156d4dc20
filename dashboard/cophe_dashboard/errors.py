"""Errors shown to the user: whose fault it is, and where the details are.

Two kinds, never confused:

- an :class:`~cophe_core.InputError` is about the user's input; its message names the file, line and value
  and says what to do, and is shown as it is;
- anything else is a fault of cophe itself. The page says so, shows the message and an error reference, and
  says where the server log with the full traceback is. It never tells the user to check their files.

The log is a file in the system's temporary directory (nothing is written elsewhere), as well as the
terminal that runs ``streamlit run``.
"""

from __future__ import annotations

import logging
import tempfile
import uuid
from collections.abc import Callable
from functools import wraps
from pathlib import Path
from typing import ParamSpec, TypeVar

import streamlit as st

from cophe_core import InputError
from cophe_dashboard.components import md

LOG_PATH = Path(tempfile.gettempdir()) / "cophe" / "dashboard.log"
log = logging.getLogger("cophe.dashboard")

P = ParamSpec("P")
R = TypeVar("R")
_HANDLER = "cophe.dashboard.file"  # the name of the log file's handler, added once per server process


def setup_logging() -> None:
    """Send the dashboard's log to :data:`LOG_PATH` too (once per server process)."""
    if any(h.name == _HANDLER for h in log.handlers):
        return
    LOG_PATH.parent.mkdir(parents=True, exist_ok=True)
    handler = logging.FileHandler(LOG_PATH, encoding="utf-8")
    handler.setFormatter(logging.Formatter("%(asctime)s %(levelname)s %(name)s: %(message)s"))
    handler.set_name(_HANDLER)
    log.addHandler(handler)
    log.setLevel(logging.INFO)


def fault_message(exc: BaseException, ref: str) -> str:
    """The words shown for an unexpected error: ours, with the message and where the log is.

    >>> fault_message(KeyError("x"), "ab12").startswith("**This is a fault in cophe, not in your files.**")
    True
    """
    return (
        f"**This is a fault in cophe, not in your files.** {md(type(exc).__name__)}: "
        f"{md(exc)}  \nThe full traceback is in the server log, `{LOG_PATH}` (and in the terminal "
        f"running `streamlit run`), under error reference `{ref}`. Please report it with that part of the "
        "log; reloading the page or choosing other options may get you going meanwhile."
    )


def said(exc: BaseException) -> str:
    """An error's message in the dashboard's words: an :class:`~cophe_core.InputError` names the control
    that sets an option, never its command-line flag (:data:`cophe_core.base.options.OPTIONS`).

    >>> said(InputError("g.csv: no code column", fix="give its name in {code_col}"))
    'g.csv: no code column; give its name in Reading options › Code column (sidebar)'
    """
    return exc.words("dashboard") if isinstance(exc, InputError) else str(exc)


def show_error(exc: BaseException, where: str) -> None:
    """Draw ``exc`` as a panel: the user's input problem as it is, anything else as our fault (logged)."""
    if isinstance(exc, InputError):
        st.error(md(said(exc)))
        return
    ref = uuid.uuid4().hex[:8]
    log.exception("unexpected error in %s (error reference %s)", where, ref)
    st.error(fault_message(exc, ref), icon=":material/bug_report:")


def guarded(render: Callable[P, R]) -> Callable[P, R | None]:
    """Run a view function; if it fails, draw :func:`show_error` instead of a traceback."""

    @wraps(render)
    def wrapper(*args: P.args, **kwargs: P.kwargs) -> R | None:
        try:
            return render(*args, **kwargs)
        except Exception as exc:
            show_error(exc, render.__name__)
            return None

    return wrapper
