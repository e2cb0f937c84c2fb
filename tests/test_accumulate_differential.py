"""Differential test: our final object against the official SDK's, from the same bytes.

For every capture (the project's and the shared reference recordings), the
SDK's streaming helper is driven offline from the capture's bytes
(`lesson_lib.capture.replay.run_sdk`) and its final object is compared with ours.

One normalisation rule, applied to both sides (`normalise`): values that
are None are dropped (the SDK's models spell out every optional field as
None, the wire leaves them out), and so are the SDK-only fields `parsed`,
`parsed_arguments`, `parsed_output` and the stream-only `index` of a Chat
tool call.

Where the SDK is wrong or refuses to answer, a named entry of `GAPS` says
why, checks our answer against the bytes instead, and puts our (checked)
value in place of the SDK's for the part it covers; the rest of the object
is still compared. Gaps apply in list order, and a later one may supply the
object to compare with when an earlier one found none (a Responses stream
with an error event, then `response.failed`: the server's own object). Each
gap must be exercised by some capture, so that the list cannot go stale.
"""

from __future__ import annotations

import copy
import importlib.util
import json
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import pytest

from lesson_lib.accumulate import accumulate
from lesson_lib.accumulate.base import partial_value
from lesson_lib.capture.captures import Capture, corpus, reference_corpus, reference_dir
from lesson_lib.capture.replay import SDKOutcome, run_sdk
from lesson_lib.wires.wire_events import parse_all

RESPONSES_READY = importlib.util.find_spec("lesson_lib.accumulate.responses") is not None
SDK_ONLY = frozenset({"parsed", "parsed_arguments", "parsed_output"})


def normalise(value: Any, key: str | None = None) -> Any:
    """THE one rule: drop None values and SDK-only fields, recursively."""
    if isinstance(value, dict):
        return {k: normalise(v, k) for k, v in value.items()
                if v is not None and k not in SDK_ONLY}
    if isinstance(value, list):
        items = [normalise(v) for v in value]
        if key == "tool_calls":
            items = [{k: v for k, v in i.items() if k != "index"} if isinstance(i, dict) else i
                     for i in items]
        return items
    return value


# -- what the bytes say ---------------------------------------------------------


def payloads(capture: Capture) -> list[dict]:
    return [e.payload for e in parse_all(capture.events) if isinstance(e.payload, dict)]


def anthropic_slots(capture: Capture) -> dict[int, dict]:
    """Per block index: its start block, concatenated delta text by delta type, stopped."""
    slots: dict[int, dict] = {}
    for p in payloads(capture):
        i = p.get("index")
        if p.get("type") == "content_block_start":
            slots[i] = {"start": p["content_block"], "stopped": False, "text": "",
                        "thinking": "", "partial_json": "", "compaction": "", "deltas": 0}
        elif p.get("type") == "content_block_delta" and i in slots:
            d = p["delta"]
            slots[i]["deltas"] += 1
            for key, field in (("text", "text"), ("thinking", "thinking"),
                               ("partial_json", "partial_json"), ("compaction", "content")):
                if d.get("type") == f"{key}_delta" or (key == "partial_json" and
                                                       d.get("type") == "input_json_delta"):
                    slots[i][key] += d.get(field) or ""
        elif p.get("type") == "content_block_stop" and i in slots:
            slots[i]["stopped"] = True
    return slots


def chat_calls(capture: Capture) -> dict[int, list[dict]]:
    """Per choice, the tool calls: a fragment with an id goes to that id's call,
    one without to the call last seen at its index."""
    out: dict[int, list[dict]] = {}
    for p in payloads(capture):
        for ch in p.get("choices") or []:
            calls = out.setdefault(ch["index"], [])
            at: dict = {c["_index"]: c for c in calls}
            for frag in (ch.get("delta") or {}).get("tool_calls") or []:
                fid = frag.get("id")
                call = next((c for c in calls if fid and c["id"] == fid), None)
                if call is None and not fid:
                    call = at.get(frag.get("index"))
                if call is None:
                    call = {"id": fid, "name": "", "arguments": "", "_index": frag.get("index")}
                    calls.append(call)
                call["_index"] = frag.get("index")
                at[frag.get("index")] = call
                fn = frag.get("function") or {}
                if fn.get("name") and fn["name"] != call["name"]:
                    call["name"] += fn["name"]
                call["arguments"] += fn.get("arguments") or ""
    return out


def chat_text(capture: Capture, field: str) -> dict[int, str]:
    out: dict[int, str] = {}
    for p in payloads(capture):
        for ch in p.get("choices") or []:
            piece = (ch.get("delta") or {}).get(field)
            if isinstance(piece, str):
                out[ch["index"]] = out.get(ch["index"], "") + piece
    return out


def codes(result) -> list[str]:
    return [d.code for d in result.diagnostics]


# -- the gaps: where the SDK is wrong or refuses -----------------------------------


@dataclass(frozen=True)
class Gap:
    """A documented difference: `applies` spots it; `check` verifies our answer
    against the bytes and returns the SDK object with the covered part replaced
    by ours (or None when there is no SDK object to compare at all)."""

    name: str
    why: str
    wire: str
    applies: Callable[[Capture, SDKOutcome], bool]
    check: Callable[[Capture, Any, dict | None], dict | None]


_SDK_COPIED_USAGE = {"output_tokens", "input_tokens", "cache_creation_input_tokens",
                     "cache_read_input_tokens", "server_tool_use", "output_tokens_details"}


def _delta_usage_extras(capture: Capture) -> dict:
    extras = {}
    for p in payloads(capture):
        if p.get("type") == "message_delta":
            for k, v in (p.get("usage") or {}).items():
                if k not in _SDK_COPIED_USAGE and v is not None:
                    extras[k] = v
    return extras


def _check_usage(capture, ours, sdk):
    for key, value in _delta_usage_extras(capture).items():
        assert ours.final["usage"][key] == value
        sdk["usage"][key] = ours.final["usage"][key]
    return sdk


def _check_compaction(capture, ours, sdk):
    for i, slot in anthropic_slots(capture).items():
        if slot["compaction"]:
            assert ours.final["content"][i]["content"] == slot["compaction"]
            sdk["content"][i]["content"] = ours.final["content"][i]["content"]
    return sdk


def _fallback_models(capture: Capture) -> list[str]:
    return [s["start"]["to"]["model"] for _, s in sorted(anthropic_slots(capture).items())
            if s["start"].get("type") == "fallback"]


def _check_fallback(capture, ours, sdk):
    assert ours.final["model"] == _fallback_models(capture)[-1]
    sdk["model"] = ours.final["model"]
    return sdk


def _untracked_input(slot: dict) -> bool:
    return bool(slot["partial_json"]) and slot["start"].get("type") not in (
        "tool_use", "server_tool_use")


def _check_untracked_input(capture, ours, sdk):
    for i, slot in anthropic_slots(capture).items():
        if _untracked_input(slot) and slot["stopped"]:
            assert ours.final["content"][i]["input"] == json.loads(slot["partial_json"])
            sdk["content"][i]["input"] = ours.final["content"][i]["input"]
    return sdk


def _cut_tools(capture: Capture) -> dict[int, dict]:
    return {i: s for i, s in anthropic_slots(capture).items()
            if not s["stopped"] and "input" in s["start"]}


def _check_cut_tools(capture, ours, sdk):
    cut = {d.slot: d for d in ours.diagnostics if d.code == "cut_tool_input"}
    for i, slot in _cut_tools(capture).items():
        assert cut[i].raw == slot["partial_json"]   # the raw text, exactly as it arrived
        assert ours.final["content"][i]["input"] == partial_value(slot["partial_json"])
        assert "block_never_stopped" in codes(ours)
        if sdk is not None:
            sdk["content"][i]["input"] = ours.final["content"][i]["input"]
    return sdk


def _has_error_event(capture: Capture) -> bool:
    return any(p.get("type") == "error" or ("error" in p and "choices" not in p)
               or p.get("error") is not None for p in payloads(capture))


def _check_in_band_error(capture, ours, sdk):
    first = next(p for p in payloads(capture) if p.get("type") == "error" or "error" in p)
    error = first["error"] if isinstance(first.get("error"), dict) else first  # nested or flat
    assert not ours.complete
    diag = next(d for d in ours.diagnostics if d.code == "in_band_error")
    assert error["message"] in diag.message
    if capture.wire == "anthropic-messages":
        for i, slot in anthropic_slots(capture).items():
            block = ours.final["content"][i]
            for key in ("text", "thinking"):
                if key in block:
                    assert block[key] == slot["start"].get(key, "") + slot[key]
    elif capture.wire == "openai-chat":
        for field in ("content", "refusal"):
            for i, text in chat_text(capture, field).items():
                assert ours.final["choices"][i]["message"][field] == text
    return None


def _array_content(capture: Capture) -> bool:
    return any(isinstance((ch.get("delta") or {}).get("content"), list)
               for p in payloads(capture) for ch in p.get("choices") or [])


def _check_array_content(capture, ours, sdk):
    """Per choice: the runs of (part type, text) in the bytes, against our parts."""
    runs: dict[int, list[list]] = {}
    for p in payloads(capture):
        for ch in p.get("choices") or []:
            content = (ch.get("delta") or {}).get("content")
            pieces = ([("text", content)] if isinstance(content, str) and content else
                      [(part["type"], part.get("text") if part["type"] == "text" else
                        "".join(t["text"] for t in part["thinking"]))
                       for part in content] if isinstance(content, list) else [])
            mine = runs.setdefault(ch["index"], [])
            for kind, text in pieces:
                if mine and mine[-1][0] == kind:
                    mine[-1][1] += text
                else:
                    mine.append([kind, text])
    sdk = copy.deepcopy(sdk)
    for i, expected in runs.items():
        content = ours.final["choices"][i]["message"]["content"]
        got = [[part["type"], part["text"] if part["type"] == "text" else
                "".join(t["text"] for t in part["thinking"])] for part in content]
        assert got == expected
        sdk["choices"][i]["message"]["content"] = copy.deepcopy(content)
    return sdk


def _check_http_error(capture, ours, sdk):
    assert ours.final is None and not ours.complete
    body = json.loads(capture.body)
    assert body["error"]["message"] in ours.diagnostics[0].message
    return None


def _sdk_snapshot_error(outcome: SDKOutcome) -> bool:
    return outcome.final is None and getattr(outcome.error, "completion", None) is not None


def _check_against_sdk_snapshot(capture, ours, sdk):
    reasons = {c["finish_reason"] for c in ours.final["choices"]}
    assert reasons & {"length", "content_filter"}
    assert ours.complete
    return sdk   # the snapshot the SDK's error carries: compared as usual


def _reused_index(capture: Capture) -> bool:
    seen: dict = {}
    for p in payloads(capture):
        for ch in p.get("choices") or []:
            for frag in (ch.get("delta") or {}).get("tool_calls") or []:
                key = (ch["index"], frag.get("index"))
                if frag.get("id"):
                    if key in seen and seen[key] != frag["id"]:
                        return True
                    seen[key] = frag["id"]
    return False


def _check_calls_by_id(capture, ours, sdk):
    for i, calls in chat_calls(capture).items():
        got = ours.final["choices"][i]["message"]["tool_calls"]
        assert [(c["id"], c["function"]["name"], c["function"]["arguments"]) for c in got] == [
            (c["id"], c["name"], c["arguments"]) for c in calls]
        sdk["choices"][i]["message"]["tool_calls"] = got
    return sdk


def _roles(capture: Capture) -> dict[int, list[str]]:
    out: dict[int, list[str]] = {}
    for p in payloads(capture):
        for ch in p.get("choices") or []:
            role = (ch.get("delta") or {}).get("role")
            if isinstance(role, str):
                out.setdefault(ch["index"], []).append(role)
    return out


def _check_roles(capture, ours, sdk):
    for i, roles in _roles(capture).items():
        assert len(set(roles)) == 1
        assert ours.final["choices"][i]["message"]["role"] == roles[0]
        sdk["choices"][i]["message"]["role"] = roles[0]
    return sdk


def _terminal_response(capture: Capture) -> dict | None:
    for p in reversed(payloads(capture)):
        if p.get("type") in ("response.completed", "response.incomplete", "response.failed"):
            return p.get("response")
    return None


def _set_path(obj: Any, path: str, value: Any) -> Any:
    """Set `value` at a path like ``output[0].content[1].text``; return the old value."""
    steps = [int(k) if k.isdigit() else k
             for k in path.replace("[", ".").replace("]", "").split(".") if k]
    for step in steps[:-1]:
        obj = obj[step]
    old, obj[steps[-1]] = obj[steps[-1]], value
    return old


def _check_against_terminal(capture, ours, sdk):
    server = copy.deepcopy(_terminal_response(capture))
    assert server is not None
    assert ours.complete == (server.get("status") in ("completed", "incomplete"))
    # Where ours and the server's object differ, the accumulator must have said so.
    for d in ours.diagnostics:
        if d.code == "server_object_differs" and not d.extra.get("absent"):
            assert _set_path(server, d.extra["path"], d.extra["ours"]) == d.extra["theirs"]
    return server   # the server's own final object, compared as usual


def _check_identity_changed(capture, ours, sdk):
    restated = [d for d in ours.diagnostics if d.code == "server_restated"]
    added = {p["output_index"]: p["item"] for p in payloads(capture)
             if p.get("type") == "response.output_item.added"}
    done = {p["output_index"]: p["item"] for p in payloads(capture)
            if p.get("type") == "response.output_item.done"}
    changed = {(i, k) for i in added.keys() & done.keys() for k in ("call_id", "name")
               if added[i].get(k) != done[i].get(k) and isinstance(added[i].get(k), str)}
    assert changed and {(int(d.extra["path"].split("[")[1].split("]")[0]),
                         d.extra["path"].rsplit(".", 1)[1]) for d in restated} >= changed
    return _check_against_terminal(capture, ours, sdk)


def _check_rotating_ids(capture, ours, sdk):
    assert [d.code for d in ours.diagnostics].count("rotating_ids") == 1
    assert all(d.severity != "error" for d in ours.diagnostics)
    return _check_against_terminal(capture, ours, sdk)


def _resumed(capture: Capture) -> bool:
    """A Responses stream that starts mid-way (a resume with ``starting_after``)."""
    first = next(iter(payloads(capture)), {})
    return first.get("type") != "response.created" and _terminal_response(capture) is not None


def _check_resumed(capture, ours, sdk):
    assert ours.complete
    assert "event_before_start" in {d.code for d in ours.diagnostics}
    return copy.deepcopy(_terminal_response(capture))   # the server's own final object


def _check_cut_text(capture, ours, sdk):
    assert not ours.complete
    streamed: dict[tuple, str] = {}
    for p in payloads(capture):
        if p.get("type") == "response.output_text.delta":
            key = (p["output_index"], p["content_index"])
            streamed[key] = streamed.get(key, "") + p["delta"]
    assert streamed
    for (item, part), text in streamed.items():
        assert ours.final["output"][item]["content"][part]["text"] == text
    return None   # no SDK object to compare with


def _interleaved(capture: Capture) -> bool:
    for p in payloads(capture):
        for ch in p.get("choices") or []:
            frags = (ch.get("delta") or {}).get("tool_calls") or []
            if len({f.get("index") for f in frags}) > 1:
                return True
    order = [f.get("index") for p in payloads(capture) for ch in p.get("choices") or []
             for f in (ch.get("delta") or {}).get("tool_calls") or []]
    return any(b < a for a, b in zip(order, order[1:], strict=False))


def _premature_done(outcome: SDKOutcome) -> bool:
    """The SDK said a call's arguments were done before their last fragment."""
    if outcome.final is None:
        return False
    final = {(c.index, t.index): t.function.arguments for c in outcome.final.choices
             for t in c.message.tool_calls or []}
    return any(e.type == "tool_calls.function.arguments.done" and
               e.arguments != final.get((0, e.index)) for e in outcome.events)


def _check_interleaved(capture, ours, sdk):
    for i, calls in chat_calls(capture).items():
        got = ours.final["choices"][i]["message"]["tool_calls"]
        assert [c["function"]["arguments"] for c in got] == [c["arguments"] for c in calls]
    return sdk   # the SDK's final object is right; only its events are early


def _check_boto3(capture, ours, sdk):
    """boto3 assembles nothing: ours is checked against boto3's own events (their text),
    and on Invoke against the anthropic SDK's `accumulate_event` over those events (what
    its Bedrock client assembles from the same Anthropic events)."""
    from anthropic.lib.streaming._messages import accumulate_event

    from lesson_lib.capture.bedrock_replay import as_payload, run_boto3, text_of_event
    events = run_boto3(capture).events
    text = "".join(text_of_event(e) for e in events)
    if capture.wire == "aws-bedrock-converse":
        blocks = ours.final["output"]["message"]["content"]
        said = [b.get("text") or (b.get("citationsContent") or {}).get("content", [{}])[0]
                .get("text", "") for b in blocks]
        assert "".join(t for t in said if isinstance(t, str)) == text
        return None
    assert "".join(b.get("text", "") for b in ours.final["content"]
                   if b.get("type") == "text") == text
    snapshot, bufs = None, {}
    for event in events:
        snapshot = accumulate_event(event=as_payload(event)[1], current_snapshot=snapshot,
                                    json_bufs=bufs)
    return None if snapshot is None else snapshot.model_dump(mode="json", by_alias=True,
                                                             warnings=False)


def _skipped_chunks(capture: Capture) -> list[dict]:
    """The Chat payloads the SDK's helper skips: chunks whose object is not a chunk's
    (Azure's first chunk, its filter results), errors apart."""
    return [p for p in payloads(capture) if "error" not in p
            and p.get("object") != "chat.completion.chunk"]


def _check_skipped_chunks(capture, ours, sdk):
    named = next(p for p in payloads(capture) if p.get("object") == "chat.completion.chunk")
    for key in ("id", "created", "model"):      # named by the first real chunk
        assert ours.final[key] == named[key]
    extra = {k: v for p in _skipped_chunks(capture) for k, v in p.items()
             if k not in ("id", "created", "model", "object", "choices")}
    assert extra and all(ours.final[k] == v for k, v in extra.items())
    return {**sdk, **extra}


def _check_gemini_assembly(capture: Capture, ours: Any, sdk: dict | None) -> None:
    from test_gemini_accumulate import check_against_the_sdks_objects
    check_against_the_sdks_objects(capture, ours)
    return None


def _check_interaction_steps(capture: Capture, ours: Any, sdk: dict | None) -> dict | None:
    from test_gemini_interactions_accumulate import check_steps
    check_steps(ours.final["steps"], run_sdk(capture).events)
    return None if sdk is None else {**sdk, "steps": ours.final["steps"]}


def _check_session_fold(capture: Capture, ours: Any, sdk: dict | None) -> None:
    from test_managed_agents import check_against_the_sdks_fold
    check_against_the_sdks_fold(capture, ours)
    return None


GAPS = [
    Gap("bedrock-no-sdk-object",
        "boto3's converse_stream / invoke_model_with_response_stream yield the events as "
        "dicts and assemble no final object. Ours is checked against the text of boto3's "
        "own events, and on Invoke compared with the Message the anthropic SDK's "
        "accumulate_event builds from boto3's events.",
        "*", lambda c, o: c.wire in ("aws-bedrock-converse", "aws-bedrock-invoke"),
        _check_boto3),
    Gap("anthropic-usage-fields",
        "The SDK copies a fixed list of usage fields from message_delta; newer ones such as "
        "`iterations` are dropped. Ours keeps every field the last message_delta sent.",
        "anthropic-messages",
        lambda c, o: o.final is not None and bool(_delta_usage_extras(c)), _check_usage),
    Gap("anthropic-compaction-delta",
        "The (non-beta) SDK ignores `compaction_delta`: the compaction block's content "
        "stays null. Ours appends it to `content`.",
        "anthropic-messages",
        lambda c, o: o.final is not None and any(s["compaction"] for s in
                                                 anthropic_slots(c).values()),
        _check_compaction),
    Gap("anthropic-fallback-model",
        "The (non-beta) SDK keeps the requested model after a `fallback` block. The beta "
        "helper and the non-streaming message name the model the block hands over to; "
        "ours does too, checked against the last fallback block's `to.model` in the bytes.",
        "anthropic-messages",
        lambda c, o: o.final is not None and bool(_fallback_models(c)), _check_fallback),
    Gap("anthropic-untracked-tool-input",
        "The (non-beta) SDK applies input_json_delta only to tool_use and server_tool_use; "
        "an mcp_tool_use block keeps the {} of its start. Ours parses its input too.",
        "anthropic-messages",
        lambda c, o: o.final is not None and any(_untracked_input(s) for s in
                                                 anthropic_slots(c).values()),
        _check_untracked_input),
    Gap("anthropic-cut-tool-input",
        "A tool block that never got its content_block_stop: the SDK keeps jiter's "
        "partial_mode=True value (an unfinished string dropped, {} when nothing parsed) and "
        "says nothing. Ours is the partial value of exactly the raw text that arrived, with "
        "a cut_tool_input diagnostic carrying that text.",
        "anthropic-messages",
        lambda c, o: bool(_cut_tools(c)), _check_cut_tools),
    Gap("in-band-error",
        "An error event (Anthropic) or error payload (Chat) makes the SDK raise (Anthropic: "
        "APIStatusError with status_code 200) and return no object. Ours keeps what arrived, "
        "checked against the deltas in the bytes, with an in_band_error diagnostic. (A "
        "session's session.error makes the SDK raise nothing: managed-agents-one-message.)",
        "*", lambda c, o: o.final is None and o.error is not None and _has_error_event(c),
        _check_in_band_error),
    Gap("http-error",
        "A non-2xx response: the SDK raises its status error (e.g. OverloadedError). Ours has "
        "no final object and an http_error diagnostic with the provider's message.",
        "*", lambda c, o: c.status >= 300, _check_http_error),
    Gap("chat-length-or-content-filter",
        "get_final_completion() raises LengthFinishReasonError / "
        "ContentFilterFinishReasonError on such a finish. The error carries the SDK's "
        "snapshot, which is compared with ours instead.",
        "openai-chat", lambda c, o: _sdk_snapshot_error(o), _check_against_sdk_snapshot),
    Gap("chat-index-reused-new-id",
        "The SDK merges tool-call fragments by index only: a new id at a reused index is "
        "glued onto the previous call (ids, names and arguments concatenated). Ours opens a "
        "new call, checked against the fragments grouped by id in the bytes.",
        "openai-chat", lambda c, o: o.final is not None and _reused_index(c),
        _check_calls_by_id),
    Gap("chat-role-repeated",
        "The SDK concatenates every string field of a delta, so a server that repeats "
        "`role: assistant` on every chunk gets role 'assistantassistant...'. Ours sets the "
        "role, checked against the (identical) roles in the bytes.",
        "openai-chat",
        lambda c, o: o.final is not None and any(len(r) > 1 for r in _roles(c).values()),
        _check_roles),
    Gap("responses-not-completed",
        "get_final_response() raises unless response.completed arrived. For a stream that "
        "ended with response.incomplete or response.failed, ours is compared with the "
        "server's own Response in that terminal event instead.",
        "openai-responses",
        lambda c, o: o.final is None and c.status < 300 and
        (_terminal_response(c) or {}).get("status") in ("incomplete", "failed"),
        _check_against_terminal),
    Gap("responses-resumed",
        "A resumed stream (responses.retrieve with starting_after) does not begin with "
        "response.created, so the SDK's stream helper raises at its first event. Ours says "
        "the events came before the start and is compared with the server's own Response "
        "in the terminal event.",
        "openai-responses",
        lambda c, o: o.final is None and c.status < 300 and _resumed(c),
        _check_resumed),
    Gap("responses-identity-changed",
        "The Responses helper checks that an item keeps its identity from output_item.added "
        "to .done; a tool_search_call whose call_id the done item restates makes it raise "
        "RuntimeError ('Completed output item identity changed') and return nothing, so "
        "nothing after that event reaches the application. Ours takes the server's item, "
        "says so (server_restated, with both ids), and is compared with the server's own "
        "Response in the terminal event.",
        "openai-responses",
        lambda c, o: o.final is None and isinstance(o.error, RuntimeError)
        and "output item identity changed" in str(o.error) and _terminal_response(c) is not None,
        _check_identity_changed),
    Gap("responses-rotating-ids",
        "A compatible server that gives every event a fresh id (the response's on each "
        "lifecycle event, each item's item_id) while output_index stays put: the helper "
        "checks that every lifecycle event names the response it began with and raises "
        "RuntimeError ('Lifecycle response identity changed.') at response.in_progress, "
        "before any text, returning nothing. Ours matches events by output_index, says so "
        "once (rotating_ids, a warning), and is compared with the server's own Response in "
        "the terminal event.",
        "openai-responses",
        lambda c, o: o.final is None and isinstance(o.error, RuntimeError)
        and "Lifecycle response identity changed" in str(o.error)
        and _terminal_response(c) is not None,
        _check_rotating_ids),
    Gap("responses-cut",
        "get_final_response() raises on a stream cut before any terminal event. Ours is "
        "checked against the bytes: not complete, and each output_text part holds exactly "
        "the deltas that arrived.",
        "openai-responses",
        lambda c, o: o.final is None and c.status < 300 and _terminal_response(c) is None
        and any(p.get("type") == "response.output_text.delta" for p in payloads(c)),
        _check_cut_text),
    Gap("chat-array-content",
        "A compatible server (Mistral) streams delta.content as an array of typed parts "
        "(thinking, text). The SDK's helper cannot merge a list into the string it holds: it "
        "keeps its first string and drops every array (its message ends up with only the "
        "plain-string fragments; list after list it raises RuntimeError instead). Ours keeps "
        "the parts, checked against the bytes: each run of thinking text and of text, in "
        "order, with the plain strings as text.",
        "openai-chat", lambda c, o: o.final is not None and _array_content(c),
        _check_array_content),
    Gap("chat-interleaved-calls",
        "With interleaved parallel calls the SDK emits arguments.done for a call before its "
        "last fragment (seen here: a done event whose arguments are not the call's final "
        "ones); its final object is still right. Checked: our arguments equal each call's "
        "fragments in the bytes; the objects are then compared as usual.",
        "openai-chat", lambda c, o: _interleaved(c) and _premature_done(o),
        _check_interleaved),
    Gap("chat-skipped-chunk",
        "The Chat helper skips every chunk whose object is not chat.completion.chunk: "
        "Azure's first chunk (object \"\", placeholder names, the prompt's "
        "prompt_filter_results) never reaches its snapshot. Ours reads it: the names come "
        "from the first real chunk, checked against the bytes, and the filter results are "
        "kept as the bytes have them.",
        "openai-chat", lambda c, o: o.final is not None and bool(_skipped_chunks(c)),
        _check_skipped_chunks),
    Gap("gemini-assembles-nothing",
        "google-genai's generate_content_stream yields one response object per record and "
        "assembles none. Ours is compared with what those objects assemble to "
        "(tests/test_gemini_accumulate.py), but for the fields the SDK's types drop.",
        "google-gemini", lambda c, o: c.status < 300, _check_gemini_assembly),
    Gap("interactions-steps-left-out",
        "google-genai's interactions.create(stream=True) yields one object per event and "
        "assembles none; its interaction.completed reports the interaction without the "
        "steps the stream said. Ours is compared with that interaction, and each of its "
        "steps with what the SDK's own step events say of it "
        "(tests/test_gemini_interactions_accumulate.py).",
        "google-gemini-interactions", lambda c, o: c.status < 300, _check_interaction_steps),
    Gap("managed-agents-one-message",
        "anthropic's accumulate_managed_agents_event folds a session stream into one "
        "snapshot: the agent.message being previewed or last sent. Ours keeps every event "
        "of the session; after every event, the SDK's snapshot equals our message with its "
        "id (tests/test_managed_agents.py).",
        "anthropic-managed-agents", lambda c, o: c.status < 300, _check_session_fold),
]


# -- the comparison ---------------------------------------------------------------


ALL = corpus() + reference_corpus()


def _param(capture: Capture):
    marks = []
    if capture.wire == "openai-responses" and not RESPONSES_READY:
        marks.append(pytest.mark.skip(
            reason="lesson_lib/accumulate/responses.py does not exist yet"))
    return pytest.param(capture, id=capture.key, marks=marks)


_APPLIED: dict[str, list[str]] = {g.name: [] for g in GAPS}


def sdk_object(outcome: SDKOutcome) -> dict | None:
    """The SDK's final object as JSON (wire names), or the snapshot its error carries."""
    model = outcome.final
    if model is None:
        model = getattr(outcome.error, "completion", None)
    if model is None:
        return None
    return model.model_dump(mode="json", by_alias=True, warnings=False)


@pytest.mark.parametrize("capture", [_param(c) for c in ALL])
def test_final_equals_the_official_sdk(capture: Capture):
    ours = accumulate(capture)
    outcome = run_sdk(capture)
    sdk = sdk_object(outcome)
    applied = [g for g in GAPS if g.wire in ("*", capture.wire) and g.applies(capture, outcome)]
    for gap in applied:
        _APPLIED[gap.name].append(capture.key)
        sdk = gap.check(capture, ours, sdk)
    if sdk is None:
        assert applied, f"the SDK gave no object ({outcome.raised}) and no gap explains it"
        return
    assert normalise(ours.final) == normalise(sdk)


def test_every_gap_is_exercised_by_some_capture():
    missing = []
    for gap in GAPS:
        if _APPLIED[gap.name]:
            continue
        if any(gap.wire in ("*", c.wire) and gap.applies(c, run_sdk(c)) for c in ALL):
            continue
        missing.append(gap.name)
    if missing and not reference_corpus():
        pytest.skip(f"gaps {missing} are shown only by the reference captures, absent at "
                    f"{reference_dir()}")
    assert not missing, f"gaps no capture shows (stale, or a capture is missing): {missing}"


# -- chunking never changes the answer ---------------------------------------------


def _few() -> list[Capture]:
    picked: list[Capture] = []
    for wire in ("anthropic-messages", "openai-chat", "openai-responses"):
        if wire == "openai-responses" and not RESPONSES_READY:
            continue
        caps = sorted((c for c in ALL if c.wire == wire and c.status < 300),
                      key=lambda c: -len(c.body))
        picked += caps[:2] + [c for c in caps if not accumulate(c).complete][:1]
    return picked


@pytest.mark.parametrize("capture", _few(), ids=lambda c: c.key)
@pytest.mark.parametrize("size", [1, 7, 64])
def test_final_does_not_depend_on_the_chunking(capture: Capture, size: int):
    whole = accumulate(capture)
    chunked = accumulate(capture, chunk_size=size)
    assert chunked.final == whole.final
    assert chunked.complete == whole.complete
    assert [d.as_dict() for d in chunked.diagnostics] == [d.as_dict() for d in whole.diagnostics]
