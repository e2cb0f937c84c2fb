"""Shared by the serve and record tests: reading a stream over a real socket, with timing."""

from __future__ import annotations

import time

import httpx2

from lesson_lib.capture.captures import Capture
from lesson_lib.cli.serve.matching import PATHS

MIN_GAP_MS = 5.0   # smaller gaps may merge on the way (the network coalesces writes)


def timed_reads(base: str, cap: Capture, query: str = "speed=1") -> tuple[int, list[tuple[bytes, float]]]:
    """POST for `cap` and return (status, [(read, ms after the request was sent)])."""
    url = f"{base}{PATHS[cap.wire]}?capture={cap.key}&{query}"
    reads: list[tuple[bytes, float]] = []
    with httpx2.Client(timeout=60) as client:
        t0 = time.monotonic()
        with client.stream("POST", url, json={"stream": True}) as response:
            for chunk in response.iter_raw():
                reads.append((chunk, time.monotonic()))
    return response.status_code, [(c, (t - t0) * 1000.0) for c, t in reads]


def read_ends(reads: list[tuple[bytes, float]]) -> list[tuple[int, float]]:
    """(end offset, ms) of each read."""
    out, offset = [], 0
    for chunk, t in reads:
        offset += len(chunk)
        out.append((offset, t))
    return out


def gapped(ends: list[int], times: list[float]) -> list[tuple[int, float]]:
    """The chunk ends followed by a gap of at least MIN_GAP_MS, with that gap."""
    return [(end, b - a) for end, a, b in zip(ends, times, times[1:], strict=False)
            if b - a >= MIN_GAP_MS]
