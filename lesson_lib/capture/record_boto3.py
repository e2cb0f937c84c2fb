"""`lesson-lib record` on Bedrock: boto3's ``bedrock-runtime`` client, read as a raw streaming
response.

boto3 has no raw response: it parses the event stream into dicts as it
reads. So botocore's own HTTP layer is asked for the body: a ``before-parse``
hook (it sees the response before the parser does) notes the status and the
headers and wraps the raw body so that each piece is kept as the parser takes
it (`_Tee`); the pieces are handed on as boto3's events arrive, so each
read's end and time are the ones boto3 saw. A refused request's body is the
error's JSON, kept whole; an exception frame in the stream (a throttle after
HTTP 200) ends boto3's iteration, and the rest of the body is still read and
kept.

The credentials are boto3's own: a Bedrock API key (``AWS_BEARER_TOKEN_BEDROCK``,
sent as a bearer token, over HTTPS only: a plain-HTTP server such as
``lesson-lib serve`` is asked unsigned) or a secret access key
(``AWS_SECRET_ACCESS_KEY`` with ``AWS_ACCESS_KEY_ID``, which signs the request and
never travels); the region is ``AWS_REGION`` (or ``AWS_DEFAULT_REGION``), else
``us-east-1``.
"""

from __future__ import annotations

import contextlib
import json
import os
from collections.abc import Callable, Iterator
from types import SimpleNamespace
from typing import Any

from ..wires.bedrock import RECORD_KEYS
from .refused import Refused, refusal

REGION = "us-east-1"
# The environment variable boto3 reads a Bedrock API key from (the first of the keys).
BEARER = RECORD_KEYS[0]
# The Messages version Anthropic's models on Bedrock take in an Invoke body.
ANTHROPIC_VERSION = "bedrock-2023-05-31"


def converse_request(prompt: str, model: str, max_tokens: int) -> dict[str, Any]:
    """ConverseStream: one user message with one text block."""
    return {"modelId": model, "messages": [{"role": "user", "content": [{"text": prompt}]}],
            "inferenceConfig": {"maxTokens": max_tokens}}


def invoke_request(prompt: str, model: str, max_tokens: int) -> dict[str, Any]:
    """InvokeModelWithResponseStream: the model's own body (Anthropic's Messages on Bedrock)
    under ``body``, sent as JSON text."""
    return {"modelId": model, "body": {"anthropic_version": ANTHROPIC_VERSION,
                                       "max_tokens": max_tokens,
                                       "messages": [{"role": "user", "content": prompt}]}}


def converse_create(key: str, base_url: str | None, on_request: Any) -> tuple[Any, Any]:
    """boto3's ``converse_stream``, read as a raw streaming response, and its errors."""
    return _create(key, base_url, on_request,
                   lambda client, kwargs: client.converse_stream(**kwargs)["stream"])


def invoke_create(key: str, base_url: str | None, on_request: Any) -> tuple[Any, Any]:
    """boto3's ``invoke_model_with_response_stream``, read as a raw streaming response, and
    its errors (the request's ``body`` goes as JSON text, as boto3 takes it)."""
    def call(client: Any, kwargs: dict[str, Any]) -> Iterator[Any]:
        body = kwargs.get("body")
        if not isinstance(body, (str, bytes)):
            kwargs = {**kwargs, "body": json.dumps(body)}
        return client.invoke_model_with_response_stream(**kwargs)["body"]
    return _create(key, base_url, on_request, call)


def _create(key: str, base_url: str | None, on_request: Any,
            call: Callable[[Any, dict[str, Any]], Iterator[Any]]) -> tuple[Any, Any]:
    import boto3
    from botocore import UNSIGNED
    from botocore.config import Config
    from botocore.exceptions import BotoCoreError, ClientError, PartialCredentialsError

    options: dict[str, Any] = {"retries": {"total_max_attempts": 1}, "read_timeout": 600}
    credentials: dict[str, Any] = {}
    bearer = os.environ.get(BEARER) == key
    if bearer and base_url is not None and base_url.startswith("http://"):
        # boto3 sends a bearer token over HTTPS only: a local server (`lesson-lib serve`)
        # is asked unsigned, and the key does not travel in the clear.
        options["signature_version"] = UNSIGNED
    elif not bearer:
        credentials = {"aws_secret_access_key": key,
                       "aws_access_key_id": os.environ.get("AWS_ACCESS_KEY_ID"),
                       "aws_session_token": os.environ.get("AWS_SESSION_TOKEN")}
    region = os.environ.get("AWS_REGION") or os.environ.get("AWS_DEFAULT_REGION") or REGION
    tee = _Tee()

    def sent(request: Any, **_: Any) -> None:
        on_request(request)         # None: botocore goes on and sends it

    @contextlib.contextmanager
    def create(**kwargs: Any) -> Iterator[_Streamed]:
        if credentials and not credentials["aws_access_key_id"]:
            raise PartialCredentialsError(provider="env", cred_var="AWS_ACCESS_KEY_ID")
        client = boto3.client("bedrock-runtime", region_name=region, endpoint_url=base_url,
                              config=Config(**options), **credentials)
        client.meta.events.register("before-send.bedrock-runtime", sent)
        client.meta.events.register("before-parse.bedrock-runtime", tee.note)
        try:
            events = call(client, kwargs)
        except ClientError as exc:
            refused = refusal(tee)
            if refused is None:
                raise
            raise refused from exc
        yield _Streamed(tee, events)

    return create, SimpleNamespace(APIStatusError=Refused, APIConnectionError=BotoCoreError)


class _Tee:
    """botocore's response, noted: the status and headers, and each piece of the body as
    its reader takes it (botocore's ``before-parse`` hook, `note`)."""

    def __init__(self) -> None:
        self.status, self.headers = 0, {}
        self.pieces: list[bytes] = []
        self.raw: _Body | None = None

    def note(self, response_dict: dict[str, Any], **_: Any) -> None:
        """The response, before botocore parses it: a stream's body is wrapped, an error's
        (already read) kept."""
        self.status = response_dict["status_code"]
        self.headers = dict(response_dict["headers"])
        body = response_dict["body"]
        if isinstance(body, (bytes, bytearray)):
            if body:
                self.pieces.append(bytes(body))
        else:
            self.raw = response_dict["body"] = _Body(body, self.pieces)

    def take(self) -> list[bytes]:
        """The pieces noted since the last take."""
        out, self.pieces[:] = list(self.pieces), []
        return out

    def rest(self) -> Iterator[bytes]:
        """What boto3 left unread of the body (after an exception frame ended its reading)."""
        if self.raw is not None:
            for _ in self.raw.stream():
                yield from self.take()


class _Body:
    """The raw body botocore's event-stream reader reads (``stream()``), each piece kept.
    One reading of the raw body, however often `stream` is called: what one caller left
    is what the next one reads."""

    def __init__(self, raw: Any, pieces: list[bytes]) -> None:
        self._raw, self._pieces = raw, pieces
        self._reads: Iterator[bytes] | None = None

    def stream(self, *args: Any, **kwargs: Any) -> Iterator[bytes]:
        if self._reads is None:
            self._reads = iter(self._raw.stream(*args, **kwargs))
        for piece in self._reads:
            if piece:
                self._pieces.append(piece)
            yield piece

    def close(self) -> None:
        self._raw.close()


class _Streamed:
    """boto3's event stream as a raw streaming response: the status and headers, then the
    body's pieces as boto3 reads each event."""

    def __init__(self, tee: _Tee, events: Iterator[Any]) -> None:
        self._tee, self._events = tee, events
        self.status_code, self.headers = tee.status, tee.headers

    def iter_bytes(self) -> Iterator[bytes]:
        from botocore.exceptions import EventStreamError

        yield from self._tee.take()
        try:
            for _ in self._events:
                yield from self._tee.take()
        except EventStreamError:
            pass            # an exception frame: it is in the body, read on to its end
        yield from self._tee.take()
        yield from self._tee.rest()
