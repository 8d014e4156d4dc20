"""Drawing a figure as SVG, PNG or PDF in a child process of its own, within a bound on its time.

Kaleido draws by driving a Chrome or Chromium over a pipe. A browser that does not start, or stops answering,
would hold the process that asked (a dashboard server, a CLI, a test worker) for ever; Kaleido's own time
limit covers the drawing, not the browser's start. So the drawing runs in a child: it reads the figure's
JSON on stdin, draws it with Kaleido's async API in its main thread, and writes the bytes to a file in a
temporary folder. The parent waits at most ``timeout`` seconds. A child over its time is asked to stop: it
ends its browser's whole process group at once and exits (Kaleido's own close waits on a browser that does
not answer, and choreographer's waits swallow a cancellation, so a cooperative stop took the whole grace); a
child that does not exit within the grace is ended. The child's temporary files (the browser's profile) are
made in the parent's temporary folder, removed after. A fresh child with a fresh browser gets one more try.
Only the figure's JSON and plain options cross: nothing is unpickled, and no shell runs.

    >>> import plotly.graph_objects as go
    >>> from cophe_core.output.figures_export import find_browser
    >>> fig = go.Figure(go.Bar(x=[1], y=["a"]), layout={"width": 200, "height": 100})
    >>> opts = {"format": "svg", "width": 200, "height": 100, "scale": 1}
    >>> draw(fig.to_json(), opts, find_browser())[:4]
    b'<svg'
"""

from __future__ import annotations

import contextlib
import json
import os
import signal
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

__all__ = ["DRAW_TIMEOUT", "ATTEMPTS", "DrawingFailed", "draw"]

#: seconds a child may take to start its browser and draw one figure: Chromium starts in 1–3 s on a quiet
#: machine, and a figure of a few thousand tiles draws in under 10 s on a loaded one
DRAW_TIMEOUT = float(os.environ.get("COPHE_DRAW_TIMEOUT", "90"))
ATTEMPTS = 2  # a browser that hung once is replaced by a fresh one once
STOP_GRACE = 10.0  # seconds a child asked to stop gets to end its browser and exit before it is ended
CLOSE_WAIT = 2.0  # seconds a browser gets to close when asked, before its process group is ended
ERROR_TAIL = 600  # characters of a failed child's error output kept in the message


class DrawingFailed(RuntimeError):
    """Every attempt to draw the figure failed or ran over its time; the message says how."""


def draw(
    fig_json: str,
    opts: dict[str, Any],
    browser: str | None = None,
    *,
    timeout: float = DRAW_TIMEOUT,
    attempts: int = ATTEMPTS,
) -> bytes:
    """The bytes Kaleido draws for the Plotly figure ``fig_json`` with ``opts`` (format, width, height,
    scale), driving ``browser`` (a path; None lets Kaleido look), in a child process that may take at most
    ``timeout`` seconds, tried up to ``attempts`` times. Raises :class:`DrawingFailed`.

    >>> try:
    ...     draw("{}", {"format": "svg"}, "/nonexistent/chromium", attempts=1)
    ... except DrawingFailed as e:
    ...     print(str(e)[:53])
    the drawing process ended with code 1: ChromeNotFound
    """
    failures: list[str] = []
    with tempfile.TemporaryDirectory(prefix="cophe-draw-") as folder:
        out = Path(folder) / "figure"
        scratch = Path(folder) / "tmp"  # the child's temporary folder: whatever it leaves goes with this one
        scratch.mkdir()
        for _ in range(attempts):
            failure = _attempt(fig_json, opts, browser, out, timeout, scratch)
            if failure is None:
                return out.read_bytes()
            failures.append(failure)
    raise DrawingFailed("; then ".join(failures))


def _attempt(
    fig_json: str, opts: dict[str, Any], browser: str | None, out: Path, timeout: float, scratch: Path
) -> str | None:
    """One child's try: None when it drew the figure into ``out``, else what went wrong."""
    # the file run as a script, with -P keeping its folder off the path: the child imports Kaleido, not cophe
    command = [sys.executable, "-P", __file__, str(out), json.dumps(opts), browser or ""]
    # a session of its own: a signal sent to the caller's group (a terminal's Ctrl-C) is not sent to it
    child = subprocess.Popen(
        command,
        stdin=subprocess.PIPE,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        start_new_session=True,
        env={**os.environ, "TMPDIR": str(scratch)},
    )
    try:
        _, err = child.communicate(fig_json.encode("utf-8"), timeout=timeout)
    except subprocess.TimeoutExpired:
        _end(child)
        return f"the browser did not draw the figure within {timeout:g} s"
    if child.returncode == 0 and out.exists():
        return None
    text = err.decode("utf-8", "replace").strip()
    if child.returncode == 1 and text:  # the child's own one-line error comes last, after any warnings
        text = text.splitlines()[-1]
    return f"the drawing process ended with code {child.returncode}: {text[-ERROR_TAIL:] or 'no message'}"


def _end(child: subprocess.Popen[bytes]) -> None:
    """Ask ``child`` to stop (it then ends its browser and exits), and end it if it has not within the grace."""
    with contextlib.suppress(ProcessLookupError):
        child.send_signal(signal.SIGTERM)
    try:
        child.communicate(timeout=STOP_GRACE)
    except subprocess.TimeoutExpired:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(child.pid, signal.SIGKILL)  # its own session, made at start: no other process is in it
        child.communicate()


async def _draw_in_child(fig: dict[str, Any], opts: dict[str, Any], browser: str) -> bytes:
    """Kaleido's drawing; its browser is closed after, and ended at once when the parent sends SIGTERM."""
    import kaleido

    kopts: dict[str, Any] = {"n": 1, "mathjax": False}
    if browser:
        kopts["path"] = browser
    k = kaleido.Kaleido(**kopts)
    # a handler run by the interpreter between bytecodes (a blocked select returns for it), not by the event
    # loop: a drawing that waits on a browser that never answers is stopped all the same
    signal.signal(signal.SIGTERM, lambda signum, frame: _stop(k))
    try:
        # not `async with`: a start that fails while the browser does not answer would skip its close
        await k.open()
        data = await k.calc_fig(fig, opts=opts)
    finally:
        await _close_browser(k)
    return data if isinstance(data, bytes) else str(data).encode("utf-8")


def _stop(k: Any) -> None:
    """The child's SIGTERM: end the browser's process group, then this process at once, with no clean-up to
    wait on (the parent removes the temporary folder the browser's files are in; nothing else is kept)."""
    _end_browser(k)
    os.kill(os.getpid(), getattr(signal, "SIGKILL", signal.SIGTERM))  # Windows: TerminateProcess


async def _close_browser(k: Any) -> None:
    """Close Kaleido's browser, and end its process group if it has not closed within the grace: the browser
    runs in a session of its own, which the parent's signals do not reach."""
    import asyncio  # here: only the drawing child uses it (16 ms of every command's start, through the CLI's parser)

    with contextlib.suppress(Exception):
        await asyncio.wait_for(k.close(), CLOSE_WAIT)
    _end_browser(k)


def _end_browser(k: Any) -> None:
    """End Kaleido's browser's process group (a session of its own) if the browser is still running."""
    browser = getattr(k, "subprocess", None)  # choreographer's documented Popen of the browser
    if browser is not None and browser.poll() is None:
        with contextlib.suppress(ProcessLookupError):
            if hasattr(os, "killpg"):
                os.killpg(browser.pid, signal.SIGKILL)
            else:
                browser.kill()


def _child(argv: list[str]) -> int:
    """The child's side: figure JSON on stdin; ``argv`` = output path, options JSON, browser path."""
    out, opts, browser = argv
    import asyncio

    fig = json.loads(sys.stdin.buffer.read())
    try:
        data = asyncio.run(_draw_in_child(fig, json.loads(opts), browser))
    except Exception as e:  # the parent's message: the error's kind and words, not the child's traceback
        print(f"{type(e).__name__}: {e}", file=sys.stderr)
        return 1
    Path(out).write_bytes(data)
    return 0


if __name__ == "__main__":
    sys.exit(_child(sys.argv[1:]))
