"""What every wire shares: the unified finish vocabulary, the HTTP retry rule, the
shape of an in-band error, how a wire's error names decide a retry, and the shape of a
wire's cheat sheet."""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Literal

# Why a turn stopped, in one vocabulary for every wire (lesson 4's turn reads it).
FinishReason = Literal["stop", "length", "tool_calls", "content_filter", "refusal", "pause",
                 "error", "other"]
FINISHES: tuple[FinishReason, ...] = ("stop", "length", "tool_calls", "content_filter", "refusal",
                                "pause", "error", "other")

# HTTP statuses a retry can cure: timeout, conflict, rate limit, and every server error
# (Anthropic's 529 "overloaded" included).
RETRYABLE_STATUSES = frozenset({408, 409, 429})


# A step's token counts in one vocabulary for every wire (lesson 4's turn reads them):
# ``input`` counts all input, cache reads and writes included; a count the wire does
# not report is 0.
USAGE_COUNTS = ("input", "output", "cache_read", "cache_write", "reasoning")


def count(obj: Any, *path: str) -> int:
    """The integer at `path` inside nested dicts, 0 when absent or not an integer."""
    for key in path:
        obj = obj.get(key) if isinstance(obj, dict) else None
    return obj if isinstance(obj, int) and not isinstance(obj, bool) else 0


def retryable_status(status: int) -> bool:
    """Whether a request that failed with HTTP `status` is worth sending again."""
    return status in RETRYABLE_STATUSES or status >= 500


def unified(table: dict[str, FinishReason], raw: Any) -> FinishReason | None:
    """`raw` looked up in a wire's finish table: None for no reason yet, ``other`` for a
    reason the table does not know."""
    if raw is None:
        return None
    return table.get(raw, "other") if isinstance(raw, str) else "other"


@dataclass(frozen=True)
class WireError:
    """An error as a wire reports it, read out of its payload.

    `where` says which shape it came in: ``error`` (an ``error`` object, the
    shape of real streams and of HTTP error bodies), ``response.error`` (the
    error inside a Responses ``response.failed``) or ``flat`` (``code`` and
    ``message`` at the top of the payload, the shape of the Responses schema).
    """

    type: str | None
    code: str | None
    message: str | None
    where: Literal["error", "response.error", "flat"]

    @property
    def kind(self) -> str | None:
        """The error's name: its type, else its code."""
        return self.type or self.code


def _str(value: Any) -> str | None:
    return value if isinstance(value, str) and value else None


def read_error_object(err: Any, where: Literal["error", "response.error", "flat"]
                      ) -> WireError | None:
    """A `WireError` of a dict carrying ``type``/``code``/``message``, else None (Google
    names an error by its ``status``, read as its type)."""
    if not isinstance(err, dict):
        return None
    return WireError(_str(err.get("type")) or _str(err.get("status")), _str(err.get("code")),
                     _str(err.get("message")), where)


def flat_error(payload: dict) -> WireError:
    """The error of a payload with ``code`` and ``message`` at its top (the ``flat`` shape)."""
    return WireError(None, _str(payload.get("code")), _str(payload.get("message")), "flat")


def error_body(body: str) -> WireError | None:
    """The error of an HTTP error body (``{"error": {...}}``; Bedrock's a bare
    ``{"message": ...}``, its name in a header), else None."""
    try:
        data = json.loads(body)
    except ValueError:
        return None
    if not isinstance(data, dict):
        return None
    if "error" not in data and _str(data.get("message")):
        return flat_error(data)
    return read_error_object(data.get("error"), "error")


# -- which errors a retry can cure ------------------------------------------------------

# The error codes OpenAI's two wires (Responses and Chat) share: those a retry can cure
# and those it cannot (the request, the key or the account must change first).
OPENAI_RETRYABLE_ERRORS = frozenset({"rate_limit_exceeded", "server_error",
                                     "server_is_overloaded", "slow_down", "timeout"})
OPENAI_FINAL_ERRORS = frozenset({"insufficient_quota", "invalid_request_error",
                                 "invalid_api_key", "context_length_exceeded",
                                 "model_not_found"})


@dataclass(frozen=True)
class RetryRule:
    """How one wire's errors say whether a retry can cure them.

    `retryable`: the error names a retry can cure; `final`: those it cannot
    (a name in neither is not retried either: it is listed so tests can see
    every error the corpus shows is known). `by`: which field of a
    `WireError` names it: ``type`` (Anthropic: ``overloaded_error``), or
    ``code`` (OpenAI: the code decides, the type being a category such as
    ``tokens``; the type when there is no code).
    """

    retryable: frozenset[str]
    final: frozenset[str]
    by: Literal["type", "code"]

    def error(self, name: str | None) -> bool:
        """Whether an error called `name` (a ``type`` or ``code``) is worth a retry."""
        return name in self.retryable

    def reported(self, error: WireError | None) -> bool:
        """Whether the error a wire reported (in band or in an HTTP body) is worth a retry,
        read by the field this wire names its errors with."""
        if error is None:
            return False
        return self.error(error.type if self.by == "type" else error.code or error.type)


@dataclass(frozen=True)
class Sheet:
    """A wire on one page, as plain data (a cheat sheet renders it).

    `events`: (event type, what it does) in the order a stream sends them;
    `addressing`: (field, what it addresses); `tool_arguments`: where a tool
    call's arguments arrive; `terminal`: what ends the stream properly;
    `in_band_error`: what an error after HTTP 200 looks like; `also`: (event or
    field, what it carries) for reasoning, refusals, citations and what else a
    reader must know; `finish`: why it stopped (the raw values and the unified
    reasons, see `finish_words`); `error_body`: the documented JSON error of a
    failed request (before any event).
    """

    wire: str
    events: tuple[tuple[str, str], ...]
    addressing: tuple[tuple[str, str], ...]
    tool_arguments: str
    terminal: str
    in_band_error: str
    also: tuple[tuple[str, str], ...] = ()
    finish: str = ""
    error_body: str = ""


def finish_words(reasons: Mapping[str, str]) -> str:
    """Raw finish values grouped by the unified reason they mean: ``a, b → stop; c → length``."""
    grouped: dict[str, list[str]] = {}
    for raw, reason in reasons.items():
        grouped.setdefault(reason, []).append(raw)
    return "; ".join(f"{', '.join(raws)} → {reason}" for reason, raws in grouped.items())


# -- a failed request's error, in OpenAI's shape (Responses and Chat) ----------------------
_OPENAI_CODES = {400: "invalid_request", 404: "not_found", 413: "request_too_large"}


def openai_error_body(status: int, message: str) -> dict[str, Any]:
    """The JSON error OpenAI's two wires send for a request that failed with `status`."""
    kind = "server_error" if status >= 500 else "invalid_request_error"
    return {"error": {"message": message, "type": kind, "param": None,
                      "code": _OPENAI_CODES.get(status)}}
