"""Anthropic captures of client tool calls: a tool_use slot and its arguments forming.

The documentation's own get_weather call, text followed by a call whose
arguments arrive one key at a time, two parallel calls, a tool without
parameters, and a file write whose single argument is a 24 KB string.
"""

from __future__ import annotations

from .anthropic_requests import (
    CLOCK_TOOL,
    FLIGHTS_TOOL,
    WEATHER_TOOL,
    WRITE_FILE_TOOL,
    climate_module,
    request,
    user,
)
from .anthropic_writer import HELPER, AnthropicWriter, Scenario, token_estimate, tool_json


def get_weather(w: AnthropicWriter, rid: str) -> Scenario:
    """The documentation's get_weather call at index 1, after a text block."""
    text = "Let me look up the current weather in San Francisco for you."
    tool_id = w.ident("toolu_01T1", 20)
    w.message_start(model="claude-sonnet-4-6", message_id=w.message_id(), input_tokens=412)
    w.text_block(0, text, ping_probability=1.0)
    w.tool_use_start(1, tool_id, "get_weather")
    fragments = ['{"location":', ' "San Fra', 'ncisco,', ' CA"}']
    w.input_json(1, [(fragments[0], w.pause((300.0, 900.0)))]
                 + [(f, w.pause((6.0, 28.0))) for f in fragments[1:]])
    w.block_stop(1)
    w.message_delta(stop_reason="tool_use", output_tokens=61, input_tokens=412)
    w.message_stop()
    value = {"location": "San Francisco, CA"}
    return Scenario(
        demonstrates="A tool call at index 1: name and id first, arguments as JSON fragments.",
        request=request("claude-sonnet-4-6",
                        [user("What's the weather like in San Francisco right now?")],
                        tools=[WEATHER_TOOL]),
        based_on=("The get_weather tool_use example of Anthropic's streaming documentation, "
                  "as quoted in the lesson text (index 1, id toolu_01T1..., fragments "
                  "'{\"location\":' and ' CA\"}'). Differs: a text block is added at index "
                  "0 (the quote starts at index 1); the quoted fragments are invalid JSON "
                  "as trimmed, so two fragments are added between them to make "
                  "{\"location\": \"San Francisco, CA\"}; the ids are full length; tool_use "
                  "carries caller as current streams do."),
        sdk={"helper": HELPER, "raises": None, "text": text,
             "final": {"stop_reason": "tool_use", "content.1.id": tool_id,
                       "content.1.name": "get_weather", "content.1.input": value},
             "note": "returns the Message with the tool input parsed into a dict"},
    )


def text_then_tool(w: AnthropicWriter, rid: str) -> Scenario:
    """Text, then a tool call whose six arguments form one key at a time."""
    text = ("Sure — I'll search round-trip flights from Austin (AUS) to Tokyo for two "
            "adults, 14–28 March. This can take a few seconds.")
    value = {"origin": "AUS", "destination": "TYO", "depart_date": "2027-03-14",
             "return_date": "2027-03-28", "adults": 2, "cabin": "economy"}
    tool_id = w.tool_id()
    w.message_start(model="claude-sonnet-4-6", message_id=w.message_id(), input_tokens=1187,
                    cache_read=0, output_tokens=3)
    w.text_block(0, text, ping_probability=0.8)
    w.maybe_ping(0.5)
    w.tool_use_block(1, tool_id, "search_flights", value, after_ms=w.pause((40.0, 160.0)))
    out = token_estimate(text) + 78
    w.message_delta(stop_reason="tool_use", output_tokens=out, input_tokens=1187)
    w.message_stop()
    return Scenario(
        demonstrates="Text, then a tool call whose arguments arrive one key at a time, "
                     "with pauses of 0.3-1.5 s between keys.",
        request=request("claude-sonnet-4-6", [user(
            "Find me round-trip flights from Austin to Tokyo for two adults, leaving "
            "March 14 and coming back March 28, 2027. Economy is fine.")],
            tools=[FLIGHTS_TOOL]),
        based_on=("The shape of recorded text-then-tool_use streams (the anthropic-sdk-python "
                  "tool_use fixture): text block, tool_use with input {}, a first empty "
                  "partial_json, then fragments cut anywhere. Differs: six arguments instead "
                  "of one, paced by the documented one-key-at-a-time pauses."),
        sdk={"helper": HELPER, "raises": None, "text": text,
             "final": {"stop_reason": "tool_use", "content.1.name": "search_flights",
                       "content.1.input": value},
             "note": "returns the Message; the input is re-parsed from the whole buffer "
                     "on every fragment, and the last parse is the full object"},
    )


def parallel_tools(w: AnthropicWriter, rid: str) -> Scenario:
    """Two get_weather calls in one message, each in its own slot."""
    text = "I'll check both cities at the same time."
    values = [{"location": "Lyon, France"}, {"location": "Montréal, Canada"}]
    ids = [w.tool_id(), w.tool_id()]
    w.message_start(model="claude-opus-4-6", message_id=w.message_id(), input_tokens=436)
    w.text_block(0, text, ping_probability=1.0)
    for slot, (tool_id, value) in enumerate(zip(ids, values, strict=True), start=1):
        w.tool_use_block(slot, tool_id, "get_weather", value, caller=False)
        w.maybe_ping(0.5)
    w.message_delta(stop_reason="tool_use", output_tokens=112)
    w.message_stop()
    return Scenario(
        demonstrates="Text, then two parallel tool calls at indexes 1 and 2, each with its "
                     "own input_json_delta fragments.",
        request=request("claude-opus-4-6",
                        [user("Compare the weather in Lyon and Montréal today.")],
                        tools=[WEATHER_TOOL]),
        based_on=("Recorded parallel tool_use streams (simonw/llm-anthropic's two-call "
                  "cassette): one tool_use block after another, each opened, filled and "
                  "stopped before the next. Uses the older payload layout (id before model, "
                  "message_delta usage with output_tokens only, no caller). Differs: real "
                  "arguments, one of them non-ASCII."),
        sdk={"helper": HELPER, "raises": None, "text": text,
             "final": {"stop_reason": "tool_use", "content.1.id": ids[0],
                       "content.1.input": values[0], "content.2.id": ids[1],
                       "content.2.input": values[1]},
             "note": "returns both calls, each input parsed from its own slot's fragments"},
    )


def tool_no_params(w: AnthropicWriter, rid: str) -> Scenario:
    """A call to a tool without parameters: one empty fragment, input {}."""
    tool_id = w.tool_id()
    w.message_start(model="claude-haiku-4-5", message_id=w.message_id(), input_tokens=583,
                    output_tokens=38, geo="not_available")
    w.tool_use_start(0, tool_id, "get_current_time")
    w.ping()
    w.input_json(0, [("", w.next_gap())])
    w.block_stop(0)
    w.message_delta(stop_reason="tool_use", output_tokens=38, input_tokens=583)
    w.message_stop()
    return Scenario(
        demonstrates="A tool with no parameters: the only argument fragment is \"\", "
                     "which is not JSON; the input is {}.",
        request=request("claude-haiku-4-5", [user("What time is it where I am?")],
                        max_tokens=512, tools=[CLOCK_TOOL]),
        based_on=("simonw/llm-anthropic's recorded no-argument tool calls: tool_use at "
                  "index 0 with caller, a ping, one partial_json \"\", stop; message_start "
                  "output_tokens already the final count. Differs: one call instead of two."),
        sdk={"helper": HELPER, "raises": None, "text": "",
             "final": {"stop_reason": "tool_use", "content.0.name": "get_current_time",
                       "content.0.input": {}},
             "note": "returns input {} (the start event's value): the empty fragment is "
                     "never parsed"},
    )


def write_file_tool(w: AnthropicWriter, rid: str) -> Scenario:
    """A write_file call whose ~24 KB content argument streams in ~20-byte fragments."""
    text = ("I'll create `climate_normals.py` with a table of monthly normals and two "
            "small lookup helpers.")
    module = climate_module()
    value = {"path": "climate_normals.py", "content": module}
    tool_id = w.tool_id()
    w.message_start(model="claude-sonnet-4-6", message_id=w.message_id(), input_tokens=1302,
                    cache_read=2816)
    w.text_block(0, text, ping_probability=1.0)
    deltas = w.tool_use_block(1, tool_id, "write_file", value, sizes=(14, 26))
    raw, _ = tool_json(value)
    w.message_delta(stop_reason="tool_use", input_tokens=1302, cache_read=2816,
                    output_tokens=token_estimate(text) + token_estimate(raw))
    w.message_stop()
    return Scenario(
        demonstrates="A file-writing tool: a ~24 KB content string streamed in ~20-byte "
                     f"input_json_delta fragments ({deltas:,} deltas).",
        request=request("claude-sonnet-4-6", [user(
            "Write a Python module climate_normals.py with monthly mean temperatures and "
            "rainfall for about twenty cities, as a list of dicts, plus a helper to look "
            "one up.")], max_tokens=16000, tools=[WRITE_FILE_TOOL]),
        based_on=("The tool_use shape of recorded streams, scaled up: one long string "
                  "argument as a coding agent's file write produces it. Fragments are cut "
                  "anywhere, including inside escapes (\\n, \\\") and next to non-ASCII "
                  "characters."),
        sdk={"helper": HELPER, "raises": None, "text": text,
             "final": {"stop_reason": "tool_use", "content.1.name": "write_file",
                       "content.1.input.path": "climate_normals.py"},
             "note": "returns the whole file; along the way it re-parsed the growing "
                     "argument buffer once per fragment"},
    )


CAPTURES = {
    "get-weather": get_weather,
    "text-then-tool": text_then_tool,
    "parallel-tools": parallel_tools,
    "tool-no-params": tool_no_params,
    "write-file-tool": write_file_tool,
}
