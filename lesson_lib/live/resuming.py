"""Resume, live: where a step's stream can be asked for again after a drop.

A wire whose registry entry says it resumes (`lesson_lib.wires.entry.Resume`:
Responses in background mode, Gemini Interactions) keeps what a drop would
lose: the provider holds the stream, and a GET on the thing streamed, after
the last point received, sends the rest. `Resuming` follows one step's
stream for that: the id of the thing streamed, the last resume point
(`lesson_lib.breaks.resume.Joiner`, which also turns away the events the
resumed body repeats), and whether the wire's end already came (then there
is nothing to resume).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

import httpx

from .. import wires
from ..breaks.resume import Joiner
from ..wires.resume import Resume
from ..wires.wire_events import WireEvent


@dataclass
class Resuming:
    """One step's stream on a wire that resumes (see the module)."""

    how: Resume
    ends: frozenset[str] = frozenset()    # the wire's terminals and in-band failures
    stream_id: str | None = None
    ended: bool = False                   # an end of the wire's own came: nothing to resume
    joiner: Joiner = field(init=False)

    def __post_init__(self) -> None:
        self.joiner = Joiner(self.how)

    @classmethod
    def for_step(cls, wire: str, request: Mapping[str, Any]) -> Resuming | None:
        """A fresh follower for a step on `wire`, or None when its stream cannot be
        resumed (the wire does not resume, or the request did not ask it to be kept)."""
        how = wires.entry_for(wire).resume
        if how is None or not how.allows(request):
            return None
        module = wires.for_wire(wire)
        return cls(how, frozenset(module.TERMINALS) | frozenset(module.FAILURES))

    def saw(self, event: WireEvent) -> None:
        """Note a wire event of the stream (its id, its point, an end)."""
        if self.stream_id is None:
            self.stream_id = self.how.stream_id(event.payload)
        self.joiner.received(event)
        if event.type in self.ends:
            self.ended = True

    @property
    def ready(self) -> bool:
        """Whether a break now can be resumed: the stream named its id, carried a point,
        and did not end."""
        return self.stream_id is not None and self.joiner.last is not None and not self.ended

    def url(self, base_url: str, params: Mapping[str, Any] | None = None) -> str:
        """The resume request's URL under `base_url`, with the caller's `params`."""
        if self.stream_id is None or self.joiner.last is None:
            raise ValueError("nothing to resume: the stream named no id or carried no point")
        url = httpx.URL(base_url.rstrip("/")
                        + self.how.request_path(self.stream_id, self.joiner.last))
        return str(url.copy_merge_params(dict(params)) if params else url)
