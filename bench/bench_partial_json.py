"""Benchmark: a partial view of tool arguments after every delta, ours against the usual ways.

Tool arguments of 40, 80, 160 and 320 KB arrive in 20-character deltas, in
two shapes: many small records (a list of objects with a few fields) and one
long string (a file's text, with newlines, quotes and some non-ASCII); a
third case, one long string of plain ASCII words, is jiter's best case
(nothing to unescape or decode) and shows the smallest ratio. After every
delta each implementation must have the value so far:

- ``lesson_lib``: ``PartialJSON.feed(delta)``, then read ``.value``;
- ``anthropic SDK``: ``accumulate_event`` from ``anthropic.lib.streaming``
  on a ``content_block_delta`` event per delta (the events are built before
  the clock starts), then read the block's ``input``; it re-parses the whole
  buffer with jiter on every delta;
- ``jiter``: ``jiter.from_json(buffer.encode(), partial_mode="trailing-strings")``
  on the whole buffer per delta;
- ``partial-json-parser``: ``partial_json_parser.loads(buffer)`` per delta,
  at the smallest size only (it takes seconds there already).

Each implementation's last value is checked against ``json.loads``. Times
are the best CPU time of a few runs (``time.process_time``), with garbage collection
paused as ``timeit`` does; that favours the re-parsers, which otherwise also
pay for collections over all the objects each re-parse builds (about 4x more
for the records at 160 KB). ``ratio`` is the
implementation's time over ours (above 1: ours is faster); ``growth`` is the
time over the same implementation's time at half the size (2 is linear, 4
quadratic).

    python bench/bench_partial_json.py [--quick]
"""

from __future__ import annotations

import argparse
import gc
import json
import random
import time
from collections.abc import Callable
from typing import Any

import jiter
import partial_json_parser
from anthropic.lib.streaming._messages import accumulate_event
from anthropic.types import (
    InputJSONDelta,
    Message,
    RawContentBlockDeltaEvent,
    RawContentBlockStartEvent,
    RawMessageStartEvent,
    ToolUseBlock,
    Usage,
)

from lesson_lib.partial_json import PartialJSON

DELTA = 20
SIZES_KB = (40, 80, 160, 320)
QUICK_SIZES_KB = (5, 10)
SLOW_ONES = {"partial-json-parser": 40}  # largest size at which each slow one still runs
GOAL_RATIO, GOAL_GROWTH, GOAL_SIZE_KB = 50, 2.2, 320


# -- the two shapes -----------------------------------------------------------------


def many_records(size: int) -> str:
    """``{"rows": [...]}`` with small objects, about `size` characters of JSON."""
    rnd = random.Random(7)
    rows, length = [], 12
    while length < size:
        row = {"id": len(rows), "sku": f"SKU-{rnd.randrange(10 ** 6):06d}",
               "name": rnd.choice(["kettle", "lamp", "chair", "café table", "desk"]),
               "price": round(rnd.uniform(1, 500), 2), "in_stock": rnd.random() < 0.7,
               "tags": rnd.sample(["new", "sale", "eco", "gift"], 2)}
        rows.append(row)
        length += len(json.dumps(row)) + 2
    return json.dumps({"rows": rows})


def one_long_string(size: int) -> str:
    """``{"path": ..., "content": ...}`` whose content is a file's text, about `size` characters."""
    rnd = random.Random(11)
    lines = ['def greet(name):', '    """Say hello."""', '    return f"Hello, {name}!"', "",
             "# naïve café — résumé", '\tprint("tab\\tseparated", 42)', "x = {'a': [1, 2, 3]}"]
    text, length = [], 40
    while length < size:
        line = rnd.choice(lines) + "\n"
        text.append(line)
        length += len(json.dumps(line)) - 2
    return json.dumps({"path": "notes/example.py", "content": "".join(text)})


def one_plain_string(size: int) -> str:
    """``{"path": ..., "content": ...}`` whose content is ASCII words and spaces only."""
    rnd = random.Random(13)
    words = ["stream", "delta", "token", "event", "wire", "block", "value", "path"]
    return json.dumps({"path": "notes/plain.txt",
                       "content": " ".join(rnd.choice(words) for _ in range(size // 6))})


SHAPES: dict[str, Callable[[int], str]] = {"many records": many_records,
                                           "one long string": one_long_string,
                                           "plain ASCII string": one_plain_string}
GOAL_SHAPES = ("many records", "one long string")


def deltas(text: str) -> list[str]:
    return [text[i:i + DELTA] for i in range(0, len(text), DELTA)]


# -- the implementations: each returns (seconds, last value) -----------------------------


def ours(pieces: list[str]) -> tuple[float, Any]:
    start = time.process_time()
    parser = PartialJSON()
    value = None
    for piece in pieces:
        parser.feed(piece)
        value = parser.value
    return time.process_time() - start, value


def anthropic_sdk(pieces: list[str]) -> tuple[float, Any]:
    message = Message(id="msg_bench", type="message", role="assistant", model="bench",
                      content=[], stop_reason=None, stop_sequence=None,
                      usage=Usage(input_tokens=1, output_tokens=1))
    snapshot = accumulate_event(event=RawMessageStartEvent(type="message_start", message=message),
                                current_snapshot=None, json_bufs={})
    json_bufs: dict[int, bytes] = {}
    block = ToolUseBlock(type="tool_use", id="toolu_bench", name="bench", input={})
    snapshot = accumulate_event(
        event=RawContentBlockStartEvent(type="content_block_start", index=0, content_block=block),
        current_snapshot=snapshot, json_bufs=json_bufs)
    events = [RawContentBlockDeltaEvent(type="content_block_delta", index=0,
                                        delta=InputJSONDelta(type="input_json_delta",
                                                             partial_json=piece))
              for piece in pieces]
    start = time.process_time()
    value = None
    for event in events:
        snapshot = accumulate_event(event=event, current_snapshot=snapshot, json_bufs=json_bufs)
        value = snapshot.content[0].input
    return time.process_time() - start, value


def jiter_reparse(pieces: list[str]) -> tuple[float, Any]:
    start = time.process_time()
    buffer, value = "", None
    for piece in pieces:
        buffer += piece
        value = jiter.from_json(buffer.encode(), partial_mode="trailing-strings")
    return time.process_time() - start, value


def partial_json_parser_reparse(pieces: list[str]) -> tuple[float, Any]:
    start = time.process_time()
    buffer, value = "", None
    for piece in pieces:
        buffer += piece
        value = partial_json_parser.loads(buffer)
    return time.process_time() - start, value


IMPLEMENTATIONS: dict[str, Callable[[list[str]], tuple[float, Any]]] = {
    "lesson_lib": ours, "anthropic SDK": anthropic_sdk, "jiter": jiter_reparse,
    "partial-json-parser": partial_json_parser_reparse}


def best_of(run: Callable[[list[str]], tuple[float, Any]], pieces: list[str], expected: Any,
            repeat: int) -> float:
    best = float("inf")
    for _ in range(repeat):
        gc.collect()
        gc.disable()
        try:
            seconds, value = run(pieces)
        finally:
            gc.enable()
        assert value == expected, f"{run.__name__} built a different value"
        best = min(best, seconds)
    return best


# -- the table -----------------------------------------------------------------------------


def run(quick: bool = False) -> list[dict]:
    """Time every implementation on every shape and size; one row each."""
    sizes = QUICK_SIZES_KB if quick else SIZES_KB
    rows: list[dict] = []
    gc.freeze()  # the imported SDKs' objects: keep gc.collect() between runs short
    try:
        _run_cases(sizes, quick, rows)
    finally:
        gc.unfreeze()
    return rows


def _run_cases(sizes: tuple[int, ...], quick: bool, rows: list[dict]) -> None:
    for case, make in SHAPES.items():
        previous: dict[str, float] = {}
        for size_kb in sizes:
            text = make(size_kb * 1024)
            pieces, expected = deltas(text), json.loads(text)
            times: dict[str, float] = {}
            for name, implementation in IMPLEMENTATIONS.items():
                if not quick and size_kb > SLOW_ONES.get(name, size_kb):
                    continue
                repeat = 5 if name == "lesson_lib" else (2 if size_kb <= 80 else 1)
                repeat = 1 if quick else repeat
                times[name] = best_of(implementation, pieces, expected, repeat)
            for name, seconds in times.items():
                rows.append({"bench": "partial_json", "case": case, "implementation": name,
                             "size_kb": size_kb, "deltas": len(pieces), "seconds": seconds,
                             "ratio": seconds / times["lesson_lib"],
                             "growth": seconds / previous[name] if name in previous else None})
            previous = times


def goals(rows: list[dict]) -> list[str]:
    """The targets, each with the figure that meets or misses it."""
    verdicts = []
    for case in GOAL_SHAPES:
        at = [r for r in rows if r["case"] == case and r["size_kb"] == GOAL_SIZE_KB]
        sdk = [r["ratio"] for r in at if r["implementation"] == "anthropic SDK"]
        if sdk:
            mark = "met" if sdk[0] >= GOAL_RATIO else "MISSED"
            verdicts.append(f"{case}: {sdk[0]:.0f}x faster than the anthropic SDK at "
                            f"{GOAL_SIZE_KB} KB (goal {GOAL_RATIO}x): {mark}")
        growth = [r["growth"] for r in rows if r["case"] == case
                  and r["implementation"] == "lesson_lib" and r["growth"] is not None]
        if growth:
            mark = "met" if max(growth) <= GOAL_GROWTH else "MISSED"
            verdicts.append(f"{case}: doubling costs at most {max(growth):.2f}x for lesson_lib "
                            f"(goal {GOAL_GROWTH}x): {mark}")
    return verdicts


def main(quick: bool = False) -> list[dict]:
    rows = run(quick)
    print(f"Partial JSON, value read after every {DELTA}-character delta "
          "(ratio = time / lesson_lib time; growth = time / time at half the size)")
    print(f"{'case':<20}{'size':>7}{'deltas':>8}  {'implementation':<21}{'seconds':>10}"
          f"{'ratio':>9}{'growth':>8}")
    for r in rows:
        growth = f"{r['growth']:.2f}" if r["growth"] is not None else ""
        print(f"{r['case']:<20}{r['size_kb']:>5}KB{r['deltas']:>8}  {r['implementation']:<21}"
              f"{r['seconds']:>10.4f}{r['ratio']:>8.1f}x{growth:>8}")
    for verdict in goals(rows):
        print(verdict)
    plain = [r for r in rows if r["case"] == "plain ASCII string"
             and r["implementation"] == "anthropic SDK"]
    if plain:
        print(f"plain ASCII string (no goal; jiter's best case): {plain[-1]['ratio']:.0f}x "
              f"at {plain[-1]['size_kb']} KB")
    return rows


if __name__ == "__main__":
    cli = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    cli.add_argument("--quick", action="store_true", help="small sizes only (smoke test)")
    main(quick=cli.parse_args().quick)
