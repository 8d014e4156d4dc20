#!/usr/bin/env bash
# Install everything the tests need (Debian's headless Chromium included) and run the whole suite.
# Used as-is by CI (.ci/run) and by the README's test command.
set -euo pipefail
cd "$(dirname "$0")/.."
SUDO=""
[ "$(id -u)" -eq 0 ] || SUDO="sudo"
if [ ! -x /usr/bin/chromium-headless-shell ]; then
  $SUDO apt-get update -qq
  $SUDO apt-get install -y -qq chromium-headless-shell >/dev/null
fi
python -m pip install -q -e ".[test]"
python -m ruff check .
python -m pytest -n 2 "$@"
