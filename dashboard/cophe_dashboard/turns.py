"""The server's one turn to compute: taken by a thread, given back only by that thread, never held forever.

Sessions take turns to compute (see ``state.heavy``). A plain semaphore cannot tell who holds it, so a holder
that never gave it back (a script stopped between taking the turn and the ``try`` that gives it back) kept every
other session waiting for good. A :class:`Turn` knows its holder:

- :meth:`Turn.give_back` is a no-op for a thread that does not hold the turn, so it can sit in a ``finally``
  that runs whether or not the turn was taken;
- a waiter takes over a turn whose holder thread has ended (it can never give it back), or that has been
  held longer than ``max_hold_s``, and logs it.
"""

from __future__ import annotations

import logging
import threading
import time

log = logging.getLogger("cophe.dashboard")


class Turn:
    """One turn, held by at most one thread at a time.

    >>> turn = Turn(max_hold_s=60)
    >>> turn.take(timeout=0), turn.held_by_me, turn.take(timeout=0)
    (True, True, True)
    >>> turn.give_back(); turn.free
    True
    """

    def __init__(self, *, max_hold_s: float) -> None:
        self.max_hold_s = max_hold_s
        self._changed = threading.Condition()
        self._holder: threading.Thread | None = None
        self._since = 0.0

    @property
    def free(self) -> bool:
        """Whether no thread holds the turn."""
        with self._changed:
            return self._holder is None

    @property
    def held_by_me(self) -> bool:
        """Whether the calling thread holds the turn."""
        with self._changed:
            return self._holder is threading.current_thread()

    def take(self, *, timeout: float) -> bool:
        """Take the turn within ``timeout`` seconds (0: only if it is free now); True when this thread holds it.

        A turn whose holder has ended, or has held it longer than ``max_hold_s``, is taken over and the
        take-over is logged: a holder that cannot give the turn back must not stop the server."""
        me = threading.current_thread()
        deadline = time.monotonic() + timeout
        with self._changed:
            while True:
                if self._holder is None or self._holder is me:
                    break
                if self._stuck():
                    log.warning(
                        "the turn to compute held by thread %s for %.0f s (%s) was released so others can go on",
                        self._holder.name,
                        time.monotonic() - self._since,
                        "its thread has ended" if not self._holder.is_alive() else "longer than the bound",
                    )
                    break
                left = deadline - time.monotonic()
                if left <= 0:
                    return False
                self._changed.wait(left)  # woken by a give-back; callers poll with short timeouts
            if self._holder is not me:
                self._holder, self._since = me, time.monotonic()
            return True

    def give_back(self) -> None:
        """Give the turn back if the calling thread holds it; otherwise do nothing (it was never taken, or was
        taken over from this thread)."""
        with self._changed:
            if self._holder is threading.current_thread():
                self._holder = None
                self._changed.notify()

    def _stuck(self) -> bool:
        holder = self._holder
        return holder is not None and (
            not holder.is_alive() or time.monotonic() - self._since > self.max_hold_s
        )
