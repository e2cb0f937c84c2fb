"""The changes' contract: folding them from the start gives back `slots()` and
`tool_calls()` at every event index, and after `finish()`, on every capture."""

from __future__ import annotations

import chat_order
import pytest

from lesson_lib.accumulate import accumulator_for
from lesson_lib.accumulate import changes as ch
from lesson_lib.accumulate.fold import Fold
from lesson_lib.capture.captures import corpus, reference_corpus
from lesson_lib.wires.wire_events import parse_all

WIRES = ("anthropic-messages", "openai-responses", "openai-chat")
CAPTURES = [c for c in corpus() + reference_corpus() if c.wire in WIRES and c.status < 300]


def _slot_fields(slot):
    return (slot.address, slot.kind, slot.label, slot.content, slot.state, slot.name,
            slot.call_id, slot.raw_input, slot.input)


def _call_fields(view):
    return (view.name, view.call_id, view.state, view.raw, view.value)


def _same(acc, fold, where):
    assert [_slot_fields(s) for s in fold.slots()] == \
        [_slot_fields(s) for s in acc.slots()], where
    assert [_call_fields(v) for v in fold.tool_calls()] == \
        [_call_fields(v) for v in acc.tool_calls()], where


@pytest.mark.parametrize("capture", CAPTURES, ids=[c.key for c in CAPTURES])
def test_folding_the_changes_gives_the_slots_and_calls_at_every_index(capture):
    acc = accumulator_for(capture.wire, capture.request)
    fold = Fold(capture.wire)
    for event in parse_all(capture.events):
        changes = acc.feed(event)
        assert isinstance(changes, list)
        assert all(c.event == event.index for c in changes)
        fold.add(changes)
        _same(acc, fold, f"after event {event.index}")
    end = acc.finish(capture.sse_diagnostics)
    fold.add(end)
    _same(acc, fold, "after finish")
    assert isinstance(end[-1], ch.StreamEnded) and end[-1].properly == acc.complete
    assert fold.ended


# Streams whose order is broken: their diagnostics change what the feed applies.
BROKEN = [make() for make in chat_order.BROKEN.values()]


@pytest.mark.parametrize("capture", BROKEN, ids=list(chat_order.BROKEN))
def test_folding_holds_when_the_chat_order_is_broken(capture):
    test_folding_the_changes_gives_the_slots_and_calls_at_every_index(capture)
    test_every_note_is_a_change(capture)


@pytest.mark.parametrize("capture", CAPTURES[:20], ids=[c.key for c in CAPTURES[:20]])
def test_every_note_is_a_change(capture):
    acc = accumulator_for(capture.wire, capture.request)
    noted = []
    for event in parse_all(capture.events):
        noted += [c.diagnostic for c in acc.feed(event) if isinstance(c, ch.DiagnosticNoted)]
    noted += [c.diagnostic for c in acc.finish(capture.sse_diagnostics)
              if isinstance(c, ch.DiagnosticNoted)]
    assert noted == acc.diagnostics


def test_a_second_finish_changes_nothing():
    capture = CAPTURES[0]
    acc = accumulator_for(capture.wire, capture.request)
    for event in parse_all(capture.events):
        acc.feed(event)
    assert acc.finish() and acc.finish() == []


def test_text_arrives_as_fragments_only():
    capture = next(c for c in CAPTURES if c.key == "anthropic-messages/hello")
    acc = accumulator_for(capture.wire)
    fragments = [c.fragment for e in parse_all(capture.events) for c in acc.feed(e)
                 if isinstance(c, ch.TextAppended)]
    assert len(fragments) > 1
    assert "".join(fragments) == acc.final()["content"][0]["text"]


def test_a_restated_slot_takes_the_servers_text_and_a_removed_slot_goes():
    fold = Fold("openai-responses")
    fold.add([ch.SlotOpened(0, (0,), "message", "[0] message"),
              ch.SlotOpened(1, (1,), "function_call", "[1] function_call", content="{}"),
              ch.TextAppended(2, (1,), "text", '{"a"'),
              ch.SlotRestated(3, (1,), content='{"b": 1}', label="[1] function_call f")])
    by_address = {s.address: s for s in fold.slots()}
    assert by_address[(1,)].content == '{"b": 1}'
    assert by_address[(1,)].label == "[1] function_call f"
    fold.add([ch.SlotOpened(4, (0, 0), "output_text", "[0.0] output_text"),
              ch.SlotRemoved(4, (0,), replaced_by=((0, 0),)),
              ch.SlotRestated(5, (0, 0), content="")])
    assert [s.address for s in fold.slots()] == [(0, 0), (1,)]
    assert fold.slots()[0].content == ""
    # A restatement of a slot the fold never saw changes nothing.
    fold.add([ch.SlotRestated(6, (9,), content="x")])
    assert [s.address for s in fold.slots()] == [(0, 0), (1,)]

