"""A wire's registry entry: what carries it over HTTP, as data (each wire module's ``ENTRY``).

The event vocabulary says how a body reads; the entry says how the body is
asked for and how it comes: the path and its query, the request's fields the
path takes (a model named in the URL, not in the body), whether the path or
the body asks for the stream, the framing and content type of the answer, the
suffix of a capture's body file, what part of a request says what was asked,
and the error a server sends in the provider's own shape (its JSON body and
headers). `lesson-lib serve` and the live loop read these; neither keeps a
list of wires. A wire whose streams can be asked for again from a point
says how in its `resume` (`Resume`); None where a dropped stream is lost.

>>> from lesson_lib import wires
>>> entry = wires.entry_for("aws-bedrock-converse")
>>> entry.request_path({"modelId": "us.anthropic.claude", "messages": []})
'/model/us.anthropic.claude/converse-stream'
>>> entry.request_body({"modelId": "us.anthropic.claude", "messages": []})
{'messages': []}
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any, Literal
from urllib.parse import quote, urlencode

from .resume import Resume

Framing = Literal["sse", "eventstream"]
SSE_CONTENT_TYPE = "text/event-stream"

# A path's fields: ``{name}`` in a template.
_FIELD = re.compile(r"\{([A-Za-z_][A-Za-z0-9_]*)\}")


def _no_headers(status: int) -> dict[str, str]:
    return {}


@dataclass(frozen=True)
class Entry:
    """One wire as HTTP carries it (see the module).

    `route`: the path a server answers at (``{name}`` a path parameter, the
    provider's own template); `path`: the path a client sends a request to,
    each ``{field}`` taken from the request's field of that name (and left out
    of the body), `query` what the path's query adds; `body_field`: the
    request's field that is the whole body (a recorded Invoke request nests
    the model's body under ``body``); `streams_by_path`: the path itself asks
    for a stream (else the body's ``"stream": true`` does); `conversation`:
    the request's fields that say what was asked (a server matches a request
    to a capture by them); `error_body(status, message)` and
    `error_headers(status)`: the provider's error for a failed request;
    `resume`: how a dropped stream is asked for again from where it broke
    (`Resume`), None on a wire whose streams cannot be; `method`: how a client
    asks (a session's event stream is a GET: its request is the path's fields).
    """

    wire: str
    title: str
    framing: Framing
    content_type: str
    suffix: str
    route: str
    path: str
    conversation: tuple[str, ...]
    error_body: Callable[[int, str], dict[str, Any]]
    error_headers: Callable[[int], dict[str, str]] = _no_headers
    query: tuple[tuple[str, str], ...] = ()
    body_field: str | None = None
    streams_by_path: bool = False
    resume: Resume | None = None
    method: Literal["GET", "POST"] = "POST"

    @property
    def path_fields(self) -> tuple[str, ...]:
        """The request's fields the path names."""
        return tuple(_FIELD.findall(self.path))

    def request_path(self, request: Mapping[str, Any]) -> str:
        """The path (and query) of `request`: each field the path names, from the request
        (``ValueError`` when the request lacks one)."""
        def value(match: re.Match[str]) -> str:
            found = request.get(match.group(1))
            if not isinstance(found, str) or not found:
                raise ValueError(f"a {self.wire} request names its {match.group(1)!r} in "
                                 f"the path ({self.path}), and this one has none")
            return quote(found, safe="")
        path = _FIELD.sub(value, self.path)
        return f"{path}?{urlencode(self.query)}" if self.query else path

    def request_body(self, request: Mapping[str, Any]) -> dict[str, Any]:
        """The body of `request` as the provider takes it: its `body_field`, else the
        request less the fields the path took; ``"stream": true`` added where the body
        asks for the stream."""
        if self.body_field is not None and isinstance(request.get(self.body_field), dict):
            body = dict(request[self.body_field])
        else:
            body = {k: v for k, v in request.items() if k not in self.path_fields}
        return body if self.streams_by_path else {**body, "stream": True}

    def asked(self, body: Mapping[str, Any]) -> Mapping[str, Any]:
        """What a request body or a recorded request says was asked: a recorded
        request's `body_field` opened, anything else as it is."""
        inner = body.get(self.body_field) if self.body_field is not None else None
        return inner if isinstance(inner, dict) else body
