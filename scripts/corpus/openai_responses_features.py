"""Responses captures of wire features no public recording shows: a custom tool's free-text
input, and a background response that waits in the queue and compacts its context.

Built from the openai SDK's types (3.57: ``ResponseCustomToolCallInputDeltaEvent``,
``ResponseCustomToolCall``, ``ResponseQueuedEvent``,
``ResponseCompactionCompactingEvent``, ``ResponseCompactionItem``) and the
recorded streams in the shared reference set (the compaction item after the
message); each sidecar says so.
"""

from __future__ import annotations

from pathlib import Path

from .openai_ids import call_id, obfuscation, opaque_blob
from .openai_pacing import text_tokens
from .openai_responses_common import BASE, HELPER, WIRE, ok, request
from .openai_responses_stream import ResponsesStream
from .openai_sidecar import sdk_expectation, write

SQL_TOOL = {"type": "custom", "name": "run_sql",
            "description": "Run one read-only SQLite query on the shop's orders database.",
            "format": {"type": "text"}}


def custom_tool_call(root: Path) -> Path:
    """A custom tool's input streams as free text (SQL), whole at its ``done``."""
    sql = ("SELECT strftime('%Y-%m', placed_at) AS month, COUNT(*) AS orders,\n"
           "       ROUND(SUM(total_eur), 2) AS revenue\nFROM orders\n"
           "WHERE placed_at >= '2026-01-01' AND status != 'cancelled'\n"
           "GROUP BY month\nORDER BY month;")
    req = request("gpt-5", "How many orders and how much revenue did we have each month "
                  "this year?", tools=[SQL_TOOL])
    s = ResponsesStream(121, model="gpt-5-2025-08-07", created_at=1768120533, request=req,
                        style="sorted")
    s.start(first_byte_ms=s.pace.first_token(200, 350))
    item = {"id": s.ids.item("ctc", 3), "type": "custom_tool_call", "status": "in_progress",
            "call_id": call_id(s.rng), "input": "", "name": "run_sql"}
    index = s._open(item, after_ms=s.pace.first_token(400, 900))
    where = {"item_id": item["id"], "output_index": index}
    for i, token in enumerate(text_tokens(sql, s.rng)):
        s.output_tokens += 1
        s.emit({"type": "response.custom_tool_call_input.delta", **where, "delta": token,
                "obfuscation": obfuscation(s.rng, token)},
               after_ms=s.pace.first_token(60, 200) if i == 0 else s.pace.token())
    s.emit({"type": "response.custom_tool_call_input.done", **where, "input": sql},
           after_ms=s.pace.instant())
    done = {**item, "status": "completed", "input": sql}
    s._close(index, done)
    s.completed(s.usage(88, reasoning_tokens=192), seconds=6)
    return write(root, WIRE, "custom-tool-call", s.builder, request=req, response=ok(s),
                 demonstrates="a custom tool call: its input is free text (SQL), streamed by "
                              "response.custom_tool_call_input.delta and whole in .done; no "
                              "JSON, so no partial parse and no settled paths",
                 based_on="the openai SDK's ResponseCustomToolCallInputDeltaEvent / DoneEvent "
                          "and ResponseCustomToolCall (call_id, name, input as a string), laid "
                          "out like the function_call items of " + BASE + ". No recording "
                          "was available; the query is illustrative",
                 sdk=sdk_expectation(HELPER, "the helper's final Response has the input as one "
                                     "string; a custom call is ready only when its input is "
                                     "done",
                                     final={"status": "completed",
                                            "output.0.type": "custom_tool_call",
                                            "output.0.name": "run_sql",
                                            "output.0.input": sql}))


def queued_compaction(root: Path) -> Path:
    """A background response: ``response.queued`` before ``in_progress``, the answer, then a
    compaction item announced by ``response.compaction.compacting``."""
    answer = ("Your trip so far: Lisbon 3 nights (booked), Porto 2 nights (booked), the "
              "Douro valley day trip on Saturday. Still open: the train from Porto back to "
              "Lisbon on Monday morning and a restaurant for Friday night.")
    req = request("gpt-5", "Recap what we have planned so far for the Portugal trip.",
                  background=True, context_management=[{"type": "compaction",
                                                        "compact_threshold": 200000}])
    s = ResponsesStream(122, model="gpt-5-2025-08-07", created_at=1768204918, request=req)
    queued = s.response_object("queued")
    queued["background"] = True
    s.emit({"type": "response.created", "response": queued},
           after_ms=s.pace.first_token(200, 300))
    s.emit({"type": "response.queued", "response": queued}, after_ms=s.pace.instant())
    running = s.response_object("in_progress")
    running["background"] = True
    s.emit({"type": "response.in_progress", "response": running},
           after_ms=s.pace.thinking(1500, 4000))
    s.message(answer, after_ms=s.pace.first_token(300, 600))
    item = {"id": s.ids.item("cmp", 4), "type": "compaction", "encrypted_content": ""}
    index = s._open(item, after_ms=s.pace.settle())
    s.emit({"type": "response.compaction.compacting", "item_id": item["id"],
            "output_index": index}, after_ms=s.pace.instant())
    s._close(index, {**item, "encrypted_content": opaque_blob(s.rng, 900)})
    final = s.response_object("completed", usage=s.usage(201_322, cached_tokens=198_144,
                                                          reasoning_tokens=64),
                              completed_at=s.created_at + 19)
    final["background"] = True
    s.emit({"type": "response.completed", "response": final}, after_ms=s.pace.settle())
    return write(root, WIRE, "queued-compaction", s.builder, request=req, response=ok(s),
                 demonstrates="a background response: status queued in response.created, "
                              "response.queued, then in_progress; after the answer, a "
                              "compaction item announced by response.compaction.compacting "
                              "(which carries no content) and closed with its encrypted "
                              "summary",
                 based_on="the openai SDK's ResponseQueuedEvent, "
                          "ResponseCompactionCompactingEvent ('contains no summary content') "
                          "and ResponseCompactionItem; the compaction item after the message "
                          "as in the recorded compaction-item-long-text stream of " + BASE
                          + ". No recording shows the queued or compacting events",
                 sdk=sdk_expectation(HELPER, "the helper passes response.queued and "
                                     "response.compaction.compacting through as events; the "
                                     "final Response lists the message and the compaction item",
                                     final={"status": "completed", "background": True,
                                            "output.0.content.0.text": answer,
                                            "output.1.type": "compaction"}))


def _openrouter_response(rid: str, created: int, status: str, output: list, usage=None):
    """A Response object as OpenRouter's Responses endpoint sends it: ``output_text`` (left
    empty, even at the end), nulls where api.openai.com has defaults, its own usage costs."""
    out = {"object": "response", "id": rid, "created_at": created, "status": status,
           "error": None, "output_text": "", "output": output, "model": "openai/gpt-oss-120b",
           "incomplete_details": None, "max_tool_calls": None, "tools": [],
           "tool_choice": "auto", "parallel_tool_calls": True, "max_output_tokens": None,
           "temperature": None, "top_p": None, "metadata": {}, "background": False,
           "previous_response_id": None, "service_tier": "auto", "truncation": None,
           "store": False, "instructions": None, "reasoning": None, "safety_identifier": None,
           "prompt_cache_key": None, "user": None}
    if usage is not None:
        out = {**out, "usage": usage}
    return out


def openrouter_reasoning_text(root: Path) -> Path:
    """OpenRouter's Responses style: comment lines, data-only events, reasoning as
    ``reasoning_text`` parts, ``output_text`` on the response, ``[DONE]`` at the end."""
    reasoning = ("The user wants the boiling point of water at the top of Mont Blanc. "
                 "Pressure there is about 55 kPa; water boils near 83 °C at that pressure. "
                 "Give the number and one line on why.")
    answer = ("About 83 °C. At 4,806 m the air pressure is roughly half of sea level's, so "
              "water needs less heat to boil.")
    req = request("openai/gpt-oss-120b", "At what temperature does water boil on top of "
                  "Mont Blanc?", reasoning={"enabled": True})
    s = ResponsesStream(123, model="openai/gpt-oss-120b", created_at=1768291140, request=req)
    b, pace, rng = s.builder, s.pace, s.rng
    tmp = "abcdefghijklmnopqrstuvwxyz0123456789"
    rid = "gen-1768291140-" + "".join(rng.choice(tmp + tmp.upper()[:26]) for _ in range(20))
    seq = iter(range(10_000))

    def send(payload: dict, after_ms: float) -> None:
        b.event(None, {**payload, "sequence_number": next(seq)}, after_ms=after_ms)

    b.raw(": OPENROUTER PROCESSING\n\n", after_ms=pace.first_token(150, 300))
    b.raw(": OPENROUTER PROCESSING\n\n", after_ms=pace.thinking(900, 1400))
    for kind in ("response.created", "response.in_progress"):
        send({"type": kind, "response": _openrouter_response(rid, s.created_at, "in_progress",
                                                             [])}, pace.instant())
    rs = "rs_tmp_" + "".join(rng.choice(tmp) for _ in range(11))
    msg = "msg_tmp_" + "".join(rng.choice(tmp) for _ in range(11))
    send({"type": "response.output_item.added", "output_index": 0,
          "item": {"type": "reasoning", "id": rs, "summary": []}}, pace.first_token(200, 400))
    where = {"item_id": rs, "output_index": 0, "content_index": 0}
    send({"type": "response.content_part.added", **where,
          "part": {"type": "reasoning_text", "text": ""}}, pace.instant())
    for token in text_tokens(reasoning, rng):
        send({"type": "response.reasoning_text.delta", "output_index": 0, "item_id": rs,
              "content_index": 0, "delta": token}, pace.token())
    send({"type": "response.output_item.added", "output_index": 1,
          "item": {"type": "message", "status": "in_progress", "content": [], "id": msg,
                   "role": "assistant"}}, pace.token())
    mwhere = {"item_id": msg, "output_index": 1, "content_index": 0}
    send({"type": "response.content_part.added", **mwhere,
          "part": {"type": "output_text", "annotations": [], "text": ""}}, pace.instant())
    for token in text_tokens(answer, rng):
        send({"type": "response.output_text.delta", "logprobs": [], "output_index": 1,
              "item_id": msg, "content_index": 0, "delta": token}, pace.token())
    send({"type": "response.output_text.done", **mwhere, "text": answer, "logprobs": []},
         pace.instant())
    text_part = {"type": "output_text", "text": answer, "annotations": []}
    send({"type": "response.content_part.done", **mwhere,
          "part": {"type": "output_text", "annotations": [], "text": answer}}, pace.instant())
    message = {"type": "message", "status": "completed", "content": [text_part], "id": msg,
               "role": "assistant"}
    send({"type": "response.output_item.done", "output_index": 1, "item": message},
         pace.instant())
    # As recorded: the reasoning item closes after the message.
    send({"type": "response.reasoning_text.done", "output_index": 0, "item_id": rs,
          "content_index": 0, "text": reasoning}, pace.instant())
    send({"type": "response.content_part.done", **where,
          "part": {"type": "reasoning_text", "text": reasoning}}, pace.instant())
    thought = {"type": "reasoning", "id": rs, "summary": [],
               "content": [{"type": "reasoning_text", "text": reasoning}]}
    send({"type": "response.output_item.done", "output_index": 0, "item": thought},
         pace.instant())
    usage = {"input_tokens": 81, "input_tokens_details": {"cached_tokens": 0},
             "output_tokens": 74, "output_tokens_details": {"reasoning_tokens": 45},
             "total_tokens": 155, "cost": 0.0000247, "is_byok": False,
             "cost_details": {"upstream_inference_cost": None,
                              "upstream_inference_input_cost": 0.0000081,
                              "upstream_inference_output_cost": 0.0000166}}
    send({"type": "response.completed",
          "response": _openrouter_response(rid, s.created_at, "completed", [thought, message],
                                           usage)}, pace.settle())
    b.raw("data: [DONE]\n\n", after_ms=pace.instant())
    return write(root, WIRE, "openrouter-reasoning-text", b, request=req,
                 response={"status": 200, "headers": {
                     "content-type": "text/event-stream", "cache-control": "no-cache"}},
                 demonstrates="OpenRouter's Responses style: SSE comment lines first, data-only "
                              "events, reasoning as reasoning_text deltas, a reasoning item "
                              "that closes after the message, output_text (empty) on every "
                              "response object, then Chat's data: [DONE]",
                 based_on="the recorded reasoning-text-openrouter stream of " + BASE + ": the "
                          "same event order, payload layout and response fields; differs in "
                          "the question, the model and the ids, which stay the same in the "
                          "terminal object",
                 sdk=sdk_expectation(HELPER, "the helper reads the data-only events and its "
                                     "final Response is the terminal object's; output_text "
                                     "there is the SDK's own join of the message text, not "
                                     "the server's empty field",
                                     final={"status": "completed",
                                            "output.0.content.0.text": reasoning,
                                            "output.1.content.0.text": answer}))


def build(root: Path) -> list[Path]:
    """Write these Responses captures under `root/openai-responses/`; return the paths."""
    return [custom_tool_call(root), queued_compaction(root), openrouter_reasoning_text(root)]
