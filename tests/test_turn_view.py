"""The turn view: the outcome banner never says done for a stream that died, tool cards
show every state from forming to interrupted, model text is escaped, and the player
shows the turn at the slider's event next to the other panes."""

from __future__ import annotations

import asyncio
import re

import pytest

from lesson_lib.breaks import faults
from lesson_lib.capture.captures import corpus, from_bytes, load
from lesson_lib.turn.fake_tools import FakeTool, ToolFailed, weather_tool
from lesson_lib.turn.loop import run_turn
from lesson_lib.turn.reduce import reduce_all
from lesson_lib.turn.run import turn_state
from lesson_lib.turn.summary import forming_fields, outcome_line
from lesson_lib.views import (
    Player,
    RawBytesPane,
    SlotPane,
    TablePane,
    TurnPane,
    render_turn,
    show_turn,
    turn_labeller,
    turn_text,
)
from lesson_lib.views.turn_view import TOOL_STATES, tool_state

WIRES = ("anthropic-messages", "openai-responses", "openai-chat")


def weather(wire):
    return [load(f"{wire}/weather-turn-step1"), load(f"{wire}/weather-turn-step2")]


def banner(html: str) -> str:
    return re.search(r'<div class="rtw-turn-banner"[^>]*data-outcome="([^"]*)"', html).group(1)


def card_states(html: str) -> list[str]:
    return re.findall(r'class="rtw-turn-block rtw-tool-card" data-kind="tool_call" '
                      r'data-state="([^"]*)"', html)


def loop(captures, tools=None, **kw):
    tools = [weather_tool()] if tools is None else tools
    return asyncio.run(run_turn(captures, tools, route="auto", **kw))


# -- the outcome banner -------------------------------------------------------------------


@pytest.mark.parametrize("name, outcome", [
    ("anthropic-messages/hello", "completed"),
    ("anthropic-messages/overloaded-after-text", "failed"),
    ("openai-chat/cut-in-arguments", "truncated"),
    ("anthropic-messages/http-529-overloaded", "failed"),
    ("openai-responses/error-then-failed", "failed"),
])
def test_the_banner_says_the_outcome_and_never_done_for_a_dead_stream(name, outcome):
    state = turn_state(load(name), "auto")
    html = render_turn(state)
    assert banner(html) == outcome == state.outcome
    if outcome != "completed":
        head = html.split('class="rtw-turn-banner"', 1)[1].split("</div>", 1)[0]
        assert "completed" not in head and "done" not in head.replace("not done", "")
    assert turn_text(state).splitlines()[0].startswith("turn · ")


def test_a_turn_under_way_is_in_progress_not_done():
    state = turn_state(weather("anthropic-messages"), "auto")
    for i in range(1, state.count):
        assert banner(render_turn(state.at(i))) == "in_progress", i
    assert banner(render_turn(state)) == "completed"


@pytest.mark.parametrize("wire", WIRES)
def test_every_cut_of_the_weather_step_shows_truncated(wire):
    cap = load(f"{wire}/weather-turn-step1")
    cut = faults.cut_at(cap, len(cap.body) * 2 // 3)
    state = turn_state(cut, "auto")
    html = render_turn(state)
    assert banner(html) == "truncated"
    assert "✂ truncated" in turn_text(state)


def test_a_failure_names_its_scope_and_phase():
    state = turn_state(load("anthropic-messages/overloaded-after-text"), "auto")
    html = render_turn(state)
    assert re.search(r'<li data-scope="provider" data-phase="after_output">', html)
    assert "provider error, after_output" in turn_text(state)


# -- blocks and tool cards ----------------------------------------------------------------


@pytest.mark.parametrize("wire", WIRES)
def test_steps_blocks_and_usage_are_shown(wire):
    state = turn_state(weather(wire), "auto")
    html = render_turn(state)
    assert re.findall(r'class="rtw-turn-step" data-step="(\d)"', html) == ["1", "2"]
    for block in state.blocks:
        assert f'<span class="rtw-turn-badge" title="block id">{block.id}</span>' in html
    assert card_states(html) == ["ready", "ready"]
    total = state.usage
    assert re.search(rf'<th scope="row">turn</th><td>{total.input}</td><td>{total.output}</td>',
                     html)
    text = turn_text(state)
    assert "step 1 · " + wire in text and "step 2 · " + wire in text


def test_forming_then_ready_as_the_stream_goes():
    state = turn_state(load("anthropic-messages/weather-turn-step1"), "auto")
    seen = []
    for i in range(state.count + 1):
        for s in card_states(render_turn(state.at(i))):
            if not seen or seen[-1] != s:
                seen.append(s)
    assert seen[0] == "forming" and "ready" in seen


def test_invalid_and_cut_calls_never_run():
    state = turn_state(load("openai-chat/cut-in-arguments"), "auto")
    assert card_states(render_turn(state)) == ["cut"]
    assert "this call never runs" in render_turn(state)
    cap = load("anthropic-messages/max-tokens-in-tool-json")
    assert "invalid" in card_states(render_turn(turn_state(cap, "auto")))


@pytest.mark.parametrize("wire", WIRES)
def test_the_loop_shows_running_then_done_with_the_result(wire):
    result = loop(weather(wire))
    states = set()
    for i in range(result.state.count + 1):
        states.update(card_states(render_turn(result.state.at(i))))
    assert {"ready", "running", "done"} <= states
    final = render_turn(result.state)
    assert card_states(final) == ["done", "done"]
    assert "result (ok)" in final
    assert banner(final) == "completed"
    assert "running" in repr(show_turn(result, at=next(
        e.seq + 1 for e in result.events if e.kind == "tool_execution_started")))


def test_a_failing_tool_and_an_interrupted_one():
    def fails(arguments):
        raise ToolFailed("<script>boom</script>")

    result = loop(weather("anthropic-messages"), [FakeTool("get_weather", fails, 100.0)])
    html = render_turn(result.state)
    assert card_states(html)[:2] == ["failed", "failed"]
    assert "<script>boom" not in html and "&lt;script&gt;boom&lt;/script&gt;" in html
    steps = weather("anthropic-messages")
    end = max(e.t for e in load("anthropic-messages/weather-turn-step1").events if e.t)
    cancelled = loop(steps, [weather_tool(5000.0)], cancel_at=end + 10)
    html = render_turn(cancelled.state)
    assert "interrupted" in card_states(html) and banner(html) == "cancelled"


def test_every_tool_state_has_a_glyph_a_word_and_a_border_besides_its_colour():
    assert set(TOOL_STATES) == {"forming", "ready", "held", "running", "done", "failed",
                                "invalid", "cut", "interrupted"}
    looks = {(s.glyph, s.word, s.border) for s in TOOL_STATES.values()}
    assert len({g for g, _, _ in looks}) == len(TOOL_STATES)
    assert all(s.colour.startswith("var(--rtw-") and "#" in s.colour
               for s in TOOL_STATES.values())


def test_tool_state_reads_call_then_execution():
    state = turn_state(load("openai-chat/weather-turn-step1"), "auto")
    assert [tool_state(b) for b in state.calls] == ["ready", "ready"]


# -- escaping -------------------------------------------------------------------------------


def edited(name: str, old: bytes, new: bytes):
    cap = load(name)
    sidecar = {k: v for k, v in cap.sidecar.items() if k != "chunks"}
    assert old in cap.body
    return from_bytes(cap.body.replace(old, new), name=cap.name + "-edited", sidecar=sidecar)


def test_text_tool_names_and_errors_are_escaped():
    script = b"<script>alert(1)</script>"
    cap = edited("anthropic-messages/weather-turn-step1", b'"name":"get_weather"',
                 b'"name":"' + script + b'"')
    cap = edited_text(cap, b"I'll check", script)
    broken = faults.inject_error(cap, len(cap.events) - 3, {
        "type": "error", "error": {"type": "overloaded_error", "message": script.decode()}})
    state = turn_state(broken, "auto")
    assert state.outcome == "failed" and state.calls
    for html in (render_turn(state), show_turn(broken)._repr_html_(),
                 TurnPane()(broken, len(broken.events) - 1)):
        assert "<script" not in html.lower()
        assert html.count("&lt;script&gt;alert(1)&lt;/script&gt;") >= 3   # text, name, error


def edited_text(cap, old: bytes, new: bytes):
    return from_bytes(cap.body.replace(old, new, 1), name=cap.name, sidecar=cap.sidecar)


def test_html_in_model_text_is_data():
    state = turn_state(load("anthropic-messages/html-in-text"), "auto")
    html = render_turn(state)
    text = "".join(b.text for b in state.blocks if b.kind == "text")
    assert "<img src=x onerror=alert(2)>" in text and "&lt;" in text
    assert "<img" not in html and "<script" not in html
    assert "&lt;img src=x onerror=alert(2)&gt;" in html and "&amp;lt;" in html


# -- notebook and player --------------------------------------------------------------------


def test_show_turn_takes_captures_a_state_or_a_loop_result():
    steps = weather("openai-responses")
    state = turn_state(steps, "auto")
    for source in (steps, state, loop(steps)):
        view = show_turn(source)
        assert view._repr_html_().startswith('<div class="rtw">')
        assert repr(view).startswith("turn · ✔ completed")
    assert repr(show_turn(steps, at=3)).startswith("turn · ⋯ in progress")
    assert show_turn(steps[0]).state.steps[0].step == 1


def test_the_player_shows_the_turn_at_the_sliders_event():
    cap = load("anthropic-messages/weather-turn-step1")
    pane = TurnPane()
    player = Player([cap], panes=[TablePane(), RawBytesPane(), SlotPane(), pane])
    view = player.pane_views[3]
    assert "rtw-pane-view-turn" in view._dom_classes
    player.index = 0
    assert banner(view.value) == "in_progress" and card_states(view.value) == []
    seen = []
    for i in range(len(cap.events)):
        player.index = i
        seen.append(tuple(card_states(view.value)))
        assert view.value == pane(cap, i)
    assert seen[-1] == ("ready", "ready") and banner(view.value) == "completed"
    assert ("forming",) in seen
    assert "[Turn]" in player.render_text() and "render_turn" not in player.render_html()


def test_the_counter_says_what_each_event_meant_for_the_turn():
    cap = load("openai-chat/weather-turn-step1")
    player = Player([cap], panes=[TablePane(), TurnPane()], labeller=turn_labeller)
    n = len(cap.events)
    said = []
    for i in range(n):
        player.index = i
        label = player.label()
        assert label.startswith(f"event {i} of 0-{n - 1} · ") and " · turn: " in label
        said.append(label.split(" · turn: ", 1)[1])
    assert "turn_started" in said[0]
    assert said[-1].endswith("turn_finished completed")
    assert sum(s.count("tool_call_ready") for s in said) == 2


@pytest.mark.parametrize("capture", [c for c in corpus() if c.wire in WIRES],
                         ids=lambda c: c.key)
def test_the_pane_renders_every_capture_at_several_indices(capture):
    pane = TurnPane()
    n = len(capture.events)
    last = None
    for index in sorted({0, n // 2, max(0, n - 1)}):
        state = pane.state(capture, index)
        last = state if last is None else last
        assert state.count >= last.count           # the slider only moves forward here
        last = state
        html = pane(capture, index)
        assert "<script" not in html.lower()
        assert pane.text(capture, index) == turn_text(state)
    final = pane.state(capture, max(0, n - 1))
    assert final.outcome is not None
    whole = turn_state(capture, "auto")
    assert (final.outcome, final.as_dict()["blocks"]) == (whole.outcome, whole.as_dict()["blocks"])


# -- a step that asked for tools, the counter, the warnings -----------------------------------


@pytest.mark.parametrize("key", ["anthropic-messages/weather-turn-step1",
                                 "openai-responses/weather-turn-step1",
                                 "openai-chat/weather-turn-step1"])
def test_a_step_that_asked_for_tools_says_tools_to_run_not_completed(key):
    state = turn_state([load(key)])
    assert state.outcome == "completed"            # the contract's word, kept in --json
    html = render_turn(state)
    banner = re.search(r'<div class="rtw-turn-banner".*?</div>', html).group()
    assert "tools to run" in banner and "completed" not in banner.split(">", 1)[1]
    assert "✔" not in banner
    assert turn_text(state).splitlines()[0].startswith("turn · ⏭ tools to run: ")


def test_once_the_tools_ran_the_banner_waits_for_the_next_step():
    result = asyncio.run(run_turn([load("anthropic-messages/weather-turn-step1")],
                                  [weather_tool()]))
    state = turn_state([load("anthropic-messages/weather-turn-step1")])
    assert "tools to run" in outcome_line(state)
    ran = reduce_all(list(result.events))
    assert outcome_line(ran).startswith("⏭ waiting for the next step: ")
    whole = turn_state([load("anthropic-messages/weather-turn-step1"),
                        load("anthropic-messages/weather-turn-step2")])
    assert outcome_line(whole).startswith("✔ completed: ")


def test_the_counter_names_a_block_once_and_counts_the_warnings():
    cap = load("anthropic-messages/cut-in-tool-json")
    label = turn_labeller(cap, len(cap.events) - 1)
    assert label == ("event 11 of 0-11 · content_block_delta · turn: block_delta, block_ended, "
                     "tool_call_invalid s1.b1, step_finished, turn_finished truncated · "
                     "4 warnings noted")
    assert "noted," not in label


def test_the_turn_pane_lists_what_was_noted():
    state = turn_state([load("anthropic-messages/cut-in-tool-json")])
    html, text = render_turn(state), turn_text(state)
    for code in ("undispatched_bytes", "block_never_stopped", "cut_tool_input", "no_terminal"):
        assert f"· {code}: " in html and f"warning (noted): step 1 · {code}: " in text
    assert "<code>noted</code> events" in html


def test_a_forming_call_shows_lesson_3s_partial_value_with_settled_fields():
    cap = load("anthropic-messages/text-then-tool")
    pane = TurnPane()
    text, html = pane.text(cap, 25), pane(cap, 25)
    assert '"origin": "AUS"  ✔' in text and '"depart_date": "2027-03-14"  ✔' in text
    assert "return_dat" not in text.split("raw input")[0]     # a key shows once its value begins
    assert html.count('data-settled="true"') == 3
    fields = [field for i in range(len(cap.events)) for call in pane.state(cap, i).calls
              if call.call_state == "forming" for field in forming_fields(call)]
    open_strings = [value for _, value, settled in fields if not settled]
    assert open_strings and not any(v.endswith('"') for v in open_strings)  # no closer yet
