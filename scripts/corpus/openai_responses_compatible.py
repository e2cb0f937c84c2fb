"""A Responses-compatible server whose ids change from event to event.

Some servers that speak the Responses wire give every event a fresh opaque id:
the response's id on ``response.created``, ``response.in_progress`` and the
terminal differ, and so does each item's ``item_id`` (on ``output_item.added``,
every part event and delta, ``output_item.done`` and the terminal's output),
while ``output_index`` (and ``content_index``, ``summary_index``) stay put.
Every character arrives; only the ids cannot be used to match events up.
"""

from __future__ import annotations

import copy
from pathlib import Path
from typing import Any

from .openai_responses_common import BASE, HELPER, WIRE, request
from .openai_responses_stream import ResponsesStream
from .openai_sidecar import sdk_expectation, write

_HEX = "0123456789abcdef"


class RotatingIds(ResponsesStream):
    """A `ResponsesStream` that replaces every id it sends with a fresh opaque one."""

    def fresh(self) -> str:
        """A new opaque id, shaped like a UUID (no type prefix)."""
        h = "".join(self.rng.choice(_HEX) for _ in range(32))
        return f"{h[:8]}-{h[8:12]}-{h[12:16]}-{h[16:20]}-{h[20:]}"

    def emit(self, payload: dict[str, Any], *, after_ms: float, torn: bool = False) -> None:
        """Send one event with fresh ids in place of the ones the stream keeps."""
        payload = copy.deepcopy(payload)
        if "item_id" in payload:
            payload["item_id"] = self.fresh()
        item = payload.get("item")
        if isinstance(item, dict) and "id" in item:
            item["id"] = self.fresh()
        response = payload.get("response")
        if isinstance(response, dict):
            response["id"] = self.fresh()
            for done in response.get("output") or []:
                if isinstance(done, dict) and "id" in done:
                    done["id"] = self.fresh()
        super().emit(payload, after_ms=after_ms, torn=torn)


def rotating_ids(root: Path) -> Path:
    """A reasoning summary and an answer from a server that gives every event fresh ids."""
    summary = ("**Working out the overlap**\n\nThe train leaves at 14:05 and the connection "
               "at 14:40, so there are 35 minutes between them.")
    answer = ("You have **35 minutes** between the arrival at 14:05 and the 14:40 departure: "
              "enough for the change, if the platforms are close.")
    req = request("compatible-reasoner", "My train arrives at 14:05 and the next one leaves "
                  "at 14:40. How long do I have?", reasoning={"summary": "auto"})
    s = RotatingIds(131, model="compatible-reasoner", created_at=1768400200, request=req)
    s.start(first_byte_ms=s.pace.first_token(150, 300))
    s.reasoning([summary], after_ms=s.pace.thinking(600, 1200))
    s.message(answer, after_ms=s.pace.first_token(150, 300))
    s.completed(s.usage(44, reasoning_tokens=30), seconds=3)
    return write(root, WIRE, "rotating-ids", s.builder, request=req,
                 response={"status": 200, "headers": {
                     "content-type": "text/event-stream", "cache-control": "no-cache"}},
                 demonstrates="a compatible server that gives every event a fresh opaque id "
                              "(the response's on each lifecycle event, each item's item_id) "
                              "while output_index stays put: events are matched by "
                              "output_index, one rotating_ids warning says so, and the turn "
                              "completes as the stream did",
                 based_on=BASE + "; the ids rotate as one compatible server's do (no "
                          "recording of it in the reference set)",
                 sdk=sdk_expectation(HELPER, "the helper checks that every lifecycle event "
                                     "names the response it began with, and raises at "
                                     "response.in_progress, before any text",
                                     raises="RuntimeError",
                                     error_contains="Lifecycle response identity changed.",
                                     text=""))


def build(root: Path) -> list[Path]:
    """Write these Responses captures under `root/openai-responses/`; return the paths."""
    return [rotating_ids(root)]
