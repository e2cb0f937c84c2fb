"""Solutions to lesson 4's exercises: the code the notebook shows, tested by the checkers."""

from __future__ import annotations

CLIENT_CALLS = ("function_call", "custom_tool_call")


def responses_finish(response: dict) -> str:
    """The unified finish reason of a Responses ``response`` object (its last word).

    Responses has no finish-reason field: ``failed`` is ``error``;
    ``incomplete`` reads ``incomplete_details.reason`` (``max_output_tokens``
    is ``length``, ``content_filter`` stays); ``completed`` is ``tool_calls``
    when an output item calls a client tool, ``refusal`` when a message part
    refused, else ``stop``; any other status is ``other``.
    """
    status = response.get("status")
    if status == "failed":
        return "error"
    if status == "incomplete":
        reason = (response.get("incomplete_details") or {}).get("reason")
        return {"max_output_tokens": "length", "content_filter": "content_filter"}.get(
            reason, "other")
    if status != "completed":
        return "other"
    output = response.get("output") or []
    if any(item.get("type") in CLIENT_CALLS for item in output):
        return "tool_calls"
    for item in output:
        if any(part.get("type") == "refusal" for part in item.get("content") or []):
            return "refusal"
    return "stop"


def reduce_tool_block(card: dict, event) -> dict:
    """One tool-call block's card after one more turn event: a new dict, `card` unchanged.

    The card holds ``raw_input`` (the fragments joined), ``call_state``
    (``forming`` until the call is ready, ``complete``; or the invalid
    call's ``invalid`` / ``cut``) and ``execution`` (None, ``running``, then
    ``done`` when the tool finished ``ok``, else ``failed``).
    """
    kind = event.kind
    if kind == "block_started":
        return {"raw_input": event.content, "call_state": "forming", "execution": None}
    if kind == "block_delta":
        return card | {"raw_input": card["raw_input"] + event.fragment}
    if kind == "tool_call_ready":
        return card | {"call_state": "complete"}
    if kind == "tool_call_invalid":
        return card | {"call_state": event.state}
    if kind == "tool_execution_started":
        return card | {"execution": "running"}
    if kind == "tool_execution_finished":
        return card | {"execution": "done" if event.status == "ok" else "failed"}
    return card


TERMINALS = {"anthropic-messages": ("message_stop",),
             "openai-responses": ("response.completed", "response.incomplete"),
             "openai-chat": ("[DONE]",)}
ERRORS = ("error", "response.failed")


def outcome_of_end(end: dict) -> str:
    """The turn's outcome for a one-step turn, from how its stream ended.

    `end` has the ``wire``, the HTTP ``status``, the wire ``event_types`` in
    order and the step's unified ``finish`` reason. A failed request or an
    in-band error is ``failed`` (whatever came after it); no terminal event is
    ``truncated`` (a cut stream); a pause stop is ``paused``; else
    ``completed``.
    """
    if end["status"] >= 300 or any(t in ERRORS for t in end["event_types"]):
        return "failed"
    if not any(t in TERMINALS[end["wire"]] for t in end["event_types"]):
        return "truncated"
    return "paused" if end["finish"] == "pause" else "completed"
