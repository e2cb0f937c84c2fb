"""The next request of a turn, built from its `TurnState`: what goes back to the model.

After a step that asked for tools, the application sends the same request
again with the model's output appended and then the tool results. Each wire
spells it its own way:

- Anthropic Messages: an ``assistant`` message with the step's blocks (text,
  ``thinking`` with its ``signature``, ``redacted_thinking`` with its data,
  ``tool_use`` with the parsed input; server tool blocks as they came), then
  a ``user`` message of ``tool_result`` blocks;
- Responses: the output items as input items (``reasoning`` with its
  ``encrypted_content``, ``message``, ``function_call`` with its raw
  ``arguments``; an ``apply_patch_call`` or an ``mcp_approval_request`` as it
  finished), then per call its answer: ``function_call_output``,
  ``apply_patch_call_output`` (status ``completed`` or ``failed``), or an
  ``mcp_approval_response`` (approved when the application's run of it said ok);
- Chat: one ``assistant`` message (``content``, ``tool_calls``; the legacy
  ``function_call``), then one ``tool`` message per call (a ``function`` message
  for the legacy call);
- Bedrock InvokeModel: Anthropic's messages, inside the request's ``body`` (a body
  given as JSON text comes back as the object);
- Bedrock Converse: an ``assistant`` message of content blocks (``text``,
  ``reasoningContent`` with its ``reasoningText`` and signature, or with the
  ``redactedContent`` it came with, ``toolUse``
  with the parsed input), then a ``user`` message of ``toolResult`` blocks (a
  result object as a ``json`` block, anything else as ``text``; a failure as
  ``text`` with ``status: error``). A server tool's call and result stay with
  the provider, as on Gemini;
- Gemini: the model's parts back in ``contents`` under ``role: model``, each
  with its ``thoughtSignature`` where it came with one (text, ``thought``
  text, ``functionCall`` with its parsed ``args``; other parts as they came),
  then a ``user`` turn of ``functionResponse`` parts (the result object as
  ``response``, the call's ``id`` when it had one);
- Gemini Interactions, stateful (the default when the step's interaction has an
  id and the request does not say ``store: false``): ``previous_interaction_id``
  names the step's interaction, which the server keeps, and ``input`` is only
  the ``function_result`` steps (``call_id``, ``name``, the result as JSON text,
  ``is_error`` for a failure); stateless (``stateful=False``): ``input`` is the
  whole history as steps: the request's input (a string as a ``user_input``
  step), the model's steps (``thought`` with its ``signature`` and summary,
  ``model_output`` with its text, ``function_call`` with its ``id``, ``name``
  and parsed ``arguments``; a server tool's steps as they came), then the
  ``function_result`` steps;
- a Managed Agents session: the same session, and the events the application
  sends it (``events``): a ``user.custom_tool_result`` per call of its own tools
  (the session keeps its own history; the stream goes on after them).

The results are the calls' execution results (the agent loop's), as JSON
text (`fake_tools.result_as_text`), in the order of the calls.
"""

from __future__ import annotations

import copy
import json
from typing import Any

from .. import wires
from ..wires import (
    anthropic,
    bedrock_converse,
    chat,
    gemini,
    gemini_interactions,
    managed_agents,
    openai_sessions,
    responses,
)
from .fake_tools import result_as_text
from .reduce import BlockView, TurnState


def next_request(state: TurnState, request: dict, step: int | None = None,
                 **options: Any) -> dict:
    """The request after `step` (default: the last step), from `request`, the step's own:
    built by the step's wire's `next_request` part (``ValueError`` for a wire without one).
    `options` go to that part (Gemini Interactions takes ``stateful``)."""
    if step is None:
        step = state.steps[-1].step if state.steps else 1
    found = next((s for s in state.steps if s.step == step), None)
    wire = found.wire if found is not None else ""
    blocks = [b for b in state.blocks if b.step == step and b.choice == 0]
    entry = wires.ENTRIES.get(wire)
    if entry is None or entry.next_request is None:
        raise ValueError(f"no next request for wire {wire!r}")
    return entry.build_next(copy.deepcopy(request), blocks, step=found, **options)


def for_messages(out: dict, blocks: list[BlockView], **_: Any) -> dict:
    """Anthropic Messages: the assistant's blocks, then the tool results, in ``messages``."""
    out["messages"] = list(out.get("messages") or []) + _anthropic(blocks)
    return out


def for_responses(out: dict, blocks: list[BlockView], **_: Any) -> dict:
    """Responses: the output items, then each call's answer, in ``input``."""
    given = out.get("input")
    items = [{"role": "user", "content": given}] if isinstance(given, str) else list(given or [])
    out["input"] = items + _responses(blocks)
    return out


def for_chat(out: dict, blocks: list[BlockView], **_: Any) -> dict:
    """Chat: one assistant message, then the tool messages, in ``messages``."""
    out["messages"] = list(out.get("messages") or []) + _chat(blocks)
    return out


def for_invoke(out: dict, blocks: list[BlockView], **_: Any) -> dict:
    """Bedrock InvokeModel: Anthropic's messages inside the request's ``body``."""
    body = out.get("body")
    body = json.loads(body) if isinstance(body, str | bytes) else body or {}
    body["messages"] = list(body.get("messages") or []) + _anthropic(blocks)
    out["body"] = body
    return out


def for_converse(out: dict, blocks: list[BlockView], **_: Any) -> dict:
    """Bedrock Converse: the assistant's content blocks, then the ``toolResult`` blocks."""
    out["messages"] = list(out.get("messages") or []) + _converse(blocks)
    return out


def for_gemini(out: dict, blocks: list[BlockView], **_: Any) -> dict:
    """Gemini: the model's parts, then the ``functionResponse`` parts, in ``contents``."""
    given = out.get("contents")
    contents = ([{"role": "user", "parts": [{"text": given}]}] if isinstance(given, str)
                else list(given or []))
    out["contents"] = contents + _gemini(blocks)
    return out


def for_interactions(out: dict, blocks: list[BlockView], *, step: Any = None,
                     stateful: bool | None = None, **_: Any) -> dict:
    """Gemini Interactions: stateful, ``previous_interaction_id`` (the step's interaction,
    which the server keeps) and the ``function_result`` steps in ``input``; stateless, the
    whole history as steps. `stateful` None: stateful when the interaction has an id and
    the request does not say ``store: false``."""
    interaction = getattr(step, "response_id", None)
    if stateful is None:
        stateful = bool(interaction) and out.get("store") is not False
    results = _interactions_results(blocks)
    if stateful:
        out["previous_interaction_id"] = interaction
        out["input"] = results
    else:
        out.pop("previous_interaction_id", None)
        out["input"] = (_interactions_input(out.get("input"))
                        + _interactions_steps(blocks) + results)
    return out


def for_session(out: dict, blocks: list[BlockView], **_: Any) -> dict:
    """A Managed Agents session: the events it is sent after it asked, one
    ``user.custom_tool_result`` per call of the application's own tools (the agent's own
    calls stay with the session)."""
    out["events"] = [{"type": managed_agents.USER_CUSTOM_TOOL_RESULT,
                      "custom_tool_use_id": b.call_id,
                      "content": [{"type": managed_agents.TEXT_BLOCK, "text": _result(b)}]}
                     | ({} if b.execution_status == "ok" else {"is_error": True})
                     for b in _runs(blocks)]
    return out


def for_openai_session(out: dict, blocks: list[BlockView], *, step: Any = None,
                       **_: Any) -> dict:
    """An OpenAI Agents session: the events it is sent after it asked, one
    ``agent.session.input.tool_result`` per call of the application's functions, naming
    the turn that made it (the step's root turn: its ``response_id``), as the SDK's helper
    posts them (a failed run says so, without the exception's text)."""
    turn_id = getattr(step, "response_id", None)
    out["events"] = [{"type": openai_sessions.INPUT_TOOL_RESULT, "turn_id": turn_id,
                      "call_id": b.call_id}
                     | ({"success": True, "output": _result(b)} if b.execution_status == "ok"
                        else {"success": False, "error": _result(b)})
                     for b in _runs(blocks)]
    return out


def _result(block: BlockView) -> str:
    if block.execution_status == "ok":
        return result_as_text(block.result)
    return f"error: the tool did not finish ({block.execution_status or 'not run'})"


def _runs(blocks: list[BlockView]) -> list[BlockView]:
    return [b for b in blocks if b.kind == "tool_call" and not b.server_side
            and b.call_state == "complete"]


def _anthropic(blocks: list[BlockView]) -> list[dict[str, Any]]:
    content: list[dict[str, Any]] = []
    for b in blocks:
        if b.kind == "text":
            block: dict[str, Any] = {"type": anthropic.TEXT_BLOCK, "text": b.text}
            if b.sources:
                block["citations"] = list(b.sources)
            content.append(block)
        elif b.kind == "reasoning" and b.redacted:
            content.append({"type": anthropic.REDACTED_THINKING_BLOCK,
                            "data": (b.data or {}).get("data")})
        elif b.kind == "reasoning":
            content.append({"type": anthropic.THINKING_BLOCK, "thinking": b.text,
                            "signature": b.signature or ""})
        elif b.kind == "tool_call" and b.call_state == "complete":
            content.append({"type": b.wire_kind or anthropic.TOOL_USE_BLOCK, "id": b.call_id,
                            "name": b.name, "input": b.input})
        elif b.kind == "tool_result" and b.data is not None:
            content.append(b.data)
    results = [{"type": anthropic.TOOL_RESULT_BLOCK, "tool_use_id": b.call_id, "content": _result(b)}
               | ({} if b.execution_status == "ok" else {"is_error": True})
               for b in _runs(blocks)]
    out = [{"role": "assistant", "content": content}]
    return out + ([{"role": "user", "content": results}] if results else [])


def _responses(blocks: list[BlockView]) -> list[dict[str, Any]]:
    items: list[dict[str, Any]] = []
    message: dict[str, Any] | None = None
    for b in blocks:
        if b.kind == "text":
            if message is None:
                message = {"type": responses.MESSAGE_ITEM, "role": "assistant", "content": []}
                items.append(message)
            kind = responses.REFUSAL_PART if b.channel == "refusal" else responses.OUTPUT_TEXT_PART
            part = ({"type": kind, "refusal": b.text} if kind == responses.REFUSAL_PART
                    else {"type": kind, "text": b.text, "annotations": list(b.sources)})
            message["content"].append(part)
            continue
        message = None
        if b.kind == "reasoning":
            item = {"type": responses.REASONING_ITEM, "id": b.item_id,
                    "summary": [{"type": responses.SUMMARY_TEXT_PART, "text": b.text}] if b.text else []}
            encrypted = (b.end_data or {}).get("encrypted_content")
            if encrypted:
                item["encrypted_content"] = encrypted
            items.append(item)
        elif b.kind == "tool_call" and not b.server_side and b.call_state == "complete":
            if b.wire_kind in _STATED_ITEMS and isinstance(b.end_data, dict):
                items.append(copy.deepcopy(b.end_data))
            else:
                items.append({"type": responses.FUNCTION_CALL_ITEM, "id": b.item_id, "call_id": b.call_id,
                              "name": b.name, "arguments": b.raw_input})
    return items + [_responses_answer(b) for b in _runs(blocks)]


# Client calls whose item goes back as it finished (not as a function_call).
_STATED_ITEMS = frozenset({responses.APPLY_PATCH_CALL_ITEM, responses.MCP_APPROVAL_REQUEST_ITEM})


def _responses_answer(b: BlockView) -> dict[str, Any]:
    """What answers one client call on the Responses wire."""
    if b.wire_kind == responses.MCP_APPROVAL_REQUEST_ITEM:
        return {"type": responses.MCP_APPROVAL_RESPONSE_ITEM, "approval_request_id": b.call_id,
                "approve": b.execution_status == "ok"}
    if b.wire_kind == responses.APPLY_PATCH_CALL_ITEM:
        return {"type": responses.APPLY_PATCH_CALL_OUTPUT_ITEM, "call_id": b.call_id,
                "status": "completed" if b.execution_status == "ok" else "failed",
                "output": _result(b)}
    return {"type": responses.FUNCTION_CALL_OUTPUT_ITEM, "call_id": b.call_id, "output": _result(b)}


def _chat(blocks: list[BlockView]) -> list[dict[str, Any]]:
    text = "".join(b.text for b in blocks if b.kind == "text" and b.channel == "text")
    runs = _runs(blocks)
    calls = [{"id": b.call_id, "type": "function",
              "function": {"name": b.name, "arguments": b.raw_input}} for b in runs
             if b.wire_kind != chat.FUNCTION_CALL]
    message: dict[str, Any] = {"role": "assistant", "content": text or None}
    if calls:
        message["tool_calls"] = calls
    for b in runs:
        if b.wire_kind == chat.FUNCTION_CALL:     # the legacy functions API: no call id
            message[chat.FUNCTION_CALL] = {"name": b.name, "arguments": b.raw_input}
    return [message] + [
        {"role": "function", "name": b.name, "content": _result(b)}
        if b.wire_kind == chat.FUNCTION_CALL else
        {"role": "tool", "tool_call_id": b.call_id, "content": _result(b)} for b in runs]


def _gemini(blocks: list[BlockView]) -> list[dict[str, Any]]:
    parts: list[dict[str, Any]] = []
    for b in blocks:
        if b.kind in ("text", "reasoning"):
            part: dict[str, Any] = {gemini.TEXT_PART: b.text}
            if b.kind == "reasoning":
                part[gemini.THOUGHT] = True
        elif b.kind == "tool_call" and not b.server_side and b.call_state == "complete":
            call = {"name": b.name, "args": b.input}
            part = {gemini.FUNCTION_CALL: call | ({"id": b.call_id} if b.call_id else {})}
        elif isinstance(b.end_data, dict):
            part = copy.deepcopy(b.end_data)  # a whole part (code, its result) as it came
        else:
            continue
        if b.signature:
            part[gemini.THOUGHT_SIGNATURE] = b.signature
        parts.append(part)
    responses = [{gemini.FUNCTION_RESPONSE: {"name": b.name, "response": _gemini_result(b)}
                  | ({"id": b.call_id} if b.call_id else {})} for b in _runs(blocks)]
    out = [{"role": "model", "parts": parts}]
    return out + ([{"role": "user", "parts": responses}] if responses else [])


def _gemini_result(block: BlockView) -> dict[str, Any]:
    """A result as a ``functionResponse.response``: an object (a JSON object is sent as
    it is; anything else under ``result``, a failure under ``error``)."""
    if block.execution_status != "ok":
        return {"error": _result(block)}
    result = block.result
    return copy.deepcopy(result) if isinstance(result, dict) else {"result": result}


def _interactions_input(given: Any) -> list[dict[str, Any]]:
    """A request's ``input`` as steps of the history (a string is the user's text)."""
    if given is None:
        return []
    if isinstance(given, str):
        return [{"type": gemini_interactions.USER_INPUT_STEP,
                 "content": [{"type": "text", "text": given}]}]
    if isinstance(given, dict):
        return [copy.deepcopy(given)]
    return copy.deepcopy(list(given))


def _interactions_steps(blocks: list[BlockView]) -> list[dict[str, Any]]:
    gi = gemini_interactions
    steps: list[dict[str, Any]] = []
    for b in blocks:
        if b.kind == "reasoning":
            step: dict[str, Any] = {"type": gi.THOUGHT_STEP}
            if b.text:
                step[gi.SUMMARY_FIELD] = [{"type": "text", "text": b.text}]
        elif b.kind == "text":
            step = {"type": gi.MODEL_OUTPUT_STEP,
                    gi.CONTENT_FIELD: [{"type": "text", "text": b.text}
                                       | ({gi.ANNOTATIONS_KEY: list(b.sources)}
                                          if b.sources else {})]}
        elif b.kind == "tool_call" and not b.server_side and b.call_state == "complete":
            step = {"type": gi.FUNCTION_CALL_STEP, "id": b.call_id, "name": b.name,
                    gi.ARGUMENTS_KEY: b.input}
        elif b.server_side and isinstance(b.end_data or b.data, dict):
            # A server tool's step as it came: a call as its stop states it, whole at last.
            step = copy.deepcopy(b.end_data or b.data)
        else:
            continue
        if b.signature:
            step[gi.SIGNATURE_KEY] = b.signature
        steps.append(step)
    return steps


def _interactions_results(blocks: list[BlockView]) -> list[dict[str, Any]]:
    return [{"type": gemini_interactions.FUNCTION_RESULT_STEP, "call_id": b.call_id,
             "name": b.name, "result": _result(b)}
            | ({} if b.execution_status == "ok" else {"is_error": True})
            for b in _runs(blocks)]


def _converse(blocks: list[BlockView]) -> list[dict[str, Any]]:
    content: list[dict[str, Any]] = []
    for b in blocks:
        if b.kind == "text":
            content.append({bedrock_converse.TEXT_BLOCK: b.text})
        elif b.kind == "reasoning" and b.redacted:
            content.append({bedrock_converse.REASONING_BLOCK: copy.deepcopy(b.data)})
        elif b.kind == "reasoning":
            text = {"text": b.text} | ({"signature": b.signature} if b.signature else {})
            content.append({bedrock_converse.REASONING_BLOCK: {
                bedrock_converse.REASONING_TEXT: text}})
        elif b.kind == "tool_call" and not b.server_side and b.call_state == "complete":
            content.append({bedrock_converse.TOOL_USE_BLOCK: {
                "toolUseId": b.call_id, "name": b.name, "input": b.input}})
    results = [{bedrock_converse.TOOL_RESULT_BLOCK: _converse_result(b)}
               for b in _runs(blocks)]
    out = [{"role": "assistant", "content": content}]
    return out + ([{"role": "user", "content": results}] if results else [])


def _converse_result(block: BlockView) -> dict[str, Any]:
    """A ``toolResult``: a result object as a ``json`` block, anything else as ``text``; a
    failure as ``text`` with ``status: error``."""
    if block.execution_status != "ok":
        return {"toolUseId": block.call_id, "content": [{"text": _result(block)}],
                "status": "error"}
    result = block.result
    item = ({"json": copy.deepcopy(result)} if isinstance(result, dict)
            else {"text": result_as_text(result)})
    return {"toolUseId": block.call_id, "content": [item]}
