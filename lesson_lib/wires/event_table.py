"""Lesson 1's event table under its old name: lessons 1 and 2 import it from here.

The table lives in `lesson_lib.views.event_table` (pandas, a capture in, a
table out) and its per-wire reading in `lesson_lib.wires.event_rows`; this
module only re-exports them so the notebooks' ``from lesson_lib.wires.event_table
import ...`` keeps working. Nothing in the package imports it.
"""

from __future__ import annotations

from ..views.event_table import *  # noqa: F403
from ..views.event_table import __all__  # noqa: F401
