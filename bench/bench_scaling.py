"""Benchmark: three jobs that must stay linear, at two sizes, and what doubling costs.

- ``history``: a `History` over an Anthropic stream of N text deltas, jumped
  to the last event and then to the end (what a player's first jump to the
  end does): a checkpoint every 64 events, each sharing the fragment logs;
- ``history tool``: the same over an Anthropic stream whose one tool_use block
  takes a file-writing input of N KB (a long string argument) in 20-character
  ``input_json_delta`` fragments: each checkpoint copies the forming call's
  parser mid-string;
- ``history records``: the same with an input of N KB that is one long array
  of small objects (``{"rows": [...]}``): each checkpoint copies the parser
  while that array is open;
- ``check``: `validate` (``lesson-lib check``) of a capture of N text deltas,
  which replays it through the Anthropic SDK and compares the text;
- ``settled``: the settled paths of a tool call whose arguments nest N
  arrays deep (``[`` N times, then ``]`` N times): `len`, and membership of
  the deepest path, on the call's view;
- ``gemini deep``: `accumulate` over a Gemini stream whose one function call
  streams its arguments as ``partialArgs`` with one ``jsonPath`` N levels
  deep (``$.a.a…``; 512 is the deepest the course reads, `MAX_DEPTH`), then
  the call's settled paths (`len`, and the deepest): each open container
  keeps a link to its parent, not its whole path, so N levels cost N, not N²;
- ``gemini wide``: the same with N rows side by side
  (``$.rows[i].name`` in two pieces, then ``$.rows[i].qty``), 50 entries a
  record.

Time is the best of five runs (``time.perf_counter``, garbage collection
paused as ``timeit`` does; a job of a few ms is run many times and its mean
taken), the two sizes taking turns so that a busy moment on a shared
machine weighs on both; peak memory is what `tracemalloc` saw at most
during one more run. ``x2`` is the figure at the larger size over the one
at the smaller (the sizes double): 2 is linear, 4 quadratic; the goal is at
most 2.2.

    python bench/bench_scaling.py [--quick] [--only "gemini deep,gemini wide"]
"""

from __future__ import annotations

import argparse
import gc
import json
import time
import tracemalloc
from collections.abc import Callable

from lesson_lib.accumulate import accumulate
from lesson_lib.accumulate.history import History
from lesson_lib.accumulate.path_arguments import PathArguments
from lesson_lib.capture.captures import from_bytes
from lesson_lib.cli.validate import validate
from lesson_lib.tool_calls import ToolCall

SIZES = {"history": (100_000, 200_000), "history tool": (150_000, 300_000),
         "history records": (150_000, 300_000), "check": (10_000, 20_000),
         "settled": (10_000, 20_000), "gemini deep": (256, 512),
         "gemini wide": (10_000, 20_000)}
QUICK_SIZES = {"history": (2_000, 4_000), "history tool": (8_000, 16_000),
               "history records": (8_000, 16_000), "check": (500, 1_000),
               "settled": (500, 1_000), "gemini deep": (256, 512),
               "gemini wide": (500, 1_000)}
TOOL_DELTA = 20
PATHS_PER_RECORD = 50
GOAL = 2.2


def text_stream(n: int):
    """An Anthropic capture of `n` text deltas, ended properly."""
    head = [{"type": "message_start", "message": {
        "id": "msg_1", "type": "message", "role": "assistant", "model": "m", "content": [],
        "stop_reason": None, "stop_sequence": None,
        "usage": {"input_tokens": 1, "output_tokens": 1}}},
        {"type": "content_block_start", "index": 0,
         "content_block": {"type": "text", "text": ""}}]
    tail = [{"type": "content_block_stop", "index": 0},
            {"type": "message_delta", "delta": {"stop_reason": "end_turn", "stop_sequence": None},
             "usage": {"output_tokens": n}},
            {"type": "message_stop"}]
    parts = [f"event: {p['type']}\ndata: {json.dumps(p)}\n\n" for p in head]
    parts += ['event: content_block_delta\ndata: {"type": "content_block_delta", "index": 0, '
              f'"delta": {{"type": "text_delta", "text": "w{i} "}}}}\n\n' for i in range(n)]
    parts += [f"event: {p['type']}\ndata: {json.dumps(p)}\n\n" for p in tail]
    return from_bytes("".join(parts).encode(), name=f"text-{n}",
                      sidecar={"wire": "anthropic-messages"})


def tool_stream(arguments: str):
    """An Anthropic capture of one tool_use block whose input is `arguments`, in
    `TOOL_DELTA`-character fragments, ended properly."""
    head = [{"type": "message_start", "message": {
        "id": "msg_1", "type": "message", "role": "assistant", "model": "m", "content": [],
        "stop_reason": None, "stop_sequence": None,
        "usage": {"input_tokens": 1, "output_tokens": 1}}},
        {"type": "content_block_start", "index": 0, "content_block": {
            "type": "tool_use", "id": "toolu_1", "name": "write_file", "input": {}}}]
    head += [{"type": "content_block_delta", "index": 0,
              "delta": {"type": "input_json_delta",
                        "partial_json": arguments[i:i + TOOL_DELTA]}}
             for i in range(0, len(arguments), TOOL_DELTA)]
    head += [{"type": "content_block_stop", "index": 0},
             {"type": "message_delta", "delta": {"stop_reason": "tool_use",
                                                 "stop_sequence": None},
              "usage": {"output_tokens": 1}},
             {"type": "message_stop"}]
    body = "".join(f"event: {p['type']}\ndata: {json.dumps(p)}\n\n" for p in head)
    return from_bytes(body.encode(), name=f"tool-{len(arguments)}",
                      sidecar={"wire": "anthropic-messages"})


def file_text(size: int) -> str:
    """``{"path": ..., "content": ...}``: a file's text of about `size` characters of JSON."""
    lines = ['def greet(name):', '    """Say hello."""', '    return f"Hello, {name}!"', "",
             "# naïve café — résumé", '\tprint("tab\\tseparated", 42)']
    text, length, i = [], 40, 0
    while length < size:
        line = lines[i % len(lines)] + "\n"
        text.append(line)
        length += len(json.dumps(line)) - 2
        i += 1
    return json.dumps({"path": "notes/example.py", "content": "".join(text)})


def records(size: int) -> str:
    """``{"rows": [...]}`` of small objects, about `size` characters of JSON."""
    rows, length = [], 12
    while length < size:
        row = {"id": len(rows), "sku": f"SKU-{len(rows) * 7919 % 10 ** 6:06d}",
               "name": ["kettle", "lamp", "café table"][len(rows) % 3], "in_stock": True}
        rows.append(row)
        length += len(json.dumps(row)) + 2
    return json.dumps({"rows": rows})


def _history_of(capture) -> Callable[[], object]:
    def job():
        history = History(capture)
        history.at(len(history))
        return history.end()
    return job


def history_tool_job(n: int) -> Callable[[], object]:
    return _history_of(tool_stream(file_text(n)))


def history_records_job(n: int) -> Callable[[], object]:
    return _history_of(tool_stream(records(n)))


def history_job(n: int) -> Callable[[], object]:
    capture = text_stream(n)

    def job():
        history = History(capture)
        history.at(len(history))
        return history.end()
    return job


def check_job(n: int) -> Callable[[], object]:
    capture = text_stream(n)
    return lambda: validate(capture)


def settled_job(n: int) -> Callable[[], object]:
    call = ToolCall("f", "c")
    for fragment in ("[" * n, "]" * n):
        call.feed(fragment)
    call.end()
    deepest = (0,) * (n - 1)

    def job():
        settled = call.view().settled
        assert deepest in settled and len(settled) == n
        return settled
    return job


def gemini_paths_stream(entries: list[dict]):
    """A Gemini capture of one function call whose arguments are these ``partialArgs``
    entries, `PATHS_PER_RECORD` a record, ended with STOP."""
    def record(call: dict, finish: str | None = None) -> str:
        candidate: dict = {"content": {"parts": [{"functionCall": call}], "role": "model"}}
        if finish:
            candidate["finishReason"] = finish
        return "data: " + json.dumps({"candidates": [candidate]}) + "\r\n\r\n"

    body = [record({"name": "f", "willContinue": True})]
    body += [record({"partialArgs": entries[i:i + PATHS_PER_RECORD], "willContinue": True})
             for i in range(0, len(entries), PATHS_PER_RECORD)]
    body.append(record({}, "STOP"))
    return from_bytes("".join(body).encode(), name=f"gemini-paths-{len(entries)}",
                      sidecar={"wire": "google-gemini"})


def _gemini_paths_job(entries: list[dict], paths: int, deepest: tuple) -> Callable[[], object]:
    capture = gemini_paths_stream(entries)

    def job():
        result = accumulate(capture)
        assert not [d for d in result.diagnostics if d.severity == "error"]
        args = PathArguments()         # the vendor's settled paths, as the accumulator keeps
        for entry in entries:
            args.add(entry)
        args.close()
        settled = args.settled
        assert len(settled) == paths and settled[0] == deepest
        return result
    return job


def gemini_deep_job(n: int) -> Callable[[], object]:
    steps = ("a",) * n
    return _gemini_paths_job([{"jsonPath": "$" + ".a" * n, "numberValue": 1}], n + 1, steps)


def gemini_wide_job(n: int) -> Callable[[], object]:
    entries: list[dict] = []
    for i in range(n):
        entries += [{"jsonPath": f"$.rows[{i}].name", "stringValue": f"item {i} ",
                     "willContinue": True},
                    {"jsonPath": f"$.rows[{i}].name", "stringValue": "café"},
                    {"jsonPath": f"$.rows[{i}].qty", "numberValue": i}]
    return _gemini_paths_job(entries, 3 * n + 2, ("rows", 0, "name"))


JOBS = {"history": history_job, "history tool": history_tool_job,
        "history records": history_records_job, "check": check_job, "settled": settled_job,
        "gemini deep": gemini_deep_job, "gemini wide": gemini_wide_job}


def _calls(job: Callable[[], object]) -> int:
    """How many calls of `job` fill about 0.5 s (at least one)."""
    start = time.perf_counter()
    job()
    return max(1, int(0.5 / max(time.perf_counter() - start, 1e-6)))


def _timed(job: Callable[[], object], calls: int) -> float:
    """The mean time of `calls` calls, garbage collection paused as timeit does."""
    gc.collect()
    gc.disable()
    try:
        start = time.perf_counter()
        for _ in range(calls):
            job()
        return (time.perf_counter() - start) / calls
    finally:
        gc.enable()


def _peak(job: Callable[[], object]) -> int:
    """The peak of traced memory during one call, in bytes (from a collected heap)."""
    gc.collect()
    tracemalloc.start()
    try:
        job()
        return tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()


def measure(jobs: tuple[Callable[[], object], Callable[[], object]], repeat: int
            ) -> list[tuple[float, int]]:
    """For the job at each size: its best time in seconds (a quick job: the mean of
    as many calls as fill 0.5 s) and its peak of traced memory in bytes.

    The two sizes take turns, `repeat` rounds, so that a busy moment on a shared
    machine weighs on both alike instead of on one size's whole measurement.
    """
    calls = [_calls(job) for job in jobs]
    best = [float("inf")] * len(jobs)
    for _ in range(repeat):
        for i, job in enumerate(jobs):
            best[i] = min(best[i], _timed(job, calls[i]))
    return [(seconds, _peak(job)) for seconds, job in zip(best, jobs, strict=True)]


def run(quick: bool = False, only: tuple[str, ...] = ()) -> list[dict]:
    rows = []
    for name, make in JOBS.items():
        if only and name not in only:
            continue
        small, large = (QUICK_SIZES if quick else SIZES)[name]
        (t1, m1), (t2, m2) = measure((make(small), make(large)), 1 if quick else 5)
        rows.append({"job": name, "sizes": [small, large], "seconds": [t1, t2],
                     "peak_mb": [m1 / 2**20, m2 / 2**20], "time_x2": t2 / t1,
                     "memory_x2": m2 / m1, "goal_x2": GOAL})
    return rows


def main(quick: bool = False, only: tuple[str, ...] = ()) -> list[dict]:
    rows = run(quick, only)
    print(f"{'job':<16} {'sizes':>16} {'seconds':>17} {'peak MB':>17} {'time x2':>8} "
          f"{'mem x2':>7}")
    for r in rows:
        sizes = "{:,} / {:,}".format(*r["sizes"])
        secs = "{:.3f} / {:.3f}".format(*r["seconds"])
        mem = "{:.1f} / {:.1f}".format(*r["peak_mb"])
        flag = "" if max(r["time_x2"], r["memory_x2"]) <= GOAL else "  over the goal"
        print(f"{r['job']:<16} {sizes:>16} {secs:>17} {mem:>17} {r['time_x2']:>8.2f} "
              f"{r['memory_x2']:>7.2f}{flag}")
    return rows


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true")
    parser.add_argument("--only", default="", help="jobs to run, by name, comma-separated")
    args = parser.parse_args()
    main(args.quick, tuple(name for name in args.only.split(",") if name))
