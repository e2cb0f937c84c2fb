"""The Google Gemini corpus: one constructed capture per thing a lesson shows.

Each function writes one capture into ``captures/google-gemini/`` with
`GeminiStream` and returns its path; `build` writes them all. Seeds are fixed,
so rebuilding gives the same bytes. The Gemini API captures follow the
pydantic-ai cassettes in the shared reference captures, the Vertex AI ones the
vercel/ai chunk fixtures (see `gemini_stream`); each sidecar says where a
capture goes beyond them.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from lesson_lib.capture.capture_writer import write_capture

from .gemini_stream import (
    API_BASE,
    HELPER,
    VERTEX_BASE,
    WIRE,
    GeminiStream,
    partial_args,
    signature,
)
from .openai_sidecar import sdk_expectation, write
from .weather_turn import (
    ANSWER,
    CALLS,
    QUESTION,
    RESULTS,
    TOOL_DESCRIPTION,
    TOOL_NAME,
    TOOL_PARAMETERS,
    TURN_NAME,
)

_API_HEADERS = {"content-type": "text/event-stream", "server": "scaffolding on HTTPServer2"}
_VERTEX_HEADERS = {"content-type": "text/event-stream", "server": "ESF"}


def ok(stream: GeminiStream) -> dict[str, Any]:
    """A 200 response with the headers Google's front end sends (the allowlisted ones)."""
    return {"status": 200, "headers": dict(_VERTEX_HEADERS if stream.vertex else _API_HEADERS)}


def user(text: str) -> list[dict[str, Any]]:
    """The ``contents`` of a one-question conversation."""
    return [{"role": "user", "parts": [{"text": text}]}]


def declaration(name: str, description: str, schema: dict[str, Any]) -> dict[str, Any]:
    """A function declaration with a JSON schema for its parameters."""
    return {"name": name, "description": description, "parametersJsonSchema": schema}


def request(model: str, contents: list[dict[str, Any]], *, tools: list | None = None,
            **config: Any) -> dict[str, Any]:
    """The request as data (``model`` is the path's; the rest is the body)."""
    out: dict[str, Any] = {"model": model, "contents": contents}
    if tools:
        out["tools"] = [{"functionDeclarations": tools}]
    if config:
        out["generationConfig"] = config
    return out


# -- the captures -----------------------------------------------------------------------


def text_crlf(root: Path) -> Path:
    """Text a few words per record, CRLF between records, usage on every one."""
    answer = ("Bread rises because yeast eats the sugars in the dough and breathes out carbon "
              "dioxide. Kneading builds a web of gluten that traps the gas, so the dough puffs "
              "up like a balloon — and the oven's heat makes the bubbles swell once more "
              "before the crust sets.\n")
    s = GeminiStream(301, model="gemini-2.5-flash", prompt_tokens=11)
    s.text(answer, first_ms=s.pace.first_token(350, 600), finish="STOP")
    req = request("gemini-2.5-flash", user("Why does bread rise? Two sentences."))
    return write(root, WIRE, "text-crlf", s.builder, request=req, response=ok(s),
                 demonstrates="text over several records separated by CRLF CRLF, usage on "
                              "every record (the prompt count drops at the end), finishReason "
                              "STOP on the last text record",
                 based_on=API_BASE,
                 sdk=sdk_expectation(HELPER, "one response object per record; their text "
                                     "parts joined are the answer", text=answer))


def thinking_signature(root: Path) -> Path:
    """Thought summaries (``thought: true``), then the answer, signed on its first part."""
    thoughts = ("**Weighing the two routes**\n\nI'm comparing the train and the plane for "
                "Paris to Lyon. The train is city centre to city centre, so the door-to-door "
                "time matters more than the time in the air.\n\n\n"
                "**Settling on the train**\n\nCounting airport transfers and security, the "
                "TGV wins by well over an hour, and it is the lower-carbon choice too.\n\n\n")
    answer = ("Take the **TGV**. It runs from Paris Gare de Lyon to Lyon Part-Dieu in about "
              "two hours, centre to centre; flying takes longer once you add the airports. "
              "Book a few weeks ahead for the cheapest fares.")
    s = GeminiStream(302, model="gemini-2.5-pro", prompt_tokens=21)
    sig = signature(s.rng, 220)
    s.text(thoughts, first_ms=s.pace.thinking(), thought=True)
    pieces = s.text(answer, first_ms=s.pace.thinking(600, 1400), sign_first=sig, finish="STOP")
    req = request("gemini-2.5-pro", user("Paris to Lyon: train or plane?"),
                  thinkingConfig={"includeThoughts": True})
    return write(root, WIRE, "thinking-signature", s.builder, request=req, response=ok(s),
                 demonstrates="thought parts (thought: true) before the answer; the answer's "
                              "first part carries the thoughtSignature the next request sends "
                              "back; thoughtsTokenCount grows",
                 based_on=API_BASE + " (thinking-thought-parts)",
                 sdk=sdk_expectation(HELPER, "the SDK yields thought parts and text parts "
                                     "alike; only the non-thought text is the answer",
                                     text="".join(pieces)))


def parallel_calls(root: Path) -> Path:
    """Two whole function calls, one per record, the first signed; STOP on an empty part."""
    tool = declaration("get_local_time", "The current local time in an IANA time zone.",
                       {"type": "object", "properties": {"timezone": {"type": "string"}},
                        "required": ["timezone"]})
    s = GeminiStream(303, model="gemini-3-flash-preview", prompt_tokens=58)
    s.thought_tokens = 96
    sig = signature(s.rng, 260)
    calls = [{"timezone": "Europe/Paris"}, {"timezone": "America/Sao_Paulo"}]
    s.output_tokens = 14
    s.record([{"functionCall": {"name": "get_local_time", "args": calls[0]},
               "thoughtSignature": sig}], after_ms=s.pace.thinking())
    s.output_tokens = 28
    s.record([{"functionCall": {"name": "get_local_time", "args": calls[1]}}],
             after_ms=s.pace.token())
    s.end(after_ms=s.pace.settle())
    req = request("gemini-3-flash-preview",
                  user("What time is it in Paris and in São Paulo?"), tools=[tool])
    return write(root, WIRE, "parallel-calls", s.builder, request=req, response=ok(s),
                 demonstrates="two whole functionCall parts in two records (no id, no index), "
                              "the first with a thoughtSignature; finishReason STOP on an empty "
                              "text part, so only the parts say the turn asks for tools",
                 based_on=API_BASE + " (function-call-thought-signature)",
                 sdk=sdk_expectation(HELPER, "each call arrives whole in its own response "
                                     "object", text=""))


def streamed_partial_args(root: Path) -> Path:
    """A call streamed as ``partialArgs``: strings in pieces, an array, a number, a bool, a null."""
    schema = {"type": "object", "properties": {
        "title": {"type": "string"}, "attendees": {"type": "array", "items": {"type": "string"}},
        "duration_minutes": {"type": "integer"}, "remote": {"type": "boolean"},
        "room": {"type": ["string", "null"]}}}
    tool = declaration("create_event", "Put a meeting in the shared calendar.", schema)
    args = {"title": "Quarterly review – Q1 numbers",
            "attendees": ["ana.lima@example.com", "li.wei@example.com"],
            "duration_minutes": 45, "remote": True, "room": None}
    s = GeminiStream(304, model="gemini-3.1-pro-preview", vertex=True, prompt_tokens=74)
    sig = signature(s.rng, 200)
    s.record([{"functionCall": {"name": "create_event", "willContinue": True},
               "thoughtSignature": sig}], after_ms=s.pace.thinking())
    entries: list[dict[str, Any]] = []
    for key in ("title", "attendees", "duration_minutes", "remote", "room"):
        if key == "attendees":
            for i, who in enumerate(args[key]):
                entries += partial_args(f"$.attendees[{i}]", who, s.rng)
        else:
            entries += partial_args(f"$.{key}", args[key], s.rng)
    while entries:
        # Now and then two entries share a record (a terminator and the next value).
        take = 2 if len(entries) > 1 and s.rng.random() < 0.3 else 1
        batch, entries = entries[:take], entries[take:]
        s.record([{"functionCall": {"partialArgs": batch, "willContinue": True}}],
                 after_ms=s.pace.token())
    s.output_tokens, s.thought_tokens = 61, 188
    s.end(after_ms=s.pace.settle(), part={"functionCall": {}})
    req = request("gemini-3.1-pro-preview",
                  user("Set up a 45-minute remote quarterly review with Ana and Li."),
                  tools=[tool], toolConfig={"functionCallingConfig": {
                      "streamFunctionCallArguments": True}})
    return write(root, WIRE, "streamed-partial-args", s.builder, request=req, response=ok(s),
                 demonstrates="streamed function-call arguments (Vertex AI): {name, "
                              "willContinue} opens the call, partialArgs {jsonPath, value, "
                              "willContinue} fill it (strings in pieces ended by an empty "
                              "stringValue, an array by index, a number, a bool, a null), an "
                              "empty functionCall {} with finishReason STOP closes it",
                 based_on=VERTEX_BASE + " (function-call-partial-args); nested paths, arrays "
                                        "and non-string values go beyond it",
                 sdk=sdk_expectation(HELPER, "the SDK hands each partialArgs entry over as it "
                                     "came (PartialArg objects); assembling them is the "
                                     "application's job", text=""))


def safety_stop(root: Path) -> Path:
    """A text that stops with ``SAFETY``: the last candidate carries the blocking rating."""
    s = GeminiStream(305, model="gemini-2.0-flash", prompt_tokens=19)
    pieces = s.text("Here is an overview of how common household chemicals react, and which "
                    "combinations you should never mix at home. Bleach and ammonia",
                    first_ms=s.pace.first_token())
    ratings = [{"category": c, "probability": p} for c, p in (
        ("HARM_CATEGORY_HATE_SPEECH", "NEGLIGIBLE"), ("HARM_CATEGORY_DANGEROUS_CONTENT", "HIGH"),
        ("HARM_CATEGORY_HARASSMENT", "NEGLIGIBLE"),
        ("HARM_CATEGORY_SEXUALLY_EXPLICIT", "NEGLIGIBLE"))]
    ratings[1]["blocked"] = True
    s.end("SAFETY", after_ms=s.pace.token(), candidate={"safetyRatings": ratings})
    req = request("gemini-2.0-flash", user("Which cleaning products react dangerously, and how?"))
    return write(root, WIRE, "safety-stop", s.builder, request=req, response=ok(s),
                 demonstrates="finishReason SAFETY after some text: the last candidate's "
                              "safetyRatings say which category blocked it (a content filter "
                              "stop; the text that arrived stays)",
                 based_on=API_BASE + "; the SAFETY record follows the API's documented "
                                     "candidate fields (safetyRatings with blocked)",
                 sdk=sdk_expectation(HELPER, "the SDK yields the record with finish_reason "
                                     "SAFETY and raises nothing", text="".join(pieces)))


def max_tokens(root: Path) -> Path:
    """The output budget runs out mid-sentence: ``MAX_TOKENS`` on the last text record."""
    text = ("The Loire valley is best seen by bicycle: the Loire à Vélo route follows the river "
            "for 900 km past Chambord, Chenonceau and Amboise, mostly flat and on quiet lanes. "
            "Start in Orléans, and plan on")
    s = GeminiStream(306, model="gemini-2.5-flash", prompt_tokens=16)
    s.thought_tokens = 212
    pieces = s.text(text, first_ms=s.pace.thinking(), finish="MAX_TOKENS")
    req = request("gemini-2.5-flash", user("Plan a week in the Loire valley."),
                  maxOutputTokens=256)
    return write(root, WIRE, "max-tokens", s.builder, request=req, response=ok(s),
                 demonstrates="finishReason MAX_TOKENS: the text stops mid-sentence; the "
                              "thoughts spent most of maxOutputTokens (thoughtsTokenCount)",
                 based_on=API_BASE,
                 sdk=sdk_expectation(HELPER, "the SDK yields every record and raises nothing "
                                     "on a length stop", text="".join(pieces)))


def cut_mid_record(root: Path) -> Path:
    """The connection dies inside a record: no finishReason ever comes."""
    s = GeminiStream(307, model="gemini-2.5-flash", prompt_tokens=14)
    pieces = s.text("Honey never spoils: its low water content and acidity keep microbes out, "
                    "which is why jars found in Egyptian tombs were still edible. The bees help "
                    "by fanning the nectar until most of the water evaporates, and",
                    first_ms=s.pace.first_token(), cut_after=4)
    s.record([{"text": " an enzyme they add turns some sugar into gluconic acid"}],
             after_ms=s.pace.token())
    s.builder.cut(97)
    req = request("gemini-2.5-flash", user("Why doesn't honey go off?"))
    return write(root, WIRE, "cut-mid-record", s.builder, request=req, response=ok(s),
                 demonstrates="a stream cut inside a record: the last bytes are no whole "
                              "record and no record carried a finishReason, so it is cut "
                              "however finished the text looks",
                 based_on=API_BASE + "; the cut is constructed",
                 sdk=sdk_expectation(HELPER, "the SDK yields the whole records, then fails to "
                                     "parse the partial one", raises="UnknownApiResponseError",
                                     text="".join(pieces)))


def error_mid_stream(root: Path) -> Path:
    """An error record after some text: ``{"error": {code, message, status}}``, then the end."""
    s = GeminiStream(308, model="gemini-2.5-pro", prompt_tokens=24)
    pieces = s.text("The three laws of thermodynamics, in plain words: energy is never created "
                    "or destroyed, only moved around; heat flows",
                    first_ms=s.pace.thinking())
    s.raw_record({"error": {"code": 503, "message": "The model is overloaded. Please try again "
                                                    "later.", "status": "UNAVAILABLE"}},
                 after_ms=s.pace.thinking(300, 900))
    req = request("gemini-2.5-pro", user("Explain the laws of thermodynamics simply."))
    return write(root, WIRE, "error-mid-stream", s.builder, request=req, response=ok(s),
                 demonstrates="an error record after HTTP 200 and some text (503 UNAVAILABLE, "
                              "a retryable status); nothing follows it",
                 based_on=API_BASE + "; the error record is the API's error object, as the "
                                     "SDK checks each record for it",
                 sdk=sdk_expectation(HELPER, "the SDK raises ServerError at the error record, "
                                     "after yielding the records before it",
                                     raises="ServerError", error_contains="UNAVAILABLE",
                                     text="".join(pieces)))


def http_429(root: Path) -> Path:
    """The request is refused before any record: 429 with Google's error body."""
    body = ('{\n  "error": {\n    "code": 429,\n    "message": "You exceeded your current quota, '
            'please check your plan and billing details.",\n    "status": "RESOURCE_EXHAUSTED",'
            '\n    "details": [\n      {\n        "@type": "type.googleapis.com/google.rpc.'
            'RetryInfo",\n        "retryDelay": "17s"\n      }\n    ]\n  }\n}\n')
    sidecar = {
        "wire": WIRE,
        "demonstrates": "HTTP 429 RESOURCE_EXHAUSTED before any record: the body is the "
                        "error object, with the delay a retry should wait in its details",
        "request": request("gemini-2.5-pro", user("Summarise this week's news.")),
        "response": {"status": 429, "headers": {"content-type": "application/json; "
                                                              "charset=UTF-8",
                                                "server": "scaffolding on HTTPServer2"}},
        "provenance": {"kind": "constructed", "based_on": "the Gemini API's error object "
                       "(google.rpc.Status with RetryInfo)", "timing": "synthetic"},
        "chunks": {"ends": [len(body.encode())], "t_ms": [212.4]},
        "sdk": sdk_expectation(HELPER, "the SDK raises ClientError with code 429 before "
                               "yielding anything", raises="ClientError",
                               error_contains="RESOURCE_EXHAUSTED", text=""),
    }
    return write_capture(root / WIRE, "http-429", body.encode(), sidecar)


def weather_turn(root: Path) -> list[Path]:
    """The two steps of the weather turn (see `weather_turn`), on the Gemini API."""
    tool = declaration(TOOL_NAME, TOOL_DESCRIPTION, TOOL_PARAMETERS)
    turn = TURN_NAME
    s = GeminiStream(309, model="gemini-2.5-flash", prompt_tokens=81)
    sig = signature(s.rng, 240)
    s.thought_tokens, s.output_tokens = 143, 36
    calls = [{"functionCall": {"name": TOOL_NAME, "args": CALLS[0]}, "thoughtSignature": sig},
             {"functionCall": {"name": TOOL_NAME, "args": CALLS[1]}}]
    s.record(calls, after_ms=s.pace.thinking())
    s.end(after_ms=s.pace.settle())
    req1 = request("gemini-2.5-flash", user(QUESTION), tools=[tool])
    first = write(root, WIRE, "weather-turn-step1", s.builder, request=req1, response=ok(s),
                  demonstrates="weather turn, step 1: both get_weather calls (Paris, Tokyo) "
                               "whole in one record, the first signed; STOP on an empty part",
                  based_on=API_BASE + "; the same turn as the Anthropic, Responses and Chat "
                                      "weather captures",
                  sdk=sdk_expectation(HELPER, "both calls come back whole in one response "
                                      "object", text=""),
                  turn={"name": turn, "step": 1})
    history = user(QUESTION) + [
        {"role": "model", "parts": calls},
        {"role": "user", "parts": [{"functionResponse": {"name": TOOL_NAME, "response": r}}
                                   for r in RESULTS]}]
    s2 = GeminiStream(310, model="gemini-2.5-flash", prompt_tokens=170)
    s2.thought_tokens = 58
    s2.text(ANSWER, first_ms=s2.pace.thinking(500, 1200), finish="STOP")
    req2 = request("gemini-2.5-flash", history, tools=[tool])
    second = write(root, WIRE, "weather-turn-step2", s2.builder, request=req2, response=ok(s2),
                   demonstrates="weather turn, step 2: the two functionResponse parts (and "
                                "step 1's signed call) go back; the model answers in text",
                   based_on=API_BASE + "; the same turn as the Anthropic, Responses and Chat "
                                       "weather captures",
                   sdk=sdk_expectation(HELPER, "text only, a few words per response object",
                                       text=ANSWER),
                   turn={"name": turn, "step": 2})
    return [first, second]


def build(root: Path) -> list[Path]:
    """Write every Gemini capture under `root/google-gemini/`; return the paths."""
    paths = [text_crlf(root), thinking_signature(root), parallel_calls(root),
             streamed_partial_args(root), safety_stop(root), max_tokens(root),
             cut_mid_record(root), error_mid_stream(root), http_429(root)]
    return paths + weather_turn(root)
