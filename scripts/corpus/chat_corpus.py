"""The OpenAI Chat Completions corpus: one constructed capture per thing a lesson shows.

Each function below writes one capture into ``captures/openai-chat/`` with
`ChatStream` and returns its path (the irregular streams are in
`openai_chat_irregular`, structured output in `openai_chat_structured`);
`build` writes them all. Seeds are fixed, so rebuilding gives the same bytes. The envelope follows the
recorded Chat streams in the shared reference captures plus what newer
streams add (``service_tier``, ``obfuscation``, ``usage: null`` on every
chunk); the compatible-server captures follow those servers' habits, and
each sidecar says where a capture goes beyond its model.
"""

from __future__ import annotations

from pathlib import Path

from . import openai_chat_features
from . import weather_turn as weather
from .openai_chat_common import BASE, HELPER, STREAM_USAGE, WIRE, compact, function_tool, ok, user
from .openai_chat_compatible import azure_filter_results, length_then_error, thinking_parts
from .openai_chat_irregular import (
    cut_in_arguments,
    error_mid_stream,
    index_reused_new_id,
    n2_choices,
    parallel_tools_interleaved,
    reasoning_content,
)
from .openai_chat_stream import ChatStream
from .openai_chat_structured import structured_output
from .openai_ids import call_id
from .openai_sidecar import sdk_expectation, write

# -- the captures ---------------------------------------------------------------


def text_usage(root: Path) -> Path:
    """Text, the finish chunk, then the usage chunk with ``choices: []``."""
    answer = ("Sunlight is scattered by the molecules of the air, and short wavelengths scatter "
              "far more than long ones (Rayleigh scattering goes as 1/λ⁴), so blue light reaches "
              "your eyes from every part of the sky. Violet scatters even more, but the Sun emits "
              "less of it and our eyes are less sensitive to it — so the sky looks blue.")
    req = {"model": "gpt-4.1", "messages": user("Explain in two sentences why the sky is blue."),
           **STREAM_USAGE}
    s = ChatStream(201, model="gpt-4.1-2025-04-14", created=1767614402)
    s.opening(after_ms=s.pace.first_token(300, 500))
    s.text(answer, first_ms=s.pace.token(), tear=True)
    s.finish("stop")
    s.usage_chunk(16)
    s.done()
    return write(root, WIRE, "text-usage", s.builder, request=req, response=ok(s),
                 demonstrates="a text answer; with stream_options.include_usage the last chunk "
                              "before [DONE] has choices: [] and the usage",
                 based_on=BASE + " (text-usage), with the newer envelope fields",
                 sdk=sdk_expectation(HELPER, "the helper's final completion takes usage from the "
                                     "choices: [] chunk",
                                     text=answer,
                                     final={"choices.0.message.content": answer,
                                            "choices.0.finish_reason": "stop",
                                            "usage.prompt_tokens": 16}))


def tool_call(root: Path) -> Path:
    """One tool call: the first fragment names it, later ones only carry arguments."""
    tool = function_tool("book_table", "Book a table at a restaurant.", {
        "restaurant": {"type": "string"}, "date": {"type": "string", "format": "date"},
        "time": {"type": "string"}, "party_size": {"type": "integer"}})
    args = compact({"restaurant": "Café de Flore", "date": "2026-02-14", "time": "20:00",
                    "party_size": 2})
    req = {"model": "gpt-4.1", "messages": user("Book us a table for two at Café de Flore on "
                                                "Valentine's Day, 8 pm."),
           "tools": [tool], **STREAM_USAGE}
    s = ChatStream(202, model="gpt-4.1-2025-04-14", created=1767702230)
    cid = call_id(s.rng)
    s.tool_start(0, cid, "book_table", after_ms=s.pace.first_token(400, 700), opening=True)
    s.tool_arguments(0, args)
    s.finish("tool_calls")
    s.usage_chunk(88)
    s.done()
    return write(root, WIRE, "tool-call", s.builder, request=req, response=ok(s),
                 demonstrates="one tool call: id, type, name and arguments \"\" in the first "
                              "fragment, then arguments only; finish_reason tool_calls",
                 based_on=BASE + " (tool-call-single); pauses at new keys are synthetic",
                 sdk=sdk_expectation(HELPER, "the helper emits tool_calls.function.arguments.done "
                                     "at finish_reason with the whole arguments",
                                     text="",
                                     final={"choices.0.message.tool_calls.0.id": cid,
                                            "choices.0.message.tool_calls.0.function.arguments":
                                                args,
                                            "choices.0.finish_reason": "tool_calls"}))


def parallel_tools_sequential(root: Path) -> Path:
    """Two calls, one after the other, as api.openai.com streams parallel calls."""
    tools = [function_tool("get_flight_status", "Status of a flight.", {
                 "flight_number": {"type": "string"}, "date": {"type": "string"}}),
             function_tool("get_airport_delays", "Current delays at an airport.", {
                 "iata_code": {"type": "string"}})]
    first = compact({"flight_number": "AF1381", "date": "2026-01-16"})
    second = compact({"iata_code": "CDG"})
    req = {"model": "gpt-4.1", "messages": user("Is AF1381 tomorrow on time? And are there "
                                                "delays at Charles-de-Gaulle right now?"),
           "tools": tools, "parallel_tool_calls": True, **STREAM_USAGE}
    s = ChatStream(203, model="gpt-4.1-2025-04-14", created=1767790001)
    s.say(0, {"role": "assistant", "content": None, "refusal": None, "annotations": []},
          after_ms=s.pace.first_token(350, 600))
    ids = [call_id(s.rng), call_id(s.rng)]
    s.tool_start(0, ids[0], "get_flight_status", after_ms=s.pace.token())
    s.tool_arguments(0, first)
    s.tool_start(1, ids[1], "get_airport_delays", after_ms=s.pace.token())
    s.tool_arguments(1, second)
    s.finish("tool_calls")
    s.usage_chunk(131)
    s.done()
    return write(root, WIRE, "parallel-tools-sequential", s.builder, request=req, response=ok(s),
                 demonstrates="two tool calls streamed one after the other (index 0, then "
                              "index 1), each opened by a fragment with its id and name",
                 based_on=BASE + " (tool-calls-parallel)",
                 sdk=sdk_expectation(HELPER, "the helper closes call 0 when the first fragment of "
                                     "call 1 arrives, which is right when calls do not interleave",
                                     text="",
                                     final={"choices.0.message.tool_calls.0.function.arguments":
                                                first,
                                            "choices.0.message.tool_calls.1.function.arguments":
                                                second,
                                            "choices.0.message.tool_calls.1.id": ids[1]}))


def refusal(root: Path) -> Path:
    """A refusal: the opening sets ``content: null, refusal: ""``."""
    words = "I'm sorry, but I can't help with writing a fake doctor's note."
    schema = {"type": "json_schema", "json_schema": {
        "name": "note", "strict": True,
        "schema": {"type": "object", "properties": {"text": {"type": "string"}},
                   "required": ["text"], "additionalProperties": False}}}
    req = {"model": "gpt-4.1", "messages": user("Write a doctor's note, signed Dr. Lefèvre, "
                                                "saying I was ill last week so my employer "
                                                "believes it."),
           "response_format": schema, **STREAM_USAGE}
    s = ChatStream(206, model="gpt-4.1-2025-04-14", created=1767817777)
    s.opening(after_ms=s.pace.first_token(300, 450), content=None, refusal="")
    s.text(words, first_ms=s.pace.token(), field="refusal")
    s.finish("stop")
    s.usage_chunk(71)
    s.done()
    return write(root, WIRE, "refusal", s.builder, request=req, response=ok(s),
                 demonstrates="a refusal: content null, refusal deltas, finish_reason stop",
                 based_on=BASE + " (refusal)",
                 sdk=sdk_expectation(HELPER, "the helper emits refusal.delta events, no "
                                     "content.delta; the final message has refusal set and "
                                     "content None",
                                     text="",
                                     final={"choices.0.message.refusal": words,
                                            "choices.0.message.content": None}))


def finish_length(root: Path) -> Path:
    """finish_reason ``length`` in the middle of a sentence."""
    answer = ("Ratatouille began as a peasant dish from Nice: courgettes, aubergines, peppers "
              "and tomatoes stewed slowly in olive oil with garlic and herbes de Provence. Cooks "
              "still argue about whether each vegetable should be fried separately before")
    req = {"model": "gpt-4.1", "messages": user("Tell me about ratatouille."),
           "max_completion_tokens": 40, **STREAM_USAGE}
    s = ChatStream(207, model="gpt-4.1-2025-04-14", created=1767891234)
    s.opening(after_ms=s.pace.first_token(250, 400))
    sent = s.text(answer, first_ms=s.pace.token())
    s.finish("length")
    s.usage_chunk(12, 40)
    s.done()
    return write(root, WIRE, "finish-length", s.builder, request=req, response=ok(s),
                 demonstrates="finish_reason length: the answer stops mid-sentence at "
                              "max_completion_tokens, and the stream still ends with [DONE]",
                 based_on=BASE + " (finish-length)",
                 sdk=sdk_expectation(HELPER, "get_final_completion() raises "
                                     "LengthFinishReasonError on a length finish, after every "
                                     "delta was handed out",
                                     raises="LengthFinishReasonError",
                                     error_contains="length limit was reached", text=sent))


def content_filter(root: Path) -> Path:
    """finish_reason ``content_filter`` after a few words."""
    opening = "Of course! Here are the complete lyrics of “Bohemian Rhapsody” by Queen:\n\n"
    req = {"model": "gpt-4.1", "messages": user("Give me the complete lyrics of Bohemian "
                                                "Rhapsody."), **STREAM_USAGE}
    s = ChatStream(208, model="gpt-4.1-2025-04-14", created=1767900000)
    s.opening(after_ms=s.pace.first_token(300, 500))
    sent = s.text(opening, first_ms=s.pace.token())
    s.finish("content_filter")
    s.usage_chunk(17)
    s.done()
    return write(root, WIRE, "content-filter", s.builder, request=req, response=ok(s),
                 demonstrates="finish_reason content_filter: the output is stopped by a filter "
                              "after a few words",
                 based_on=BASE + "; finish_reason content_filter as the SDK types define it (Azure "
                          "OpenAI adds content_filter_results, not reproduced here)",
                 sdk=sdk_expectation(HELPER, "get_final_completion() raises "
                                     "ContentFilterFinishReasonError",
                                     raises="ContentFilterFinishReasonError",
                                     error_contains="content filter", text=sent))


def weather_turn(root: Path) -> list[Path]:
    """The two steps of the weather turn (see `weather_turn`)."""
    turn = weather.TURN_NAME
    tools = [weather.chat_tool()]
    messages = user(weather.QUESTION)
    req1 = {"model": "gpt-4.1", "messages": messages, "tools": tools, **STREAM_USAGE}
    s = ChatStream(213, model="gpt-4.1-2025-04-14", created=1768131300)
    ids = [call_id(s.rng), call_id(s.rng)]
    args = [weather.arguments_text(c) for c in weather.CALLS]
    s.say(0, {"role": "assistant", "content": None, "refusal": None, "annotations": []},
          after_ms=s.pace.first_token(350, 550))
    for slot, (cid, raw) in enumerate(zip(ids, args, strict=True)):
        s.tool_start(slot, cid, weather.TOOL_NAME, after_ms=s.pace.token())
        s.tool_arguments(slot, raw)
    s.finish("tool_calls")
    s.usage_chunk(81)
    s.done()
    first = write(root, WIRE, "weather-turn-step1", s.builder, request=req1, response=ok(s),
                  demonstrates="weather turn, step 1: two get_weather calls (Paris, Tokyo), "
                               "finish_reason tool_calls",
                  based_on=BASE + "; the same turn as the Anthropic and Responses weather "
                           "captures",
                  sdk=sdk_expectation(HELPER, "both calls come back whole, each with its id",
                                      text="",
                                      final={"choices.0.message.tool_calls.0.function.arguments":
                                                 args[0],
                                             "choices.0.message.tool_calls.1.function.arguments":
                                                 args[1],
                                             "choices.0.finish_reason": "tool_calls"}),
                  turn={"name": turn, "step": 1})

    history = messages + [{"role": "assistant", "content": None, "tool_calls": [
        {"id": cid, "type": "function", "function": {"name": weather.TOOL_NAME, "arguments": raw}}
        for cid, raw in zip(ids, args, strict=True)]}]
    history += [{"role": "tool", "tool_call_id": cid, "content": weather.result_text(r)}
                for cid, r in zip(ids, weather.RESULTS, strict=True)]
    req2 = {"model": "gpt-4.1", "messages": history, "tools": tools, **STREAM_USAGE}
    s = ChatStream(214, model="gpt-4.1-2025-04-14", created=1768131304)
    s.opening(after_ms=s.pace.first_token(300, 500))
    s.text(weather.ANSWER, first_ms=s.pace.token(), tear=True)
    s.finish("stop")
    s.usage_chunk(192, cached_tokens=128)
    s.done()
    second = write(root, WIRE, "weather-turn-step2", s.builder, request=req2, response=ok(s),
                   demonstrates="weather turn, step 2: the tool results go back as role tool "
                                "messages; the model answers",
                   based_on=BASE + "; the same turn as the Anthropic and Responses weather "
                            "captures",
                   sdk=sdk_expectation(HELPER, "an ordinary text answer; the turn ends here",
                                       text=weather.ANSWER,
                                       final={"choices.0.message.content": weather.ANSWER,
                                              "choices.0.finish_reason": "stop"}),
                   turn={"name": turn, "step": 2})
    return [first, second]


def build(root: Path) -> list[Path]:
    """Write every Chat Completions capture under `root/openai-chat/`; return the paths."""
    paths = [text_usage(root), tool_call(root), parallel_tools_sequential(root)]
    paths += [parallel_tools_interleaved(root), n2_choices(root)]
    paths += [refusal(root), finish_length(root), content_filter(root)]
    paths += [cut_in_arguments(root), error_mid_stream(root), index_reused_new_id(root),
              reasoning_content(root), thinking_parts(root), length_then_error(root),
              azure_filter_results(root)]
    paths += openai_chat_features.build(root)
    return paths + weather_turn(root) + [structured_output(root)]
