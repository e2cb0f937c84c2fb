"""Lesson 4, station turn: one typed vocabulary for an agent turn, whatever the wire.

Stations, downstream of the accumulators:

- `events`: the union (frozen, slotted dataclasses with a `kind` and a `seq`);
- `adapters`: one per wire, from the accumulators' changes, and `adapters.sdk`
  from the official SDKs' stream events;
- `outcome`: how a step's end becomes the turn's outcome (a cut stream is
  ``truncated``), in one place;
- `reduce`: `reduce(state, event) -> state` on a frozen `TurnState`;
- `order`: the order checker (transition tables);
- `stream`: `TurnStream`, the push pipeline from a response's bytes to turn
  events (framing, wire events, accumulator, adapter), fed chunk by chunk;
- `run`: captures -> turn events, by either route;
- `agent`: the agent loop's rule (ask, stream a step, run its tools, ask again), once,
  for the simulated loop here and the live one (`lesson_lib.live`);
- `loop`: the simulated agent loop (captures on a virtual clock), with `fake_tools`, and
  `weather`, the one tool the constructed turns call (fixed schema, fixed results);
- `next_request`: the next request of the turn, from a `TurnState`;
- `summary`: the turn in words (states, outcome sentence, `turn_text`).
"""

from __future__ import annotations

from .events import Event, TurnEvent
from .reduce import TurnState, initial, reduce, reduce_all
from .stream import TurnStream

__all__ = ["Event", "TurnEvent", "TurnState", "TurnStream", "initial", "reduce", "reduce_all"]
