"""Benchmark: our SSE decoder against the decoders inside the anthropic and openai SDKs.

Two inputs, each at two sizes to show growth, all fed in 64-byte chunks:
one huge event (1 MB and 2 MB of data) and many small events (50k and
100k), the small ones also with CRLF line ends (50k and 100k) and with
lone CRs (50k), which the standard allows as well. Ratios are printed side by
side from one run; a ratio above 1 means the SDK decoder is slower than ours.
Each case takes every decoder's best CPU time over interleaved rounds (each
decoder once per round: `timing.best_of_rounds`), so that a noisy moment on a
shared machine weighs on every decoder alike.

One more row prices the next station: parsing the payloads of 50k small
events (`wire_events.parse_all`, strict JSON) against a bare `json.loads`
of each one.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator

from anthropic._streaming import SSEDecoder as AnthropicSSEDecoder
from openai._streaming import SSEDecoder as OpenAISSEDecoder
from timing import best_of, best_of_rounds, print_decoders, reads

from lesson_lib.sse.decoder import SSEDecoder, decode
from lesson_lib.wires.wire_events import parse_all

CHUNK = 64


def one_huge_event(size: int) -> bytes:
    return b"event: blob\ndata: " + b"x" * size + b"\n\n"


def many_small_events(count: int) -> bytes:
    one = (b'event: content_block_delta\ndata: {"type":"content_block_delta","index":0,'
           b'"delta":{"type":"text_delta","text":"hi"}}\n\n')
    return one * count


def with_line_ends(body: bytes, ends: bytes) -> bytes:
    """The same stream with each LF replaced by `ends` (CRLF or a lone CR)."""
    return body.replace(b"\n", ends)


def chunks(body: bytes) -> Iterator[bytes]:
    return reads(body, CHUNK)


def ours(body: bytes) -> int:
    decoder = SSEDecoder()
    count = 0
    for chunk in chunks(body):
        count += len(decoder.feed(chunk))
    return count + len(decoder.finish())


def anthropic_sdk(body: bytes) -> int:
    return sum(1 for _ in AnthropicSSEDecoder().iter_bytes(chunks(body)))


def openai_sdk(body: bytes) -> int:
    return sum(1 for _ in OpenAISSEDecoder().iter_bytes(chunks(body)))


IMPLEMENTATIONS: dict[str, Callable[[bytes], int]] = {
    "lesson_lib": ours, "anthropic SDK": anthropic_sdk, "openai SDK": openai_sdk}


def payload_rows(quick: bool = False) -> list[dict]:
    """Parsing 50k payloads: the strict station against a bare `json.loads` loop."""
    count = 50_000 // (16 if quick else 1)
    events, _ = decode([many_small_events(count)])

    def bare() -> int:
        return len([json.loads(e.data) for e in events])

    def station() -> int:
        return len(parse_all(events))

    times = {}
    for name, fn in (("json.loads", bare), ("parse_all", station)):
        times[name], n = best_of(lambda _body, fn=fn: fn(), b"", 1 if quick else 3)
        assert n == count
    return [{"bench": "sse", "case": "payload parsing", "size": f"{count}", "impl": name,
             "seconds": seconds, "ratio_to_ours": seconds / times["parse_all"]}
            for name, seconds in times.items()]


def run(quick: bool = False) -> list[dict]:
    """Time every decoder on every input; rows carry seconds and the ratio to ours."""
    scale = 16 if quick else 1
    cases = [("one huge event", f"{1 // scale or 1} MB", one_huge_event(1_000_000 // scale)),
             ("one huge event", f"{2 // scale or 1} MB", one_huge_event(2_000_000 // scale)),
             ("many small events", f"{50_000 // scale}", many_small_events(50_000 // scale)),
             ("many small events", f"{100_000 // scale}", many_small_events(100_000 // scale)),
             ("small events CRLF", f"{50_000 // scale}",
              with_line_ends(many_small_events(50_000 // scale), b"\r\n")),
             ("small events CRLF", f"{100_000 // scale}",
              with_line_ends(many_small_events(100_000 // scale), b"\r\n")),
             ("small events CR", f"{50_000 // scale}",
              with_line_ends(many_small_events(50_000 // scale), b"\r"))]
    rows = []
    for case, size, body in cases:
        rounds = 1 if quick else 7 if "small events" in case else 3
        times, counts = best_of_rounds(IMPLEMENTATIONS, body, rounds)
        assert len(counts) == 1, f"decoders disagree on {case}: {counts}"
        for name, seconds in times.items():
            rows.append({"bench": "sse", "case": case, "size": size, "impl": name,
                         "seconds": seconds, "ratio_to_ours": seconds / times["lesson_lib"]})
    return rows + payload_rows(quick)


def main(quick: bool = False) -> list[dict]:
    rows = run(quick)
    print("SSE decoding, 64-byte chunks (ratio = time / lesson_lib time)")
    print(f"{'case':<20}{'size':>8}  " + "".join(f"{n:>24}" for n in IMPLEMENTATIONS))
    decoding = [r for r in rows if r["case"] != "payload parsing"]
    print_decoders(decoding, len(IMPLEMENTATIONS), 20, 8)
    print("payload parsing (ratio = time / parse_all time)")
    for r in rows:
        if r["case"] == "payload parsing":
            print(f"{r['impl']:<20}{r['size']:>8}  {r['seconds']:>11.4f}s ({r['ratio_to_ours']:>6.2f}x)")
    return rows


if __name__ == "__main__":
    main()
