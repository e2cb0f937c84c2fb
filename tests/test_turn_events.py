"""The union itself: frozen, slotted, one kind each; origin fields apart; one outcome map."""

from __future__ import annotations

import dataclasses

import pytest

from lesson_lib.turn import events as ev
from lesson_lib.turn import outcome

# Each kind with its identity: the fields it cannot be built without.
IDENTITY = {
    ev.TurnStarted: {"turn": "t"},
    ev.TurnFinished: {"outcome": "completed"},
    ev.StepStarted: {"step": 1, "wire": "openai-chat"},
    ev.StepFinished: {"step": 1, "ended": "proper"},
    ev.BlockStarted: {"block": "s1.b0", "step": 1, "block_kind": "text"},
    ev.BlockDelta: {"block": "s1.b0", "fragment": "Hi"},
    ev.SignatureAdded: {"block": "s1.b0", "signature": "sig"},
    ev.SourceAdded: {"block": "s1.b0", "source": {"url": "https://example.com"}},
    ev.BlockEnded: {"block": "s1.b0"},
    ev.ToolCallReady: {"block": "s1.b0", "name": "f", "call_id": "c"},
    ev.ToolCallInvalid: {"block": "s1.b0", "name": "f", "call_id": "c", "state": "cut"},
    ev.ToolCallHeld: {"block": "s1.b0", "call_id": "c", "name": "f"},
    ev.ToolExecutionStarted: {"block": "s1.b0", "call_id": "c", "name": "f"},
    ev.ToolExecutionFinished: {"block": "s1.b0", "call_id": "c", "status": "ok"},
    ev.ErrorReported: {"step": 1, "scope": "provider", "phase": "before_output",
                       "message": "overloaded"},
    ev.WireEventPassed: {"step": 1, "event_type": "ping"},
    ev.Noted: {"step": 1, "code": "no_terminal", "message": "the stream ended early"},
    ev.UsageReported: {"step": 1, "usage": ev.Usage(input=12)},
}


def test_every_kind_has_its_identity_listed():
    assert set(IDENTITY) == set(ev.ALL_KINDS)


@pytest.mark.parametrize("cls", ev.ALL_KINDS, ids=lambda c: c.__name__)
def test_every_event_is_frozen_slotted_with_a_kind_and_seq(cls):
    event = cls(7, **IDENTITY[cls])
    assert event.seq == 7 and isinstance(cls.kind, str)
    assert not hasattr(event, "__dict__")
    with pytest.raises(dataclasses.FrozenInstanceError):
        event.seq = 8


@pytest.mark.parametrize("cls", ev.ALL_KINDS, ids=lambda c: c.__name__)
def test_an_event_without_its_identity_cannot_be_built(cls):
    required = {f.name for f in dataclasses.fields(cls)
                if f.default is dataclasses.MISSING and f.default_factory is dataclasses.MISSING}
    assert required == {"seq"} | set(IDENTITY[cls])
    with pytest.raises(TypeError):
        cls(7)
    for name in IDENTITY[cls]:
        partial = {k: v for k, v in IDENTITY[cls].items() if k != name}
        with pytest.raises(TypeError, match=name):
            cls(7, **partial)


def test_fields_after_seq_are_keyword_only():
    with pytest.raises(TypeError):
        ev.BlockDelta(3, "s1.b0", "Hi")         # type: ignore[misc]


def test_kinds_are_unique():
    kinds = [c.kind for c in ev.ALL_KINDS]
    assert len(kinds) == len(set(kinds))


def test_comparable_leaves_out_where_an_event_came_from():
    a = ev.BlockDelta(3, block="s1.b0", fragment="x", t=10.0, at=4)
    b = ev.BlockDelta(9, block="s1.b0", fragment="x")
    assert a != b and ev.comparable(a) == ev.comparable(b)
    assert ev.comparable(a) != ev.comparable(ev.BlockDelta(3, block="s1.b0", fragment="y"))


def test_renumber_sets_seq_to_position():
    events = [ev.TurnStarted(5, turn="t"), ev.StepStarted(5, step=1, wire="openai-chat"),
              ev.StepFinished(0, step=1, ended="proper")]
    assert [e.seq for e in ev.renumber(events, 10)] == [10, 11, 12]


def test_a_cut_stream_is_truncated_in_one_place():
    assert outcome.CUT_STREAM_OUTCOME == "truncated"
    assert outcome.outcome_of_step(outcome.step_ending(terminal=False, failed=False),
                                   "stop") == "truncated"
    assert outcome.outcome_of_step("error", "stop") == "failed"
    assert outcome.outcome_of_step("cancelled", "other") == "cancelled"
    assert outcome.outcome_of_step("proper", "pause") == "paused"
    assert outcome.outcome_of_step("proper", "tool_calls") is None
    assert outcome.step_ending(terminal=True, failed=True) == "error"


def test_usage_adds_up_and_outcomes_are_the_contracts():
    total = ev.Usage(1, 2, 3, 4, 5, {"raw": 1}) + ev.Usage(10, 20, 30, 40, 50)
    assert (total.input, total.output, total.cache_read, total.cache_write,
            total.reasoning) == (11, 22, 33, 44, 55)
    # The six outcomes lessons 4-6 print keep their names; lesson 7 adds a budget's end and
    # an end the reader does not recognise (`lesson_lib.turn.ends`).
    assert ev.OUTCOMES == ("completed", "failed", "truncated", "paused", "cancelled",
                           "max_steps", "budget_reached", "unknown")
