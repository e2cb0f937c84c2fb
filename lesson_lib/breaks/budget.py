"""Budgets: policies that stop a turn mid-stream, as pure functions over its deltas.

A budget watches the deltas as they arrive and names the first one that
crosses it; lesson 4's cancel is what then stops the turn. Four budgets:

- output tokens: an **estimate** while the stream runs, since no
  tokenizer is available offline: ``ceil(characters / 4)`` per delta,
  summed (about four characters per token for English text; code, JSON
  and non-Latin scripts run denser). The final usage, when the stream
  reports it, is the truth to set the estimate against
  (`final_output_tokens`);
- cost: the estimate priced from `PRICES`, a small dated table that is
  **illustrative only** (check the provider's pricing page);
- time on the virtual clock: the delta's arrival time (ms from the
  request), never the wall clock;
- tool calls: how many calls have begun.

`deltas` reads a stream's wire events into `Delta` records on every
registered wire, through the turn events its accumulator and adapter make
(`delta_of` reads one: the live loop counts the same); `first_crossing` returns the index of the first delta at
which the budget is crossed (None when it never is); `budget_end` is how a turn cancelled
there ends: ``budget_reached``, the application's budget, never ``completed`` (lesson 7's
vocabulary, `lesson_lib.turn.ends`). Linear time.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

from ..turn.ends import TurnEnd
from ..turn.events import BlockDelta, BlockStarted, TurnEvent
from ..turn.stream import TurnStream
from ..wires import WIRES
from ..wires.wire_events import WireEvent

CHARS_PER_TOKEN = 4

# USD per million output tokens. Illustrative, as listed in January 2026; not a quote.
PRICES_DATE = "2026-01"
PRICES: dict[str, float] = {
    "claude-opus-4-6": 25.00, "claude-sonnet-4-6": 15.00, "claude-haiku-4-5": 5.00,
    "gpt-4.1": 8.00, "gpt-5": 10.00, "gpt-4o": 10.00,
}


@dataclass(frozen=True)
class Delta:
    """One piece of output: its event, arrival time, text, and whether it begins a tool call."""

    event: int                 # the wire event's index
    t: float | None            # arrival ms, from the capture's chunk timing
    text: str                  # text, reasoning or tool-argument characters
    starts_tool_call: bool = False


def delta_of(event: TurnEvent) -> Delta | None:
    """The output one turn event carries, as a `Delta` (None for an event without output).

    A block's fragment (text, reasoning or tool arguments), the text a block's
    start already carries, and the start of a tool call (client or server side:
    each is a call begun). The turn events are the same on every wire, so
    is the budget: no wire's payload is read here.
    """
    if isinstance(event, BlockDelta):
        return Delta(_index(event), event.t, event.fragment)
    if isinstance(event, BlockStarted) and (event.block_kind == "tool_call" or event.content):
        return Delta(_index(event), event.t, event.content, event.block_kind == "tool_call")
    return None


def _index(event: TurnEvent) -> int:
    return event.at if event.at is not None else -1


def deltas(events: list[WireEvent], wire: str) -> list[Delta]:
    """The output deltas of a stream's wire events, in order: the wire's accumulator and
    adapter read them into turn events (`TurnStream`), and `delta_of` reads those (a wire
    this course lacks gives none)."""
    if wire not in WIRES:
        return []
    stream = TurnStream(wire)
    return [d for d in map(delta_of, stream.feed_events(events)) if d is not None]


def token_estimate(text: str) -> int:
    """The estimated token count of one delta: ``ceil(len / 4)`` (an estimate, see above)."""
    return math.ceil(len(text) / CHARS_PER_TOKEN)


@dataclass(frozen=True)
class Budget:
    """Limits; None means unlimited. A delta crosses when a running total reaches a limit."""

    output_tokens: int | None = None
    cost_usd: float | None = None
    model: str | None = None          # picks the price for `cost_usd`
    time_ms: float | None = None
    tool_calls: int | None = None


def price_per_token(model: str | None) -> float | None:
    """USD per output token from `PRICES` (a dated model name matches its base name)."""
    for name, price in PRICES.items():
        if model and model.startswith(name):
            return price / 1_000_000
    return None


@dataclass(frozen=True)
class Crossing:
    """Where a budget was crossed: the delta's position, which limit, and the running value."""

    delta: int
    event: int
    limit: str
    value: float


def first_crossing(run: list[Delta], budget: Budget) -> Crossing | None:
    """The first delta at which any limit of `budget` is reached, or None."""
    price = price_per_token(budget.model) if budget.cost_usd is not None else None
    if budget.cost_usd is not None and price is None:
        raise ValueError(f"no illustrative price for model {budget.model!r}")
    tokens = calls = 0
    for i, d in enumerate(run):
        tokens += token_estimate(d.text)
        calls += d.starts_tool_call
        checks: list[tuple[str, float, float | None]] = [
            ("output_tokens", tokens, budget.output_tokens),
            ("cost_usd", tokens * (price or 0.0), budget.cost_usd),
            ("time_ms", d.t if d.t is not None else -math.inf, budget.time_ms),
            ("tool_calls", calls, budget.tool_calls)]
        for name, value, limit in checks:
            if limit is not None and value >= limit:
                return Crossing(i, d.event, name, value)
    return None


def budget_end(crossing: Crossing, budget: Budget) -> TurnEnd:
    """How a turn cancelled at `crossing` ends (pass it to `run_turn`'s `cancel_end`): a
    budget reached, the application's, with which limit and the running value at it."""
    limit = getattr(budget, crossing.limit)
    return TurnEnd("budget_reached", "application_budget",
                   {"by": f"the {crossing.limit} budget of {limit:g} was reached "
                          f"({crossing.value:g})",
                    "limit": crossing.limit, "budget": limit, "spent": crossing.value})


def running_estimate(run: list[Delta]) -> list[int]:
    """The output-token estimate after each delta."""
    out, total = [], 0
    for d in run:
        total += token_estimate(d.text)
        out.append(total)
    return out


def final_output_tokens(events: list[WireEvent]) -> int | None:
    """The output tokens the stream itself reports at its end (the truth), if it does."""
    found = None
    for ev in events:
        p: Any = ev.payload
        if not isinstance(p, dict):
            continue
        response = p.get("response")
        usage = response.get("usage") if isinstance(response, dict) else p.get("usage")
        if isinstance(usage, dict):
            n = usage.get("output_tokens", usage.get("completion_tokens"))
            if type(n) is int:
                found = n
    return found
