"""A wire's registry entry: what carries it over HTTP, as data (each wire module's ``ENTRY``).

The event vocabulary says how a body reads; the entry says how the body is
asked for and how it comes: the path and its query, the request's fields the
path takes (a model named in the URL, not in the body), whether the path or
the body asks for the stream, the framing and content type of the answer, the
suffix of a capture's body file, what part of a request says what was asked,
and the error a server sends in the provider's own shape (its JSON body and
headers). `lesson-lib serve` and the live loop read these; neither keeps a
list of wires. A wire whose streams can be asked for again from a point
says how in its `resume` (`Resume`); None where a dropped stream is lost.

>>> from lesson_lib import wires
>>> entry = wires.entry_for("aws-bedrock-converse")
>>> entry.request_path({"modelId": "us.anthropic.claude", "messages": []})
'/model/us.anthropic.claude/converse-stream'
>>> entry.request_body({"modelId": "us.anthropic.claude", "messages": []})
{'messages': []}

**One wire, one entry.** The entry is also where every later station finds
the wire's own parts, so that none keeps a list of wires:

- `decoder`: the framing that cuts the body into events (SSE's and Bedrock's
  binary frames are named by `framing`; a wire with a framing of its own
  names its decoder's factory);
- `accumulator`: what builds the provider's final object (lesson 2), given
  the step's request when it takes one (a Chat request's structured output);
- `adapter`: what turns the accumulator's changes into turn events (lesson 4);
- `next_request`: how the request after a step that asked for tools is
  built from the step's blocks (the agent loop, live and simulated);
- `sdk`: the official SDK's route (`SDKRoute`: how its stream objects
  become the course's, and the lines that point it at a server, `recipe`,
  from `sdk_clients`), or None when the wire has no official SDK;
- `record`: what `lesson-lib record` needs (`RecordRoute`: the key's
  environment variable, a default model, how the SDK is pointed at a base
  URL), or None;
- `reference_folders`: the reference-capture folders whose bare bodies are
  on this wire (compatible servers speak Chat), and `suffix`, the body
  file's suffix: together they say a file is a capture of this wire.

And the parts a wire names only when the course's default does not fit it
(each None by default, the default said beside it):

- `labels`: ``label(event, caused, kinds) -> str``, what an event addressed
  in the wire's own words, read from the changes it `caused` (lesson 2's
  slot view and graders; `kinds` a dict the reader keeps across events).
  Default: the event's type;
- `slot_order`: ``order(opened, arrival) -> key``, where a slot (its
  `SlotOpened`, and how many slots came before it) stands among the slots
  (`accumulate.fold`). Default: its address;
- `shows_duplicate` and `shows_swap`: ``shows_duplicate(event, wire)`` and
  ``shows_swap(first, second, wire)``, why a repeated or swapped event is
  visible on the wire, or None (`breaks.visibility`). Default: a swap
  never; a duplicate where the wire's accumulator, given the event twice,
  notes a ``duplicate_event`` (an event named by its id, dropped: the
  session streams), else never;
- `user_message`: ``user_message(request, text)``, the request with a user's
  `text` appended as the wire spells it (`breaks.recovery`'s "continue").
  Default: ``{"role": "user", "content": text}`` appended to ``messages``;
- `early_usage`: the stream reports an output count before the answer
  (Anthropic's ``message_start``), so a count is the output's only once the
  stop reason has come (`breaks.recovery`);
- `error_after`: ``error_after(payload, events) -> payload``, the wire's
  in-band error (its module's ``ERROR_EXAMPLE``, a copy) fitted to the
  stream so far, `events` (lesson 5's `inject_error`: Responses continues
  its ``sequence_number``). Default: the example as it is;
- `write_error`: ``write_error(payload, module, newline) -> bytes``, an
  in-band error as the framing writes it (`in_band`). Default: the
  framing's writer (`FRAMING_ERROR_WRITERS`); a framing of its own names
  one, or its wire has no injected error;
- `damage_json`: ``damage_json(raw) -> bytes | None``, one event's bytes with
  its JSON payload's last ``}`` gone, framed again (`damaged_json`).
  Default: the framing's (`FRAMING_JSON_DAMAGERS`); a framing of its own
  names one, or its wire has no ``corrupt_json`` (the fault refuses rather
  than break the frame instead of the JSON);
- `event_end`: ``event_end(body, end) -> int``, where an event reported as
  ending at `end` really ends: the bytes of its framing that belong to it
  but come after the decoder's end (lesson 5's `duplicate` copies up to it).
  Default: the framing's (`FRAMING_EVENT_ENDS`), else `end` itself.

The river runs one way: `wires/` sits upstream of the accumulators, the
adapters and the SDK translators, so it may not import them. A built-in
wire names each part by where it lives, ``"lesson_lib.accumulate.anthropic:
AnthropicAccumulator"``, and the name is resolved on first use (`resolve`);
a new wire may pass the callable itself. `lesson_lib.wires.register` adds a
wire (its module, or any object with the same names) and refuses one that
lacks a part every capability needs, naming what is missing:

>>> from types import SimpleNamespace
>>> wires.register(SimpleNamespace(WIRE="toy", ENTRY=None))
Traceback (most recent call last):
...
ValueError: wire 'toy' cannot be registered: it lacks ENTRY, EVENT_TYPES, TERMINALS, FAILURES, KEEPALIVES, read_error, finish_reason, usage_counts, retryable_error, SHEET
"""

from __future__ import annotations

import importlib
import inspect
import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any, Literal
from urllib.parse import quote, urlencode

from .resume import Resume

# A framing's name: ``sse``, ``eventstream`` (Bedrock's binary frames), or a new wire's own.
Framing = str
SSE_CONTENT_TYPE = "text/event-stream"

# A part of a wire that lives downstream of `wires/`: ``"package.module:attribute"``,
# resolved on first use, or the object itself.
Part = str | Callable[..., Any]

# The decoder of each framing the course has, by name (`Entry.decoder` overrides).
FRAMING_DECODERS: dict[str, Part] = {
    "sse": "lesson_lib.sse.decoder:SSEDecoder",
    "eventstream": "lesson_lib.sse.bedrock_frames:FrameEventDecoder",
}

# How each framing writes an in-band error into a body (`in_band`; `Entry.write_error`
# overrides).
FRAMING_ERROR_WRITERS: dict[str, Part] = {
    "sse": "lesson_lib.wires.in_band:sse_error",
    "eventstream": "lesson_lib.wires.in_band:exception_frame_error",
}

# How each framing damages one event's JSON and frames it again (`damaged_json`;
# `Entry.damage_json` overrides).
FRAMING_JSON_DAMAGERS: dict[str, Part] = {
    "sse": "lesson_lib.wires.damaged_json:text_payload",
    "eventstream": "lesson_lib.wires.damaged_json:frame_payload",
}

# Where an event of each framing ends, past the end its decoder reports (`Entry.event_end`
# overrides; a framing not named here ends its events where its decoder says).
FRAMING_EVENT_ENDS: dict[str, Part] = {
    "sse": "lesson_lib.sse.decoder:event_end",
}

_RESOLVED: dict[str, Any] = {}


def _reported_end(body: bytes, end: int) -> int:
    """An event ends where its decoder said (a framing with nothing after its events)."""
    return end


def resolve(part: Part) -> Any:
    """The object a part names: a ``"module:attribute"`` name imported on first use, anything
    else as it is."""
    if not isinstance(part, str):
        return part
    found = _RESOLVED.get(part)
    if found is None:
        module, _, attribute = part.partition(":")
        found = _RESOLVED[part] = getattr(importlib.import_module(module), attribute)
    return found


@dataclass(frozen=True)
class SDKRoute:
    """How the wire's official SDK reads a capture (lesson 4's SDK route). `package`: the
    SDK's distribution name; `translator`: a class (or factory, given the wire's name when
    it takes one) turning the SDK's stream objects into the course's; `replay`:
    ``replay(capture, chunk_size, kwargs, client, take) -> final object or None``, the SDK
    put in front of a capture offline (`take(event, new_text)` for each of its events);
    `request`: ``request(recorded_request, model) -> the SDK call's arguments``, `model`
    the model named when the capture names none. `raw_types`: the SDK's event types that
    each stand for one wire event (None: all of them; Anthropic's helper adds events of its
    own, ``text`` and the like); `by_type`: each is matched to the wire event of its type
    (False where the SDK names them all alike, Chat's ``chunk``: one wire event each, in
    order). `close`: how lesson 5 stops the SDK's streaming helper (`breaks.sdk_close`'s
    `Helper`), None where the course does not. `imports` and `client`: how the SDK is
    pointed at a server, as code a learner types (`recipe`), ``{url}`` in `client` standing
    for the server's root URL; empty where the course gives no recipe."""

    package: str
    translator: Part
    replay: Part | None = None
    request: Part | None = None
    model: str = "model"
    raw_types: frozenset[str] | None = None
    by_type: bool = True
    close: Part | None = None
    imports: str = ""
    client: str = ""

    def recipe(self, url: str) -> str:
        """The lines that make ``client``, this SDK pointed at the server at `url` (its root,
        ``http://127.0.0.1:8765``), with its retries off; empty where the route has none."""
        if not self.client:
            return ""
        return f"{self.imports}\nclient = {self.client.replace('{url}', url)}"


@dataclass(frozen=True)
class RecordRoute:
    """What `lesson-lib record` needs for the wire: `keys`, the environment variables a key
    may come from (the first one set wins); `model`, used when none is given; `request`,
    ``request(prompt, model, max_tokens) -> the SDK's create arguments``; `create`,
    ``create(key, base_url, on_request) -> (raw streaming create, the SDK module)``: the
    official SDK pointed at `base_url` when given, `on_request` its HTTP request hook;
    `via`: how the body was read, for the capture's provenance; `base_path`: what a
    server's root URL gains to be the SDK's base URL (OpenAI's SDK adds its paths after
    ``/v1``: ``--base-url http://127.0.0.1:8765/v1``)."""

    keys: tuple[str, ...]
    model: str
    request: Part
    create: Part
    via: str = "with_streaming_response.create(stream=True) + iter_bytes()"
    base_path: str = ""


# A path's fields: ``{name}`` in a template.
_FIELD = re.compile(r"\{([A-Za-z_][A-Za-z0-9_]*)\}")


def _no_headers(status: int) -> dict[str, str]:
    return {}


@dataclass(frozen=True)
class Entry:
    """One wire as HTTP carries it (see the module).

    `route`: the path a server answers at (``{name}`` a path parameter, the
    provider's own template); `path`: the path a client sends a request to,
    each ``{field}`` taken from the request's field of that name (and left out
    of the body), `query` what the path's query adds; `body_field`: the
    request's field that is the whole body (a recorded Invoke request nests
    the model's body under ``body``); `streams_by_path`: the path itself asks
    for a stream (else the body's ``"stream": true`` does); `conversation`:
    the request's fields that say what was asked (a server matches a request
    to a capture by them); `error_body(status, message)` and
    `error_headers(status)`: the provider's error for a failed request;
    `resume`: how a dropped stream is asked for again from where it broke
    (`Resume`), None on a wire whose streams cannot be. The wire's parts
    (`decoder`, `accumulator`, `adapter`, `next_request`, `sdk`, `record`,
    `reference_folders`, and where a default does not fit, `labels`, `slot_order`,
    `shows_duplicate`, `shows_swap`, `user_message`, `early_usage`, `error_after`,
    `write_error`): see the module;
    `method`: how a client asks (a session's event stream is a GET: its request is the
    path's fields).
    """

    wire: str
    title: str
    framing: Framing
    content_type: str
    suffix: str
    route: str
    path: str
    conversation: tuple[str, ...]
    error_body: Callable[[int, str], dict[str, Any]]
    error_headers: Callable[[int], dict[str, str]] = _no_headers
    query: tuple[tuple[str, str], ...] = ()
    body_field: str | None = None
    streams_by_path: bool = False
    resume: Resume | None = None
    accumulator: Part | None = None
    adapter: Part | None = None
    next_request: Part | None = None
    decoder: Part | None = None
    sdk: SDKRoute | None = None
    record: RecordRoute | None = None
    reference_folders: tuple[str, ...] = ()
    method: Literal["GET", "POST"] = "POST"
    labels: Part | None = None
    slot_order: Part | None = None
    shows_duplicate: Part | None = None
    shows_swap: Part | None = None
    user_message: Part | None = None
    early_usage: bool = False
    error_after: Part | None = None
    write_error: Part | None = None
    damage_json: Part | None = None
    event_end: Part | None = None

    def missing(self) -> list[str]:
        """The parts every capability needs that this entry lacks (empty: none)."""
        parts = {"accumulator": self.accumulator, "adapter": self.adapter,
                 "next_request": self.next_request,
                 "decoder": self.decoder or FRAMING_DECODERS.get(self.framing)}
        return [f"ENTRY.{name}" for name, part in parts.items() if part is None]

    def new_decoder(self) -> Any:
        """A fresh decoder for one body: the framing's (lesson 1)."""
        return resolve(self.decoder or FRAMING_DECODERS[self.framing])()

    def new_accumulator(self, request: Mapping[str, Any] | None = None) -> Any:
        """A fresh accumulator (lesson 2), given the step's `request` when it takes one."""
        factory = resolve(self.accumulator)
        if _takes(factory, "request"):
            return factory(request=dict(request or {}))
        return factory()

    def new_adapter(self, step: int = 1, seq: Any = None, **kw: Any) -> Any:
        """A fresh adapter for one step (lesson 4)."""
        return self.adapter_class(step, seq, **kw)

    @property
    def adapter_class(self) -> Any:
        """The adapter's class (or factory)."""
        return resolve(self.adapter)

    def new_translator(self) -> Any:
        """A fresh reader of the official SDK's stream objects (`SDKRoute.translator`), given
        the wire's name when it takes one (``ValueError`` on a wire without an SDK route)."""
        if self.sdk is None:
            raise ValueError(f"the {self.wire} wire has no official SDK route")
        factory = resolve(self.sdk.translator)
        return factory(wire=self.wire) if _takes(factory, "wire") else factory()

    def build_next(self, request: dict[str, Any], blocks: list[Any],
                   **context: Any) -> dict[str, Any]:
        """`request` (a copy the caller owns) with the step's `blocks` and their tools'
        results appended as the wire spells them: the next step's request. `context`: what
        a wire may also read (``step``, the step's view, whose ``response_id`` a stateful
        wire names; options of the wire's own); a builder takes what it needs and lets the
        rest pass (``**_``)."""
        return resolve(self.next_request)(request, blocks, **context)

    def part(self, name: str) -> Any:
        """The wire's part called `name` (`labels`, `slot_order`, ...), resolved; None
        where the wire names none and the course's default holds."""
        found = getattr(self, name)
        return None if found is None else resolve(found)

    def error_writer(self) -> Callable[..., bytes] | None:
        """How an in-band error is written on this wire (`write_error`, else its
        framing's); None where neither says."""
        found = self.write_error or FRAMING_ERROR_WRITERS.get(self.framing)
        return None if found is None else resolve(found)

    def json_damager(self) -> Callable[[bytes], bytes | None] | None:
        """How one event's JSON is damaged and framed again on this wire (`damage_json`,
        else its framing's); None where neither says."""
        found = self.damage_json or FRAMING_JSON_DAMAGERS.get(self.framing)
        return None if found is None else resolve(found)

    def event_ender(self) -> Callable[[bytes, int], int]:
        """Where an event really ends, from the end its decoder reported (`event_end`,
        else its framing's, else that end)."""
        found = self.event_end or FRAMING_EVENT_ENDS.get(self.framing)
        return _reported_end if found is None else resolve(found)

    @property
    def path_fields(self) -> tuple[str, ...]:
        """The request's fields the path names."""
        return tuple(_FIELD.findall(self.path))

    def request_path(self, request: Mapping[str, Any]) -> str:
        """The path (and query) of `request`: each field the path names, from the request
        (``ValueError`` when the request lacks one)."""
        def value(match: re.Match[str]) -> str:
            found = request.get(match.group(1))
            if not isinstance(found, str) or not found:
                raise ValueError(f"a {self.wire} request names its {match.group(1)!r} in "
                                 f"the path ({self.path}), and this one has none")
            return quote(found, safe="")
        path = _FIELD.sub(value, self.path)
        return f"{path}?{urlencode(self.query)}" if self.query else path

    def request_body(self, request: Mapping[str, Any]) -> dict[str, Any]:
        """The body of `request` as the provider takes it: its `body_field`, else the
        request less the fields the path took; ``"stream": true`` added where the body
        asks for the stream."""
        if self.body_field is not None and isinstance(request.get(self.body_field), dict):
            body = dict(request[self.body_field])
        else:
            body = {k: v for k, v in request.items() if k not in self.path_fields}
        return body if self.streams_by_path else {**body, "stream": True}

    def asked(self, body: Mapping[str, Any]) -> Mapping[str, Any]:
        """What a request body or a recorded request says was asked: a recorded
        request's `body_field` opened, anything else as it is."""
        inner = body.get(self.body_field) if self.body_field is not None else None
        return inner if isinstance(inner, dict) else body


def _takes(factory: Any, name: str) -> bool:
    """Whether `factory` takes a parameter called `name`."""
    try:
        return name in inspect.signature(factory).parameters
    except (TypeError, ValueError):
        return False
