"""Download buttons whose files exist before the buttons are drawn.

A file made on click (Streamlit's deferred download) is made in another thread while the page may be
rerunning; under load some of those downloads failed ("Deferred file not found") or never started. Here a
file is made during the script run, kept in the session, and handed to the button as bytes; clicking it
does not rerun the page (``on_click="ignore"``), so nothing can cancel it.

- :func:`table` and :func:`file`: made at once, for cheap files (a table as CSV).
- :func:`prepared`: for a costly file (an HTML report, a chart with plotly.js inside, a saved analysis), a
  pill asks for it (a choice the browser sends with every rerun: a plain button's click can be dropped by
  Streamlit, see :func:`_asked`); a spinner while it is made, then a download button with the same words
  and the file's size, each in the other's place. The pill and the download are drawn straight where they
  go, the same element on every run; a placeholder is made only in the run that makes the file.

The files of the buttons a page offers stay referenced from the very start of the session's next run
(:func:`keep_offered`, called first thing by app.py): Streamlit drops a session's references to its files when
a run starts and deletes the unreferenced ones when any session's run ends, so a download asked for while the
page reran, before it drew its button again, found its file deleted (a cancelled download under load).

Files are kept per session under the button's key, while what they were made from is the same (the
``source`` objects, compared by identity, and plain values by equality); at most :data:`KEPT_PER_SESSION`.
"""

from __future__ import annotations

import logging
import re
from collections.abc import Callable
from typing import Any

import streamlit as st
from streamlit import runtime
from streamlit.runtime.scriptrunner import get_script_run_ctx

from cophe_core.base.files import MB
from cophe_core.output.report import safe_csv

STORE = "_downloads"  # session key: button key → (what the file was made from, its bytes)
OFFERED = "_downloads_offered"  # session key: button key → (bytes, file name, type) of the button last drawn
ASKED = "_downloads_asked"  # session key: the keys of the costly files asked for and not made yet
MADE = "_downloads_made"  # session key: button key → how many times its file was made (its pill's generation)
KEPT_PER_SESSION = 12
BOX_PX = 40  # the height of a costly file's box (prepared): a download button's, the tallest of the three
log = logging.getLogger("cophe.dashboard.downloads")  # debug lines: when a file is asked for, made
SMALL = {"type": "tertiary", "icon": ":material/download:"}


def _session() -> str:
    """The session's id, shortened, for the debug log (several sessions' lines interleave)."""
    ctx = get_script_run_ctx(suppress_warning=True)
    return "session " + (ctx.session_id[:8] if ctx is not None else "-")


def _same(a: tuple, b: tuple) -> bool:
    """Whether two ``source`` tuples name the same inputs: objects by identity, plain values by equality."""
    plain = (str, int, float, bool, type(None))
    return len(a) == len(b) and all(
        x is y or (isinstance(x, plain) and type(x) is type(y) and x == y) for x, y in zip(a, b, strict=True)
    )


def _kept(key: str, source: tuple) -> bytes | None:
    entry = st.session_state.get(STORE, {}).get(key)
    return entry[1] if entry is not None and _same(entry[0], source) else None


def _keep(key: str, source: tuple, data: str | bytes) -> bytes:
    store = st.session_state.setdefault(STORE, {})
    store.pop(key, None)
    store[key] = (source, data.encode("utf-8") if isinstance(data, str) else data)
    while len(store) > KEPT_PER_SESSION:  # the least recently made first
        store.pop(next(iter(store)))
    return store[key][1]


def _size(n: int) -> str:
    return f"{n / MB:.1f} MB" if n >= MB else f"{max(n // 1000, 1):,} KB"  # files.MB: one unit everywhere


def safe_file_name(name: str) -> str:
    """A download's file name with only letters, digits, ``.``, ``_`` and ``-`` (anything else becomes ``_``),
    at most 120 characters: run names go into file names, and a run name may hold slashes, which a browser
    refuses in a file name, or Markdown, which a spinner's words would render.

    >>> safe_file_name("nodes_![n](http://x.invalid/n.png).csv")
    'nodes___n__http___x.invalid_n.png_.csv'
    """
    stem, dot, ext = name.rpartition(".")
    if not dot:
        stem, ext = name, ""
    clean = re.sub(r"[^\w.\-]", "_", stem)[: 120 - len(ext) - 1]
    return f"{clean}.{ext}" if dot else clean


def file(
    where: Any,
    label: str,
    make: Callable[[], str | bytes],
    file_name: str,
    mime: str,
    *,
    key: str,
    source: tuple = (),
    **button: Any,
) -> None:
    """A download button whose file is made now (or kept from an earlier run while ``source`` is the same)."""
    data = _kept(key, source)
    if data is None:
        data = _keep(key, source, make())
    _offer(where, label, data, safe_file_name(file_name), mime, key=key, **button)


def table(where: Any, label: str, frame: Any, file_name: str, *, key: str, **button: Any) -> None:
    """A table as CSV, cells that a spreadsheet would run as a formula defused (:func:`safe_csv`)."""
    file(where, label, lambda: safe_csv(frame), file_name, "text/csv", key=key, source=(frame,), **button)


def prepared(
    where: Any,
    label: str,
    make: Callable[[], str | bytes],
    file_name: str,
    mime: str,
    *,
    key: str,
    source: tuple = (),
    help: str | None = None,
    **button: Any,
) -> None:
    """A costly file: a button labelled ``label`` asks for it, then a button "``label`` · size" downloads it.

    The asking button is a one-option pill (:func:`_asked`), not a plain button: a pill is a value the browser
    sends with every rerun, where a plain button's click rides on one request only, which Streamlit drops
    when a second click reaches the server as that request's run starts (the first click was then lost).
    The request is kept in the session until the file is made, so a run cut short by another click makes
    it on the next run. The made file is kept while ``source`` is the same, so the download button stays
    across reruns.
    """
    file_name = safe_file_name(file_name)
    data = _kept(key, source)
    # The pill, the spinner and the download take turns in a box of one height, so that the page around does not
    # move when one replaces another: scrolled to its end, the page moved by the pill's height as the pill left
    # (the browser keeps the end in view), and a click elsewhere pressed before the move and released after it
    # reached nothing (the 8-session load test, issue 29, point 7).
    where = where.container(height=BOX_PX, border=False, width="content", gap=None)
    if data is None:
        if not _asked(where, label, key, help):
            return
        from cophe_dashboard import state  # here: state imports components, which imports this module

        # The spinner, then the download, in the pill's place: a placeholder only in the run that makes the
        # file. A pill (or a download) drawn through a new placeholder on every run was taken off the page and
        # put back whenever the page reran, and a click whose press fell before the swap and its release after
        # reached nothing (the browser sends a pill's choice only for a press and release on the same element).
        where = where.empty()
        with where.container(), st.spinner(f"Preparing {file_name}…"), state.heavy():  # a turn for the making
            log.debug("%s: making %s", _session(), key)
            # made, kept and marked made in one step that a click meanwhile cannot cut short (the click's
            # rerun then finds the file ready)
            data = state.to_the_end(lambda: _made(key, _keep(key, source, make())))
            log.debug("%s: made %s, %d bytes", _session(), key, len(data))
    ready = {"icon": ":material/download:", **button}
    _offer(where, f"{label} · {_size(len(data))}", data, file_name, mime, key=key, help=help, **ready)


def _asked(where: Any, label: str, key: str, help: str | None) -> bool:
    """Whether the file of ``key`` has been asked for: asked earlier and not made yet (a run cut short), or its
    pill is chosen now.

    Streamlit delivers a plain button's click in the one rerun request it sends, and drops that request
    when another arrives between the start of its run and the widgets' update (the run is restarted with
    the newer request): under load, the first of two quick clicks was lost. A pill's choice is a value,
    which the browser sends with every request until the pill is gone, so the next run finds it. Its key
    changes once the file is made, so that a file asked for again (its inputs changed) has a fresh pill.
    """
    asked = st.session_state.setdefault(ASKED, set())
    if key in asked:
        return True
    made = st.session_state.setdefault(MADE, {}).get(key, 0)
    pill = f"{key}_make" if not made else f"{key}_make{made}"
    # Chosen already (the browser sent it with this run): not drawn again, so that the spinner takes its place.
    # Otherwise drawn straight into ``where``: the same element as on the last run, which the browser keeps
    # as it is (see :func:`prepared`).
    chosen = st.session_state.get(pill)
    if chosen is None:
        chosen = where.pills(label, [label], key=pill, help=help, label_visibility="collapsed")
    if chosen is None:
        return False
    log.debug("%s: %s asked for", _session(), key)  # the request reached the server
    asked.add(key)
    return True


def _made(key: str, data: bytes) -> bytes:
    """The file of ``key`` is made (``data``, returned): its request is done, and its next pill is a new one,
    not chosen."""
    st.session_state.setdefault(ASKED, set()).discard(key)
    made = st.session_state.setdefault(MADE, {})
    made[key] = made.get(key, 0) + 1
    return data


def _offer(
    where: Any, label: str, data: bytes, file_name: str, mime: str, *, key: str, **button: Any
) -> None:
    """The download button, its file noted for :func:`keep_offered`."""
    st.session_state.setdefault(OFFERED, {})[key] = (data, file_name, mime)
    where.download_button(label, data, file_name, mime, key=key, on_click="ignore", **button)


def keep_offered() -> None:
    """Reference again, for this run, the files of the download buttons the session's page offers (those still
    kept, :data:`KEPT_PER_SESSION` at most), under the same file ids as their buttons': a click on a button
    drawn by the last run finds its file while this run has not drawn it yet, however long this run takes
    to get there. A file this run does not offer again is let go at the next run's start."""
    offered = st.session_state.get(OFFERED)
    if not offered or not runtime.exists():
        return
    kept = st.session_state.get(STORE, {})
    files = runtime.get_instance().media_file_mgr
    for key in list(offered):
        if key not in kept:
            del offered[key]
            continue
        data, file_name, mime = offered[key]
        files.add(data, mime, f"cophe-offered:{key}", file_name=file_name, is_for_static_download=True)
