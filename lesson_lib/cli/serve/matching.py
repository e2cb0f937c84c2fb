"""Which capture answers a request: named explicitly, or found by the request's content.

Pure: the corpus, the wire of the path and the request's JSON in; a
`Capture` or a `Miss` (status and a message naming what exists) out.

By content, a capture matches when its recorded conversation equals the
request's (the fields each wire's registry entry names as its `conversation`:
Anthropic ``system`` + ``messages``, Responses ``instructions`` + ``input``, Chat
``messages``, Gemini ``contents``; a string content counts as one text block).
Where several do, the tool names and then the model narrow them down.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from ...capture.captures import Capture
from ...wires import ENTRIES, PerWire, responses

# The provider path each wire is served at, and the wires whose path itself asks for
# a stream (no ``stream`` field in the body): each wire's registry entry says.
PATHS = PerWire(lambda entry: entry.route)
STREAMING_PATHS = PerWire(lambda entry: entry.route, lambda entry: entry.streams_by_path)

_TEXT_BLOCKS = {"text", "input_text", "output_text"}


@dataclass(frozen=True)
class Miss:
    """No single capture answers: the HTTP status and a message naming what exists."""

    status: int
    message: str


def find(corpus: Sequence[Capture], wire: str, request: dict[str, Any] | None,
         name: str | None) -> Capture | Miss:
    """The capture for a request at `wire`'s path: by `name` when given, else by content."""
    if name:
        return by_name(corpus, wire, name)
    return by_content(corpus, wire, request or {})


def by_name(corpus: Sequence[Capture], wire: str | None, name: str) -> Capture | Miss:
    """The capture called `name` (``wire/name``, or a bare name unique in the corpus)."""
    name = name.strip().removesuffix(".sse")
    hits = [c for c in corpus if c.key == name]
    if not hits and "/" not in name:
        hits = [c for c in corpus if c.name == name]
        if len(hits) > 1 and wire:
            hits = [c for c in hits if c.wire == wire] or hits
    if len(hits) > 1:
        return Miss(400, f"capture {name!r} is ambiguous: say one of {_keys(hits)}")
    if not hits:
        return Miss(404, f"no capture {name!r}; the corpus has {_keys(corpus)}")
    cap = hits[0]
    if wire and cap.wire != wire:
        return Miss(400, f"capture {cap.key!r} is on the {cap.wire} wire: "
                         f"POST it to {PATHS.get(cap.wire or '', '?')}")
    return cap


def by_content(corpus: Sequence[Capture], wire: str, request: dict[str, Any]) -> Capture | Miss:
    """The one capture of `wire` whose recorded request matches `request`."""
    same_wire = [c for c in corpus if c.wire == wire]
    request = _body(wire, request)
    wanted = conversation(wire, request)
    hits = [c for c in same_wire if conversation(wire, _recorded(c)) == wanted]
    for narrow in (_tool_names, _model):
        if len(hits) > 1:
            narrower = [c for c in hits if narrow(_recorded(c)) == narrow(request)]
            hits = narrower or hits
    if len(hits) == 1:
        return hits[0]
    if hits:
        return Miss(400, f"{len(hits)} captures match this request: {_keys(hits)}; "
                         "choose one with ?capture= or the capture header")
    return Miss(404, f"no {wire} capture matches this request; choose one with ?capture= "
                     f"or the capture header: {_keys(same_wire)}")


def conversation(wire: str, request: dict[str, Any]) -> tuple:
    """The parts of a request that say what was asked, normalised for comparison."""
    parts = []
    entry = ENTRIES.get(wire)
    for key in entry.conversation if entry is not None else ():
        value = request.get(key)
        if wire == responses.WIRE and key == "input" and isinstance(value, str):
            value = [{"role": "user", "content": value}]
        parts.append(_normal(value))
    return tuple(parts)


def _normal(value: Any) -> Any:
    if isinstance(value, list):
        return [_normal(v) for v in value]
    if isinstance(value, dict):
        out = {k: _normal(v) for k, v in value.items() if k not in ("cache_control", "type")
               or (k == "type" and not (isinstance(v, str)
                                                and v in _TEXT_BLOCKS | {"message"}))}
        if isinstance(out.get("content"), str):
            out["content"] = [{"text": out["content"]}]
        return out
    return value


def _recorded(cap: Capture) -> dict[str, Any]:
    return _body(cap.wire or "", cap.request if isinstance(cap.request, dict) else {})


def _body(wire: str, request: dict[str, Any]) -> dict[str, Any]:
    """The request as its API's body: a recorded Invoke request nests the model's own body
    under ``body`` (its model id goes in the path); the wire's entry says (`Entry.asked`)."""
    entry = ENTRIES.get(wire)
    return dict(entry.asked(request)) if entry is not None else request


def _tool_names(request: dict[str, Any]) -> list[str]:
    names = []
    tools = request.get("tools")
    for tool in tools if isinstance(tools, list) else []:
        if isinstance(tool, dict):
            fn = tool.get("function")
            names.append(str((fn if isinstance(fn, dict) else tool).get("name", tool.get("type"))))
    return sorted(names)


def _model(request: dict[str, Any]) -> Any:
    return request.get("model")


def _keys(caps: Sequence[Capture]) -> str:
    return ", ".join(c.key for c in caps) or "(none)"
