"""Benchmark: bytes to a finished turn on Gemini, Gemini Interactions and Bedrock, ours
against the SDKs' own stream handling, at three sizes.

The same measure as ``bench_turn`` (CPU time, best of interleaved rounds, the
garbage collector off, the body in the same `timing.CHUNK`-byte network chunks on both
sides), on the two wires whose official clients are not Anthropic's or OpenAI's:

- ours: `lesson_lib.turn.run.turn_state` on the bytes: SSE (Gemini) or the
  event-stream decoder (Bedrock) -> wire events -> the accumulator's changes ->
  the wire's turn adapter -> `reduce`, ending in a `TurnState`;
- google-genai: ``client.models.generate_content_stream`` over the offline
  replay transport (`lesson_lib.capture.replay.gemini_client`); it assembles nothing,
  so the SDK side keeps the least an application must: each response's answer
  text, joined (`lesson_lib.capture.replay.gemini_text`);
- google-genai's Interactions: ``client.interactions.create(..., stream=True)`` over the
  same transport; one object per event, assembled into nothing, so the SDK side joins
  the text deltas (`lesson_lib.capture.replay.interactions_text`);
- boto3: ``converse_stream`` and ``invoke_model_with_response_stream`` fed the
  recorded bytes (`lesson_lib.capture.bedrock_replay.client`, fake credentials); they
  yield decoded dicts and assemble nothing either, so the SDK side joins the
  text deltas (`lesson_lib.capture.bedrock_replay.text_of_event`: an Invoke chunk's
  Anthropic event parsed from its bytes).

The goals: ``SDK/ours`` at least 3 (the SDK side does less: it builds no
turn, no final object, no diagnostics), and a doubling costing ours at most
2.2x (2 is linear). Before timing, each case checks that both sides ended with
the same text.

    python bench/bench_turn_wires.py [--quick]
"""

from __future__ import annotations

import argparse
import base64
import json
from collections.abc import Callable
from typing import Any

from bench_accumulate import WORDS
from timing import DOUBLING_GOAL, capture_of, doubling_cells, goal_misses, turn_rows

from lesson_lib.capture.bedrock_replay import boto3_events, text_of_event
from lesson_lib.capture.replay import (
    gemini_client,
    gemini_text,
    interactions_text,
    request_kwargs,
)
from lesson_lib.sse.eventstream import encode_frame
from lesson_lib.turn.run import route_for, turn_state
from lesson_lib.wires import gemini_interactions

SPEED_GOAL = 3.0
_capture = capture_of
PADDING = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJ"


def _words(n: int) -> list[str]:
    return [WORDS[i % len(WORDS)] for i in range(n)]


def gemini_text_bytes(records: int) -> bytes:
    """A Gemini stream of `records` records, each one text part with usage, as the API
    sends them (``\\r\\n`` separators); the last one says ``STOP``."""
    out = []
    for i, word in enumerate(_words(records)):
        cand: dict[str, Any] = {"content": {"role": "model", "parts": [{"text": word}]},
                                "index": 0}
        if i == records - 1:
            cand["finishReason"] = "STOP"
        record = {"candidates": [cand], "usageMetadata": {
            "promptTokenCount": 9, "candidatesTokenCount": i + 1, "totalTokenCount": i + 10},
            "modelVersion": "gemini-2.5-flash", "responseId": "bench"}
        out.append(b"data: " + json.dumps(record, separators=(",", ":")).encode() + b"\r\n\r\n")
    return b"".join(out)


def interactions_text_bytes(deltas: int) -> bytes:
    """A Gemini Interactions stream of `deltas` text deltas in one model_output step, as the
    API sends them (``event:`` lines, ``event_type`` last), between the interaction's
    lifecycle events."""
    gi = gemini_interactions
    interaction = {"id": "v1_bench", "status": gi.IN_PROGRESS, "object": "interaction",
                   "model": "gemini-2.5-flash"}
    events: list[dict] = [{"interaction": interaction, "event_type": gi.INTERACTION_CREATED},
                          {"interaction_id": "v1_bench", "status": gi.IN_PROGRESS,
                           "event_type": gi.INTERACTION_STATUS_UPDATE},
                          {"index": 0, "step": {"type": gi.MODEL_OUTPUT_STEP},
                           "event_type": gi.STEP_START}]
    events += [{"index": 0, "delta": {"text": word, "type": gi.TEXT_DELTA},
                "event_type": gi.STEP_DELTA} for word in _words(deltas)]
    events += [{"index": 0, "event_type": gi.STEP_STOP},
               {"interaction": {**interaction, "status": gi.COMPLETED, "usage": {
                   "total_tokens": deltas + 9, "total_input_tokens": 9,
                   "total_output_tokens": deltas}}, "event_type": gi.INTERACTION_COMPLETED}]
    return b"".join(f"event: {e['event_type']}\ndata: ".encode()
                    + json.dumps(e, separators=(",", ":")).encode() + b"\n\n" for e in events)


def _frame(event_type: str, payload: dict) -> bytes:
    return encode_frame({":event-type": event_type, ":content-type": "application/json",
                         ":message-type": "event"},
                        json.dumps(payload, separators=(",", ":")).encode())


def converse_text_bytes(deltas: int) -> bytes:
    """A ConverseStream of `deltas` text deltas, padded (``p``) as Bedrock pads them."""
    frames = [_frame("messageStart", {"p": PADDING[:7], "role": "assistant"})]
    frames += [_frame("contentBlockDelta", {"contentBlockIndex": 0, "delta": {"text": word},
                                            "p": PADDING[:(i * 7) % len(PADDING)]})
               for i, word in enumerate(_words(deltas))]
    frames += [_frame("contentBlockStop", {"contentBlockIndex": 0, "p": PADDING[:3]}),
               _frame("messageStop", {"p": PADDING[:9], "stopReason": "end_turn"}),
               _frame("metadata", {"metrics": {"latencyMs": 900}, "p": PADDING[:5],
                                   "usage": {"inputTokens": 9, "outputTokens": deltas,
                                             "totalTokens": deltas + 9}})]
    return b"".join(frames)


def invoke_text_bytes(deltas: int) -> bytes:
    """An InvokeModelWithResponseStream of `deltas` Anthropic text deltas, each event
    base64 in a ``chunk`` frame's ``bytes``."""
    events: list[dict] = [{"type": "message_start", "message": {
        "id": "msg_bench", "type": "message", "role": "assistant", "model": "claude-bench",
        "content": [], "stop_reason": None, "stop_sequence": None,
        "usage": {"input_tokens": 9, "output_tokens": 1}}},
        {"type": "content_block_start", "index": 0, "content_block": {"type": "text", "text": ""}}]
    events += [{"type": "content_block_delta", "index": 0,
                "delta": {"type": "text_delta", "text": word}} for word in _words(deltas)]
    events += [{"type": "content_block_stop", "index": 0},
               {"type": "message_delta", "delta": {"stop_reason": "end_turn",
                                                   "stop_sequence": None},
                "usage": {"output_tokens": deltas}},
               {"type": "message_stop"}]
    return b"".join(_frame("chunk", {"bytes": base64.b64encode(
        json.dumps(e, separators=(",", ":")).encode()).decode(), "p": PADDING[:(i * 5) % 30]})
        for i, e in enumerate(events))


CASES = [
    # name, wire, body builder, unit, (sizes), (quick sizes): each size twice the one before
    ("gemini text records", "google-gemini", gemini_text_bytes, "records",
     (4_000, 8_000, 16_000), (500, 1_000)),
    ("bedrock converse deltas", "aws-bedrock-converse", converse_text_bytes, "deltas",
     (8_000, 16_000, 32_000), (1_000, 2_000)),
    ("bedrock invoke deltas", "aws-bedrock-invoke", invoke_text_bytes, "deltas",
     (8_000, 16_000, 32_000), (1_000, 2_000)),
    ("interactions deltas", "google-gemini-interactions", interactions_text_bytes, "deltas",
     (8_000, 16_000, 32_000), (1_000, 2_000)),
]


# -- the two sides ------------------------------------------------------------------


def _ours(body: bytes, wire: str) -> Callable[[], Any]:
    def run() -> Any:
        return turn_state(_capture(body, wire), "auto")
    return run


def _sdk(body: bytes, wire: str) -> Callable[[], str]:
    """The SDK's own stream over the bytes, keeping the answer text (all either SDK
    assembles for you is nothing, so this is the least an application does)."""
    capture = _capture(body, wire)
    if wire == "google-gemini-interactions":
        interactions = gemini_client(capture).interactions
        kwargs = request_kwargs(capture)

        def run_interactions() -> str:
            return "".join(interactions_text(e) for e in interactions.create(**kwargs))
        return run_interactions
    if wire == "google-gemini":
        models = gemini_client(capture).models
        kwargs = request_kwargs(capture)

        def run() -> str:
            return "".join(gemini_text(r) for r in models.generate_content_stream(**kwargs))
        return run

    from lesson_lib.capture.bedrock_replay import client
    bedrock = client(capture)

    def run_boto3() -> str:
        return "".join(text_of_event(e) for e in boto3_events(capture, bedrock=bedrock))
    return run_boto3


def _text(state: Any) -> str:
    return "".join(b.text for b in state.blocks if b.kind == "text")


def _same_text(wire: str, state: Any, text: str) -> bool:
    return state.outcome == "completed" and _text(state) == text


def run(quick: bool = False) -> list[dict]:
    """Time every case at its sizes (`timing.turn_rows`): one row per case and size, with
    both times, SDK/ours, and what each doubling cost each side."""
    return turn_rows("turn_wires", CASES, _ours, _sdk, _same_text,
                     "ours and the SDK's text differ (or the turn is not completed)",
                     route_for, quick=quick)


def main(quick: bool = False) -> list[dict]:
    """Print the table (as ``bench/run.py`` expects); return the rows."""
    rows = run(quick=quick)
    print("Bytes to the turn on Gemini and Bedrock: ours (TurnState) against the SDK's stream")
    print(f"(goal: SDK/ours at least {SPEED_GOAL:g}, a doubling costing ours at most "
          f"{DOUBLING_GOAL:g}x; CPU time, best of interleaved rounds)")
    print(f"{'case':<24} {'size':>15} {'MB':>6} {'ours ms':>9} {'SDK ms':>9} "
          f"{'SDK/ours':>9} {'ours x2':>8} {'SDK x2':>7}")
    for r in rows:
        size = f"{r['size']:,} {r['unit']}"
        print(f"{r['case']:<24} {size:>15} {r['bytes'] / 1e6:>6.2f} {r['ours_s'] * 1e3:>9.1f} "
              f"{r['sdk_s'] * 1e3:>9.1f} {r['ratio']:>8.1f}x {doubling_cells(r)}"
              f"{goal_misses(r, SPEED_GOAL)}")
    return rows


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="smaller streams, fewer runs")
    main(quick=parser.parse_args().quick)
