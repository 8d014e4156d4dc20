"""One cache for the dashboard: a result kept per session, keyed by the function and its arguments, bounded.

Every result a page or a report reuses (a parsed file, a scoring, a restricted evaluation, a table of intervals)
is asked for as ``memo(function, *args, **kwargs)``: the key is the function and the arguments it is called with,
so a page and the report that show the same table find the same entry without agreeing on a key by hand.

- A session's entries live in its session (an upload's results are freed with it, SPEC §9); outside a session
  (a test, a script) one process-wide store stands in.
- Each function keeps its last :data:`MAX_ENTRIES` results (or the bound given by :func:`bounded`), the least
  recently used out.
- Arguments are compared by value when they are values (text, numbers, tuples; a dict or list by its items),
  by identity when they are objects (a Scoring, an Evaluation, a table: the same object, not an equal one), a
  :class:`~cophe_core.breakdown.slices.Slice` by what it selects (its fingerprint). A parameter whose name begins with
  ``_`` is not part of the key (as with ``st.cache_resource``): its value is told by another (a file's bytes by
  their digest).
- :meth:`Memo.ahead` computes a result in a background thread, for :meth:`Memo.get` to find (or wait for, once
  started: a view never waits behind work still queued).
"""

from __future__ import annotations

import inspect
import threading
import weakref
from collections import OrderedDict
from collections.abc import Callable, Hashable, Iterator
from concurrent.futures import Future, ThreadPoolExecutor
from contextlib import AbstractContextManager, nullcontext
from typing import Any, TypeVar

import streamlit as st
from streamlit.runtime.scriptrunner import get_script_run_ctx

from cophe_core.breakdown.slices import Slice

T = TypeVar("T")

MAX_ENTRIES = 64  # results kept per function and session, unless bounded() says otherwise
_BOUNDS: dict[Callable[..., Any], int] = {}
_SESSION_KEY = "_memo"


def bounded(max_entries: int) -> Callable[[Callable[..., T]], Callable[..., T]]:
    """Decorate a function whose results :func:`memo` keeps at most ``max_entries`` of per session."""

    def mark(fn: Callable[..., T]) -> Callable[..., T]:
        _BOUNDS[fn] = max_entries
        return fn

    return mark


class _Same:
    """An object as part of a key: equal to itself only. Held weakly when it can be, so that a key does not keep
    an upload's scoring alive after the session let it go (its entry then matches nothing and ages out)."""

    __slots__ = ("_hash", "ref")

    def __init__(self, obj: object) -> None:
        self._hash = id(obj)
        try:
            self.ref: Callable[[], object] = weakref.ref(obj)
        except TypeError:  # no weak reference to it: held, so its id is never another's
            self.ref = lambda: obj

    def __hash__(self) -> int:
        return self._hash

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, _Same):
            return False
        mine = self.ref()
        return mine is not None and mine is other.ref()


def _part(value: object) -> Hashable:
    """One argument as part of a key (see the module's docstring)."""
    if isinstance(value, Slice):
        return ("slice", value.fingerprint)
    if isinstance(value, dict):
        return ("dict", tuple((_part(k), _part(v)) for k, v in value.items()))
    if isinstance(value, (list, tuple)):
        return (type(value).__name__, tuple(_part(v) for v in value))
    if isinstance(value, (str, bytes, int, float, bool, type(None), frozenset)):
        return value
    return _Same(value)


def _key(fn: Callable[..., Any], args: tuple, kwargs: dict) -> tuple:
    """The key of ``fn(*args, **kwargs)``: the function, then its arguments by name (``_`` ones left out).

    >>> def f(a, _b, c=1): ...
    >>> _key(f, (1, "x"), {"c": 2}) == _key(f, (1, "y"), {"c": 2}) != _key(f, (1, "y"), {})
    True
    """
    try:
        bound = inspect.signature(fn).bind(*args, **kwargs)
        bound.apply_defaults()  # a default given or left out: the same call
        named: list[tuple[object, Any]] = [
            (k, v) for k, v in bound.arguments.items() if not k.startswith("_")
        ]
    except (TypeError, ValueError):  # a builtin without a signature: every argument counts
        named = [*enumerate(args), *sorted(kwargs.items())]
    return (fn, tuple((k, _part(v)) for k, v in named))  # a bound method is equal to the same one


# One thread computes what a user is likely to ask for next (the other slices on offer, the family table at
# the other levels), so that choosing it shows it at once; get() waits for such work rather than repeating it.
_AHEAD = ThreadPoolExecutor(max_workers=1, thread_name_prefix="cophe-ahead")

# Work ahead is a guess, and the thread is the server's: a session that moved on, or closed its tab, leaves its
# guesses queued for nobody, ahead of every other session's. So at most this many wait to start, the newest:
# the oldest waiting is dropped for a new one (a view that asks for it computes it then).
MAX_WAITING_AHEAD = 16
_WAITING: list[Future] = []  # submitted and not yet started, oldest first
_WAITING_LOCK = threading.Lock()


def _submit_ahead(work: Callable[[], T]) -> Future:
    """Queue ``work`` on the background thread, dropping the oldest work still waiting beyond the bound."""
    with _WAITING_LOCK:
        _WAITING[:] = [f for f in _WAITING if not (f.running() or f.done())]
        while len(_WAITING) >= MAX_WAITING_AHEAD:
            _WAITING.pop(0).cancel()
        future = _AHEAD.submit(work)
        _WAITING.append(future)
    return future


class Memo:
    """Results kept by function and arguments, each function's last few (thread-safe: work done ahead stores
    into it from the background thread)."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._stores: dict[
            Callable[..., Any], OrderedDict[tuple, Any]
        ] = {}  # function → key → result, oldest first
        self._ahead: dict[tuple, Future] = {}

    def _store(self, fn: Callable[..., Any]) -> OrderedDict[tuple, Any]:
        return self._stores.setdefault(fn, OrderedDict())

    def _keep(self, fn: Callable[..., Any], key: tuple, value: Any) -> None:
        with self._lock:
            store = self._store(fn)
            store[key] = value
            store.move_to_end(key)
            while len(store) > _BOUNDS.get(fn, MAX_ENTRIES):
                store.popitem(last=False)

    def put(self, value: Any, fn: Callable[..., Any], *args: Any, **kwargs: Any) -> None:
        """Keep ``value`` as the result of ``fn(*args, **kwargs)`` (computed with others, in one go)."""
        self._keep(fn, _key(fn, args, kwargs), value)

    def has(self, fn: Callable[..., Any], *args: Any, **kwargs: Any) -> bool:
        """Whether ``fn(*args, **kwargs)`` is kept already (so a view can skip a spinner)."""
        with self._lock:
            return _key(fn, args, kwargs) in self._store(fn)

    def get(
        self,
        fn: Callable[..., T],
        *args: Any,
        around: Callable[[], AbstractContextManager[Any]] = nullcontext,
        waiting: Callable[[], AbstractContextManager[Any]] = nullcontext,
        **kwargs: Any,
    ) -> T:
        """``fn(*args, **kwargs)``, computed once (inside ``around()``: the turn to compute) and kept; found under
        way in the background (:meth:`ahead`), waited for inside ``waiting()``."""
        key = _key(fn, args, kwargs)
        with self._lock:
            store = self._store(fn)
            if key in store:
                store.move_to_end(key)
                return store[key]
            future = self._ahead.get(key)
        # still waiting behind other work (another session's guesses, perhaps): sooner to compute it here
        if future is not None and future.cancel():
            with self._lock:
                self._ahead.pop(key, None)
        elif future is not None:
            try:
                with waiting():
                    return future.result()  # under way in the background: wait for it
            except Exception:  # noqa: BLE001 - computed again below, where its error reaches the error panel
                pass
        with around():
            value = fn(*args, **kwargs)
        self._keep(fn, key, value)
        return value

    def ahead(
        self, fn: Callable[..., T], *args: Any, then: Callable[[T], object] | None = None, **kwargs: Any
    ) -> None:
        """Start computing ``fn(*args, **kwargs)`` in the background, once, for :meth:`get` to find; ``then``
        is called on the result there too (to fill its own caches). ``fn`` must be pure core work: no
        Streamlit call."""
        key = _key(fn, args, kwargs)

        def work() -> T:
            try:
                value = fn(*args, **kwargs)
                if then is not None:
                    then(value)
                self._keep(fn, key, value)
                return value
            finally:
                with self._lock:
                    self._ahead.pop(key, None)

        with self._lock:
            waiting = self._ahead.get(key)
            if key in self._store(fn) or (waiting is not None and not waiting.cancelled()):
                return
            self._ahead[key] = _submit_ahead(work)

    def count(self, fn: Callable[..., Any]) -> int:
        """How many results of ``fn`` are kept."""
        with self._lock:
            return len(self._store(fn))

    def pending(self) -> Iterator[Future]:
        """The work under way or waiting in the background (for tests to wait on); dropped work is not."""
        with self._lock:
            return iter([f for f in self._ahead.values() if not f.cancelled()])


_PROCESS = Memo()  # outside a session: a test, a script


def session() -> Memo:
    """The current session's memo (the process's outside a Streamlit session)."""
    if get_script_run_ctx(suppress_warning=True) is None:
        return _PROCESS
    memo = st.session_state.get(_SESSION_KEY)
    if memo is None:
        memo = st.session_state[_SESSION_KEY] = Memo()
    return memo
