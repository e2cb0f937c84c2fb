"""The wire adapters, on hand-built accumulator changes: what each change becomes."""

from __future__ import annotations

from lesson_lib.accumulate import changes as ch
from lesson_lib.diagnostics import Diagnostic
from lesson_lib.partial_json import PartialJSON
from lesson_lib.turn.adapters import adapter_for
from lesson_lib.turn.order import check


def run(wire: str, *batches: list) -> list:
    adapter = adapter_for(wire, step=1)
    out = adapter.begin()
    for i, batch in enumerate(batches):
        out += adapter.feed(batch, t=float(i), at=i)
    return out


def kinds(events: list) -> list[str]:
    return [e.kind for e in events]


def grow(address, text: str, parser: PartialJSON) -> ch.ToolInputGrew:
    return ch.ToolInputGrew(None, address, text, tuple(parser.feed(text)))


def test_text_block_start_delta_end_and_step_finish():
    events = run("anthropic-messages",
                 [ch.ResponseChanged(0, {"id": "msg_1", "model": "m",
                                         "usage": {"input_tokens": 10, "output_tokens": 1}})],
                 [ch.SlotOpened(1, 0, "text", "text")],
                 [ch.TextAppended(2, 0, "text", "Hel")],
                 [ch.TextAppended(3, 0, "text", "lo")],
                 [ch.SlotClosed(4, 0, "stop")],
                 [ch.ResponseChanged(5, {"stop_reason": "end_turn",
                                         "usage": {"output_tokens": 7}})],
                 [ch.TerminalReached(6, "message_stop")],
                 [ch.StreamEnded(None, True)])
    assert kinds(events) == ["step_started", "usage_reported", "block_started", "block_delta",
                             "block_delta", "block_ended", "usage_reported", "step_finished"]
    assert [e.usage.input for e in events if e.kind == "usage_reported"] == [10, 10]
    assert [e.usage.output for e in events if e.kind == "usage_reported"] == [1, 7]
    assert [e.fragment for e in events if e.kind == "block_delta"] == ["Hel", "lo"]
    assert events[3].at == 2 and events[3].t == 2.0          # where it came from
    end = events[-1]
    assert (end.finish.reason, end.finish.raw, end.ended) == ("stop", "end_turn", "proper")
    # Anthropic usage is cumulative over two events: input from the start, output from the delta
    assert (end.usage.input, end.usage.output) == (10, 7)
    assert check(events, whole_turn=False) == []


def test_tool_call_ready_only_after_strict_parse_with_settled_paths():
    p = PartialJSON()
    events = run("anthropic-messages",
                 [ch.SlotOpened(0, 1, "tool_use", "tool_use", name="get_weather",
                                call_id="toolu_1", takes_input=True)],
                 [grow(1, '{"city": "Paris"', p)],
                 [grow(1, ', "n": 1', p)],
                 [grow(1, "2}", p)],
                 [ch.SlotClosed(4, 1, "stop", call_state="complete",
                                input={"city": "Paris", "n": 12})])
    deltas = [e for e in events if e.kind == "block_delta"]
    assert ("city",) in deltas[0].settled
    assert ("n",) not in deltas[1].settled          # 1 may still become 12
    assert any(c.op == "settle" and c.path == ("n",) for c in deltas[2].json_changes)
    assert kinds(events)[-2:] == ["block_ended", "tool_call_ready"]
    ready = events[-1]
    assert (ready.name, ready.call_id, ready.input) == ("get_weather", "toolu_1",
                                                        {"city": "Paris", "n": 12})


def test_a_prefix_that_parses_never_makes_a_call_ready():
    # '{"a": 1}' parses, but the wire never ended the call: the stream was cut.
    events = run("openai-chat",
                 [ch.SlotOpened(0, (0, ("tool", 0)), "function", "f", name="f",
                                call_id="c1", takes_input=True)],
                 [ch.ToolInputGrew(1, (0, ("tool", 0)), '{"a": 1}')],
                 [ch.StreamEnded(None, False, "cut")])
    assert "tool_call_ready" not in kinds(events)
    invalid = next(e for e in events if e.kind == "tool_call_invalid")
    assert (invalid.state, invalid.raw) == ("cut", '{"a": 1}')
    ended = next(e for e in events if e.kind == "block_ended")
    assert ended.synthesised and not ended.complete
    assert events[-1].ended == "cut"


def test_invalid_arguments_give_a_typed_invalid_call_with_raw_text():
    events = run("openai-responses",
                 [ch.SlotOpened(0, (0,), "function_call", "fc", name="f", call_id="c",
                                item_id="fc_1", takes_input=True)],
                 [ch.ToolInputGrew(1, (0,), '{"a": tru}')],
                 [ch.SlotClosed(2, (0,), "done", call_state="invalid", input={})])
    invalid = events[-1]
    assert invalid.kind == "tool_call_invalid"
    assert (invalid.state, invalid.raw) == ("invalid", '{"a": tru}')


def test_chat_call_is_ready_only_at_its_finish_reason():
    addr = (0, ("tool", 0))
    events = run("openai-chat",
                 [ch.SlotOpened(0, addr, "function", "f", name="f", call_id="c",
                                takes_input=True)],
                 [ch.ToolInputGrew(1, addr, "{}")],
                 [ch.SlotClosed(2, addr, "finish_reason", reason="tool_calls",
                                call_state="complete", input={}),
                  ch.ResponseChanged(2, {"finish_reason": "tool_calls"}, choice=0)],
                 [ch.TerminalReached(3, "[DONE]")],
                 [ch.StreamEnded(None, True)])
    ready = next(e for e in events if e.kind == "tool_call_ready")
    assert ready.at == 2                                   # the finish reason's event
    assert events[-1].finish.reason == "tool_calls"


def test_reused_address_after_its_end_is_a_new_block():
    # The accumulator gives a new call a new address; if an address opens again
    # after its block ended, that is a new block, never the old one grown.
    events = run("anthropic-messages",
                 [ch.SlotOpened(0, 0, "text", "t")], [ch.SlotClosed(1, 0, "stop")],
                 [ch.SlotOpened(2, 0, "text", "t")], [ch.TextAppended(3, 0, "text", "x")])
    starts = [e.block for e in events if e.kind == "block_started"]
    assert len(set(starts)) == 2
    assert events[-1].block == starts[1]


def test_block_ids_are_unique_across_steps():
    a, b = adapter_for("openai-chat", step=1), adapter_for("openai-chat", step=2)
    ids = [e.block for ad in (a, b) for e in ad.feed([ch.SlotOpened(0, (0, "content"),
                                                                     "content", "c")])]
    assert ids == ["s1.b0", "s2.b0"]


def test_in_band_error_phase_depends_on_output_before_it():
    before = run("openai-chat", [ch.InBandError(0, "boom", {"type": "server_error"},
                                                "server_error")],
                 [ch.StreamEnded(None, False, "in_band_error")])
    after = run("openai-chat", [ch.SlotOpened(0, (0, "content"), "content", "c")],
                [ch.TextAppended(1, (0, "content"), "text", "Hi")],
                [ch.InBandError(2, "boom", None, "invalid_request_error")],
                [ch.StreamEnded(None, False, "in_band_error")])
    e1 = next(e for e in before if e.kind == "error_reported")
    e2 = next(e for e in after if e.kind == "error_reported")
    assert (e1.scope, e1.phase, e1.retryable) == ("provider", "before_output", True)
    assert (e2.phase, e2.retryable) == ("after_output", False)
    assert after[-1].ended == "error" and after[-1].finish.reason == "error"
    end = next(e for e in after if e.kind == "block_ended")
    assert end.synthesised and not end.complete          # kept, marked incomplete


def test_parse_and_protocol_diagnostics_become_errors_warnings_notes():
    d_parse = Diagnostic("unparseable_json", "not JSON", raw="{x")
    d_proto = Diagnostic("event_before_start", "delta before start")
    d_warn = Diagnostic("delta_after_stop", "late", severity="warning")
    events = run("anthropic-messages", [ch.DiagnosticNoted(0, d_parse)], [ch.DiagnosticNoted(1, d_proto)],
                 [ch.DiagnosticNoted(2, d_warn)], [ch.StreamEnded(None, True)])
    errors = [e for e in events if e.kind == "error_reported"]
    assert [e.scope for e in errors] == ["parse", "protocol"]
    assert [e.code for e in events if e.kind == "noted"] == ["delta_after_stop"]
    assert events[-1].ended == "error"


def test_unknown_wire_event_is_passed_through_as_data():
    events = run("openai-responses", [ch.UnknownEvent(0, "response.new_thing", {"x": 1})])
    assert (events[-1].kind, events[-1].event_type, events[-1].payload) == (
        "wire_event_passed", "response.new_thing", {"x": 1})


def test_responses_message_is_a_container_and_summary_text_joins_its_reasoning_item():
    events = run("openai-responses",
                 [ch.SlotOpened(0, (0,), "reasoning", "r", item_id="rs_1")],
                 [ch.SlotOpened(1, (0, "summary", 0), "summary_text", "s")],
                 [ch.TextAppended(2, (0, "summary", 0), "reasoning", "think", "summary_text")],
                 [ch.SlotOpened(3, (1,), "message", "m")],
                 [ch.SlotOpened(4, (1, 0), "output_text", "o")],
                 [ch.TextAppended(5, (1, 0), "text", "Hi")],
                 [ch.ResponseChanged(6, {"status": "completed",
                                         "usage": {"input_tokens": 5, "output_tokens": 2,
                                                   "output_tokens_details":
                                                       {"reasoning_tokens": 1}}})],
                 [ch.TerminalReached(7, "response.completed")],
                 [ch.StreamEnded(None, True)])
    starts = [e for e in events if e.kind == "block_started"]
    assert [s.block_kind for s in starts] == ["reasoning", "text"]
    deltas = [e for e in events if e.kind == "block_delta"]
    assert [d.block for d in deltas] == [starts[0].block, starts[1].block]
    assert events[-1].finish.reason == "stop" and events[-1].usage.reasoning == 1


def test_responses_finish_reason_is_derived():
    def finish(status, details=None, call=False):
        batches = []
        if call:
            batches.append([ch.SlotOpened(0, (0,), "function_call", "f", takes_input=True),
                            ch.SlotClosed(0, (0,), "done", call_state="complete", input={})])
        batches += [[ch.ResponseChanged(1, {"status": status, "incomplete_details": details})],
                    [ch.TerminalReached(2, "response." + status)], [ch.StreamEnded(None, True)]]
        return run("openai-responses", *batches)[-1].finish.reason
    assert finish("completed") == "stop"
    assert finish("completed", call=True) == "tool_calls"
    assert finish("incomplete", {"reason": "max_output_tokens"}) == "length"
    assert finish("incomplete", {"reason": "content_filter"}) == "content_filter"


def test_provider_side_tools_are_marked_server_side():
    events = run("anthropic-messages",
                 [ch.SlotOpened(0, 0, "server_tool_use", "s", name="web_search",
                                call_id="srvtoolu_1", takes_input=True)],
                 [ch.SlotOpened(1, 1, "web_search_tool_result", "r", whole=True,
                                data={"type": "web_search_tool_result"})])
    starts = [e for e in events if e.kind == "block_started"]
    assert [(s.block_kind, s.server_side) for s in starts] == [("tool_call", True),
                                                               ("tool_result", True)]
    assert starts[1].data == {"type": "web_search_tool_result"}
    assert events[-1].kind == "block_ended" and events[-1].reason == "whole"


def test_a_length_stop_inside_arguments_is_an_invalid_call_not_a_cut():
    events = run("anthropic-messages",
                 [ch.SlotOpened(0, 0, "tool_use", "t", name="f", call_id="c",
                                takes_input=True)],
                 [ch.ToolInputGrew(1, 0, '{"a": "unfini')],
                 [ch.ResponseChanged(2, {"stop_reason": "max_tokens"})],
                 [ch.TerminalReached(3, "message_stop")],
                 [ch.SlotClosed(None, 0, "end_of_stream", synthesised=True, call_state="cut",
                                input={"a": "unfini"}),
                  ch.StreamEnded(None, True)])
    invalid = next(e for e in events if e.kind == "tool_call_invalid")
    assert invalid.state == "invalid"
    assert (events[-1].finish.reason, events[-1].ended) == ("length", "proper")


def test_http_error_before_any_event():
    adapter = adapter_for("openai-responses")
    events = adapter.begin() + adapter.http_error(429, "rate limited", {"error": {}})
    err = events[1]
    assert (err.scope, err.phase, err.retryable) == ("provider", "before_output", True)
    assert events[-1].ended == "error"
    assert adapter_for("openai-chat").http_error(400, "bad")[0].retryable is False
