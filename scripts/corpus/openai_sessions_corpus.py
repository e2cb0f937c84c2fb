"""The OpenAI Agents session corpus: one constructed session stream per thing lesson 7 shows.

Each function writes one capture into ``captures/openai-agent-sessions/`` with
`SessionStream` (every event checked against the SDK's model for it) and returns
its path; `build` writes them all. Seeds are fixed, so rebuilding gives the same
bytes. No public recording of a session stream exists: each sidecar says so.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from .openai_sessions_stream import BASED_ON, HELPER, WIRE, SessionStream, oas, usage
from .session_writer import write_session
from .weather_turn import ANSWER, CALLS, RESULTS, TOOL_NAME, TURN_NAME, result_text

QUESTION = "Which Python files in the repo import requests? Is the pinned version current?"
_ANSWER = ("Two files import requests: `tools/fetch.py` and `scripts/sync.py`. The pin in "
           "`requirements.txt` is 2.31.0; the latest release is 2.32.3.")


def _write(root: Path, name: str, stream: SessionStream, **sidecar: Any) -> Path:
    return write_session(root, WIRE, name, stream.builder, {"session_id": stream.session},
                         based_on=BASED_ON, helper=HELPER, **sidecar)


def _opening(s: SessionStream) -> None:
    s.in_progress()
    s.turn_created()
    s.turn_in_progress()


def _words(text: str) -> list[str]:
    words = text.split(" ")
    return [w + " " for w in words[:-1]] + [words[-1]]


def plain_turn(root: Path) -> Path:
    """A turn that answers: text deltas, the turn completed, the session idle."""
    s = SessionStream(7201, "sess_0198PlainTurn0000000")
    _opening(s)
    s.message(_words(_ANSWER))
    s.turn_ended(oas.TURN_COMPLETED, oas.COMPLETED, usage(1820, 44, cached=1536))
    s.idle()
    return _write(root, "session-plain-turn", s, demonstrates=(
        "a session turn: in_progress, the root turn created, an assistant message's "
        "output_text deltas, turn.completed with its usage, idle (completed)"),
        sdk_note="the helper keeps the completed message and stops at the idle")


def reasoning(root: Path) -> Path:
    """A reasoning summary, then a commentary message, a command the server runs, the
    answer."""
    s = SessionStream(7202, "sess_0198Reasoning0000000")
    _opening(s)
    s.reasoning(_words("Find the imports first, then compare the pin with the index."))
    s.message(_words("Searching the repository for imports of requests."), phase="commentary")
    s.server_item({"type": "command_execution", "command": "grep -rln 'import requests' .",
                   "cwd": "/workspace"},
                  {"status": oas.COMPLETED, "exit_code": 0, "duration_ms": 210,
                   "output": "./tools/fetch.py\n./scripts/sync.py\n"})
    s.message(_words(_ANSWER))
    s.turn_ended(oas.TURN_COMPLETED, oas.COMPLETED, usage(2410, 131, cached=1536,
                                                           reasoning=58))
    s.idle()
    return _write(root, "session-reasoning", s, demonstrates=(
        "a reasoning summary streamed (reasoning_summary_text deltas), a commentary message, "
        "a command the server runs (command_execution, whole at its item.done) and the "
        "final answer; the helper's result keeps only the final_answer message"),
        sdk_note="the commentary message is left out of the helper's messages")


def requires_action(root: Path) -> Path:
    """An MCP call that waits for the application's approval: the session stops asking."""
    s = SessionStream(7203, "sess_0198Approval00000000")
    _opening(s)
    s.message(_words("I'll open a pull request that bumps the pin."), phase="commentary")
    request = {"type": "mcp_approval_request", "request_id": s.new_id("mcpr"),
               "turn_id": s.turn_id,
               "request": {"type": "mcp_tool_call", "server_label": "github",
                           "name": "create_pull_request",
                           "arguments": {"title": "Bump requests to 2.32.3",
                                         "head": "bump-requests", "base": "main"},
                           "message": "Allow github.create_pull_request?"}}
    s.requires_action([request], spent=usage(1930, 37, cached=1536))
    return _write(root, "session-requires-action", s, demonstrates=(
        "requires_action waiting for an approval: the session's required_actions hold an "
        "mcp_approval_request (github.create_pull_request); the stream ends waiting "
        "(paused, requires_action: a person must approve, the loop cannot)"),
        sdk_note="the helper reads on past requires_action (nothing comes): its state "
                 "holds the required action, and it has not stopped")


def budget_reached(root: Path) -> Path:
    """The session's spending limit is reached mid-turn."""
    s = SessionStream(7204, "sess_0198Budget000000000", spend_limit=50)
    _opening(s)
    s.server_item({"type": "web_search_call",
                   "action": {"type": "search", "query": "requests latest release"}},
                  {"status": oas.COMPLETED})
    s.message(_words("The latest release is 2.32.3; checking which files need it."),
              phase="commentary")
    s.budget_reached(usage(48211, 9877, cached=30720), consumed=51)
    return _write(root, "session-budget-reached", s, demonstrates=(
        "budget_reached: a web search the server runs, a commentary message, then "
        "agent.session.budget_reached mid-turn (spend_control consumed past its limit): "
        "the vendor's budget ended the turn (budget_reached, vendor_budget), never "
        "completed"),
        sdk_note="mid-turn, the helper reads on (the session waits for a higher budget); "
                 "it has not stopped")


def failed(root: Path) -> Path:
    """The turn fails: an error event, then turn.failed with its code, then idle."""
    s = SessionStream(7205, "sess_0198Failed000000000")
    _opening(s)
    s.message(_words("Looking at the imports, two files use"), phase="commentary")
    s.error("server_error", "server_overloaded", "The model is overloaded. Try again later.")
    s.turn_ended(oas.TURN_FAILED, oas.FAILED, usage(1800, 9),
                 error={"code": "server_overloaded",
                        "message": "The model is overloaded. Try again later."})
    s.idle()
    return _write(root, "session-failed", s, demonstrates=(
        "an error: an error event (a value: the stream goes on), the root turn failed "
        "(turn.error server_overloaded) and the session idle: the turn failed"),
        sdk_note="the helper stops at the idle; its turn says failed")


def session_failed(root: Path) -> Path:
    """The session itself fails mid-turn: its environment is lost."""
    s = SessionStream(7208, "sess_0198SessionFailed00")
    _opening(s)
    s.message(_words("Cloning the repository first."), phase="commentary")
    s.error("server_error", "sandbox_error", "The environment stopped responding.")
    s.failed("The session's environment stopped responding.")
    return _write(root, "session-failed-session", s, demonstrates=(
        "the session fails: an error event, then agent.session.failed with the session's "
        "error, mid-turn (no turn.failed, no idle): the turn failed, and the helper stops"),
        sdk_note="the helper stops at agent.session.failed; its state says the session "
                 "failed")


def cancelled(root: Path) -> Path:
    """The turn is cancelled (the application posted agent.session.input.cancel)."""
    s = SessionStream(7206, "sess_0198Cancelled000000")
    _opening(s)
    s.reasoning(_words("List the imports, then check the index."))
    s.message(_words("Two files import"), stated="Two files import")
    s.turn_ended(oas.TURN_CANCELLED, oas.CANCELLED, usage(1790, 21))
    s.idle()
    return _write(root, "session-cancelled", s, demonstrates=(
        "a cancelled turn: reasoning, a message cut short, turn.cancelled and idle: the "
        "vendor reports the cancel (cancelled, vendor), never completed"),
        sdk_note="the helper stops at the idle; its turn says cancelled")


def duplicates(root: Path) -> Path:
    """At-least-once delivery: events delivered again, later, with the same ids."""
    s = SessionStream(7207, "sess_0198Duplicates00000")
    _opening(s)
    s.reasoning(_words("Check the pin."))
    done = s.message(["The pin is ", "ha", "ha", "rdly old: 2.31.0."])
    delta = next(p for p in s.sent if p["type"] == oas.OUTPUT_TEXT_DELTA
                 and p["delta"] == "rdly old: 2.31.0.")
    s.again(delta)
    s.again(done)
    ended = s.turn_ended(oas.TURN_COMPLETED, oas.COMPLETED, usage(1700, 19))
    s.again(ended)
    s.idle()
    return _write(root, "session-duplicates", s, demonstrates=(
        "duplicates: a text delta, the message's item.done and turn.completed delivered "
        "again later with their event_ids, dropped by id (the SDK's window of recent ids); "
        "two equal deltas in a row ('ha', 'ha') have ids of their own and are text, kept"),
        sdk_note="the helper drops the repeats by event_id")


def weather_turn(root: Path) -> list[Path]:
    """The weather turn on a session, in two connections: the agent calls the application's
    ``get_weather`` twice and the session stops asking for both outputs (step 1); the
    outputs are posted back and a new connection streams the rest (step 2)."""
    s = SessionStream(7210, "sess_0198WeatherTurn0000")
    _opening(s)
    calls = [s.function_call(TOOL_NAME, call) for call in CALLS]
    s.requires_action([{"type": oas.FUNCTION_CALL_ACTION, "call_id": c["call_id"],
                        "name": c["name"], "arguments": c["arguments"],
                        "turn_id": s.turn_id} for c in calls],
                      spent=usage(1480, 48, cached=1024))
    first = _write(root, "weather-turn-step1", s, demonstrates=(
        "weather turn, step 1: two function_call items of get_weather (Paris, Tokyo), whole "
        "at item.added, and requires_action naming both: the application runs them"),
        sdk_note="the helper runs registered handlers here and reads on",
        turn={"name": TURN_NAME, "step": 1})
    s2 = SessionStream(7211, s.session)
    s2._n, s2._seconds, s2._items = s._n, s._seconds, s._items
    s2.turn_id, s2.turn = s.turn_id, s.turn
    s2.in_progress()
    for call, result in zip(calls, RESULTS, strict=True):
        s2.function_output(call, result_text(result))
    s2.message(_words(ANSWER))
    s2.turn_ended(oas.TURN_COMPLETED, oas.COMPLETED, usage(1610, 96, cached=1024))
    s2.idle()
    second = _write(root, "weather-turn-step2", s2, demonstrates=(
        "weather turn, step 2: the application's two outputs echoed as function_call_output "
        "items, the answer streamed, the turn completed and the session idle"),
        sdk_note="no turn.created on this connection: the helper's collector has no turn",
        turn={"name": TURN_NAME, "step": 2},
        sent=[{"type": oas.INPUT_TOOL_RESULT, "turn_id": s.turn_id, "call_id": c["call_id"],
               "success": True, "output": result_text(result)}
              for c, result in zip(calls, RESULTS, strict=True)])
    return [first, second]


BUILDERS = (plain_turn, reasoning, requires_action, budget_reached, failed, session_failed,
            cancelled, duplicates)


def build(root: Path) -> list[Path]:
    """Write every OpenAI Agents session capture under `root`; return the paths."""
    return [make(root) for make in BUILDERS] + weather_turn(root)
