"""Lessons 1 and 2, station wires: one home per wire, what is true of Anthropic Messages,
OpenAI Responses, OpenAI Chat and Google Gemini, and of AWS Bedrock's two streaming APIs.

Each wire's module (`anthropic`, `responses`, `chat`, `gemini`, `bedrock_converse`,
`bedrock_invoke`; `bedrock` holds what the two Bedrock APIs share; lesson 7's
`managed_agents`, an agent session's stream) holds, as data and small pure functions:

- ``EVENT_TYPES`` (and ``DELTA_TYPES`` where the wire names its deltas):
  the vocabulary the event table flags unknown types against;
- ``TERMINALS``: the event types that end a stream properly, and
  ``FAILURES``: those that report an in-band failure after HTTP 200;
  ``KEEPALIVES``: those that only keep an idle connection open (Anthropic's
  ``ping``);
- ``read_error(event_type, payload) -> WireError | None``: how its in-band
  errors read;
- ``finish_reason(raw) -> FinishReason | None``: its stop reason in the unified
  vocabulary `FINISHES` (``stop``, ``length``, ``tool_calls``,
  ``content_filter``, ``refusal``, ``pause``, ``error``, ``other``). On
  Anthropic `raw` is a ``stop_reason``, on Chat a choice's
  ``finish_reason``, on Responses the final response object (the wire has
  no stop reason: it is derived from ``status``,
  ``incomplete_details.reason`` and the output items; `responses.finish_from`
  takes those three facts directly);
- ``RETRY``, a `RetryRule` (``RETRYABLE_ERRORS``, ``FINAL_ERRORS``, and
  which field names an error: Anthropic's ``type``, OpenAI's ``code``), with
  ``retryable_error(error_type_or_code) -> bool`` and ``retryable(WireError)
  -> bool`` its two readings; ``retryable_status(status) -> bool``, the HTTP
  rule every wire shares: which failures a retry can cure (`error_body`
  reads an HTTP error body's `WireError`);
- ``usage_counts(usage) -> dict``: a usage object's token counts in the
  unified names `USAGE_COUNTS` (``input`` with cache reads and writes
  included, ``output``, ``cache_read``, ``cache_write``, ``reasoning``);
- ``SHEET``: the wire on one page (`Sheet`), for a cheat sheet;
- ``ENTRY``: what carries it over HTTP (`entry.Entry`): its title, framing,
  content type, capture suffix, paths, the request's fields the path takes,
  and a failed request's error body and headers, and how a dropped stream
  resumes where the wire can (`resume.Resume`). `ENTRIES` holds them all;
  `lesson-lib serve` and the live loop read them.

Beside them, read from them: `wire_events` (events to wire events, and
`detect_wire`), `stream_end` (how a stream ended: its terminal and its
errors) and `event_table` (one row per event, the same columns on every wire).

>>> from lesson_lib import wires
>>> wires.for_wire("anthropic-messages").finish_reason("max_tokens")
'length'
>>> wires.for_wire("openai-chat").retryable_error("insufficient_quota")
False
>>> wires.retryable_status(529)
True
"""

from __future__ import annotations

from types import ModuleType
from typing import Any

from . import (
    anthropic,
    bedrock,
    bedrock_converse,
    bedrock_invoke,
    chat,
    gemini,
    managed_agents,
    responses,
)
from .common import (
    FINISHES,
    USAGE_COUNTS,
    FinishReason,
    RetryRule,
    Sheet,
    WireError,
    error_body,
    retryable_status,
)
from .entry import Entry

WIRES: dict[str, ModuleType] = {m.WIRE: m for m in (anthropic, responses, chat, gemini,
                                                    bedrock_converse, bedrock_invoke,
                                                    managed_agents)}
# Each wire's entry: what carries it over HTTP (`entry.Entry`), read by serve and live.
ENTRIES: dict[str, Entry] = {name: module.ENTRY for name, module in WIRES.items()}
# Every event type that reports an in-band failure on some wire.
FAILURE_TYPES = frozenset().union(*(m.FAILURES for m in WIRES.values()))

__all__ = ["ENTRIES", "FAILURE_TYPES", "FINISHES", "USAGE_COUNTS", "WIRES", "Entry", "FinishReason",
           "RetryRule", "Sheet", "WireError", "anthropic", "bedrock", "bedrock_converse",
           "bedrock_invoke", "chat", "entry_for", "error_body", "for_wire", "gemini",
           "read_error", "responses", "retryable_status"]


def for_wire(name: str | None) -> ModuleType:
    """The module of the wire called `name` (``ValueError`` for a wire this course lacks)."""
    try:
        return WIRES[name or ""]
    except KeyError:
        raise ValueError(f"unknown wire {name!r}; known: {', '.join(WIRES)}") from None


def entry_for(name: str | None) -> Entry:
    """The registry entry of the wire called `name` (``ValueError`` for a wire this course
    lacks)."""
    return for_wire(name).ENTRY


def read_error(wire: str | None, event_type: str | None, payload: Any) -> WireError | None:
    """The in-band error an event reports, read the way its wire writes it.

    On an unknown wire every failure type of every wire counts, read in
    every shape (the Responses reader knows them all).
    """
    module = WIRES.get(wire or "")
    if module is None:
        return responses.read_error(event_type, payload) if event_type in FAILURE_TYPES else None
    return module.read_error(event_type, payload)
