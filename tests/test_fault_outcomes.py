"""Over the whole corpus, the turn's outcome stays honest under every fault of the lab.

A cut, a dropped terminal, an injected error and a corrupted content payload
never give ``completed`` (the stream died, whatever its text looks like); a
stall or a UTF-8 character split across chunks changes nothing but timing.
"""

from __future__ import annotations

import pytest

from lesson_lib.breaks import budget, faults
from lesson_lib.capture.captures import Capture, corpus
from lesson_lib.turn.run import turn_state
from lesson_lib.wires.stream_end import how_it_ended
from lesson_lib.wires.wire_events import parse_all

STREAMS = [c for c in corpus() if c.status < 300 and c.events]
IDS = [c.key for c in STREAMS]


def outcome(capture: Capture) -> str | None:
    return turn_state(capture, route="auto").outcome


def content(capture: Capture) -> tuple:
    """What a reader sees of the turn: its outcome and every block's kind and text."""
    state = turn_state(capture, route="auto")
    return state.outcome, tuple((b.kind, b.text, b.complete) for b in state.blocks)


def first_content_event(capture: Capture) -> int | None:
    """The index of the first wire event that carries content characters."""
    run = budget.deltas(parse_all(capture.events), capture.wire or "")
    return next((d.event for d in run if d.text), None)


@pytest.mark.parametrize("capture", STREAMS, ids=IDS)
def test_a_cut_is_never_completed(capture):
    for offset in (len(capture.body) // 2, max(0, len(capture.body) - 2)):
        assert outcome(faults.cut_at(capture, offset)) != "completed", offset


@pytest.mark.parametrize("capture", STREAMS, ids=IDS)
def test_a_dropped_terminal_is_never_completed(capture):
    try:
        broken = faults.drop_terminal(capture)
    except faults.FaultError:
        pytest.skip("the capture has no terminal event to drop")
    if capture.wire == "openai-chat" and outcome(capture) == "completed":
        # Chat's [DONE] dropped after every finish and the owed usage reads as a server that
        # never sends it: ended, with a warning (`wires.chat.ended_without_done`); the same
        # body without its last chunk is cut.
        ending = how_it_ended(broken.wire, parse_all(broken.events), broken.sse_diagnostics)
        assert [d.code for d in ending.diagnostics] == ["no_done_marker"]
        last = parse_all(broken.events)[-1]
        assert outcome(faults.cut_at(broken, last.sse.start)) != "completed"
        return
    assert outcome(broken) != "completed"


@pytest.mark.parametrize("capture", STREAMS, ids=IDS)
def test_an_injected_error_is_never_completed(capture):
    events = parse_all(capture.events)
    for after in sorted({0, len(events) // 2}):
        assert outcome(faults.inject_error(capture, after)) != "completed", after


@pytest.mark.parametrize("capture", STREAMS, ids=IDS)
def test_a_corrupted_content_payload_is_never_completed(capture):
    at = first_content_event(capture)
    if at is None:
        pytest.skip("the capture carries no content characters")
    assert outcome(faults.corrupt_json(capture, at)) != "completed"


@pytest.mark.parametrize("capture", STREAMS, ids=IDS)
def test_a_stall_changes_nothing_but_timing(capture):
    stalled = faults.stall(capture, 25_000)
    assert stalled.body == capture.body
    assert content(stalled) == content(capture)


@pytest.mark.parametrize("capture", STREAMS, ids=IDS)
def test_a_split_character_changes_nothing_but_timing(capture):
    try:
        split = faults.split_character(capture)
    except faults.FaultError:
        pytest.skip("the capture has no multi-byte character to split")
    assert split.body == capture.body
    assert content(split) == content(capture)


def test_the_corpus_gives_every_fault_something_to_break():
    """The skips above are the exception: most captures take every fault."""
    assert len(STREAMS) > 20
    assert sum(first_content_event(c) is not None for c in STREAMS) > len(STREAMS) // 2
