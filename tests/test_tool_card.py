"""The tool-call card: every capture renders, model text is escaped, the name comes
first, settled values are marked by text and style, pauses show at the right event,
long strings stay cheap, and the player takes the card as a pane."""

from __future__ import annotations

import json
import re

import pytest

from lesson_lib.capture.captures import corpus, from_bytes, load
from lesson_lib.tool_calls import ToolCall
from lesson_lib.views import Player
from lesson_lib.views.slot_view import slot_labeller
from lesson_lib.views.tool_card import (
    PAUSE_MS,
    ToolCardPane,
    card_html,
    card_text,
    show_tool_calls,
    timeline_for,
    tool_call_labeller,
    tool_calls_at,
    value_lines,
)

CORPUS = corpus()


def cap(key):
    return load(key, search_reference=False)


def cards(html: str) -> list[str]:
    return re.findall(r'<div class="rtw-tool-card"[^>]*data-state="([^"]*)"', html)


def anthropic(payloads, name="hand-made"):
    body = "".join(f"event: {p['type']}\ndata: {json.dumps(p)}\n\n" for p in payloads)
    return from_bytes(body.encode(), name=name, sidecar={"wire": "anthropic-messages"})


START = {"type": "message_start", "message": {"id": "m", "type": "message", "role": "assistant",
                                              "content": [], "model": "x"}}


def tool_start(name="f", index=0):
    return {"type": "content_block_start", "index": index,
            "content_block": {"type": "tool_use", "id": "toolu_1", "name": name, "input": {}}}


def args(fragment, index=0):
    return {"type": "content_block_delta", "index": index,
            "delta": {"type": "input_json_delta", "partial_json": fragment}}


# -- every capture, several indices --------------------------------------------------------------


@pytest.mark.parametrize("capture", CORPUS, ids=lambda c: c.key)
def test_renders_every_capture_at_several_indices(capture):
    pane = ToolCardPane()
    n = len(capture.events)
    for index in sorted({0, n // 3, n // 2, max(0, n - 2), max(0, n - 1)}):
        html = pane(capture, index)
        text = pane.text(capture, index)
        state = pane.state(capture, index)
        assert cards(html) == [v.state for v in state.calls]
        assert text.splitlines()[0] == state.caption
        for view in state.calls:
            assert view.name in text
        assert pane.text(capture, index) == text          # deterministic
        assert "<script" not in html.lower()
        label = tool_call_labeller(capture, index)
        assert label.startswith(f"event {index} of 0-{n - 1}") or label.startswith("no events")


def test_a_capture_without_events_has_no_cards():
    capture = cap("anthropic-messages/http-529-overloaded")
    assert show_tool_calls(capture).state.calls == []
    assert "no events" in ToolCardPane().text(capture, 0)


# -- escaping --------------------------------------------------------------------------------


def test_names_values_and_errors_are_escaped():
    capture = anthropic([START, tool_start("<b>bold</b>"),
                         args('{"html": "<script>alert(1)</script>"}'),
                         args('<img src=x onerror=alert(1)>')])
    html = ToolCardPane()(capture, len(capture.events) - 1)
    assert "<script" not in html and "<img" not in html and "<b>bold" not in html
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in html
    assert "&lt;b&gt;bold&lt;/b&gt;" in html
    assert "&lt;/script&gt;&quot;}&lt;img src=x onerror" in html   # the raw excerpt
    assert cards(html) == ["invalid"]


# -- the name first, states, marks --------------------------------------------------------------


def test_the_name_shows_before_any_argument_arrived():
    capture = cap("anthropic-messages/text-then-tool")
    text = show_tool_calls(capture, at=14).state.text()
    assert text.splitlines()[1] == "search_flights — ⋯ forming…   ◀ this event"
    assert "(no arguments yet: the name arrives first)" in text
    html = ToolCardPane()(capture, 14)
    assert html.index("search_flights") < html.index("forming…")
    assert cards(html) == ["forming"]


def test_state_badges():
    def badge(capture, at=None):
        state = show_tool_calls(capture, at).state
        return [card_text(v).splitlines()[0] for v in state.calls]

    flights = cap("anthropic-messages/text-then-tool")
    assert badge(flights, 20) == ["search_flights — ⋯ forming…"]
    assert badge(flights, 35) == ["search_flights — ✓ complete"]
    assert badge(cap("anthropic-messages/cut-in-tool-json")) == ["create_event — ✂ cut"]
    merged = anthropic([START, tool_start("merge"), args('{"a":1}'), args('{"b":2}'),
                        {"type": "content_block_stop", "index": 0}])
    assert badge(merged) == ["merge — ✗ invalid"]
    text = show_tool_calls(merged).state.text()
    assert "✗ not JSON at character 7: found '{' after the complete JSON value" in text
    assert '  raw: {"a":1}{"b":2}\n              ^\n' in text   # the caret under the 2nd {


def test_settled_and_open_values_are_marked_by_text_and_style():
    capture = cap("anthropic-messages/text-then-tool")
    html = ToolCardPane()(capture, 20)     # origin settled, destination forming
    settled = re.findall(r'<span class="rtw-value-settled" style="([^"]*)">([^<]*)</span>'
                         r'\s*<span class="rtw-mark rtw-mark-settled"[^>]*>([^<]*)</span>', html)
    forming = re.findall(r'<span class="rtw-value-open" style="([^"]*)">([^<]*)</span>'
                         r'\s*<span class="rtw-mark rtw-mark-open"[^>]*>([^<]*)</span>', html)
    assert [(text, mark) for _, text, mark in settled] == [("&quot;origin&quot;: &quot;AUS&quot;,",
                                                            "✓ settled")]
    assert all("underline solid" in style for style, _, _ in settled)
    assert [(text, mark) for _, text, mark in forming] == [
        ("{", "… forming"), ("&quot;destination&quot;: &quot;TYO", "… forming")]
    assert all("underline dashed" in style for style, _, _ in forming)


def test_a_whole_text_that_is_not_final_yet_says_so():
    text = show_tool_calls(cap("anthropic-messages/text-then-tool"), at=34).state.text()
    assert "search_flights — ⋯ forming…" in text
    assert "the text parses now, but only content_block_stop makes the call final" in text


# -- pauses ----------------------------------------------------------------------------------------


def test_pause_lines_come_at_the_events_followed_by_a_long_silence():
    capture = cap("anthropic-messages/text-then-tool")
    with_pause = {}
    for i in range(len(capture.events)):
        state = tool_calls_at(capture, i)
        pauses = [p for p in state.pauses if p is not None]
        if pauses:
            with_pause[i] = pauses[0].text()
    assert sorted(with_pause) == [15, 17, 21, 24, 27, 29]
    assert with_pause[17] == ("‖ waiting 439 ms for the next key — the model emits one key "
                              "and value at a time")
    for i in with_pause:
        gap = capture.events[i + 1].t - capture.events[i].t
        assert gap > PAUSE_MS
    assert "‖ waiting 439 ms" in show_tool_calls(capture, at=17).state.text()
    assert "‖ waiting 439 ms" in ToolCardPane()(capture, 17)


def test_no_pause_without_timing_or_for_ended_calls():
    capture = anthropic([START, tool_start(), args('{"a": 1')])      # no chunk times
    assert all(p is None for p in tool_calls_at(capture, 1).pauses)
    call = ToolCall("f", t=0.0)
    call.feed("{", t=10.0)
    call.end()
    from lesson_lib.views.tool_card import pause_of
    assert pause_of(call.view(), 5000.0) is None


# -- long strings, many entries ---------------------------------------------------------------------


def test_long_strings_are_shown_as_a_tail_so_a_step_costs_the_same():
    capture = cap("anthropic-messages/write-file-tool")
    pane = ToolCardPane()
    early, late = pane.text(capture, 120), pane.text(capture, 1300)
    assert "earlier characters not shown" in late
    assert abs(len(late) - len(early)) < 200
    assert len(pane(capture, 1300)) < 6000


def test_long_arrays_show_their_last_entries():
    call = ToolCall("f")
    call.feed(json.dumps({"rows": list(range(30))})[:-2])
    lines = [line.text for line in value_lines(call.view(), max_items=5)]
    assert "… 24 earlier entries not shown" in lines
    assert lines[-1] == "28"          # "2" may still grow: numbers show at their delimiter


# -- the counter and the player ----------------------------------------------------------------


def test_labeller_names_the_call_and_counts_settled_fields():
    flights = cap("anthropic-messages/text-then-tool")
    assert tool_call_labeller(flights, 17) == ("event 17 of 0-37 · block [1] tool_use search_flights"
                                               " · input_json_delta · 1 field settled")
    assert tool_call_labeller(flights, 35) == ("event 35 of 0-37 · block [1] tool_use search_flights"
                                               " · content_block_stop · 6 fields settled · "
                                               "complete")
    assert tool_call_labeller(flights, 5) == slot_labeller(flights, 5)
    chat = cap("openai-chat/parallel-tools-interleaved")
    assert tool_call_labeller(chat, 37) == ("event 37 of 0-39 · choice 0 · finish_reason tool_calls"
                                            " · get_weather complete; get_air_quality complete")
    responses = cap("openai-responses/weather-turn-step1")
    label = tool_call_labeller(responses, 10)
    assert label.startswith("event 10 of 0-") and "item [0] function_call get_weather" in label


def test_player_with_the_card_pane_and_labeller():
    player = Player(["anthropic-messages/text-then-tool", "openai-chat/parallel-tools-interleaved"],
                    panes=[ToolCardPane()], labeller=tool_call_labeller)
    player.index = 21
    text = player.render_text()
    assert text.startswith("anthropic-messages/text-then-tool: event 21 of 0-37 · block [1] "
                           "tool_use search_flights · input_json_delta · 2 fields settled")
    assert "[Tool calls]" in text and '"destination": "TYO"' in text
    html = player.render_html()
    assert 'aria-live="polite"' in html and 'role="group"' in html
    assert player.pane_views[0].value.count('class="rtw-tool-card"') == 1
    bundle = player._repr_mimebundle_()
    assert "search_flights" in bundle["text/plain"] and "search_flights" in bundle["text/html"]


def test_stepping_forward_costs_one_feed():
    capture = cap("anthropic-messages/write-file-tool")
    pane = ToolCardPane()
    pane(capture, 500)
    timeline = timeline_for(capture)
    feeds = timeline.feeds
    for i in range(501, 511):
        pane(capture, i)
        tool_call_labeller(capture, i)
    assert timeline.feeds - feeds == 10


def test_card_html_is_a_labelled_group():
    call = ToolCall("get_weather", "toolu_1")
    call.feed('{"city": "Paris"}')
    html = card_html(call.view())
    assert 'role="group" aria-label="tool call get_weather, forming…"' in html
    assert "border:3px dashed" in html           # the state's border style, not colour alone


def test_the_end_comes_from_the_timelines_ended_snapshot():
    from lesson_lib.accumulate import accumulate
    capture = cap("anthropic-messages/text-then-tool")
    n = len(capture.events)
    state = tool_calls_at(capture, None)
    timeline = timeline_for(capture)
    assert state.ended and state.index == n - 1
    assert [(v.name, v.state, v.value) for v in state.calls] == [
        (v.name, v.state, v.value) for v in timeline.end().tool_calls]
    final_inputs = [b["input"] for b in accumulate(capture).final["content"]
                    if b["type"] == "tool_use"]
    assert [v.value for v in state.calls] == final_inputs
    copies = timeline.copies
    for _ in range(3):                          # the ended state is made once
        tool_calls_at(capture, n - 1)
        tool_call_labeller(capture, n - 1)
    assert timeline.copies == copies


def test_a_card_for_arguments_5000_levels_deep():
    text = "[" * 5_000 + "]" * 5_000
    payloads = [{"type": "message_start", "message": {
        "id": "m", "type": "message", "role": "assistant", "model": "x", "content": [],
        "usage": {"input_tokens": 1, "output_tokens": 1}}},
        {"type": "content_block_start", "index": 0, "content_block": {
            "type": "tool_use", "id": "toolu_deep", "name": "nest", "input": {}}}]
    payloads += [{"type": "content_block_delta", "index": 0,
                  "delta": {"type": "input_json_delta", "partial_json": text[i:i + 20]}}
                 for i in range(0, len(text), 20)]
    payloads += [{"type": "content_block_stop", "index": 0}, {"type": "message_stop"}]
    capture = anthropic(payloads, name="deep-card")
    n = len(capture.events)
    for index in (n // 4, n // 2, n - 3, 10, n - 1):      # forward, back, to the end
        state = tool_calls_at(capture, index)
        assert state.calls[0].name == "nest"
        assert "entries" in state.text() and 'class="rtw-tool-card"' in state.html()
    assert state.calls[0].state == "complete"


def test_the_current_call_is_the_one_the_events_changes_addressed():
    capture = cap("anthropic-messages/parallel-tools")
    i = next(k for k in range(len(capture.events) - 1)
             if any(tool_calls_at(capture, k).current))
    assert any(tool_calls_at(capture, i).current)
    timeline = timeline_for(capture)
    timeline.changes_of(i)
    kept = timeline._changes[i]
    try:
        timeline._changes[i] = []          # this event changed nothing: no call is current
        assert not any(tool_calls_at(capture, i).current)
    finally:
        timeline._changes[i] = kept


# -- what the server's own tools wrote --------------------------------------------------


def test_a_server_tools_result_shows_under_the_call_it_answers_once_it_arrived():
    cap = load("anthropic-messages/web-search")
    start = next(i for i, e in enumerate(cap.events) if '"web_search_tool_result"' in e.data)
    before, after = tool_calls_at(cap, start - 1), tool_calls_at(cap, start)
    assert before.outputs == [] and "web_search_tool_result" not in before.text()
    [output] = after.outputs
    assert output.answers == after.calls[0].call_id
    lines = after.text().splitlines()
    at = next(i for i, line in enumerate(lines) if "web_search_tool_result" in line)
    # Whole in its start event; arrived once its block stops.
    assert lines[at].startswith("  ↳ web_search_tool_result · ⋯ arriving · 1,832 characters: ")
    assert lines[at - 1].startswith("  1 field settled")     # under the call's own card
    assert "  ↳ web_search_tool_result · ✓ arrived" in tool_calls_at(cap, start + 1).text()
    assert 'class="rtw-tool-output"' in after.html()


def test_server_outputs_that_answer_no_call_are_shown_on_their_own():
    text = tool_calls_at(load("anthropic-messages/code-execution-pause"), None).text()
    assert '◆ container_upload · ✓ arrived · 45 characters: {"file_id": ' in text
    assert "  ↳ bash_code_execution_tool_result · ✓ arrived" in text
    listing = tool_calls_at(load("anthropic-messages/mcp-listing-window-full"), None).text()
    assert '◆ mcp_tool_listing · ✓ arrived' in listing and '"mcp_server_name": "tides"' in listing
    assert "  ↳ mcp_tool_result · ✓ arrived · 56 characters" in listing


def test_server_output_text_is_escaped_and_bounded():
    data = {"type": "web_fetch_tool_result", "tool_use_id": "srv_1",
            "content": {"type": "web_fetch_result", "url": "https://x.example/<script>",
                        "content": "<img src=x onerror=alert(1)>" + "a" * 5000}}
    events = [
        {"type": "message_start", "message": {"id": "m", "type": "message", "role": "assistant",
                                              "content": [], "model": "x", "stop_reason": None,
                                              "usage": {"input_tokens": 1, "output_tokens": 1}}},
        {"type": "content_block_start", "index": 0,
         "content_block": {"type": "server_tool_use", "id": "srv_1", "name": "web_fetch",
                           "input": {}}},
        {"type": "content_block_stop", "index": 0},
        {"type": "content_block_start", "index": 1, "content_block": data},
        {"type": "content_block_stop", "index": 1},
        {"type": "message_delta", "delta": {"stop_reason": "end_turn"},
         "usage": {"output_tokens": 2}},
        {"type": "message_stop"}]
    body = "".join(f"event: {e['type']}\ndata: {json.dumps(e)}\n\n" for e in events)
    cap = from_bytes(body.encode(), name="fetch", sidecar={"wire": "anthropic-messages"})
    state = tool_calls_at(cap, None)
    html = state.html()
    assert "<script>" not in html and "<img" not in html and "&lt;img" in html
    line = next(line for line in state.text().splitlines() if "web_fetch_tool_result" in line)
    assert len(line) < 260 and line.endswith("…")


# -- what ends a call: the accumulator says it, in its wire's words ------------------------


def interactions_call(arguments: str):
    """A Gemini Interactions stream whose function call's arguments arrive whole in one
    delta, then its step's stop."""
    from lesson_lib.wires import gemini_interactions as gi
    payloads = [
        {"event_type": gi.INTERACTION_CREATED, "interaction": {"id": "v1", "status": "in_progress"}},
        {"event_type": gi.STEP_START, "index": 0,
         "step": {"id": "c1", "type": gi.FUNCTION_CALL_STEP, "name": "get_weather",
                  "arguments": {}}},
        {"event_type": gi.STEP_DELTA, "index": 0,
         "delta": {"type": "arguments_delta", "arguments": arguments}},
        {"event_type": gi.STEP_STOP, "index": 0}]
    body = "".join(f"event: {p['event_type']}\ndata: {json.dumps(p)}\n\n" for p in payloads)
    return from_bytes(body.encode(), name="interactions-call", sidecar={"wire": gi.WIRE})


def test_a_whole_call_on_the_interactions_wire_waits_for_its_step_s_stop():
    # Its step type is ``function_call``, as a Responses item's is: the card names the
    # Interactions wire's end (step.stop), not function_call_arguments.done.
    state = show_tool_calls(interactions_call('{"city": "Paris"}'), at=2).state
    assert [v.state for v in state.calls] == ["forming"]
    assert "the text parses now, but only step.stop makes the call final" in state.text()


@pytest.mark.parametrize("capture", [c for c in CORPUS if c.status < 300], ids=lambda c: c.key)
def test_every_call_s_accumulator_says_what_ends_it(capture):
    history = timeline_for(capture)
    ends = history.end()
    live = history.accumulator_at(len(capture.events))
    for view in [*ends.tool_calls, *live.tool_calls()]:
        assert view.ended_by, (capture.key, view.kind, view.address)


# -- a view takes a state: the accumulator's history ------------------------------------------


def test_the_cards_read_a_history_given_to_them_and_say_what_the_capture_path_says():
    from lesson_lib.accumulate.history import History
    from lesson_lib.views.tool_card import tool_calls_in
    capture = cap("anthropic-messages/text-then-tool")
    mine = History(capture, every=4)
    for at in (0, 20, 34, None):
        assert show_tool_calls(mine, at=at).state.text() == \
            show_tool_calls(capture, at=at).state.text()
    assert mine.feeds > 0                   # the history handed in is the one read
    assert tool_calls_in(mine, 20).text() == tool_calls_at(capture, 20).text()
