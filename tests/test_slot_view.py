"""The slot view: boxes per slot on every capture, escaping, states, truncation, the counter,
and the player with the slot pane plugged in."""

from __future__ import annotations

import json
import re

import pytest

from lesson_lib.accumulate import labels
from lesson_lib.accumulate.base import Slot
from lesson_lib.capture.captures import corpus, from_bytes, load
from lesson_lib.views import Player, TablePane
from lesson_lib.views.slot_view import (
    FAMILY_STYLES,
    TAIL,
    SlotPane,
    address_text,
    family,
    show_slots,
    slot_html,
    slot_labeller,
    slot_text,
    slots_html,
    slots_text,
)

CORPUS = corpus()


def cap(key):
    return load(key, search_reference=False)


def boxes(html):
    return re.findall(r'<div class="rtw-slot rtw-slot-(\w+)"[^>]*data-kind="([^"]*)"[^>]*'
                      r'data-state="([^"]*)"', html)


def anthropic(payloads, name="hand-made"):
    body = "".join(f"event: {p['type']}\ndata: {json.dumps(p)}\n\n" for p in payloads)
    return from_bytes(body.encode(), name=name, sidecar={"wire": "anthropic-messages"})


START = {"type": "message_start", "message": {"id": "m", "type": "message", "role": "assistant",
                                              "content": [], "model": "x"}}


# -- every capture, a few indices ---------------------------------------------------------------


@pytest.mark.parametrize("capture", CORPUS, ids=lambda c: c.key)
def test_renders_every_capture_at_a_few_indices(capture):
    pane = SlotPane()
    n = len(capture.events)
    for index in sorted({0, n // 2, max(0, n - 1)}):
        html = pane(capture, index)
        text = pane.text(capture, index)
        state = pane.state(capture, index)
        assert len(boxes(html)) == len(state.slots)
        assert text.splitlines()[0] == state.caption
        for slot in state.slots:
            assert address_text(slot.address) in text
        assert "<script" not in html.lower()


def test_http_error_capture_has_no_slots_and_says_why():
    capture = cap("anthropic-messages/http-529-overloaded")
    pane = SlotPane()
    assert boxes(pane(capture, 0)) == []
    text = pane.text(capture, 0)
    assert "no events" in text and "http_error: HTTP 529" in text
    assert slot_labeller(capture, 0).startswith("no events · HTTP 529")


# -- escaping -------------------------------------------------------------------------------------


def test_model_text_is_escaped():
    capture = cap("anthropic-messages/html-in-text")
    raw = show_slots(capture, tail=100_000).slots[0].content
    assert "<script>" in raw                      # the capture really carries markup
    html = show_slots(capture, tail=100_000)._repr_html_()
    assert "<script>" not in html and "&lt;script&gt;" in html
    assert "<img" not in html


def test_hostile_names_and_ids_are_escaped_in_attributes_too():
    hostile = '"><img src=x onerror=alert(1)>'
    capture = anthropic([
        START,
        {"type": "content_block_start", "index": 0,
         "content_block": {"type": "tool_use", "id": hostile, "name": hostile, "input": {}}},
        {"type": "content_block_delta", "index": 0,
         "delta": {"type": "input_json_delta", "partial_json": '{"q": "<b>&</b>"}'}},
        {"type": "content_block_stop", "index": 0},
        {"type": "message_stop"},
    ])
    html = SlotPane()(capture, 3)
    assert "<img" not in html and "<b>" not in html
    assert "&quot;&gt;&lt;img" in html and "&lt;b&gt;&amp;&lt;/b&gt;" in html


# -- states -------------------------------------------------------------------------------------


def test_max_tokens_inside_tool_json_leaves_the_tool_block_never_closed():
    capture = cap("anthropic-messages/max-tokens-in-tool-json")
    pane = SlotPane()
    last = len(capture.events) - 1
    assert [(s.kind, s.state) for s in pane.state(capture, last).slots] == \
           [("text", "closed"), ("tool_use", "never closed")]
    assert ("tool", "tool_use", "never closed") in boxes(pane(capture, last))
    text = pane.text(capture, last)
    assert "create_checklist · id toolu_01zjRyVxCVZHtHpcJmMCtkUn · never closed" in text
    assert "input (partial):" in text and "block_never_stopped" in text
    # one event earlier the stream had not ended: the block is simply open
    assert [s.state for s in pane.state(capture, last - 1).slots] == ["closed", "open"]


def test_a_cut_stream_leaves_its_tool_block_never_closed():
    capture = cap("anthropic-messages/cut-in-tool-json")
    view = show_slots(capture)
    assert [(s.kind, s.state) for s in view.slots] == [("text", "closed"),
                                                        ("tool_use", "never closed")]
    assert view.slots[1].content == '{"title": "Dinner with Léa at Chez Jan'
    text = repr(view)
    assert text.splitlines()[0].endswith("(the end of the stream)")
    assert "no_terminal" in text and "undispatched_bytes" in text


def test_states_follow_the_stops_on_parallel_tools():
    capture = cap("anthropic-messages/parallel-tools")
    states = {i: [s.state for s in show_slots(capture, i).slots] for i in (7, 12, 13, 14, 20)}
    assert states == {7: ["closed", "open"], 12: ["closed", "open"],
                      13: ["closed", "closed"], 14: ["closed", "closed", "open"],
                      20: ["closed", "closed", "closed"]}


def test_chat_calls_stay_open_until_the_finish_reason():
    capture = cap("openai-chat/parallel-tools-sequential")
    pane = SlotPane()
    finish = next(i for i in range(len(capture.events))
                  if "finish_reason" in slot_labeller(capture, i))
    before = pane.state(capture, finish - 1).slots
    after = pane.state(capture, finish).slots
    assert [s.state for s in before] == ["open", "open"]
    assert [s.state for s in after] == ["closed", "closed"]
    assert [s.input for s in after] == [{"flight_number": "AF1381", "date": "2026-01-16"},
                                        {"iata_code": "CDG"}]


# -- the look: label, badge, border style per kind ----------------------------------------------


@pytest.mark.parametrize("key, index, fam, border", [
    ("anthropic-messages/hello", 0, "text", "solid"),
    ("anthropic-messages/get-weather", 1, "tool", "dashed"),
    ("anthropic-messages/thinking-signature", 0, "thinking", "dotted"),
    ("anthropic-messages/web-search", 2, "result", "double"),
    ("openai-responses/reasoning-summary", 0, "thinking", "dotted"),
    ("openai-chat/tool-call", 0, "tool", "dashed"),
])
def test_each_kind_has_a_word_a_badge_and_a_border_style(key, index, fam, border):
    slot = show_slots(cap(key)).slots[index]
    assert family(slot.kind) == fam
    html = slot_html(slot)
    style = FAMILY_STYLES[fam]
    assert f"{border} {style.colour}" in html
    assert f'<span class="rtw-slot-family">{style.word}</span>' in html
    assert '<span class="rtw-slot-badge"' in html and address_text(slot.address) in html
    assert 'role="group" aria-label=' in html


def test_unknown_kinds_get_the_double_border_and_their_own_name():
    slot = Slot(3, "brand_new_block", "[3] brand_new_block", "x", "closed")
    assert family(slot.kind) == "other"
    assert "double" in slot_html(slot) and "brand_new_block" in slot_html(slot)
    assert slot_text(slot) == "[3] brand_new_block · closed\n    x"


def test_addresses_in_each_wires_terms():
    assert address_text(1) == "[1]"
    assert address_text((0,)) == "item [0]"
    assert address_text((1, 0)) == "item [1] · part [0]"
    assert address_text((0, "summary", 1)) == "item [0] · summary [1]"
    assert address_text((0, "content")) == "choice 0 · content"
    assert address_text((1, ("tool", 2))) == "choice 1 · tool_calls[2]"


# -- truncation: the cost of a step does not grow with the content ------------------------------


def test_long_content_is_cut_to_its_tail_with_a_note():
    capture = cap("anthropic-messages/write-file-tool")
    view = show_slots(capture)
    content = view.slots[1].content
    assert len(content) > 10 * TAIL
    text = repr(view)
    assert f"… {len(content) - TAIL:,} earlier characters not shown" in text
    html = view._repr_html_()
    assert len(html) < 12_000
    tail = content[-TAIL:]
    assert slot_text(view.slots[1]).splitlines()[2:-1] == \
           ["    " + line for line in tail.split("\n")]


def test_stepping_costs_one_feed_per_event_and_bounded_html():
    capture = cap("anthropic-messages/write-file-tool")
    pane = SlotPane()
    sizes = []
    for index in range(len(capture.events)):
        sizes.append(len(pane(capture, index)))
    timeline = pane.timeline(capture)
    assert timeline.feeds == len(capture.events)          # one feed per event, no replays
    assert timeline.copies <= len(capture.events) // timeline.every + 2   # checkpoints + the end
    assert max(sizes) < 12_000
    assert max(sizes[-200:]) < 2 * max(sizes[200:400])


def test_static_renderers_agree_with_the_view():
    view = show_slots(cap("anthropic-messages/parallel-tools"), 15)
    assert slots_text(view.slots) in repr(view)
    assert len(boxes(slots_html(view.slots))) == 3
    assert slots_text([]) == "(no slots: nothing has been addressed yet)"


def test_plain_text_is_deterministic_and_exact():
    text = repr(show_slots(cap("anthropic-messages/parallel-tools"), 15))
    assert text == (
        "anthropic-messages/parallel-tools: after event 15 of 23\n"
        "[0] text · closed\n"
        "    I'll check both cities at the same time.\n"
        "[1] tool_use get_weather · id toolu_01GaXqKZT6736J4gBFaaUPTs · closed\n"
        '    {"location": "Lyon, France"}\n'
        '    input: {"location": "Lyon, France"}\n'
        "[2] tool_use get_weather · id toolu_01xomU8QFjDzohnVDeRuq4cR · open\n"
        "    (empty)")


# -- the counter ---------------------------------------------------------------------------------


@pytest.mark.parametrize("key, index, label", [
    ("anthropic-messages/parallel-tools", 12,
     "event 12 of 0-22 · block [1] tool_use · input_json_delta"),
    ("anthropic-messages/parallel-tools", 14,
     "event 14 of 0-22 · block [2] tool_use · content_block_start"),
    ("anthropic-messages/parallel-tools", 21,
     "event 21 of 0-22 · message_delta · stop_reason tool_use"),
    ("anthropic-messages/parallel-tools", 2, "event 2 of 0-22 · ping"),
    ("openai-responses/weather-turn-step1", 20,
     "event 20 of 0-34 · item [1] function_call · function_call_arguments.delta"),
    ("openai-responses/weather-turn-step1", 0, "event 0 of 0-34 · response.created"),
    ("openai-responses/text", 5, None),
    ("openai-chat/parallel-tools-interleaved", 6,
     "event 6 of 0-39 · choice 0 · tool_calls[1] · arguments"),
    ("openai-chat/parallel-tools-interleaved", 5,
     "event 5 of 0-39 · choice 0 · tool_calls[1] · start get_air_quality"),
    ("openai-chat/parallel-tools-interleaved", 37,
     "event 37 of 0-39 · choice 0 · finish_reason tool_calls"),
    ("openai-chat/parallel-tools-interleaved", 38, "event 38 of 0-39 · usage"),
    ("openai-chat/parallel-tools-interleaved", 39, "event 39 of 0-39 · [DONE]"),
    ("openai-chat/text-usage", 3, "event 3 of 0-68 · choice 0 · content"),
])
def test_labeller_on_the_three_wires(key, index, label):
    got = slot_labeller(cap(key), index)
    if label is None:      # a part event: the item, then the part
        assert re.fullmatch(r"event 5 of 0-\d+ · item \[\d\] message · part \[0\] · .+", got), got
    else:
        assert got == label


def test_labeller_clamps_the_index():
    capture = cap("anthropic-messages/hello")
    assert slot_labeller(capture, 999) == slot_labeller(capture, len(capture.events) - 1)
    assert slot_labeller(capture, -5).startswith("event 0 of 0-")


# -- in the player -------------------------------------------------------------------------------


def test_player_with_the_slot_pane_steps_and_rerenders():
    caps = [cap("anthropic-messages/parallel-tools"), cap("openai-chat/parallel-tools-interleaved")]
    player = Player(caps, panes=[SlotPane(), TablePane(window=5)], labeller=slot_labeller)
    slots_view = player.pane_views[0]
    assert boxes(slots_view.value) == []                     # after message_start: nothing yet
    before = player.steps_rendered
    player.index = 13
    assert player.steps_rendered == before + 1
    assert [b[2] for b in boxes(slots_view.value)] == ["closed", "closed"]
    assert "event 13 of 0-22 · block [1] tool_use · content_block_stop" in player.counter.value
    player.slider.value = 9
    assert [b[2] for b in boxes(slots_view.value)] == ["closed", "open"]
    assert "{&quot;lo" in slots_view.value
    player.step(1)
    assert player.index == 10 and "Lyo" in slots_view.value
    text = player.render_text()
    assert text.splitlines()[0] == ("anthropic-messages/parallel-tools: event 10 of 0-22 · "
                                    "block [1] tool_use · input_json_delta")
    assert "[Slots]" in text and "[1] tool_use get_weather" in text
    player.select("openai-chat/parallel-tools-interleaved")
    player.index = 37
    assert [b[2] for b in boxes(slots_view.value)] == ["closed", "closed", "closed"]
    assert "choice 0 · finish_reason tool_calls" in player.label()
    html = player.render_html()
    assert 'aria-live="polite"' in html and "rtw-slot" in html
    bundle = player._repr_mimebundle_()
    assert bundle["text/plain"].startswith("openai-chat/parallel-tools-interleaved: event 37")


def test_a_player_with_two_panes_builds_one_history_for_a_capture(monkeypatch):
    from lesson_lib.views import ToolCardPane, replays

    built = []
    real = replays.History

    def counting(capture, **kwargs):
        built.append(capture.key)
        return real(capture, **kwargs)

    monkeypatch.setattr(replays, "History", counting)
    monkeypatch.setattr(replays, "_REPLAYS", [])
    capture = load("anthropic-messages/parallel-tools")
    player = Player([capture], panes=[SlotPane(), ToolCardPane()])
    for _ in range(5):
        player.step(1)
    assert built == [capture.key]
    assert SlotPane().timeline(capture) is replays.history_for(capture)


def test_the_labels_come_from_the_accumulator_side():
    from lesson_lib.views import replays

    capture = load("anthropic-messages/parallel-tools")
    n = len(capture.events)
    words = labels.labels_for(capture)
    assert words == list(replays.labels_of(capture))
    assert replays.labels_of(capture) is replays.labels_of(capture)   # read once
    assert slot_labeller(capture, 3) == f"event 3 of 0-{n - 1} · {words[3]}"


@pytest.mark.parametrize("key", ["anthropic-messages/parallel-tools",
                                 "openai-chat/parallel-tools-interleaved"])
def test_the_labels_are_read_from_the_changes(key):
    import dataclasses

    from lesson_lib.accumulate.changes import SlotOpened
    from lesson_lib.accumulate.history import History

    history = History(load(key))
    before = labels.event_labels(history)
    i, opened = next((i, c) for i in range(len(history)) for c in history.changes_of(i)
                     if type(c) is SlotOpened and c.takes_input)
    history._changes[i] = [dataclasses.replace(c, slot_kind="renamed_kind", name="renamed")
                           if c is opened else c for c in history._changes[i]]
    after = labels.event_labels(history)
    assert after != before
    assert [k for k in range(len(after)) if after[k] != before[k]]
    assert "renamed" in after[i]


def test_responses_labels_come_from_the_changes():
    from lesson_lib.accumulate.labels import labels_for
    labels = labels_for(load("openai-responses/reasoning-summary"))
    assert "item [0] reasoning · summary [0] · reasoning_summary_text.delta" in labels
    assert any(lb.startswith("item [1] message · part [0] · output_text.delta") for lb in labels)
    # A resumed stream never announces its item: the item its first delta assumed is named.
    resumed = labels_for(load("openai-responses/background-resumed"))
    assert resumed[0] == "item [0] message · part [0] · output_text.delta"


def test_the_slots_read_a_history_given_to_them_and_say_what_the_capture_path_says():
    from lesson_lib.accumulate.history import History
    from lesson_lib.views.slot_view import show_slots
    capture = load("anthropic-messages/text-then-tool", search_reference=False)
    mine = History(capture, every=4)
    for at in (0, 20, None):
        assert str(show_slots(mine, at=at)) == str(show_slots(capture, at=at))
    assert mine.feeds > 0                   # the history handed in is the one read
