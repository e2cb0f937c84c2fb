"""boto3 in front of a Bedrock capture, fully offline: the official SDK's route.

A ``bedrock-runtime`` client with fake credentials is given a ``before-send``
hook that answers the request with the capture's bytes, in its recorded
network chunks, before anything reaches a socket. boto3's
``converse_stream`` / ``invoke_model_with_response_stream`` then read them
exactly as they would live: botocore's own event-stream parser frames them,
and its service model turns each frame into a dict (``{"contentBlockDelta":
{...}}``, ``{"chunk": {"bytes": b"..."}}``); an exception frame raises
``EventStreamError`` while iterating.

What the SDK cannot see, and this course's route can: the ``p`` padding
and any field its service model does not list are dropped (so a new field
is invisible until botocore updates), a frame's byte offsets, and a stream
cut inside a frame, which simply ends the iteration with no error (a
truncated stream looks finished). boto3 assembles no final object either.
"""

from __future__ import annotations

import base64
import json
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import urlencode

from .captures import Capture

# Named here, not imported: this module sits with `replay`, before the stations it names.
CONTENT_TYPE = "application/vnd.amazon.eventstream"
CONVERSE, INVOKE = "aws-bedrock-converse", "aws-bedrock-invoke"

REGION = "us-east-1"
_MODEL = "anthropic.claude-sonnet-4-5-20250929-v1:0"


class _Body:
    """The capture's chunks as the raw body botocore streams from (``stream()``)."""

    def __init__(self, chunks: list[bytes]) -> None:
        self._chunks = chunks

    def stream(self, *args: Any, **kwargs: Any) -> Iterator[bytes]:
        yield from self._chunks

    def close(self) -> None:
        pass


def client(capture: Capture, chunk_size: int | None = None):
    """A ``bedrock-runtime`` client (fake credentials) whose every answer is `capture`."""
    import boto3
    from botocore.awsrequest import AWSResponse

    chunks = [c for c, _ in capture.chunks(chunk_size)]
    bedrock = boto3.client("bedrock-runtime", region_name=REGION,
                           aws_access_key_id="offline-replay",
                           aws_secret_access_key="offline-replay")

    def answer(request: Any, **_: Any) -> AWSResponse:
        headers = {"content-type": CONTENT_TYPE if capture.status < 300 else
                   "application/json"}
        return AWSResponse(request.url, capture.status, headers, _Body(chunks))

    bedrock.meta.events.register("before-send.bedrock-runtime", answer)
    return bedrock


def served_client(base_url: str, capture: str | None = None, **query: str):
    """An unmodified ``bedrock-runtime`` client (fake credentials) pointed at ``lesson-lib
    serve`` with ``endpoint_url``; `capture` names the capture to answer with (sent as the
    ``capture`` header), `query` goes on the URL (``speed``, ``fault``)."""
    import boto3

    bedrock = boto3.client("bedrock-runtime", region_name=REGION, endpoint_url=base_url,
                           aws_access_key_id="offline-replay",
                           aws_secret_access_key="offline-replay")

    def name_it(request: Any, **_: Any) -> None:
        if capture:
            request.headers["capture"] = capture
        if query:
            request.url += ("&" if "?" in request.url else "?") + urlencode(query)

    bedrock.meta.events.register("before-sign.bedrock-runtime", name_it)
    return bedrock


@dataclass
class BotoOutcome:
    """What boto3 yielded for a capture: its events in order, and what it raised."""

    events: list[dict[str, Any]] = field(default_factory=list)
    error: BaseException | None = None

    @property
    def raised(self) -> str | None:
        return type(self.error).__name__ if self.error is not None else None


def boto3_events(capture: Capture, chunk_size: int | None = None,
                 bedrock: Any = None) -> Iterator[dict[str, Any]]:
    """boto3's events for the capture, as its own call for the wire yields them (an
    exception frame raises ``EventStreamError`` from the iteration). `bedrock` replaces
    the offline client."""
    bedrock = bedrock or client(capture, chunk_size)
    request = capture.request if isinstance(capture.request, dict) else {}
    model = request.get("modelId") or _MODEL
    if capture.wire == CONVERSE:
        response = bedrock.converse_stream(
            modelId=model, messages=request.get("messages") or [
                {"role": "user", "content": [{"text": "Hi"}]}])
        yield from response["stream"]
    elif capture.wire == INVOKE:
        body = request.get("body") or {"anthropic_version": "bedrock-2023-05-31",
                                       "max_tokens": 1024, "messages": []}
        response = bedrock.invoke_model_with_response_stream(modelId=model,
                                                             body=json.dumps(body))
        yield from response["body"]
    else:
        raise ValueError(f"{capture.key}: not a Bedrock wire, so not a boto3 call")


def run_boto3(capture: Capture, chunk_size: int | None = None) -> BotoOutcome:
    """Stream the capture through boto3's own call for its wire and record the outcome."""
    out = BotoOutcome()
    try:
        for event in boto3_events(capture, chunk_size):
            out.events.append(event)
    except Exception as exc:  # the outcome *is* the exception: recorded, not hidden
        out.error = exc
    return out


def text_of_event(event: dict[str, Any]) -> str:
    """The answer text a boto3 event adds (a text delta's text), else ""."""
    kind, payload = as_payload(event)
    delta = payload.get("delta") if isinstance(payload, dict) else None
    if not isinstance(delta, dict):
        return ""
    text = delta.get("text")
    if kind == "contentBlockDelta" or delta.get("type") == "text_delta":
        return text if isinstance(text, str) else ""
    return ""


def as_payload(event: dict[str, Any]) -> tuple[str, Any]:
    """A boto3 event as (event type, payload): an Invoke ``chunk`` as its inner
    Anthropic event (its ``bytes`` come already base64-decoded)."""
    (name, payload), = event.items()
    if name == "chunk" and isinstance(payload, dict) and isinstance(payload.get("bytes"), bytes):
        inner = json.loads(payload["bytes"])
        return inner.get("type", name), inner
    return name, payload


def bytes_field(value: bytes) -> str:
    """A blob field as it stands in the JSON payload (base64)."""
    return base64.b64encode(value).decode("ascii")


def as_wire_payload(event: dict[str, Any]) -> tuple[str, Any, str]:
    """A boto3 event as the wire sent it: (event type, payload, its JSON text). boto3 reads
    a blob field (a reasoning block's ``redactedContent``) as bytes; on the wire it is
    base64 text, and is put back as that."""
    kind, payload = as_payload(event)
    blobs: list[bytes] = []

    def blob(value: Any) -> str:
        if not isinstance(value, bytes):
            raise TypeError(f"{type(value).__name__} in a boto3 event is not JSON")
        blobs.append(value)
        return bytes_field(value)

    data = json.dumps(payload, ensure_ascii=False, default=blob)
    return kind, (json.loads(data) if blobs else payload), data
