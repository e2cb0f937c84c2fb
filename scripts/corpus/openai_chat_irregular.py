"""Chat captures where the stream is irregular: interleaving, breakage, other servers.

These are the Chat streams that break naive accumulators: two calls whose
fragments alternate, two choices interleaving, a connection cut inside the
arguments, an error payload mid-stream, a compatible server that reuses
tool index 0, and one that streams ``reasoning_content`` before content.
"""

from __future__ import annotations

from pathlib import Path

from .openai_chat_common import BASE, HELPER, STREAM_USAGE, WIRE, compact, function_tool, ok, user
from .openai_chat_stream import ChatStream
from .openai_ids import call_id, hex_digits
from .openai_pacing import text_tokens
from .openai_sidecar import sdk_expectation, write

PREMATURE_DONE = ("the helper emits tool_calls.function.arguments.done for call 0 with "
                  "unfinished arguments as soon as call 1 starts, then arguments.delta events "
                  "for call 0 after that done (the same for call 1), and no done at the finish")


def parallel_tools_interleaved(root: Path) -> Path:
    """Two calls whose argument fragments alternate between index 0 and index 1."""
    tools = [function_tool("get_weather", "Current weather for a city.", {
                 "location": {"type": "string"},
                 "unit": {"type": "string", "enum": ["celsius", "fahrenheit"]}}, strict=False),
             function_tool("get_air_quality", "Air quality for a city.", {
                 "location": {"type": "string"},
                 "pollutants": {"type": "array", "items": {"type": "string"}}}, strict=False)]
    args = [compact({"location": "Lyon, France", "unit": "celsius"}),
            compact({"location": "Lyon, France", "pollutants": ["pm2_5", "no2", "o3"]})]
    model = "Qwen/Qwen3-30B-A3B-Instruct-2507"
    req = {"model": model, "messages": user("Is it a good day for a run along the Saône in "
                                            "Lyon? Check the weather and the air quality."),
           "tools": tools, **STREAM_USAGE}
    s = ChatStream(204, model=model, created=1767793333, dialect="compatible")
    ids = [f"chatcmpl-tool-{hex_digits(s.rng, 32)}" for _ in args]
    s.opening(after_ms=s.pace.first_token(250, 400))
    queues = [s.argument_fragments(a) for a in args]
    sent: list[tuple[int, str]] = []   # (slot, its arguments so far) per tool chunk
    so_far = ["", ""]

    def fragment(slot: int, *, cap_ms: float | None = None) -> None:
        piece, pause = queues[slot].pop(0)
        so_far[slot] += piece
        s.tool_fragment(slot, piece, after_ms=pause if cap_ms is None else min(pause, cap_ms))
        sent.append((slot, so_far[slot]))

    s.tool_start(0, ids[0], "get_weather", after_ms=s.pace.token())
    sent.append((0, ""))
    for _ in range(3):
        fragment(0)
    s.tool_start(1, ids[1], "get_air_quality", after_ms=s.pace.token())
    sent.append((1, ""))
    slot = 1
    while any(queues):
        if not queues[slot]:
            slot = 1 - slot
        # Both calls stall at their own key boundaries; the other call fills the pause.
        fragment(slot, cap_ms=s.pace.token() * 3)
        if queues[1 - slot] and s.rng.random() < 0.6:
            slot = 1 - slot
    s.finish("tool_calls")
    s.usage_chunk(402)
    s.done()
    return write(root, WIRE, "parallel-tools-interleaved", s.builder, request=req,
                 response={"status": 200, "headers": {
                     "content-type": "text/event-stream; charset=utf-8", "server": "uvicorn"}},
                 demonstrates="two tool calls whose argument fragments alternate between "
                              "index 0 and index 1 (a compatible server)",
                 based_on=BASE + "; the alternation is constructed: api.openai.com streams "
                          "calls one after another, but nothing in the format forbids this and "
                          "the premature-done bug (openai/openai-ruby#638) needs it",
                 sdk={**sdk_expectation(HELPER, PREMATURE_DONE, text="",
                                        final={"choices.0.message.tool_calls.0.function.arguments":
                                                   args[0],
                                               "choices.0.message.tool_calls.1.function.arguments":
                                                   args[1]}),
                      "events": premature_dones(sent)})


def premature_dones(sent: list[tuple[int, str]]) -> list[dict[str, object]]:
    """The helper's done events, each followed by the next event for the same call.

    The Chat helper closes a call as soon as a fragment for another index
    arrives, and closes each call only once. `sent` lists, per tool chunk,
    the call's slot and its arguments so far.
    """
    out: list[dict[str, object]] = []
    latest: dict[int, str] = {}
    current: int | None = None
    closed: set[int] = set()
    waiting: set[int] = set()   # closed calls whose next delta is still to come
    for slot, arguments in sent:
        latest[slot] = arguments
        if slot in waiting:
            out.append({"type": "tool_calls.function.arguments.delta", "index": slot,
                        "arguments": arguments})
            waiting.discard(slot)
        if current is not None and current != slot and current not in closed:
            out.append({"type": "tool_calls.function.arguments.done", "index": current,
                        "arguments": latest[current]})
            closed.add(current)
            waiting.add(current)
        current = slot
    return out


def n2_choices(root: Path) -> Path:
    """``n=2``: two choices whose chunks interleave irregularly."""
    answers = ["How about “Le Pain Doré” 🥐: French, warm, and easy to say in English too.",
               "Try “Mie & Miel”: mie is the soft inside of bread and miel is honey, so it "
               "sounds sweet in both languages."]
    req = {"model": "gpt-4.1", "messages": user("Suggest a name for a small bakery in "
                                                "Montréal, in one sentence."),
           "n": 2, "temperature": 1.0, **STREAM_USAGE}
    s = ChatStream(205, model="gpt-4.1-2025-04-14", created=1767795555)
    s.opening(0, after_ms=s.pace.first_token(300, 450))
    s.opening(1, after_ms=s.pace.instant())
    queues = [text_tokens(a, s.rng) for a in answers]
    printed = ""   # what printing every content.delta in arrival order shows
    while any(queues):
        which = s.rng.choice([0, 1] if all(queues) else [0 if queues[0] else 1])
        run = min(s.rng.randint(1, 4), len(queues[which]))
        for _ in range(run):
            token = queues[which].pop(0)
            s.say(which, {"content": token}, after_ms=s.pace.token())
            s.completion_tokens += 1
            printed += token
        if not queues[which]:
            s.finish("stop", which)
    s.usage_chunk(24)
    s.done()
    return write(root, WIRE, "n2-choices", s.builder, request=req, response=ok(s),
                 demonstrates="n=2: two choices in one stream, their chunks interleaving "
                              "irregularly, each finishing on its own",
                 based_on=BASE + "; n>1 interleaving as the API documents it",
                 sdk=sdk_expectation(HELPER, "content.delta events carry no choice index, so "
                                     "printing them mixes the two answers; the final completion "
                                     "keeps them apart",
                                     text=printed,
                                     final={"choices.0.message.content": answers[0],
                                            "choices.1.message.content": answers[1],
                                            "choices.1.finish_reason": "stop"}))


def cut_in_arguments(root: Path) -> Path:
    """The connection dies inside the arguments: no finish_reason, no [DONE]."""
    tool = function_tool("create_ticket", "Open a support ticket.", {
        "title": {"type": "string"}, "priority": {"type": "string",
                                                  "enum": ["low", "normal", "high"]},
        "description": {"type": "string"}})
    args = compact({"title": "Checkout page times out", "priority": "high",
                    "description": "Since 09:40 CET every payment with a carte bancaire fails "
                                   "after 30 s; PayPal still works."})
    req = {"model": "gpt-4.1", "messages": user("Open a high-priority ticket: card payments on "
                                                "the checkout page have been timing out since "
                                                "09:40, PayPal is fine."),
           "tools": [tool], **STREAM_USAGE}
    s = ChatStream(209, model="gpt-4.1-2025-04-14", created=1767944444)
    cid = call_id(s.rng)
    s.tool_start(0, cid, "create_ticket", after_ms=s.pace.first_token(350, 600), opening=True)
    fragments = s.argument_fragments(args)
    stop = next(i for i, (f, _) in enumerate(fragments) if "carte" in f) + 3
    for fragment, gap in fragments[:stop]:
        s.tool_fragment(0, fragment, after_ms=gap)
    received = "".join(f for f, _ in fragments[:stop - 1])
    s.builder.cut(len(s.builder.pieces[-1].data) // 2)
    return write(root, WIRE, "cut-in-arguments", s.builder, request=req, response=ok(s),
                 demonstrates="a stream cut inside a tool call's arguments: the last event is "
                              "half an event, no finish_reason, no [DONE]",
                 based_on=BASE + " (tool-call-single), cut by hand in the middle of an event",
                 sdk=sdk_expectation(HELPER, "get_final_completion() returns without an error: "
                                     "finish_reason None and the arguments cut mid-string, so the "
                                     "truncated stream looks finished",
                                     text="",
                                     final={"choices.0.finish_reason": None,
                                            "choices.0.message.tool_calls.0.function.arguments":
                                                received}))


def error_mid_stream(root: Path) -> Path:
    """Some content, then a payload with a top-level ``error``, then the end."""
    answer = ("Here's a three-day itinerary for Kyōto:\n\n**Day 1:** Fushimi Inari at dawn, then "
              "Tōfuku-ji and an afternoon in Gion.\n**Day 2:** Arashiyama's bamboo grove, "
              "Tenryū-ji and the monkey park.")
    req = {"model": "gpt-4.1", "messages": user("Plan three days in Kyoto for me."),
           **STREAM_USAGE}
    s = ChatStream(210, model="gpt-4.1-2025-04-14", created=1767955555)
    s.opening(after_ms=s.pace.first_token(300, 500))
    sent = s.text(answer, first_ms=s.pace.token(), stop_at=30)
    error = {"error": {"message": "The server had an error while processing your request. "
                                  "Sorry about that!",
                       "type": "server_error", "param": None, "code": None}}
    s.builder.event(None, error, after_ms=s.pace.thinking(3000, 6000), spaced=True)
    return write(root, WIRE, "error-mid-stream", s.builder, request=req, response=ok(s),
                 demonstrates="an error after some content: a data payload with a top-level "
                              "error object, then the stream simply ends (no [DONE])",
                 based_on=BASE + "; the error payload is the API's error document sent as a data "
                          "line (spaced JSON, unlike the chunks)",
                 sdk=sdk_expectation(HELPER, "the SDK raises APIError at the error payload; the "
                                     "content already printed stays printed",
                                     raises="APIError", error_contains="had an error", text=sent))


def index_reused_new_id(root: Path) -> Path:
    """A compatible server that sends every tool call at index 0, each whole, with its own id."""
    tools = [function_tool("get_weather", "Current weather for a city.", {
                 "location": {"type": "string"},
                 "unit": {"type": "string", "enum": ["celsius", "fahrenheit"]}}, strict=False),
             function_tool("get_local_time", "Local time in a timezone.", {
                 "timezone": {"type": "string"}}, strict=False)]
    calls = [("get_weather", compact({"location": "Lisbon, Portugal", "unit": "celsius"})),
             ("get_local_time", compact({"timezone": "Europe/Lisbon"}))]
    model = "qwen2.5:14b"
    req = {"model": model, "messages": user("What's the weather in Lisbon, and what time is it "
                                            "there?"), "tools": tools, "stream": True}
    s = ChatStream(211, model=model, created=1767966666, dialect="ollama", include_usage=False)
    ids = ["call_" + "".join(s.rng.choice("abcdefghijklmnopqrstuvwxyz0123456789")
                             for _ in range(8)) for _ in calls]
    for i, ((name, raw), cid) in enumerate(zip(calls, ids, strict=True)):
        s.say(0, {"role": "assistant", "content": "", "tool_calls": [
            {"id": cid, "index": 0, "type": "function",
             "function": {"name": name, "arguments": raw}}]},
              after_ms=s.pace.first_token(900, 1600) if i == 0 else s.pace.first_token(150, 300))
    s.finish("tool_calls", delta={"role": "assistant", "content": ""})
    s.done()
    return write(root, WIRE, "index-reused-new-id", s.builder, request=req,
                 response={"status": 200, "headers": {"content-type": "text/event-stream"}},
                 demonstrates="a compatible server reuses tool_calls index 0 for a second call "
                              "with a new id and name; each call arrives whole",
                 based_on="the OpenAI-compatible endpoint of a local server as reported in "
                          "ollama/ollama#15457 and vercel/ai#14277 (every call at index 0, "
                          "role repeated in every delta, fp_ollama)",
                 sdk=sdk_expectation(HELPER, "the helper merges both calls into one by index: "
                                     "ids, names and arguments are concatenated, and so is the "
                                     "role repeated in every delta",
                                     text="",
                                     final={"choices.0.message.role": "assistant" * 3,
                                            "choices.0.message.tool_calls.0.id": ids[0] + ids[1],
                                            "choices.0.message.tool_calls.0.function.name":
                                                calls[0][0] + calls[1][0],
                                            "choices.0.message.tool_calls.0.function.arguments":
                                                calls[0][1] + calls[1][1]}))


def reasoning_content(root: Path) -> Path:
    """DeepSeek style: ``reasoning_content`` deltas, then ``content``, usage on the last chunk."""
    thinking = ("The user asks whether 1001 is prime. It's odd, and the digit sum is 2, so not "
                "divisible by 3. Try 7: 7 × 143 = 1001. Yes! And 143 = 11 × 13. So "
                "1001 = 7 × 11 × 13, which is not prime. Nice fact: that is why abcabc is always "
                "divisible by 7, 11 and 13. I should answer briefly and show the factors.")
    answer = ("No. 1001 = 7 × 11 × 13, so it is not prime.\n\nFun consequence: any six-digit "
              "number of the form *abcabc* equals abc × 1001, so it is divisible by 7, 11 and 13.")
    req = {"model": "deepseek-reasoner", "messages": user("Is 1001 a prime number?"),
           "stream": True}
    s = ChatStream(212, model="deepseek-reasoner", created=1767977777, dialect="deepseek")
    for _ in range(2):
        s.keep_alive(after_ms=s.pace.thinking(400, 900))
    s.opening(after_ms=s.pace.first_token(200, 400))
    s.text(thinking, first_ms=s.pace.token(), field="reasoning_content")
    s.text(answer, first_ms=s.pace.first_token(40, 90))
    reasoning_tokens = len(thinking.split()) + 22
    usage = s.usage(9, s.completion_tokens + 22, reasoning_tokens=reasoning_tokens)
    s.finish("stop", usage=usage, delta={"content": "", "reasoning_content": None})
    s.done()
    return write(root, WIRE, "reasoning-content", s.builder, request=req,
                 response={"status": 200, "headers": {
                     "content-type": "text/event-stream; charset=utf-8",
                     "cache-control": "no-cache", "x-ds-trace-id": hex_digits(s.rng, 32)}},
                 demonstrates="a compatible server (DeepSeek style) streams reasoning_content "
                              "deltas before content; usage rides on the finishing chunk",
                 based_on="the recorded DeepSeek stream in the shared reference captures "
                          "(openai-chat-compatible/deepseek-reasoning-content), plus the "
                          ": keep-alive comments DeepSeek documents while a request waits",
                 sdk=sdk_expectation(HELPER, "the helper has no event for reasoning_content: its "
                                     "text events show only the answer, and the reasoning "
                                     "survives only as an extra field on the final message",
                                     text=answer,
                                     final={"choices.0.message.content": answer,
                                            "choices.0.message.reasoning_content": thinking,
                                            "usage.completion_tokens_details.reasoning_tokens":
                                                reasoning_tokens}))
