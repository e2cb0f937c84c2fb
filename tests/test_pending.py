"""The reference set may grow ahead of the course: a folder no registered wire reads is a
named skip (tests/pending.py), never a crash and never read as some other wire."""

from __future__ import annotations

from pathlib import Path

import pytest
from pending import PENDING_WIRES, readable, reason

from lesson_lib.capture.captures import from_bytes, load

BODY = b'event: thing.created\ndata: {"x": 1}\n\n'


def _recording(folder: str):
    return from_bytes(BODY, name="first", path=Path("/refs") / folder / "first.sse")


def test_an_unknown_folder_is_skipped_with_its_name():
    cap = _recording("some-new-vendor")
    assert cap.wire is None
    why = reason(cap)
    assert why is not None and "some-new-vendor" in why
    assert readable([cap]) == []


def test_a_pending_folder_is_skipped_with_its_issue():
    if not PENDING_WIRES:
        pytest.skip("no reference folder is pending")
    folder, why = next(iter(PENDING_WIRES.items()))
    assert reason(_recording(folder)) == why


def test_a_recording_of_a_registered_wire_is_read():
    cap = load("anthropic-messages/hello")
    assert reason(cap) is None
    assert readable([cap]) == [cap]
