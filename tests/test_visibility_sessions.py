"""A duplicate on the two session streams (lesson 7) is visible where their accumulators say
so: an event that names itself by an id comes again, is dropped and noted
(``duplicate_event``); `breaks.visibility` reads that from the accumulator, not from a
reader of the wire's own. A Managed Agents preview (``event_start``, ``event_delta``) has no
id: its repeat cannot be told from new text, and nothing says it."""

from __future__ import annotations

import pytest

from lesson_lib.accumulate import accumulate
from lesson_lib.breaks import faults
from lesson_lib.breaks.visibility import REDELIVERED, visibility
from lesson_lib.capture.captures import corpus
from lesson_lib.wires import managed_agents, openai_sessions
from lesson_lib.wires.wire_events import parse_all

SESSIONS = (managed_agents.WIRE, openai_sessions.WIRE)


def _captures(wire: str):
    found = [c for c in corpus() if c.wire == wire and c.status < 300]
    assert found, f"no {wire} capture in the corpus"
    return found


def _codes(capture):
    return [d.code for d in accumulate(capture).diagnostics]


@pytest.mark.parametrize("wire", SESSIONS)
def test_a_repeated_event_is_visible_exactly_where_the_accumulator_drops_it(wire):
    seen = {"visible": 0, "unseen": 0}
    for cap in _captures(wire):
        events = parse_all(cap.events)
        good_codes, good_final = _codes(cap), accumulate(cap).final
        for i in range(len(events)):
            why = visibility(cap, "duplicate", i, events)
            broken = faults.duplicate(cap, i)
            noted = _codes(broken).count(REDELIVERED) - good_codes.count(REDELIVERED)
            if why is not None:
                seen["visible"] += 1
                assert why == f"{REDELIVERED} noted", (cap.key, i)
                # Dropped and said once: the session reads as if it came once.
                assert noted == 1, (cap.key, i, events[i].type)
                assert accumulate(broken).final == good_final, (cap.key, i)
            else:
                seen["unseen"] += 1
                assert noted == 0, (cap.key, i, events[i].type)
    assert seen["visible"] > 0, seen


def test_a_repeated_preview_fragment_has_no_id_and_nothing_notes_it():
    fragments = 0
    for cap in _captures(managed_agents.WIRE):
        events = parse_all(cap.events)
        for i, ev in enumerate(events):
            if ev.type != managed_agents.EVENT_DELTA:
                continue
            fragments += 1
            assert visibility(cap, "duplicate", i, events) is None, (cap.key, i)
            broken = faults.duplicate(cap, i)
            assert REDELIVERED not in set(_codes(broken)) - set(_codes(cap)), (cap.key, i)
    assert fragments > 0


@pytest.mark.parametrize("wire", SESSIONS)
def test_a_swap_stays_unseen_on_the_session_streams(wire):
    cap = _captures(wire)[0]
    assert all(visibility(cap, "swap", i) is None for i in range(len(cap.events) - 1))
