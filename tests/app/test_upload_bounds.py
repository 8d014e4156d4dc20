"""Uploaded bytes bounded per session and for the server (issue 29, point 8): files posted straight to Streamlit's
upload endpoint bypass the browser's per-file limit, and were kept with no total."""

from __future__ import annotations

import pytest
from starlette.exceptions import HTTPException
from streamlit.runtime.memory_uploaded_file_manager import MemoryUploadedFileManager
from streamlit.runtime.uploaded_file_manager import UploadedFileRec

import tests.app.conftest  # noqa: F401 (the dashboard's folder on the path)
from cophe_core.base.files import MB


def uploads(session_mb: int, server_mb: int):
    from cophe_dashboard import uploads as module

    manager = MemoryUploadedFileManager("/_stcore/upload_file")
    manager.__class__ = type(
        "Bounded", (module.BoundedUploads,), {"session_mb": session_mb, "server_mb": server_mb}
    )
    return manager


def rec(file_id: str, n: int) -> UploadedFileRec:
    return UploadedFileRec(file_id, f"{file_id}.csv", "text/csv", b"x" * n)


def test_a_session_holds_at_most_its_bound():
    m = uploads(session_mb=2, server_mb=10)
    m.add_file("a", rec("f1", MB))
    m.add_file("a", rec("f2", MB))  # exactly 2 MB of 10**6 bytes: taken
    with pytest.raises(HTTPException) as e:
        m.add_file("a", rec("f3", 1))
    assert e.value.status_code == 413
    assert e.value.detail.startswith("f3.csv: this session's uploads would be larger than 2 MB in all")
    assert m.held("a") == 2 * MB and [f.file_id for f in m.get_files("a", ["f1", "f2", "f3"])] == ["f1", "f2"]
    m.add_file("b", rec("f3", MB))  # another session has its own bound
    m.add_file("a", rec("f2", MB))  # a file posted again under its id replaces it: counted once


def test_the_server_holds_at_most_its_bound_and_a_closed_session_frees_its_share():
    m = uploads(session_mb=2, server_mb=3)
    for session in "abc":
        m.add_file(session, rec("f", MB))
    with pytest.raises(HTTPException) as e:
        m.add_file("d", rec("f", 1))
    assert "the server's uploads would be larger than 3 MB" in e.value.detail
    assert m.held() == 3 * MB and m.get_files("d", ["f"]) == []
    m.remove_session_files("a")  # Streamlit's call when a session ends
    assert m.held() == 2 * MB and "a" not in m.file_storage
    m.add_file("d", rec("f", MB))


def test_install_bounds_the_running_servers_own_manager(monkeypatch):
    from streamlit import runtime

    from cophe_dashboard import uploads as module

    manager = MemoryUploadedFileManager("/_stcore/upload_file")
    manager.add_file("a", rec("before", 5))

    class Running:
        uploaded_file_mgr = manager

    monkeypatch.setattr(runtime, "exists", lambda: True)
    monkeypatch.setattr(runtime, "get_instance", lambda: Running)
    module.install()
    module.install()  # once per process, whatever the number of script runs
    assert type(manager) is module.BoundedUploads and manager.held("a") == 5
    assert (
        module.SESSION_MB * MB >= 500 * MB + 50 * MB
    )  # a saved analysis and a gold standard fit in one session
