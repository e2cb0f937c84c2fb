"""``python -m lesson_lib``: the command line (see lesson_lib.cli.commands)."""

import sys

from .cli.commands import main

sys.exit(main())
