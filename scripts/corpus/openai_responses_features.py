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


def build(root: Path) -> list[Path]:
    """Write these Responses captures under `root/openai-responses/`; return the paths."""
    return [custom_tool_call(root), queued_compaction(root)]
