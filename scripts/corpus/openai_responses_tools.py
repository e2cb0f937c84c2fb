"""Responses captures of hosted and remote tools no public recording shows whole: MCP servers
that fail, an MCP call that waits for the client's approval, spoken output, a hosted shell,
file search, and a tool search the server runs.

Built from the openai SDK's types (3.57: ``ResponseMcpCallFailedEvent``,
``ResponseMcpListToolsFailedEvent``, ``McpApprovalRequest``, ``ResponseAudio*Event``,
``ResponseFunctionShellToolCall`` and its output and events, ``ResponseFileSearchToolCall``,
``ResponseToolSearchCall`` and ``ResponseToolSearchOutputItem``) and the recorded streams of
the same tools in the shared reference set, whose event order they follow; each sidecar
says what no recording shows.
"""

from __future__ import annotations

import base64
import copy
from pathlib import Path
from typing import Any

from .openai_ids import call_id, hex_digits, obfuscation, opaque_blob
from .openai_pacing import json_tokens, text_tokens
from .openai_responses_common import BASE, HELPER, WIRE, ok, request
from .openai_responses_stream import ResponsesStream
from .openai_sidecar import sdk_expectation, write

NO_RECORDING = "No recording shows this; the capture is constructed"


def _status(s: ResponsesStream, kind: str, step: str, item_id: str, index: int,
            after_ms: float) -> None:
    s.emit({"type": f"response.{kind}.{step}", "output_index": index, "item_id": item_id},
           after_ms=after_ms)


def _list_tools(s: ResponsesStream, label: str, tools: list[dict] | None, *,
                after_ms: float) -> dict[str, Any]:
    """An ``mcp_list_tools`` item: in progress, then completed with `tools` (or failed with
    an error when `tools` is None)."""
    item = {"id": s.ids.item("mcpl", 1), "type": "mcp_list_tools", "server_label": label,
            "tools": []}
    index = s._open(item, after_ms=after_ms)
    _status(s, "mcp_list_tools", "in_progress", item["id"], index, s.pace.instant())
    if tools is None:
        _status(s, "mcp_list_tools", "failed", item["id"], index, s.pace.thinking(2500, 5000))
        done = {**item, "error": f"Error retrieving tool list from MCP server: '{label}'. "
                                 "Http status code: 503 (Service Unavailable)"}
    else:
        _status(s, "mcp_list_tools", "completed", item["id"], index, s.pace.thinking(300, 900))
        done = {**item, "tools": tools}
    s._close(index, done)
    return done


def _mcp_tool(name: str, description: str, properties: dict, read_only: bool) -> dict:
    return {"annotations": {"read_only": read_only}, "description": description,
            "input_schema": {"type": "object", "properties": properties,
                             "required": list(properties), "additionalProperties": False,
                             "$schema": "http://json-schema.org/draft-07/schema#"},
            "name": name}


TRAINS = _mcp_tool("search_trains", "Search train connections between two stations on a date.",
                   {"from": {"type": "string"}, "to": {"type": "string"},
                    "date": {"type": "string", "format": "date"}}, True)
BOOK = _mcp_tool("book_seat", "Book a seat on a train connection; charges the saved card.",
                 {"connection_id": {"type": "string"}, "class": {"type": "string",
                                                                 "enum": ["1", "2"]}}, False)


def _mcp_server(label: str, url: str, approval: str) -> dict[str, Any]:
    return {"type": "mcp", "server_label": label, "server_url": url,
            "require_approval": approval}


def mcp_failures(root: Path) -> Path:
    """One MCP server's tool listing fails; on the other, the call itself fails; the model
    then says so in its answer."""
    answer = ("I couldn't look up the trains: the rail server returned an error when I "
              "searched Lyon → Marseille for Friday, and the hotel server is unreachable "
              "right now. You can try again in a few minutes, or check sncf-connect.com "
              "directly.")
    tools = [_mcp_server("rail", "https://mcp.rail.example/sse", "never"),
             _mcp_server("hotels", "https://mcp.hotels.example/mcp", "never")]
    req = request("gpt-5", "Find me a train from Lyon to Marseille on Friday morning and a "
                  "hotel near Saint-Charles.", tools=tools)
    s = ResponsesStream(131, model="gpt-5-2025-08-07", created_at=1768402211, request=req,
                        style="sorted")
    s.start(first_byte_ms=s.pace.first_token(200, 350))
    _list_tools(s, "rail", [TRAINS], after_ms=s.pace.instant())
    _list_tools(s, "hotels", None, after_ms=s.pace.instant())
    s.reasoning([], after_ms=s.pace.thinking(900, 2200))
    args = '{"from":"Lyon Part-Dieu","to":"Marseille Saint-Charles","date":"2026-01-16"}'
    item = {"id": s.ids.item("mcp", 3), "type": "mcp_call", "status": "in_progress",
            "approval_request_id": None, "arguments": "", "error": None,
            "name": "search_trains", "output": None, "server_label": "rail"}
    index = s._open(item, after_ms=s.pace.first_token(300, 700))
    _status(s, "mcp_call", "in_progress", item["id"], index, s.pace.instant())
    where = {"item_id": item["id"], "output_index": index}
    for fragment in json_tokens(args, s.rng):
        s.output_tokens += 1
        s.emit({"type": "response.mcp_call_arguments.delta", **where, "delta": fragment,
                "obfuscation": obfuscation(s.rng, fragment)}, after_ms=s.pace.token())
    s.emit({"type": "response.mcp_call_arguments.done", **where, "arguments": args},
           after_ms=s.pace.instant())
    # The server is still working when it fails: in_progress again, then failed.
    _status(s, "mcp_call", "in_progress", item["id"], index, s.pace.thinking(800, 1500))
    _status(s, "mcp_call", "failed", item["id"], index, s.pace.thinking(4000, 8000))
    error = {"type": "mcp_tool_execution_error", "content": [
        {"type": "text", "text": "upstream timetable service timed out after 5000 ms"}]}
    s._close(index, {**item, "status": "failed", "arguments": args, "error": error})
    s.message(answer, after_ms=s.pace.first_token(500, 1200))
    s.completed(s.usage(1_204, reasoning_tokens=320), seconds=21)
    return write(root, WIRE, "mcp-failures", s.builder, request=req, response=ok(s),
                 demonstrates="MCP that fails twice: one server's tool listing ends in "
                              "response.mcp_list_tools.failed (the item keeps the error), and "
                              "on the other a call ends in response.mcp_call.failed after its "
                              "arguments streamed; the response still completes, the model "
                              "saying so",
                 based_on="the openai SDK's ResponseMcpListToolsFailedEvent, "
                          "ResponseMcpCallFailedEvent, McpListTools.error and McpCall.error, "
                          "in the event order of the recorded mcp-list-tools-and-call stream "
                          "of " + BASE + ". " + NO_RECORDING + " (the error texts are "
                          "illustrative)",
                 sdk=sdk_expectation(HELPER, "the helper passes both failed events through; "
                                     "the final Response has the failed listing and the failed "
                                     "call with their errors, and status completed",
                                     final={"status": "completed",
                                            "output.1.error": _list_error("hotels"),
                                            "output.3.status": "failed",
                                            "output.3.arguments": args,
                                            "output.4.content.0.text": answer}))


def _list_error(label: str) -> str:
    return (f"Error retrieving tool list from MCP server: '{label}'. Http status code: 503 "
            "(Service Unavailable)")


def mcp_approval_request(root: Path) -> Path:
    """An MCP tool that needs approval: the response ends with an ``mcp_approval_request``
    item; the call runs only after the client answers with an ``mcp_approval_response``."""
    tools = [_mcp_server("rail", "https://mcp.rail.example/sse",
                         {"never": {"tool_names": ["search_trains"]}})]
    req = request("gpt-5", "Book me a second-class seat on the 07:04 TGV from Lyon to "
                  "Marseille on Friday (connection TGV6171-20260116).", tools=tools)
    s = ResponsesStream(132, model="gpt-5-2025-08-07", created_at=1768403650, request=req,
                        style="sorted")
    s.start(first_byte_ms=s.pace.first_token(200, 350))
    _list_tools(s, "rail", [TRAINS, BOOK], after_ms=s.pace.instant())
    s.reasoning([], after_ms=s.pace.thinking(700, 1800))
    args = '{"connection_id":"TGV6171-20260116","class":"2"}'
    item = {"id": "mcpr_" + hex_digits(s.rng, 50), "type": "mcp_approval_request",
            "arguments": args, "name": "book_seat", "server_label": "rail"}
    s.output_tokens += len(json_tokens(args, s.rng))
    index = s._open(item, after_ms=s.pace.first_token(600, 1400))
    s._close(index, copy.deepcopy(item))
    s.completed(s.usage(812, reasoning_tokens=192), seconds=7)
    return write(root, WIRE, "mcp-approval-request", s.builder, request=req, response=ok(s),
                 demonstrates="an MCP tool that needs approval: the response completes with an "
                              "mcp_approval_request item (name, arguments whole, no deltas) and "
                              "no answer; the call waits for the client's "
                              "mcp_approval_response, like a tool call the client must answer",
                 based_on="the openai SDK's McpApprovalRequest (id, arguments, name, "
                          "server_label) and the require_approval setting of the MCP tool; the "
                          "recorded mcp-call-after-approval stream of " + BASE + " shows the "
                          "call after the approval, not the request. " + NO_RECORDING,
                 sdk=sdk_expectation(HELPER, "the helper returns a completed Response whose "
                                     "last item is the approval request; no text",
                                     text="",
                                     final={"status": "completed",
                                            "output.2.type": "mcp_approval_request",
                                            "output.2.name": "book_seat",
                                            "output.2.arguments": args}))


def audio_output(root: Path) -> Path:
    """Spoken output on the Responses wire: ``response.audio.*`` and
    ``response.audio.transcript.*`` events, which address no output item."""
    spoken = "Le train pour Marseille part du quai G à sept heures quatre."
    req = request("gpt-4o-audio-preview", "Read me the departure in French.",
                  modalities=["text", "audio"], audio={"voice": "alloy", "format": "pcm16"})
    s = ResponsesStream(133, model="gpt-4o-audio-preview-2025-06-03", created_at=1768404002,
                        request=req)
    s.start(first_byte_ms=s.pace.first_token(300, 600))
    words = text_tokens(spoken, s.rng)
    sound = [base64.b64encode(bytes(s.rng.randrange(256) for _ in range(192))).decode()
             for _ in range(len(words) + 6)]
    sound[-1] = base64.b64encode(bytes(s.rng.randrange(256) for _ in range(97))).decode()
    said = 0
    for i, fragment in enumerate(sound):
        while said < len(words) and said <= i + 1:
            s.emit({"type": "response.audio.transcript.delta", "delta": words[said]},
                   after_ms=s.pace.first_token(400, 900) if said == 0 else s.pace.token())
            said += 1
        s.emit({"type": "response.audio.delta", "delta": fragment}, after_ms=s.pace.token())
        s.output_tokens += 1
    s.emit({"type": "response.audio.transcript.done"}, after_ms=s.pace.instant())
    s.emit({"type": "response.audio.done"}, after_ms=s.pace.instant())
    s.completed(s.usage(22), seconds=4)
    return write(root, WIRE, "audio-output", s.builder, request=req, response=ok(s),
                 demonstrates="spoken output on Responses: response.audio.delta (base64) and "
                              "response.audio.transcript.delta interleave, each closed by a "
                              ".done without content; they address no output item, and the "
                              "final Response has no place for them",
                 based_on="the openai SDK's ResponseAudioDeltaEvent, ResponseAudioDoneEvent, "
                          "ResponseAudioTranscriptDeltaEvent and ResponseAudioTranscriptDoneEvent "
                          "(delta and sequence_number only), in the envelope of " + BASE + ". "
                          + NO_RECORDING + ": audio output needs an audio model; the sound "
                          "is random bytes",
                 sdk=sdk_expectation(HELPER, "the helper passes the audio events through; "
                                     "its final Response has an empty output: the sound and "
                                     "the transcript are only in the events",
                                     text="",
                                     final={"status": "completed", "output": []}))


def hosted_shell(root: Path) -> Path:
    """A hosted shell: a call whose two commands stream, then their output (stdout, then
    stderr and a non-zero exit), then the answer."""
    commands = ["head -3 /mnt/data/orders.csv", "python3 -c \"import csv;rows=list(csv."
                "DictReader(open('/mnt/data/orders.csv')));print(len(rows), sum(float(r["
                "'total_eur']) for r in rows))\""]
    outputs = [{"stdout": "order_id,placed_at,total_eur\nA-1001,2026-01-02,54.90\n"
                          "A-1002,2026-01-02,12.50\n", "stderr": "", "code": 0},
               {"stdout": "", "stderr": "Traceback (most recent call last):\n  File "
                "\"<string>\", line 1, in <module>\nValueError: could not convert string to "
                "float: 'n/a'\n", "code": 1}]
    answer = ("The file has a header and order rows, but at least one total is \"n/a\", so "
              "summing failed. Shall I skip those rows or count them as zero?")
    req = request("gpt-5.2", "How many orders are in orders.csv and what's the total?",
                  tools=[{"type": "shell", "environment": {"type": "container_auto"}}])
    s = ResponsesStream(134, model="gpt-5.2-2025-12-11", created_at=1768405120, request=req,
                        style="sorted")
    s.start(first_byte_ms=s.pace.first_token(200, 400))
    cid = call_id(s.rng)
    environment = {"type": "container_reference", "container_id": "cntr_" + hex_digits(s.rng, 48)}
    call = {"id": s.ids.item("sh", 2), "type": "shell_call", "status": "in_progress",
            "action": {"commands": [], "max_output_length": None, "timeout_ms": None},
            "call_id": cid, "environment": environment}
    index = s._open(call, after_ms=s.pace.first_token(500, 1200))
    for n, command in enumerate(commands):
        s.emit({"type": "response.shell_call_command.added", "command": "",
                "command_index": n, "output_index": index}, after_ms=s.pace.token())
        for token in text_tokens(command, s.rng):
            s.output_tokens += 1
            s.emit({"type": "response.shell_call_command.delta", "command_index": n,
                    "delta": token, "obfuscation": obfuscation(s.rng, token),
                    "output_index": index}, after_ms=s.pace.token())
        s.emit({"type": "response.shell_call_command.done", "command": command,
                "command_index": n, "output_index": index}, after_ms=s.pace.instant())
    s._close(index, {**call, "status": "completed",
                     "action": {**call["action"], "commands": list(commands)}})
    out_item = {"id": s.ids.item("sho", 4), "type": "shell_call_output",
                "status": "in_progress", "call_id": cid, "max_output_length": None,
                "output": []}
    out_index = s._open(out_item, after_ms=s.pace.thinking(900, 2400))
    finished = []
    for n, result in enumerate(outputs):
        where = {"command_index": n, "item_id": out_item["id"], "output_index": out_index}
        for stream in ("stdout", "stderr"):
            text = result[stream]
            if text:
                cut = len(text) // 2
                for piece in (text[:cut], text[cut:]):
                    s.emit({"type": "response.shell_call_output_content.delta", **where,
                            "delta": {stream: piece}}, after_ms=s.pace.token())
        finished.append({"outcome": {"type": "exit", "exit_code": result["code"]},
                         "stderr": result["stderr"], "stdout": result["stdout"]})
        s.emit({"type": "response.shell_call_output_content.done", **where,
                "output": copy.deepcopy(finished[-1:])}, after_ms=s.pace.instant())
    s._close(out_index, {**out_item, "status": "completed", "output": finished})
    s.message(answer, after_ms=s.pace.first_token(600, 1300))
    s.completed(s.usage(2_031, reasoning_tokens=0), seconds=14)
    return write(root, WIRE, "hosted-shell", s.builder, request=req, response=ok(s),
                 demonstrates="a hosted shell: shell_call_command.added / .delta / .done stream "
                              "two commands into one shell_call, then a shell_call_output item "
                              "streams each command's stdout and stderr "
                              "(shell_call_output_content.delta, .done), the second failing "
                              "with exit code 1; then the answer",
                 based_on="the recorded shell-call-command-and-output stream of " + BASE +
                          " (event order, fields, the container reference) and the openai "
                          "SDK's ResponseFunctionShellToolCall, ResponseFunctionShellToolCallOutput "
                          "and shell events; the project's own capture, so that coverage does "
                          "not rest on the reference set",
                 sdk=sdk_expectation(HELPER, "the helper passes the shell events through; "
                                     "the final Response has both commands and both outputs",
                                     text=answer,
                                     final={"status": "completed",
                                            "output.0.action.commands": commands,
                                            "output.1.output.1.outcome.exit_code": 1,
                                            "output.2.content.0.text": answer}))


def file_search(root: Path) -> Path:
    """File search: the call searches, its results come only in the finished item (with
    ``include``), and the answer cites the file."""
    store = "vs_" + "68cabf" + "0d3c1e9b8f8191a5b4e2c7d0f9a1"
    answer = ("Refunds are possible within 30 days of delivery for unused items; sale items "
              "can be exchanged but not refunded.")
    req = request("gpt-4.1", "What is our refund policy for sale items?",
                  tools=[{"type": "file_search", "vector_store_ids": [store]}],
                  include=["file_search_call.results"])
    s = ResponsesStream(135, model="gpt-4.1-2025-04-14", created_at=1768406033, request=req)
    s.start(first_byte_ms=s.pace.first_token(200, 350))
    file_id = "file-" + opaque_blob(s.rng, 22).replace("-", "x").replace("_", "y")[:22]
    item = {"id": s.ids.item("fs", 1), "type": "file_search_call", "status": "in_progress",
            "queries": [], "results": None}
    index = s._open(item, after_ms=s.pace.first_token(300, 700))
    for step, gap in (("in_progress", s.pace.instant()), ("searching", s.pace.token()),
                      ("completed", s.pace.thinking(700, 1600))):
        _status(s, "file_search_call", step, item["id"], index, gap)
    results = [{"attributes": {}, "file_id": file_id, "filename": "returns-policy-2026.pdf",
                "score": 0.9312, "text": "4.2 Sale items. Items bought at a reduced price may "
                "be exchanged within 30 days but are not refunded."},
               {"attributes": {}, "file_id": file_id, "filename": "returns-policy-2026.pdf",
                "score": 0.8127, "text": "4.1 Refunds. Unused items may be returned within 30 "
                "days of delivery for a full refund."}]
    s._close(index, {**item, "status": "completed",
                     "queries": ["refund policy sale items", "sale items refund exchange"],
                     "results": results})
    note = {"type": "file_citation", "file_id": file_id, "filename": "returns-policy-2026.pdf",
            "index": len(answer)}
    s.message(answer, after_ms=s.pace.first_token(400, 900), annotations=[
        {**note, "end_index": len(answer)}])
    s.completed(s.usage(3_140), seconds=5)
    return write(root, WIRE, "file-search", s.builder, request=req, response=ok(s),
                 demonstrates="file search: the call goes in_progress, searching, completed "
                              "with no content; its queries and results (requested with "
                              "include) come only in the finished item; the answer cites the "
                              "file",
                 based_on="the recorded file-search-call-events stream of " + BASE + " (which "
                          "has no results: include was not set) and the openai SDK's "
                          "ResponseFileSearchToolCall results and file_citation annotation; "
                          "the project's own capture, so that coverage does not rest on the "
                          "reference set",
                 sdk=sdk_expectation(HELPER, "the helper passes the progress events through; "
                                     "the final Response has the queries and the results",
                                     text=answer,
                                     final={"status": "completed",
                                            "output.0.results.0.score": 0.9312,
                                            "output.1.content.0.text": answer}))


def tool_search(root: Path) -> Path:
    """A tool search the server runs: a ``tool_search_call`` then a ``tool_search_output``
    listing what it loaded, then a call to a tool it found."""
    found = {"type": "function", "name": "get_exchange_rate",
             "description": "Today's exchange rate between two currencies.",
             "parameters": {"type": "object", "properties": {
                 "base": {"type": "string"}, "quote": {"type": "string"}},
                 "required": ["base", "quote"], "additionalProperties": False},
             "strict": True, "defer_loading": True}
    req = request("gpt-5.4", "What's the euro to yen rate today?",
                  tools=[{"type": "tool_search"}, {**found}])
    s = ResponsesStream(136, model="gpt-5.4-2026-03-05", created_at=1768407219, request=req,
                        style="sorted")
    s.start(first_byte_ms=s.pace.first_token(200, 350))
    search = {"id": s.ids.item("tsc", 1), "type": "tool_search_call", "status": "in_progress",
              "arguments": {}, "call_id": None, "execution": "server"}
    index = s._open(search, after_ms=s.pace.first_token(300, 800))
    s._close(index, {**search, "status": "completed",
                     "arguments": {"goal": "a tool that gives currency exchange rates"}})
    output = {"id": s.ids.item("tso", 2), "type": "tool_search_output", "status": "in_progress",
              "call_id": None, "execution": "server", "tools": []}
    out_index = s._open(output, after_ms=s.pace.thinking(400, 900))
    s._close(out_index, {**output, "status": "completed", "tools": [
        {k: v for k, v in found.items() if k != "defer_loading"}]})
    call = s.function_call("get_exchange_rate", {"base": "EUR", "quote": "JPY"},
                           after_ms=s.pace.first_token(300, 700))
    s.completed(s.usage(640, reasoning_tokens=64), seconds=4)
    return write(root, WIRE, "tool-search", s.builder, request=req, response=ok(s),
                 demonstrates="a tool search the server runs: a tool_search_call (execution "
                              "server, arguments as an object, whole at its done), a "
                              "tool_search_output listing the tool it loaded, then a "
                              "function call to that tool",
                 based_on="the recorded tool-search-client stream of " + BASE + " (a client "
                          "search: its output is the client's) and the openai SDK's "
                          "ResponseToolSearchCall and ResponseToolSearchOutputItem (execution "
                          "server). " + NO_RECORDING + " for the server's search",
                 sdk=sdk_expectation(HELPER, "the helper passes the items through; the final "
                                     "Response lists the search, its output and the call",
                                     text="",
                                     final={"status": "completed",
                                            "output.1.type": "tool_search_output",
                                            "output.1.tools.0.name": "get_exchange_rate",
                                            "output.2.arguments": call["arguments"]}))


def build(root: Path) -> list[Path]:
    """Write the tool captures; return their paths."""
    return [mcp_failures(root), mcp_approval_request(root), audio_output(root),
            hosted_shell(root), file_search(root), tool_search(root)]
