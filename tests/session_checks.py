"""What the tests of the two session wires (Managed Agents, OpenAI Agents sessions) check
alike: the SDK's event types, the wire's constructed captures, an inline stream of payloads,
the turn a redelivered event must leave unchanged, how a budget's end and an approval's end
read, and the SDK route giving the wire route's turn."""

from __future__ import annotations

import json
from collections.abc import Iterable
from typing import Any, get_args

from lesson_lib.capture.captures import Capture, corpus, from_bytes
from lesson_lib.turn.run import turn_state


def sdk_literals(union: Any) -> set[str]:
    """The ``type`` literals of every member of the SDK's annotated event union."""
    members = get_args(get_args(union)[0])
    return {value for m in members for value in get_args(m.model_fields["type"].annotation)}


def captures_of(wire: str) -> dict[str, Capture]:
    """The corpus's captures of `wire`, by name."""
    return {c.name: c for c in corpus() if c.wire == wire}


def check_each_says_it_is_constructed(captures: Iterable[Capture]) -> None:
    """Each capture's sidecar says it is constructed: no public recording of a session
    stream exists."""
    for capture in captures:
        assert capture.sidecar["provenance"]["kind"] == "constructed"
        assert "no public recording" in capture.sidecar["provenance"]["based_on"]


def inline_capture(wire: str, *payloads: dict, name: str = "inline") -> Capture:
    """A capture of `wire` whose stream is `payloads`, one SSE event each, named by type."""
    body = b"".join(f"event: {p['type']}\ndata: {json.dumps(p)}\n\n".encode()
                    for p in payloads)
    return from_bytes(body, name=name, sidecar={"wire": wire})


def turn_of(capture: Capture) -> dict:
    """The turn's blocks, outcome, finish and usage: what a duplicate must not change."""
    state = turn_state(capture).as_dict()
    return {"outcome": state["outcome"], "blocks": state["blocks"],
            "steps": [{k: s[k] for k in ("finish", "usage")} for s in state["steps"]]}


def texts(capture: Capture) -> list[str]:
    """The text of each text block of the capture's turn."""
    return [b["text"] for b in turn_state(capture).as_dict()["blocks"] if b["kind"] == "text"]


def check_a_budget_end_and_an_approval_end(by_name: dict[str, Capture]) -> None:
    """The corpus's budget end and approval end say why, and neither is completed."""
    ends = {name: turn_state(by_name[name]).as_dict()
            for name in ("session-budget-reached", "session-requires-action")}
    assert {n: (s["outcome"], s["reason"]) for n, s in ends.items()} == {
        "session-budget-reached": ("budget_reached", "vendor_budget"),
        "session-requires-action": ("paused", "requires_action")}


def check_the_sdk_route_gives_the_same_turn(capture: Capture) -> None:
    """The SDK route's turn has the wire route's outcome, blocks, finishes and usage."""
    wire, sdk = turn_state(capture, "wire").as_dict(), turn_state(capture, "sdk").as_dict()
    assert sdk["outcome"] == wire["outcome"] and sdk["blocks"] == wire["blocks"]
    assert [s["finish"] for s in sdk["steps"]] == [s["finish"] for s in wire["steps"]]
    assert [s["usage"] for s in sdk["steps"]] == [s["usage"] for s in wire["steps"]]
