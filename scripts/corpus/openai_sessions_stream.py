"""Building OpenAI Agents session streams from the openai SDK's own types.

No public recording of a session stream exists, so every event is checked
against the SDK's model for its type (openai 3.63, the ``AgentSessionEvent``
union of ``openai.types.beta``) and dumped as the API sends JSON: only the
fields given. Each event goes out as ``event: <type>`` and one ``data:`` line.
`SessionStream` numbers the ids, keeps the clock and holds the session's
snapshot (every ``agent.session.*`` event carries the whole session).
"""

from __future__ import annotations

import copy
from typing import Any

from openai._models import construct_type
from openai.types.beta.agent_session_event import AgentSessionEvent
from pydantic import TypeAdapter

from lesson_lib.wires import openai_sessions as oas

from .writer import StreamBuilder

WIRE = oas.WIRE
HELPER = ("beta.agents.sessions.events.stream(session_id), each event the stream helper "
          "(sessions.stream) accepts fed to its _TurnState and AgentTurnResultCollector")
BASED_ON = ("constructed from the openai SDK's types (3.63, types/beta/agent_session_*): no "
            "public recording of an OpenAI Agents session stream exists")
MODEL = "gpt-5.5"
_EPOCH = 1_777_887_000             # seconds: 2026-05-04
_UNION: TypeAdapter[Any] = TypeAdapter(AgentSessionEvent)


def checked(payload: dict[str, Any]) -> dict[str, Any]:
    """`payload`, validated as the SDK's model for its type (a ValidationError otherwise),
    dumped back with only the fields given."""
    model = _UNION.validate_python(payload)
    dumped = model.to_dict(mode="json")
    assert construct_type(type_=AgentSessionEvent, value=dumped) is not None
    return dumped


def usage(input_tokens: int, output_tokens: int, cached: int = 0,
          reasoning: int = 0) -> dict[str, Any]:
    """A ``TokenUsage``."""
    return {"input_tokens": input_tokens, "input_tokens_details": {"cached_tokens": cached},
            "output_tokens": output_tokens,
            "output_tokens_details": {"reasoning_tokens": reasoning},
            "total_tokens": input_tokens + output_tokens}


class SessionStream:
    """One session stream: events checked against the SDK's models, with ids and timing."""

    def __init__(self, seed: int, session: str, *, tools: list[dict[str, Any]] | None = None,
                 spend_limit: int | None = None) -> None:
        self.builder = StreamBuilder(seed=seed)
        self.rng = self.builder.rng
        self.session = session
        self.turn_id: str | None = None
        self.turn: dict[str, Any] | None = None
        self._n = 0
        self._items = 0
        self._seconds = _EPOCH
        self.sent: list[dict[str, Any]] = []      # every event written once, in order
        self.snapshot: dict[str, Any] = {
            "id": session, "object": "agent.session", "created_at": _EPOCH,
            "last_active_at": _EPOCH, "metadata": {}, "required_actions": [],
            "spend_control": {"limit": spend_limit, "consumed": 0}, "status": oas.IDLE,
            "vault_ids": [], "environment": {"type": "none"},
            "agent": {"id": "agent_0198repo", "model": MODEL, "name": "repo-helper",
                      "instructions": "Answer questions about the repository.",
                      "multi_agent": {"enabled": False},
                      "reasoning": {"effort": "medium", "summary": "auto"},
                      "service_tier": "default",
                      "text": {"format": {"type": "text"}, "verbosity": "medium"},
                      "tools": tools or []}}

    def new_id(self, prefix: str = "evt") -> str:
        """A fresh id (``evt_`` and 24 characters, as the API's ids look)."""
        self._n += 1
        tail = "".join(self.rng.choice("abcdefghijkmnopqrstuvwxyz0123456789")
                       for _ in range(20))
        return f"{prefix}_{self._n:04d}{tail}"

    def tick(self, seconds: int = 1) -> int:
        self._seconds += seconds
        return self._seconds

    def send(self, payload: dict[str, Any], *, after_ms: float = 30.0) -> dict[str, Any]:
        """Write one event (checked against the SDK's union) after `after_ms`."""
        payload = checked({"event_id": self.new_id(), **payload})
        self.builder.event(payload["type"], payload, after_ms=after_ms)
        self.sent.append(payload)
        return payload

    def again(self, payload: dict[str, Any], *, after_ms: float = 5.0) -> None:
        """Deliver an event already sent once more (at-least-once delivery)."""
        self.builder.event(payload["type"], payload, after_ms=after_ms)

    # -- the session -----------------------------------------------------------------

    def session_event(self, kind: str, status: str, *, actions: list | None = None,
                      spent: dict[str, Any] | None = None, error: str | None = None,
                      consumed: int | None = None, after_ms: float = 30.0) -> dict[str, Any]:
        snap = copy.deepcopy(self.snapshot)
        snap.update(status=status, last_active_at=self.tick(), required_actions=actions or [])
        if spent is not None:
            snap["usage"] = spent
        if error is not None:
            snap["error"] = error
        if consumed is not None:
            snap["spend_control"]["consumed"] = consumed
        return self.send({"type": kind, "session": snap}, after_ms=after_ms)

    def in_progress(self) -> dict[str, Any]:
        return self.session_event(oas.SESSION_IN_PROGRESS, oas.IN_PROGRESS, after_ms=60)

    def idle(self) -> dict[str, Any]:
        return self.session_event(oas.SESSION_IDLE, oas.IDLE)

    def requires_action(self, actions: list[dict[str, Any]],
                        spent: dict[str, Any] | None = None) -> dict[str, Any]:
        return self.session_event(oas.SESSION_REQUIRES_ACTION, oas.REQUIRES_ACTION,
                                  actions=actions, spent=spent)

    def budget_reached(self, spent: dict[str, Any], consumed: int) -> dict[str, Any]:
        return self.session_event(oas.SESSION_BUDGET_REACHED, oas.BUDGET_REACHED,
                                  spent=spent, consumed=consumed)

    def failed(self, error: str) -> dict[str, Any]:
        return self.session_event(oas.SESSION_FAILED, oas.FAILED, error=error)

    def error(self, kind: str, code: str, message: str) -> dict[str, Any]:
        return self.send({"type": oas.ERROR, "session_id": self.session,
                          "error": {"type": kind, "code": code, "message": message,
                                    "param": None}})

    # -- the turn ---------------------------------------------------------------------

    def _turn(self, status: str, **more: Any) -> dict[str, Any]:
        assert self.turn is not None
        self.turn.update(status=status, **more)
        return copy.deepcopy(self.turn)

    def turn_created(self) -> dict[str, Any]:
        self.turn_id = self.new_id("turn")
        self.turn = {"id": self.turn_id, "object": "agent.session.turn",
                     "agent_id": self.snapshot["agent"]["id"], "session_id": self.session,
                     "created_at": self.tick(), "status": "queued"}
        return self.send({"type": oas.TURN_CREATED, "session_id": self.session,
                          "turn_id": self.turn_id, "turn": copy.deepcopy(self.turn)},
                         after_ms=80)

    def turn_in_progress(self) -> dict[str, Any]:
        return self.send({"type": oas.TURN_IN_PROGRESS, "session_id": self.session,
                          "turn_id": self.turn_id,
                          "turn": self._turn(oas.IN_PROGRESS, started_at=self.tick())})

    def turn_ended(self, kind: str, status: str, spent: dict[str, Any],
                   error: dict[str, Any] | None = None) -> dict[str, Any]:
        more: dict[str, Any] = {"completed_at": self.tick(), "usage": spent}
        if error is not None:
            more["error"] = error
        return self.send({"type": kind, "session_id": self.session, "turn_id": self.turn_id,
                          "turn": self._turn(status, **more), "usage": spent}, after_ms=40)

    # -- items ------------------------------------------------------------------------

    def _at(self, item: dict[str, Any]) -> dict[str, Any]:
        return {"session_id": self.session, "turn_id": self.turn_id, "item": item}

    def added(self, item: dict[str, Any], *, after_ms: float = 120.0,
              output_index: int | None = None) -> dict[str, Any]:
        found = {"type": oas.ITEM_ADDED, **self._at(item)}
        if output_index is not None:
            found["output_index"] = output_index
        return self.send(found, after_ms=after_ms)

    def done(self, item: dict[str, Any], output_index: int, *,
             after_ms: float = 20.0) -> dict[str, Any]:
        return self.send({"type": oas.ITEM_DONE, "output_index": output_index,
                          **self._at(item)}, after_ms=after_ms)

    def message(self, pieces: list[str], *, phase: str = "final_answer",
                stated: str | None = None) -> dict[str, Any]:
        """An assistant message streamed in `pieces`; `stated` the text its done events
        state (the pieces joined, unless given)."""
        index, item_id = self._items, self.new_id("msg")
        self._items += 1
        text = "".join(pieces) if stated is None else stated
        base = {"id": item_id, "type": oas.MESSAGE_ITEM, "role": oas.ASSISTANT,
                "phase": phase, "turn_id": self.turn_id}
        self.added({**base, "status": "in_progress", "content": []}, output_index=index)
        at = {"session_id": self.session, "turn_id": self.turn_id, "item_id": item_id,
              "output_index": index, "content_index": 0}
        part = {"type": oas.OUTPUT_TEXT_PART, "text": "", "annotations": []}
        self.send({"type": oas.CONTENT_PART_ADDED, **at, "part": part})
        for piece in pieces:
            self.send({"type": oas.OUTPUT_TEXT_DELTA, **at, "delta": piece},
                      after_ms=self.rng.uniform(12, 45))
        self.send({"type": oas.OUTPUT_TEXT_DONE, **at, "text": text})
        self.send({"type": oas.CONTENT_PART_DONE, **at, "part": {**part, "text": text}},
                  after_ms=5)
        return self.done({**base, "status": oas.COMPLETED,
                          "content": [{**part, "text": text}]}, index, after_ms=5)

    def reasoning(self, pieces: list[str]) -> dict[str, Any]:
        """A reasoning item whose one summary part streams in `pieces`."""
        index, item_id = self._items, self.new_id("rs")
        self._items += 1
        text = "".join(pieces)
        self.added({"id": item_id, "type": oas.REASONING_ITEM, "summary": [],
                    "status": "in_progress", "turn_id": self.turn_id},
                   output_index=index, after_ms=400)
        at = {"session_id": self.session, "turn_id": self.turn_id, "item_id": item_id,
              "output_index": index, "summary_index": 0}
        part = {"type": oas.SUMMARY_TEXT_PART, "text": ""}
        self.send({"type": oas.SUMMARY_PART_ADDED, **at, "part": part})
        for piece in pieces:
            self.send({"type": oas.SUMMARY_TEXT_DELTA, **at, "delta": piece},
                      after_ms=self.rng.uniform(20, 60))
        self.send({"type": oas.SUMMARY_TEXT_DONE, **at, "text": text})
        self.send({"type": oas.SUMMARY_PART_DONE, **at, "part": {**part, "text": text}},
                  after_ms=5)
        return self.done({"id": item_id, "type": oas.REASONING_ITEM,
                          "summary": [{**part, "text": text}], "status": oas.COMPLETED,
                          "turn_id": self.turn_id}, index, after_ms=5)

    def function_call(self, name: str, arguments: dict[str, Any]) -> dict[str, Any]:
        """A call of the application's function: whole at its item.added."""
        index = self._items
        self._items += 1
        item = {"id": self.new_id("fc"), "type": oas.FUNCTION_CALL_ITEM, "name": name,
                "call_id": self.new_id("call"), "arguments": arguments,
                "status": "in_progress", "turn_id": self.turn_id}
        self.added(item, output_index=index, after_ms=350)
        return item

    def function_output(self, call: dict[str, Any], output: str) -> dict[str, Any]:
        """The application's output, as the session echoes it."""
        index = self._items
        self._items += 1
        item = {"id": self.new_id("fco"), "type": oas.FUNCTION_CALL_OUTPUT_ITEM,
                "call_id": call["call_id"], "output": output, "status": oas.COMPLETED,
                "turn_id": self.turn_id}
        self.added(item, output_index=index, after_ms=900)
        return item

    def server_item(self, item: dict[str, Any], done: dict[str, Any]) -> dict[str, Any]:
        """An item the server runs: added in progress, done with its outcome."""
        index = self._items
        self._items += 1
        item = {"id": self.new_id("srv"), "turn_id": self.turn_id, **item}
        self.added({**item, "status": "in_progress"}, output_index=index)
        return self.done({**item, **done}, index, after_ms=700)
