"""Which of the official SDKs' stream types the corpus shows, read from the SDKs themselves.

The installed SDKs list, in their type unions, every event, block, delta,
item, stop reason and chunk field a stream can carry: ``anthropic`` and
``openai`` in typed models, ``google-genai`` in its ``types`` (a part is
named by the field it fills, written in camelCase on the wire; finish
reasons are an enum), and ``botocore`` in the Bedrock runtime's service
model (an event stream is a structure whose members are the frames'
``:event-type`` and ``:exception-type`` names). Every registered wire has
at least one union here. Each `Union` says where its members are (a module,
a name in it, a field of that model; or a botocore service and shape) and
how to read them (`READS`: the union members' ``type`` literals, a
``Literal``'s values, a model's field names or their wire aliases, an
enum's values, a shape's members or enum); `sdk_types` reads them all; `sightings` reads a corpus (the project's captures,
and the shared reference captures when present) and says where each one
was seen at least once. `NOT_IN_CORPUS` names each type no capture shows,
with why; `rows` puts the three together and `markdown` renders the table
``scripts/build_cheat_sheet.py`` writes under the cheat sheet.

A new SDK version that adds a type makes the table's test fail until the
type has a capture or a reason: the table keeps itself true.
"""

from __future__ import annotations

import importlib
import typing
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Any

from ..capture.captures import Capture
from ..sse.bedrock_frames import CHUNK as INVOKE_CHUNK
from . import bedrock, bedrock_converse, bedrock_invoke, gemini, managed_agents
from .wire_events import parse_all

OURS, REFERENCE = "ours", "reference"
HEADING = "## What the corpus shows of each SDK type union"


@dataclass(frozen=True)
class Union:
    """One SDK type union the table covers: its wire, what it lists, where it lives, and
    how its members are read (`module`'s `attribute`, or that model's `field`; `read` names
    one of `READS`)."""

    name: str
    wire: str
    what: str
    source: str          # where in the SDK the union is (for the reader of the table)
    module: str
    attribute: str
    read: str = "type_literals"
    field: str | None = None
    botocore: bool = False   # `module` is a botocore service, `attribute` a shape in it


_BETA, _RESPONSES = "anthropic.types.beta", "openai.types.responses"
_CHUNK = "openai.types.chat.chat_completion_chunk"
_GENAI, _BEDROCK = "google.genai.types", "bedrock-runtime"

UNIONS = (
    Union("anthropic.events", "anthropic-messages", "stream event types",
          "anthropic.types.beta.BetaRawMessageStreamEvent", _BETA,
          "BetaRawMessageStreamEvent"),
    Union("anthropic.blocks", "anthropic-messages", "content block types",
          "BetaRawContentBlockStartEvent.content_block", _BETA,
          "BetaRawContentBlockStartEvent", field="content_block"),
    Union("anthropic.deltas", "anthropic-messages", "content block delta types",
          "anthropic.types.beta.BetaRawContentBlockDelta", _BETA, "BetaRawContentBlockDelta"),
    Union("anthropic.stop_reasons", "anthropic-messages", "stop reasons",
          "anthropic.types.beta.BetaStopReason", _BETA, "BetaStopReason", read="literals"),
    Union("responses.events", "openai-responses", "stream event types",
          "openai.types.responses.ResponseStreamEvent", _RESPONSES, "ResponseStreamEvent"),
    Union("responses.items", "openai-responses", "output item types",
          "openai.types.responses.ResponseOutputItem", _RESPONSES, "ResponseOutputItem"),
    Union("chat.chunk_fields", "openai-chat", "chunk fields",
          "openai.types.chat.ChatCompletionChunk", _CHUNK, "ChatCompletionChunk",
          read="fields"),
    Union("chat.delta_fields", "openai-chat", "choice delta fields",
          "openai.types.chat.chat_completion_chunk.ChoiceDelta", _CHUNK, "ChoiceDelta",
          read="fields"),
    Union("chat.finish_reasons", "openai-chat", "finish reasons",
          "openai.types.chat.chat_completion_chunk.Choice.finish_reason", _CHUNK, "Choice",
          read="literals", field="finish_reason"),
    Union("gemini.part_fields", "google-gemini", "part fields",
          "google.genai.types.Part (wire names)", _GENAI, "Part", read="aliases"),
    Union("gemini.finish_reasons", "google-gemini", "finish reasons",
          "google.genai.types.FinishReason", _GENAI, "FinishReason", read="enum"),
    Union("converse.events", "aws-bedrock-converse", "stream event types",
          "botocore bedrock-runtime ConverseStreamOutput", _BEDROCK, "ConverseStreamOutput",
          read="shape_members", botocore=True),
    Union("converse.starts", "aws-bedrock-converse", "content block start types",
          "botocore bedrock-runtime ContentBlockStart", _BEDROCK, "ContentBlockStart",
          read="shape_members", botocore=True),
    Union("converse.deltas", "aws-bedrock-converse", "content block delta types",
          "botocore bedrock-runtime ContentBlockDelta", _BEDROCK, "ContentBlockDelta",
          read="shape_members", botocore=True),
    Union("converse.stop_reasons", "aws-bedrock-converse", "stop reasons",
          "botocore bedrock-runtime StopReason", _BEDROCK, "StopReason",
          read="shape_enum", botocore=True),
    Union("invoke.events", "aws-bedrock-invoke", "stream event types",
          "botocore bedrock-runtime ResponseStream", _BEDROCK, "ResponseStream",
          read="shape_members", botocore=True),
    Union("sessions.events", managed_agents.WIRE, "session stream event types",
          "anthropic.types.beta.sessions.BetaManagedAgentsStreamSessionEvents",
          "anthropic.types.beta.sessions", "BetaManagedAgentsStreamSessionEvents"),
    Union("sessions.stop_reasons", managed_agents.WIRE, "idle stop reasons",
          "BetaManagedAgentsSessionStatusIdleEvent.stop_reason", "anthropic.types.beta.sessions",
          "BetaManagedAgentsSessionStatusIdleEvent", field="stop_reason"),
)

# Each SDK type no capture shows, with why it has none. The test fails when a type here
# turns up in the corpus (the line goes) and when a type is neither shown nor here.
NOT_IN_CORPUS: dict[tuple[str, str], str] = {
    ("responses.items", "additional_tools"):
        "a newer item with no recording and no documented stream",
    ("responses.items", "apply_patch_call_output"):
        "an input item the client sends back, never streamed by the server",
    ("responses.items", "computer_call"):
        "computer use needs a computer-use model and a sandbox; no recording",
    ("responses.items", "computer_call_output"): "an input item the client sends back",
    ("responses.items", "custom_tool_call_output"): "an input item the client sends back",
    ("responses.items", "function_call_output"): "an input item the client sends back",
    ("responses.items", "local_shell_call"):
        "the local shell tool of codex models; no recording",
    ("responses.items", "local_shell_call_output"): "an input item the client sends back",
    ("responses.items", "mcp_approval_response"): "an input item the client sends back",
    ("responses.items", "program_output"):
        "streamed by the server when a program of programmatic tool calling ends, in the "
        "response after the client returns the calls the program awaited; the recording "
        "stops at those calls",
    ("gemini.part_fields", "functionResponse"): "an input part the client sends back",
    ("gemini.part_fields", "fileData"): "an input part: a file the client names by URI",
    ("gemini.part_fields", "inlineData"):
        "an image or audio the model returns (image and audio models); no recording",
    ("gemini.part_fields", "videoMetadata"): "input: how to read a video the client sends",
    ("gemini.part_fields", "mediaResolution"):
        "input: the resolution to read a media part at",
    **{("gemini.part_fields", name): "a newer part field with no recording and no "
       "documented stream" for name in (
           "audioMetadata", "audioTranscription", "documentMetadata", "mediaProcessing",
           "partMetadata", "speechMetadata", "spreadsheetMetadata")},
    ("gemini.finish_reasons", "FINISH_REASON_UNSPECIFIED"):
        "the enum's default, not a reason a finished candidate is given",
    **{("gemini.finish_reasons", name): "a response stopped by a content filter; no "
       "recording (SAFETY is shown: the stream ends the same way)" for name in (
           "BLOCKLIST", "PROHIBITED_CONTENT", "SPII", "RECITATION", "IMAGE_SAFETY",
           "IMAGE_PROHIBITED_CONTENT", "IMAGE_RECITATION", "MODEL_ARMOR")},
    **{("gemini.finish_reasons", name): "a generation that failed; no recording" for name in (
        "LANGUAGE", "OTHER", "NO_IMAGE", "IMAGE_OTHER", "MALFORMED_FUNCTION_CALL",
        "UNEXPECTED_TOOL_CALL", "TOO_MANY_TOOL_CALLS", "MISSING_THOUGHT_SIGNATURE",
        "MALFORMED_RESPONSE")},
    **{("gemini.finish_reasons", name): "a newer reason with no recording and no documented "
       "stream" for name in ("ESCALATION", "PUP_LIMITED_DISABLED", "CONTINUATION")},
    **{("converse.events", name): "an exception frame like the modelStreamErrorException "
       "shown, of another :exception-type; no capture" for name in (
           "internalServerException", "serviceUnavailableException", "throttlingException",
           "validationException")},
    ("converse.starts", "image"):
        "an image block the model generates (image output models); no recording",
    ("converse.deltas", "image"):
        "an image block the model generates (image output models); no recording",
    **{("converse.stop_reasons", name): "no capture; it comes in messageStop as end_turn "
       "does" for name in ("max_tokens", "stop_sequence", "model_context_window_exceeded")},
    **{("converse.stop_reasons", name): "stopped by a guardrail or a content filter; no "
       "recording" for name in ("guardrail_intervened", "content_filtered")},
    **{("converse.stop_reasons", name): "a generation that failed; no recording"
       for name in ("malformed_model_output", "malformed_tool_use")},
    **{("invoke.events", name): "an exception frame like the throttlingException shown, of "
       "another :exception-type; no capture" for name in (
           "internalServerException", "modelStreamErrorException", "modelTimeoutException",
           "serviceUnavailableException", "validationException")},
    **{("sessions.events", name): "a subagent thread's event (multiagent sessions); the "
       "constructed sessions have one thread" for name in (
           "agent.thread_message_received", "agent.thread_message_sent",
           "agent.thread_context_compacted", "session.thread_created",
           "session.thread_status_running", "session.thread_status_idle",
           "session.thread_status_terminated", "session.thread_status_rescheduled",
           "user.tool_result")},
    **{("sessions.events", name): "a workflow run's event (workflows); no constructed "
       "session runs one" for name in (
           "workflow_run.created", "workflow_run.status_running", "workflow_run.status_idle",
           "workflow_run.status_ended", "workflow_run.phase_started",
           "workflow_run.phase_ended", "workflow_run.error")},
    **{("sessions.events", name): "an outcome evaluation (user.define_outcome and its "
       "spans); no constructed session defines one" for name in (
           "user.define_outcome", "span.outcome_evaluation_start",
           "span.outcome_evaluation_ongoing", "span.outcome_evaluation_end")},
    **{("sessions.events", name): "the session's own lifecycle beyond a turn (ended, "
       "deleted, updated, rescheduled); no constructed session shows it" for name in (
           "session.status_terminated", "session.deleted", "session.updated",
           "session.status_rescheduled")},
    **{("sessions.events", name): "what the application sends mid-session (an interrupt, "
       "a confirmation, a system message); no constructed session shows it yet"
       for name in ("user.interrupt", "user.tool_confirmation", "system.message")},
    **{("sessions.events", name): "a call of an MCP server's tool and its result; no "
       "constructed session connects one" for name in (
           "agent.mcp_tool_use", "agent.mcp_tool_result")},
}


def _type_literals(union: Any) -> set[str]:
    """The ``type`` literals of a union's members (an ``Annotated`` union read inside)."""
    found: set[str] = set()
    for member in typing.get_args(union):
        for cls in typing.get_args(member) or [member]:
            field = getattr(cls, "model_fields", {}).get("type")
            if field is not None:
                found |= {v for v in typing.get_args(field.annotation) if isinstance(v, str)}
    return found


def _literals(annotation: Any) -> set[str]:
    """The string values of a ``Literal``, read inside ``Optional`` and unions."""
    found: set[str] = set()
    for arg in typing.get_args(annotation):
        found |= {arg} if isinstance(arg, str) else _literals(arg)
    return found


READS: dict[str, Callable[[Any], set[str]]] = {
    "type_literals": _type_literals, "literals": _literals,
    "fields": lambda model: set(model.model_fields),
    # google-genai names fields in snake_case and writes them in camelCase: the alias.
    "aliases": lambda model: {f.alias or n for n, f in model.model_fields.items()},
    "enum": lambda enum: {str(member.value) for member in enum},
    "shape_members": lambda shape: set(shape.members),
    "shape_enum": lambda shape: set(shape.enum)}


def members(union: Union) -> frozenset[str]:
    """One union's members, read from the installed SDK (imported here, not at load)."""
    if union.botocore:
        import botocore.session
        service = botocore.session.get_session().get_service_model(union.module)
        return frozenset(READS[union.read](service.shape_for(union.attribute)))
    target = getattr(importlib.import_module(union.module), union.attribute)
    if union.field is not None:
        target = target.model_fields[union.field].annotation
    return frozenset(READS[union.read](target))


def sdk_types() -> dict[str, frozenset[str]]:
    """Every union's members, read from the installed SDKs."""
    return {union.name: members(union) for union in UNIONS}


def _dict(value: Any) -> dict:
    return value if isinstance(value, dict) else {}


def _anthropic(payload: dict, kind: str | None) -> Iterable[tuple[str, Any]]:
    yield "anthropic.events", kind
    if kind == "content_block_start":
        yield "anthropic.blocks", _dict(payload.get("content_block")).get("type")
    elif kind == "content_block_delta":
        yield "anthropic.deltas", _dict(payload.get("delta")).get("type")
    elif kind == "message_delta":
        yield "anthropic.stop_reasons", _dict(payload.get("delta")).get("stop_reason")


def _responses(payload: dict, kind: str | None) -> Iterable[tuple[str, Any]]:
    yield "responses.events", kind
    yield "responses.items", _dict(payload.get("item")).get("type")
    for item in _dict(payload.get("response")).get("output") or []:
        yield "responses.items", _dict(item).get("type")


def _chat(payload: dict, kind: str | None) -> Iterable[tuple[str, Any]]:
    for key in payload:
        yield "chat.chunk_fields", key
    for choice in payload.get("choices") or []:
        choice = _dict(choice)
        for key in _dict(choice.get("delta")):
            yield "chat.delta_fields", key
        yield "chat.finish_reasons", choice.get("finish_reason")


def _gemini(payload: dict, kind: str | None) -> Iterable[tuple[str, Any]]:
    for candidate in gemini.candidates(payload):
        for part in _dict(candidate.get("content")).get("parts") or []:
            for key in _dict(part):
                yield "gemini.part_fields", key
        yield "gemini.finish_reasons", candidate.get("finishReason")


def _converse(payload: dict, kind: str | None) -> Iterable[tuple[str, Any]]:
    yield "converse.events", kind
    # A start or a delta is a union too: named by the one field it fills.
    if kind == bedrock_converse.CONTENT_BLOCK_START:
        for key in _dict(payload.get("start")):
            yield "converse.starts", key
    elif kind == bedrock_converse.CONTENT_BLOCK_DELTA:
        for key in _dict(payload.get("delta")):
            yield "converse.deltas", key
    elif kind == bedrock_converse.MESSAGE_STOP:
        yield "converse.stop_reasons", payload.get("stopReason")


def _invoke(payload: dict, kind: str | None) -> Iterable[tuple[str, Any]]:
    # An exception frame is named by its type; every other frame is a ``chunk`` whose
    # payload is an Anthropic event (read as `kind`).
    yield "invoke.events", kind if kind in bedrock.EXCEPTIONS else INVOKE_CHUNK


def _sessions(payload: dict, kind: str | None) -> Iterable[tuple[str, Any]]:
    yield "sessions.events", kind
    if kind == managed_agents.SESSION_IDLE:
        yield "sessions.stop_reasons", managed_agents.stop_reason_type(payload.get("stop_reason"))


READERS: dict[str, Callable[[dict, str | None], Iterable[tuple[str, Any]]]] = {
    "anthropic-messages": _anthropic, "openai-responses": _responses, "openai-chat": _chat,
    gemini.WIRE: _gemini, bedrock_converse.WIRE: _converse, bedrock_invoke.WIRE: _invoke,
    managed_agents.WIRE: _sessions}


def seen_in(capture: Capture) -> set[tuple[str, str]]:
    """The (union, type) pairs one capture shows at least once."""
    reader = READERS.get(capture.wire or "")
    if reader is None or capture.status >= 300:
        return set()
    out = set()
    for event in parse_all(capture.events):
        payload = _dict(event.payload)
        for union, value in reader(payload, event.type):
            if isinstance(value, str):
                out.add((union, value))
    return out


def sightings(ours: Iterable[Capture], reference: Iterable[Capture] = ()
              ) -> dict[tuple[str, str], set[str]]:
    """Every (union, type) the corpus shows, with where: ``ours`` and/or ``reference``."""
    found: dict[tuple[str, str], set[str]] = {}
    for where, caps in ((OURS, ours), (REFERENCE, reference)):
        for capture in caps:
            for pair in seen_in(capture):
                found.setdefault(pair, set()).add(where)
    return found


@dataclass(frozen=True)
class Row:
    """One union in the table: its members by where the corpus shows them."""

    union: Union
    ours: tuple[str, ...]            # shown by the project's own captures
    reference_only: tuple[str, ...]  # shown only by the shared reference captures
    missing: tuple[tuple[str, str], ...]   # (type, why no capture shows it)
    beyond_sdk: tuple[str, ...]      # shown by the corpus, unknown to the SDK's union

    @property
    def total(self) -> int:
        return len(self.ours) + len(self.reference_only) + len(self.missing)

    @property
    def covered(self) -> int:
        return len(self.ours) + len(self.reference_only)


def rows(types: dict[str, frozenset[str]], seen: dict[tuple[str, str], set[str]]) -> list[Row]:
    """The table: for each union, its members split by where they are seen (a member no
    capture shows carries its `NOT_IN_CORPUS` reason, ``"?"`` when there is none)."""
    out = []
    for union in UNIONS:
        members = sorted(types.get(union.name, ()))
        where = {m: seen.get((union.name, m), set()) for m in members}
        beyond = sorted(t for (u, t) in seen if u == union.name and t not in where)
        out.append(Row(
            union,
            tuple(m for m in members if OURS in where[m]),
            tuple(m for m in members if where[m] == {REFERENCE}),
            tuple((m, NOT_IN_CORPUS.get((union.name, m), "?")) for m in members
                  if not where[m]),
            tuple(beyond)))
    return out


def markdown(table: list[Row]) -> str:
    """The coverage table as Markdown, one line per union."""
    def code(names: Iterable[str]) -> str:
        return ", ".join(f"`{n}`" for n in names) or "none"

    lines = [HEADING, "",
             "Read from the installed SDKs' type unions and the captures (the project's "
             "own, and the shared reference captures); `tests/test_coverage.py` keeps it "
             "true. Shown by a reference capture only: the project has no capture of its "
             "own yet.", "",
             "| union | shown | by our captures | by reference captures only | "
             "not in the corpus, and why | seen, not in the SDK's union |",
             "|---|---|---|---|---|---|"]
    for row in table:
        missing = "<br>".join(f"`{m}`: {why}" for m, why in row.missing) or "none"
        lines.append(f"| {row.union.wire} {row.union.what} (`{row.union.source}`) | "
                     f"{row.covered}/{row.total} | {code(row.ours)} | "
                     f"{code(row.reference_only)} | {missing} | {code(row.beyond_sdk)} |")
    return "\n".join(lines) + "\n"
