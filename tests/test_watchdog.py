"""The stall watchdog: thresholds measured from the captures, and the states they drive."""

from __future__ import annotations

import copy

import pytest

from lesson_lib.breaks import watchdog
from lesson_lib.capture.captures import corpus, from_bytes, load
from lesson_lib.wires.wire_events import parse_all

LIMITS = watchdog.corpus_thresholds()
STREAMS = [c for c in corpus() if c.status < 300]


def _silences(cap):
    events = parse_all(cap.events)
    return [(b.t - a.t, watchdog.kind_of(a, cap.wire))
            for a, b in zip(events, events[1:], strict=False)
            if a.t is not None and b.t is not None]


def test_thresholds_exist_for_every_wire():
    assert set(LIMITS) == {"anthropic-messages", "openai-responses", "openai-chat",
                           "google-gemini", "aws-bedrock-converse", "aws-bedrock-invoke"}
    for limits in LIMITS.values():
        assert limits.lost_ms > max(limits.pause_ms.values())


@pytest.mark.parametrize("cap", STREAMS, ids=[c.key for c in STREAMS])
def test_no_good_stream_is_ever_called_lost_or_stalled(cap):
    for silence, kind in _silences(cap):
        assert watchdog.ui_state(silence, kind, LIMITS[cap.wire]) in (watchdog.STILL_WORKING,
                                                                    watchdog.DONE)


def test_the_documented_pauses_are_longer_than_the_text_gaps():
    anthropic = LIMITS["anthropic-messages"].pause_ms
    # pauses between tool-argument keys and around pings, measured, beat a text gap
    assert anthropic["tool_arguments"] > anthropic["text"]
    assert anthropic["ping"] > anthropic["text"]
    profile = watchdog.gap_profile(STREAMS)["anthropic-messages"]
    assert watchdog.percentile(profile["text"], 50) < 50


def _stalled(cap, after_event: int, extra_ms: float):
    """The capture with every chunk after event `after_event` arriving `extra_ms` later."""
    side = copy.deepcopy(cap.sidecar)
    cut = cap.events[after_event].end
    side["chunks"]["t_ms"] = [t + extra_ms if end > cut else t
                              for end, t in zip(side["chunks"]["ends"], side["chunks"]["t_ms"],
                                                strict=True)]
    return from_bytes(cap.body, sidecar=side)


@pytest.mark.parametrize("key", ["anthropic-messages/get-weather", "openai-responses/text",
                                 "openai-chat/tool-call"])
def test_a_stall_is_seen_then_called_lost(key):
    cap = load(key)
    limits = LIMITS[cap.wire]
    k = len(cap.events) // 2
    stalled = _stalled(cap, k, limits.lost_ms)
    silences = _silences(stalled)
    silence, kind = max(silences)
    assert watchdog.ui_state(silence, kind, limits) == watchdog.LOST
    # while the silence grows, the state goes working -> no data -> lost, never back
    moments = [*range(0, int(silence), 250), silence]
    states = [watchdog.ui_state(ms, kind, limits) for ms in moments]
    order = [watchdog.STILL_WORKING, "no data", watchdog.LOST]
    ranks = [order.index(s if s in (watchdog.STILL_WORKING, watchdog.LOST) else "no data")
             for s in states]
    assert ranks == sorted(ranks) and set(ranks) == {0, 1, 2}


def test_the_states_as_a_function_of_silence_and_last_event():
    limits = watchdog.Limits({"text": 500.0, "tool_arguments": 1500.0, "ping": 1200.0},
                             lost_ms=30_000.0)
    assert watchdog.ui_state(1000, "tool_arguments", limits) == watchdog.STILL_WORKING
    assert watchdog.ui_state(1000, "text", limits) == "no data for 1 s"
    assert watchdog.ui_state(20_000, "text", limits) == "no data for 20 s"
    assert watchdog.ui_state(30_000, "ping", limits) == watchdog.LOST
    assert watchdog.ui_state(10**9, "end", limits) == watchdog.DONE
    assert watchdog.ui_state(1400, "never-seen", limits) == watchdog.STILL_WORKING
