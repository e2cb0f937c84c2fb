"""Responses captures for retry and resume: a 429 with its hints, and a background resume pair.

`http_429_retry_after` is a requests-per-day refusal whose headers carry
every hint a client can wait on (``retry-after`` and the
``x-ratelimit-reset-*`` durations). `background_resume` builds one uncut
background-mode stream and writes it as two captures: the first request's
stream, cut by a dropped connection in the middle of the text, and the
stream that ``responses.retrieve(id, stream=True, starting_after=N)``
returns, which starts at the event after sequence number N, the last one
that arrived whole.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from .openai_ids import request_id
from .openai_responses_common import BASE, HELPER, NO_COMPLETED, WIRE, ok, request
from .openai_responses_stream import ResponsesStream
from .openai_sidecar import openai_headers, sdk_expectation, write
from .writer import StreamBuilder, _Piece

# What the SDK's stream helper says when a stream does not begin with response.created.
NO_CREATED = "Expected to have received `response.created`"


def http_429_retry_after(root: Path) -> Path:
    """A requests-per-day limit: retry-after in seconds and the reset durations."""
    b = StreamBuilder(seed=113)
    rid = request_id(b.rng)
    error = {"error": {
        "message": "Rate limit reached for gpt-4.1 in organization org-Xq4bT7mRk2LpV9wZcN3sHd8F "
                   "on requests per day (RPD): Limit 10000, Used 10000, Requested 1. Please "
                   "try again in 6m0s. Visit https://platform.openai.com/account/rate-limits "
                   "to learn more.",
        "type": "requests", "param": None, "code": "rate_limit_exceeded"}}
    b.raw(json.dumps(error, indent=4) + "\n", after_ms=96.4)
    headers = {"content-type": "application/json; charset=utf-8", "x-request-id": rid,
               "openai-processing-ms": "18", "openai-version": "2020-10-01",
               "retry-after": "360",
               "x-ratelimit-limit-requests": "10000", "x-ratelimit-remaining-requests": "0",
               "x-ratelimit-reset-requests": "6m0s",
               "x-ratelimit-limit-tokens": "30000000", "x-ratelimit-remaining-tokens": "29999870",
               "x-ratelimit-reset-tokens": "20ms"}
    req = request("gpt-4.1", "Translate this paragraph into Breton: …")
    return write(root, WIRE, "http-429-retry-after", b, request=req,
                 response={"status": 429, "headers": headers},
                 demonstrates="HTTP 429 (requests per day) with retry-after and the "
                              "x-ratelimit-reset-* durations: the hints a backoff honours",
                 based_on="the JSON error document and rate-limit headers OpenAI returns for a "
                          "requests-per-day limit; retry-after as the openai SDK reads it",
                 sdk=sdk_expectation(HELPER, "the SDK raises RateLimitError (status 429); with "
                                     "retries on it would not retry at all, since retry-after "
                                     "(360 s) is over its two-minute maximum",
                                     raises="RateLimitError", error_contains="requests per day",
                                     text=""))


class _BackgroundStream(ResponsesStream):
    """A stream of a background-mode response (``background: true`` in every object)."""

    def response_object(self, status: str, **kwargs: Any) -> dict[str, Any]:
        obj = super().response_object(status, **kwargs)
        obj["background"] = True
        return obj


ANSWER = (
    "Low tide on the Île de Bréhat is the time to walk: the causeway to the Sillon de Talberg "
    "uncovers, and the rock pools below the Paon lighthouse fill with crabs and anemones. "
    "Take the first boat from the Arcouest pier, hire a bike at the jetty (there are no cars "
    "on the island) and ride to the north end before the tide turns. Lunch on moules-frites "
    "at the harbour, then catch the last boat back around six."
)


def _uncut(req: dict[str, Any]) -> ResponsesStream:
    s = _BackgroundStream(114, model="gpt-4.1-2025-04-14", created_at=1768224400, request=req,
                          style="sorted")
    s.start(first_byte_ms=s.pace.first_token(200, 320))
    s.message(ANSWER, after_ms=s.pace.first_token(250, 450), tear=True)
    s.completed(s.usage(31), seconds=6)
    return s


def _split(pieces: list[_Piece]) -> tuple[int, int]:
    """Where the connection dies: (piece index, bytes of it kept), inside a text delta
    about two thirds of the way through (a piece that starts an event)."""
    deltas = [i for i, p in enumerate(pieces)
              if p.data.startswith(b"event: response.output_text.delta\n")]
    k = deltas[2 * len(deltas) // 3]
    return k, len(pieces[k].data) // 2


def _payloads(data: bytes) -> list[dict[str, Any]]:
    """The JSON payloads of whole events in `data` (one ``data:`` line each)."""
    return [json.loads(line[6:]) for line in data.decode("utf-8").splitlines()
            if line.startswith("data: ")]


def background_resume(root: Path) -> list[Path]:
    """The background stream, cut mid-text, and the stream resumed after the last event."""
    req1 = request("gpt-4.1", "Plan me a day on the Île de Bréhat.", background=True, store=True)
    s = _uncut(req1)
    pieces = s.builder.pieces
    k, keep = _split(pieces)
    arrived = _payloads(b"".join(p.data for p in pieces[:k]))
    last_seq = arrived[-1]["sequence_number"]
    text_sent = "".join(p["delta"] for p in arrived if p["type"] == "response.output_text.delta")

    first = StreamBuilder(seed=115)
    first.pieces = pieces[:k] + [_Piece(pieces[k].data[:keep], pieces[k].at_ms)]
    resumed = StreamBuilder(seed=116)
    latency = 184.0   # the GET's time to first byte, from its own request
    resumed.pieces = [_Piece(p.data, round(p.at_ms - pieces[k].at_ms + latency, 1))
                      for p in pieces[k:]]

    first_path = write(
        root, WIRE, "background-cut", first, request=req1, response=ok(s),
        demonstrates="a background-mode stream cut mid-text by a dropped connection; its last "
                     f"whole event has sequence_number {last_seq}",
        based_on=BASE + "; background: true in every Response object; the connection dies "
                 "inside an output_text.delta, which is lost",
        sdk=sdk_expectation(HELPER, "the helper hands out the deltas that arrived, then "
                            "get_final_response() raises: no response.completed came",
                            raises="RuntimeError", error_contains=NO_COMPLETED, text=text_sent))
    query = {"stream": "true", "starting_after": last_seq}
    req2 = {"method": "GET", "path": f"/v1/responses/{s.id}", "query": query,
            "response_id": s.id, "starting_after": last_seq, "stream": True,
            "sdk_call": f"client.responses.retrieve({s.id!r}, stream=True, "
                        f"starting_after={last_seq})"}
    headers = openai_headers(s.rng, processing_ms=latency * 0.8)
    resumed_path = write(
        root, WIRE, "background-resumed", resumed, request=req2,
        response={"status": 200, "headers": headers},
        demonstrates=f"the same response resumed after sequence_number {last_seq}: the stream "
                     "begins mid-text, with the lost delta, and runs to response.completed",
        based_on=BASE + "; what GET /v1/responses/{id}?stream=true&starting_after=N returns "
                 "(the openai SDK's responses.retrieve), cut from the same uncut stream as "
                 "background-cut",
        sdk=sdk_expectation(HELPER, "the stream helper cannot take it: it raises before the "
                            "first delta, since the stream does not begin with "
                            "response.created. The SDK's own resume, responses.stream("
                            "response_id=..., starting_after=N), re-reads the stream from the "
                            "start (it sends no starting_after) and drops events up to N on "
                            "the client; responses.retrieve(id, stream=True, starting_after=N) "
                            "is the raw resume, events without accumulation",
                            raises="RuntimeError", error_contains=NO_CREATED, text=""))
    return [first_path, resumed_path]
