"""The Google Gemini Interactions corpus: one constructed capture per thing a lesson shows.

Each function writes one capture into ``captures/google-gemini-interactions/``
with `InteractionsStream` and returns its path (or paths); `build` writes them
all. Seeds are fixed, so rebuilding gives the same bytes. The streams follow
the five recordings in the shared reference captures; each sidecar says where
a capture goes beyond them.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from lesson_lib.wires import gemini_interactions as gi

from .gemini_interactions_stream import (
    BASE,
    HELPER,
    WIRE,
    InteractionsStream,
    argument_fragments,
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
    arguments_text,
    result_text,
)

_HEADERS = {"content-type": "text/event-stream", "server": "scaffolding on HTTPServer2"}


def ok() -> dict[str, Any]:
    """A 200 response with the headers Google's front end sends (the allowlisted ones)."""
    return {"status": 200, "headers": dict(_HEADERS)}


def function(name: str, description: str, parameters: dict[str, Any]) -> dict[str, Any]:
    """A function tool as the Interactions API takes it."""
    return {"type": "function", "name": name, "description": description,
            "parameters": parameters}


def request(model: str, input: Any, *, tools: list | None = None,
            previous: str | None = None, **config: Any) -> dict[str, Any]:
    """The request's body as data (``stream: true`` asks for the stream)."""
    out: dict[str, Any] = {"model": model, "input": input}
    if previous is not None:
        out["previous_interaction_id"] = previous
    if tools:
        out["tools"] = tools
    if config:
        out["generation_config"] = config
    out["stream"] = True
    return out


# -- the captures -----------------------------------------------------------------------


def text(root: Path) -> Path:
    """A signed thought with no summary, then the answer over many ``text`` deltas."""
    answer = ("Sourdough rises on wild yeast and lactic bacteria living together in the "
              "starter: the yeast makes the gas, the bacteria the tang. That's why a "
              "levain needs feeding — flour and water, every day or so — and why the "
              "dough takes hours, not minutes, to double. 🍞\n")
    s = InteractionsStream(401, input_tokens=9)
    s.open(after_ms=s.pace.first_token(250, 450))
    s.thought_tokens = 88
    s.thought(sign=signature(s.rng, 190), first_ms=s.pace.thinking())
    _, pieces = s.text(answer, first_ms=s.pace.instant())
    s.complete(after_ms=s.pace.settle())
    req = request("gemini-2.5-flash", "Why does sourdough rise? Briefly.")
    return write(root, WIRE, "text", s.builder, request=req, response=ok(),
                 demonstrates="a thought step that holds only its signature, then a "
                              "model_output step whose text arrives over many text deltas "
                              "(an emoji and a dash torn across network reads); status "
                              "completed",
                 based_on=BASE + " (basic)",
                 sdk=sdk_expectation(HELPER, "one object per event; the text deltas joined "
                                     "are the answer", text="".join(pieces)))


def thought_signature(root: Path) -> Path:
    """A thought with summary text over several deltas and its signature, then the answer."""
    summary = ("**Comparing the two routes**\n\nThe night train arrives at 07:12, the first "
               "flight at 08:40 plus forty minutes into the city, so the train wins on time "
               "and on sleep.\n\n")
    answer = ("Take the **night train**: it leaves Vienna at 22:58 and reaches Venice at "
              "07:12, in the middle of town, so you save a hotel night and the airport "
              "transfer.")
    s = InteractionsStream(402, model="gemini-2.5-pro", input_tokens=23)
    s.open(after_ms=s.pace.first_token(300, 500))
    sig = signature(s.rng, 240)
    s.thought(summary=summary, sign=sig, first_ms=s.pace.thinking())
    _, pieces = s.text(answer, first_ms=s.pace.thinking(400, 900))
    s.complete(after_ms=s.pace.settle())
    req = request("gemini-2.5-pro", "Vienna to Venice overnight: train or plane?",
                  thinking_summaries="auto")
    return write(root, WIRE, "thought-signature", s.builder, request=req, response=ok(),
                 demonstrates="a thought step with its summary (thought_summary deltas, each "
                              "a text item) and then its thought_signature delta, which the "
                              "next request sends back; then the answer",
                 based_on=BASE + "; the summary deltas follow google-genai's "
                                 "ThoughtSummaryDelta (the recordings' thoughts are signed "
                                 "only)",
                 sdk=sdk_expectation(HELPER, "thought summaries and text arrive as typed "
                                     "deltas; only the text deltas are the answer",
                                     text="".join(pieces)))


def streamed_arguments(root: Path) -> Path:
    """A call whose JSON text arrives over many ``arguments_delta`` events, characters split."""
    tool = function("send_postcard", "Send a postcard to someone.", {
        "type": "object", "properties": {
            "to": {"type": "string"}, "city": {"type": "string"},
            "message": {"type": "string"}, "stamps": {"type": "integer"}},
        "required": ["to", "message"]})
    # Written as the model writes JSON: some characters escaped (é as \u00e9, the
    # umbrella's surrogate pair), some not (ü, ☀). The fragments cut inside the escape
    # and between the two halves of the pair, and the network reads inside ü's bytes.
    arguments = ('{"to":"Ren\\u00e9e Dubois","city":"Z\u00fcrich","message":"Greetings '
                 'from the lake \\ud83c\\udf02 and then \u2600, wish you were here!",'
                 '"stamps":2}')
    assert json.loads(arguments)["to"] == "Renée Dubois"
    s = InteractionsStream(403, input_tokens=61)
    s.open(after_ms=s.pace.first_token(250, 400))
    s.thought_tokens = 57
    s.thought(sign=signature(s.rng, 160), first_ms=s.pace.thinking())
    escape = arguments.index("\\u00e9") + 3           # inside the escape: \u0 | 0e9
    pair = arguments.index("\\udf02")                 # between the surrogate halves
    fragments: list[str] = []
    start = 0
    for cut in (escape, pair):
        fragments += argument_fragments(arguments[start:cut], s.rng)
        start = cut
    fragments += argument_fragments(arguments[start:], s.rng)
    s.call("send_postcard", fragments, first_ms=s.pace.thinking(300, 700))
    s.complete(gi.REQUIRES_ACTION, after_ms=s.pace.settle())
    req = request("gemini-2.5-flash", "Send Renée a postcard from Zürich, two stamps.",
                  tools=[tool])
    return write(root, WIRE, "streamed-arguments", s.builder, request=req, response=ok(),
                 demonstrates=f"a function_call step whose arguments arrive over "
                              f"{len(fragments)} arguments_delta events: one fragment ends "
                              "inside a \\u escape, another between the two halves of an "
                              "escaped surrogate pair, and a network read ends inside a "
                              "multi-byte character; status requires_action",
                 based_on=BASE + " (tool-call-step1, whose arguments arrive in one delta); "
                                 "the fragments and the escapes go beyond it",
                 sdk=sdk_expectation(HELPER, "each arguments_delta object carries its "
                                     "fragment; joining and parsing them is the "
                                     "application's job", text=""))


def parallel_calls(root: Path) -> Path:
    """Two function_call steps in one interaction, both waiting for the client."""
    tool = function("get_local_time", "The current local time in an IANA time zone.",
                    {"type": "object", "properties": {"timezone": {"type": "string"}},
                     "required": ["timezone"]})
    s = InteractionsStream(404, model="gemini-3-flash-preview", input_tokens=58)
    s.open(after_ms=s.pace.first_token(250, 450))
    s.thought_tokens = 96
    s.thought(sign=signature(s.rng, 200), first_ms=s.pace.thinking())
    for zone in ("Europe/Paris", "America/Sao_Paulo"):
        text_ = json.dumps({"timezone": zone}, separators=(",", ":"))
        s.call("get_local_time", argument_fragments(text_, s.rng, low=4, high=14),
               first_ms=s.pace.token())
    s.complete(gi.REQUIRES_ACTION, after_ms=s.pace.settle())
    req = request("gemini-3-flash-preview", "What time is it in Paris and in São Paulo?",
                  tools=[tool])
    return write(root, WIRE, "parallel-calls", s.builder, request=req, response=ok(),
                 demonstrates="two function_call steps (indexes 1 and 2, each with its own id "
                              "and arguments_delta fragments) after a signed thought; status "
                              "requires_action: both wait for the client",
                 based_on=BASE + " (tool-call-step1); the second call goes beyond it",
                 sdk=sdk_expectation(HELPER, "each call's start, fragments and stop come as "
                                     "their own objects", text=""))


def server_tool(root: Path) -> Path:
    """Google Search run by the provider: its call step, its result step, cited text."""
    s = InteractionsStream(405, input_tokens=14)
    s.open(after_ms=s.pace.first_token(250, 450))
    s.tool_use_tokens, s.thought_tokens = 212, 41
    ident = "gs_" + s.id[-10:]
    queries = ["Wimbledon 2025 men's singles champion"]
    call = s.start({"id": ident, "arguments": {}, "search_type": "web_search",
                    "type": "google_search_call"}, after_ms=s.pace.thinking())
    s.delta(call, {"arguments": {"queries": queries}, "signature": signature(s.rng, 96),
                   "type": "google_search_call"}, after_ms=s.pace.token())
    s.stop(call, after_ms=s.pace.instant())
    suggestions = ('<style>.container{align-items:center}</style><div class="container">'
                   '<a class="chip" href="https://www.google.com/search?q=Wimbledon+2025">'
                   "Wimbledon 2025 men's singles champion</a></div>")
    result = s.start({"call_id": ident, "result": [{"search_suggestions": suggestions}],
                      "type": "google_search_result"}, after_ms=s.pace.thinking(500, 1500))
    s.stop(result, after_ms=s.pace.instant())
    answer = ("Jannik Sinner won the 2025 Wimbledon men's singles title, beating Carlos "
              "Alcaraz in the final — his first title at the All England Club.")
    citation = {"type": "url_citation", "start_index": 0,
                "end_index": len(answer.split(" —")[0]), "title": "wimbledon.com",
                "url": "https://www.wimbledon.com/"}
    _, pieces = s.text(answer, first_ms=s.pace.thinking(300, 800), annotations=[citation])
    s.complete(after_ms=s.pace.settle())
    req = request("gemini-2.5-flash", "Who won Wimbledon 2025 (men's singles)?",
                  tools=[{"type": "google_search"}])
    return write(root, WIRE, "server-tool", s.builder, request=req, response=ok(),
                 demonstrates="a server tool at work: a google_search_call step (its queries "
                              "in a delta typed like the step), its google_search_result step "
                              "whole in its start, then the answer with a "
                              "text_annotation_delta (a url_citation) before its stop",
                 based_on=BASE + "; the search steps follow google-genai's GoogleSearchCallStep"
                                 " / GoogleSearchResultStep and their deltas",
                 sdk=sdk_expectation(HELPER, "the search steps and the citation arrive as "
                                     "typed objects; only the text deltas are the answer",
                                     text="".join(pieces)))


def error_mid_stream(root: Path) -> Path:
    """An ``error`` event after some text: the step never stops, the interaction never ends."""
    s = InteractionsStream(406, model="gemini-2.5-pro", input_tokens=24)
    s.open(after_ms=s.pace.first_token(250, 450))
    s.thought(sign=signature(s.rng, 150), first_ms=s.pace.thinking())
    _, pieces = s.text("The three laws of thermodynamics, in plain words: energy is never "
                       "created or destroyed, only moved around; heat flows from hot to "
                       "cold, never back on its own; and",
                       first_ms=s.pace.instant(), cut_after=4)
    s.error("UNAVAILABLE", "The model is overloaded. Please try again later.",
            after_ms=s.pace.thinking(300, 900))
    req = request("gemini-2.5-pro", "Explain the laws of thermodynamics simply.")
    return write(root, WIRE, "error-mid-stream", s.builder, request=req, response=ok(),
                 demonstrates="an error event after HTTP 200 and some text (UNAVAILABLE, a "
                              "retryable error): the model_output step never gets its "
                              "step.stop and no interaction.completed follows",
                 based_on=BASE + "; the error event follows google-genai's ErrorEvent",
                 sdk=sdk_expectation(HELPER, "the SDK yields the error as an ErrorEvent "
                                     "object and raises nothing", text="".join(pieces)))


def cut_mid_step(root: Path) -> Path:
    """The connection dies inside a text delta: no stop, no interaction.completed."""
    s = InteractionsStream(407, input_tokens=14)
    s.open(after_ms=s.pace.first_token(250, 450))
    s.thought(sign=signature(s.rng, 150), first_ms=s.pace.thinking())
    index, pieces = s.text("Honey never spoils: its low water content and acidity keep "
                           "microbes out, which is why jars found in Egyptian tombs were "
                           "still edible. The bees help by fanning the nectar until most of "
                           "the water evaporates, and",
                           first_ms=s.pace.instant(), cut_after=5)
    s.delta(index, {"text": " an enzyme they add turns some sugar into gluconic acid",
                    "type": gi.TEXT_DELTA}, after_ms=s.pace.token())
    s.builder.cut(61)
    req = request("gemini-2.5-flash", "Why doesn't honey go off?")
    return write(root, WIRE, "cut-mid-step", s.builder, request=req, response=ok(),
                 demonstrates="a body cut inside a step.delta of the model_output step: the "
                              "last bytes are no whole event, the step never stops and no "
                              "interaction.completed comes, so the turn is truncated however "
                              "finished the text looks",
                 based_on=BASE + "; the cut is constructed",
                 sdk=sdk_expectation(HELPER, "the SDK yields the whole events and drops the "
                                     "partial one without a word", text="".join(pieces)))


def event_ids(root: Path) -> Path:
    """Every event carries the ``event_id`` a client resumes a broken stream from."""
    answer = ("Venice has 118 small islands linked by more than 400 bridges; the oldest "
              "over the Grand Canal, the Rialto, was rebuilt in stone in 1591.")
    s = InteractionsStream(408, input_tokens=11, event_ids=True)
    s.open(after_ms=s.pace.first_token(250, 450))
    s.thought_tokens = 52
    s.thought(sign=signature(s.rng, 150), first_ms=s.pace.thinking())
    _, pieces = s.text(answer, first_ms=s.pace.instant())
    s.complete(after_ms=s.pace.settle())
    req = request("gemini-2.5-flash", "Tell me one fact about Venice's bridges.")
    return write(root, WIRE, "event-ids", s.builder, request=req, response=ok(),
                 demonstrates="every event carries an event_id: where a client that lost the "
                              "connection resumes the stream (interactions.get(id, "
                              "stream=True, last_event_id=...))",
                 based_on=BASE + "; event_id follows google-genai's event types (the "
                                 "recordings carry none)",
                 sdk=sdk_expectation(HELPER, "each object keeps its event_id",
                                     text="".join(pieces)))


def weather_turn(root: Path) -> list[Path]:
    """The two steps of the weather turn (see `weather_turn`): the calls wait for the client
    (``requires_action``), then the stateful second request answers."""
    tool = function(TOOL_NAME, TOOL_DESCRIPTION, TOOL_PARAMETERS)
    s = InteractionsStream(409, input_tokens=81)
    s.open(after_ms=s.pace.first_token(250, 450))
    s.thought_tokens = 143
    s.thought(sign=signature(s.rng, 240), first_ms=s.pace.thinking())
    ids = []
    for call in CALLS:
        ids.append(s.call(TOOL_NAME, argument_fragments(arguments_text(call), s.rng, low=5,
                                                        high=16),
                          first_ms=s.pace.token())[1])
    s.complete(gi.REQUIRES_ACTION, after_ms=s.pace.settle())
    req1 = request("gemini-2.5-flash", QUESTION, tools=[tool])
    first = write(root, WIRE, "weather-turn-step1", s.builder, request=req1, response=ok(),
                  demonstrates="weather turn, step 1: a signed thought, then both get_weather "
                               "calls (Paris, Tokyo) as function_call steps with streamed "
                               "arguments; status requires_action",
                  based_on=BASE + " (tool-call-step1); the same turn as the other wires' "
                                  "weather captures",
                  sdk=sdk_expectation(HELPER, "both calls arrive as start, fragments and "
                                      "stop objects", text=""),
                  turn={"name": TURN_NAME, "step": 1})
    results = [{"type": gi.FUNCTION_RESULT_STEP, "call_id": ident, "name": TOOL_NAME,
                "result": result_text(r)} for ident, r in zip(ids, RESULTS, strict=True)]
    s2 = InteractionsStream(410, input_tokens=170)
    s2.open(after_ms=s2.pace.first_token(250, 450))
    s2.thought(sign=signature(s2.rng, 120), first_ms=s2.pace.thinking(500, 1200))
    s2.text(ANSWER, first_ms=s2.pace.instant())
    s2.complete(after_ms=s2.pace.settle())
    req2 = request("gemini-2.5-flash", results, tools=[tool], previous=s.id)
    second = write(root, WIRE, "weather-turn-step2", s2.builder, request=req2, response=ok(),
                   demonstrates="weather turn, step 2: the request names step 1's interaction "
                                "(previous_interaction_id) and sends only the two "
                                "function_result steps; the model answers in text",
                   based_on=BASE + " (tool-call-step2); the same turn as the other wires' "
                                   "weather captures",
                   sdk=sdk_expectation(HELPER, "text only, a few words per delta",
                                       text=ANSWER),
                   turn={"name": TURN_NAME, "step": 2})
    return [first, second]


def build(root: Path) -> list[Path]:
    """Write every Interactions capture under `root/google-gemini-interactions/`."""
    paths = [text(root), thought_signature(root), streamed_arguments(root),
             parallel_calls(root), server_tool(root), error_mid_stream(root),
             cut_mid_step(root), event_ids(root)]
    return paths + weather_turn(root)
