"""``cophe dashboard``: the same app as ``streamlit run dashboard/app.py``, started by the package's command."""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
import time
import urllib.request

import pytest

from cophe_core import cli


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def test_cophe_dashboard_serves_the_app():
    port = free_port()
    command = [
        sys.executable,
        "-m",
        "cophe_core",
        "dashboard",
        "--server.headless",
        "true",
        "--server.address",
        "127.0.0.1",
        "--server.port",
        str(port),
        "--browser.gatherUsageStats",
        "false",
    ]
    proc = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, start_new_session=True)
    try:
        healthy = False
        deadline = time.monotonic() + 90  # a bound, not a wait: the loop ends as soon as the server answers
        while not healthy and time.monotonic() < deadline and proc.poll() is None:
            try:
                healthy = (
                    urllib.request.urlopen(f"http://127.0.0.1:{port}/_stcore/health", timeout=2).read()
                    == b"ok"
                )
            except OSError:
                time.sleep(0.2)  # polling the health endpoint
        assert healthy, proc.stdout.read().decode() if proc.poll() is not None else "no answer in 90 s"
        page = urllib.request.urlopen(f"http://127.0.0.1:{port}/", timeout=10).read().decode()
        assert "<title>Streamlit</title>" in page or "<title>" in page
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGTERM)  # the command and the Streamlit server it started
        proc.wait(timeout=30)


def test_without_streamlit_or_a_checkout_it_says_what_to_install(monkeypatch, capsys):
    monkeypatch.setattr(cli.importlib.util, "find_spec", lambda name: None)
    assert cli.main(["dashboard"]) == 2
    assert 'pip install "cophe[dashboard]"' in capsys.readouterr().err
    monkeypatch.setattr(cli, "DASHBOARD_APP", cli.DASHBOARD_APP.with_name("missing.py"))
    assert cli.main(["dashboard"]) == 2
    assert "the dashboard comes with a source checkout" in capsys.readouterr().err


@pytest.mark.parametrize("options", [[], ["--server.port", "8600"]])
def test_options_go_to_streamlit(monkeypatch, options):
    seen = []
    monkeypatch.setattr(cli.subprocess, "call", lambda command, cwd: seen.append((command, cwd)) or 0)
    assert cli.main(["dashboard", *options]) == 0
    command, cwd = seen[0]
    assert command[1:5] == ["-m", "streamlit", "run", str(cli.DASHBOARD_APP)] and command[5:] == options
    assert cwd == cli.DASHBOARD_APP.parents[1]  # the project folder: its .streamlit/config.toml applies
