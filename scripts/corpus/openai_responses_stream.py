"""A Responses stream in the making: emits the events of one `Response`, in order.

`ResponsesStream` wraps the capture writer's `StreamBuilder` and knows the
Responses vocabulary: ``response.created`` and ``response.in_progress``
carrying the whole `Response`, then one output item after another
(message, function call, reasoning, web search), each announced by
``response.output_item.added`` and closed by ``response.output_item.done``,
then a terminal event carrying the server's final `Response`.

It numbers every event (``sequence_number``), keeps the output items it
closed so that the terminal event's object matches what the events built,
and lays keys out in one of the styles seen in recordings:

- ``"classic"``: ``type``, ``sequence_number``, then the fields in schema order;
- ``"sorted"``: ``type`` first, the rest alphabetical (newer streams);
- ``"restless"``: classic, but some events arrive with their keys shuffled.
"""

from __future__ import annotations

import copy
import json
from typing import Any

from .openai_ids import ResponseIds, call_id, obfuscation, opaque_blob
from .openai_pacing import Pace, emit_torn, json_tokens, starts_key, text_tokens
from .writer import StreamBuilder, shuffled


class ResponsesStream:
    """Emit the events of one Responses stream; see the module docstring."""

    def __init__(self, seed: int, *, model: str, created_at: int, request: dict[str, Any],
                 style: str = "classic", newer_fields: bool = True) -> None:
        self.builder = StreamBuilder(seed=seed)
        self.rng = self.builder.rng
        self.pace = Pace(self.rng)
        self.ids = ResponseIds(self.rng, created_at)
        self.style = style
        self.model = model
        self.created_at = created_at
        self.request = request
        self.newer_fields = newer_fields
        self.id = self.ids.response()
        self.seq = 0
        self.output: list[dict[str, Any]] = []   # items closed (or left open) so far
        self.output_tokens = 0

    # -- low level -----------------------------------------------------------

    def emit(self, payload: dict[str, Any], *, after_ms: float, torn: bool = False) -> None:
        """Send one event: number it, lay out its keys, hand it to the builder.

        A `torn` event reaches the client in two reads split inside a character.
        """
        body = {"type": payload["type"], "sequence_number": self.seq}
        body.update({k: v for k, v in payload.items() if k != "type"})
        self.seq += 1
        if self.style == "sorted":
            body = {"type": body["type"], **{k: body[k] for k in sorted(body) if k != "type"}}
        elif self.style == "restless" and self.rng.random() < 0.3:
            body = shuffled(body, self.rng)
        if torn:
            emit_torn(self.builder, payload["type"], body, after_ms=after_ms,
                      late_ms=self.pace.late_half())
        else:
            self.builder.event(payload["type"], body, after_ms=after_ms)

    def response_object(self, status: str, *, usage: dict | None = None,
                        error: dict | None = None, incomplete: str | None = None,
                        completed_at: int | None = None) -> dict[str, Any]:
        """The whole `Response` as lifecycle and terminal events carry it."""
        req = self.request
        text = copy.deepcopy(req.get("text") or {"format": {"type": "text"}})
        if text["format"]["type"] == "json_schema":
            text["format"] = {"type": "json_schema", "description": None, **text["format"]}
        text["verbosity"] = text.get("verbosity", "medium")
        reasoning = req.get("reasoning")
        obj: dict[str, Any] = {
            "id": self.id, "object": "response", "created_at": self.created_at,
            "status": status, "background": False,
        }
        if self.newer_fields:
            obj["completed_at"] = completed_at
        obj["error"] = error
        if self.newer_fields:
            obj["frequency_penalty"] = 0.0
        obj.update({
            "incomplete_details": {"reason": incomplete} if incomplete else None,
            "instructions": req.get("instructions"),
            "max_output_tokens": req.get("max_output_tokens"),
            "max_tool_calls": None,
            "model": self.model,
            **({"moderation": None} if self.newer_fields else {}),
            "output": copy.deepcopy(self.output) if status != "in_progress" else [],
            "parallel_tool_calls": req.get("parallel_tool_calls", True),
        })
        if self.newer_fields:
            obj["presence_penalty"] = 0.0
        obj.update({"previous_response_id": None, "prompt_cache_key": None})
        if self.newer_fields:
            obj["prompt_cache_retention"] = None
        obj.update({
            "reasoning": {"effort": reasoning.get("effort", "medium"),
                          "summary": "detailed" if reasoning.get("summary") else None}
            if reasoning else {"effort": None, "summary": None},
            "safety_identifier": None,
            "service_tier": "default" if status != "in_progress" else "auto",
            "store": req.get("store", True),
            "temperature": 1.0,
            "text": text,
            "tool_choice": "auto",
            **({"tool_usage": self.tool_usage(status)} if self.newer_fields else {}),
            "tools": [_echo_tool(t) for t in req.get("tools", [])],
            "top_logprobs": 0,
            "top_p": 1.0,
            "truncation": "disabled",
            "usage": usage,
            "user": None,
            "metadata": {},
        })
        return obj

    def tool_usage(self, status: str) -> dict[str, Any]:
        """Newer responses' ``tool_usage``: the web searches in the output, no image made."""
        usage = copy.deepcopy(_TOOL_USAGE)
        if status != "in_progress":
            usage["web_search"]["num_requests"] = sum(
                1 for item in self.output if item.get("type") == "web_search_call")
        return usage

    def usage(self, input_tokens: int, *, reasoning_tokens: int = 0,
              cached_tokens: int = 0) -> dict[str, Any]:
        """A `ResponseUsage`; output tokens are counted from the deltas sent."""
        output = self.output_tokens + reasoning_tokens
        return {"input_tokens": input_tokens,
                "input_tokens_details": {"cached_tokens": cached_tokens},
                "output_tokens": output,
                "output_tokens_details": {"reasoning_tokens": reasoning_tokens},
                "total_tokens": input_tokens + output}

    # -- lifecycle -----------------------------------------------------------

    def start(self, *, first_byte_ms: float) -> None:
        """``response.created`` then ``response.in_progress``."""
        self.emit({"type": "response.created",
                   "response": self.response_object("in_progress")}, after_ms=first_byte_ms)
        self.emit({"type": "response.in_progress",
                   "response": self.response_object("in_progress")}, after_ms=self.pace.instant())

    def completed(self, usage: dict[str, Any], *, seconds: int) -> None:
        """The terminal ``response.completed`` with the final object."""
        obj = self.response_object("completed", usage=usage,
                                   completed_at=self.created_at + seconds)
        self.emit({"type": "response.completed", "response": obj}, after_ms=self.pace.settle())

    def incomplete(self, usage: dict[str, Any], reason: str) -> None:
        """The terminal ``response.incomplete`` (e.g. ``max_output_tokens``)."""
        obj = self.response_object("incomplete", usage=usage, incomplete=reason)
        self.emit({"type": "response.incomplete", "response": obj}, after_ms=self.pace.settle())

    def error(self, kind: str, code: str | None, message: str, *, after_ms: float) -> None:
        """An in-band ``error`` event, nested as real streams send it."""
        self.emit({"type": "error", "error": {"type": kind, "code": code, "message": message,
                                              "param": None}}, after_ms=after_ms)

    def failed(self, code: str, message: str) -> None:
        """The terminal ``response.failed``; its error is flat ``{code, message}``."""
        obj = self.response_object("failed", error={"code": code, "message": message})
        self.emit({"type": "response.failed", "response": obj}, after_ms=self.pace.settle())

    # -- items ---------------------------------------------------------------

    def _open(self, item: dict[str, Any], *, after_ms: float) -> int:
        index = len(self.output)
        self.output.append(item)
        self.emit({"type": "response.output_item.added", "output_index": index,
                   "item": copy.deepcopy(item)}, after_ms=after_ms)
        return index

    def _close(self, index: int, item: dict[str, Any]) -> None:
        self.output[index] = item
        self.emit({"type": "response.output_item.done", "output_index": index,
                   "item": copy.deepcopy(item)}, after_ms=self.pace.instant())

    def message(self, text: str, *, after_ms: float, annotations: list[dict] | None = None,
                stop_at: int | None = None, status: str = "completed",
                close_text: bool = True, is_json: bool = False, tear: bool = False) -> int:
        """A message item with one ``output_text`` part, streamed token by token.

        `annotations` (url citations, by character range) are announced by
        ``response.output_text.annotation.added`` right after the delta that
        completes their range. `stop_at` ends the deltas after that many
        tokens; with ``close_text=False`` nothing closes the part or the
        item (the stream goes on to an error), else the part and the item
        close with `status`. ``is_json`` streams the text as JSON fragments
        (structured output). With `tear`, the first delta holding a non-ASCII
        character arrives split inside that character.
        """
        item_id = self.ids.item("msg", 2)
        item = {"id": item_id, "type": "message", "status": "in_progress", "content": [],
                "role": "assistant"}
        index = self._open(item, after_ms=after_ms)
        where = {"item_id": item_id, "output_index": index, "content_index": 0}
        self.emit({"type": "response.content_part.added", **where,
                   "part": {"type": "output_text", "annotations": [], "logprobs": [], "text": ""}},
                  after_ms=self.pace.instant())
        tokens = json_tokens(text, self.rng) if is_json else text_tokens(text, self.rng)
        if stop_at is not None:
            tokens = tokens[:stop_at]
        pending = sorted(annotations or [], key=lambda a: a["end_index"])
        added: list[dict] = []
        sent = ""
        for i, token in enumerate(tokens):
            sent += token
            self.output_tokens += 1
            torn = tear and not token.isascii()
            tear = tear and not torn
            self.emit({"type": "response.output_text.delta", **where, "delta": token,
                       "logprobs": [], "obfuscation": obfuscation(self.rng, token)},
                      after_ms=self.pace.first_token(120, 400) if i == 0 else self.pace.token(),
                      torn=torn)
            while pending and pending[0]["end_index"] <= len(sent):
                note = pending.pop(0)
                self.emit({"type": "response.output_text.annotation.added", **where,
                           "annotation_index": len(added), "annotation": note},
                          after_ms=self.pace.instant())
                added.append(note)
        part = {"type": "output_text", "annotations": added, "logprobs": [], "text": sent}
        item = {**item, "content": [part]}
        if not close_text:
            self.output[index] = {**item, "status": "incomplete"}
            return index
        self.emit({"type": "response.output_text.done", **where, "text": sent, "logprobs": []},
                  after_ms=self.pace.instant())
        self.emit({"type": "response.content_part.done", **where, "part": part},
                  after_ms=self.pace.instant())
        self._close(index, {**item, "status": status})
        return index

    def refusal(self, text: str, *, after_ms: float) -> int:
        """A message item whose only part is a ``refusal``."""
        item_id = self.ids.item("msg", 1)
        item = {"id": item_id, "type": "message", "status": "in_progress", "content": [],
                "role": "assistant"}
        index = self._open(item, after_ms=after_ms)
        where = {"item_id": item_id, "output_index": index, "content_index": 0}
        self.emit({"type": "response.content_part.added", **where,
                   "part": {"type": "refusal", "refusal": ""}}, after_ms=self.pace.instant())
        sent = ""
        for i, token in enumerate(text_tokens(text, self.rng)):
            sent += token
            self.output_tokens += 1
            self.emit({"type": "response.refusal.delta", **where, "delta": token},
                      after_ms=self.pace.first_token(90, 250) if i == 0 else self.pace.token())
        self.emit({"type": "response.refusal.done", **where, "refusal": sent},
                  after_ms=self.pace.instant())
        part = {"type": "refusal", "refusal": sent}
        self.emit({"type": "response.content_part.done", **where, "part": part},
                  after_ms=self.pace.instant())
        self._close(index, {**item, "status": "completed", "content": [part]})
        return index

    def function_call(self, name: str, arguments: dict[str, Any], *, after_ms: float,
                      call: str | None = None) -> dict[str, Any]:
        """A ``function_call`` item whose arguments stream as JSON fragments.

        Returns the closed item (its ``call_id`` and ``arguments`` are what a
        next step sends back with the tool's output).
        """
        raw = json.dumps(arguments, ensure_ascii=False, separators=(",", ":"))
        item = {"id": self.ids.item("fc", 2), "type": "function_call", "status": "in_progress",
                "arguments": "", "call_id": call or call_id(self.rng), "name": name}
        index = self._open(item, after_ms=after_ms)
        where = {"item_id": item["id"], "output_index": index}
        previous = ""
        for i, fragment in enumerate(json_tokens(raw, self.rng)):
            gap = self.pace.token()
            if i == 0:
                gap = self.pace.first_token(60, 200)
            elif starts_key(previous) and i > 1:
                gap = self.pace.key_pause()
            self.output_tokens += 1
            self.emit({"type": "response.function_call_arguments.delta", **where,
                       "delta": fragment, "obfuscation": obfuscation(self.rng, fragment)},
                      after_ms=gap)
            previous = fragment
        self.emit({"type": "response.function_call_arguments.done", **where, "arguments": raw},
                  after_ms=self.pace.instant())
        done = {**item, "status": "completed", "arguments": raw}
        self._close(index, done)
        return done

    def reasoning(self, summaries: list[str], *, after_ms: float) -> int:
        """A ``reasoning`` item whose summary parts stream before the answer."""
        item_id = self.ids.item("rs", 1)
        item = {"id": item_id, "type": "reasoning",
                "encrypted_content": opaque_blob(self.rng, 420), "summary": []}
        index = self._open(item, after_ms=after_ms)
        done_parts = []
        for s, summary in enumerate(summaries):
            where = {"item_id": item_id, "output_index": index, "summary_index": s}
            self.emit({"type": "response.reasoning_summary_part.added", **where,
                       "part": {"type": "summary_text", "text": ""}},
                      after_ms=self.pace.thinking(400, 1800))
            for i, token in enumerate(text_tokens(summary, self.rng)):
                self.emit({"type": "response.reasoning_summary_text.delta", **where,
                           "delta": token, "obfuscation": obfuscation(self.rng, token)},
                          after_ms=self.pace.first_token(80, 300) if i == 0 else self.pace.token())
            self.emit({"type": "response.reasoning_summary_text.done", **where, "text": summary},
                      after_ms=self.pace.instant())
            part = {"type": "summary_text", "text": summary}
            self.emit({"type": "response.reasoning_summary_part.done", **where, "part": part},
                      after_ms=self.pace.instant())
            done_parts.append(part)
        self._close(index, {**item, "encrypted_content": opaque_blob(self.rng, 560),
                            "summary": done_parts})
        return index

    def web_search(self, query: str, *, after_ms: float) -> int:
        """A ``web_search_call`` item: announced, searching, completed, then closed."""
        item_id = self.ids.item("ws", 1)
        index = self._open({"id": item_id, "type": "web_search_call", "status": "in_progress"},
                           after_ms=after_ms)
        where = {"item_id": item_id, "output_index": index}
        self.emit({"type": "response.web_search_call.in_progress", **where},
                  after_ms=self.pace.instant())
        self.emit({"type": "response.web_search_call.searching", **where},
                  after_ms=self.pace.token())
        self.emit({"type": "response.web_search_call.completed", **where},
                  after_ms=self.pace.thinking(1200, 2600))
        done = {"id": item_id, "type": "web_search_call", "status": "completed",
                "action": {"type": "search", "queries": [query], "query": query}}
        self._close(index, done)
        return index


# Newer api.openai.com responses count the hosted tools' use (zero until the end, and
# when none ran), as in the recorded programmatic-tool-calling and image-generation streams.
_TOOL_USAGE = {"image_gen": {"input_tokens": 0,
                             "input_tokens_details": {"image_tokens": 0, "text_tokens": 0},
                             "output_tokens": 0,
                             "output_tokens_details": {"image_tokens": 0, "text_tokens": 0},
                             "total_tokens": 0},
               "web_search": {"num_requests": 0}}


def _echo_tool(tool: dict[str, Any]) -> dict[str, Any]:
    """A request tool as the server echoes it back inside the `Response`."""
    if tool.get("type") == "function":
        return {"type": "function", "description": tool.get("description"),
                "name": tool["name"], "parameters": tool.get("parameters"),
                "strict": tool.get("strict", True)}
    if tool.get("type") == "web_search":
        return {"type": "web_search", "filters": None,
                "search_context_size": tool.get("search_context_size", "medium"),
                "user_location": {"type": "approximate", "city": None, "country": "FR",
                                  "region": None, "timezone": None}}
    return tool
