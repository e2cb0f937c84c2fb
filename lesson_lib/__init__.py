"""lesson_lib: the tested package behind the "Reading the Wire" notebooks, one folder per station.

The folders follow the data, upstream first; a station imports only itself and
what is upstream of it (tests/test_layers.py). Notebook sections in brackets.

    lesson  station        what it holds                                  notebook sections
    0-6     diagnostics/   the typed `Diagnostic` every station reports   01 §2; 02 §2; all
                           with (imports nothing else)
    0-6     capture/       a recorded response: bytes, chunk timing, the  00 §3,5; 01 §1; all
                           corpus, writer, record, replay (the official
                           SDKs offline)
    1       sse/           bytes to events: the SSE decoder, framing,     01 §2
                           Bedrock's binary frames
    1-2     wires/         one home per wire fact; wire events, how a     01 §2-5; 02 §1-2; 04 §1;
                           stream ended, the event table                  07 §2,4
    2       accumulate/    slots and the final object; naive handler      02 §1,2,4; 04 §4; 07 §2
    3       partial_json/  tool arguments as they form, settled paths     03 exercises
    3       tool_calls/    one `ToolCall` per call, on every wire         03 §2,4
    4       turn/          turn events, reducer, order, outcome, ends,    04 §1,7; 05 §1-2;
                           adapters, the agent loop and its fake tools,   06 §1-2,4; 07 §1,3
                           when tools start
    5       breaks/        faults and saving them, budgets, retry,        04 §6; 05 §1-5; 06 §1
                           resume, recovery, stalls, closing an SDK
    6       draw/          the half-arrived answer, drawn                 06 §1
    6       live/          the live loop over a real connection           06 §2-3; 07 §3
    1-6     views/         thin widgets: player, panes, timelines, cards  01 §6-7; 02-06
    side    exercises/     the exercise checkers (solutions/: answers)    every lesson's exercises
    side    course/        environment and set-up, the course plan, the   00 §2; every first cell
                           learner's folder, the cheat sheet
    side    cli/           ``python -m lesson_lib``: commands, validate,  00 §5; 06 §2
                           serve/ (the corpus over HTTP)

The builders of the constructed capture corpus are not part of the package:
they live in `scripts/corpus/`.
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
