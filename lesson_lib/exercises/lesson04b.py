"""Checkers for lesson 4b, "A new wire is one adapter".

1. `check_gemini_blocks`: Gemini's parts to blocks with minted ids: the
   first candidate's parts, record by record, as the blocks of the turn
   (``b0``, ``b1``... in order; text and reasoning with their text, a tool
   call with its name and input, any other part ``other``). Graded against
   the blocks the course's own accumulator and adapter give, on every Gemini
   capture of the corpus whose calls arrive whole, and on hand-made records
   for the rules the captures do not all show (two signed thoughts, a text
   after a ``finishReason``, an empty text that continues nothing).
2. `check_gemini_finish`: the finish reason from ``finishReason`` and the
   parts (``STOP`` with a ``functionCall`` part asks for tools). Graded
   against the adapter's own finish on every Gemini capture, and on
   hand-made reasons.
3. `check_interactions_adapter`: a whole adapter for Gemini Interactions, a
   class that turns the accumulator's changes into turn events. Run on every
   constructed Interactions capture and every shared recording (left out,
   with a printed reason, when REFERENCE_CAPTURES has none), its events are
   compared with the course adapter's, event by event (the fields in
   `SHOWN`); then the weather turn runs live through `LiveTurn` against the
   course's server, with the learner's class as the wire's adapter.

A mismatch shows the input the function was given (the parts, record by
record) and says what to change. Every case comes from the corpus or is
written here: offline, the same verdict every time.
"""

from __future__ import annotations

import asyncio
import json
import threading
from collections.abc import Callable
from functools import cache
from typing import Any

from ..capture.captures import corpus, from_bytes, reference_corpus, reference_dir
from ..turn.adapters import ADAPTERS, WireAdapter
from ..turn.run import step_events, turn_state
from ..wires import gemini, gemini_interactions
from ..wires.wire_events import parse_all
from . import Case, Verdict, corpus_capture, exercise, grade
from .compare import first_difference
from .event_by_event import adapting, differs_at, turn_event_difference

BLOCKS = exercise("04b", 1, "Gemini's parts to blocks",
                  solution="lesson_lib.solutions.lesson04b:gemini_blocks")
FINISH = exercise("04b", 2, "Gemini's finish reason",
                  solution="lesson_lib.solutions.lesson04b:gemini_finish")
ADAPTER = exercise("04b", 3, "The whole Gemini Interactions adapter",
                   solution="lesson_lib.solutions.lesson04b:InteractionsAdapter")

WIRE = gemini.WIRE
INTERACTIONS = gemini_interactions.WIRE


def records_of(capture: Any) -> list[dict]:
    """A Gemini capture's records (the parsed ``GenerateContentResponse`` objects), in order."""
    return [e.payload for e in parse_all(capture.events)
            if e.type == gemini.RECORD and isinstance(e.payload, dict)]


def records(name: str) -> list[dict]:
    """The records of the corpus capture ``google-gemini/<name>`` (or a full key)."""
    key = name if "/" in name else f"{WIRE}/{name}"
    return records_of(corpus_capture(key))


def _parts(records_: list[dict]) -> list[tuple[int, dict]]:
    """Every part of the first candidate, with the number of the record it came in."""
    out = []
    for n, record in enumerate(records_):
        for position, cand in enumerate(record.get("candidates") or []):
            if isinstance(cand, dict) and cand.get("index", position) == 0:
                out += [(n, p) for p in (cand.get("content") or {}).get("parts") or []]
    return out


def _streamed(records_: list[dict]) -> bool:
    return any(isinstance(p.get("functionCall"), dict)
               and ("willContinue" in p["functionCall"] or "name" not in p["functionCall"])
               for _, p in _parts(records_))


# -- the answers: the course's own accumulator and adapter -----------------------------------

def _state(capture: Any):
    return turn_state(capture, route="wire")


def expected_blocks(capture: Any) -> list[dict]:
    """The first candidate's blocks as the turn holds them, numbered in order."""
    blocks = [b for b in _state(capture).blocks if b.choice == 0]
    out = []
    for n, b in enumerate(blocks):
        if b.kind in ("text", "reasoning"):
            out.append({"id": f"b{n}", "kind": b.kind, "text": b.text})
        elif b.kind == "tool_call" and not b.server_side:
            out.append({"id": f"b{n}", "kind": "tool_call", "name": b.name, "input": b.input})
        else:
            out.append({"id": f"b{n}", "kind": "other"})
    return out


def _capture_of(records_: list[dict], label: str) -> Any:
    body = b"".join(b"data: " + json.dumps(r).encode() + b"\r\n\r\n" for r in records_)
    return from_bytes(body, name=label, sidecar={"wire": WIRE})


def _record(parts: list[dict], finish: str | None = None) -> dict:
    cand: dict[str, Any] = {"content": {"role": "model", "parts": parts}, "index": 0}
    if finish is not None:
        cand["finishReason"] = finish
    return {"candidates": [cand], "modelVersion": "gemini-2.5-flash"}


HAND_MADE_RECORDS = {
    "hand-made: two signed thoughts in a row (a signature on each: two blocks)": [
        _record([{"text": "Paris first.", "thought": True, "thoughtSignature": "c2lnMQ=="}]),
        _record([{"text": " Then Tokyo.", "thought": True, "thoughtSignature": "c2lnMg=="}]),
        _record([{"text": "Both are mild."}], "STOP")],
    "hand-made: a thought, its signature on the next fragment, then the answer": [
        _record([{"text": "Let me think", "thought": True}]),
        _record([{"text": " it over.", "thought": True, "thoughtSignature": "c2ln"}]),
        _record([{"text": "It is 18 "}]), _record([{"text": "degrees."}], "STOP")],
    "hand-made: an empty text first (it continues nothing: no block)": [
        _record([{"text": ""}]), _record([{"text": "Hello"}]),
        _record([{"text": ", world."}], "STOP")],
    "hand-made: text after a finishReason (code execution goes on: a new block)": [
        _record([{"text": "Let me compute."}]),
        _record([{"executableCode": {"language": "PYTHON", "code": "print(2 + 2)"}}]),
        _record([{"codeExecutionResult": {"outcome": "OUTCOME_OK", "output": "4\n"}},
                 {"text": "So 2 + 2"}], "STOP"),
        _record([{"text": " is 4."}]), _record([{"text": " Checked."}], "STOP")],
    "hand-made: text, a whole call, text again (three blocks)": [
        _record([{"text": "Checking."}]),
        _record([{"functionCall": {"name": "get_weather", "args": {"location": "Oslo"}}}]),
        _record([{"text": "Asked."}], "STOP")],
}


def _show_input(records_: list[dict], near: int | None = None) -> str:
    """The parts the function was given, one line each, with their record's number."""
    lines = []
    for n, record in enumerate(records_):
        for position, cand in enumerate(record.get("candidates") or []):
            if not isinstance(cand, dict) or cand.get("index", position) != 0:
                continue
            for part in (cand.get("content") or {}).get("parts") or []:
                lines.append(f"record {n}: {_short_part(part)}")
            if "finishReason" in cand:
                lines.append(f"record {n}: finishReason {cand['finishReason']!r}")
    if len(lines) > 12:
        at = min(near or 0, len(lines) - 1)
        start = max(0, at - 5)
        shown = lines[start:start + 10]
        lines = ([f"... ({start} lines before)"] if start else []) + shown + (
            [f"... ({len(lines) - start - 10} more)"] if start + 10 < len(lines) else [])
    return "\n    ".join(lines)


def _short_part(part: Any) -> str:
    text = json.dumps(part, ensure_ascii=False)
    if "thoughtSignature" in part:
        text = json.dumps({**part, "thoughtSignature": "…"}, ensure_ascii=False)
    return text if len(text) <= 90 else text[:87] + "..."


def _block_advice(expected: list, got: list, at: int) -> str:
    if at < len(expected) and at < len(got):
        e, g = expected[at], got[at]
        if not isinstance(g, dict):
            return "each block is a dict: {'id', 'kind', ...}"
        if e.get("id") != g.get("id") and e.get("kind") == g.get("kind"):
            return ("mint one id per block, in order (b0, b1, ...), not one per part: a part "
                    "that continues a block adds to its text and takes no id")
        if e.get("kind") != g.get("kind"):
            return ("a text part with `thought: true` is reasoning, a whole `functionCall` a "
                    "tool call, any other part (code, its result, a server tool) `other`")
        if e.get("kind") in ("text", "reasoning") and len(str(e.get("text"))) > len(
                str(g.get("text"))):
            return ("this block's text goes on in later parts: a text part continues the open "
                    "block right before it when the kind is the same")
        if e.get("kind") in ("text", "reasoning"):
            return ("this block took text that is a block of its own: a part does not continue "
                    "a block closed by a finishReason or by a part of another kind, and two "
                    "parts that both carry a thoughtSignature are two blocks")
        return "a tool call's block has the call's `name` and its `args` as `input`"
    if len(got) < len(expected):
        return ("you have fewer blocks: a part that starts a new block was added to the one "
                "before (a signature on both, a finishReason between them, another kind)")
    return ("you have more blocks: a part that continues the block before it opened one of its "
            "own (same kind, block still open), or an empty {'text': ''} that continues "
            "nothing became a block")


def _explain_blocks(records_: list[dict]) -> Callable[[Any, Any], str | None]:
    def explain(expected: Any, got: Any) -> str | None:
        if not isinstance(got, list):
            return f"return a list of blocks (dicts), got {type(got).__name__}"
        problem = first_difference(expected, got, "blocks")
        if problem is None:
            return None
        at = differs_at(expected, got)
        return (f"{problem}.\n  Fix: {_block_advice(expected, got, at)}.\n"
                f"  The parts you were given:\n    {_show_input(records_, at)}")
    return explain


@cache
def blocks_cases() -> tuple[Case, ...]:
    """Every whole-call Gemini capture of the corpus, then the hand-made records."""
    cases = []
    for cap in corpus():
        if cap.wire != WIRE:
            continue
        found = records_of(corpus_capture(cap.key))
        if not _parts(found) or _streamed(found):
            continue   # no parts at all (an HTTP error), or streamed arguments (section 3)
        cases.append(Case(cap.key, (found,), expected_blocks(corpus_capture(cap.key)),
                          _explain_blocks(found)))
    for label, found in HAND_MADE_RECORDS.items():
        cases.append(Case(label, (found,), expected_blocks(_capture_of(found, label)),
                          _explain_blocks(found)))
    return tuple(cases)


def check_gemini_blocks(fn: Callable[[list[dict]], list[dict]]) -> Verdict:
    """Grade `fn(records) -> blocks`."""
    return grade(BLOCKS, lambda found: fn(json.loads(json.dumps(found))), blocks_cases())


# -- exercise 2 ------------------------------------------------------------------------------

def _last_finish(records_: list[dict]) -> str | None:
    reason = None
    for record in records_:
        for position, cand in enumerate(record.get("candidates") or []):
            if isinstance(cand, dict) and cand.get("index", position) == 0 \
                    and isinstance(cand.get("finishReason"), str):
                reason = cand["finishReason"]
    return reason


def _explain_finish(reason: Any, parts: list[dict]) -> Callable[[Any, Any], str | None]:
    def explain(expected: Any, got: Any) -> str | None:
        if expected == got:
            return None
        kinds = [gemini.part_kind(p) for p in parts]
        if expected == "tool_calls":
            fix = "STOP says only that the model stopped: with a functionCall part it asks for tools"
        elif got == "tool_calls":
            fix = ("only a functionCall part is a call for your tools; code execution and "
                   "server tools are the provider's own")
        elif reason is None:
            fix = "no finishReason at all (a cut stream): the unified reason is 'other'"
        else:
            fix = f"look {reason!r} up in FINISH_REASONS (a name it lacks is 'other')"
        return (f"finishReason {reason!r}, part kinds {kinds}: expected {expected!r}, got "
                f"{got!r}.\n  Fix: {fix}")
    return explain


HAND_MADE_FINISH = {
    "hand-made: a malformed call": ("MALFORMED_FUNCTION_CALL", []),
    "hand-made: recitation": ("RECITATION", [{"text": "It was the best of times"}]),
    "hand-made: code execution only, STOP (the provider's tool, not yours)": (
        "STOP", [{"executableCode": {"language": "PYTHON", "code": "print(1)"}},
                 {"codeExecutionResult": {"outcome": "OUTCOME_OK", "output": "1\n"}}]),
    "hand-made: a reason newer than the table": ("SOMETHING_NEW", [{"text": "Hi"}]),
    "hand-made: no finishReason (the stream was cut)": (None, [{"text": "Hel"}]),
    "hand-made: max tokens in the middle of a call's turn": (
        "MAX_TOKENS", [{"functionCall": {"name": "get_weather", "args": {}}}]),
}


@cache
def finish_cases() -> tuple[Case, ...]:
    """Every Gemini capture's last finishReason with its parts, then hand-made ones."""
    cases = []
    for cap in corpus():
        if cap.wire != WIRE:
            continue
        capture = corpus_capture(cap.key)
        found = records_of(capture)
        state = _state(capture)
        if not found or not state.steps or state.errors:
            continue   # an HTTP error, or an error record: the step's finish is the error's
        reason, parts = _last_finish(found), [p for _, p in _parts(found)]
        cases.append(Case(cap.key, (reason, parts), state.steps[0].finish.reason,
                          _explain_finish(reason, parts)))
    for label, (reason, parts) in HAND_MADE_FINISH.items():
        called = any("functionCall" in p for p in parts)
        expected = gemini.finish_from(reason, called_tools=called) or "other"
        cases.append(Case(label, (reason, parts), expected, _explain_finish(reason, parts)))
    return tuple(cases)


def check_gemini_finish(fn: Callable[[str | None, list[dict]], str]) -> Verdict:
    """Grade `fn(finish_reason, parts) -> unified finish reason`."""
    return grade(FINISH, lambda reason, parts: fn(reason, json.loads(json.dumps(parts))),
                 finish_cases())


# -- exercise 3: the whole Gemini Interactions adapter ---------------------------------------

# What of each turn event is compared: the fields a learner's adapter decides. Sequence
# numbers follow from the events themselves, and times and wire positions from the stream.
SHOWN = {
    "step_started": ("step", "wire"),
    "block_started": ("block", "block_kind", "channel", "name", "call_id", "server_side",
                      "content"),
    "block_delta": ("block", "fragment", "channel"),
    "signature_added": ("block", "signature"),
    "block_ended": ("block", "complete", "synthesised"),
    "tool_call_ready": ("block", "name", "call_id", "input"),
    "tool_call_invalid": ("block", "name", "call_id", "state"),
    "error_reported": ("scope", "code"),
    "noted": ("code",),
    "usage_reported": ("usage",),
    "step_finished": ("finish", "ended"),
    "wire_event_passed": ("event_type",),
    "source_added": ("block", "source"),
}
# Their order against the tools' own events depends on timing: left out of the live check.
LIVE_ONLY = frozenset({"turn_started", "turn_finished", "tool_execution_started",
                       "tool_execution_finished"})


def shown(event: Any) -> dict:
    """A turn event as the checker compares it: its kind and the fields in `SHOWN`."""
    out = {"kind": event.kind}
    for name in SHOWN.get(event.kind, ()):
        value = getattr(event, name, None)
        if name == "finish":
            value = value.reason
        elif name == "usage":
            value = (value.input, value.output, value.reasoning)
        out[name] = value
    return out


def adapter_events(adapter_class: type, capture: Any) -> list[dict]:
    """One step's turn events, as `shown`, with `adapter_class` reading the changes."""
    with adapting(INTERACTIONS, adapter_class):
        return [shown(e) for e in step_events(capture, route="wire")]


def interactions_captures() -> tuple[list[Any], str | None]:
    """The constructed Interactions captures, then the shared recordings; and why the
    recordings are left out, when they are."""
    found = [corpus_capture(c.key) for c in corpus() if c.wire == INTERACTIONS]
    recordings = [c for c in reference_corpus() if c.wire == INTERACTIONS]
    if not recordings:
        return found, (f"the shared recordings were not checked: no {INTERACTIONS} "
                       f"recordings in the folder REFERENCE_CAPTURES names")
    return found + sorted(recordings, key=lambda c: c.key), None


def _advice(expected: dict | None, got: dict | None) -> str:
    """What the first difference most likely means, in the adapter's terms."""
    want = expected["kind"] if expected else None
    have = got["kind"] if got else None
    if want == "step_finished" and have is None:
        return ("your adapter never ended the step: the StreamEnded change must reach the "
                "base (`super().feed([change])`), which says StepFinished")
    if have == "tool_call_ready" and want != "tool_call_ready":
        return ("a tool call was made ready before its arguments settled: a call is ready "
                "only at its SlotClosed (the step.stop), with the change's `input`")
    if want == "signature_added":
        return ("the thought's signature was dropped: a `thought_signature` delta arrives as "
                "a SlotSigned change; say it with SignatureAdded on the thought's block (the "
                "next request sends it back)")
    if want == "block_ended" and have != "block_ended":
        return ("a step's block did not end here: every SlotClosed ends its block, a step "
                "that arrives whole ends at once, and a step still open when the stream "
                "ends ends cut (complete=False, synthesised=True)")
    if want == "block_started" and have == "block_started":
        return ("the step's type decides the block: thought -> reasoning, model_output -> "
                "text, function_call -> tool_call (with its name and call id), a server "
                "tool's *_call -> tool_call (its input the step's arguments at its stop) and "
                "*_result -> tool_result, both server-side")
    if want == "step_finished" and have == "step_finished":
        return ("finish() reads the interaction's `status` (self.response['status']) through "
                "`finish_reason`: requires_action is tool_calls, completed is stop")
    if want == "block_delta" and have == "block_delta":
        return ("each TextAppended or ToolInputGrew is one BlockDelta on its step's block, "
                "its fragment as it came, the channel 'reasoning' for a thought")
    if want in ("tool_call_ready", "tool_call_invalid"):
        return ("a function call's end is ToolCallReady when the SlotClosed's call_state is "
                "'complete' (its `input` is the parsed arguments), else ToolCallInvalid")
    if want == "source_added":
        return ("an annotation on a step's text arrives as a CitationAdded change: say it "
                "with SourceAdded on that step's block (its `citation` is the source)")
    if want in ("usage_reported", "error_reported", "noted", "wire_event_passed"):
        return ("changes your adapter does not read itself (ResponseChanged, InBandError, "
                "DiagnosticNoted, UnknownEvent...) go to the base: `super().feed([change])`")
    return "compare your handling of this change with the API card"


def _explain_events(expected: list[dict], got: list[dict]) -> str | None:
    """The first event that differs, what was expected, and the likely mistake."""
    return turn_event_difference(expected, got, _advice, after=True)


def interactions_cases() -> tuple[Case, ...]:
    """One case per Interactions capture: the course adapter's events are the answer."""
    return _cases_under(str(reference_dir()))


@cache
def _cases_under(reference: str) -> tuple[Case, ...]:
    course = ADAPTERS[INTERACTIONS]
    captures, _ = interactions_captures()
    return tuple(Case(c.key, (c,), adapter_events(course, c),
                      lambda e, g: _explain_events(e, g)) for c in captures)


LIVE_DEADLINE_S = 30.0   # the turn is cancelled past it: an adapter that hangs fails
LIVE = "live: the weather turn through LiveTurn and the course's server"


def live_events(adapter_class: type) -> list[dict]:
    """The weather turn run live through `LiveTurn` against the course's server, as
    `shown`, and then how the turn ended."""
    from ..capture.captures import load
    from ..cli.serve import serving
    from ..live import LiveTurn, weather_tool

    request = load(f"{INTERACTIONS}/weather-turn-step1").request
    with adapting(INTERACTIONS, adapter_class), serving(speed="instant") as url:
        turn = LiveTurn(url, INTERACTIONS, request, [weather_tool(0.0)],
                        deadline_s=LIVE_DEADLINE_S)
        result = _in_a_thread(turn.run)
    return [shown(e) for e in turn.events if e.kind not in LIVE_ONLY] + [
        {"kind": "turn_outcome", "outcome": result.outcome}]


def _in_a_thread(coro_fn: Callable[[], Any]) -> Any:
    """Run a coroutine to its end in a thread of its own (a notebook's kernel already
    runs an event loop); what it raised is raised here."""
    box: dict[str, Any] = {}

    def target() -> None:
        try:
            box["value"] = asyncio.run(coro_fn())
        except BaseException as exc:    # raised again below, in the caller's thread
            box["error"] = exc

    thread = threading.Thread(target=target, daemon=True)
    thread.start()
    thread.join(LIVE_DEADLINE_S + 5)
    if "error" in box:
        raise box["error"]
    if "value" not in box:
        raise TimeoutError(f"the live turn did not end within {LIVE_DEADLINE_S:g} s")
    return box["value"]


@cache
def _course_live() -> tuple[dict, ...]:
    return tuple(live_events(ADAPTERS[INTERACTIONS]))


def check_interactions_adapter(adapter_class: type) -> Verdict:
    """Grade a Gemini Interactions adapter class: on every constructed capture and every
    shared recording, event by event against the course's adapter, then live on the
    weather turn through `LiveTurn` and the course's server."""
    _, skipped = interactions_captures()
    live = Case(LIVE, (LIVE,), list(_course_live()), lambda e, g: _explain_events(e, g))

    def run(source: Any) -> list[dict]:
        if not (isinstance(adapter_class, type) and issubclass(adapter_class, WireAdapter)):
            raise TypeError(f"pass the class itself, a subclass of WireAdapter, not "
                            f"{type(adapter_class).__name__} {adapter_class!r:.60}")
        if source == LIVE:
            return live_events(adapter_class)
        return adapter_events(adapter_class, source)

    verdict = grade(ADAPTER, run, (*interactions_cases(), live))
    if skipped and verdict.status != "not attempted":
        print(skipped)      # said only of an adapter that was graded
    return verdict
