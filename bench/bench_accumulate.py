"""Benchmark: our accumulators against the official SDK helpers, on long streams.

Each case builds one long stream in memory (no files), decodes it once, and
then times only the accumulation, best of several runs (garbage collector
off during each run, as `timeit` does):

- ours: feed the parsed `WireEvent`s into the wire's accumulator, `finish()`,
  `final()`;
- the SDK: the same payloads, first turned into the SDK's own typed event
  objects (outside the timed region), fed to its helper and its final
  object taken: Anthropic ``accumulate_event`` (``anthropic.lib.streaming``),
  OpenAI ``ChatCompletionStreamState.handle_chunk`` /
  ``get_final_completion`` and ``ResponseStreamState.handle_event``.

``ratio`` is SDK time / our time: above 1 means ours is faster.

    python bench/bench_accumulate.py [--quick]
"""

from __future__ import annotations

import argparse
import gc
import json
import time
from collections.abc import Callable
from typing import Any

from lesson_lib.accumulate import accumulator_for
from lesson_lib.capture.captures import from_bytes
from lesson_lib.wires.wire_events import WireEvent, parse_all

WORDS = ["stream", " of", " tokens", ", one", " delta", " at", " a", " time.", "\n", " é✓"]


# -- long streams, built in memory ---------------------------------------------------


def _sse(payloads: list[dict], named: bool) -> bytes:
    out = []
    for p in payloads:
        head = f"event: {p['type']}\n" if named else ""
        out.append(f"{head}data: {json.dumps(p, separators=(',', ':'))}\n\n")
    if not named:
        out.append("data: [DONE]\n\n")
    return "".join(out).encode()


def anthropic_text(n: int) -> bytes:
    """A Messages stream with one text block of `n` text deltas."""
    ps: list[dict] = [{"type": "message_start", "message": {
        "id": "msg_bench", "type": "message", "role": "assistant", "model": "claude-bench",
        "content": [], "stop_reason": None, "stop_sequence": None,
        "usage": {"input_tokens": 10, "output_tokens": 1}}},
        {"type": "content_block_start", "index": 0, "content_block": {"type": "text", "text": ""}}]
    ps += [{"type": "content_block_delta", "index": 0,
            "delta": {"type": "text_delta", "text": WORDS[i % len(WORDS)]}} for i in range(n)]
    ps += [{"type": "content_block_stop", "index": 0},
           {"type": "message_delta", "delta": {"stop_reason": "end_turn", "stop_sequence": None},
            "usage": {"output_tokens": n}},
           {"type": "message_stop"}]
    return _sse(ps, named=True)


def anthropic_tool(n: int) -> bytes:
    """A Messages stream with one tool_use block whose input arrives in `n` fragments."""
    ps: list[dict] = [{"type": "message_start", "message": {
        "id": "msg_bench", "type": "message", "role": "assistant", "model": "claude-bench",
        "content": [], "stop_reason": None, "stop_sequence": None,
        "usage": {"input_tokens": 10, "output_tokens": 1}}},
        {"type": "content_block_start", "index": 0, "content_block": {
            "type": "tool_use", "id": "toolu_bench", "name": "write_file", "input": {}}}]
    frags = ['{"path": "notes.txt", "text": "'] + ["line of text\\n"] * (n - 2) + ['"}']
    ps += [{"type": "content_block_delta", "index": 0,
            "delta": {"type": "input_json_delta", "partial_json": f}} for f in frags]
    ps += [{"type": "content_block_stop", "index": 0},
           {"type": "message_delta", "delta": {"stop_reason": "tool_use", "stop_sequence": None},
            "usage": {"output_tokens": n}},
           {"type": "message_stop"}]
    return _sse(ps, named=True)


def chat_text(n: int) -> bytes:
    """A Chat Completions stream of `n` chunks, then finish and usage chunks."""
    def chunk(delta: dict, finish: str | None = None, **extra: Any) -> dict:
        return {"id": "chatcmpl-bench", "object": "chat.completion.chunk", "created": 1,
                "model": "gpt-bench", "system_fingerprint": "fp_bench",
                "choices": [{"index": 0, "delta": delta, "logprobs": None,
                             "finish_reason": finish}], **extra}
    ps = [chunk({"role": "assistant", "content": "", "refusal": None})]
    ps += [chunk({"content": WORDS[i % len(WORDS)]}) for i in range(n - 1)]
    ps.append(chunk({}, "stop"))
    ps.append({**chunk({}), "choices": [],
               "usage": {"prompt_tokens": 5, "completion_tokens": n, "total_tokens": n + 5}})
    out = "".join(f"data: {json.dumps(p, separators=(',', ':'))}\n\n" for p in ps)
    return (out + "data: [DONE]\n\n").encode()


def responses_text(n: int) -> bytes:
    """A Responses stream with one message of `n` output_text deltas."""
    text = "".join(WORDS[i % len(WORDS)] for i in range(n))
    base = {"id": "resp_bench", "object": "response", "created_at": 1, "model": "gpt-bench",
            "status": "in_progress", "output": [], "parallel_tool_calls": True,
            "tool_choice": "auto", "tools": []}
    item = {"id": "msg_bench", "type": "message", "role": "assistant",
            "status": "in_progress", "content": []}
    part = {"type": "output_text", "text": "", "annotations": [], "logprobs": []}
    done_part = {**part, "text": text}
    done_item = {**item, "status": "completed", "content": [done_part]}
    seq = iter(range(1 << 30))
    ps: list[dict] = [
        {"type": "response.created", "response": base},
        {"type": "response.in_progress", "response": base},
        {"type": "response.output_item.added", "output_index": 0, "item": item},
        {"type": "response.content_part.added", "item_id": "msg_bench", "output_index": 0,
         "content_index": 0, "part": part}]
    ps += [{"type": "response.output_text.delta", "item_id": "msg_bench", "output_index": 0,
            "content_index": 0, "delta": WORDS[i % len(WORDS)], "logprobs": []}
           for i in range(n)]
    ps += [{"type": "response.output_text.done", "item_id": "msg_bench", "output_index": 0,
            "content_index": 0, "text": text, "logprobs": []},
           {"type": "response.content_part.done", "item_id": "msg_bench", "output_index": 0,
            "content_index": 0, "part": done_part},
           {"type": "response.output_item.done", "output_index": 0, "item": done_item},
           {"type": "response.completed", "response": {
               **base, "status": "completed", "output": [done_item],
               "usage": {"input_tokens": 5, "output_tokens": n, "total_tokens": n + 5,
                         "input_tokens_details": {"cached_tokens": 0},
                         "output_tokens_details": {"reasoning_tokens": 0}}}}]
    for p in ps:
        p["sequence_number"] = next(seq)
    return _sse(ps, named=True)


# -- the two sides ------------------------------------------------------------------


def _ours(wire: str, events: list[WireEvent]) -> Callable[[], Any]:
    def run() -> Any:
        acc = accumulator_for(wire)
        for event in events:
            acc.feed(event)
        acc.finish()
        return acc.final()
    return run


def _sdk(wire: str, events: list[WireEvent]) -> Callable[[], Any]:
    payloads = [e.payload for e in events if e.payload is not None]
    if wire == "anthropic-messages":
        from anthropic._models import construct_type
        from anthropic.lib.streaming._messages import accumulate_event
        from anthropic.types import RawMessageStreamEvent

        typed = [construct_type(type_=RawMessageStreamEvent, value=p) for p in payloads]

        def run() -> Any:
            snapshot, bufs = None, {}
            for event in typed:
                snapshot = accumulate_event(event=event, current_snapshot=snapshot,
                                            json_bufs=bufs)
            return snapshot
        return run
    if wire == "openai-chat":
        from openai._models import construct_type
        from openai.lib.streaming.chat import ChatCompletionStreamState
        from openai.types.chat import ChatCompletionChunk

        typed = [construct_type(type_=ChatCompletionChunk, value=p) for p in payloads]

        def run() -> Any:
            state = ChatCompletionStreamState()
            for chunk in typed:
                state.handle_chunk(chunk)
            return state.get_final_completion()
        return run
    from openai._models import construct_type
    from openai.lib.streaming.responses import ResponseStreamState
    from openai.types.responses import ResponseStreamEvent

    typed = [construct_type(type_=ResponseStreamEvent, value=p) for p in payloads]

    def run() -> Any:
        from openai import omit
        state = ResponseStreamState(input_tools=omit, text_format=omit)
        for event in typed:
            state.handle_event(event)
        return state._completed_response
    return run


def _best(fn: Callable[[], Any], repeats: int) -> float:
    """Best CPU time of `repeats` runs, with the garbage collector off (as timeit does)."""
    best = float("inf")
    enabled = gc.isenabled()
    try:
        for _ in range(repeats):
            gc.collect()
            gc.disable()
            t0 = time.process_time()
            fn()
            best = min(best, time.process_time() - t0)
            gc.enable()
    finally:
        if enabled:
            gc.enable()
    return best


CASES = [
    # name, wire, body builder, size, quick size
    ("anthropic text deltas", "anthropic-messages", anthropic_text, 16_000, 2_000),
    ("anthropic tool input deltas", "anthropic-messages", anthropic_tool, 4_000, 1_000),
    ("chat chunks", "openai-chat", chat_text, 8_000, 1_000),
    ("responses text deltas", "openai-responses", responses_text, 16_000, 2_000),
]


def run(quick: bool = False) -> list[dict]:
    """Time every case; one row each: events, ours (s), SDK (s), ratio SDK/ours.

    A wire whose accumulator is not available yet gets a row with ``skipped``.
    """
    rows = []
    repeats = 3 if quick else 7
    for name, wire, build, size, quick_size in CASES:
        n = quick_size if quick else size
        cap = from_bytes(build(n), name=name, sidecar={"wire": wire})
        events = parse_all(cap.events)
        try:
            ours = _ours(wire, events)
            ours()
        except ValueError as exc:
            rows.append({"bench": "accumulate", "case": name, "wire": wire,
                         "events": len(events), "skipped": str(exc)})
            continue
        sdk = _sdk(wire, events)
        t_ours = _best(ours, repeats)
        t_sdk = _best(sdk, repeats if "tool" not in name else 1)
        rows.append({"bench": "accumulate", "case": name, "wire": wire,
                     "events": len(events), "ours_s": t_ours,
                     "sdk_s": t_sdk, "ratio": t_sdk / t_ours})
    return rows


def main(quick: bool = False) -> list[dict]:
    """Print the table (as ``bench/run.py`` expects); return the rows."""
    rows = run(quick=quick)
    print("Accumulation of pre-decoded events (ratio = SDK time / our time)")
    print(f"{'case':<30} {'events':>7} {'ours ms':>9} {'SDK ms':>9} {'SDK/ours':>9}")
    for r in rows:
        if "skipped" in r:
            print(f"{r['case']:<30} {r['events']:>7}  skipped: {r['skipped']}")
            continue
        print(f"{r['case']:<30} {r['events']:>7} {r['ours_s'] * 1e3:>9.1f} "
              f"{r['sdk_s'] * 1e3:>9.1f} {r['ratio']:>8.1f}x")
    return rows


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="smaller streams, fewer runs")
    main(quick=parser.parse_args().quick)
