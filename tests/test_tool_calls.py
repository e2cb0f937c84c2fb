"""Tool calls as they form (lesson 3): states, settled paths, strict ends, linear cost.

Every accumulator keeps a `ToolCall` per call and feeds it each fragment; these
tests read the calls through `tool_calls()` on the corpus and on hand-made
streams, and check the states the wires' explicit ends give them.
"""

from __future__ import annotations

import copy
import json
import random
import sys
from pathlib import Path

import pytest

from lesson_lib.accumulate import accumulator_for
from lesson_lib.accumulate.base import partial_value
from lesson_lib.accumulate.history import History
from lesson_lib.capture.captures import Capture, corpus, from_bytes, load, reference_corpus
from lesson_lib.partial_json import NOTHING
from lesson_lib.tool_calls import ToolCall, open_path_of
from lesson_lib.wires.wire_events import parse_all

ALL = [c for c in corpus() + reference_corpus() if c.status < 300 and c.wire]


def cap(name: str) -> Capture:
    return load(name, search_reference=False)


def walk(capture: Capture):
    """(k, views after the first k events) for k = 1..n, then ("end", views after finish)."""
    acc = accumulator_for(capture.wire)
    for k, event in enumerate(parse_all(capture.events), start=1):
        acc.feed(event)
        yield k, acc.tool_calls()
    acc.finish(capture.sse_diagnostics)
    yield "end", acc.tool_calls()


def ended(capture: Capture):
    return list(walk(capture))[-1][1]


def sse(wire: str, payloads: list) -> Capture:
    """A capture from payloads (Chat: dicts as chunks, "[DONE]" as the sentinel)."""
    out = []
    for p in payloads:
        if wire == "openai-chat":
            out.append(f"data: {p if isinstance(p, str) else json.dumps(p)}\n\n")
        else:
            out.append(f"event: {p['type']}\ndata: {json.dumps(p)}\n\n")
    return from_bytes("".join(out).encode(), name="hand-made", sidecar={"wire": wire})


def anthropic_tool(fragments: list[str], *, stop: bool = True) -> Capture:
    payloads = [{"type": "message_start", "message": {
        "id": "msg_1", "type": "message", "role": "assistant", "model": "m", "content": [],
        "stop_reason": None, "usage": {"input_tokens": 1, "output_tokens": 1}}},
        {"type": "content_block_start", "index": 0, "content_block": {
            "type": "tool_use", "id": "toolu_1", "name": "f", "input": {}}}]
    payloads += [{"type": "content_block_delta", "index": 0,
                  "delta": {"type": "input_json_delta", "partial_json": f}} for f in fragments]
    if stop:
        payloads += [{"type": "content_block_stop", "index": 0},
                     {"type": "message_delta", "delta": {"stop_reason": "tool_use"},
                      "usage": {"output_tokens": 9}},
                     {"type": "message_stop"}]
    return sse("anthropic-messages", payloads)


def chunk(*calls, finish=None) -> dict:
    delta = {"tool_calls": list(calls)} if calls else {}
    return {"id": "c1", "object": "chat.completion.chunk", "created": 1, "model": "m",
            "choices": [{"index": 0, "delta": delta, "finish_reason": finish}]}


def frag(index: int, arguments: str, call_id: str | None = None, name: str | None = None):
    out: dict = {"index": index, "function": {"arguments": arguments}}
    if call_id:
        out.update(id=call_id, type="function")
        out["function"]["name"] = name
    return out


# -- states on the corpus ------------------------------------------------------------------


def test_cut_in_tool_json_is_cut_with_the_partial_value():
    capture = cap("anthropic-messages/cut-in-tool-json")
    views = dict(walk(capture))
    before_end = views[len(capture.events)]
    assert [v.state for v in before_end] == ["forming"]     # nothing has ended it yet
    (call,) = views["end"]
    assert (call.name, call.state) == ("create_event", "cut")
    assert call.value == {"title": "Dinner with Léa at Chez Jan"}
    assert call.raw == '{"title": "Dinner with Léa at Chez Jan'
    assert not call.is_settled(("title",)) and call.open_path == ("title",)
    assert call.error is None and call.was_cut


def test_max_tokens_in_tool_json_is_cut_and_never_closed():
    capture = cap("anthropic-messages/max-tokens-in-tool-json")
    (call,) = ended(capture)
    assert call.state == "cut" and call.end_event is None   # cut at the end, not by an event
    assert call.value["items"][-1] == "30–"                 # the unfinished item, as it arrived
    assert call.is_settled(("items", 8)) and not call.is_settled(("items", 9))
    assert call.settled_keys() == ["title"]
    acc = accumulator_for(capture.wire)
    for event in parse_all(capture.events):
        acc.feed(event)
    acc.finish()
    assert acc.slots()[1].state == "never closed"
    assert acc.final()["content"][1]["input"] == call.value


def test_tool_no_params_is_complete_with_an_empty_object():
    (call,) = ended(cap("anthropic-messages/tool-no-params"))
    assert (call.name, call.state, call.value, call.raw) == ("get_current_time", "complete",
                                                             {}, "")
    assert call.fragments == 1 and call.settled == frozenset({()})


def test_parallel_interleaved_chat_calls_complete_only_at_the_finish_reason():
    capture = cap("openai-chat/parallel-tools-interleaved")
    finish = next(i for i, e in enumerate(parse_all(capture.events))
                  if isinstance(e.payload, dict) and any(
                      c.get("finish_reason") for c in e.payload.get("choices") or []))
    parsed_early = set()
    for k, views in walk(capture):
        if k == "end" or k > finish:
            assert [v.state for v in views] == ["complete", "complete"]
            continue
        assert all(v.state == "forming" for v in views), k
        for n, view in enumerate(views):
            try:
                json.loads(view.raw)
            except ValueError:
                continue
            parsed_early.add(n)
            assert view.open_path is None     # the text is whole, and still not final
    assert parsed_early == {0, 1}, "the test needs calls whose text parses before the finish"
    complete = dict(walk(capture))[finish + 1]
    assert all(v.end_event == finish for v in complete)


def test_index_reused_with_a_new_id_is_two_calls():
    views = ended(cap("openai-chat/index-reused-new-id"))
    assert [(v.name, v.call_id, v.state) for v in views] == [
        ("get_weather", "call_wpbu9vi0", "complete"), ("get_local_time", "call_1lxk6nw8",
                                                       "complete")]
    assert views[0].value == {"location": "Lisbon, Portugal", "unit": "celsius"}


def test_every_wire_has_calls_with_names_before_arguments():
    for name in ("anthropic-messages/text-then-tool", "openai-responses/function-call",
                 "openai-chat/tool-call"):
        capture = cap(name)
        first = next(views for k, views in walk(capture) if views)
        assert first[0].name and first[0].fragments <= 1 and first[0].value is NOTHING, name


def test_structured_output_is_a_pseudo_tool_call():
    capture = cap("openai-responses/structured-output")
    (call,) = ended(capture)
    assert (call.kind, call.name, call.structured, call.state) == ("structured output", "recipe",
                                                                   True, "complete")
    assert call.address == (0, 0)
    text = "".join(p["delta"] for p in (e.payload for e in parse_all(capture.events))
                   if p.get("type") == "response.output_text.delta")
    assert call.value == json.loads(text) and call.raw == text


def test_responses_parallel_calls_by_output_index():
    views = ended(cap("openai-responses/parallel-function-calls"))
    assert [(v.address, v.name, v.state) for v in views] == [
        ((0,), "get_local_time", "complete"), ((1,), "convert_currency", "complete")]


@pytest.mark.parametrize("capture", ALL, ids=lambda c: c.key)
def test_complete_calls_equal_the_strict_parse_of_their_raw_text(capture):
    for view in ended(capture):
        if view.state == "complete" and view.kind != "custom_tool_call":
            raw = view.raw
            if raw.strip():
                assert view.value == json.loads(raw), view.name
            else:   # no arguments: {} or the input the call's start carried whole
                assert isinstance(view.value, dict), view.name
        if view.state == "invalid":
            with pytest.raises(ValueError):
                json.loads(view.raw)


@pytest.mark.parametrize("capture", ALL, ids=lambda c: c.key)
def test_settled_paths_only_grow_and_settled_values_never_change(capture):
    seen: dict = {}
    for k, views in walk(capture):
        for n, view in enumerate(views):
            key = (n, view.call_id)
            before = seen.get(key)
            now = {p: _at(view.value, p) for p in view.settled}
            if before is not None:
                assert set(before) <= set(now), (k, view.name)
                for path, value in before.items():
                    assert now[path] == value, (k, view.name, path)
            seen[key] = now


def _at(value, path):
    for key in path:
        value = value[key]
    return value


# -- invalid and restated text -------------------------------------------------------------


def test_two_merged_documents_are_invalid_at_the_second_one_and_raw_is_kept():
    call = ToolCall("f", "c1")
    call.feed('{"a":1}')
    assert call.state == "forming"
    changes = call.feed('{"b":2}')
    assert call.state == "invalid"
    assert (call.error.position, call.value) == (7, {"a": 1})
    assert "exactly one value is allowed" in call.error.message
    assert changes == []                    # nothing of the second document is applied
    call.feed(', "c": 3}')
    assert call.raw == '{"a":1}{"b":2}, "c": 3}'
    call.end()
    assert call.state == "invalid" and call.value == {"a": 1} and call.input == {"a": 1}


def test_an_invalid_call_is_invalid_on_the_wire_before_its_stop():
    capture = anthropic_tool(['{"a":1}', '{"b":2}'])
    views = dict(walk(capture))
    assert views[3][0].state == "forming" and views[4][0].state == "invalid"
    acc = accumulator_for(capture.wire)
    for event in parse_all(capture.events):
        acc.feed(event)
    acc.finish()
    (diag,) = [d for d in acc.diagnostics if d.code == "invalid_tool_input"]
    assert "at character 7" in diag.message and diag.raw == '{"a":1}{"b":2}'


def test_text_that_stops_short_at_an_explicit_end_is_invalid_at_the_end():
    call = ToolCall("f")
    call.feed('{"n": 1')
    call.end()
    assert call.state == "invalid" and call.error.position == 7
    assert call.value == {} and call.input == {}


def test_an_invalid_call_can_be_copied_for_a_history_checkpoint():
    call = ToolCall("f")
    call.feed('{"a":1}}')
    twin = copy.deepcopy(call)
    assert twin.state == "invalid" and twin.error == call.error and twin.raw == call.raw


def test_responses_done_with_other_text_is_restated():
    addr = {"item_id": "fc_1", "output_index": 0}
    item = {"id": "fc_1", "type": "function_call", "status": "in_progress", "arguments": "",
            "call_id": "call_1", "name": "f"}
    capture = sse("openai-responses", [
        {"type": "response.created", "response": {"id": "r", "status": "in_progress"}},
        {"type": "response.output_item.added", "output_index": 0, "item": item},
        {"type": "response.function_call_arguments.delta", **addr, "delta": '{"a": 1'},
        {"type": "response.function_call_arguments.done", **addr, "arguments": '{"a": 12}'}])
    (call,) = ended(capture)
    assert call.state == "complete" and call.value == {"a": 12} and call.raw == '{"a": 12}'


def test_a_custom_tool_input_is_text_not_json():
    addr = {"item_id": "ct_1", "output_index": 0}
    item = {"id": "ct_1", "type": "custom_tool_call", "status": "in_progress", "input": "",
            "call_id": "call_1", "name": "shell"}
    capture = sse("openai-responses", [
        {"type": "response.created", "response": {"id": "r", "status": "in_progress"}},
        {"type": "response.output_item.added", "output_index": 0, "item": item},
        {"type": "response.custom_tool_call_input.delta", **addr, "delta": "ls -"},
        {"type": "response.custom_tool_call_input.delta", **addr, "delta": "la"},
        {"type": "response.custom_tool_call_input.done", **addr, "input": "ls -la"}])
    views = dict(walk(capture))
    assert (views[3][0].state, views[3][0].value) == ("forming", "ls -")
    (call,) = views["end"]
    assert (call.kind, call.state, call.value) == ("custom_tool_call", "complete", "ls -la")


def test_chat_done_without_a_finish_reason_still_ends_the_calls():
    capture = sse("openai-chat", [chunk(frag(0, '{"a": 1}', "call_a", "f")), "[DONE]"])
    (call,) = ended(capture)
    assert call.state == "complete" and call.end_event == 1
    cut = sse("openai-chat", [chunk(frag(0, '{"a": 1}', "call_a", "f"))])
    (call,) = ended(cut)
    assert call.state == "cut" and call.value == {"a": 1}


def test_a_chat_name_sent_in_pieces_is_joined():
    capture = sse("openai-chat", [
        chunk(frag(0, "", "call_a", "get_")),
        chunk({"index": 0, "function": {"name": "weather", "arguments": "{}"}}),
        chunk(finish="tool_calls"), "[DONE]"])
    (call,) = ended(capture)
    assert (call.name, call.value, call.state) == ("get_weather", {}, "complete")


# -- partial values of cut text -----------------------------------------------------------


@pytest.mark.parametrize("raw, value", [
    ("", {}), ("   ", {}), ('{"city": "Par', {"city": "Par"}),
    ('{"city": "Paris", "days": 1', {"city": "Paris", "days": 1}),   # the digits arrived
    ('{"n": 1.', {}),                                                 # "1." is no number yet
    ('{"a": tru', {}), ('{"a": "x"}{"b": 1}', {"a": "x"}), ("xyz", None),
    ('{"s": "a\\', {"s": "a"}), ("[1, 2", [1, 2]), ("12", 12),
])
def test_partial_value_of_cut_text(raw, value):
    assert partial_value(raw) == value


def test_a_cut_number_is_shown_but_not_settled():
    call = ToolCall("f")
    call.feed('{"city": "Paris", "days": 1')
    call.cut()
    view = call.view()
    assert view.value == {"city": "Paris", "days": 1}
    assert view.is_settled(("city",)) and not view.is_settled(("days",))


# -- views: immutable snapshots, right at any index ------------------------------------------


def test_a_view_does_not_change_when_the_call_goes_on():
    call = ToolCall("f")
    call.feed('{"rows": [{"a": "x')
    view = call.view()
    call.feed('yz"}, {"b": 2}], "more": "text"}')
    assert view.value == {"rows": [{"a": "x"}]}
    assert view.raw == '{"rows": [{"a": "x' and view.raw_length == 18
    assert view.open_path == ("rows", 0, "a")
    assert call.view().value == {"rows": [{"a": "xyz"}, {"b": 2}], "more": "text"}


def test_views_share_settled_values_and_copy_only_the_open_chain():
    call = ToolCall("f")
    call.feed('{"done": {"k": [1, 2]}, "open": [3, ')
    view = call.view()
    live = call.value
    assert view.value["done"] is live["done"]           # settled: shared
    assert view.value["open"] is not live["open"]       # open: copied
    assert view.value is not live


def _signature(views) -> list:
    return [(v.name, v.state, json.dumps(v.value, default=repr), v.raw, sorted(map(repr,
             v.settled)), v.error) for v in views]


@pytest.mark.parametrize("name", ["anthropic-messages/write-file-tool",
                                  "openai-chat/parallel-tools-interleaved",
                                  "openai-responses/structured-output",
                                  "anthropic-messages/max-tokens-in-tool-json"])
def test_history_gives_the_right_calls_at_any_index(name):
    capture = cap(name)
    truth = {k: _signature(views) for k, views in walk(capture) if k != "end"}
    history = History(capture, every=16)
    order = list(truth)
    random.Random(3).shuffle(order)
    kept = {}
    for k in order[:60] + [1, len(order)]:
        views = history.accumulator_at(k).tool_calls()
        kept[k] = views
        assert _signature(views) == truth[k], k
    for k, views in kept.items():        # views taken earlier are still right afterwards
        assert _signature(views) == truth[k], k


# -- cost: work proportional to the fragment ---------------------------------------------------

LESSON_LIB = Path(__file__).resolve().parent.parent / "lesson_lib"
TRACED = ("tool_calls.py", "partial_json", "accumulate")


def count_lines(fn) -> int:
    """Python lines run inside lesson_lib's parser, tool calls and accumulators: a
    deterministic measure of work (the C parts it calls only ever see one fragment)."""
    count = 0

    def local(frame, event, arg):
        nonlocal count
        if event == "line":
            count += 1
        return local

    def tracer(frame, event, arg):
        filename = frame.f_code.co_filename
        if filename.startswith(str(LESSON_LIB)) and any(t in filename for t in TRACED):
            return local
        return None

    sys.settrace(tracer)
    try:
        fn()
    finally:
        sys.settrace(None)
    return count


def records(n: int) -> str:
    return json.dumps({"rows": [{"id": i, "name": f"item {i}", "price": i * 1.5,
                                 "tags": ["a", "b"], "ok": i % 2 == 0} for i in range(n)]})


def pieces(text: str, size: int = 20) -> list[str]:
    return [text[i:i + size] for i in range(0, len(text), size)]


def test_feeding_a_call_is_linear_in_the_size_of_the_arguments():
    def feed_all(text):
        def run():
            call = ToolCall("f")
            for piece in pieces(text):
                call.feed(piece)
            call.end()
            assert call.state == "complete"
        return run

    small, large = records(300), records(600)
    ratio = count_lines(feed_all(large)) / count_lines(feed_all(small))
    assert 1.9 < len(large) / len(small) < 2.1
    assert ratio < 2.2, ratio                 # a re-parse per fragment would be about 4


def test_late_fragments_cost_no_more_than_early_ones():
    text = json.dumps({"path": "a.py", "content": "x = 'naïve \\n'\n" * 3000})
    parts = pieces(text)
    call = ToolCall("f")
    costs = []
    for piece in parts:
        costs.append(count_lines(lambda piece=piece: call.feed(piece)))
    early, late = sum(costs[10:110]), sum(costs[-100:])
    assert late <= 1.2 * early, (early, late)


def test_feeding_an_accumulator_stays_linear_with_tool_calls():
    def run_for(n: int):
        capture = anthropic_tool(pieces(records(n)))
        events = parse_all(capture.events)

        def run():
            acc = accumulator_for(capture.wire)
            for event in events:
                acc.feed(event)
        return run

    ratio = count_lines(run_for(600)) / count_lines(run_for(300))
    assert ratio < 2.2, ratio


def test_open_path_follows_the_last_open_child():
    call = ToolCall("f")
    call.feed('{"a": [1, {"b": "x')
    assert open_path_of(call.value, call.settled) == ("a", 1, "b")
    call.feed('"}')
    assert open_path_of(call.value, call.settled) == ("a",)


def test_deep_nesting_works_for_views_copies_and_cuts():
    call = ToolCall("f")
    call.feed("[" * 10_000 + "1")
    view = call.view()
    assert len(view.open_path) == 9_999
    twin = copy.deepcopy(call)                 # one level per open container, no recursion
    assert twin.view().open_path == view.open_path and len(twin.changes) == 10_000
    twin.feed("2, 3" + "]" * 10_000)
    twin.end()
    assert twin.state == "complete" and call.state == "forming"
    call.cut()
    assert call.state == "cut" and call.raw_length == 10_001


def test_a_copied_call_goes_on_like_the_original():
    call = ToolCall("f", "c1")
    call.feed('{"a": [1, {"b": "x')
    twin = copy.deepcopy(call)
    assert [(c.op, c.path) for c in twin.changes] == [(c.op, c.path) for c in call.changes]
    for piece in ('y"}], "c": 2', "}"):
        assert call.feed(piece) == twin.feed(piece)
    call.end()
    twin.end()
    assert twin.value == call.value == {"a": [1, {"b": "xy"}], "c": 2}


# -- copies for history checkpoints: shared where settled, no recursion -----------------------


COPY_TEXTS = ['{"a": [1, {"b": "x\\u00e9y"}, true, null, -1.5e3], "c": {"d": []}, "e": "\\ud83d'
              '\\ude00"}', '[[[[1,2],[3]],"s"],{"k":{"k2":[{"z":"a long string"}]}}]',
              '"top"', "12345", "{}", '{"a":1}{"b":2}', '{"a": tru', "[1, 2", '{"x": "ab\\',
              '  {"n": 0.5 , "m": [ ] }  ', '{"k": 1, "k": 2}']


@pytest.mark.parametrize("text", COPY_TEXTS)
def test_a_copy_taken_anywhere_goes_on_like_the_original(text):
    rng = random.Random(text)
    for _ in range(12):
        cuts = sorted(rng.sample(range(1, len(text)), min(len(text) - 1, rng.randrange(1, 6))))
        fragments = [text[i:j] for i, j in zip([0, *cuts], [*cuts, len(text)], strict=True)]
        for at in range(len(fragments) + 1):
            calls = [ToolCall("f"), ToolCall("f")]
            for piece in fragments[:at]:
                calls[0].feed(piece)
                calls[1].feed(piece)
            before = _signature([calls[1].view()])
            twin = copy.deepcopy(calls[1])
            assert _signature([twin.view()]) == before
            outcome = []
            for call in (calls[0], twin):
                changes = [call.feed(piece) for piece in fragments[at:]]
                call.end()
                outcome.append((changes, _signature([call.view()])))
            assert outcome[0] == outcome[1], (fragments, at)
            assert _signature([calls[1].view()]) == before     # the original did not move


def test_a_copy_shares_what_is_settled_and_copies_only_the_open_chain():
    call = ToolCall("f")
    call.feed('{"done": {"x": [1, 2]}, "open": [{"y": 1}, [')
    twin = copy.deepcopy(call)
    value, copied = call.value, twin.value
    assert copied == value and copied is not value
    assert copied["done"] is value["done"]               # settled: shared
    assert copied["open"][0] is value["open"][0]
    assert copied["open"] is not value["open"] and copied["open"][1] is not value["open"][1]
    twin.feed('3]]}')
    assert value == {"done": {"x": [1, 2]}, "open": [{"y": 1}, []]}
    ended = ToolCall("f")
    ended.feed("[" * 10_000 + "]" * 10_000)
    ended.end()
    assert copy.deepcopy(ended).value is ended.value     # ended: shared, never walked


def test_checkpoint_copy_feeds_nothing_again(monkeypatch):
    from lesson_lib.partial_json import PartialJSON
    call = ToolCall("f")
    call.feed('{"items": [' + ", ".join(f'{{"n": {i}}}' for i in range(20_000)) + ', {"s": "ab')

    def refuse(self, fragment):
        raise AssertionError("the copy fed the text again")

    monkeypatch.setattr(PartialJSON, "feed", refuse)
    twin = copy.deepcopy(call)
    monkeypatch.undo()
    assert twin.value["items"] is not call.value["items"]
    assert twin.value["items"][0] is call.value["items"][0]
    twin.feed('c"}]}')
    call.feed('d"}]}')
    assert twin.value["items"][-1] == {"s": "abc"} and call.value["items"][-1] == {"s": "abd"}
