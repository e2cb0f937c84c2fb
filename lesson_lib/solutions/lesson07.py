"""Solutions to lesson 7's exercises: the code the notebook shows, tested by the checkers."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from .. import wires
from ..accumulate import changes as ch
from ..turn.adapters.base import WireAdapter
from ..turn.events import Finish

ma = wires.managed_agents


def reconcile(payloads: list[dict]) -> list[dict]:
    """A session stream's events (their parsed payloads, in order) as the session's events:
    each event once, by its ``id``; a preview (``event_start``, then its ``event_delta``
    fragments) replaced, in its place, by the canonical event with the same id; and a
    preview that never got one kept, marked ``"preview": True``.

    A preview's events carry no id of their own, so they are never dropped as repeats: a
    fragment that says what the one before said is text.
    """
    events: list[dict] = []
    seen: set[str] = set()
    previews: dict[str, int] = {}        # a previewed event's id -> its place in `events`
    for payload in payloads:
        kind, event_id = payload.get("type"), payload.get("id")
        if kind == ma.PING:
            continue
        if event_id is not None:
            if event_id in seen:
                continue                 # delivered again: the same event
            seen.add(event_id)
        if kind == ma.EVENT_START:
            shown = payload["event"]
            previews[shown["id"]] = len(events)
            preview = {"id": shown["id"], "type": shown["type"], "preview": True}
            if shown["type"] == ma.AGENT_MESSAGE:
                preview["content"] = []
            events.append(preview)
        elif kind == ma.EVENT_DELTA:
            content = events[previews[payload["event_id"]]]["content"]
            index, fragment = payload["delta"]["index"], payload["delta"]["content"]
            if index == len(content):
                content.append({"type": ma.TEXT_BLOCK, "text": ""})
            content[index]["text"] += fragment["text"]
        elif event_id in previews:
            events[previews.pop(event_id)] = payload      # the canonical event replaces it
        else:
            events.append(payload)
    return events


class SessionAdapter(WireAdapter):
    """The Managed Agents session's changes as turn events, written plainly (exercise 2).

    The base does the bookkeeping; a session says three things its own way: what
    each slot is (`classify`), why the step ended (`finish`, from the last idle's
    ``stop_reason``), and that the session running again after an idle takes the
    idle back (`feed`).
    """

    wire = ma.WIRE

    def feed(self, changes, *, t=None, at=None):
        """The turn events of one session event's changes."""
        changes = list(changes or ())
        for change in changes:
            if type(change) is ch.ResponseChanged and change.fields.get("status") == "running":
                self.terminal = None     # the application answered: the session goes on
        return super().feed(changes, t=t, at=at)

    def classify(self, opened):
        """(block kind, server-side, channel) of a slot, by the event that opened it."""
        kind = opened.slot_kind
        if kind == ma.AGENT_MESSAGE:
            return ("other", False, "other") if opened.whole else ("text", False, "text")
        if kind == ma.AGENT_THINKING:
            return "reasoning", False, "reasoning"
        if kind in ma.CALLS:
            return "tool_call", kind in ma.AGENT_CALLS, "text"
        if kind in ma.RESULTS:
            return "tool_result", kind in ma.AGENT_RESULTS, "other"
        return "other", False, "other"

    def finish(self):
        """The step's finish from the last idle's stop reason: ``requires_action`` asks for
        tools when every event it waits on is a call of the application's own tools."""
        raw = self.response.get("stop_reason")
        reason = ma.finish_reason(raw) or "other"
        if raw == ma.REQUIRES_ACTION:
            mine = {b.call_id for b in self.order
                    if b.kind == "tool_call" and b.wire_kind in ma.APPLICATION_CALLS}
            waits = self.response.get("waits_on") or ()
            if waits and all(w in mine for w in waits):
                reason = "tool_calls"
        return Finish(reason, raw)


def answer(events: list[dict], approve: Callable[[dict], bool],
           tools: dict[str, Callable[[Any], str]]) -> list[dict]:
    """What the application posts to carry a session on, from the session's events.

    When the last ``session.status_idle`` stopped with ``requires_action``, one answer per
    event it waits on (``stop_reason.event_ids``), in that order: a call of the
    application's own tool (``agent.custom_tool_use``) gets its result
    (``user.custom_tool_result``, the text ``tools[name](input)`` returns); a call held
    for a confirmation gets one (``user.tool_confirmation``, ``allow`` when
    ``approve(event)`` says so, else ``deny``). Any other end asks for nothing.
    """
    idle = next((e for e in reversed(events) if e.get("type") == ma.SESSION_IDLE), None)
    stop_reason = (idle or {}).get("stop_reason") or {}
    if stop_reason.get("type") != ma.REQUIRES_ACTION:
        return []
    by_id = {e.get("id"): e for e in events}
    out = []
    for event_id in stop_reason.get("event_ids", []):
        call = by_id[event_id]
        if call["type"] == ma.AGENT_CUSTOM_TOOL_USE:
            text = tools[call["name"]](call["input"])
            out.append({"type": ma.USER_CUSTOM_TOOL_RESULT, "custom_tool_use_id": event_id,
                        "content": [{"type": ma.TEXT_BLOCK, "text": text}]})
        else:
            out.append({"type": ma.USER_TOOL_CONFIRMATION, "tool_use_id": event_id,
                        "result": ma.ALLOW if approve(call) else ma.DENY})
    return out
