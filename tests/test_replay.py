"""Offline replay through the SDKs: a reader of each event as it arrives."""

from __future__ import annotations

import pytest

from lesson_lib.capture.captures import load
from lesson_lib.capture.replay import run_sdk

NAMES = ["anthropic-messages/hello", "openai-responses/text", "openai-chat/text-usage"]


@pytest.mark.parametrize("name", NAMES)
def test_on_event_sees_every_event_in_order_without_keeping_them(name):
    capture = load(name)
    seen: list = []
    lean = run_sdk(capture, keep_events=False, on_event=seen.append)
    full = run_sdk(capture)
    assert lean.events == [] and lean.event_count == len(seen) == len(full.events) > 0
    assert [e.type for e in seen] == [e.type for e in full.events]
    assert lean.text == full.text and lean.error is None


def test_what_on_event_raises_is_raised_not_recorded_as_the_sdks_error():
    class Broken(Exception):
        pass

    def reader(event):
        raise Broken(event.type)

    with pytest.raises(Broken):
        run_sdk(load("anthropic-messages/hello"), on_event=reader)
