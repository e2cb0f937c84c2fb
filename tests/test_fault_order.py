"""Duplicated and swapped events: the wire shows them where it numbers or frames events.

`faults.duplicate` and `faults.swap` are pinned on one capture each; then,
over the whole corpus and the reference corpus, every kind of breakage that
`fault_visibility` says the wire makes visible is applied (a few instances
per capture, spread over the stream) and the accumulator must add a
diagnostic it did not give for the good stream. Where today's accumulators
miss a visible kind, the test is an expected failure naming it. Where the
wire cannot show the fault (two text deltas of one block swapped), the
test shows that nothing can tell: no new diagnostic, a different text.
"""

from __future__ import annotations

from collections import Counter, defaultdict
from functools import cache

import chat_order
import pytest
from pending import readable

from lesson_lib.accumulate import accumulate
from lesson_lib.breaks import faults
from lesson_lib.breaks.visibility import visibility
from lesson_lib.capture.captures import Capture, corpus, load, reference_corpus
from lesson_lib.wires.wire_events import parse_all

CAPTURES = [c for c in corpus() + readable(reference_corpus()) if c.status < 300]  # tests/pending.py
PER_CAPTURE = 3    # instances of one kind of breakage tried per capture, spread out

MISSED = "today's accumulator gives no diagnostic for this (the accumulator rewrite will)"
# Every kind of visible breakage found in the corpus; the reason where it is not flagged yet.
CATEGORIES: dict[tuple[str, str, str], str | None] = {
    ("anthropic-messages", "duplicate", "message_start twice"): None,
    ("anthropic-messages", "duplicate", "content_block_start twice"): None,
    ("anthropic-messages", "duplicate", "content_block_stop twice"): None,
    ("anthropic-messages", "duplicate", "message_stop twice"): None,
    ("anthropic-messages", "duplicate", "error twice"): None,
    ("anthropic-messages", "swap", "message_start swapped with content_block_start"): None,
    ("anthropic-messages", "swap", "content_block_start swapped with content_block_delta"): None,
    ("anthropic-messages", "swap", "content_block_start swapped with content_block_stop"): None,
    ("anthropic-messages", "swap", "content_block_delta swapped with content_block_stop"): None,
    ("anthropic-messages", "swap", "message_delta swapped with message_stop"): None,
    ("anthropic-messages", "swap", "content_block_stop swapped with content_block_start"): None,
    ("anthropic-messages", "swap", "content_block_stop swapped with message_delta"): None,
    ("anthropic-messages", "swap", "content_block_delta swapped with message_delta"): None,
    ("anthropic-messages", "swap", "content_block_delta swapped with error"): None,
    ("openai-responses", "duplicate", "sequence_number repeated"): None,
    ("openai-responses", "swap", "sequence_number out of order"): None,
    ("openai-responses", "duplicate", "response.created twice (no sequence numbers)"): None,
    ("openai-responses", "duplicate", "response.output_item.added twice (no sequence numbers)"):
        None,
    ("openai-responses", "duplicate", "response.content_part.added twice (no sequence numbers)"):
        None,
    ("openai-responses", "duplicate", "response.output_item.done twice (no sequence numbers)"):
        None,
    ("openai-responses", "duplicate", "response.completed twice (no sequence numbers)"): None,
    ("openai-responses", "duplicate", "response.in_progress twice (no sequence numbers)"): None,
    ("openai-responses", "duplicate", "response.content_part.done twice (no sequence numbers)"): None,
    ("openai-responses", "duplicate", "response.output_text.done twice (no sequence numbers)"): None,
    ("openai-responses", "swap", "response.created swapped with response.in_progress (no sequence numbers)"): None,
    ("openai-responses", "swap", "response.output_item.added swapped with response.content_part.added (no sequence numbers)"): None,
    ("openai-responses", "swap", "response.content_part.added swapped with response.output_text.delta (no sequence numbers)"): None,
    ("openai-responses", "swap", "response.output_text.delta swapped with response.output_text.done (no sequence numbers)"): None,
    ("openai-responses", "swap", "response.output_text.done swapped with response.content_part.done (no sequence numbers)"): None,
    ("openai-responses", "swap", "response.content_part.done swapped with response.output_item.done (no sequence numbers)"): None,
    ("openai-responses", "swap", "response.output_item.done swapped with response.completed (no sequence numbers)"): None,
    ("openai-responses", "swap",
     "response.in_progress swapped with response.output_item.added (no sequence numbers)"): None,
    # OpenRouter's [DONE] after the terminal passes through; before it, it is a stray event.
    ("openai-responses", "swap", "response.completed swapped with [DONE] (no sequence numbers)"):
        None,
    # The session streams name each event by an id: a repeat is dropped and noted.
    ("anthropic-managed-agents", "duplicate", "duplicate_event noted"): None,
    ("openai-agent-sessions", "duplicate", "duplicate_event noted"): None,
    ("openai-chat", "duplicate", "[DONE] twice"): None,
    ("openai-chat", "duplicate", "finish_reason twice"): None,
    ("openai-chat", "duplicate", "a tool call opened twice"): None,
    ("openai-chat", "swap", "a chunk after [DONE]"): None,
    ("openai-chat", "swap", "a delta after its choice's finish_reason"): None,
    ("openai-chat", "swap", "a tool-call fragment before its opening"): None,
}


def _spread(indices: list[int], k: int) -> list[int]:
    """At most `k` of `indices`, first, last and evenly between."""
    if len(indices) <= k:
        return indices
    step = (len(indices) - 1) / (k - 1)
    return sorted({indices[round(i * step)] for i in range(k)})


@cache
def _cases() -> dict[tuple[str, str, str], list[tuple[Capture, int]]]:
    """Per visible category: (capture, event index) instances, a few per capture."""
    found: dict[tuple[str, str, str], list[tuple[Capture, int]]] = defaultdict(list)
    for cap in CAPTURES:
        events = parse_all(cap.events)
        for kind in ("duplicate", "swap"):
            per: dict[str, list[int]] = defaultdict(list)
            for i in range(len(events) - (kind == "swap")):
                why = visibility(cap, kind, i, events)
                if why is not None:
                    per[why].append(i)
            for why, indices in per.items():
                found[(cap.wire, kind, why)] += [(cap, i) for i in _spread(indices, PER_CAPTURE)]
    return dict(found)


_GOOD: dict[str, Counter] = {}


def _codes(cap: Capture) -> Counter:
    """The diagnostic codes the accumulator gives (kept for the good captures)."""
    if "fault" in cap.sidecar:
        return Counter(d.code for d in accumulate(cap).diagnostics)
    if cap.key not in _GOOD:
        _GOOD[cap.key] = Counter(d.code for d in accumulate(cap).diagnostics)
    return _GOOD[cap.key]


def _marked(key, reason):
    marks = [pytest.mark.xfail(strict=True, reason=reason)] if reason else []
    return pytest.param(key, id="/".join(key), marks=marks)


# -- the two faults ---------------------------------------------------------------------


def test_duplicate_repeats_one_event_byte_for_byte():
    cap = load("anthropic-messages/hello")
    broken = faults.duplicate(cap, 2)
    ev = cap.events[2]
    raw = cap.body[ev.start:ev.end]
    assert broken.body == cap.body[:ev.end] + raw + cap.body[ev.end:]
    assert [e.data for e in broken.events] == [e.data for e in cap.events[:3]] + [
        e.data for e in cap.events[2:]]
    assert broken.sidecar["fault"] == {"kind": "duplicate", "at": 2}
    assert broken.sidecar["chunks"]["ends"][-1] == len(broken.body)
    assert "sdk" not in broken.sidecar
    with pytest.raises(faults.FaultError):
        faults.duplicate(cap, len(cap.events))


def test_swap_exchanges_two_adjacent_events():
    cap = load("openai-responses/text")
    broken = faults.swap(cap, 5)
    datas = [e.data for e in cap.events]
    datas[5], datas[6] = datas[6], datas[5]
    assert [e.data for e in broken.events] == datas
    assert len(broken.body) == len(cap.body)
    assert broken.sidecar["fault"] == {"kind": "swap", "at": 5}
    ends = broken.sidecar["chunks"]["ends"]
    assert ends == sorted(set(ends)) and len(ends) == len(broken.sidecar["chunks"]["t_ms"])
    with pytest.raises(faults.FaultError):
        faults.swap(cap, len(cap.events) - 1)   # no event after the last


def test_order_faults_refuse_an_http_error():
    cap = load("anthropic-messages/http-529-overloaded")
    with pytest.raises(faults.FaultError):
        faults.duplicate(cap, 0)
    with pytest.raises(faults.FaultError):
        faults.swap(cap, 0)


# -- visible where the wire numbers or frames events -------------------------------------


def test_every_visible_kind_in_the_corpus_is_listed():
    assert set(_cases()) <= set(CATEGORIES), sorted(set(_cases()) - set(CATEGORIES))


@pytest.mark.parametrize("key", [_marked(k, r) for k, r in CATEGORIES.items()])
def test_a_visible_duplicate_or_swap_gives_a_diagnostic(key):
    cases = _cases().get(key)
    if not cases:
        pytest.skip(f"no instance of {key} in the captures present (reference captures absent?)")
    wire, kind, why = key
    silent = []
    for cap, i in cases:
        broken = getattr(faults, kind)(cap, i)
        if not _codes(broken) - _codes(cap):
            silent.append(f"{cap.key} at event {i}")
    assert not silent, f"{why}: no new diagnostic in {silent}"


# The typed diagnostic each repeated Chat marker gives, on every instance.
CHAT_MARKERS = {"finish_reason twice": "duplicate_stop",
                "a tool call opened twice": "duplicate_start"}


@pytest.mark.parametrize("why", list(CHAT_MARKERS))
def test_a_repeated_chat_marker_is_named_and_the_first_is_kept(why):
    cases = _cases().get(("openai-chat", "duplicate", why))
    assert cases, why
    for cap, i in cases:
        broken = faults.duplicate(cap, i)
        assert CHAT_MARKERS[why] in _codes(broken) - _codes(cap), (cap.key, i)
        assert accumulate(broken).final == accumulate(cap).final, (cap.key, i)


def test_a_fragment_moved_before_its_opening_at_a_reused_index_is_held_for_it():
    good = chat_order.reused_index()
    assert visibility(good, "swap", chat_order.SECOND_OPENING) == \
        "a tool-call fragment before its opening"
    broken = accumulate(chat_order.fragment_before_opening())
    assert [d.code for d in broken.diagnostics] == ["event_before_start"]
    assert broken.final == accumulate(good).final


# -- invisible where the wire carries nothing that shows the order -----------------------


def test_two_whole_calls_swapped_at_a_reused_index_cannot_be_seen():
    # Each call comes whole in one chunk at index 0: swapped, they read as the
    # calls made in the other order.
    cap = load("openai-chat/index-reused-new-id")
    assert visibility(cap, "swap", 0) is None
    broken = faults.swap(cap, 0)
    assert not set(_codes(broken)) - set(_codes(cap))
    names = [[c["function"]["name"] for c in accumulate(x).final["choices"][0]["message"]
              ["tool_calls"]] for x in (cap, broken)]
    assert names == [["get_weather", "get_local_time"], ["get_local_time", "get_weather"]]


def _text_delta_pairs(cap: Capture) -> list[int]:
    """Adjacent text deltas of one slot whose texts differ (so a swap changes the text)."""
    events = parse_all(cap.events)
    out = []
    for i, (a, b) in enumerate(zip(events, events[1:], strict=False)):
        ta, tb = _slot_text(a, cap.wire), _slot_text(b, cap.wire)
        if ta and tb and ta[0] == tb[0] and ta[1] != tb[1]:
            out.append(i)
    return out


def _slot_text(ev, wire):
    p = ev.payload if isinstance(ev.payload, dict) else {}
    if wire == "anthropic-messages" and ev.type == "content_block_delta":
        delta = p.get("delta") or {}
        if delta.get("type") == "text_delta":
            return p.get("index"), delta.get("text")
    if wire == "openai-chat" and len(p.get("choices") or []) == 1:
        choice = p["choices"][0]
        content = (choice.get("delta") or {}).get("content")
        if content and not choice.get("finish_reason"):
            return choice.get("index"), content
    return None


@pytest.mark.parametrize("wire", ["anthropic-messages", "openai-chat"])
def test_two_text_deltas_of_one_block_swapped_cannot_be_seen(wire):
    tried = 0
    for cap in [c for c in CAPTURES if c.wire == wire]:
        for i in _spread(_text_delta_pairs(cap), 2):
            assert visibility(cap, "swap", i) is None
            broken = faults.swap(cap, i)
            assert not set(_codes(broken)) - set(_codes(cap)), (cap.key, i)
            assert accumulate(broken).final != accumulate(cap).final
            tried += 1
    assert tried >= 10
