"""Lesson 6, station live (beside draw): the streaming loop over a real connection.

Station: after the reducer, beside drawing. Everything upstream is sans-IO;
this package is where the bytes really arrive. A step is an HTTP request whose
body is read chunk by chunk and pushed through `lesson_lib.turn.TurnStream`;
each turn event goes through the reducer at once, so a view can draw the
half-arrived answer after every chunk.

- `tools`: tools as asyncio tasks, started the moment their call is ready,
  with a timeout; cancelled, they end ``interrupted``;
- `attempts`: retry by phase, with a limit of attempts and a backoff that
  honours ``retry-after``; every attempt's error kept;
- `resuming`: where the wire resumes (its registry entry's `resume`), a
  stream that broke before its end is asked for again after its last point
  (a GET with ``starting_after`` or ``last_event_id``), not from the start;
- `patience`: how long a read waits (60 s for the headers, 60 s between two
  pieces of progress, where a keep-alive ping is none) and what the loop
  decodes (it asks for no compression);
- `timings`: time to first byte, first text, first tool start, the gaps
  between deltas, and the time won by starting tools early;
- `loop`: `LiveTurn`, the transport the agent loop's rule (`lesson_lib.turn.agent`)
  runs over: open the stream, feed the chunks, reduce, start tools, check the budget,
  resume or retry; the rule builds the next request and goes on to the next step;
  `cancel()` stops it all and keeps what arrived.
"""

from __future__ import annotations

from .attempts import Attempt, RetryPolicy
from .loop import LiveResult, LiveTurn, run_live
from .timings import Timings, timings_of
from .tools import LiveTool, weather_tool

__all__ = ["Attempt", "LiveResult", "LiveTool", "LiveTurn", "RetryPolicy", "Timings",
           "run_live", "timings_of", "weather_tool"]
