"""``cophe dashboard``: the same app as ``streamlit run dashboard/app.py``, started by the package's command."""

from __future__ import annotations

import contextlib
import os
import shutil
import signal
import socket
import subprocess
import sys
import time
import urllib.request
import zipfile
from pathlib import Path

import pytest

from cophe_core import cli
from tests.conftest import ROOT


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def start_dashboard() -> tuple[subprocess.Popen, int]:
    """``cophe dashboard`` on a free port in a session of its own, once its health endpoint answers (a bound of
    90 s, not a wait: the poll ends as soon as the server answers)."""
    port = free_port()
    command = [sys.executable, "-m", "cophe_core", "dashboard", "--server.headless", "true"]
    command += [
        "--server.address",
        "127.0.0.1",
        "--server.port",
        str(port),
        "--browser.gatherUsageStats",
        "false",
    ]
    proc = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, start_new_session=True)
    healthy = False
    deadline = time.monotonic() + 90
    while not healthy and time.monotonic() < deadline and proc.poll() is None:
        try:
            healthy = (
                urllib.request.urlopen(f"http://127.0.0.1:{port}/_stcore/health", timeout=2).read() == b"ok"
            )
        except OSError:
            time.sleep(0.2)  # polling the health endpoint
    if not healthy:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(proc.pid, signal.SIGKILL)
        output = (
            proc.stdout.read().decode() if proc.stdout and proc.poll() is not None else "no answer in 90 s"
        )
        proc.wait(timeout=30)
        raise AssertionError(output)
    return proc, port


def test_cophe_dashboard_serves_the_app():
    proc, port = start_dashboard()
    try:
        page = urllib.request.urlopen(f"http://127.0.0.1:{port}/", timeout=10).read().decode()
        assert "<title>Streamlit</title>" in page or "<title>" in page
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGTERM)  # the command and the Streamlit server it started
        proc.wait(timeout=30)


def children_of(pid: int) -> list[int]:
    """The processes whose parent is ``pid`` (Linux /proc)."""
    found = []
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            fields = stat.read_text().rsplit(")", 1)[1].split()
        except OSError:  # ended while listed
            continue
        if int(fields[1]) == pid:
            found.append(int(stat.parent.name))
    return found


def running(pid: int) -> bool:
    """Whether ``pid`` is a process that has not ended (a zombie has ended)."""
    try:
        return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0] != "Z"
    except OSError:
        return False


@pytest.mark.skipif(not Path("/proc/self/stat").exists(), reason="finds the server process through /proc")
@pytest.mark.parametrize("signum", [signal.SIGTERM, signal.SIGINT])
def test_stopping_cophe_dashboard_stops_streamlit(signum):
    """The signal goes to the cophe process only (as a service manager or `kill PID` sends it): the
    Streamlit server it started must end too, not keep running and holding the port."""
    proc, _ = start_dashboard()
    try:
        servers = children_of(proc.pid)
        assert len(servers) == 1 and running(servers[0])
        os.kill(proc.pid, signum)
        proc.wait(timeout=60)
        deadline = time.monotonic() + 30
        while running(servers[0]) and time.monotonic() < deadline:
            time.sleep(0.1)  # polling the server's state
        assert not running(servers[0]), f"Streamlit (pid {servers[0]}) still runs after cophe got {signum!r}"
        assert proc.returncode == 0
    finally:
        with contextlib.suppress(ProcessLookupError):  # the session left behind, server included
            os.killpg(proc.pid, signal.SIGKILL)
        proc.wait(timeout=30)


def test_without_streamlit_or_the_dashboard_it_says_what_to_install(monkeypatch, capsys):
    monkeypatch.setattr(cli.importlib.util, "find_spec", lambda name: None)
    assert cli.main(["dashboard"]) == 2
    assert 'the dashboard needs Streamlit: pip install ".[dashboard]" in the folder of a cophe checkout' in (
        capsys.readouterr().err
    )
    monkeypatch.setattr(cli, "dashboard_app", lambda: None)
    assert cli.main(["dashboard"]) == 2
    assert "the dashboard is not installed with this cophe" in capsys.readouterr().err


@pytest.mark.parametrize("options", [[], ["--server.port", "8600"]])
def test_options_go_to_streamlit(monkeypatch, options):
    seen = []

    class Child:
        def __init__(self, command):
            seen.append(command)

        def wait(self):
            return 0

        def poll(self):
            return 0

    monkeypatch.setattr(cli.subprocess, "Popen", Child)
    assert cli.main(["dashboard", *options]) == 0
    command = seen[0]
    assert command[1:5] == ["-m", "streamlit", "run", str(cli.dashboard_app())] and command[5:] == options


def test_the_checkout_runs_its_own_dashboard_folder():
    """In a source checkout (installed editable by requirements.txt, or not at all), the dashboard that runs is
    the checkout's dashboard/app.py, whose folder holds the cophe_dashboard package: an edit there is what
    runs."""
    assert cli.dashboard_app() == ROOT / "dashboard" / "app.py"


@pytest.fixture(scope="module")
def wheel(tmp_path_factory) -> Path:
    """The package built as a wheel, as `pip install .` installs it from a checkout, from a copy of the source without
    the build/ and egg-info folders a checkout keeps (setuptools would carry their files over)."""
    out = tmp_path_factory.mktemp("wheel")
    source = out / "source"
    leave_out = shutil.ignore_patterns(
        ".git", ".venvs", "build", "dist", "*.egg-info", "artifacts", ".*_cache", ".hypothesis"
    )
    shutil.copytree(ROOT, source, ignore=leave_out)
    subprocess.run(
        [sys.executable, "-m", "pip", "wheel", "--quiet", "--no-deps", "--wheel-dir", str(out), str(source)],
        check=True,
        capture_output=True,
    )
    return next(out.glob("cophe-*.whl"))


@pytest.mark.once  # what the wheel holds does not change with a library's version
def test_the_wheel_holds_the_dashboard_its_configuration_and_samples(wheel):
    names = set(zipfile.ZipFile(wheel).namelist())
    package = ROOT / "dashboard" / "cophe_dashboard"
    dashboard = {p.relative_to(package).as_posix() for p in package.rglob("*.py")}
    assert {"app.py", "pages.py", "views/tree.py"} <= dashboard
    assert {f"cophe_dashboard/{n}" for n in dashboard} <= names  # every module and page
    assert "cophe_dashboard/.streamlit/config.toml" in names
    samples = {p.relative_to(ROOT / "sample_data").as_posix() for p in (ROOT / "sample_data").rglob("*.csv")}
    assert {f"cophe_dashboard/sample_data/{n}" for n in samples} <= names
    assert {"cophe_core/py.typed", "cophe_core/ontology/data/icd9_categories.csv"} <= names
    assert not any(n.startswith(("tests/", "benchmarks/", "dashboard/")) for n in names)


def test_the_installed_dashboard_finds_its_samples_and_configuration(wheel, tmp_path):
    """Installed from the wheel (away from any checkout): ``cophe dashboard`` runs the installed script, its
    samples load, and Streamlit reads its configuration (the 50 MB upload bound) from beside the script."""
    target = tmp_path / "site"
    subprocess.run(
        [sys.executable, "-m", "pip", "install", "--quiet", "--no-deps", "--target", str(target), str(wheel)],
        check=True,
        capture_output=True,
    )
    probe = """
import sys
from pathlib import Path
from cophe_core import cli
app = cli.dashboard_app()
assert app == Path(sys.argv[1]) / "cophe_dashboard" / "app.py", app
from cophe_dashboard import loading
assert loading.SAMPLE == app.parent / "sample_data", loading.SAMPLE
assert (loading.SAMPLE / "icd9" / "gold.csv").is_file()
from streamlit import config
config._main_script_path = str(app)
config.get_config_options(force_reparse=True)
assert config.get_option("server.maxUploadSize") == loading.MAX_ANALYSIS_MB == 500
assert config.get_option("server.fileWatcherType") == "none"
print("ok")
"""
    env = {**os.environ, "PYTHONPATH": str(target)}
    done = subprocess.run(
        [sys.executable, "-c", probe, str(target)], cwd=tmp_path, env=env, capture_output=True, text=True
    )
    assert done.stdout.strip() == "ok", done.stderr


def test_the_checkout_and_the_package_have_one_streamlit_configuration():
    """`streamlit run dashboard/app.py` reads dashboard/.streamlit/config.toml, the installed package's app.py
    its own copy (a package holds no file from outside its folder): the two are the same."""
    checkout = ROOT / "dashboard" / ".streamlit" / "config.toml"
    package = ROOT / "dashboard" / "cophe_dashboard" / ".streamlit" / "config.toml"
    assert package.read_text() == checkout.read_text()
