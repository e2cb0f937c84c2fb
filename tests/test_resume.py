"""Resume: the resumed pair joins to the uncut stream's text, with no delta twice or missing."""

from __future__ import annotations

import pytest

from lesson_lib.accumulate import accumulator_for
from lesson_lib.breaks import resume
from lesson_lib.capture.captures import corpus, from_bytes, load, reference_corpus
from lesson_lib.wires.wire_events import parse_all

NUMBERED = [c for c in corpus() + reference_corpus()
            if c.wire == "openai-responses" and c.status < 300
            and "starting_after" not in c.request and c.events
            and resume.sequence_number(parse_all(c.events)[0]) == 0]


def _final(events):
    acc = accumulator_for("openai-responses")
    for event in events:
        acc.feed(event)
    acc.finish([])
    return acc, acc.final()


def _texts(final):
    return [part.get("text") for item in final["output"] for part in item.get("content") or []
            if part.get("type") == "output_text"]


def test_the_corpus_pair_joins_to_the_uncut_text():
    cut, resumed = load("openai-responses/background-cut"), load(
        "openai-responses/background-resumed")
    first, rest = parse_all(cut.events), parse_all(resumed.events)
    assert resume.resume_point(first) == resumed.request["starting_after"]
    joined = resume.join(first, rest)
    assert not joined.dropped and not joined.diagnostics
    acc, final = _final(joined.events)
    assert acc.complete and final["status"] == "completed"
    assert not {d.code for d in acc.diagnostics} & {"sequence_gap", "sequence_duplicate",
                                                   "server_object_differs",
                                                   "event_before_start"}
    # the reference: the uncut stream, made of the whole events of both bytes
    last_whole = cut.events[-1].end
    uncut = cut.body[:last_whole] + resumed.body
    _, reference = _final(parse_all(from_bytes(uncut, sidecar={"wire": "openai-responses"}).events))
    assert _texts(final) == _texts(reference) == [
        rest[-1].payload["response"]["output"][0]["content"][0]["text"]]


@pytest.mark.parametrize("cap", NUMBERED, ids=[c.key for c in NUMBERED])
@pytest.mark.parametrize("overlap", [0, 1, 3])
def test_any_stream_cut_and_resumed_joins_to_itself(cap, overlap):
    events = parse_all(cap.events)
    _, whole = _final(events)
    for k in sorted({2, len(events) // 2, len(events) - 1}):
        # the server may resend a little more than asked: those must be dropped
        joined = resume.join(events[:k], events[max(k - overlap, 0):])
        assert len(joined.dropped) == min(overlap, k)
        assert not joined.diagnostics
        assert [e.index for e in joined.events] == list(range(len(events)))
        _, final = _final(joined.events)
        assert final == whole, (cap.key, k)


@pytest.mark.parametrize("cap", NUMBERED[:3], ids=[c.key for c in NUMBERED[:3]])
def test_a_hole_between_the_streams_is_reported(cap):
    events = parse_all(cap.events)
    k = len(events) // 2
    joined = resume.join(events[:k], events[k + 2:])
    assert [d.code for d in joined.diagnostics] == ["resume_gap"]
    assert joined.diagnostics[0].extra == {"expected": k, "got": k + 2}


def test_nothing_to_resume_from():
    assert resume.resume_point([]) is None
    rest = parse_all(load("openai-responses/text").events)
    assert len(resume.join([], rest).events) == len(rest)


def test_a_resume_from_an_older_point_overlaps_and_the_repeats_are_dropped():
    """Lesson 5's overlap: the stored stream served after an older resume point."""
    cut, resumed = load("openai-responses/background-cut"), load(
        "openai-responses/background-resumed")
    first, rest = parse_all(cut.events), parse_all(resumed.events)
    stored = resume.join(first, rest).events            # every number once, 0 to the end
    last = resume.resume_point(first)
    assert resume.served_after(stored, last) == [e for e in stored if
                                                  resume.sequence_number(e) > last]
    older = last - 10
    again = resume.served_after(stored, older)
    joined = resume.join(first, again)
    assert [resume.sequence_number(e) for e in joined.dropped] == list(range(older + 1, last + 1))
    assert not joined.diagnostics
    assert [e.payload for e in joined.events] == [e.payload for e in stored]
