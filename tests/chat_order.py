"""Chat streams that break the order the wire's markers show: one per marker.

Chat numbers no chunk, but a choice stops once (``finish_reason``) and a
call is opened once (the fragment with its ``id``). `finish_twice` and
`opened_twice` repeat one of those markers in a corpus capture
(`lesson_lib.breaks.faults.duplicate`). No capture has a call whose arguments come
in fragments at an index an earlier call used, so `reused_index` builds one
(two calls at ``tool_calls`` index 0, each opened and then fed), and
`fragment_before_opening` moves the second call's first fragment before its
opening (`lesson_lib.breaks.faults.swap`).
"""

from __future__ import annotations

import json

from lesson_lib.breaks import faults
from lesson_lib.breaks.visibility import visibility
from lesson_lib.capture.captures import Capture, from_bytes, load
from lesson_lib.wires.wire_events import parse_all

WIRE = "openai-chat"
TURN = "openai-chat/weather-turn-step1"     # two calls, then finish_reason tool_calls


def _chunk(delta: dict, finish: str | None = None) -> str:
    return json.dumps({"id": "chatcmpl-r", "object": "chat.completion.chunk",
                       "created": 1700000000, "model": "gpt-x",
                       "choices": [{"index": 0, "delta": delta, "logprobs": None,
                                    "finish_reason": finish}]})


def _opening(call_id: str, name: str) -> dict:
    return {"tool_calls": [{"index": 0, "id": call_id, "type": "function",
                            "function": {"name": name, "arguments": ""}}]}


def _fragment(text: str) -> dict:
    return {"tool_calls": [{"index": 0, "function": {"arguments": text}}]}


# The second call's opening is event 3; its first fragment, event 4.
SECOND_OPENING = 3
REUSED_PAYLOADS = [
    _chunk({"role": "assistant", "content": None, **_opening("call_a", "get_weather")}),
    _chunk(_fragment('{"city": ')), _chunk(_fragment('"Paris"}')),
    _chunk(_opening("call_b", "get_time")),
    _chunk(_fragment('{"tz": ')), _chunk(_fragment('"CET"}')),
    _chunk({}, "tool_calls"), "[DONE]"]


def reused_index() -> Capture:
    """Two calls at tool_calls index 0, each opened and then fed in two fragments."""
    body = "".join(f"data: {p}\n\n" for p in REUSED_PAYLOADS).encode()
    return from_bytes(body, sidecar={"wire": WIRE})


def _first(cap: Capture, kind: str, why: str) -> int:
    events = parse_all(cap.events)
    return next(i for i in range(len(events) - (kind == "swap"))
                if visibility(cap, kind, i, events) == why)


def finish_twice() -> Capture:
    """A corpus turn step whose finish chunk arrives twice."""
    cap = load(TURN)
    return faults.duplicate(cap, _first(cap, "duplicate", "finish_reason twice"))


def opened_twice() -> Capture:
    """A corpus turn step whose second call's opening fragment arrives twice."""
    cap = load(TURN)
    events = parse_all(cap.events)
    opened = [i for i in range(len(events))
              if visibility(cap, "duplicate", i, events) == "a tool call opened twice"]
    return faults.duplicate(cap, opened[1])


def fragment_before_opening() -> Capture:
    """`reused_index` with the second call's first fragment before its opening."""
    return faults.swap(reused_index(), SECOND_OPENING)


# Each breakage, and the typed diagnostic it must give.
BROKEN = {"duplicate_stop": finish_twice, "duplicate_start": opened_twice,
          "event_before_start": fragment_before_opening}
