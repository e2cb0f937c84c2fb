"""lesson_lib: the tested helper package behind the "Reading the Wire" notebooks.

The package follows the data, one station per module:

capture bytes (`captures`) -> SSE events (`sse`) -> wire events
(`wire_events`) -> event table (`event_table`) -> slots and final objects
(`accumulate`) -> partial JSON (`partial_json`) -> views (`views`).
Side rooms: `replay` (the official SDKs, offline), `check` (exercise
checkers), `construct` (builds the constructed capture corpus).
"""

from __future__ import annotations

__version__ = "0.1.0"

from .setup import setup  # noqa: E402

__all__ = ["setup", "__version__"]
