"""The live loop's cost, against reading the raw socket with httpx alone.

Both sides read the same body from the course's server on 127.0.0.1 (speed
``instant``), one request each, interleaved, best of several rounds; the
server's own time is in both, so the ratio understates what the loop adds,
and the microseconds the loop adds per delta are printed too (the server sends
the body in few large chunks at speed ``instant``, so per chunk says little). Ours is
`lesson_lib.live.LiveTurn`: every chunk through `TurnStream` and the reducer.

    python bench/bench_live.py [--quick]
"""

from __future__ import annotations

import argparse
import asyncio
import tempfile
import time
from pathlib import Path

import httpx
from bench_accumulate import anthropic_text

from lesson_lib.capture.capture_writer import write_capture
from lesson_lib.cli.serve import serving
from lesson_lib.live import LiveTurn

CHUNK = 1024
REQUEST = {"model": "claude-bench", "max_tokens": 64000,
           "messages": [{"role": "user", "content": "Write a long answer."}]}
SIZES, QUICK = (8_000, 16_000), (1_000, 2_000)
ROUNDS = 5


async def _raw(url: str) -> int:
    chunks = 0
    async with httpx.AsyncClient(timeout=None) as client:
        async with client.stream("POST", url + "/v1/messages", json=REQUEST) as response:
            async for _ in response.aiter_raw():
                chunks += 1
    return chunks


async def _ours(url: str) -> str:
    return (await LiveTurn(url, "anthropic-messages", REQUEST).run()).outcome or ""


def _timed(coro_fn, url: str) -> tuple[float, object]:
    start = time.perf_counter()
    value = asyncio.run(coro_fn(url))
    return time.perf_counter() - start, value


def run(quick: bool = False) -> list[dict]:
    """One row per size: both sides' best wall time, the ratio and the cost per chunk."""
    rows = []
    for size in (QUICK if quick else SIZES):
        body = anthropic_text(size)
        with tempfile.TemporaryDirectory() as tmp:
            ends = list(range(CHUNK, len(body), CHUNK)) + [len(body)]
            write_capture(Path(tmp) / "anthropic-messages", "bench-live", body, {
                "wire": "anthropic-messages", "demonstrates": "a long answer for the bench",
                "request": REQUEST, "chunks": {"ends": ends, "t_ms": [0.0] * len(ends)}})
            with serving(speed="instant", root=Path(tmp), capture="bench-live") as url:
                raw, ours, chunks, outcome = [], [], 0, ""
                for _ in range(ROUNDS if not quick else 2):
                    t, chunks = _timed(_raw, url)
                    raw.append(t)
                    t, outcome = _timed(_ours, url)
                    ours.append(t)
        assert outcome == "completed", outcome
        best_raw, best_ours = min(raw), min(ours)
        rows.append({"case": "live loop vs raw httpx", "size": size, "unit": "deltas",
                     "bytes": len(body), "chunks": chunks, "raw_s": best_raw,
                     "ours_s": best_ours, "ratio": best_ours / best_raw,
                     "us_per_delta": (best_ours - best_raw) / size * 1e6})
    for a, b in zip(rows, rows[1:], strict=False):
        b["ours_x2"] = b["ours_s"] / a["ours_s"]
    return rows


def main(quick: bool = False) -> list[dict]:
    """Print the table (as ``bench/run.py`` expects); return the rows."""
    rows = run(quick=quick)
    print("The live loop (TurnStream + reducer per chunk) against reading the raw socket")
    print("(wall time, best of interleaved rounds; the local server's time is in both)")
    print(f"{'size':>14} {'chunks':>7} {'raw ms':>8} {'ours ms':>8} {'ours/raw':>9} "
          f"{'µs/delta':>9} {'ours x2':>8}")
    for r in rows:
        x2 = f"{r['ours_x2']:>8.2f}" if "ours_x2" in r else f"{'':>8}"
        print(f"{r['size']:>8,} {r['unit']} {r['chunks']:>7} {r['raw_s'] * 1e3:>8.1f} "
              f"{r['ours_s'] * 1e3:>8.1f} {r['ratio']:>8.2f}x {r['us_per_delta']:>9.1f} {x2}")
    return rows


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true")
    main(parser.parse_args().quick)
