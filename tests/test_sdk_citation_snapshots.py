"""What a stored SDK snapshot can be trusted for, in the pinned anthropic version.

Lesson 2 compares the SDK's per-event snapshots with the accumulator's. In
anthropic 2.14 every ``CitationEvent.snapshot`` was the block's one live
list, so an event kept for later showed citations that arrived after it;
2.16 hands each event its own copy, and 2.17 still does. This test pins the installed
behaviour: if an upgrade changes it, the lesson's sentence about stored
snapshots must change with it.
"""

from __future__ import annotations

from importlib import metadata

from lesson_lib.capture.captures import load
from lesson_lib.capture.replay import run_sdk
from lesson_lib.course.environment import PINNED
from lesson_lib.wires.wire_events import parse_all


def test_the_installed_anthropic_is_the_pinned_one():
    assert metadata.version("anthropic") == PINNED["anthropic"] == "2.17.0"


def test_each_citation_event_keeps_the_citations_up_to_itself():
    cap = load("anthropic-messages/citations")
    expected, so_far = [], {}
    for event in parse_all(cap.events):
        p = event.payload
        if event.type == "content_block_delta" and p["delta"]["type"] == "citations_delta":
            so_far.setdefault(p["index"], []).append(p["delta"]["citation"]["cited_text"])
            expected.append(list(so_far[p["index"]]))
    events = [e for e in run_sdk(cap).events if getattr(e, "type", None) == "citation"]
    kept = [[c.cited_text for c in e.snapshot] for e in events]   # read after the stream ended
    assert len(expected) >= 3 and kept == expected
    assert len({id(e.snapshot) for e in events}) == len(events)    # no shared live list
