"""Which of the official SDKs' stream types a wire event shows, read from the SDKs themselves.

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
enum's values, a shape's members or enum); `sdk_types` reads them all.
`READERS` say, per wire, which union members an event shows (`shown_by`: a wire
module's own ``sdk_shows``, else the first wires' readers here), and
`NOT_IN_CORPUS` names each type no capture shows, with why.
`lesson_lib.course.coverage` puts them together with the corpus into the
cheat sheet's coverage table.
"""

from __future__ import annotations

import importlib
import typing
from collections.abc import Callable, Iterable, Iterator, Mapping
from dataclasses import dataclass
from typing import Any

from .. import wires
from ..sse.bedrock_frames import CHUNK as INVOKE_CHUNK
from . import bedrock, bedrock_converse, bedrock_invoke, gemini, managed_agents
from . import gemini_interactions as gi
from .wire_events import WireEvent


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
_GAOS = "google.genai._gaos.types.interactions"

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
    Union("interactions.events", gi.WIRE, "stream event types",
          "google.genai._gaos.types.interactions.InteractionSSEEvent",
          f"{_GAOS}.interactionsseevent", "InteractionSSEEvent", read="event_types"),
    Union("interactions.steps", gi.WIRE, "step types",
          "google.genai._gaos.types.interactions.Step", f"{_GAOS}.step", "Step",
          read="known_type_literals"),
    Union("interactions.deltas", gi.WIRE, "step delta types",
          "google.genai._gaos.types.interactions.StepDeltaData", f"{_GAOS}.stepdeltadata",
          "StepDeltaData", read="known_type_literals"),
    Union("interactions.statuses", gi.WIRE, "interaction statuses",
          "google.genai._gaos.types.interactions.InteractionStatus", f"{_GAOS}.interaction",
          "InteractionStatus", read="literals"),
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
    **{("interactions.steps", f"{tool}_{end}"): "a server tool's step like the "
       "google_search_call / google_search_result shown (whole steps, read the same way); no "
       "capture" for tool in gi.SERVER_TOOLS if tool != "google_search"
       for end in ("call", "result")},
    ("interactions.steps", "function_result"):
        "an input step the client sends back (the next request), never streamed by the server",
    ("interactions.steps", "user_input"):
        "an input step: the request's own input, as a step of the history",
    **{("interactions.deltas", f"{tool}_{end}"): "a server tool's delta, typed like its step, "
       "as the google_search_call delta shown; no capture" for tool in gi.SERVER_TOOLS
       for end in ("call", "result") if (tool, end) != ("google_search", "call")},
    ("interactions.deltas", "function_result"):
        "the delta of an input step the client sends back; never streamed by the server",
    **{("interactions.deltas", name): "a whole media item of a model_output (image, audio, "
       "video or document output models); no recording" for name in gi.MEDIA_DELTAS},
    **{("interactions.statuses", name): "an interaction not yet running or between turns "
       "(background and agent interactions); a stream shows in_progress"
       for name in ("queued", "idle")},
    **{("interactions.statuses", name): "an ending with no recording: the finish it maps to "
       "is in wires.gemini_interactions.FINISH_REASONS" for name in (
           "budget_exceeded", "cancelled", "failed", "incomplete", "requires_continuation")},
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


# google-genai's Interactions unions end in a placeholder for a variant the SDK does not
# know (it keeps the raw payload): no type of the wire.
_SDK_UNKNOWN = "UNKNOWN"


def _type_literals(union: Any, name: str = "type") -> set[str]:
    """The ``type`` (or `name`) literals of a union's members (an ``Annotated`` union read
    inside)."""
    found: set[str] = set()
    for member in typing.get_args(union):
        for cls in typing.get_args(member) or [member]:
            field = getattr(cls, "model_fields", {}).get(name)
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
    "known_type_literals": lambda union: _type_literals(union) - {_SDK_UNKNOWN},
    "event_types": lambda union: _type_literals(union, gi.EVENT_TYPE_FIELD) - {_SDK_UNKNOWN},
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


Reader = Callable[[dict, str | None], Iterable[tuple[str, Any]]]
_FIRST_WIRES: dict[str, Reader] = {
    "anthropic-messages": _anthropic, "openai-responses": _responses, "openai-chat": _chat,
    gemini.WIRE: _gemini, bedrock_converse.WIRE: _converse, bedrock_invoke.WIRE: _invoke}


class _Readers(Mapping[str, Reader]):
    """Each registered wire's reader of the unions an event shows: its module's own
    ``sdk_shows`` (Gemini Interactions', the sessions'), else the first wires' below."""

    def __getitem__(self, wire: str) -> Reader:
        found = getattr(wires.WIRES.get(wire), "sdk_shows", None) or _FIRST_WIRES.get(wire)
        if found is None:
            raise KeyError(wire)
        return found

    def __iter__(self) -> Iterator[str]:
        return (wire for wire in list(wires.WIRES) if wire in self)

    def __contains__(self, wire: object) -> bool:
        return isinstance(wire, str) and (
            getattr(wires.WIRES.get(wire), "sdk_shows", None) is not None
            or wire in _FIRST_WIRES)

    def __len__(self) -> int:
        return sum(1 for _ in self)


READERS: Mapping[str, Reader] = _Readers()


def shown_by(events: Iterable[WireEvent], wire: str | None) -> set[tuple[str, str]]:
    """The (union, type) pairs some event of `events` (parsed on `wire`) shows."""
    reader = READERS.get(wire or "")
    if reader is None:
        return set()
    out = set()
    for event in events:
        payload = _dict(event.payload)
        for union, value in reader(payload, event.type):
            if isinstance(value, str):
                out.add((union, value))
    return out
