"""A refused request, as the raw route reports it, for the SDK routes that read a raw
response through their own transport (google-genai's, boto3's)."""

from __future__ import annotations

from types import SimpleNamespace
from typing import Any


class Refused(Exception):
    """A request the server refused, as the raw route reports it: `status_code`, and
    `response` with the body's `content` and the `headers`."""

    def __init__(self, status: int, headers: dict[str, str], content: bytes) -> None:
        super().__init__(f"HTTP {status}")
        self.status_code = status
        self.response = SimpleNamespace(content=content, headers=headers)


def refusal(tee: Any) -> Refused | None:
    """The refusal an SDK's error stands for when the response the transport noted (`tee`:
    its `status`, `headers` and `take()`) has an error status, with the body it kept; None
    when no response came or it was not an error (the SDK's own error goes on)."""
    if not tee.status or tee.status < 300:
        return None
    return Refused(tee.status, tee.headers, b"".join(tee.take()))
