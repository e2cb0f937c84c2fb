"""The fault grammar of `lesson-lib serve`: ``fault=NAME:ARG``, applied with `lesson_lib.breaks.faults`.

=====================  ==========================================================
``cut:N``              the body ends cleanly after N bytes (the HTTP response is whole)
``drop:N``             the connection breaks after N bytes (the HTTP response is not)
``error-after:N``      an in-band error in the wire's own shape after event N
``stall:MS``           the stream goes silent for MS ms halfway through
``drop-terminal``      the terminal event never comes
``split-character``    a chunk ends inside the first multi-byte character
``corrupt-json:N``     event N's JSON payload loses its closing brace
``duplicate:N``        event N is delivered again later, just before the last event (the
                       at-least-once session streams drop it by its id)
=====================  ==========================================================

Any of them with ``@first`` (``drop:800@first``) breaks only a client's first request
for a capture: the same client asking again for the same capture is served clean, so
a retry succeeds on screen. The client is the request's address; the server remembers
each (client, capture, fault) it has broken once (`FirstRequests`) until it stops.

Pure: a spec string in, a `FaultSpec` (or a `FaultSpecError` saying what is
wrong and what exists) out; `apply` turns specs and a capture into a new capture.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass, field

from ...breaks import faults
from ...capture.captures import Capture


class FaultSpecError(ValueError):
    """A fault spec that does not parse, or that this capture cannot take."""


@dataclass(frozen=True)
class _Kind:
    apply: Callable[..., Capture]
    arg: str | None        # what the argument counts, or None for no argument
    number: type = int


KINDS: dict[str, _Kind] = {
    "cut": _Kind(faults.cut_at, "bytes"),
    "drop": _Kind(faults.drop_at, "bytes"),
    "error-after": _Kind(faults.inject_error, "events"),
    "stall": _Kind(faults.stall, "ms", float),
    "drop-terminal": _Kind(faults.drop_terminal, None),
    "split-character": _Kind(faults.split_character, None),
    "corrupt-json": _Kind(faults.corrupt_json, "event index"),
    "duplicate": _Kind(faults.redeliver, "event index"),
}


@dataclass(frozen=True)
class FaultSpec:
    """One parsed fault: its name and its argument (None when it takes none)."""

    name: str
    arg: int | float | None = None
    first: bool = False     # only a client's first request for a capture (``@first``)

    def __str__(self) -> str:
        spec = self.name if self.arg is None else f"{self.name}:{self.arg:g}"
        return f"{spec}{FIRST}" if self.first else spec


MAX_STALL_MS = 600_000      # 10 minutes: longer is no lesson, only a hung client
FIRST = "@first"


def grammar() -> str:
    """The accepted specs, for error messages and ``--help``."""
    return (", ".join(f"{name}:N" if kind.arg else name for name, kind in KINDS.items())
            + f", each optionally with {FIRST}")


def parse(spec: str) -> FaultSpec:
    """Parse one ``NAME:ARG`` (or bare ``NAME``) spec, with ``@first`` or not;
    FaultSpecError names the grammar."""
    spec, at, scope = spec.strip().partition("@")
    if at and scope.strip() != FIRST[1:]:
        raise FaultSpecError(f"unknown fault scope {'@' + scope!r}: only {FIRST} (the "
                             "first request of each client for a capture)")
    parsed = _parse_fault(spec.strip())
    return FaultSpec(parsed.name, parsed.arg, first=bool(at))


def _parse_fault(spec: str) -> FaultSpec:
    name, sep, arg = spec.partition(":")
    kind = KINDS.get(name)
    if kind is None:
        raise FaultSpecError(f"unknown fault {name!r}; known: {grammar()}")
    if kind.arg is None:
        if sep:
            raise FaultSpecError(f"fault {name!r} takes no argument")
        return FaultSpec(name)
    try:
        value = kind.number(arg)
    except ValueError:
        raise FaultSpecError(f"fault {name!r} needs a number of {kind.arg} "
                             f"({name}:N), not {arg!r}") from None
    if not value >= 0 or value == float("inf"):
        raise FaultSpecError(f"fault {name!r}: {kind.arg} must be 0 or more, not {arg!r}")
    if name == "stall" and value > MAX_STALL_MS:
        raise FaultSpecError(f"fault 'stall': at most {MAX_STALL_MS:,} ms (10 minutes), "
                             f"not {arg!r}")
    return FaultSpec(name, value)


def parse_all(specs: Iterable[str]) -> list[FaultSpec]:
    """Parse every spec (a comma also separates specs in one value)."""
    return [parse(part) for spec in specs for part in spec.split(",") if part.strip()]


def apply(capture: Capture, specs: Iterable[FaultSpec]) -> Capture:
    """The capture with each fault applied in order; FaultSpecError when one cannot be."""
    for spec in specs:
        kind = KINDS[spec.name]
        try:
            capture = kind.apply(capture) if spec.arg is None else kind.apply(capture, spec.arg)
        except faults.FaultError as exc:
            raise FaultSpecError(f"fault {spec}: {exc}") from None
    return capture


@dataclass
class FirstRequests:
    """Which ``@first`` faults a request still gets: each breaks the first request of a
    client for a capture, once. Remembers at most `limit` of them (the oldest is then
    forgotten, and its fault would break a request again)."""

    limit: int = 4096
    broken: dict[tuple[str, str, str], None] = field(default_factory=dict)

    def select(self, specs: Iterable[FaultSpec], client: str,
               capture: str) -> list[FaultSpec]:
        """The specs that apply to this request: every plain one, and each ``@first`` one
        this client has not had for this capture yet (now counted as had)."""
        out = []
        for spec in specs:
            if spec.first:
                key = (client, capture, str(spec))
                if key in self.broken:
                    continue
                if len(self.broken) >= self.limit:
                    del self.broken[next(iter(self.broken))]
                self.broken[key] = None
            out.append(spec)
        return out
