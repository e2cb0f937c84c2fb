"""Views take states: `TurnPlayer` steps through a turn given as a state, its turn events
or a loop's result, with no capture anywhere; its panes render the state they are given."""

from __future__ import annotations

import ast
import asyncio
import inspect

from lesson_lib.capture.captures import load
from lesson_lib.draw import draw
from lesson_lib.turn.events import (
    BlockDelta,
    BlockEnded,
    BlockStarted,
    Finish,
    StepFinished,
    StepStarted,
    TurnFinished,
    TurnStarted,
)
from lesson_lib.turn.fake_tools import weather_tool
from lesson_lib.turn.loop import run_turn
from lesson_lib.turn.reduce import reduce_all
from lesson_lib.turn.run import turn_events
from lesson_lib.views import TurnPane, TurnPlayer, turn_text
from lesson_lib.views import turn_player as turn_player_module
from lesson_lib.views.chat_pane import ChatPane, chat_html

# A turn no capture ever held: made of turn events, as an application's own loop makes them.
EVENTS = [TurnStarted(0, turn="mine"), StepStarted(1, step=1, wire="anthropic-messages"),
          BlockStarted(2, block="s1.b0", step=1, block_kind="text"),
          BlockDelta(3, block="s1.b0", fragment="# Paris\n\nLight rain, "),
          BlockDelta(4, block="s1.b0", fragment="<b>14 °C</b>."),
          BlockEnded(5, block="s1.b0"),
          StepFinished(6, step=1, finish=Finish("stop"), ended="proper"),
          TurnFinished(7, outcome="completed")]


def test_a_turn_player_is_built_from_turn_events_with_no_capture():
    player = TurnPlayer(EVENTS)
    final = reduce_all(EVENTS)
    assert player.index == final.count == len(EVENTS)
    for i in (0, 3, 5, len(EVENTS)):
        player.index = i
        state = final.at(i)
        text = player.render_text()
        assert draw(state).text in text and turn_text(state) in text
        assert player.pane_views[0].value == ChatPane().render(state)
        assert player.pane_views[1].value == TurnPane().render(state)
    player.index = 4
    assert player.label() == "Turn: 4 of 8 turn events · block_delta s1.b0"
    player.step()                            # the fragment with model-written HTML in it
    html = player.render_html()
    assert "&lt;b&gt;14" in html and "<b>14" not in html


def test_the_buttons_and_the_slider_move_through_the_states():
    player = TurnPlayer(reduce_all(EVENTS), at=2)
    assert player.state.count == 2 and not player.state.blocks
    player.step(2)
    assert player.state.block("s1.b0").text == "# Paris\n\nLight rain, "
    player.step(-99)
    assert player.index == 0 and player.label() == "Turn: 0 of 8 turn events"
    player.forward.click()
    assert player.index == 1
    player.slider.value = 99 if player.slider.max >= 99 else player.slider.max
    assert player.index == len(EVENTS)
    assert player.state.outcome == "completed"


def test_a_loop_result_plays_with_its_tools_runs():
    result = asyncio.run(run_turn([load("anthropic-messages/weather-turn-step1"),
                                   load("anthropic-messages/weather-turn-step2")],
                                  [weather_tool()], route="auto"))
    player = TurnPlayer(result)
    assert player.final is result.state
    assert "tool_execution_finished" in {e.kind for e in result.state.events}
    assert draw(result.state).text in player.render_text()
    assert player._repr_mimebundle_()["text/plain"] == player.render_text()


def test_the_panes_render_the_state_they_are_given():
    state = reduce_all(turn_events(load("openai-responses/weather-turn-step1")))
    for i in (0, state.count // 2, state.count):
        at = state.at(i)
        assert ChatPane(name="Chat").render(at).endswith(chat_html(draw(at)) + "</section>")
        assert ChatPane().render_text(at) == draw(at).text
        assert TurnPane().render_text(at) == turn_text(at)


def test_the_turn_player_never_touches_a_capture():
    tree = ast.parse(inspect.getsource(turn_player_module))
    imported = {node.module or "" for node in ast.walk(tree) if isinstance(node, ast.ImportFrom)}
    imported |= {a.name for node in ast.walk(tree) if isinstance(node, ast.Import)
                 for a in node.names}
    assert not [m for m in imported if "capture" in m], imported
