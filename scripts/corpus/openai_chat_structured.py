"""The Chat capture of structured output: ``response_format`` json_schema, JSON as content.

The answer is a JSON document under a strict schema, streamed as ``content``
deltas cut like function-call arguments (a fragment is rarely JSON on its
own), with the same pauses at new keys.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from .openai_chat_common import BASE, HELPER, STREAM_USAGE, WIRE, compact, ok, user
from .openai_chat_stream import ChatStream
from .openai_sidecar import sdk_expectation, write

FLIGHT_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "origin": {"type": "string"},
        "destination": {"type": "string"},
        "date": {"type": "string"},
        "flights": {"type": "array", "items": {
            "type": "object",
            "properties": {"flight_number": {"type": "string"},
                           "departure": {"type": "string"},
                           "arrival": {"type": "string"},
                           "stops": {"type": "integer"},
                           "price_eur": {"type": "number"}},
            "required": ["flight_number", "departure", "arrival", "stops", "price_eur"],
            "additionalProperties": False}},
        "cheapest": {"type": "string"},
        "note": {"type": "string"},
    },
    "required": ["origin", "destination", "date", "flights", "cheapest", "note"],
    "additionalProperties": False,
}

RESULT = {"origin": "CDG", "destination": "NRT", "date": "2026-03-20",
          "flights": [{"flight_number": "AF276", "departure": "13:15", "arrival": "08:40+1",
                       "stops": 0, "price_eur": 1184.0},
                      {"flight_number": "JL46", "departure": "19:35", "arrival": "15:05+1",
                       "stops": 0, "price_eur": 1249.5},
                      {"flight_number": "LH2229", "departure": "06:55", "arrival": "10:25+1",
                       "stops": 1, "price_eur": 912.0}],
          "cheapest": "LH2229",
          "note": "LH2229 changes planes in München; the direct flights save about 9 hours."}


def structured_output(root: Path) -> Path:
    """JSON content under a strict ``response_format`` json_schema, streamed in fragments."""
    body = compact(RESULT)
    fmt = {"type": "json_schema", "json_schema": {"name": "flight_search", "strict": True,
                                                  "schema": FLIGHT_SCHEMA}}
    req = {"model": "gpt-4.1", "messages": user("Find me flights from Paris CDG to Tokyo Narita "
                                                "on 20 March 2026, as a list with prices."),
           "response_format": fmt, **STREAM_USAGE}
    s = ChatStream(215, model="gpt-4.1-2025-04-14", created=1768212121)
    s.opening(after_ms=s.pace.first_token(300, 500))
    tear = True
    for i, (fragment, gap) in enumerate(s.argument_fragments(body)):
        torn = tear and not fragment.isascii()
        tear = tear and not torn
        s.say(0, {"content": fragment}, after_ms=s.pace.token() if i == 0 else gap, torn=torn)
        s.completion_tokens += 1
    s.finish("stop")
    s.usage_chunk(142)
    s.done()
    return write(root, WIRE, "structured-output", s.builder, request=req, response=ok(s),
                 demonstrates="structured output (response_format json_schema): the content "
                              "is JSON, arriving in fragments that are not JSON on their own; "
                              "finish_reason stop ends it",
                 based_on=BASE + "; JSON fragments tokenised like function-call arguments",
                 sdk=sdk_expectation(HELPER, "replayed without a response_format (as "
                                     "request_kwargs does), the helper treats the JSON as plain "
                                     "text: content.delta events, message.parsed None; parsing "
                                     "is left to the caller",
                                     text=body,
                                     final={"choices.0.message.content": body,
                                            "choices.0.message.parsed": None,
                                            "choices.0.finish_reason": "stop",
                                            "usage.prompt_tokens": 142}))
