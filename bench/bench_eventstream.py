"""Benchmark: our event-stream decoder against botocore's parser (the one boto3 uses).

Two inputs, fed in 1 KB reads (the size botocore reads a response body in):
10 MB of small frames (ConverseStream text deltas, about 200 bytes each) and
one large frame (a 4 MB payload, then 8 MB to show growth). A ratio above 1
means botocore is slower than ours. Both must yield the same frames.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator

from botocore.eventstream import EventStreamBuffer
from timing import best_of, print_decoders, reads

from lesson_lib.sse.eventstream import EventStreamDecoder, encode_frame

CHUNK = 1024
HEADERS = {":event-type": "contentBlockDelta", ":content-type": "application/json",
           ":message-type": "event"}


def small_frames(total: int) -> bytes:
    """About `total` bytes of ConverseStream text-delta frames."""
    one = encode_frame(HEADERS, json.dumps({"contentBlockIndex": 0, "delta": {"text": "hi"},
                                            "p": "abcdefghijklmnopqrstuvwxyz"}).encode())
    return one * (total // len(one))


def one_large_frame(size: int) -> bytes:
    return encode_frame(HEADERS, b'{"delta":{"text":"' + b"x" * size + b'"}}')


def chunks(body: bytes) -> Iterator[bytes]:
    return reads(body, CHUNK)


def ours(body: bytes) -> int:
    decoder = EventStreamDecoder()
    count = sum(len(decoder.feed(chunk)) for chunk in chunks(body))
    return count + len(decoder.finish())


def botocore_parser(body: bytes) -> int:
    buffer = EventStreamBuffer()
    count = 0
    for chunk in chunks(body):
        buffer.add_data(chunk)
        count += sum(1 for _ in buffer)
    return count


IMPLEMENTATIONS: dict[str, Callable[[bytes], int]] = {
    "lesson_lib": ours, "botocore": botocore_parser}


def run(quick: bool = False) -> list[dict]:
    """Time both decoders on every input; rows carry seconds and the ratio to ours."""
    scale = 16 if quick else 1
    cases = [("small frames", f"{10 // scale or 1} MB", small_frames(10_000_000 // scale)),
             ("one large frame", f"{4 // scale or 1} MB", one_large_frame(4_000_000 // scale)),
             ("one large frame", f"{8 // scale or 1} MB", one_large_frame(8_000_000 // scale))]
    rows = []
    for case, size, body in cases:
        times, counts = {}, set()
        for name, fn in IMPLEMENTATIONS.items():
            times[name], count = best_of(fn, body, 1 if quick else 3)
            counts.add(count)
        assert len(counts) == 1, f"decoders disagree on {case}: {counts}"
        for name, seconds in times.items():
            rows.append({"bench": "eventstream", "case": case, "size": size, "impl": name,
                         "seconds": seconds, "ratio_to_ours": seconds / times["lesson_lib"]})
    return rows


def main(quick: bool = False) -> list[dict]:
    rows = run(quick)
    print(f"Event-stream decoding, {CHUNK}-byte reads (ratio = time / lesson_lib time)")
    print(f"{'case':<18}{'size':>7}  " + "".join(f"{n:>24}" for n in IMPLEMENTATIONS))
    print_decoders(rows, len(IMPLEMENTATIONS), 18, 7)
    return rows


if __name__ == "__main__":
    main()
