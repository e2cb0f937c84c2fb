"""The Anthropic Managed Agents corpus: one constructed session stream per thing lesson 7 shows.

Each function writes one capture into ``captures/anthropic-managed-agents/``
with `SessionStream` (every event an instance of the SDK's model for it) and
returns its path; `build` writes them all. Seeds are fixed, so rebuilding gives
the same bytes. No public recording of a session stream exists: each sidecar
says so.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from .managed_agents_stream import BASED_ON, HELPER, WIRE, SessionStream
from .session_writer import write_session
from .weather_turn import ANSWER, CALLS, RESULTS, TOOL_NAME, TURN_NAME, result_text
from .weather_turn import QUESTION as QUESTION_WEATHER

QUESTION = "Which Python files in the repo import requests? Fix any that pin an old version."


def _write(root: Path, name: str, stream: SessionStream, *, deltas: bool,
           **sidecar: Any) -> Path:
    request: dict[str, Any] = {"session_id": stream.session}
    if deltas:
        request["event_deltas"] = ["agent.message", "agent.thinking"]
    return write_session(root, WIRE, name, stream.builder, request, based_on=BASED_ON,
                         helper=HELPER, **sidecar)


def _opening(stream: SessionStream) -> dict[str, Any]:
    stream.user_message(QUESTION)
    stream.running()
    return stream.request_start()


def plain_turn(root: Path) -> Path:
    """No previews asked for: the agent's message arrives whole, the session goes idle."""
    s = SessionStream(7101, "sesn_011CbPlainTurn0000000")
    start = _opening(s)
    s.thinking()
    s.message("Two files import requests: `tools/fetch.py` and `scripts/sync.py`. Neither "
              "pins a version; the pin lives in `requirements.txt` (requests==2.31.0), "
              "which is current enough.")
    s.request_end(start, 61)
    s.idle("end_turn")
    return _write(root, "session-plain-turn", s, deltas=False, demonstrates=(
        "a session turn without previews: user.message echoed, the agent's thinking and "
        "message whole, the model request's usage, idle with end_turn (completed)"),
        sdk_note="the fold returns the agent.message as sent")


def custom_tool(root: Path) -> Path:
    """A tool the application runs: the session idles asking for it, the result is posted
    back, the session runs again and answers."""
    s = SessionStream(7102, "sesn_011CbCustomTool000000")
    start = _opening(s)
    call = s.custom_tool_use("lookup_pinned_version", {"package": "requests"})
    s.request_end(start, 38)
    s.idle("requires_action", event_ids=[call["id"]])
    s.custom_tool_result(call, '{"package": "requests", "pinned": "2.31.0", '
                               '"latest": "2.32.3"}')
    s.running()
    start = s.request_start()
    s.message("`requests` is pinned at 2.31.0; the latest is 2.32.3. I'd bump the pin in "
              "`requirements.txt`.")
    s.request_end(start, 33)
    s.idle("end_turn")
    return _write(root, "session-custom-tool", s, deltas=False, demonstrates=(
        "a custom tool the application runs: agent.custom_tool_use, idle requires_action "
        "naming it, the application's user.custom_tool_result echoed, the session running "
        "again and ending its turn (completed)"),
        sdk_note="the fold returns the last agent.message")


def previews(root: Path) -> Path:
    """Previews then canonical: the preview stops early, the canonical event replaces it."""
    s = SessionStream(7103, "sesn_011CbPreviews00000000")
    start = _opening(s)
    thought = s.preview("agent.thinking")
    s.thinking(thought)
    said = s.preview()
    s.deltas(said, ["Two files ", "import `requests`: ", "`tools/fetch.py` and ",
                    "`scripts/sy"])
    s.message("Two files import `requests`: `tools/fetch.py` and `scripts/sync.py`. The pin "
              "(2.31.0) is in `requirements.txt`.", said)
    s.request_end(start, 44)
    s.idle("end_turn")
    return _write(root, "session-previews", s, deltas=True, demonstrates=(
        "previews then canonical: a start-only thinking preview concluded by agent.thinking; "
        "an agent.message preview whose deltas stop early, replaced (never doubled) by the "
        "buffered agent.message with the same id"),
        sdk_note="the fold's snapshot grows with the deltas, then becomes the canonical "
                 "message")


def preview_only(root: Path) -> Path:
    """A model request that fails mid-answer leaves only its preview; the retry answers."""
    s = SessionStream(7104, "sesn_011CbPreviewOnly00000")
    start = _opening(s)
    lost = s.preview()
    s.deltas(lost, ["Looking at the imports, ", "two files use `requ"])
    s.request_end(start, 12, is_error=True, after_ms=900)
    s.error("model_overloaded_error", "The model is overloaded; retrying.", "retrying")
    start = s.request_start()
    said = s.preview()
    s.deltas(said, ["Two files import `requests`: ", "`tools/fetch.py` and `scripts/sync.py`."])
    s.message("Two files import `requests`: `tools/fetch.py` and `scripts/sync.py`.", said)
    s.request_end(start, 21)
    s.idle("end_turn")
    return _write(root, "session-preview-only", s, deltas=True, demonstrates=(
        "a preview with no canonical event: the model request ends in an error "
        "(span.model_request_end is_error) and closes the preview, which is kept and marked "
        "preview_only; the server retries (session.error retrying) and the second answer "
        "comes whole"),
        sdk_note="the fold keeps the first preview's snapshot until the next event_start "
                 "replaces it")


def requires_action(root: Path) -> Path:
    """A tool call held for a confirmation: the session idles waiting for it."""
    s = SessionStream(7105, "sesn_011CbConfirm000000000")
    start = _opening(s)
    listing = s.tool_use("grep", {"pattern": "^import requests|^from requests", "path": "."})
    s.tool_result(listing, "tools/fetch.py:3:import requests\nscripts/sync.py:1:import "
                           "requests")
    s.tool_use("edit", {"file_path": "requirements.txt", "old_string": "requests==2.31.0",
                        "new_string": "requests==2.32.3"}, ask=True)
    s.request_end(start, 70)
    held = s.sent[-2][1]
    s.idle("requires_action", event_ids=[held["id"]])
    return _write(root, "session-requires-action", s, deltas=False, demonstrates=(
        "requires_action waiting for a confirmation: the agent's grep runs (allowed), its "
        "edit is held (evaluated_permission ask) and the session idles naming it; the "
        "stream ends waiting (paused)"),
        sdk_note="no agent.message: the fold returns None")


def budget_reached(root: Path) -> Path:
    """The session's budget runs out between model requests."""
    s = SessionStream(7106, "sesn_011CbBudget0000000000")
    start = _opening(s)
    call = s.tool_use("bash", {"command": "pip index versions requests"})
    s.tool_result(call, "requests (2.32.3)\nAvailable versions: 2.32.3, 2.32.2, 2.31.0")
    s.message("The latest release is 2.32.3; checking which files need it.")
    s.request_end(start, 52)
    s.usage("503", "500")
    s.idle("budget_reached")
    return _write(root, "session-budget-reached", s, deltas=False, demonstrates=(
        "budget_reached: session.usage shows the list cost past the budget and the session "
        "idles with budget_reached mid-task (not completed: the vendor's budget ended "
        "the turn)"),
        sdk_note="the fold returns the agent.message as sent")


def error(root: Path) -> Path:
    """The model stays overloaded: the retries run out and the turn fails."""
    s = SessionStream(7107, "sesn_011CbRetriesOut000000")
    start = _opening(s)
    s.request_end(start, 0, is_error=True, after_ms=1500)
    s.error("model_overloaded_error", "The model is overloaded; retrying.", "retrying")
    start = s.request_start()
    s.request_end(start, 0, is_error=True, after_ms=3000)
    s.error("model_overloaded_error", "The model is overloaded.", "exhausted")
    s.idle("retries_exhausted")
    return _write(root, "session-error", s, deltas=False, demonstrates=(
        "an error: session.error retrying (a warning), then exhausted, and idle with "
        "retries_exhausted (failed)"),
        sdk_note="no agent.message: the fold returns None; the SDK raises nothing for a "
                 "session.error")


def refusal(root: Path) -> Path:
    """The turn ends in a refusal, with its stop details."""
    s = SessionStream(7108, "sesn_011CbRefusal000000000")
    start = _opening(s)
    s.request_end(start, 4)
    s.idle("refusal", details={"type": "refusal", "category": "cyber",
                               "explanation": "The request was declined by a classifier."})
    return _write(root, "session-refusal", s, deltas=False, demonstrates=(
        "a refusal: idle with stop_reason refusal and its stop_details (a refusal finish)"),
        sdk_note="no agent.message: the fold returns None")


def duplicates(root: Path) -> Path:
    """At-least-once delivery: events delivered again, later, by their ids."""
    s = SessionStream(7109, "sesn_011CbDuplicates000000")
    start = _opening(s)
    call = s.tool_use("grep", {"pattern": "requests", "path": "requirements.txt"})
    result = s.tool_result(call, "requirements.txt:4:requests==2.31.0")
    said = s.preview()
    s.deltas(said, ["The pin is ", "ha", "ha", "rdly old: 2.31.0."])
    message = s.message("The pin is hahardly old: 2.31.0.", said)
    s.again(call)
    s.again(result)
    end = s.request_end(start, 29)
    s.again(message)
    s.again(end)
    s.idle("end_turn")
    return _write(root, "session-duplicates", s, deltas=True, demonstrates=(
        "duplicates: a tool call, its result, the agent's message and a span delivered "
        "again later with the same ids, dropped by id; two equal deltas in a row ('ha', "
        "'ha') have no id of their own and are text, kept"),
        sdk_note="the SDK's events iterator keeps the repeats; the fold returns the same "
                 "agent.message again")


def weather_turn(root: Path) -> list[Path]:
    """The weather turn on a session, in two connections: the agent calls the application's
    ``get_weather`` twice and the session idles asking for both results (step 1); the
    results are posted back and a new connection streams the rest (step 2)."""
    s = SessionStream(7110, "sesn_011CbWeatherTurn00000")
    s.user_message(QUESTION_WEATHER)
    s.running()
    start = s.request_start()
    calls = [s.custom_tool_use(TOOL_NAME, call) for call in CALLS]
    s.request_end(start, 48)
    s.idle("requires_action", event_ids=[c["id"] for c in calls])
    first = _write(root, "weather-turn-step1", s, deltas=True, demonstrates=(
        "weather turn, step 1: two agent.custom_tool_use calls of get_weather (Paris, "
        "Tokyo) and idle requires_action naming both: the application runs them"),
        sdk_note="no agent.message: the fold returns None",
        turn={"name": TURN_NAME, "step": 1})
    s2 = SessionStream(7111, s.session)
    s2._n = s._n
    s2._clock = s._clock
    for call, result in zip(calls, RESULTS, strict=True):
        s2.custom_tool_result(call, result_text(result))
    s2.running()
    start = s2.request_start()
    said = s2.preview()
    words = ANSWER.split(" ")
    s2.deltas(said, [w + " " for w in words[:-1]] + [words[-1]])
    s2.message(ANSWER, said)
    s2.request_end(start, 96)
    s2.idle("end_turn")
    second = _write(root, "weather-turn-step2", s2, deltas=True, demonstrates=(
        "weather turn, step 2: the application's two user.custom_tool_result events echoed, "
        "the session running again, the answer previewed word by word and then sent whole"),
        sdk_note="the fold returns the answer", turn={"name": TURN_NAME, "step": 2},
        sent=[{"type": "user.custom_tool_result", "custom_tool_use_id": call["id"],
               "content": [{"type": "text", "text": result_text(result)}]}
              for call, result in zip(calls, RESULTS, strict=True)])
    return [first, second]


BUILDERS = (plain_turn, custom_tool, previews, preview_only, requires_action, budget_reached,
            error, refusal, duplicates)


def build(root: Path) -> list[Path]:
    """Write every Managed Agents capture under `root`; return the paths."""
    return [make(root) for make in BUILDERS] + weather_turn(root)
