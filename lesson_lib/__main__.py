"""``python -m lesson_lib``: the command line (see lesson_lib.cli)."""

import sys

from .cli import main

sys.exit(main())
