"""Checkers for lesson 7, "When the vendor runs the loop".

1. `check_reconcile`: a session stream's events as the session's events: each
   event once by its id, a preview replaced in its place by its canonical
   event, a preview that never got one kept and marked. Graded against the
   course's accumulator (`final()["events"]`) on every Managed Agents capture of
   the corpus and on hand-made streams for the rules the captures do not all
   show (a preview cut short, two entries, a stream without ids).
2. `check_session_adapter`: a whole adapter for the session stream, a class
   whose `classify`, `finish` and `feed` say what the session says its own way.
   On every Managed Agents capture its step's turn events are compared with the
   course adapter's, event by event, and then the turn's end (outcome and
   reason). The wire's registry entry names the learner's class while it runs
   (`dataclasses.replace`), and the course's entry is put back after.
3. `check_answer`: what the application posts to carry a session on after it
   stopped with ``requires_action``: a confirmation for each held call, a result
   for each call of its own tools, nothing for any other end. Then the session
   is carried on: the answers are posted (echoed on the stream with the rest of
   the session after them) and the turn must end ``completed``.

A mismatch names the event, what was expected, what came, and the likely
mistake. Every case comes from the corpus or is written here: offline, the same
verdict every time.
"""

from __future__ import annotations

import copy
import json
from collections.abc import Callable
from functools import cache
from typing import Any

from ..accumulate.managed_agents import ManagedAgentsAccumulator
from ..capture.captures import Capture, corpus, from_bytes
from ..turn.adapters import ADAPTERS, WireAdapter
from ..turn.run import step_events, turn_state
from ..wires import managed_agents
from ..wires.wire_events import parse_all
from . import Case, Verdict, corpus_capture, exercise, grade
from .event_by_event import adapting, differs_at, turn_event_difference
from .lesson04b import shown

RECONCILE = exercise("07", 1, "Previews reconciled, duplicates dropped",
                     solution="lesson_lib.solutions.lesson07:reconcile")
ADAPTER = exercise("07", 2, "The session adapter",
                   solution="lesson_lib.solutions.lesson07:SessionAdapter")
ANSWER = exercise("07", 3, "Answer requires_action and carry the session on",
                  solution="lesson_lib.solutions.lesson07:answer")

ma = managed_agents
WIRE = ma.WIRE


def payloads_of(capture: Capture) -> list[dict]:
    """A session capture's events as their parsed payloads, in order."""
    return [e.payload for e in parse_all(capture.events) if isinstance(e.payload, dict)]


def payloads(name: str) -> list[dict]:
    """The payloads of the corpus capture ``anthropic-managed-agents/<name>`` (or a key)."""
    key = name if "/" in name else f"{WIRE}/{name}"
    return payloads_of(corpus_capture(key))


def session_body(events: list[dict]) -> bytes:
    """Session events as the stream sends them: an ``event:`` line and a ``data:`` line."""
    return b"".join(f"event: {e['type']}\ndata: {json.dumps(e)}\n\n".encode() for e in events)


def session_capture(events: list[dict], label: str) -> Capture:
    """A capture of the session stream made of `events`."""
    return from_bytes(session_body(events), name=label, sidecar={"wire": WIRE})


def session_capture_keys() -> list[str]:
    """The keys of every capture of the session wire in the course's corpus."""
    return [c.key for c in corpus() if c.wire == WIRE]


# -- exercise 1: previews and duplicates -----------------------------------------------------

def session_events(capture: Capture) -> list[dict]:
    """The session's events as the course's accumulator states them."""
    acc = ManagedAgentsAccumulator()
    for event in parse_all(capture.events):
        acc.feed(event)
    acc.finish()
    return acc.final()["events"]


def _start(event_id: str, kind: str = ma.AGENT_MESSAGE) -> dict:
    return {"type": ma.EVENT_START, "event": {"type": kind, "id": event_id}}


def _delta(event_id: str, text: str, index: int = 0) -> dict:
    return {"type": ma.EVENT_DELTA, "event_id": event_id,
            "delta": {"type": ma.CONTENT_DELTA, "index": index,
                      "content": {"type": ma.TEXT_BLOCK, "text": text}}}


def _message(event_id: str, *texts: str) -> dict:
    return {"type": ma.AGENT_MESSAGE, "id": event_id,
            "content": [{"type": ma.TEXT_BLOCK, "text": t} for t in texts]}


def _idle(event_id: str, reason: str = ma.END_TURN, **more: Any) -> dict:
    return {"type": ma.SESSION_IDLE, "id": event_id, "stop_reason": {"type": reason, **more}}


HAND_MADE_STREAMS = {
    "hand-made: a preview that stopped early, then its canonical event (replaced)": [
        {"type": ma.SESSION_RUNNING, "id": "e1"}, _start("m1"), _delta("m1", "The pin "),
        _delta("m1", "is 2.3"), _message("m1", "The pin is 2.31.0; I will bump it."),
        _idle("e2")],
    "hand-made: a preview of two entries, then its canonical event": [
        {"type": ma.SESSION_RUNNING, "id": "e1"}, _start("m1"), _delta("m1", "First."),
        _delta("m1", "Second", 1), _delta("m1", " part.", 1),
        _message("m1", "First.", "Second part."), _idle("e2")],
    "hand-made: a canonical event delivered twice after its preview": [
        {"type": ma.SESSION_RUNNING, "id": "e1"}, _start("m1"), _delta("m1", "Done."),
        _message("m1", "Done."), _message("m1", "Done."), _idle("e2"), _idle("e2")],
    "hand-made: a preview that laughs, cut short by its model request (no canonical event)": [
        {"type": ma.SESSION_RUNNING, "id": "e1"}, _start("m1"), _delta("m1", "Ha"),
        _delta("m1", "ha"), _delta("m1", "ha"), _delta("m1", "! The pin is old"),
        {"type": ma.SPAN_MODEL_REQUEST_END, "id": "e2", "is_error": True},
        _idle("e3", ma.RETRIES_EXHAUSTED)],
    "hand-made: a stream without ids (nothing is dropped by guessing)": [
        {"type": ma.USER_MESSAGE, "content": [{"type": ma.TEXT_BLOCK, "text": "again"}]},
        {"type": ma.USER_MESSAGE, "content": [{"type": ma.TEXT_BLOCK, "text": "again"}]},
        {"type": ma.SESSION_RUNNING}, {"type": ma.SESSION_RUNNING}],
}


def _one_event(event: Any) -> str:
    if not isinstance(event, dict):
        return f"{type(event).__name__} {event!r:.60}"
    text = "".join(c.get("text", "") for c in event.get("content") or []
                   if isinstance(c, dict) and isinstance(c.get("text"), str))
    said = f"{event.get('type')} {event.get('id')}"
    if text:
        said += f" {text!r:.70}"
    if event.get("preview"):
        said += " (preview: True)"
    return said


def _text(event: Any) -> str:
    if not isinstance(event, dict):
        return ""
    return "".join(c.get("text", "") for c in event.get("content") or []
                   if isinstance(c, dict) and isinstance(c.get("text"), str))


def _reconcile_advice(expected: list, got: list, at: int, given: list[dict]) -> str:
    want = expected[at] if at < len(expected) else None
    have = got[at] if at < len(got) else None
    ids_before = [e.get("id") for e in got[:at] if isinstance(e, dict)]
    if isinstance(want, dict) and want.get("id") is None and want in expected[:at]:
        return ("a stream without ids is not deduplicated by guessing: two events alike "
                "without an id are two events (only an event's own id says it was delivered "
                "twice)")
    if isinstance(have, dict) and have.get("preview") and isinstance(want, dict) \
            and not want.get("preview") and want.get("id") == have.get("id"):
        return ("the preview is still here though its canonical event came: the canonical "
                "event with the same id replaces it, in its place, and is never kept beside it")
    if isinstance(have, dict) and have.get("id") is not None and have.get("id") in ids_before:
        return ("this event is one you already have (the same id): a preview is replaced by "
                "its canonical event in its place, and an event delivered again is dropped "
                "by its id, never kept twice")
    if isinstance(want, dict) and want.get("preview") and not (isinstance(have, dict)
                                                              and have.get("preview")):
        return ("a preview that never got its canonical event (its model request ended "
                "first) is kept where its event_start came, marked \"preview\": True, with "
                "the text its deltas gave")
    if isinstance(want, dict) and isinstance(have, dict) and want.get("id") == have.get("id"):
        wt, ht = _text(want), _text(have)
        if wt and ht and len(ht) > len(wt) and wt in ht:
            return ("the text is doubled: the canonical event replaces the preview's text, it "
                    "is never appended to it")
        if wt and ht and len(ht) < len(wt):
            fragments = [p["delta"]["content"].get("text") for p in given
                         if p.get("type") == ma.EVENT_DELTA]
            repeated = any(a == b for a, b in zip(fragments, fragments[1:], strict=False))
            if repeated:
                return ("a fragment that repeats the one before is text: an event_delta has "
                        "no id of its own, so it is never dropped as a repeat (only an "
                        "event's own id says it was delivered twice)")
            return ("text is missing: each event_delta adds its fragment to the entry at "
                    "delta.index (a new index opens the next entry)")
        if want.get("preview") != have.get("preview"):
            return ("an event replaced by its canonical event is the canonical event as it "
                    "came, without the preview's mark")
        return "the canonical event replaces its preview whole, as it came"
    if have is None:
        return ("you returned fewer events: a stream without ids is not deduplicated by "
                "guessing (two events alike without an id are two events), and every event "
                "but a ping, a preview's own event_start and event_delta is kept")
    if want is None:
        return ("you returned more events: a ping is no event of the session, an event_delta "
                "adds to its preview, and an id seen before is the same event again")
    return ("the events are out of order: a preview stands where its event_start came, and "
            "its canonical event takes that place")


def _explain_reconcile(given: list[dict]) -> Callable[[Any, Any], str | None]:
    def explain(expected: Any, got: Any) -> str | None:
        if not isinstance(got, list):
            return f"return a list of events (dicts), got {type(got).__name__}"
        at = differs_at(expected, got)
        if at == len(expected) == len(got):
            return None
        want = _one_event(expected[at]) if at < len(expected) else "no event (the end)"
        have = _one_event(got[at]) if at < len(got) else "no event (your events end here)"
        return (f"session event {at}: expected {want}, got {have}.\n"
                f"  Fix: {_reconcile_advice(expected, got, at, given)}.")
    return explain


@cache
def reconcile_cases() -> tuple[Case, ...]:
    """Every session capture of the corpus, then the hand-made streams."""
    cases = []
    for key in session_capture_keys():
        capture = corpus_capture(key)
        given = payloads_of(capture)
        cases.append(Case(key, (given,), session_events(capture), _explain_reconcile(given)))
    for label, given in HAND_MADE_STREAMS.items():
        cases.append(Case(label, (given,), session_events(session_capture(given, label)),
                          _explain_reconcile(given)))
    return tuple(cases)


def check_reconcile(fn: Callable[[list[dict]], list[dict]]) -> Verdict:
    """Grade `fn(payloads) -> the session's events`."""
    return grade(RECONCILE, lambda given: fn(copy.deepcopy(given)), reconcile_cases())


# -- exercise 2: the session adapter ---------------------------------------------------------

def adapter_events(adapter_class: type, capture: Capture) -> list[dict]:
    """The step's turn events (as lesson 4b's checker shows them) with `adapter_class`
    reading the changes, then the turn's end: its outcome and reason."""
    with adapting(WIRE, adapter_class):
        events = [shown(e) for e in step_events(capture, route="wire")]
        state = turn_state(capture, route="wire")
    return events + [{"kind": "turn_end", "outcome": state.end.outcome,
                      "reason": state.end.reason}]


def _adapter_advice(want: dict | None, have: dict | None) -> str:
    wkind, hkind = (want or {}).get("kind"), (have or {}).get("kind")
    if wkind == "turn_end" and hkind == "turn_end":
        if want["outcome"] != "completed" and have["outcome"] == "completed":
            return ("a session that stopped to ask (requires_action) or at its budget is not "
                    "done: never read it as completed. finish() maps the idle's stop_reason "
                    "with ma.finish_reason (requires_action is 'pause', budget_reached "
                    "'length'); the turn's end follows from the wire's TURN_ENDS")
        return ("the turn's end follows from your finish(): read the last idle's "
                "stop_reason from self.response['stop_reason'] with ma.finish_reason")
    if wkind == "step_finished" and hkind == "step_finished":
        if want["finish"] in ("pause", "tool_calls") and have["finish"] == "stop":
            return ("requires_action is not end_turn: the session waits on the application. "
                    "finish() says 'pause', or 'tool_calls' when every event it waits on "
                    "(self.response['waits_on']) is a call of the application's own tool")
        if want["finish"] == "tool_calls":
            return ("the session waits on a call of the application's own tool "
                    "(agent.custom_tool_use): that finish is 'tool_calls', which the loop runs")
        return "finish() maps the last idle's stop_reason with ma.finish_reason"
    if wkind == "block_started" and hkind == "block_started":
        return ("classify() decides the block by the event that opened the slot: "
                "agent.message text (a whole non-text entry 'other'), agent.thinking "
                "reasoning, a call tool_call (server-side when the agent runs it: "
                "ma.AGENT_CALLS), a result tool_result (server-side: ma.AGENT_RESULTS), "
                "anything else 'other'")
    if want is not None and have is None:
        return ("your events stop early: after an idle that asked for action the session "
                "runs again (a ResponseChanged with status 'running'); feed() must take the "
                "idle back (self.terminal = None) so the rest of the session is read")
    return "compare your classify(), finish() and feed() with the API card"


def _explain_adapter(expected: Any, got: Any) -> str | None:
    return turn_event_difference(expected, got, _adapter_advice)


@cache
def adapter_cases() -> tuple[Case, ...]:
    """One case per session capture, then a hand-made end the wire does not know: the
    course adapter's events and end are the answer."""
    course = ADAPTERS[WIRE]
    captures = [corpus_capture(k) for k in session_capture_keys()]
    unknown = [{"type": ma.SESSION_RUNNING, "id": "e1"}, _message("m1", "Hi."),
               _idle("e2", "paused_for_review")]
    captures.append(session_capture(unknown, "hand-made: an idle with a stop reason the "
                                             "wire does not know"))
    return tuple(Case(c.key, (c,), adapter_events(course, c), _explain_adapter)
                 for c in captures)


def check_session_adapter(adapter_class: type) -> Verdict:
    """Grade a session adapter class, event by event and end by end, on every session
    capture."""
    def run(capture: Capture) -> list[dict]:
        if not (isinstance(adapter_class, type) and issubclass(adapter_class, WireAdapter)):
            raise TypeError(f"pass the class itself, a subclass of WireAdapter, not "
                            f"{type(adapter_class).__name__} {adapter_class!r:.60}")
        return adapter_events(adapter_class, capture)
    return grade(ADAPTER, run, adapter_cases())


# -- exercise 3: answer requires_action and carry the session on ----------------------------

# The application's own tool in the custom-tool capture, answering as it did there.
PINNED = json.dumps({"package": "requests", "pinned": "2.31.0", "latest": "2.32.3"})
TOOLS: dict[str, Callable[[Any], str]] = {"lookup_pinned_version": lambda _input: PINNED}


def allow_all(call: dict) -> bool:
    """An approver that allows every held call."""
    return True


def deny_all(call: dict) -> bool:
    """An approver that denies every held call."""
    return False


def up_to_first_idle(events: list[dict]) -> list[dict]:
    """The session's events up to and with its first idle: what the application has seen
    when the session first stops."""
    at = next(i for i, e in enumerate(events) if e.get("type") == ma.SESSION_IDLE)
    return events[:at + 1]


def _shape(answers: Any) -> Any:
    """The fields of each answer the checker compares (a deny_message is the
    application's own words)."""
    if not isinstance(answers, list):
        return answers
    keep = ("type", "tool_use_id", "custom_tool_use_id", "result", "content")
    return [{k: a[k] for k in keep if k in a} if isinstance(a, dict) else a for a in answers]


def _waits(events: list[dict]) -> str:
    idle = next((e for e in reversed(events) if e.get("type") == ma.SESSION_IDLE), {})
    reason = idle.get("stop_reason") or {}
    by_id = {e.get("id"): e for e in events}
    held = [f"{i} ({by_id.get(i, {}).get('type')} {by_id.get(i, {}).get('name')})"
            for i in reason.get("event_ids", [])]
    return (f"the last idle's stop_reason is {reason.get('type')!r}" +
            (f", waiting on {', '.join(held)}" if held else ""))


def _asked(events: list[dict]) -> list[str]:
    """The event ids the last idle waits on (none unless it asks for action)."""
    idle = next((e for e in reversed(events) if e.get("type") == ma.SESSION_IDLE), {})
    reason = idle.get("stop_reason") or {}
    return list(reason.get("event_ids", [])) if reason.get("type") == ma.REQUIRES_ACTION else []


def _answer_advice(events: list[dict], expected: list, got: list, at: int) -> str:
    want = expected[at] if at < len(expected) else None
    have = got[at] if at < len(got) else None
    if want is not None and have is None:
        return ("every event the idle waits on (stop_reason.event_ids) needs an answer, or "
                "the session stays idle and the turn paused: an approver that never answers "
                "never carries the session on")
    if want is None:
        return ("answer only what the last idle waits on, and only when its stop_reason is "
                "requires_action: an end_turn or a budget asks for nothing")
    asked = _asked(events)
    answered = have.get("tool_use_id") or have.get("custom_tool_use_id")
    if answered not in asked:
        return (f"answer only what the last idle waits on (stop_reason.event_ids: "
                f"{', '.join(asked) or 'none'}), in that order; {answered} is not one of them "
                f"(a call the agent was allowed to run has already run)")
    if want.get("type") != have.get("type"):
        return ("a held call of the agent's (agent.tool_use, evaluated_permission 'ask') "
                "gets a user.tool_confirmation; a call of your own tool "
                "(agent.custom_tool_use) gets a user.custom_tool_result with its text")
    if want.get("result") != have.get("result"):
        return ("the confirmation's result is what approve(call) says: 'allow' (ma.ALLOW) "
                "when it returns True, 'deny' (ma.DENY) when False")
    return ("each answer names the call it answers (tool_use_id for a confirmation, "
            "custom_tool_use_id for a result) and a result's content is "
            "[{'type': 'text', 'text': tools[name](input)}]")


def _explain_answer(events: list[dict]) -> Callable[[Any, Any], str | None]:
    def explain(expected: Any, got: Any) -> str | None:
        if not isinstance(got, list):
            return f"return a list of events to post (dicts), got {type(got).__name__}"
        got = _shape(got)
        at = differs_at(expected, got)
        if at == len(expected) == len(got):
            return None
        want = json.dumps(expected[at]) if at < len(expected) else "nothing more"
        have = json.dumps(got[at]) if at < len(got) else "nothing"
        return (f"{_waits(events)}.\n  Answer {at}: expected {want:.200}, got {have:.200}.\n"
                f"  Fix: {_answer_advice(events, expected, got, at)}.")
    return explain


def carried_on(events: list[dict], answers: list[dict]) -> list[dict]:
    """The session after the application posts `answers` to the idle that ends `events`:
    the answers echoed with ids, the session running again, each allowed call's result,
    the agent's closing message and an idle that ends the turn."""
    by_id = {e.get("id"): e for e in events}
    more: list[dict] = []
    allowed = []
    for n, posted in enumerate(answers):
        more.append({**posted, "id": f"sevt_posted_{n}"})
        if posted.get("type") == ma.USER_TOOL_CONFIRMATION and posted.get("result") == ma.ALLOW:
            allowed.append(posted["tool_use_id"])
    more += [{"type": ma.SESSION_RUNNING, "id": "sevt_run_again"}]
    for n, call_id in enumerate(allowed):
        name = by_id.get(call_id, {}).get("name")
        more.append({"type": ma.AGENT_TOOL_RESULT, "id": f"sevt_result_{n}",
                     "tool_use_id": call_id, "is_error": False,
                     "content": [{"type": ma.TEXT_BLOCK, "text": f"{name}: done"}]})
    said = "Done: the pin is bumped." if allowed else "Understood: I left it as it is."
    more += [_message("sevt_closing", said), _idle("sevt_idle_end")]
    return events + more


CARRY_ON = "carry the session on: post your answers, and the turn ends completed"


def _carry_on_case() -> Case:
    events = session_events(corpus_capture(f"{WIRE}/session-requires-action"))
    return Case(CARRY_ON, (CARRY_ON, events, allow_all, TOOLS),
                {"outcome": "completed", "reason": "stop"}, _explain_carry_on(events))


def _explain_carry_on(events: list[dict]) -> Callable[[Any, Any], str | None]:
    def explain(expected: Any, got: Any) -> str | None:
        if expected == got:
            return None
        return (f"after your answers the turn ended {got['outcome']} "
                f"({got['reason']}), expected completed (stop): {_waits(events)}.\n"
                f"  Fix: post one answer per event the idle waits on; the session runs "
                f"again only when all of them are answered.")
    return explain


def _end_after(events: list[dict], answers: Any) -> dict:
    """How the turn ends once `answers` are posted (the session goes on only when every
    event the idle waits on is answered)."""
    idle = next(e for e in reversed(events) if e.get("type") == ma.SESSION_IDLE)
    waits = set((idle.get("stop_reason") or {}).get("event_ids", []))
    answered = {a.get("tool_use_id") or a.get("custom_tool_use_id")
                for a in answers if isinstance(a, dict)} if isinstance(answers, list) else set()
    whole = events if not waits or not waits <= answered else carried_on(events, answers)
    state = turn_state(session_capture(whole, "carried on"), route="wire")
    return {"outcome": state.end.outcome, "reason": state.end.reason}


def _hand_made_two_waits() -> list[dict]:
    return [{"type": ma.SESSION_RUNNING, "id": "e1"},
            {"type": ma.AGENT_CUSTOM_TOOL_USE, "id": "c1", "name": "lookup_pinned_version",
             "input": {"package": "requests"}},
            {"type": ma.AGENT_TOOL_USE, "id": "c2", "name": "edit",
             "input": {"file_path": "requirements.txt"}, ma.PERMISSION_FIELD: ma.ASK},
            _idle("e2", ma.REQUIRES_ACTION, event_ids=["c2", "c1"])]


@cache
def answer_cases() -> tuple[Case, ...]:
    """The paused captures answered (allowed, denied, a custom tool's result), the ends that
    ask for nothing, a hand-made idle waiting on two calls, and the session carried on."""
    from ..solutions.lesson07 import answer as course_answer

    asked = session_events(corpus_capture(f"{WIRE}/session-requires-action"))
    custom = up_to_first_idle(session_events(corpus_capture(f"{WIRE}/session-custom-tool")))
    rows = [
        (f"{WIRE}/session-requires-action, the held edit approved", asked, allow_all),
        (f"{WIRE}/session-requires-action, the held edit denied", asked, deny_all),
        (f"{WIRE}/session-custom-tool, up to its first idle", custom, allow_all),
        (f"{WIRE}/session-plain-turn (end_turn: nothing to answer)",
         session_events(corpus_capture(f"{WIRE}/session-plain-turn")), allow_all),
        (f"{WIRE}/session-budget-reached (a budget: nothing to answer)",
         session_events(corpus_capture(f"{WIRE}/session-budget-reached")), allow_all),
        ("hand-made: an idle waiting on a held edit and a custom tool call",
         _hand_made_two_waits(), deny_all),
    ]
    cases = [Case(label, (label, events, approve, TOOLS),
                  _shape(course_answer(copy.deepcopy(events), approve, TOOLS)),
                  _explain_answer(events)) for label, events, approve in rows]
    return (*cases, _carry_on_case())


def check_answer(fn: Callable[..., list[dict]]) -> Verdict:
    """Grade `fn(events, approve, tools) -> the events to post`, then carry the session on
    with its answers."""
    def run(label: str, events: list[dict], approve: Any, tools: Any) -> Any:
        answers = fn(copy.deepcopy(events), approve, tools)
        if label == CARRY_ON:
            return _end_after(events, answers)
        return answers
    return grade(ANSWER, run, answer_cases())
