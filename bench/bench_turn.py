"""Benchmark: bytes to a finished turn, ours against the SDK's own path, at three sizes.

Each case builds one long stream in memory, at a size, twice it and four
times it, and times the whole way from the same bytes to a final object:

- ours: `lesson_lib.turn.run.turn_state` with ``route="auto"``: the bytes ->
  `lesson_lib.sse.decoder` -> wire events -> the accumulator's changes -> the turn
  adapter -> `reduce`, ending in a `TurnState`, on every wire whose
  accumulator returns its changes; elsewhere the SDK route (the SDK's own
  events -> the SDK adapter -> `reduce`), which then costs the SDK's time and
  more. The ``route`` column says which one each row took;
- the SDK: the bytes streamed through the official client over the offline
  replay transport (`lesson_lib.capture.replay`), ended by ``get_final_message()`` /
  ``get_final_response()`` / ``get_final_completion()``, keeping nothing
  else. The client is made once, outside the timed region.

Both sides get the body in the same network chunks of `timing.CHUNK` bytes (one
chunk of several megabytes would time the SDK's SSE decoder on a shape no
server sends, see ``bench_sse``). Before timing, each case checks that both
sides ended with the same text or tool input.

Time is CPU time (`time.process_time`): both sides run in this one thread
and do no I/O (the replay is in memory), so their CPU time is their cost,
and what other processes take from a shared machine's cores is not counted
in it (wall time counts those waits too; it is kept in the rows,
``*_wall_s``). Each figure is the best of interleaved rounds
(each size and side once per round, so that a busy moment weighs on all of
them alike), with the garbage collector off during each run (as `timeit`
does): as many rounds for ours as fill about `timing.BUDGET_S` seconds (between 3
and 9), the SDK's first two. ``SDK/ours`` is SDK time over our time (the
goal is at least 5); ``x2`` is the time at a size over the time at half of
it (the goal is at most 2.2 for ours: 2 is linear).

    python bench/bench_turn.py [--quick]
"""

from __future__ import annotations

import argparse
from collections.abc import Callable
from typing import Any

from bench_accumulate import WORDS, anthropic_text, chat_text, responses_text
from timing import DOUBLING_GOAL, capture_of, doubling_cells, goal_misses, turn_rows

from lesson_lib.capture.captures import Capture
from lesson_lib.capture.replay import anthropic_client, openai_client, request_kwargs
from lesson_lib.turn.run import route_for, turn_state

SPEED_GOAL = 5.0
_capture = capture_of


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
    # name, wire, body builder, unit, (sizes), (quick sizes): each size twice the one before
    ("anthropic text deltas", "anthropic-messages", anthropic_text, "deltas",
     (8_000, 16_000, 32_000), (1_000, 2_000)),
    ("anthropic tool input", "anthropic-messages", anthropic_tool_bytes, "bytes",
     (150_000, 300_000, 600_000), (15_000, 30_000)),
    ("chat chunks", "openai-chat", chat_text, "chunks",
     (8_000, 16_000, 32_000), (1_000, 2_000)),
    ("responses text deltas", "openai-responses", responses_text, "deltas",
     (8_000, 16_000, 32_000), (1_000, 2_000)),
]


# -- the two sides ------------------------------------------------------------------


def _ours(body: bytes, wire: str) -> Callable[[], Any]:
    def run() -> Any:
        return turn_state(_capture(body, wire), "auto")
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


def run(quick: bool = False) -> list[dict]:
    """Time every case at its sizes (`timing.turn_rows`): one row per case and size, with
    both times, SDK/ours, the route ours took, and what each doubling cost each side."""
    return turn_rows("turn", CASES, _ours, lambda body, wire: _sdk(_capture(body, wire)),
                     _same_result, "ours and the SDK's final object differ", route_for,
                     quick=quick)


def main(quick: bool = False) -> list[dict]:
    """Print the table (as ``bench/run.py`` expects); return the rows."""
    rows = run(quick=quick)
    print("Bytes to the final object: ours (TurnState) against the SDK's own path")
    print(f"(goal: SDK/ours at least {SPEED_GOAL:g}, a doubling costing ours at most "
          f"{DOUBLING_GOAL:g}x; route sdk: no changes from that wire's accumulator yet, "
          "so ours runs the SDK too)")
    print("(CPU time, best of interleaved rounds)")
    print(f"{'case':<24} {'route':>5} {'size':>15} {'ours ms':>9} {'SDK ms':>9} "
          f"{'SDK/ours':>9} {'ours x2':>8} {'SDK x2':>7}")
    for r in rows:
        size = f"{r['size']:,} {r['unit']}"
        print(f"{r['case']:<24} {r['route']:>5} {size:>15} {r['ours_s'] * 1e3:>9.1f} "
              f"{r['sdk_s'] * 1e3:>9.1f} {r['ratio']:>8.1f}x {doubling_cells(r)}"
              f"{goal_misses(r, SPEED_GOAL)}")
    return rows


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="smaller streams, fewer runs")
    main(quick=parser.parse_args().quick)
