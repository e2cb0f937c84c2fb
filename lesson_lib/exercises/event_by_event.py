"""A learner's adapter checked the way the course's own is read: the wire's registry entry
names the learner's class for a while, and what it says is compared with the course's,
event by event (lessons 4b and 7)."""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Iterator
from contextlib import contextmanager

from ..wires import ENTRIES


@contextmanager
def adapting(wire: str, adapter_class: type) -> Iterator[None]:
    """The turn's stations with `adapter_class` as `wire`'s adapter, for the block: the
    wire's registry entry names the class as its adapter part (every station reads the
    entry), and the course's own entry is put back after."""
    before = ENTRIES[wire]
    ENTRIES[wire] = dataclasses.replace(before, adapter=adapter_class)
    try:
        yield
    finally:
        ENTRIES[wire] = before


def differs_at(expected: list, got: list) -> int:
    """Where `got` first differs from `expected`, item by item: the first unequal item, else
    where the shorter list ends (both lengths when the lists are the same)."""
    return next((i for i, (e, g) in enumerate(zip(expected, got, strict=False)) if e != g),
                min(len(expected), len(got)))


def turn_event_difference(expected: list[dict], got: list[dict],
                          advice: Callable[[dict | None, dict | None], str], *,
                          after: bool = False) -> str | None:
    """The first turn event that differs, what was expected (with the kind before it when
    `after`), and `advice` on the two events; None when the events are the same."""
    at = differs_at(expected, got)
    if at == len(expected) == len(got):
        return None
    want = expected[at] if at < len(expected) else None
    have = got[at] if at < len(got) else None
    before = f" (after {expected[at - 1]['kind']})" if after and at else ""
    return (f"turn event {at}{before}: expected {said(want)}, got {said(have)}.\n"
            f"  Fix: {advice(want, have)}.")


def said(event: dict | None) -> str:
    """A compared turn event on one line: its kind and its fields, cut at 160 characters."""
    if event is None:
        return "no event (your events end here)"
    text = ", ".join(f"{k}={v!r}" for k, v in event.items() if k != "kind")
    text = f"{event['kind']}({text})"
    return text if len(text) <= 160 else text[:157] + "..."
