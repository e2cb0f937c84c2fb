"""Benchmark: bytes to a finished turn, ours against the SDK's own path, at two sizes.

Each case builds one long stream in memory, at a size and at twice that size,
and times the whole way from the same bytes to a final object:

- ours: the bytes -> `lesson_lib.sse` -> wire events -> the accumulator's
  changes -> the turn adapter -> `reduce`, ending in a `TurnState`
  (`lesson_lib.turn.run.turn_state`, route ``wire``; ``auto`` where a wire's
  accumulator does not return its changes yet, which is then the SDK route);
- the SDK: the bytes streamed through the official client over the offline
  replay transport (`lesson_lib.replay`), ended by ``get_final_message()`` /
  ``get_final_response()`` / ``get_final_completion()``, keeping nothing
  else. The client is made once, outside the timed region.

Both sides get the body in the same network chunks of `CHUNK` bytes (one
chunk of several megabytes would time the SDK's SSE decoder on a shape no
server sends, see ``bench_sse``). Before timing, each case checks
that both sides ended with the same text or tool input. Time is the best of a
few runs (the SDK's, seconds long: one run) with the garbage collector off (as `timeit` does).

``SDK/ours`` is SDK time over our time (the goal is at least 5); ``x2`` is the
time at the larger size over the time at the smaller (the goal is at most 2.2:
2 is linear).

    python bench/bench_turn.py [--quick]
"""

from __future__ import annotations

import argparse
import gc
import time
from collections.abc import Callable
from typing import Any

from bench_accumulate import WORDS, anthropic_text, chat_text, responses_text

from lesson_lib.captures import Capture, from_bytes
from lesson_lib.replay import anthropic_client, openai_client, request_kwargs
from lesson_lib.turn.run import Route, route_for, turn_state

CHUNK = 4096
SPEED_GOAL = 5.0
DOUBLING_GOAL = 2.2


def anthropic_tool_bytes(size: int, fragment: int = 150) -> bytes:
    """A Messages stream with one tool_use block whose input (about `size` bytes of
    JSON) arrives in fragments of `fragment` bytes."""
    import json
    line = "".join(WORDS)
    text = (line * (size // len(line) + 1))[:size]
    raw = json.dumps({"path": "notes.txt", "text": text}, ensure_ascii=False)
    frags = [raw[i:i + fragment] for i in range(0, len(raw), fragment)]
    ps: list[dict] = [{"type": "message_start", "message": {
        "id": "msg_bench", "type": "message", "role": "assistant", "model": "claude-bench",
        "content": [], "stop_reason": None, "stop_sequence": None,
        "usage": {"input_tokens": 10, "output_tokens": 1}}},
        {"type": "content_block_start", "index": 0, "content_block": {
            "type": "tool_use", "id": "toolu_bench", "name": "write_file", "input": {}}}]
    ps += [{"type": "content_block_delta", "index": 0,
            "delta": {"type": "input_json_delta", "partial_json": f}} for f in frags]
    ps += [{"type": "content_block_stop", "index": 0},
           {"type": "message_delta", "delta": {"stop_reason": "tool_use", "stop_sequence": None},
            "usage": {"output_tokens": len(frags)}},
           {"type": "message_stop"}]
    out = [f"event: {p['type']}\ndata: {json.dumps(p, separators=(',', ':'))}\n\n" for p in ps]
    return "".join(out).encode()


CASES = [
    # name, wire, body builder, unit, (sizes), (quick sizes)
    ("anthropic text deltas", "anthropic-messages", anthropic_text, "deltas",
     (16_000, 32_000), (2_000, 4_000)),
    ("anthropic tool input", "anthropic-messages", anthropic_tool_bytes, "bytes",
     (300_000, 600_000), (30_000, 60_000)),
    ("chat chunks", "openai-chat", chat_text, "chunks",
     (16_000, 32_000), (2_000, 4_000)),
    ("responses text deltas", "openai-responses", responses_text, "deltas",
     (16_000, 32_000), (2_000, 4_000)),
]


# -- the two sides ------------------------------------------------------------------


def _route(wire: str) -> Route:
    """``wire`` where the wire's accumulator returns its changes, else ``auto``."""
    return "wire" if route_for(wire) == "wire" else "auto"


def _capture(body: bytes, wire: str) -> Capture:
    ends = list(range(CHUNK, len(body), CHUNK))
    return from_bytes(body, name="bench", sidecar={"wire": wire, "chunks": {"ends": ends}})


def _ours(body: bytes, wire: str, route: Route) -> Callable[[], Any]:
    def run() -> Any:
        return turn_state(_capture(body, wire), route)
    return run


def _sdk(capture: Capture) -> Callable[[], Any]:
    kwargs = request_kwargs(capture)
    if capture.wire == "anthropic-messages":
        messages = anthropic_client(capture).messages

        def run() -> Any:
            with messages.stream(**kwargs) as stream:
                return stream.get_final_message()
        return run
    client = openai_client(capture)
    if capture.wire == "openai-chat":
        chat = client.chat.completions

        def run() -> Any:
            with chat.stream(**kwargs) as stream:
                return stream.get_final_completion()
        return run
    responses = client.responses

    def run() -> Any:
        with responses.stream(**kwargs) as stream:
            return stream.get_final_response()
    return run


def _same_result(wire: str, state: Any, final: Any) -> bool:
    """Whether our `TurnState` and the SDK's final object hold the same content."""
    block = state.blocks[0]
    if wire == "anthropic-messages":
        part = final.content[0]
        return block.input == part.input if part.type == "tool_use" else block.text == part.text
    if wire == "openai-chat":
        return block.text == final.choices[0].message.content
    return block.text == final.output_text


def _best(fn: Callable[[], Any], repeats: int) -> float:
    """Best wall time of `repeats` runs, with the garbage collector off (as timeit does)."""
    best = float("inf")
    for _ in range(repeats):
        gc.collect()
        gc.disable()
        try:
            t0 = time.perf_counter()
            fn()
            best = min(best, time.perf_counter() - t0)
        finally:
            gc.enable()
    return best


def run(quick: bool = False) -> list[dict]:
    """Time every case at its two sizes; one row per case and size, with both times,
    SDK/ours, and (on the larger size's row) what the doubling cost each side."""
    rows: list[dict] = []
    repeats = 2 if quick else 3
    for name, wire, build, unit, sizes, quick_sizes in CASES:
        route = _route(wire)
        before: dict | None = None
        for n in quick_sizes if quick else sizes:
            body = build(n)
            ours = _ours(body, wire, route)
            sdk = _sdk(_capture(body, wire))
            if not _same_result(wire, ours(), sdk()):
                raise AssertionError(f"{name} at {n}: ours and the SDK's final object differ")
            row = {"bench": "turn", "case": name, "wire": wire, "route": route,
                   "size": n, "unit": unit, "bytes": len(body),
                   "ours_s": _best(ours, repeats),
                   "sdk_s": _best(sdk, 1)}     # seconds long: one run is enough
            row["ratio"] = row["sdk_s"] / row["ours_s"]
            if before is not None:
                row["ours_x2"] = row["ours_s"] / before["ours_s"]
                row["sdk_x2"] = row["sdk_s"] / before["sdk_s"]
            rows.append(row)
            before = row
    return rows


def main(quick: bool = False) -> list[dict]:
    """Print the table (as ``bench/run.py`` expects); return the rows."""
    rows = run(quick=quick)
    print("Bytes to the final object: ours (TurnState) against the SDK's own path")
    print(f"(goal: SDK/ours at least {SPEED_GOAL:g}, a doubling costing at most "
          f"{DOUBLING_GOAL:g}x)")
    print(f"{'case':<24} {'route':>5} {'size':>15} {'ours ms':>9} {'SDK ms':>9} "
          f"{'SDK/ours':>9} {'ours x2':>8} {'SDK x2':>7}")
    for r in rows:
        size = f"{r['size']:,} {r['unit']}"
        x2 = (f"{r['ours_x2']:>8.2f} {r['sdk_x2']:>7.2f}" if "ours_x2" in r
              else f"{'':>8} {'':>7}")
        misses = []
        if r["ratio"] < SPEED_GOAL:
            misses.append("speed")
        if r.get("ours_x2", 0) > DOUBLING_GOAL:
            misses.append("doubling")
        flag = f"  under the goal: {', '.join(misses)}" if misses else ""
        print(f"{r['case']:<24} {r['route']:>5} {size:>15} {r['ours_s'] * 1e3:>9.1f} "
              f"{r['sdk_s'] * 1e3:>9.1f} {r['ratio']:>8.1f}x {x2}{flag}")
    return rows


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="smaller streams, fewer runs")
    main(quick=parser.parse_args().quick)
