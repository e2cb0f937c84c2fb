"""AWS Bedrock, what its two streaming APIs share: binary frames, and exceptions as frames.

Both ``ConverseStream`` (`bedrock_converse`) and
``InvokeModelWithResponseStream`` (`bedrock_invoke`) answer with
``application/vnd.amazon.eventstream`` frames (`lesson_lib.sse.eventstream`).
Each frame says what it is in its headers:

- ``:message-type`` ``event``: ``:event-type`` names the event, the payload
  is its JSON (Converse: ``messageStart``, ``contentBlockDelta``, ...;
  Invoke: ``chunk``, whose payload ``{"bytes": "<base64>"}`` holds one
  Anthropic Messages event);
- ``:message-type`` ``exception``: ``:exception-type`` names the error
  (``throttlingException``...), the payload is ``{"message": ...}``; it ends
  the stream;
- ``:message-type`` ``error``: ``:error-code`` and ``:error-message`` headers.

`lesson_lib.sse.bedrock_frames` reads each frame as the same kind of event the
SSE decoder dispatches, so every station after the framing reads Bedrock
unchanged. This module holds what is true of the two APIs past the framing:
their exceptions, which a retry can cure, and how an exception frame reads.
"""

from __future__ import annotations

import json
from typing import Any

# Bedrock's framing (frames read as events) is the first station's: `bedrock_frames`.
from ..sse.bedrock_frames import CONVERSE as CONVERSE
from ..sse.bedrock_frames import CONVERSE_EVENTS as CONVERSE_EVENTS
from ..sse.bedrock_frames import INVOKE as INVOKE
from ..sse.bedrock_frames import FrameEvent as FrameEvent
from ..sse.bedrock_frames import FrameEventDecoder as FrameEventDecoder
from ..sse.bedrock_frames import frame_event as frame_event
from ..sse.bedrock_frames import header_text as header_text
from ..sse.bedrock_frames import wire_of_frame as wire_of_frame
from ..sse.eventstream import encode_frame
from .common import RetryRule, WireError

# -- exceptions: the error frames of both APIs (``:exception-type``) ----------------------
RETRY = RetryRule(
    retryable=frozenset({"throttlingException", "serviceUnavailableException",
                         "internalServerException", "modelStreamErrorException",
                         "modelTimeoutException"}),
    final=frozenset({"validationException", "accessDeniedException",
                     "resourceNotFoundException", "modelNotReadyException",
                     "serviceQuotaExceededException"}),
    by="type")
EXCEPTIONS = RETRY.retryable | RETRY.final
retryable_error, retryable = RETRY.error, RETRY.reported


def read_exception(event_type: str | None, payload: Any) -> WireError | None:
    """The error an exception frame reports (its type and ``message``), else None."""
    if event_type not in EXCEPTIONS:
        return None
    message = payload.get("message") if isinstance(payload, dict) else None
    return WireError(event_type, None, message if isinstance(message, str) else None, "error")


def exception_frame(exception_type: str, payload: dict) -> bytes:
    """The bytes of an exception frame, as the service sends one (a fault lab's in-band
    error)."""
    headers = {":exception-type": exception_type, ":content-type": "application/json",
               ":message-type": "exception"}
    return encode_frame(headers, json.dumps(payload, separators=(",", ":")).encode("utf-8"))


# -- a failed request (HTTP error, before any frame) ---------------------------------------
# The exception each HTTP status names: a failed request says it in the
# ``x-amzn-ErrorType`` header, and its JSON body is ``{"message": ...}``.
_HTTP_EXCEPTIONS = {400: "ValidationException", 403: "AccessDeniedException",
                    404: "ResourceNotFoundException", 408: "ModelTimeoutException",
                    413: "ValidationException", 424: "ModelErrorException",
                    429: "ThrottlingException", 500: "InternalServerException",
                    503: "ServiceUnavailableException"}
ERROR_TYPE_HEADER = "x-amzn-ErrorType"


def error_body(status: int, message: str) -> dict[str, Any]:
    """The JSON body of a failed Bedrock request: ``{"message": ...}``."""
    return {"message": message}


def error_headers(status: int) -> dict[str, str]:
    """The headers that name a failed Bedrock request's exception (`ERROR_TYPE_HEADER`)."""
    name = _HTTP_EXCEPTIONS.get(status, "InternalServerException" if status >= 500
                                else "ValidationException")
    return {ERROR_TYPE_HEADER: name}


# -- `lesson-lib record` (boto3's credentials) ---------------------------------------------
# A Bedrock API key (boto3 sends it as a bearer token), else a secret access key (it signs
# the request with ``AWS_ACCESS_KEY_ID``): the variables `record` takes a key from.
RECORD_KEYS = ("AWS_BEARER_TOKEN_BEDROCK", "AWS_SECRET_ACCESS_KEY")
# The model `record` asks for when none is named (a cross-region inference profile).
RECORD_MODEL = "us.anthropic.claude-sonnet-4-5-20250929-v1:0"
# How `record` reads the body (after the name of boto3's call), for the provenance.
RECORD_VIA = "the body read by botocore's before-parse hook as boto3's events arrive"
