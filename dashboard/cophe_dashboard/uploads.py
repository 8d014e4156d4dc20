"""Uploaded bytes bounded per session and for the whole server, and freed with the session that held them.

Streamlit keeps every file posted to its upload endpoint (``/_stcore/upload_file/<session>/<file>``) in memory,
in its uploaded-file manager, until the file's widget deletes it or the session ends. The browser keeps to each
uploader's own limit, but a file posted straight to the endpoint only meets ``server.maxUploadSize``, per file,
with no total: five posts of 49-210 MB held 0.8 GB of the server's memory. :func:`install` makes the server's
manager refuse (HTTP 413, nothing stored) a file that would take its session past :data:`SESSION_MB` or the
server past :data:`SERVER_MB`, and give the freed memory back to the system when a closed session's files are
dropped.

Megabytes are :data:`cophe_core.base.files.MB` (10**6 bytes), as everywhere in cophe.
"""

from __future__ import annotations

import logging
import os
import threading
from collections.abc import Iterable

import pyarrow as pa
from starlette.exceptions import HTTPException
from streamlit import runtime
from streamlit.runtime.memory_uploaded_file_manager import MemoryUploadedFileManager
from streamlit.runtime.uploaded_file_manager import UploadedFileRec

from cophe_core.base.files import MB
from cophe_dashboard.loading import MAX_ANALYSIS_MB, MAX_RUN_UPLOAD_MB, MAX_UPLOAD_MB

log = logging.getLogger("cophe.dashboard")


def _bound(variable: str, default: int) -> int:
    """A bound in MB, from the environment when set there (a server's operator, or a test)."""
    value = os.environ.get(variable, "")
    return int(value) if value.strip().isdigit() else default


# What one session may hold at once (950 MB): a saved analysis and a gold standard beside it, or a gold standard,
# a hierarchy and three runs, with room for a file being replaced (the browser posts the new before it deletes the old).
SESSION_MB = _bound("COPHE_UPLOAD_SESSION_MB", MAX_ANALYSIS_MB + MAX_UPLOAD_MB + 2 * MAX_RUN_UPLOAD_MB)
# What all sessions together may hold: four such sessions (3,800 MB).
SERVER_MB = _bound("COPHE_UPLOAD_SERVER_MB", 4 * SESSION_MB)


def _held(files: Iterable[UploadedFileRec]) -> int:
    return sum(len(f.data) for f in files)


class BoundedUploads(MemoryUploadedFileManager):
    """Streamlit's in-memory uploads, with a total bound per session and for the server.

    >>> uploads = BoundedUploads("/upload")
    >>> uploads.add_file("s1", UploadedFileRec("f1", "gold.csv", "text/csv", b"doc_id,code\\n"))
    >>> uploads.held("s1"), uploads.held()
    (12, 12)
    >>> uploads.remove_session_files("s1"); uploads.held()
    0
    """

    session_mb = SESSION_MB
    server_mb = SERVER_MB
    _bounds = threading.Lock()  # the check and the store, as one step for all sessions

    def held(self, session_id: str | None = None) -> int:
        """Bytes held for a session, or for all sessions."""
        storage = dict(self.file_storage)  # a copy: another thread may add or drop a session meanwhile
        if session_id is not None:
            return _held(dict(storage.get(session_id, {})).values())
        return sum(_held(dict(files).values()) for files in storage.values())

    def add_file(self, session_id: str, file: UploadedFileRec) -> None:
        """Store the file, or refuse it (HTTP 413, nothing stored) when it would take its session past
        :attr:`session_mb` or the server past :attr:`server_mb`; a file replacing one of the same id counts
        once."""
        with self._bounds:
            replaced = _held(f for f in [dict(self.file_storage.get(session_id, {})).get(file.file_id)] if f)
            size = len(file.data) - replaced
            for held, bound, whose in (
                (self.held(session_id), self.session_mb, "this session's"),
                (self.held(), self.server_mb, "the server's"),
            ):
                if held + size > bound * MB:
                    log.warning(
                        "upload of %d bytes refused: %s uploads would pass %d MB",
                        len(file.data),
                        whose,
                        bound,
                    )
                    raise HTTPException(
                        status_code=413,
                        detail=f"{file.name}: {whose} uploads would be larger than {bound:,} MB in all; remove a "
                        "file or close another page, then upload again",
                    )
            super().add_file(session_id, file)

    def remove_session_files(self, session_id: str) -> None:
        """Drop a closed session's files, and give the memory they held back to the system."""
        super().remove_session_files(session_id)
        pa.default_memory_pool().release_unused()  # as state.return_freed_memory, after a script run


def install() -> None:
    """Make the running server's uploaded-file manager a :class:`BoundedUploads` (once per process; nothing
    without a server, as under AppTest). The manager is Streamlit's own object, shared by its upload endpoint,
    so it is given the bounded behaviour in place rather than replaced."""
    if not runtime.exists():
        return
    manager = runtime.get_instance().uploaded_file_mgr
    if type(manager) is MemoryUploadedFileManager:
        manager.__class__ = BoundedUploads
        log.info("uploads bounded: %d MB per session, %d MB for the server", SESSION_MB, SERVER_MB)
