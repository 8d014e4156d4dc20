"""``python -m cophe_core``: the command line (see :mod:`cophe_core.cli`)."""

import sys

from .cli import main

if __name__ == "__main__":
    sys.exit(main())
