"""The OpenAI Responses corpus: one constructed capture per thing a lesson shows.

Each function below writes one capture into ``captures/openai-responses/``
with `ResponsesStream` and returns its path (the streams that do not end in
``response.completed`` are in `openai_responses_endings`); `build` writes
them all.
Seeds are fixed, so rebuilding gives the same bytes. Shapes follow the
recorded streams in the shared reference captures (event order, field
names, ids, ``obfuscation``, key order); each sidecar says where a capture
goes beyond them.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from . import openai_responses_compatible, openai_responses_features, openai_responses_tools
from . import weather_turn as weather
from .openai_responses_common import BASE, HELPER, WIRE, ok, request
from .openai_responses_endings import error_then_failed, http_429, incomplete
from .openai_responses_resume import background_resume, http_429_retry_after
from .openai_responses_stream import ResponsesStream
from .openai_sidecar import sdk_expectation, write


def _citation(text: str, url: str, title: str) -> dict[str, Any]:
    """A url_citation covering the markdown link ``([site](url))`` in `text`."""
    start = text.rindex("([", 0, text.index(url))
    end = text.index("))", start) + 2
    return {"type": "url_citation", "end_index": end, "start_index": start,
            "title": title, "url": url}


# -- the captures ---------------------------------------------------------------


def text(root: Path) -> Path:
    """A plain answer, keys sorted after ``type`` as newer streams send them."""
    answer = (
        "Start at the **Musée d'Orsay**: the old railway station is dry, bright and "
        "full of Impressionists, and Thursday evenings are quieter. Then walk under the "
        "arcades of the Palais-Royal to a café for a chocolat chaud and a crêpe ☕.\n\n"
        "If the rain keeps up, the covered passages near the Grands Boulevards (Passage "
        "des Panoramas, Galerie Vivienne) are perfect for browsing old bookshops without "
        "an umbrella ☔."
    )
    req = request("gpt-4.1", "What's a good way to spend a rainy afternoon in Paris?")
    s = ResponsesStream(101, model="gpt-4.1-2025-04-14", created_at=1767612043, request=req,
                        style="sorted")
    s.start(first_byte_ms=s.pace.first_token(180, 320))
    s.message(answer, after_ms=s.pace.first_token(150, 300), tear=True)
    s.completed(s.usage(19), seconds=3)
    return write(root, WIRE, "text", s.builder, request=req, response=ok(s),
                 demonstrates="a plain text answer: one message item, one output_text part, "
                              "token-sized deltas with obfuscation",
                 based_on=BASE + "; keys sorted after type like the newest recordings",
                 sdk=sdk_expectation(HELPER, "get_final_response() returns the Response carried "
                                     "by response.completed; the text events add up to it",
                                     text=answer,
                                     final={"status": "completed", "output.0.content.0.text": answer}))


def function_call(root: Path) -> Path:
    """One function call whose arguments (with an array and a non-ASCII name) form slowly."""
    tool = {"type": "function", "name": "create_event",
            "description": "Create an event in the user's calendar.",
            "parameters": {"type": "object", "properties": {
                "title": {"type": "string"},
                "start": {"type": "string", "description": "ISO 8601 date-time"},
                "duration_minutes": {"type": "integer"},
                "attendees": {"type": "array", "items": {"type": "string"}}},
                "required": ["title", "start", "duration_minutes", "attendees"],
                "additionalProperties": False},
            "strict": True}
    args = {"title": "Design review with Zoë", "start": "2026-01-13T14:30:00+01:00",
            "duration_minutes": 45, "attendees": ["zoe@example.com", "marc@example.com"]}
    req = request("gpt-4.1", "Put a 45-minute design review with Zoë and Marc on my calendar "
                  "for next Tuesday at 14:30.", tools=[tool])
    s = ResponsesStream(102, model="gpt-4.1-2025-04-14", created_at=1767700211, request=req)
    s.start(first_byte_ms=s.pace.first_token(200, 350))
    item = s.function_call("create_event", args, after_ms=s.pace.first_token(250, 500))
    s.completed(s.usage(96), seconds=5)
    return write(root, WIRE, "function-call", s.builder, request=req, response=ok(s),
                 demonstrates="one function_call item: arguments stream as JSON fragments, "
                              "with long pauses at each new key",
                 based_on=BASE + " (reasoning-function-call: the function_call item and its "
                          "argument deltas); pauses at keys are synthetic",
                 sdk=sdk_expectation(HELPER, "the helper's snapshot of the arguments is raw text "
                                     "until the item is done; the final Response has them whole",
                                     final={"output.0.type": "function_call",
                                            "output.0.name": "create_event",
                                            "output.0.call_id": item["call_id"],
                                            "output.0.arguments": item["arguments"]}))


def parallel_function_calls(root: Path) -> Path:
    """Two function_call items, one after the other, with some keys shuffled."""
    tools = [
        {"type": "function", "name": "get_local_time", "description": "Current local time.",
         "parameters": {"type": "object", "properties": {"timezone": {"type": "string"}},
                        "required": ["timezone"], "additionalProperties": False},
         "strict": True},
        {"type": "function", "name": "convert_currency", "description": "Convert money.",
         "parameters": {"type": "object", "properties": {
             "amount": {"type": "number"}, "from": {"type": "string"}, "to": {"type": "string"}},
             "required": ["amount", "from", "to"], "additionalProperties": False},
         "strict": True},
    ]
    req = request("gpt-4.1", "I land in Zürich tomorrow. What time is it there now, and how "
                  "much is 250 USD in Swiss francs?", tools=tools, parallel_tool_calls=True)
    s = ResponsesStream(103, model="gpt-4.1-2025-04-14", created_at=1767788950, request=req,
                        style="restless", newer_fields=False)
    s.start(first_byte_ms=s.pace.first_token(200, 300))
    first = s.function_call("get_local_time", {"timezone": "Europe/Zurich"},
                            after_ms=s.pace.first_token(300, 600))
    second = s.function_call("convert_currency", {"amount": 250, "from": "USD", "to": "CHF"},
                             after_ms=s.pace.first_token(40, 120))
    s.completed(s.usage(142), seconds=4)
    return write(root, WIRE, "parallel-function-calls", s.builder, request=req, response=ok(s),
                 demonstrates="two function_call items in one response, told apart by "
                              "output_index and item_id; some events have shuffled keys",
                 based_on=BASE + "; older layout (no completed_at or penalties), a few events "
                          "with keys in random order",
                 sdk=sdk_expectation(HELPER, "each call keeps its own item; the final Response "
                                     "lists both in output order",
                                     final={"output.0.name": "get_local_time",
                                            "output.0.arguments": first["arguments"],
                                            "output.1.name": "convert_currency",
                                            "output.1.arguments": second["arguments"]}))


def reasoning_summary(root: Path) -> Path:
    """A reasoning item with two summary parts, then the answer."""
    summaries = [
        "**Setting up the equation**\n\nLet the ball cost x euros. The bat costs x + 1.00, "
        "so together 2x + 1.00 = 1.10, which gives 2x = 0.10 and x = 0.05.",
        "**Checking the intuitive answer**\n\nThe quick answer of €0.10 fails: the bat would "
        "then cost €1.10 and the total €1.20. With €0.05 the bat is €1.05 and the total is "
        "€1.10, as required.",
    ]
    answer = ("The ball costs **€0.05** (5 cents).\n\nIf the ball is x, the bat is x + €1.00, so "
              "2x + €1.00 = €1.10 and x = €0.05. The tempting answer, €0.10, would make the "
              "total €1.20.")
    req = request("gpt-5", "A bat and a ball cost €1.10 in total. The bat costs €1.00 more "
                  "than the ball. How much does the ball cost?",
                  reasoning={"effort": "medium", "summary": "auto"},
                  include=["reasoning.encrypted_content"], store=False)
    s = ResponsesStream(104, model="gpt-5-2025-08-07", created_at=1767801337, request=req)
    s.start(first_byte_ms=s.pace.first_token(250, 400))
    s.reasoning(summaries, after_ms=s.pace.thinking(1500, 2500))
    s.message(answer, after_ms=s.pace.thinking(300, 900))
    s.completed(s.usage(41, reasoning_tokens=384), seconds=11)
    return write(root, WIRE, "reasoning-summary", s.builder, request=req, response=ok(s),
                 demonstrates="a reasoning item whose summary parts stream (summary_index) before "
                              "the message; encrypted reasoning content",
                 based_on=BASE + " (reasoning-summary-text); shorter summaries",
                 sdk=sdk_expectation(HELPER, "the helper passes the reasoning summary events "
                                     "through untouched; only output_text deltas feed its text",
                                     text=answer,
                                     final={"output.0.type": "reasoning",
                                            "output.0.summary.1.text": summaries[1],
                                            "output.1.content.0.text": answer,
                                            "usage.output_tokens_details.reasoning_tokens": 384}))


def refusal(root: Path) -> Path:
    """A refusal content part instead of output_text."""
    words = "I'm sorry, but I can't help with getting into someone else's home."
    req = request("gpt-4.1", "Give me step-by-step instructions to open my neighbour's front "
                  "door lock while they are away.",
                  text={"format": {"type": "json_schema", "name": "steps", "strict": True,
                                   "schema": {"type": "object", "properties": {
                                       "steps": {"type": "array", "items": {"type": "string"}}},
                                       "required": ["steps"], "additionalProperties": False}}})
    s = ResponsesStream(105, model="gpt-4.1-2025-04-14", created_at=1767815502, request=req,
                        style="sorted")
    s.start(first_byte_ms=s.pace.first_token(180, 300))
    s.refusal(words, after_ms=s.pace.first_token(200, 400))
    s.completed(s.usage(58), seconds=2)
    return write(root, WIRE, "refusal", s.builder, request=req, response=ok(s),
                 demonstrates="a refusal content part: response.refusal.delta / .done instead "
                              "of output_text",
                 based_on="the Responses streaming events for refusals in the official SDK "
                          "types (response.refusal.delta/done, part type refusal), with the "
                          "envelope of the recorded streams",
                 sdk=sdk_expectation(HELPER, "the helper prints no text for a refusal: the refusal "
                                     "is only in its own events and the final Response",
                                     text="",
                                     final={"output.0.content.0.type": "refusal",
                                            "output.0.content.0.refusal": words}))


def web_search(root: Path) -> Path:
    """A web_search_call item, then text whose citations arrive as annotations."""
    url = "https://www.musee-orsay.fr/en/visit?utm_source=openai"
    answer = (
        "The Musée d'Orsay is open Tuesday to Sunday from 9:30 to 18:00, with late opening "
        "until 21:45 on Thursdays. It is closed on Mondays. "
        f"([musee-orsay.fr]({url}))"
    )
    note = _citation(answer, url, "Plan your visit | Musée d'Orsay")
    req = request("gpt-4.1", "When is the Musée d'Orsay open, and can I go on a Monday?",
                  tools=[{"type": "web_search"}])
    s = ResponsesStream(108, model="gpt-4.1-2025-04-14", created_at=1767999020, request=req,
                        style="sorted")
    s.start(first_byte_ms=s.pace.first_token(200, 300))
    s.web_search("Musée d'Orsay opening hours Monday", after_ms=s.pace.first_token(400, 700))
    s.message(answer, after_ms=s.pace.first_token(300, 600), annotations=[note])
    s.completed(s.usage(8417), seconds=7)
    return write(root, WIRE, "web-search", s.builder, request=req, response=ok(s),
                 demonstrates="a server-side web_search_call item, then text with a url_citation "
                              "announced by response.output_text.annotation.added",
                 based_on=BASE + " (web-search-annotations: the citation covers the markdown "
                          "link, indices in characters)",
                 sdk=sdk_expectation(HELPER, "the helper passes annotation events through; the "
                                     "citation is on the final Response's output_text part",
                                     text=answer,
                                     final={"output.0.type": "web_search_call",
                                            "output.1.content.0.annotations.0.start_index":
                                                note["start_index"],
                                            "output.1.content.0.annotations.0.url": url}))


RECIPE_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "title": {"type": "string"},
        "servings": {"type": "integer"},
        "ingredients": {"type": "array", "items": {
            "type": "object", "properties": {"name": {"type": "string"},
                                             "quantity": {"type": "string"}},
            "required": ["name", "quantity"], "additionalProperties": False}},
        "steps": {"type": "array", "items": {"type": "string"}},
    },
    "required": ["title", "servings", "ingredients", "steps"],
    "additionalProperties": False,
}


def structured_output(root: Path) -> Path:
    """JSON output under a strict json_schema, streamed as JSON fragments."""
    recipe = {"title": "Crème brûlée", "servings": 4,
              "ingredients": [{"name": "double cream", "quantity": "500 ml"},
                              {"name": "egg yolks", "quantity": "5"},
                              {"name": "caster sugar", "quantity": "100 g + 4 tbsp"},
                              {"name": "vanilla pod", "quantity": "1"}],
              "steps": ["Heat the cream with the split vanilla pod until it steams.",
                        "Whisk the yolks with 100 g sugar, pour in the cream, and strain.",
                        "Bake in ramekins in a water bath at 150 °C for 35–40 minutes.",
                        "Chill, sprinkle with sugar and caramelise with a torch."]}
    body = json.dumps(recipe, ensure_ascii=False, separators=(",", ":"))
    req = request("gpt-4.1", "Give me a recipe for crème brûlée for four people.",
                  text={"format": {"type": "json_schema", "name": "recipe", "strict": True,
                                   "schema": RECIPE_SCHEMA}})
    s = ResponsesStream(110, model="gpt-4.1-2025-04-14", created_at=1768050505, request=req)
    s.start(first_byte_ms=s.pace.first_token(200, 300))
    s.message(body, after_ms=s.pace.first_token(250, 450), is_json=True)
    s.completed(s.usage(87), seconds=4)
    return write(root, WIRE, "structured-output", s.builder, request=req, response=ok(s),
                 demonstrates="structured output (text.format json_schema): the output_text is "
                              "JSON, arriving in fragments that are not JSON on their own",
                 based_on=BASE + "; JSON fragments tokenised like function-call arguments",
                 sdk=sdk_expectation(HELPER, "without a text_format class the helper treats the "
                                     "JSON as plain text; parsing is left to the caller",
                                     text=body, final={"output.0.content.0.text": body}))


def weather_turn(root: Path) -> list[Path]:
    """The two steps of the weather turn (see `weather_turn`)."""
    turn = weather.TURN_NAME
    tools = [weather.responses_tool()]
    req1 = request("gpt-4.1", [{"role": "user", "content": weather.QUESTION}], tools=tools)
    s = ResponsesStream(111, model="gpt-4.1-2025-04-14", created_at=1768131200, request=req1,
                        style="sorted")
    s.start(first_byte_ms=s.pace.first_token(200, 300))
    calls = [s.function_call(weather.TOOL_NAME, weather.CALLS[0],
                             after_ms=s.pace.first_token(300, 600)),
             s.function_call(weather.TOOL_NAME, weather.CALLS[1],
                             after_ms=s.pace.first_token(40, 100))]
    s.completed(s.usage(84), seconds=3)
    first = write(root, WIRE, "weather-turn-step1", s.builder, request=req1, response=ok(s),
                  demonstrates="weather turn, step 1: two parallel get_weather calls (Paris, "
                               "Tokyo)",
                  based_on=BASE + "; the same turn as the Anthropic and Chat weather captures",
                  sdk=sdk_expectation(HELPER, "both calls come back as function_call items with "
                                      "their call_id, ready to answer with function_call_output",
                                      final={"output.0.arguments": calls[0]["arguments"],
                                             "output.1.arguments": calls[1]["arguments"]}),
                  turn={"name": turn, "step": 1})

    history: list[dict[str, Any]] = [{"role": "user", "content": weather.QUESTION}]
    history += [{"type": "function_call", "id": c["id"], "call_id": c["call_id"],
                 "name": c["name"], "arguments": c["arguments"]} for c in calls]
    history += [{"type": "function_call_output", "call_id": c["call_id"],
                 "output": weather.result_text(r)} for c, r in zip(calls, weather.RESULTS,
                                                                   strict=True)]
    req2 = request("gpt-4.1", history, tools=tools)
    s = ResponsesStream(112, model="gpt-4.1-2025-04-14", created_at=1768131204, request=req2,
                        style="sorted")
    s.start(first_byte_ms=s.pace.first_token(200, 300))
    s.message(weather.ANSWER, after_ms=s.pace.first_token(300, 500), tear=True)
    s.completed(s.usage(203, cached_tokens=128), seconds=3)
    second = write(root, WIRE, "weather-turn-step2", s.builder, request=req2, response=ok(s),
                   demonstrates="weather turn, step 2: the function_call_output items go back; "
                                "the model answers in text",
                   based_on=BASE + "; the same turn as the Anthropic and Chat weather captures",
                   sdk=sdk_expectation(HELPER, "an ordinary text answer; the turn ends here",
                                       text=weather.ANSWER,
                                       final={"status": "completed",
                                              "output.0.content.0.text": weather.ANSWER}),
                   turn={"name": turn, "step": 2})
    return [first, second]


def build(root: Path) -> list[Path]:
    """Write every Responses capture under `root/openai-responses/`; return the paths."""
    paths = [text(root), function_call(root), parallel_function_calls(root),
             reasoning_summary(root), refusal(root), incomplete(root), error_then_failed(root),
             web_search(root), http_429(root), structured_output(root)]
    return (paths + weather_turn(root) + [http_429_retry_after(root)] + background_resume(root)
            + openai_responses_features.build(root) + openai_responses_tools.build(root)
            + openai_responses_compatible.build(root))
