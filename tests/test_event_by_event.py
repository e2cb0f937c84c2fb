"""The shared part of lessons 4b's and 7's adapter checkers: the swapped registry entry
and the event-by-event comparison."""

import pytest

from lesson_lib.exercises.event_by_event import adapting, differs_at, turn_event_difference
from lesson_lib.turn.adapters import WireAdapter
from lesson_lib.wires import ENTRIES

WIRE = next(iter(ENTRIES))


class Learners(WireAdapter):
    pass


def test_the_entry_names_the_class_inside_and_is_put_back_even_after_an_error():
    course = ENTRIES[WIRE]
    with pytest.raises(RuntimeError), adapting(WIRE, Learners):
        assert ENTRIES[WIRE].adapter is Learners
        assert ENTRIES[WIRE].wire == course.wire
        raise RuntimeError
    assert ENTRIES[WIRE] is course


def test_the_first_difference_is_the_first_unequal_item_or_where_one_list_ends():
    assert differs_at([1, 2, 3], [1, 5, 3]) == 1
    assert differs_at([1, 2, 3], [1, 2]) == 2
    assert differs_at([1], [1, 2]) == 1
    assert differs_at([1, 2], [1, 2]) == 2


def test_a_turn_event_difference_names_both_events_the_one_before_and_the_advice():
    a = {"kind": "block_started", "block": "b0"}
    b = {"kind": "block_ended", "block": "b0", "complete": True}
    seen = []

    def advice(want, have):
        seen.append((want, have))
        return "close it"
    assert turn_event_difference([a, b], [a, b], advice) is None
    assert turn_event_difference([a, b], [a], advice, after=True) == (
        "turn event 1 (after block_started): expected block_ended(block='b0', complete=True), "
        "got no event (your events end here).\n  Fix: close it.")
    assert turn_event_difference([a], [b], advice) == (
        "turn event 0: expected block_started(block='b0'), "
        "got block_ended(block='b0', complete=True).\n  Fix: close it.")
    assert seen == [(b, None), (a, b)]


def test_a_long_event_is_cut_at_160_characters():
    long = {"kind": "block_delta", "fragment": "x" * 300}
    text = turn_event_difference([long], [], lambda w, h: "")
    shown = text.split("expected ")[1].split(", got")[0]
    assert len(shown) == 160 and shown.endswith("...")
