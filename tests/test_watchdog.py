"""The stall watchdog: thresholds measured from the captures, and the states they drive."""

from __future__ import annotations

import copy
import json

import pytest

from lesson_lib import wires
from lesson_lib.breaks import watchdog
from lesson_lib.capture.captures import corpus, from_bytes, load
from lesson_lib.turn.stream import TurnStream
from lesson_lib.wires.wire_events import parse_all

LIMITS = watchdog.corpus_thresholds()
STREAMS = [c for c in corpus() if c.status < 300]


def _silences(cap):
    events = parse_all(cap.events)
    return [(b.t - a.t, kind)
            for a, b, kind in zip(events, events[1:], watchdog.kinds(events, cap.wire),
                                  strict=False)
            if a.t is not None and b.t is not None]


def test_thresholds_exist_for_every_wire():
    assert set(LIMITS) == set(wires.WIRES)
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


def _first(events, predicate):
    return next(i for i, e in enumerate(events) if predicate(e))


def test_a_server_tool_pause_is_named_and_not_called_lost_by_a_text_threshold():
    cap = load("anthropic-messages/web-search")
    events = parse_all(cap.events)
    limits = LIMITS[cap.wire]
    # after the server_tool_use block's stop, before its web_search_tool_result starts
    start = _first(events, lambda e: (e.payload.get("content_block") or {}).get("type")
                   == "server_tool_use")
    result = _first(events, lambda e: (e.payload.get("content_block") or {}).get("type")
                    == "web_search_tool_result")
    stop = result - 1
    assert events[stop].type == "content_block_stop"
    assert [watchdog.activity(events[:i + 1], cap.wire) for i in range(start, result + 1)] == \
        [None] * (stop - start) + ["searching the web", None]
    silence = 3 * limits.lost_ms            # a real search of several seconds
    assert watchdog.ui_state(silence, watchdog.kind_of(events[stop], cap.wire, events[:stop]),
                             limits) == watchdog.LOST
    assert watchdog.waiting(silence, events[:stop + 1], cap.wire, limits) == \
        f"searching the web · {int(silence // 1000)} s"
    assert watchdog.waiting(watchdog.READ_TIMEOUT_MS, events[:stop + 1], cap.wire,
                            limits) == watchdog.LOST


@pytest.mark.parametrize(("key", "words"), [
    ("anthropic-messages/thinking-signature", "thinking"),
    # Reasoning is read the same way on every wire: from the turn's reasoning blocks.
    ("openai-chat/reasoning-content", "thinking"),
    ("openai-responses/reasoning-summary", "thinking"),
    ("openai-responses/web-search", "searching the web")])
def test_thinking_and_server_tools_are_named_while_open_and_only_then(key, words):
    cap = load(key)
    events = parse_all(cap.events)
    named = [watchdog.activity(events[:i + 1], cap.wire) for i in range(len(events))]
    assert words in named
    assert named[0] is None and named[-1] is None   # not before it began, not after the end
    assert watchdog.waiting(60_000, events, cap.wire, LIMITS[cap.wire]) == watchdog.DONE


@pytest.mark.parametrize("key", ["anthropic-messages/hello", "openai-chat/text-usage",
                                 "openai-responses/text", "google-gemini/text-crlf",
                                 "aws-bedrock-converse/converse-hello"])
def test_without_an_activity_waiting_is_the_measured_thresholds(key):
    cap = load(key)
    events = parse_all(cap.events)[:3]
    limits = LIMITS[cap.wire]
    kind = watchdog.kind_of(events[-1], cap.wire, events[:-1])
    for silence in (100, 2_000, limits.lost_ms):
        assert watchdog.activity(events, cap.wire) is None
        assert watchdog.waiting(silence, events, cap.wire, limits) == \
            watchdog.ui_state(silence, kind, limits)


def test_every_course_capture_says_its_timing_is_modelled():
    """Lesson 5 says so: the thresholds are measured on modelled arrival times."""
    assert {(c.sidecar.get("provenance") or {}).get("timing") for c in corpus()} == {"synthetic"}


@pytest.mark.parametrize(("execution", "words"), [
    ("server", "running the server tool tool_search_call"), ("client", None)])
def test_a_tool_search_is_a_server_activity_only_when_the_server_runs_it(execution, words):
    # A tool search the client runs is the client's call: while it is open the
    # server is waiting for nobody, so the silence is no server tool's.
    item = {"type": "tool_search_call", "id": "ts_1", "execution": execution,
            "status": "in_progress"}
    body = ('event: response.output_item.added\ndata: '
            + json.dumps({"type": "response.output_item.added", "output_index": 0,
                          "item": item}) + "\n\n").encode()
    cap = from_bytes(body, name="tool-search", sidecar={"wire": "openai-responses"})
    assert watchdog.activity(parse_all(cap.events), cap.wire) == words


@pytest.mark.parametrize("wire", sorted(wires.WIRES))
def test_the_watchdog_tells_deltas_from_keepalives_and_silence_on_every_wire(wire):
    """Each event's kind agrees with the turn events it became: text where text arrived,
    tool arguments where a call's input did, neither where nothing was output."""
    cap = load(f"{wire}/weather-turn-step1")
    events = parse_all(cap.events)
    stream = TurnStream(wire, request=cap.request)
    tool_blocks: set[str] = set()
    expected = []
    for ev in events:
        turned = stream.feed_events([ev])
        tool_blocks |= {e.block for e in turned
                        if e.kind == "block_started" and e.block_kind == "tool_call"}
        fragments = [e for e in turned if e.kind == "block_delta" and e.fragment]
        if any(e.block in tool_blocks for e in fragments):
            expected.append("tool_arguments")
        elif fragments:
            expected.append("text")
        else:
            expected.append(None)
    got = watchdog.kinds(events, wire)
    assert "tool_arguments" in got
    for kind, wanted in zip(got, expected, strict=True):
        if wanted is not None:
            assert kind == wanted
        elif kind not in ("start", "ping", "other", "end"):
            assert kind == "tool_arguments"        # a call announced, its input to come
    assert watchdog.kinds(events, wire)[0] == "start" or expected[0] is not None


def test_a_keepalive_is_a_ping_on_the_wires_that_name_one():
    cap = load("anthropic-messages/weather-turn-step1")
    events = parse_all(cap.events)
    pings = [k for e, k in zip(events, watchdog.kinds(events, cap.wire), strict=True)
             if e.type in wires.WIRES[cap.wire].KEEPALIVES]
    assert pings and set(pings) == {"ping"}
