"""Both routes agree: boto3's ``converse_stream`` / ``invoke_model_with_response_stream``,
fed a Bedrock capture's bytes offline, yield the events this course's route reads, and
fail (or fail to notice) where the course's route says what went wrong."""

from __future__ import annotations

import pytest

from lesson_lib.accumulate import accumulate
from lesson_lib.capture import captures
from lesson_lib.capture.bedrock_replay import as_wire_payload, run_boto3
from lesson_lib.wires.bedrock import CONVERSE, EXCEPTIONS, INVOKE
from lesson_lib.wires.wire_events import parse_all

ALL = [c for c in captures.corpus() + captures.reference_corpus()
       if c.wire in (CONVERSE, INVOKE)]


def ours(cap) -> list[tuple[str, object]]:
    """Our events as (type, payload), the padding left out (boto3 never shows it)."""
    out = []
    for event in parse_all(cap.events):
        payload = event.payload
        if isinstance(payload, dict):
            payload = {k: v for k, v in payload.items() if k != "p"}
        out.append((event.type, payload))
    return out


@pytest.mark.parametrize("cap", ALL, ids=lambda c: c.key)
@pytest.mark.parametrize("chunk_size", [None, 5])
def test_both_routes_read_the_same_events(cap, chunk_size):
    sdk = run_boto3(cap, chunk_size)
    mine = ours(cap)
    theirs = [as_wire_payload(e)[:2] for e in sdk.events]    # a blob as its base64 text
    if mine and mine[-1][0] in EXCEPTIONS:
        # boto3 raises at the exception frame instead of yielding it
        assert sdk.raised == "EventStreamError" and mine[-1][0] in str(sdk.error)
        mine = mine[:-1]
    else:
        assert sdk.error is None
    assert [t for t, _ in theirs] == [t for t, _ in mine]
    dropped: set[str] = set()
    for (kind, payload), (_, seen) in zip(mine, theirs, strict=True):
        assert without(payload, seen, kind, dropped) == seen
    assert dropped <= UNSEEN, f"boto3 also drops {dropped - UNSEEN}"


# What botocore's service model does not list, so boto3 never shows it (the course's route
# keeps it): ConverseStream's server-tool usage count.
UNSEEN = {"metadata.usage.serverToolUsage"}


def without(mine, seen, path: str, dropped: set[str]):
    """`mine` less the keys boto3 did not show (each recorded in `dropped` by its path)."""
    if isinstance(mine, dict) and isinstance(seen, dict):
        out = {}
        for k, v in mine.items():
            if k in seen:
                out[k] = without(v, seen[k], f"{path}.{k}", dropped)
            else:
                dropped.add(f"{path}.{k}")
        return out
    if isinstance(mine, list) and isinstance(seen, list) and len(mine) == len(seen):
        return [without(m, t, path, dropped) for m, t in zip(mine, seen, strict=True)]
    return mine


@pytest.mark.parametrize("cap", ALL, ids=lambda c: c.key)
def test_a_cut_frame_is_silent_on_the_sdk_route_and_said_on_ours(cap):
    sdk = run_boto3(cap)
    truncated = [d for d in cap.sse_diagnostics if d.code == "truncated_frame"]
    if not truncated:
        return
    assert sdk.error is None                      # boto3: the stream just ends
    assert not accumulate(cap).complete           # ours: cut, and where
    assert truncated[0].offset == cap.events[-1].end


def test_the_corpus_has_a_cut_and_an_exception_for_the_routes_to_differ_on():
    causes = {d.code for c in ALL for d in c.sse_diagnostics}
    assert "truncated_frame" in causes
    assert any(ours(c)[-1][0] in EXCEPTIONS for c in ALL)


@pytest.mark.parametrize("cap", ALL, ids=lambda c: c.key)
def test_both_routes_give_the_same_turn(cap):
    from lesson_lib.turn.run import turn_state

    wire, sdk = (turn_state(cap, route).as_dict() for route in ("wire", "sdk"))
    assert sdk["outcome"] == wire["outcome"]
    assert sdk["blocks"] == wire["blocks"]
    assert [(e["scope"], e["code"], e["retryable"]) for e in sdk["errors"]] == [
        (e["scope"], e["code"], e["retryable"]) for e in wire["errors"]
        if e["code"] != "truncated_frame"]      # boto3 never sees a cut frame
    for ours_step, their_step in zip(wire["steps"], sdk["steps"], strict=True):
        assert their_step["finish"] == ours_step["finish"]
        counts = {k: v for k, v in ours_step["usage"].items() if k != "raw"}
        assert {k: v for k, v in their_step["usage"].items() if k != "raw"} == counts


def test_check_reports_what_boto3_did(capsys):
    from lesson_lib.cli.commands import main

    cap = captures.load("aws-bedrock-invoke/invoke-throttling-exception")
    assert main(["check", str(cap.path)]) == 0
    assert "SDK: raised EventStreamError" in capsys.readouterr().out
