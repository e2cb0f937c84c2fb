"""The naive unified handler: its flaws, pinned to the exact wrong results the bytes give,
and the slots (the accumulator) getting the same calls right."""

from __future__ import annotations

import json

import pytest

from lesson_lib.accumulate.naive_handler import (
    Executed,
    StreamEvent,
    compare_with_slots,
    interleave_tool_blocks,
    naive_loop,
    normalise,
    pending_tools_loop,
    run_naive,
    slot_calls,
)
from lesson_lib.capture.captures import from_bytes, load
from lesson_lib.capture.replay import run_sdk
from lesson_lib.wires.wire_events import parse_all


def cap(key):
    return load(key, search_reference=False)


def anthropic_fragments(capture):
    """index -> the input_json_delta fragments addressed to it, in order; and all of them."""
    per, every = {}, []
    for ev in parse_all(capture.events):
        p = ev.payload
        if ev.type == "content_block_delta" and p["delta"]["type"] == "input_json_delta":
            per.setdefault(p["index"], []).append(p["delta"]["partial_json"])
            every.append(p["delta"]["partial_json"])
    return per, every


def chat_fragments(capture):
    """tool_calls index -> its argument fragments; and (index, fragment) in stream order."""
    per, order = {}, []
    for ev in parse_all(capture.events):
        p = ev.payload
        if not isinstance(p, dict):
            continue
        for choice in p.get("choices") or []:
            for call in (choice.get("delta") or {}).get("tool_calls") or []:
                args = (call.get("function") or {}).get("arguments")
                if isinstance(args, str):
                    per.setdefault(call["index"], []).append(args)
                    order.append((call["index"], args))
    return per, order


def stream(payloads, name="hand-made"):
    body = "".join(f"event: {p['type']}\ndata: {json.dumps(p)}\n\n" for p in payloads)
    return from_bytes(body.encode(), name=name, sidecar={"wire": "anthropic-messages"})


# -- the normalisers ---------------------------------------------------------------------


def test_anthropic_normaliser_maps_one_to_one_and_turns_every_stop_into_tool_done():
    events = normalise(cap("anthropic-messages/parallel-tools"))
    kinds = [e.type for e in events]
    assert kinds == (["text"] * 3 + ["tool_done"] + ["tool_start"] + ["tool_delta"] * 5
                     + ["tool_done", "tool_start"] + ["tool_delta"] * 5
                     + ["tool_done", "usage", "done"])
    # the text block's stop (event 6, index 0) is a tool_done too: flaw 3
    assert events[3] == StreamEvent("tool_done", key=0, event=6)
    assert events[4].tool_name == "get_weather" and events[4].key == 1
    assert events[-2].usage == {"stop_reason": "tool_use"}


def test_responses_normaliser_keys_by_item_id_and_drops_failures():
    events = normalise(cap("openai-responses/parallel-function-calls"))
    starts = [e for e in events if e.type == "tool_start"]
    assert [e.tool_name for e in starts] == ["get_local_time", "convert_currency"]
    assert all(e.key.startswith("fc_") for e in events if e.type.startswith("tool"))
    done = [e for e in events if e.type == "tool_done"]
    assert done[0].tool_args == '{"timezone":"Europe/Zurich"}'   # carried, never read
    # response.failed / error leave no trace at all (flaw 6)
    failed = normalise(cap("openai-responses/error-then-failed"))
    assert {e.type for e in failed} <= {"text"}


def test_chat_normaliser_ends_calls_only_at_the_finish_reason():
    capture = cap("openai-chat/parallel-tools-sequential")
    events = normalise(capture)
    dones = [e for e in events if e.type == "tool_done"]
    finish = next(ev.index for ev in parse_all(capture.events) if isinstance(ev.payload, dict)
                  and any(c.get("finish_reason") for c in ev.payload.get("choices") or []))
    assert [(d.key, d.event) for d in dones] == [((0, 0), finish), ((0, 1), finish)]
    assert events[-1].type == "done"


def test_normalise_refuses_an_unknown_wire():
    with pytest.raises(ValueError, match="no normaliser"):
        normalise(from_bytes(b"data: hello\n\n", name="odd"))


# -- right by luck of ordering -------------------------------------------------------------

SEQUENTIAL = ["anthropic-messages/parallel-tools", "anthropic-messages/text-then-tool",
              "anthropic-messages/weather-turn-step1", "openai-responses/parallel-function-calls",
              "openai-responses/weather-turn-step1"]


@pytest.mark.parametrize("key", SEQUENTIAL)
def test_one_call_at_a_time_the_naive_loop_gets_the_arguments_right(key):
    """Anthropic and Responses finish one call before the next begins: the loop is right,
    but only because of that order."""
    capture = cap(key)
    run = run_naive(capture)
    truth = slot_calls(capture)
    assert [(c.name, c.call_id, c.arguments, c.input, c.error) for c in run.executed] == \
           [(c.name, c.call_id, c.arguments, c.input, None) for c in truth]
    assert run.never_executed == []
    assert all(row["same"] for row in compare_with_slots(capture))


def test_anthropic_parallel_tools_each_call_gets_its_own_fragments():
    capture = cap("anthropic-messages/parallel-tools")
    per, _ = anthropic_fragments(capture)
    run = run_naive(capture)
    assert [c.arguments for c in run.executed] == ["".join(per[1]), "".join(per[2])]
    assert [c.input for c in run.executed] == [{"location": "Lyon, France"},
                                               {"location": "Montréal, Canada"}]


# -- wrong, exactly ----------------------------------------------------------------------------


@pytest.mark.parametrize("key", ["openai-chat/parallel-tools-sequential",
                                 "openai-chat/weather-turn-step1"])
def test_chat_sequential_calls_the_first_call_gets_both_calls_fragments(key):
    capture = cap(key)
    per, _ = chat_fragments(capture)
    first, second = run_naive(capture).executed
    assert first.arguments == "".join(per[0]) + "".join(per[1])
    assert first.input is None and first.error.startswith("JSONDecodeError: Extra data")
    assert second.arguments == "".join(per[1])
    assert second.input == json.loads("".join(per[1])) and second.error is None
    # and the slots hold each call's own fragments
    truth = slot_calls(capture)
    assert [t.arguments for t in truth] == ["".join(per[0]), "".join(per[1])]
    assert [r["same"] for r in compare_with_slots(capture)] == [False, True]


def test_chat_interleaved_calls_both_get_every_fragment_since_they_started():
    capture = cap("openai-chat/parallel-tools-interleaved")
    per, order = chat_fragments(capture)
    first_of_1 = next(i for i, (index, _) in enumerate(order) if index == 1)
    a, b = run_naive(capture).executed
    assert a.arguments == "".join(f for _, f in order)
    assert b.arguments == "".join(f for _, f in order[first_of_1:])
    assert a.error and b.error and a.input is None and b.input is None
    assert [t.input for t in slot_calls(capture)] == [json.loads("".join(per[0])),
                                                      json.loads("".join(per[1]))]


def test_chat_index_reused_merges_the_second_call_into_the_first():
    capture = cap("openai-chat/index-reused-new-id")
    a, b = run_naive(capture).executed
    assert a.arguments == ('{"location":"Lisbon, Portugal","unit":"celsius"}'
                           '{"timezone":"Europe/Lisbon"}')
    assert b.arguments == '{"timezone":"Europe/Lisbon"}' and b.error is None


def test_hand_interleaved_anthropic_blocks_both_calls_get_all_fragments():
    capture = interleave_tool_blocks(cap("anthropic-messages/parallel-tools"))
    per, every = anthropic_fragments(capture)
    run = run_naive(capture)
    assert [c.arguments for c in run.executed] == ["".join(every)] * 2
    assert all(c.input is None and c.error.startswith("JSONDecodeError") for c in run.executed)
    # the slots, the official SDK and the original order all agree on the real inputs
    assert [t.arguments for t in slot_calls(capture)] == ["".join(per[1]), "".join(per[2])]
    sdk = run_sdk(capture)
    assert sdk.error is None
    assert [b.input for b in sdk.final.content if b.type == "tool_use"] == \
           [t.input for t in slot_calls(cap("anthropic-messages/parallel-tools"))]


def test_interleave_keeps_every_event_byte_for_byte():
    original = cap("anthropic-messages/weather-turn-step1")
    made = interleave_tool_blocks(original)
    assert sorted(e.data for e in made.events) == sorted(e.data for e in original.events)
    assert [e.data for e in made.events] != [e.data for e in original.events]
    with pytest.raises(ValueError):
        interleave_tool_blocks(cap("anthropic-messages/get-weather"))    # one tool only


def test_a_text_blocks_stop_is_taken_for_the_pending_tools_end():
    """Flaw 3, by itself: a tool pending while a text block stops is executed at once."""
    capture = stream([
        {"type": "message_start", "message": {"id": "m", "type": "message", "role": "assistant",
                                              "content": [], "model": "x"}},
        {"type": "content_block_start", "index": 0,
         "content_block": {"type": "tool_use", "id": "t0", "name": "f", "input": {}}},
        {"type": "content_block_start", "index": 1, "content_block": {"type": "text", "text": ""}},
        {"type": "content_block_delta", "index": 0,
         "delta": {"type": "input_json_delta", "partial_json": '{"a": '}},
        {"type": "content_block_stop", "index": 1},
        {"type": "content_block_delta", "index": 0,
         "delta": {"type": "input_json_delta", "partial_json": "1}"}},
        {"type": "content_block_stop", "index": 0},
        {"type": "message_stop"},
    ])
    (call,) = run_naive(capture).executed
    assert call.at == 4 and call.arguments == '{"a": ' and call.input is None
    assert slot_calls(capture)[0].input == {"a": 1}


def test_a_tool_without_parameters_crashes_the_strict_parse():
    capture = cap("anthropic-messages/tool-no-params")
    (call,) = run_naive(capture).executed
    assert call.arguments == ""
    assert call.error == "JSONDecodeError: Expecting value: line 1 column 1 (char 0)"
    assert slot_calls(capture)[0].input == {}


@pytest.mark.parametrize("key", ["anthropic-messages/cut-in-tool-json",
                                 "anthropic-messages/max-tokens-in-tool-json",
                                 "openai-chat/cut-in-arguments"])
def test_a_call_whose_stop_never_came_is_never_executed_and_never_reported(key):
    capture = cap(key)
    run = run_naive(capture)
    assert run.executed == []
    (left,) = run.never_executed
    (truth,) = slot_calls(capture)
    assert left[1] == truth.call_id and left[2] == truth.arguments
    assert truth.error == "the call was never closed"      # the slots say so


def test_the_loop_ignores_keys_and_a_stop_with_nothing_pending():
    events = [StreamEvent("tool_done", key=9, event=0),
              StreamEvent("tool_start", tool_name="f", tool_id="a", key=1, event=1),
              StreamEvent("tool_start", tool_name="g", tool_id="b", key=2, event=2),
              StreamEvent("tool_delta", tool_args="{}", key=2, event=3),
              StreamEvent("tool_done", key=2, event=4)]
    executed, pending = pending_tools_loop(events)
    assert executed == [Executed("f", "a", "{}", {}, None, 4)]    # b's stop popped a
    assert pending == {"b": {"name": "g", "args": "{}"}}
    assert naive_loop(events) == executed


def test_summary_is_deterministic_text():
    text = run_naive(cap("openai-chat/parallel-tools-sequential")).summary()
    assert text.splitlines()[0] == "openai-chat/parallel-tools-sequential: 2 call(s) executed"
    assert "JSONDecodeError: Extra data" in text
    assert text == run_naive(cap("openai-chat/parallel-tools-sequential")).summary()
