"""lesson_lib: the tested helper package behind the "Reading the Wire" notebooks.

The package follows the data, one station per module:

capture bytes (`captures`) -> SSE events (`sse`) -> wire events
(`wire_events`) -> how the stream ended (`stream_end`) and the event table
(`event_table`) -> slots and final objects (`accumulate`) -> partial JSON
(`partial_json`) and tool calls as they form (`tool_calls`) -> views
(`views`: the replay player and its panes).

Side rooms: `replay` (the official SDKs, offline), `validate` (what
``lesson-lib check`` runs), `exercises` (the exercise graders) and `solutions`,
`naive_handler` (lesson 2's deliberately flawed handler), `faults` (broken
streams derived from good captures), `tools` (the fake tools a turn
calls), `cli` (the command line). The builders of the constructed capture
corpus are not part of the package: they live in `scripts/corpus/`.
"""

from __future__ import annotations

__version__ = "0.1.0"

import importlib  # noqa: E402

from .course.environment import setup  # noqa: E402

__all__ = ["setup", "__version__"]


def __getattr__(name: str):
    """``lesson_lib.exercises`` (and every other submodule) works after a bare ``import lesson_lib``.

    A notebook's key points call ``lesson_lib.exercises.progress("01")`` from a
    fresh kernel; the submodule is imported on first use.
    """
    if name.startswith("_"):
        raise AttributeError(name)
    try:
        return importlib.import_module(f"{__name__}.{name}")
    except ModuleNotFoundError as exc:
        if exc.name != f"{__name__}.{name}":
            raise
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}") from None
