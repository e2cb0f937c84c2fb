"""Captures: a response body exactly as it came off the wire, plus its sidecar.

A capture is two files side by side:

- ``NAME.sse``: the response body, byte for byte (for an HTTP error before
  any event, the JSON error body);
- ``NAME.json``: the sidecar, with these keys::

    wire          "anthropic-messages" | "openai-responses" | "openai-chat"
    demonstrates  one line: what this capture shows
    request       what produced it: model, messages / input, tools, parameters
    response      {"status": 200, "headers": {...}}  (request id; never secrets)
    provenance    {"kind": "recorded", "date": ..., "sdk": ...} or
                  {"kind": "constructed", "based_on": ..., "timing": "synthetic"}
    chunks        {"ends": [byte offsets where network chunks ended],
                   "t_ms": [arrival time of each chunk, ms from request]}
    sdk           what the official SDK does with these bytes (checked by tests)
    turn          optional {"name": ..., "step": n} for multi-step turns

A bare ``.sse`` file with no sidecar also loads: the wire is detected from
its content and the whole body is one chunk with no timing.
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterator
from dataclasses import dataclass, field
from functools import cached_property
from pathlib import Path
from typing import Any

from .diagnostics import Diagnostic
from .sse import ServerSentEvent, SSEDecoder

WIRES = ("anthropic-messages", "openai-responses", "openai-chat")

CAPTURES_DIR = Path(__file__).resolve().parent.parent / "captures"


def reference_dir() -> Path:
    """Where the shared reference captures live (env REFERENCE_CAPTURES)."""
    default = Path(__file__).resolve().parent.parent.parent / "shared" / "reference-captures"
    return Path(os.environ.get("REFERENCE_CAPTURES", default))


class CaptureError(Exception):
    """A capture cannot be loaded at all (missing, empty, not text, not a stream)."""


@dataclass(frozen=True)
class Capture:
    """One recorded or constructed response: bytes, chunk timing and sidecar."""

    name: str
    body: bytes
    wire: str | None
    sidecar: dict[str, Any] = field(default_factory=dict)
    path: Path | None = None

    # -- what the sidecar says ---------------------------------------------

    @property
    def status(self) -> int:
        """The HTTP status (200 when unknown)."""
        return int(self.sidecar.get("response", {}).get("status", 200))

    @property
    def demonstrates(self) -> str:
        return self.sidecar.get("demonstrates", "")

    @property
    def request(self) -> dict[str, Any]:
        return self.sidecar.get("request", {})

    @property
    def key(self) -> str:
        """The corpus name: ``wire/name``."""
        return f"{self.wire}/{self.name}" if self.wire else self.name

    @cached_property
    def chunk_ends(self) -> list[int]:
        ends = list(self.sidecar.get("chunks", {}).get("ends") or [])
        if not ends or ends[-1] != len(self.body):
            ends.append(len(self.body))
        return ends

    @cached_property
    def chunk_times(self) -> list[float | None]:
        times = list(self.sidecar.get("chunks", {}).get("t_ms") or [])
        times += [None] * (len(self.chunk_ends) - len(times))
        return times

    # -- replay ------------------------------------------------------------

    def chunks(self, size: int | None = None) -> Iterator[tuple[bytes, float | None]]:
        """The body as (chunk, arrival ms): the recorded chunking, or `size`-byte pieces."""
        if size:
            for i in range(0, len(self.body), size):
                yield self.body[i:i + size], None
            return
        start = 0
        for end, t in zip(self.chunk_ends, self.chunk_times, strict=True):
            yield self.body[start:end], t
            start = end

    def decode(self, chunk_size: int | None = None
               ) -> tuple[list[ServerSentEvent], list[Diagnostic]]:
        """Run the SSE decoder over the body; events and end-of-stream diagnostics."""
        decoder = SSEDecoder()
        events: list[ServerSentEvent] = []
        for chunk, t in self.chunks(chunk_size):
            events.extend(decoder.feed(chunk, t))
        events.extend(decoder.finish())
        return events, decoder.diagnostics

    @cached_property
    def events(self) -> list[ServerSentEvent]:
        """The dispatched events, with the recorded chunk timing."""
        return self._decoded[0]

    @cached_property
    def sse_diagnostics(self) -> list[Diagnostic]:
        return self._decoded[1]

    @cached_property
    def _decoded(self) -> tuple[list[ServerSentEvent], list[Diagnostic]]:
        if self.status >= 300:
            return [], []
        return self.decode()

    @property
    def text(self) -> str:
        """The body as text (replacement characters for invalid UTF-8)."""
        return self.body.decode("utf-8", "replace")


# -- loading -----------------------------------------------------------------


def detect_wire(body: bytes) -> str | None:
    """Guess the wire from the bytes: event names and payload types."""
    head = body[:65536].decode("utf-8", "replace")
    if "event: message_start" in head or '"type":"message_start"' in head.replace(" ", ""):
        return "anthropic-messages"
    compact = head.replace(" ", "")
    if "event: response." in head or '"type":"response.' in compact:
        return "openai-responses"
    if "chat.completion.chunk" in head or "data: [DONE]" in head or '"choices":' in compact:
        return "openai-chat"
    if '"type":"content_block_' in compact:
        return "anthropic-messages"
    return None


def load(source: str | os.PathLike, *, search_reference: bool = True) -> Capture:
    """Load a capture by path (with or without sidecar) or by corpus name.

    A corpus name is the file name without extension, or ``wire/name`` where
    two wires share a name; the project's `captures/` are searched first,
    then the reference captures.
    """
    path = _resolve(str(source), search_reference)
    if path.suffix == ".json" and path.with_suffix(".sse").exists():
        path = path.with_suffix(".sse")
    try:
        body = path.read_bytes()
    except IsADirectoryError as exc:
        raise CaptureError(f"{path}: is a directory, not a capture") from exc
    except OSError as exc:
        raise CaptureError(f"{path}: cannot read ({exc.strerror or exc})") from exc
    sidecar_path = path.with_suffix(".json")
    sidecar: dict[str, Any] = {}
    if sidecar_path.exists() and sidecar_path != path:
        try:
            sidecar = json.loads(sidecar_path.read_text(encoding="utf-8"))
        except (OSError, ValueError) as exc:
            raise CaptureError(f"{sidecar_path}: sidecar is not valid JSON ({exc})") from exc
    return from_bytes(body, name=path.stem, sidecar=sidecar, path=path)


def from_bytes(body: bytes, *, name: str = "<bytes>", sidecar: dict | None = None,
               path: Path | None = None) -> Capture:
    """Build a capture from a body in memory (stdin, a test, a fault injector)."""
    sidecar = dict(sidecar or {})
    wire = sidecar.get("wire") or detect_wire(body)
    return Capture(name=name, body=body, wire=wire, sidecar=sidecar, path=path)


def _resolve(source: str, search_reference: bool) -> Path:
    path = Path(source)
    if path.exists():
        return path
    roots = [CAPTURES_DIR]
    if search_reference:
        roots.append(reference_dir())
    matches: list[Path] = []
    for root in roots:
        if (root / f"{source}.sse").exists():
            return root / f"{source}.sse"
        if root.exists():
            matches += sorted(root.glob(f"*/{source}.sse"))
        if matches:
            break
    if len(matches) == 1:
        return matches[0]
    if len(matches) > 1:
        options = ", ".join(f"{m.parent.name}/{m.stem}" for m in matches)
        raise CaptureError(f"{source}: ambiguous corpus name; say one of {options}")
    raise CaptureError(f"{source}: no such file or corpus capture")


def corpus(root: Path | None = None) -> list[Capture]:
    """Every capture in the project's `captures/` (or `root`), sorted by key."""
    root = root or CAPTURES_DIR
    return [load(p) for p in sorted(root.glob("*/*.sse"))]


def reference_corpus() -> list[Capture]:
    """Every shared reference capture (empty when the folder is absent)."""
    root = reference_dir()
    if not root.exists():
        return []
    caps = []
    for p in sorted(root.glob("*/*.sse")):
        cap = load(p)
        if cap.wire is None and p.parent.name.startswith("openai-chat"):
            cap = from_bytes(cap.body, name=cap.name, path=p, sidecar={"wire": "openai-chat"})
        caps.append(cap)
    return caps
