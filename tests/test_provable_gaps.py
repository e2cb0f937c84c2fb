"""A gap the bytes prove is never a clean end, on any wire.

Responses numbers its events: a number skipped proves an event was lost, even where
what was built still looks whole (a transcript missing a word has no done text to
set it right). ConverseStream stops every block before ``messageStop``: a block
left open there proves a lost ``contentBlockStop``, as it does on Anthropic's wire
and on InvokeModel's. Neither is a ``completed`` turn, and ``final`` rejects both.
"""

from __future__ import annotations

import contextlib
import io
import json

import pytest

from lesson_lib.capture import captures
from lesson_lib.capture.captures import Capture, corpus, from_bytes
from lesson_lib.cli.commands import main
from lesson_lib.turn.run import turn_state
from lesson_lib.wires import anthropic, bedrock_converse, responses

SAMPLES = 6


def without(cap: Capture, index: int) -> Capture:
    """`cap` with event `index` lost on the way."""
    sse = cap.events[index]
    return from_bytes(cap.body[:sse.start] + cap.body[sse.end:], name=f"{cap.name}.dropped",
                      sidecar={"wire": cap.wire, "request": cap.sidecar.get("request")})


def final_code(tmp_path, cap: Capture) -> int:
    path = tmp_path / ("d.bin" if cap.framing == "eventstream" else "d.sse")
    path.write_bytes(cap.body)
    (tmp_path / "d.json").write_text(json.dumps(cap.sidecar))
    with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(io.StringIO()):
        return main(["final", str(path)])


def test_a_lost_transcript_word_is_not_a_completed_turn(tmp_path):
    cap = captures.load("openai-responses/audio-output")
    [index] = [i for i, e in enumerate(cap.events)
               if e.event == responses.AUDIO_TRANSCRIPT_DELTA and '" pour"' in e.data]
    broken = without(cap, index)
    state = turn_state(broken)
    [block] = [b for b in state.blocks if b.kind == "other"]
    assert " pour" not in block.text          # the word is gone, and nothing restates it
    assert state.outcome == "failed"
    assert final_code(tmp_path, broken) == 3


def numbered(cap: Capture) -> bool:
    return cap.wire == responses.WIRE and cap.status < 300 and '"sequence_number"' in cap.text


NUMBERED = [c for c in corpus() if numbered(c)]


@pytest.mark.parametrize("capture", NUMBERED, ids=[c.key for c in NUMBERED])
def test_any_numbered_responses_event_lost_is_never_completed(capture):
    n = len(capture.events)
    inner = sorted({1 + (i * (n - 2)) // SAMPLES for i in range(SAMPLES)})   # not the first
    completed = [i for i in inner if turn_state(without(capture, i)).outcome == "completed"]
    assert not completed, [capture.events[i].event for i in completed]


def test_the_sweep_reaches_many_responses_captures():
    assert len(NUMBERED) >= 10


STOPS = {"aws-bedrock-converse": bedrock_converse.CONTENT_BLOCK_STOP,
         "aws-bedrock-invoke": anthropic.CONTENT_BLOCK_STOP,
         "anthropic-messages": anthropic.CONTENT_BLOCK_STOP}


@pytest.mark.parametrize("name", ["aws-bedrock-converse/converse-hello",
                                  "aws-bedrock-invoke/invoke-hello", "anthropic-messages/hello"])
def test_a_lost_block_stop_fails_alike_on_converse_invoke_and_anthropic(tmp_path, name):
    cap = captures.load(name)
    [index] = [i for i, e in enumerate(cap.events) if e.event == STOPS[cap.wire]]
    broken = without(cap, index)
    assert turn_state(broken).outcome == "failed"
    assert final_code(tmp_path, broken) == 3


CONVERSE = [c for c in corpus() if c.wire == "aws-bedrock-converse" and c.status < 300]


@pytest.mark.parametrize("capture", CONVERSE, ids=[c.key for c in CONVERSE])
def test_every_lost_converse_block_stop_is_never_completed(capture):
    stops = [i for i, e in enumerate(capture.events)
             if e.event == bedrock_converse.CONTENT_BLOCK_STOP]
    for index in stops:
        assert turn_state(without(capture, index)).outcome != "completed", index
