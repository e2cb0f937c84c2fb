"""The turn's honest mapping of wire features a naive reducer gets wrong: spoken output, the
moderation chunk, the legacy functions API (Chat); a call the client must approve or apply
(Responses); per-hop usage (Anthropic's fallback)."""

from __future__ import annotations

from lesson_lib.capture.captures import load
from lesson_lib.turn.events import Noted
from lesson_lib.turn.reduce import reduce_all
from lesson_lib.turn.run import turn_events


def state(name: str):
    return reduce_all(turn_events(load(name), "wire"))


def test_chat_audio_is_a_block_of_its_own_with_the_transcript_and_the_sound():
    s = state("openai-chat/audio-output")
    (block,) = s.blocks
    assert (block.kind, block.wire_kind, block.channel) == ("other", "audio", "other")
    assert block.text.startswith("Bonjour!") and block.complete
    assert block.end_data["id"].startswith("audio_") and block.end_data["expires_at"]
    assert len(block.end_data["data"]) > 10_000          # the sound is kept, not dropped
    assert s.outcome == "completed" and s.steps[0].finish.reason == "stop"
    # `turn --json` says what the block is in the wire's words.
    assert [b.get("wire_kind") for b in s.as_dict()["blocks"]] == ["audio"]


def test_chat_moderation_flagging_the_output_is_noted_on_the_turn():
    events = turn_events(load("openai-chat/moderation-chunk"), "wire")
    notes = [e for e in events if isinstance(e, Noted) and e.code == "moderation"]
    assert len(notes) == 1 and "output is flagged" in notes[0].message
    assert reduce_all(events).outcome == "completed"


def test_chat_legacy_function_call_is_a_client_tool_call():
    s = state("openai-chat/legacy-function-call")
    (block,) = s.blocks
    assert (block.kind, block.server_side, block.name) == ("tool_call", False,
                                                           "convert_currency")
    assert block.input == {"amount": 249.9, "from": "EUR", "to": "JPY"}
    assert block.call_id is None        # the functions API has no call id
    finish = s.steps[0].finish
    assert (finish.reason, finish.raw) == ("tool_calls", "function_call")


# -- Responses: calls the client answers, server tools that fail --------------------------


def test_an_mcp_approval_request_is_a_call_the_client_must_answer():
    s = state("openai-responses/mcp-approval-request")
    call = s.blocks[-1]
    assert (call.kind, call.wire_kind, call.server_side) == ("tool_call",
                                                             "mcp_approval_request", False)
    assert call.name == "book_seat" and call.call_id.startswith("mcpr_")
    assert call.input == {"connection_id": "TGV6171-20260116", "class": "2"}
    assert call.call_state == "complete"
    # Not an answer: the step asks for a tool, as a function call does.
    assert s.steps[0].finish.reason == "tool_calls" and not any(
        b.kind == "text" for b in s.blocks)


def test_apply_patch_is_a_client_call_whose_input_is_the_operation():
    from lesson_lib.accumulate import changes as ch
    from lesson_lib.turn.adapters import adapter_for

    item = {"id": "apc_1", "type": "apply_patch_call", "status": "in_progress",
            "call_id": "call_1", "operation": {"type": "create_file", "path": "a.md",
                                               "diff": ""}}
    done = {**item, "status": "completed",
            "operation": {"type": "create_file", "path": "a.md", "diff": "+hi\n"}}
    adapter = adapter_for("openai-responses")
    events = adapter.begin() + adapter.feed([
        ch.SlotOpened(0, (0,), "apply_patch_call", "[0] apply_patch_call", call_id="call_1",
                      item_id="apc_1", data=item),
        ch.SlotClosed(1, (0,), "done", data=done),
        ch.ResponseChanged(2, {"status": "completed"}), ch.TerminalReached(2, "response.completed"),
        ch.StreamEnded(None, properly=True)])
    s = reduce_all(events)
    (call,) = s.blocks
    assert (call.kind, call.server_side, call.name, call.call_id) == ("tool_call", False,
                                                                      "apply_patch", "call_1")
    assert call.input == done["operation"] and call.call_state == "complete"
    assert s.steps[0].finish.reason == "tool_calls"


def test_a_failing_mcp_server_is_noted_and_the_turn_goes_on():
    events = turn_events(load("openai-responses/mcp-failures"), "wire")
    notes = [e.message for e in events if isinstance(e, Noted) and e.code == "server_tool_failed"]
    assert len(notes) == 2
    assert "mcp_list_tools hotels" in notes[0] and "503" in notes[0]
    assert "mcp_call search_trains" in notes[1] and "timed out" in notes[1]
    s = reduce_all(events)
    assert s.outcome == "completed" and not s.errors
    assert s.blocks[-1].text.startswith("I couldn't look up the trains")


def test_hosted_tools_state_their_input_whole():
    shell = state("openai-responses/hosted-shell").blocks[0]
    assert (shell.name, shell.server_side) == ("shell", True)
    assert shell.input["commands"][0] == "head -3 /mnt/data/orders.csv"
    search = state("openai-responses/file-search").blocks[0]
    assert search.name == "file_search" and len(search.input["queries"]) == 2
    tools = state("openai-responses/tool-search").blocks
    assert [(b.kind, b.server_side) for b in tools] == [
        ("tool_call", True), ("tool_result", True), ("tool_call", False)]


def test_responses_audio_is_a_block_of_its_own_like_chat_audio():
    s = state("openai-responses/audio-output")
    (block,) = s.blocks
    assert (block.kind, block.wire_kind, block.channel) == ("other", "audio", "other")
    assert block.text.startswith("Le train pour Marseille")
    assert block.end_data["data"] and block.complete
    assert block.end_data["transcript"] == block.text     # the sound and its words, kept
    assert s.outcome == "completed"


# -- Anthropic: one call, several model calls ------------------------------------------


def test_a_fallback_step_counts_the_usage_of_each_hop_and_totals_them():
    s = state("anthropic-messages/fallback-after-refusal")
    usage = s.steps[0].usage
    assert [(h.input, h.output, h.raw["type"]) for h in usage.hops] == [
        (41, 11, "message"), (58, 81, "fallback_message")]
    # The top-level input (41) counts only the first model's; every hop was billed.
    assert (usage.input, usage.output) == (99, 92) and usage.raw["input_tokens"] == 41
    assert s.usage.input == 99


def test_a_step_of_one_model_call_has_no_hops():
    usage = state("anthropic-messages/hello").steps[0].usage
    assert usage.hops == () and usage.input == usage.raw["input_tokens"] + \
        usage.raw.get("cache_read_input_tokens", 0) + usage.raw.get("cache_creation_input_tokens", 0)


def test_the_sdk_route_keeps_the_compaction_text_as_the_wire_route_does():
    from lesson_lib.capture.captures import from_bytes

    body = (b'event: message_start\ndata: {"type":"message_start","message":{"id":"msg_1",'
            b'"type":"message","role":"assistant","model":"claude-opus-4-6","content":[],'
            b'"stop_reason":null,"stop_sequence":null,"usage":{"input_tokens":9,'
            b'"output_tokens":1}}}\n\n'
            b'event: content_block_start\ndata: {"type":"content_block_start","index":0,'
            b'"content_block":{"type":"compaction","content":null}}\n\n'
            b'event: content_block_delta\ndata: {"type":"content_block_delta","index":0,'
            b'"delta":{"type":"compaction_delta","content":"Summary: the user said hi."}}\n\n'
            b'event: content_block_stop\ndata: {"type":"content_block_stop","index":0}\n\n'
            b'event: message_delta\ndata: {"type":"message_delta","delta":{"stop_reason":'
            b'"compaction","stop_sequence":null},"usage":{"output_tokens":7}}\n\n'
            b'event: message_stop\ndata: {"type":"message_stop"}\n\n')
    cap = from_bytes(body, sidecar={"wire": "anthropic-messages",
                                    "request": {"model": "claude-opus-4-6", "max_tokens": 64,
                                                "messages": []}})
    texts = {route: [b.text for b in reduce_all(turn_events(cap, route)).blocks]
             for route in ("wire", "sdk")}
    assert texts["sdk"] == texts["wire"] == ["Summary: the user said hi."]


# -- what goes back to the model ----------------------------------------------------------


def test_the_next_request_answers_each_call_in_its_own_kind():
    from lesson_lib.turn.next_request import next_request

    approval = load("openai-responses/mcp-approval-request")
    s = reduce_all(turn_events(approval, "wire"))
    items = next_request(s, approval.request)["input"]
    request_item, answer = items[-2:]
    assert request_item["type"] == "mcp_approval_request" and request_item["name"] == "book_seat"
    assert answer == {"type": "mcp_approval_response",
                      "approval_request_id": request_item["id"], "approve": False}

    legacy = load("openai-chat/legacy-function-call")
    messages = next_request(reduce_all(turn_events(legacy, "wire")), legacy.request)["messages"]
    assistant, function = messages[-2:]
    assert "tool_calls" not in assistant
    assert assistant["function_call"] == {"name": "convert_currency",
                                          "arguments": '{"amount":249.9,"from":"EUR","to":"JPY"}'}
    assert function["role"] == "function" and function["name"] == "convert_currency"
