"""Retry by phase: whether a failed call may be sent again, and how long to wait first.

The phase of an error decides what a retry means:

- before any output (an HTTP 429 / 5xx / 529 before the first event, or an
  in-band ``overloaded_error`` before any content): nothing was shown, no
  tool ran, so the same request can be sent again as is (``retry``);
- after output (``overloaded_error`` after text, ``response.failed``, a
  Chat error payload mid-stream): the partial answer is kept, marked
  incomplete; sending the request again is not a plain retry
  (``not_plain_retry``): continue from what arrived, or redo the step and
  replace it, and never run a tool twice;
- an error the request itself caused (400, 401, 403, 404, 413, 422, an
  ``invalid_request_error``): ``no_retry``.

`backoff` gives the wait, honouring the server's hints from the response
headers (`hinted_wait`): ``retry-after-ms``, ``retry-after`` (seconds or an
HTTP date), ``x-should-retry``, OpenAI's ``x-ratelimit-reset-requests`` /
``-tokens`` durations (``1s``, ``6m0s``, ``20ms``) and Anthropic's
``anthropic-ratelimit-*-reset`` RFC 3339 times, a reset only for a limit whose
``remaining`` is 0. It is deterministic:
"now" is the response's own ``date`` header (or a given time), and jitter
comes from a seeded `random.Random` or is off.

What the official SDKs do (anthropic 2.17 and openai 3.63, ``_base_client``):
both retry twice by default (``max_retries=2``) on connection errors,
timeouts, 408, 409, 429 and every 5xx, unless ``x-should-retry`` says
``true`` or ``false``, which wins. The wait: ``retry-after-ms``, else
``retry-after`` as seconds, else as an HTTP date; otherwise 0.5 s doubling
per retry, capped at 8 s, minus up to 25 % random jitter. Anthropic waits
any positive ``retry-after`` however long; OpenAI honours it up to two
minutes and does not retry at all above that. Neither reads the
rate-limit reset headers, and neither retries an error inside a 200
stream: that one surfaces as an exception after the deltas were handed out.
"""

from __future__ import annotations

import random
import re
from dataclasses import dataclass
from datetime import UTC, datetime
from email.utils import parsedate_to_datetime
from typing import Any

from .. import wires

RETRY = "retry"                      # retryable as is
NOT_PLAIN_RETRY = "not_plain_retry"  # output arrived: continue or redo, never blindly
NO_RETRY = "no_retry"                # the request itself is wrong

BEFORE_OUTPUT = "before_output"
AFTER_OUTPUT = "after_output"

# The SDKs' own defaults (see the module docstring).
SDK_MAX_RETRIES = 2
SDK_INITIAL_DELAY_S = 0.5
SDK_MAX_DELAY_S = 8.0
OPENAI_MAX_RETRY_AFTER_S = 120.0

@dataclass(frozen=True)
class Verdict:
    """What to do about one error: `action` (retry / not_plain_retry / no_retry) and why."""

    action: str
    phase: str
    reason: str


def classify(*, wire: str, status: int | None = None, error_type: str | None = None,
             output_arrived: bool = False,
             headers: dict[str, str] | None = None) -> Verdict:
    """Classify an error by its phase and kind.

    `status` is the HTTP status (a 200 for an in-band error), `error_type`
    the wire's error type or code (``overloaded_error``, ``server_error``),
    `output_arrived` whether any content was already shown. A header
    ``x-should-retry`` decides a failure before output, as it does for the
    SDKs.
    """
    phase = AFTER_OUTPUT if output_arrived else BEFORE_OUTPUT
    should = _lower(headers).get("x-should-retry")
    # Which errors are transient is a wire's fact: lesson_lib.wires holds it.
    transient = (status is not None and status != 200 and wires.retryable_status(status)) or (
        error_type is not None and wires.for_wire(wire).retryable_error(error_type))
    if not output_arrived and should in ("true", "false"):
        transient = should == "true"
        why = f"the server says x-should-retry: {should}"
    else:
        what = error_type or f"HTTP {status}"
        why = f"{what} is {'transient' if transient else 'caused by the request'}"
    if not transient:
        return Verdict(NO_RETRY, phase, why)
    if output_arrived:
        return Verdict(NOT_PLAIN_RETRY, phase, why + ", but output already arrived: keep it "
                       "as incomplete, then continue from it or redo the step")
    return Verdict(RETRY, phase, why + ", and nothing arrived yet: send it again as is")


# -- the server's hints -------------------------------------------------------------------

_DURATION = re.compile(r"(\d+(?:\.\d+)?)(ms|h|m|s)")
_UNIT_S = {"h": 3600.0, "m": 60.0, "s": 1.0, "ms": 0.001}


def parse_duration(text: str) -> float | None:
    """An OpenAI reset duration (``1s``, ``6m0s``, ``1.492s``, ``20ms``) in seconds."""
    text = text.strip()
    parts = _DURATION.findall(text)
    if not parts or "".join(n + u for n, u in parts) != text:
        return None
    return sum(float(n) * _UNIT_S[u] for n, u in parts)


def _lower(headers: dict[str, str] | None) -> dict[str, str]:
    return {k.lower(): str(v).strip() for k, v in (headers or {}).items()}


def _when(value: str) -> datetime | None:
    """An HTTP date or an RFC 3339 time, as an aware datetime; None when neither."""
    try:
        moment = parsedate_to_datetime(value)
    except (TypeError, ValueError, IndexError):
        try:
            moment = datetime.fromisoformat(value.replace("Z", "+00:00"))
        except ValueError:
            return None
    return moment if moment.tzinfo else moment.replace(tzinfo=UTC)


@dataclass(frozen=True)
class Hint:
    """One header's wait, in seconds after the response."""

    header: str
    seconds: float


def hints(headers: dict[str, Any] | None, now: datetime | None = None) -> list[Hint]:
    """Every wait the headers ask for, in seconds from `now` (default: their ``date``).

    Unparseable values are left out, never raised on.
    """
    h = _lower(headers)
    if now is None and "date" in h:
        now = _when(h["date"])
    out: list[Hint] = []
    for name, value in h.items():
        if name == "retry-after-ms":
            seconds = _number(value)
            if seconds is not None:
                out.append(Hint(name, seconds / 1000))
        elif name == "retry-after":
            seconds = _number(value)
            if seconds is None and now is not None and (moment := _when(value)):
                seconds = (moment - now).total_seconds()
            if seconds is not None:
                out.append(Hint(name, seconds))
        elif name.startswith("x-ratelimit-reset-"):
            seconds = parse_duration(value)
            if seconds is not None:
                out.append(Hint(name, seconds))
        elif name.startswith("anthropic-ratelimit-") and name.endswith("-reset"):
            moment = _when(value)
            if moment is not None and now is not None:
                out.append(Hint(name, (moment - now).total_seconds()))
    return out


def _number(value: str) -> float | None:
    try:
        seconds = float(value)
    except ValueError:
        return None
    return seconds if seconds == seconds and seconds not in (float("inf"), float("-inf")) \
        else None


def hinted_wait(headers: dict[str, Any] | None, now: datetime | None = None) -> Hint | None:
    """The wait the server asks for: ``retry-after-ms`` or ``retry-after`` when present,
    else the latest reset among the limits that ran out (their ``remaining`` is 0).

    A reset header alone is no hint: with requests to spare, a limit resetting in 6 ms
    says nothing about when to try again, and waiting it would not back off at all.
    """
    found = [x for x in hints(headers, now) if x.seconds >= 0]
    for name in ("retry-after-ms", "retry-after"):
        for x in found:
            if x.header == name:
                return x
    h = _lower(headers)
    exhausted = [x for x in found
                 if h.get(x.header.replace("-reset-", "-remaining-")
                          .replace("-reset", "-remaining")) == "0"]
    return max(exhausted, key=lambda x: x.seconds) if exhausted else None


# -- the schedule ---------------------------------------------------------------------------


@dataclass(frozen=True)
class Wait:
    """One retry's wait: `seconds`, and `source` (a header's name, or ``backoff``)."""

    attempt: int
    seconds: float
    source: str


def backoff(attempt: int, headers: dict[str, Any] | None = None, *,
            rng: random.Random | None = None, now: datetime | None = None,
            initial_s: float = SDK_INITIAL_DELAY_S, max_s: float = SDK_MAX_DELAY_S,
            jitter: float = 0.25) -> Wait:
    """The wait before retry number `attempt` (0 for the first retry).

    A server hint wins (`hinted_wait`); otherwise `initial_s` doubling per
    attempt, capped at `max_s`, less up to `jitter` of it drawn from `rng`
    (no jitter without an `rng`, so the schedule is reproducible).
    """
    hint = hinted_wait(headers, now)
    if hint is not None:
        return Wait(attempt, hint.seconds, hint.header)
    seconds = min(initial_s * 2.0 ** min(attempt, 1000), max_s)
    if rng is not None:
        seconds *= 1 - jitter * rng.random()
    return Wait(attempt, seconds, "backoff")


def schedule(headers: dict[str, Any] | None = None, *, retries: int = SDK_MAX_RETRIES,
             seed: int | None = None, now: datetime | None = None) -> list[Wait]:
    """The waits of `retries` retries after a failure with these headers.

    The hint applies to the first retry (the next response brings its own
    headers); later ones back off. `seed` turns the jitter on, reproducibly.
    """
    rng = random.Random(seed) if seed is not None else None
    waits = [backoff(0, headers, rng=rng, now=now)] if retries > 0 else []
    return waits + [backoff(n, None, rng=rng) for n in range(1, retries)]
