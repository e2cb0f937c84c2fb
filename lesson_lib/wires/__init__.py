"""Lessons 1 and 2, station wires: one home per wire, what is true of Anthropic Messages,
OpenAI Responses, OpenAI Chat, Google Gemini and Gemini Interactions, and of AWS Bedrock's
two streaming APIs.

Each wire's module (`anthropic`, `responses`, `chat`, `gemini`, `gemini_interactions`,
`bedrock_converse`, `bedrock_invoke`; `bedrock` holds what the two Bedrock APIs share;
lesson 7's `managed_agents` and `openai_sessions`, two vendors' session streams) holds,
as data and small pure functions:

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
  and a failed request's error body and headers; how a dropped stream resumes
  where the wire can (`resume.Resume`); and where its parts live downstream
  (decoder, accumulator, adapter, next request, SDK route, record route,
  reference folders; and where the course's default does not fit, lesson 2's
  labels, the slots' order, the order faults it shows, a user's words, an
  early usage count: see `entry`);
- optionally ``read_row(payload, row)``, its events' cells in lesson 1's
  table (`event_rows`, whose readers of the first wires stand in for it), and
  ``sdk_shows(payload, event_type)``, the SDK union members an event shows
  (`sdk_unions`, likewise).

The registry is `WIRES` (each wire's module) and `ENTRIES` (its entry), and
`register(module)` is the only way in: a new wire is its module and one call,
refused with a message naming what it lacks. Every station, command and page
reads these two (`PerWire` reads one field of every entry when asked), so none
keeps a list of wires.

Beside them, read from them: `wire_events` (events to wire events), `detect`
(`detect_wire`: which wire a bare body speaks), `sdk_clients` (how each official SDK is
pointed at a server, for the SDK routes' recipes), `stream_end` (how a stream ended:
its terminal and its errors), `event_rows` (one row per event, the same fields on
every wire: lesson 1's table, laid out by `lesson_lib.views.event_table`; its cells
written with `row_text`) and `sdk_unions` (which of the official SDKs' stream types
an event shows). `event_table` is that table's old name,
kept for the notebooks that import it.

>>> from lesson_lib import wires
>>> wires.for_wire("anthropic-messages").finish_reason("max_tokens")
'length'
>>> wires.for_wire("openai-chat").retryable_error("insufficient_quota")
False
>>> wires.retryable_status(529)
True
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping
from types import ModuleType
from typing import Any, TypeVar

from . import (
    anthropic,
    bedrock,
    bedrock_converse,
    bedrock_invoke,
    chat,
    gemini,
    gemini_interactions,
    managed_agents,
    openai_sessions,
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
from .detect import detect_wire
from .entry import Entry, RecordRoute, SDKRoute

# The registry: each wire's module (or any object with the same names), by its name, and
# its entry (`entry.Entry`: how HTTP carries it and where its parts live). `register` is
# the only way in; every station, command and page reads these two.
WIRES: dict[str, ModuleType] = {}
ENTRIES: dict[str, Entry] = {}
# The names a wire's module must have: every capability reads them.
REQUIRED = ("ENTRY", "EVENT_TYPES", "TERMINALS", "FAILURES", "KEEPALIVES", "read_error",
            "finish_reason", "usage_counts", "retryable_error", "SHEET")

__all__ = ["ENTRIES", "FAILURE_TYPES", "FINISHES", "REQUIRED", "USAGE_COUNTS", "WIRES", "Entry",
           "FinishReason", "PerWire", "RecordRoute", "RetryRule", "SDKRoute", "Sheet", "WireError",
           "anthropic", "bedrock", "bedrock_converse", "bedrock_invoke", "chat", "detect_wire",
           "entry_for",
           "error_body", "for_wire", "gemini", "gemini_interactions", "managed_agents", "openai_sessions",
           "read_error",
           "register", "responses",
           "retryable_status", "unregister"]


def register(module: Any) -> Entry:
    """Add a wire: its module (or an object with the same names, see `REQUIRED`) whose
    ``ENTRY`` names its parts. ``ValueError`` naming every missing part; a wire already
    registered is replaced."""
    name = getattr(module, "WIRE", None)
    if not isinstance(name, str) or not name:
        raise ValueError("a wire cannot be registered without its name (WIRE)")
    missing = [part for part in REQUIRED if getattr(module, part, None) is None]
    entry = getattr(module, "ENTRY", None)
    if isinstance(entry, Entry):
        if entry.wire != name:
            raise ValueError(f"wire {name!r} cannot be registered: its ENTRY is {entry.wire!r}'s")
        missing += entry.missing()
    elif "ENTRY" not in missing:
        missing.append("ENTRY (an entry.Entry)")
    if missing:
        raise ValueError(f"wire {name!r} cannot be registered: it lacks {', '.join(missing)}")
    WIRES[name] = module
    ENTRIES[name] = entry
    return entry


T = TypeVar("T")


class PerWire(Mapping[str, T]):
    """Each registered wire's `read(entry)`, for the wires `keep(entry)` allows, read when
    asked: a wire registered later is in it (a table built once at import would miss it)."""

    def __init__(self, read: Callable[[Entry], T],
                 keep: Callable[[Entry], bool] = lambda entry: True) -> None:
        self._read, self._keep = read, keep

    def __getitem__(self, wire: str) -> T:
        entry = ENTRIES.get(wire)
        if entry is None or not self._keep(entry):
            raise KeyError(wire)
        return self._read(entry)

    def __iter__(self) -> Iterator[str]:
        return (wire for wire, entry in list(ENTRIES.items()) if self._keep(entry))

    def __len__(self) -> int:
        return sum(1 for _ in self)


def unregister(name: str) -> None:
    """Remove a wire `register` added (a test's own wire; no error when absent)."""
    WIRES.pop(name, None)
    ENTRIES.pop(name, None)


# The course's wires: one line each.
for _module in (anthropic, responses, chat, gemini, bedrock_converse, bedrock_invoke,
                gemini_interactions, managed_agents, openai_sessions):
    register(_module)
# Every event type that reports an in-band failure on one of the course's wires.
FAILURE_TYPES = frozenset().union(*(m.FAILURES for m in WIRES.values()))


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
