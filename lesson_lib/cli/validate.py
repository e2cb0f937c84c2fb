"""Validate a capture: sidecar, framing, payloads, addressing, and the SDK's verdict.

Used by ``lesson-lib check``. A capture is *malformed* when it cannot be
trusted as a record of a stream: its sidecar contradicts its body (chunk
offsets, wire), or the official SDK no longer does what the sidecar says it
does. A stream that is cut or carries an error is well-formed: that is what
such captures demonstrate, and the report says so.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from ..capture.captures import Capture
from ..capture.replay import SDKOutcome, run_sdk
from ..wires import ENTRIES
from ..wires.stream_end import Ending, how_it_ended
from ..wires.wire_events import parse_all

SIDECAR_KEYS = ("wire", "demonstrates", "request", "response", "provenance", "chunks")


@dataclass
class Report:
    """What `check` found for one capture."""

    well_formed: bool
    summary: str
    ending: Ending
    details: list[str] = field(default_factory=list)
    problems: list[str] = field(default_factory=list)


def validate(cap: Capture) -> Report:
    """Check one capture end to end (see the module docstring)."""
    problems = sidecar_problems(cap)
    events = parse_all(cap.events)
    ending = how_it_ended(cap.wire, events, cap.sse_diagnostics, cap.status, cap.text)
    details = [f"{len(events)} events, {len(cap.body)} bytes, wire {cap.wire or 'unknown'}",
               f"ending: {ending.kind} ({ending.reason})"]
    entry = ENTRIES.get(cap.wire or "")
    if entry is not None and entry.sdk is None:
        details.append("SDK: none on this wire (its registry entry names no SDK route)")
    elif entry is not None:
        outcome = run_sdk(cap, keep_events=False)   # only what the claims compare
        details.append(f"SDK: {describe_outcome(outcome)}")
        problems += sdk_claim_problems(cap.sidecar.get("sdk"), outcome)
    summary = ending.kind if not problems else f"malformed ({len(problems)} problems)"
    return Report(not problems, summary, ending, details, problems)


def sidecar_problems(cap: Capture) -> list[str]:
    """Contradictions between a sidecar and its body (none for a bare file)."""
    side = cap.sidecar
    if not side:
        return []
    problems = [f"sidecar lacks {key!r}" for key in SIDECAR_KEYS if key not in side]
    if side.get("wire") not in ENTRIES:
        problems.append(f"sidecar wire {side.get('wire')!r} is not one of {', '.join(ENTRIES)}")
    chunks = side.get("chunks") or {}
    ends, times = chunks.get("ends") or [], chunks.get("t_ms") or []
    if ends:
        if any(b <= a for a, b in zip(ends, ends[1:], strict=False)) or ends[0] <= 0:
            problems.append("chunk ends are not strictly increasing")
        if ends[-1] != len(cap.body):
            problems.append(f"last chunk ends at {ends[-1]}, body has {len(cap.body)} bytes")
        if len(times) != len(ends):
            problems.append(f"{len(ends)} chunk ends but {len(times)} arrival times")
        elif any(b < a for a, b in zip(times, times[1:], strict=False)):
            problems.append("arrival times go backwards")
    return problems


def describe_outcome(outcome: SDKOutcome) -> str:
    """One line: what the SDK returned or raised."""
    if outcome.error is not None:
        status = getattr(outcome.error, "status_code", None)
        extra = f" (status_code={status})" if status is not None else ""
        return f"raised {outcome.raised}{extra}: {str(outcome.error)[:100]}"
    final = outcome.final
    if final is None:       # a helper that assembles nothing (Gemini's)
        return f"returned {outcome.event_count} response objects (it assembles no final one)"
    stop = (getattr(final, "stop_reason", None) if hasattr(final, "stop_reason")
            else getattr(final, "status", None))
    if hasattr(final, "choices"):
        stop = ", ".join(str(c.finish_reason) for c in final.choices)
    return f"returned {type(final).__name__} ({stop})"


def sdk_claim_problems(claims: dict[str, Any] | None, outcome: SDKOutcome) -> list[str]:
    """Where the SDK's behaviour differs from what the sidecar's ``sdk`` claims."""
    if not claims:
        return []
    problems = []
    if claims.get("raises") != outcome.raised:
        problems.append(f"sidecar says the SDK raises {claims.get('raises')}, "
                        f"it {'raised ' + str(outcome.raised) if outcome.raised else 'returned'}")
    wanted = claims.get("error_contains")
    if wanted and wanted not in str(outcome.error or ""):
        problems.append(f"SDK error does not mention {wanted!r}")
    if "text" in claims and claims["text"] != outcome.text:
        problems.append("the SDK's text projection differs from the sidecar's")
    if claims.get("final") and outcome.final is not None:
        dumped = outcome.final.model_dump(mode="json", warnings=False)
        for path, expected in claims["final"].items():
            try:
                got = lookup(dumped, path)
            except (KeyError, IndexError, ValueError, TypeError):
                problems.append(f"SDK final has no {path}, sidecar says {expected!r}")
                continue
            if got != expected:
                problems.append(f"SDK final {path} is {got!r}, sidecar says {expected!r}")
    return problems


def lookup(value: Any, dotted: str) -> Any:
    """Follow a dotted path (``content.1.input``) into dicts and lists.

    A missing step raises (KeyError, IndexError, ValueError or TypeError), so
    an absent field never passes for a claimed ``null``.
    """
    for part in dotted.split("."):
        value = value[int(part)] if isinstance(value, list) else value[part]
    return value
