"""What the benches share: feeding a body in chunks, timing it, and printing the tables.

Two families of bench use it:

- the decoder benches (``bench_sse``, ``bench_eventstream``): each
  implementation fed the same body in fixed-size reads (`reads`), every
  implementation once per round (`best_of_rounds`), its best CPU time, one
  table line per case with every implementation's time and its ratio to ours
  (`print_decoders`);
- the bytes-to-turn benches (``bench_turn``, ``bench_turn_wires``): a case
  at three sizes, ours and the SDK's side checked against each other, then
  timed in interleaved rounds in CPU time with the garbage collector off
  (`turn_rows`), one row per size with both times, ``SDK/ours`` and what a
  doubling cost each side; `goal_misses` and `doubling_cells` format them.
"""

from __future__ import annotations

import gc
import time
from collections.abc import Callable, Iterator
from typing import Any

from lesson_lib.capture.captures import Capture, from_bytes

# -- the decoder benches ------------------------------------------------------------------


def reads(body: bytes, size: int) -> Iterator[bytes]:
    """`body` in reads of `size` bytes, as a network would hand them over."""
    for i in range(0, len(body), size):
        yield body[i:i + size]


def best_of(fn: Callable[[bytes], int], body: bytes, repeat: int) -> tuple[float, int]:
    """The best CPU time of `repeat` runs of ``fn(body)``, and what the last one returned."""
    times, counts = best_of_rounds({"fn": fn}, body, repeat)
    return times["fn"], counts.pop()


def best_of_rounds(implementations: dict[str, Callable[[bytes], int]], body: bytes,
                   rounds: int) -> tuple[dict[str, float], set[int]]:
    """Each implementation run on `body` once per round, `rounds` times: the best CPU
    time of each, and the set of what they returned (one value when they agree).

    CPU time, not wall time: on a shared machine the wall clock also counts the
    moments another process held the core. Rounds, not one implementation's runs
    in a row: a busy moment weighs on every implementation alike. The garbage
    collector is off while a run is timed (as timeit does).
    """
    best = {name: float("inf") for name in implementations}
    counts: set[int] = set()
    for _ in range(rounds):
        for name, fn in implementations.items():
            gc.collect()
            gc.disable()
            try:
                start = time.process_time()
                counts.add(fn(body))
                best[name] = min(best[name], time.process_time() - start)
            finally:
                gc.enable()
    return best, counts


def print_decoders(rows: list[dict], implementations: int, case_width: int,
                   size_width: int) -> None:
    """One line per case: each implementation's seconds and ratio to ours (`rows` hold
    `implementations` consecutive rows per case, ours first)."""
    for i in range(0, len(rows), implementations):
        group = rows[i:i + implementations]
        cells = "".join(f"{r['seconds']:>11.4f}s ({r['ratio_to_ours']:>6.1f}x)" for r in group)
        print(f"{group[0]['case']:<{case_width}}{group[0]['size']:>{size_width}}  {cells}")


# -- the bytes-to-turn benches ---------------------------------------------------------------

CHUNK = 4096          # the network chunk both sides get the body in
DOUBLING_GOAL = 2.2   # a doubling may cost ours at most this (2 is linear)
BUDGET_S = 4.0        # per case, for our rounds

Times = tuple[float, float]     # (CPU, wall) seconds
Side = Callable[[bytes, str], Callable[[], Any]]


def capture_of(body: bytes, wire: str) -> Capture:
    """`body` as a capture on `wire`, recorded in `CHUNK`-byte network chunks."""
    ends = list(range(CHUNK, len(body), CHUNK))
    return from_bytes(body, name="bench", sidecar={"wire": wire, "chunks": {"ends": ends}})


def once(fn: Callable[[], Any]) -> Times:
    """One run's CPU and wall time, with the garbage collector off (as timeit does)."""
    gc.collect()
    gc.disable()
    try:
        c0, w0 = time.process_time(), time.perf_counter()
        fn()
        return time.process_time() - c0, time.perf_counter() - w0
    finally:
        gc.enable()


def _best(a: Times, b: Times) -> Times:
    return min(a[0], b[0]), min(a[1], b[1])


def interleaved(ours: list[Callable[[], Any]], sdk: list[Callable[[], Any]],
                rounds: int, sdk_rounds: int) -> tuple[list[Times], list[Times]]:
    """The best times of each function over `rounds` rounds, every size once per round
    (the SDK's in the first `sdk_rounds` only: seconds long)."""
    never = (float("inf"), float("inf"))
    best_ours, best_sdk = [never] * len(ours), [never] * len(sdk)
    for r in range(rounds):
        for i, fn in enumerate(ours):
            best_ours[i] = _best(best_ours[i], once(fn))
            if r < sdk_rounds:
                best_sdk[i] = _best(best_sdk[i], once(sdk[i]))
    return best_ours, best_sdk


def turn_rows(bench: str, cases: list[tuple], ours: Side, sdk: Side,
              same: Callable[[str, Any, Any], bool], differ: str, route: Callable[[str], str],
              quick: bool = False) -> list[dict]:
    """Time every case (name, wire, body builder, unit, sizes, quick sizes) at its sizes;
    one row per case and size, with both times, SDK/ours, the route ours took, and
    (from the second size on) what the doubling cost each side.

    ``ours(body, wire)`` and ``sdk(body, wire)`` make each side's run; before any
    timing, ``same(wire, ours_result, sdk_result)`` must hold at every size (else
    `differ` is raised, naming the case).
    """
    rows: list[dict] = []
    for name, wire, build, unit, sizes, quick_sizes in cases:
        sizes = quick_sizes if quick else sizes
        bodies = [build(n) for n in sizes]
        mine = [ours(body, wire) for body in bodies]
        theirs = [sdk(body, wire) for body in bodies]
        t0 = time.process_time()
        for n, run_ours, run_sdk in zip(sizes, mine, theirs, strict=True):
            if not same(wire, run_ours(), run_sdk()):
                raise AssertionError(f"{name} at {n}: {differ}")
        first = time.process_time() - t0    # one run of each: prices a round
        rounds = 2 if quick else max(3, min(9, int(BUDGET_S / max(first, 1e-6))))
        t_ours, t_sdk = interleaved(mine, theirs, rounds, 1 if quick else 2)
        before: dict | None = None
        for n, body, (ours_s, ours_wall), (sdk_s, sdk_wall) in zip(
                sizes, bodies, t_ours, t_sdk, strict=True):
            row = {"bench": bench, "case": name, "wire": wire, "route": route(wire),
                   "size": n, "unit": unit, "bytes": len(body), "rounds": rounds,
                   "ours_s": ours_s, "sdk_s": sdk_s, "ratio": sdk_s / ours_s,
                   "ours_wall_s": ours_wall, "sdk_wall_s": sdk_wall}
            if before is not None:
                row["ours_x2"] = ours_s / before["ours_s"]
                row["sdk_x2"] = sdk_s / before["sdk_s"]
            rows.append(row)
            before = row
    return rows


def doubling_cells(row: dict) -> str:
    """The ``ours x2`` and ``SDK x2`` columns of a row (blank at a case's first size)."""
    if "ours_x2" not in row:
        return f"{'':>8} {'':>7}"
    return f"{row['ours_x2']:>8.2f} {row['sdk_x2']:>7.2f}"


def goal_misses(row: dict, speed_goal: float) -> str:
    """The end of a row's line: which goals it misses (speed, doubling), if any."""
    misses = []
    if row["ratio"] < speed_goal:
        misses.append("speed")
    if row.get("ours_x2", 0) > DOUBLING_GOAL:
        misses.append("doubling")
    return f"  under the goal: {', '.join(misses)}" if misses else ""
