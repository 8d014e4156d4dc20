#!/usr/bin/env bash
# The test command (README, and CI through .ci/run):
#
#   1. installs Debian's chromium-headless-shell for the browser test, if missing;
#   2. builds a brand-new virtual environment from requirements.txt plus the test extras, and runs deptry,
#      ruff (lint and format), mypy and the whole pytest suite there, never in the machine's own Python, so
#      that nothing installed by hand can hide a missing install step;
#   3. builds a second new environment at the lowest declared versions (constraints-lowest.txt), while
#      mypy and the first tests run, and runs deptry, ruff and the core and app tests there, so that every
#      lower bound is a tested version. That run shows that those versions work; it does not search the
#      inputs again: each property test runs a quarter of its examples (COPHE_TEST_EXAMPLES,
#      tests/conftest.py), and the tests marked `once` (the docs, the layout, the packaging: nothing a
#      library's version changes) are left to the first run.
#
# Arguments go to the first pytest run, and then the lowest-versions run is skipped (a quick local check:
# `bash scripts/test.sh tests/core -x`). pytest exits non-zero when it collects nothing, and so does this.
set -euo pipefail
cd "$(dirname "$0")/.."
PYTHON=${PYTHON:-python3}
VENVS=.venvs
start=$SECONDS

phase() {  # a heading with the seconds elapsed so far
  printf '\n== %s (at %ss)\n' "$1" "$((SECONDS - start))"
}

if [ ! -x /usr/bin/chromium-headless-shell ]; then
  phase "installing chromium-headless-shell (apt)"
  SUDO=""
  [ "$(id -u)" -eq 0 ] || SUDO="sudo"
  $SUDO apt-get update -qq
  $SUDO apt-get install -y -qq chromium-headless-shell >/dev/null
fi

fresh_venv() {  # fresh_venv DIR PIP-ARGS...: a new virtual environment with the given install
  local dir=$1
  shift
  rm -rf "$dir"
  "$PYTHON" -m venv "$dir"
  "$dir/bin/python" -m pip install --quiet "$@"
}

checks() {  # checks DIR PYTEST-ARGS...: deptry, ruff and pytest with the environment in DIR
  local py=$1/bin/python
  shift
  "$py" -m deptry .
  "$py" -m ruff check .
  "$py" -m ruff format --check .
  # the 20 slowest tests in the log: the suite must stay within about 15 minutes on 2 cores
  "$py" -m pytest -n 2 --durations=20 "$@"
}

# torch (the test extras, for the torchmetrics metric) at its lower bound in both runs: the newest release
# whose CPU build pip finds (1 GB installed). PyPI's default Linux builds carry several GB of CUDA libraries,
# which a CPU test does not use; where pip has no CPU build, this is what it downloads.
TORCH=${TORCH:-torch==2.13.0}

phase "new environment: requirements.txt + test extras"
fresh_venv "$VENVS/test" -r requirements.txt -e ".[test]" "$TORCH"
lowest_pid=""
if [ $# -eq 0 ]; then
  # the second environment is built beside mypy and the first tests, after the first one's editable
  # install (two at once would write the same cophe.egg-info); its output is shown once it is used. Waiting
  # for it before the first tests left a core idle for about 40 s.
  phase "new environment, beside mypy and the first tests: the lowest declared versions (constraints-lowest.txt)"
  mkdir -p "$VENVS"
  fresh_venv "$VENVS/lowest" -c constraints-lowest.txt -e ".[test]" >"$VENVS/lowest-install.log" 2>&1 &
  lowest_pid=$!
  trap '[ -z "$lowest_pid" ] || kill "$lowest_pid" 2>/dev/null || true' EXIT
fi
phase "types (mypy, latest versions: library type hints change between releases)"
"$VENVS/test/bin/python" -m mypy
phase "tests (latest versions)"
checks "$VENVS/test" "$@"

if [ $# -gt 0 ]; then
  phase "done; lowest-versions run skipped because pytest arguments were given"
  exit 0
fi

phase "the lowest declared versions' environment (built beside mypy and the first tests)"
status=0
wait "$lowest_pid" || status=$?
lowest_pid=""
cat "$VENVS/lowest-install.log"
[ "$status" -eq 0 ] || exit "$status"

phase "core and app tests (lowest versions)"
COPHE_TEST_EXAMPLES=0.25 checks "$VENVS/lowest" -m "not once" tests/core tests/app cophe_core
phase "done"
