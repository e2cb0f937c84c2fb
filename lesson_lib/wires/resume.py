"""How a wire's stream is asked for again after a point (a registry entry's ``resume``).

Some providers keep a stream and send it again from any point: Responses in
background mode after a ``sequence_number`` (``starting_after``), Gemini
Interactions after an ``event_id`` (``last_event_id``). `Resume` says, as
data, how: where an event's point is, where the payloads name the thing
streamed, and the GET that asks for the rest. The live loop, ``serve`` and
lesson 5's join read it (`lesson_lib.breaks.resume`).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any
from urllib.parse import quote, urlencode

ResumePoint = int | str


@dataclass(frozen=True)
class Resume:
    """How a wire's stream is asked for again after a point: each event's resume point,
    the id of the thing streamed, and the resume request (a GET on that thing).

    `point_field`: the payload field that holds an event's resume point
    (Responses' ``sequence_number``, Interactions' ``event_id``); `numbered`:
    the points are consecutive integers, so a hole between two streams shows
    (an opaque token shows none); `id_paths`: where payloads name the thing
    streamed, each a path of keys, the first found wins; `route`: the path a
    server answers the resume request at (``{id}`` the thing's id, other
    ``{name}`` parameters the provider's own); `path`: the path a client sends
    it to; `after`: the query field that carries the point; `query`: the rest
    of the query; `needs`: a field the first request must set true for the
    provider to keep the stream (Responses' ``background``), None when any
    stream with an id can be resumed.

    >>> from lesson_lib import wires
    >>> how = wires.entry_for("openai-responses").resume
    >>> how.request_path("resp_1", 59)
    '/v1/responses/resp_1?stream=true&starting_after=59'
    """

    point_field: str
    numbered: bool
    id_paths: tuple[tuple[str, ...], ...]
    route: str
    path: str
    after: str
    query: tuple[tuple[str, str], ...] = (("stream", "true"),)
    needs: str | None = None

    def point(self, payload: Any) -> ResumePoint | None:
        """The resume point a payload carries, or None when it carries none."""
        found = payload.get(self.point_field) if isinstance(payload, dict) else None
        if self.numbered:
            return found if type(found) is int else None
        return found if isinstance(found, str) and found else None

    def stream_id(self, payload: Any) -> str | None:
        """The id of the thing streamed, where this payload names it, else None."""
        for path in self.id_paths:
            found: Any = payload
            for key in path:
                found = found.get(key) if isinstance(found, dict) else None
            if isinstance(found, str) and found:
                return found
        return None

    def allows(self, request: Mapping[str, Any]) -> bool:
        """Whether a stream asked for by `request` can be resumed at all."""
        return self.needs is None or request.get(self.needs) is True

    def request_path(self, stream_id: str, point: ResumePoint) -> str:
        """The resume request's path and query: the stream of `stream_id` after `point`."""
        path = self.path.replace("{id}", quote(stream_id, safe=""))
        return f"{path}?{urlencode((*self.query, (self.after, str(point))))}"

    def read_point(self, text: str | None) -> ResumePoint | None:
        """A point as a resume request's query carries it (None when it is no point)."""
        if text is None or not text.strip():
            return None
        if not self.numbered:
            return text
        try:
            return int(text)
        except ValueError:
            return None
