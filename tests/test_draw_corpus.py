"""`draw` over every capture and reference capture, after every event: no settled part changes.

Each capture is reduced event by event (as a one-step turn, on the wire
route) and drawn after every event with one `Drawer`. A part drawn settled
must be in every later drawing, unchanged; no drawing holds an element that
runs or fetches; and drawing the last state at once gives the same parts as
drawing it event by event. The number of drawings checked is printed
(``pytest -s``) and asserted to be large.
"""

from __future__ import annotations

import pytest
from draw_checks import live_elements
from pending import reason

from lesson_lib.capture.captures import corpus, load, reference_corpus
from lesson_lib.draw import Drawer, draw
from lesson_lib.turn import initial, reduce
from lesson_lib.turn.adapters import ADAPTERS
from lesson_lib.turn.run import turn_events

WIRES = tuple(ADAPTERS)          # every wire the course reads: each has an adapter
ALL = corpus() + reference_corpus()
CAPTURES = [c for c in ALL if c.wire in WIRES]
SKIPPED = [c for c in ALL if c.wire not in WIRES]
TURNS = {"weather-turn/" + w: [load(f"{w}/weather-turn-step1"), load(f"{w}/weather-turn-step2")]
         for w in WIRES}
CHECKED = {"draws": 0}


def check_turn(events) -> int:
    """Draw after every event; fail at the first settled part that changed or vanished."""
    drawer = Drawer()
    settled: dict[str, object] = {}
    state = initial()
    drawing = None
    for i, event in enumerate(events):
        state = reduce(state, event)
        drawing = drawer.draw(state)
        parts = drawing.parts
        keys = [p.key for p in parts]
        assert len(keys) == len(set(keys)), f"event {i}: duplicate keys"
        now = {p.key: p for p in parts}
        for key, part in settled.items():
            assert now.get(key) == part, f"event {i} ({event.kind}): settled {key} changed"
        for part in drawing.live:
            assert not part.settled and part.key not in settled, part.key
            problems = live_elements(part.html)
            assert not problems, (part.key, problems)
        for part in parts:
            if part.settled and part.key not in settled:
                assert not live_elements(part.html), part.key
                settled[part.key] = part
    at_once = Drawer().draw(state)
    assert at_once.parts == drawing.parts
    assert draw(state).parts == drawing.parts
    return len(events)


@pytest.mark.parametrize("capture", CAPTURES, ids=lambda c: c.key)
def test_no_settled_part_ever_changes_over_a_capture(capture):
    CHECKED["draws"] += check_turn(turn_events(capture))


@pytest.mark.parametrize("key", sorted(TURNS))
def test_no_settled_part_ever_changes_over_a_two_step_turn(key):
    CHECKED["draws"] += check_turn(turn_events(TURNS[key]))


def test_every_capture_is_drawn_or_its_wire_is_pending_by_name():
    for capture in SKIPPED:          # never skipped silently: each with its reason
        why = reason(capture)
        assert why is not None, f"{capture.key}: a wire no test names: {capture.wire}"
        print(f"\nnot drawn: {capture.key}: {why}")
    assert CAPTURES


def test_the_count_of_drawings_checked():
    if not reference_corpus():
        pytest.skip("reference captures absent (set REFERENCE_CAPTURES): corpus only")
    print(f"\ndrawings checked: {CHECKED['draws']} over {len(CAPTURES)} captures "
          f"and {len(TURNS)} two-step turns")
    assert CHECKED["draws"] > 5_000


def test_a_slider_moved_back_draws_the_same_as_drawing_there_first():
    events = turn_events(load("anthropic-messages/weather-turn-step1"))
    final = initial()
    for e in events:
        final = reduce(final, e)
    drawer = Drawer()
    drawer.draw(final)
    for i in (len(events) // 2, 3, 0):
        assert drawer.draw(final.at(i)).parts == Drawer().draw(final.at(i)).parts
