"""Adapters: one per wire, from the accumulators' changes to turn events, and one
from the official SDKs' own stream events (`sdk`).

Which adapter speaks for a step is data: each wire's registry entry names
its adapter (`lesson_lib.wires.entry.Entry.adapter`; `ADAPTERS` reads them
all), and `DIALECTS` maps a server that speaks a wire with its own traits
(an OpenAI-compatible Chat server) to the adapter that knows them. A new
provider is one more module and one line in the registry: the reducer and
the views never change for it, since they read only the turn's events.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from ...wires import PerWire
from ...wires import chat as chat_wire
from .anthropic import AnthropicAdapter
from .base import Counter, WireAdapter
from .bedrock import ConverseAdapter, InvokeAdapter
from .chat import ChatAdapter
from .deepseek import DeepSeekChatAdapter
from .gemini import GeminiAdapter
from .gemini_interactions import GeminiInteractionsAdapter
from .managed_agents import ManagedAgentsAdapter
from .openai_sessions import OpenAISessionsAdapter
from .responses import ResponsesAdapter

__all__ = ["ADAPTERS", "DIALECTS", "AnthropicAdapter", "ChatAdapter", "ConverseAdapter",
           "Counter", "DeepSeekChatAdapter", "Dialect", "GeminiAdapter",
           "GeminiInteractionsAdapter", "InvokeAdapter", "ManagedAgentsAdapter",
           "OpenAISessionsAdapter", "ResponsesAdapter", "WireAdapter", "adapter_for", "dialect_for", "dialect_of",
           "named_dialect"]


@dataclass(frozen=True)
class Dialect:
    """A server speaking `wire` with traits of its own: its adapter, and the model-name
    prefixes that say a stream is in it."""

    wire: str
    adapter: type[WireAdapter]
    models: tuple[str, ...] = ()


ADAPTERS: Mapping[str, type[WireAdapter]] = PerWire(lambda entry: entry.adapter_class,
                                                   lambda entry: entry.adapter is not None)
DIALECTS: dict[str, Dialect] = {
    "deepseek": Dialect(chat_wire.WIRE, DeepSeekChatAdapter, ("deepseek-",)),
}


def adapter_for(wire: str | None, step: int = 1, seq: Counter | None = None, *,
                dialect: str | None = None, **kw: Any) -> WireAdapter:
    """A fresh adapter for one step on `wire`, in `dialect` when given (``ValueError`` for
    an unknown wire, or a dialect of another wire)."""
    if dialect is not None:
        found = DIALECTS.get(dialect)
        if found is None or found.wire != wire:
            raise ValueError(f"no turn adapter for dialect {dialect!r} of wire {wire!r}")
        return found.adapter(step, seq, **kw)
    if (wire or "") not in ADAPTERS:
        raise ValueError(f"no turn adapter for wire {wire!r}")
    return ADAPTERS[wire or ""](step, seq, **kw)


def dialect_of(capture: Any) -> str | None:
    """The dialect a capture's stream is in: its sidecar's ``dialect``, else the one whose
    model prefix the request's model (or the stream's first payload's) starts with."""
    named = named_dialect(capture.sidecar)
    if named is not None:
        return named
    first = None
    if capture.events:
        from ...wires.wire_events import parse_payload
        first = parse_payload(capture.events[0]).payload
    return dialect_for(capture.wire, capture.request, first)


def named_dialect(sidecar: Any) -> str | None:
    """The dialect a capture's sidecar names (``dialect``), when it is a known one."""
    named = sidecar.get("dialect") if isinstance(sidecar, dict) else None
    return named if isinstance(named, str) and named in DIALECTS else None


def dialect_for(wire: str | None, request: Any, first_payload: Any = None) -> str | None:
    """The dialect of `wire` whose model prefix the request's model starts with, else the
    model the stream's first payload names (None: the wire's own adapter)."""
    model = request.get("model") if isinstance(request, dict) else None
    if not isinstance(model, str) and isinstance(first_payload, dict):
        model = first_payload.get("model")
    if not isinstance(model, str):
        return None
    return next((name for name, d in DIALECTS.items()
                 if d.wire == wire and model.startswith(d.models)), None)
