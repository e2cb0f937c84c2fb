"""Checkers for lesson 4, "The unified reducer".

1. `check_responses_finish`: the Responses adapter's finish-reason branch:
   the unified finish reason from a ``response`` object; graded against
   `lesson_lib.wires.responses.finish_from` on every Responses capture's last
   response and on hand-made ones.
2. `check_reduce_tool_block`: the reducer's branch for tool-call blocks: a
   card (raw input, call state, execution) after each turn event; graded
   against `TurnState` after every event, on calls from Anthropic Messages, OpenAI
   Responses and OpenAI Chat, a
   cut call, a length stop, a turn whose tools ran and one whose tool failed.
   A function that changes the card it was given fails, even when the card
   it returns is right: the reducer is pure.
3. `check_outcome_of_end`: a one-step turn's outcome from how its stream
   ended; graded against the turn's own outcome on the corpus. A mismatch
   shows the `end` the function was given, and a provider's raw reason
   (``"pause_turn"``) is named as such.

Every case comes from the corpus or is written here: offline, the same verdict every time.
"""

from __future__ import annotations

import ast
import asyncio
import copy
import inspect
import textwrap
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from functools import cache
from typing import Any

from ..capture.captures import corpus
from ..turn.fake_tools import FakeTool, ToolFailed, weather_tool
from ..turn.loop import run_turn
from ..turn.outcome import outcome_of_step
from ..turn.reduce import reduce_all
from ..turn.run import turn_events, turn_state
from ..wires import anthropic, chat, responses
from ..wires.responses import finish_from
from ..wires.wire_events import parse_all
from . import Case, Verdict, corpus_capture, exercise, grade
from .compare import first_difference

FINISH = exercise("04", 1, "The Responses finish reason",
                  solution="lesson_lib.solutions.lesson04:responses_finish")
TOOL_BLOCK = exercise("04", 2, "The reducer's branch for tool blocks",
                      solution="lesson_lib.solutions.lesson04:reduce_tool_block")
OUTCOME = exercise("04", 3, "An outcome from a stream's end",
                   solution="lesson_lib.solutions.lesson04:outcome_of_end")

WIRES = ("anthropic-messages", "openai-responses", "openai-chat")


def route() -> str:
    """The route the checkers take: the wire route (bytes, the wire's accumulator, its
    adapter)."""
    return "wire"


# -- exercise 1 ------------------------------------------------------------------------------

_CALLS = ("function_call", "custom_tool_call")


def expected_finish(response: dict) -> str:
    """The course's finish reason of a Responses ``response`` object."""
    output = response.get("output") or []
    details = response.get("incomplete_details") or {}
    return finish_from(response.get("status"), details.get("reason"),
                       called_tools=any(i.get("type") in _CALLS for i in output),
                       refused=any(p.get("type") == "refusal" for i in output
                                   for p in i.get("content") or [])) or "other"


def _last_response(key: str) -> dict | None:
    last = None
    for event in parse_all(corpus_capture(key).events):
        payload = event.payload
        if isinstance(payload, dict) and isinstance(payload.get("response"), dict):
            last = payload["response"]
    return last


HAND_MADE_RESPONSES = {
    "hand-made: cut by the content filter":
        {"status": "incomplete", "incomplete_details": {"reason": "content_filter"},
         "output": []},
    "hand-made: a web search only (provider-side, no client call)":
        {"status": "completed", "output": [{"type": "web_search_call"},
                                           {"type": "message", "content": [
                                               {"type": "output_text", "text": "..."}]}]},
    "hand-made: text, then a function call":
        {"status": "completed", "output": [{"type": "message", "content": [
            {"type": "output_text", "text": "Let me look."}]},
            {"type": "function_call", "name": "get_weather", "arguments": "{}"}]},
    "hand-made: failed": {"status": "failed", "error": {"code": "server_error"}, "output": []},
    "hand-made: cancelled": {"status": "cancelled", "output": []},
}


def _explain_finish(response: dict) -> Callable[[Any, Any], str | None]:
    def explain(expected: Any, got: Any) -> str | None:
        if expected == got:
            return None
        kinds = [i.get("type") for i in response.get("output") or []]
        details = response.get("incomplete_details")
        return (f"status {response.get('status')!r}, incomplete_details {details!r}, output "
                f"item types {kinds}: expected {expected!r}, got {got!r}")
    return explain


def finish_cases() -> list[Case]:
    """Every Responses capture's last response object, then the hand-made ones."""
    cases = []
    for cap in corpus():
        if cap.wire != "openai-responses":
            continue
        response = _last_response(cap.key)
        if response is not None and response.get("status") not in (None, "in_progress"):
            cases.append(Case(cap.key, (response,), expected_finish(response),
                              _explain_finish(response)))
    for label, response in HAND_MADE_RESPONSES.items():
        cases.append(Case(label, (response,), expected_finish(response),
                          _explain_finish(response)))
    return cases


def check_responses_finish(fn: Callable[[dict], str]) -> Verdict:
    """Grade `fn(response) -> finish reason`."""
    return grade(FINISH, fn, finish_cases())


# -- exercise 2 ------------------------------------------------------------------------------

TOOL_TURNS = (
    ("anthropic-messages/weather-turn-step1",),
    ("openai-responses/weather-turn-step1",),
    ("openai-chat/weather-turn-step1",),
    ("anthropic-messages/cut-in-tool-json",),
    ("anthropic-messages/max-tokens-in-tool-json",),
    ("openai-chat/cut-in-arguments",),
)
LOOP_TURN = "anthropic-messages/weather-turn (the loop ran its tools)"
FAILING_TOOL_TURN = "anthropic-messages/weather-turn-step1 (Tokyo's weather tool failed)"


def _tokyo_fails(arguments: dict) -> Any:
    if str((arguments or {}).get("location", "")).startswith("Tokyo"):
        raise ToolFailed("the weather service timed out")
    return weather_tool().answer(arguments)


def _run_in_a_thread(coroutine) -> Any:
    # In a notebook an event loop already runs in this thread: run the turn in another.
    with ThreadPoolExecutor(1) as pool:
        return pool.submit(asyncio.run, coroutine).result()


@cache
def _tool_turn(keys: tuple[str, ...]) -> tuple:
    if keys == (LOOP_TURN,):
        steps = [corpus_capture("anthropic-messages/weather-turn-step1"),
                 corpus_capture("anthropic-messages/weather-turn-step2")]
        return tuple(_run_in_a_thread(run_turn(steps, [weather_tool()], route=route())).events)
    if keys == (FAILING_TOOL_TURN,):
        steps = [corpus_capture("anthropic-messages/weather-turn-step1")]
        tool = FakeTool(weather_tool().name, _tokyo_fails, 800.0)
        return tuple(_run_in_a_thread(run_turn(steps, [tool], route=route())).events)
    return tuple(turn_events([corpus_capture(k) for k in keys], route=route()))


def block_events(events: list, block: str) -> list:
    """The turn events of one block, in order."""
    return [e for e in events if getattr(e, "block", None) == block]


def _card_of(view) -> dict:
    return {"raw_input": view.raw_input, "call_state": view.call_state,
            "execution": view.execution}


@dataclass(frozen=True)
class ChangedInPlace:
    """What `_fold` gives back when the learner's function changed the card it was given."""

    block: str
    index: int
    event: str
    difference: str


def _explain_cards(events: tuple) -> Callable[[Any, Any], str | None]:
    def explain(expected: Any, got: Any) -> str | None:
        if isinstance(got, ChangedInPlace):
            return (f"block {got.block}, at its event {got.index} ({got.event}): your function "
                    f"changed the card it was given (after the call, {got.difference}). "
                    "The reducer is pure: return a new dict, e.g. `card | {...}`, and leave "
                    "`card` as it was")
        for (bid, exp), (_, mine) in zip(expected, got, strict=False):
            for k, (event, want, have) in enumerate(zip(events_of(bid), exp, mine,
                                                        strict=False)):
                problem = first_difference(want, have, "the card")
                if problem:
                    return f"block {bid}, after its event {k} ({event.kind}): {problem}"
        return first_difference(expected, got)

    def events_of(bid: str) -> list:
        return block_events(list(events), bid)
    return explain


def _fold(fn: Callable[[dict, Any], dict], events: tuple) -> list | ChangedInPlace:
    state = reduce_all(list(events))
    out = []
    for b in state.calls:
        card, cards = {}, []
        for k, event in enumerate(block_events(list(events), b.id)):
            given = copy.deepcopy(card)
            new = fn(card, event)
            if card != given:
                return ChangedInPlace(b.id, k, event.kind,
                                      first_difference(given, card, "the card") or "")
            card = new
            cards.append(dict(card) if isinstance(card, dict) else card)
        out.append((b.id, cards))
    return out


def tool_block_cases() -> list[Case]:
    """Per turn: each tool block's card after each of its events, from `TurnState`."""
    cases = []
    for keys in TOOL_TURNS + ((LOOP_TURN,), (FAILING_TOOL_TURN,)):
        events = _tool_turn(keys)
        final = reduce_all(list(events))
        expected = []
        for b in final.calls:
            cards = []
            for event in block_events(list(events), b.id):
                cards.append(_card_of(final.at(event.seq + 1).block(b.id)))
            expected.append((b.id, cards))
        cases.append(Case(" + ".join(keys), (events,), expected, _explain_cards(events)))
    return cases


def check_reduce_tool_block(fn: Callable[[dict, Any], dict]) -> Verdict:
    """Grade `fn(card, event) -> card`, folded over each tool block's events."""
    return grade(TOOL_BLOCK, lambda events: _fold(fn, events), tool_block_cases())


# -- exercise 3 ------------------------------------------------------------------------------


def stream_end(key: str) -> dict:
    """How a capture's stream ended, as exercise 3 takes it."""
    cap = corpus_capture(key)
    state = turn_state(cap, route=route())
    finish = state.steps[-1].finish if state.steps else None
    return {"wire": cap.wire, "status": cap.status,
            "event_types": [e.type for e in parse_all(cap.events)],
            "finish": finish.reason if finish else None}


# A resumed stream is the rest of another one: alone it is no one-step turn.
NOT_ONE_STEP = frozenset({"openai-responses/background-resumed"})


# A provider's own finish value -> (where it is said, the unified reason `end["finish"]` holds),
# for the values that differ from their unified reason.
RAW_REASONS: dict[str, tuple[str, str]] = {
    **{raw: ("Anthropic's stop_reason", reason) for raw, reason in
       anthropic.FINISH_REASONS.items() if raw != reason},
    **{raw: ("Chat's finish_reason", reason) for raw, reason in chat.FINISH_REASONS.items()
       if raw != reason},
    **{raw: ("Responses' incomplete_details.reason", reason) for raw, reason in
       responses.INCOMPLETE_REASONS.items() if raw != reason},
}


def shown(end: dict) -> str:
    """The `end` a case gives, as a learner can read it (a long event list shortened)."""
    types = end["event_types"]
    listed = (repr(types) if len(types) <= 6
              else f"[{types[0]!r}, ..., {repr(types[-3:])[1:]} ({len(types)} in all)")
    return (f"{{'wire': {end['wire']!r}, 'status': {end['status']!r}, 'event_types': {listed}, "
            f"'finish': {end['finish']!r}}}")


def raw_values_in(fn: Callable) -> list[str]:
    """The providers' raw finish values written as strings in `fn`'s code (none if unreadable)."""
    try:
        tree = ast.parse(textwrap.dedent(inspect.getsource(fn)))
    except (OSError, TypeError, SyntaxError):
        return []
    found = {node.value for node in ast.walk(tree)
             if isinstance(node, ast.Constant) and isinstance(node.value, str)}
    return sorted(found & set(RAW_REASONS))


def _explain_outcome(end: dict, raw_used: list[str]) -> Callable[[Any, Any], str | None]:
    def explain(expected: Any, got: Any) -> str | None:
        if expected == got:
            return None
        message = f"given end = {shown(end)}: expected {expected!r}, got {got!r}"
        for raw in raw_used:
            where, reason = RAW_REASONS[raw]
            if reason == end["finish"]:
                return (f"{message}. Your code looks for {raw!r}: that is the provider's raw "
                        f"value ({where}); end['finish'] holds the unified reason, {reason!r}")
        return message
    return explain


def outcome_cases(raw_used: list[str] | None = None) -> list[Case]:
    """Every corpus capture of the wires in `WIRES`, its expected outcome the turn's own.

    `raw_used` (the raw finish values the learner's code names) lets a mismatch say
    that ``"pause_turn"`` is Anthropic's value, not the unified ``"pause"``.
    """
    raw_used = raw_used or []
    cases = []
    for cap in corpus():
        if cap.wire not in WIRES or cap.key in NOT_ONE_STEP or _ended_without_done(cap):
            continue
        end = stream_end(cap.key)
        expected = turn_state(cap, route=route()).outcome
        cases.append(Case(cap.key, (end,), expected, _explain_outcome(end, raw_used)))
    # The smallest stream that pauses (Anthropic's pause_turn), by hand, beside the captures.
    paused = {"wire": "anthropic-messages", "status": 200,
              "event_types": [anthropic.MESSAGE_START, anthropic.MESSAGE_DELTA,
                              anthropic.MESSAGE_STOP],
              "finish": "pause"}
    cases.append(Case("hand-made: an Anthropic stop_reason pause_turn", (paused,),
                      outcome_of_step("proper", "pause"), _explain_outcome(paused, raw_used)))
    return cases


def _ended_without_done(cap: Any) -> bool:
    """A Chat body that ended properly without ``[DONE]`` (a warning): its end needs the
    missing-marker rule (the finish of every choice, the usage), which the simple end this
    exercise reads does not carry."""
    from ..wires.stream_end import how_it_ended
    ending = how_it_ended(cap.wire, parse_all(cap.events), cap.sse_diagnostics, cap.status)
    return any(d.code == "no_done_marker" for d in ending.diagnostics)


def check_outcome_of_end(fn: Callable[[dict], str]) -> Verdict:
    """Grade `fn(end) -> outcome`."""
    return grade(OUTCOME, fn, outcome_cases(raw_values_in(fn)))
