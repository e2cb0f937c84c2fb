"""The loop's timeline: tool bars over the stream, the head start said in words, the same
pixels every run, and labels from data drawn literally."""

from __future__ import annotations

import asyncio

import pytest
from matplotlib.text import Text

from lesson_lib.capture.captures import load
from lesson_lib.turn.fake_tools import weather_tool
from lesson_lib.turn.loop import LoopResult, ToolRun, run_turn
from lesson_lib.turn.reduce import initial
from lesson_lib.views import tool_timeline_figure, tool_timeline_text
from lesson_lib.views.timeline_plot import figure_png
from lesson_lib.views.turn_timeline import head_start_words, run_label


def weather_loop(wire: str) -> LoopResult:
    steps = [load(f"{wire}/weather-turn-step1"), load(f"{wire}/weather-turn-step2")]
    return asyncio.run(run_turn(steps, [weather_tool()], route="auto"))


def texts(fig) -> list[str]:
    ax = fig.axes[0]
    return [t.get_text() for t in ax.texts]


@pytest.mark.parametrize("wire", ["anthropic-messages", "openai-responses"])
def test_a_tool_starts_before_its_stream_ends_and_the_figure_says_by_how_much(wire):
    result = weather_loop(wire)
    step1_end = next(end for step, _, end in result.streams if step == 1)
    first, head = result.head_start()[0]
    assert first.start < step1_end and head == pytest.approx(step1_end - first.start)
    fig = tool_timeline_figure(result)
    words = head_start_words(head)
    assert words.startswith("started ") and words.endswith(" before the stream ended")
    assert any(words in t for t in texts(fig))
    assert f"{run_label(first)}: step 1" in tool_timeline_text(result)
    assert "get_weather(Paris, France)" in texts(fig)


def test_on_chat_a_tool_can_only_start_as_the_stream_ends():
    result = weather_loop("openai-chat")
    assert all(abs(head) < 0.5 for _, head in result.head_start())
    assert "started as the stream ended" in tool_timeline_text(result)


def test_the_same_pixels_every_run():
    one = figure_png(tool_timeline_figure(weather_loop("anthropic-messages")))
    two = figure_png(tool_timeline_figure(weather_loop("anthropic-messages")))
    assert one == two


def test_labels_from_data_are_drawn_literally():
    run = ToolRun(1, "s1.b0", "c1", "pay_$x$", {"amount": "$5 ^{2}"}, 10.0, 50.0, "error")
    result = LoopResult([], initial(), [run], [(1, 0.0, 80.0)])
    fig = tool_timeline_figure(result, title="cost $a$")
    label = "pay_$x$($5 ^{2})"
    assert label in texts(fig)
    figure_png(fig)          # draws without a mathtext error
    dollars = [t for t in fig.findobj(Text) if "$" in t.get_text()]
    assert {t.get_text() for t in dollars} == {label, "cost $a$"}
    assert not any(t.get_parse_math() for t in dollars)
    assert "failed, started 70 ms before the stream ended" in tool_timeline_text(result)


def test_an_empty_run_is_said():
    result = LoopResult([], initial(), [], [])
    assert tool_timeline_text(result) == "No stream was played."
    figure_png(tool_timeline_figure(result))
