"""Captures: a response body exactly as it came off the wire, plus its sidecar.

A capture is two files side by side:

- ``NAME.sse`` (or ``NAME.eventstream``, AWS Bedrock's binary frames: the
  suffix each wire's registry entry names): the response body, byte for byte (for an HTTP error before any event, the JSON
  error body);
- ``NAME.json``: the sidecar, with these keys::

    wire          a registered wire's name (`lesson_lib.wires.ENTRIES`)
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
the decoded events' own structure (their ``event:`` names, their payloads'
``type`` / ``object``), never from text a model may have written, and the
whole body is one chunk with no timing. The wire station tells it
(`lesson_lib.wires.detect_wire`, named here too): only `wires/` reads a
payload's names. A body that starts with a binary
frame whose prelude CRC holds is read as Bedrock's event stream, its wire
told from the frames' ``:event-type`` headers.

Loading refuses what it cannot trust to read: a sidecar field of the wrong
shape (named in the error), something that is not a regular file (a FIFO
with no writer would block forever, ``/dev/zero`` never ends), a file past
`MAX_BYTES`.
"""

from __future__ import annotations

import difflib
import json
import os
import stat
from collections.abc import Iterator
from dataclasses import dataclass, field
from functools import cached_property
from pathlib import Path
from typing import Any

from ..diagnostics import Diagnostic
from ..sse import eventstream
from ..sse.bedrock_frames import FrameEventDecoder
from ..sse.decoder import ServerSentEvent, SSEDecoder
from ..sse.eventstream import is_eventstream as is_eventstream
from ..wires import ENTRIES
from ..wires import detect_wire as detect_wire  # a bare body's wire, told by the wire station

MAX_BYTES = 1 << 30  # 1 GiB: the default limit on one body (`lesson-lib --max-bytes`)

CAPTURES_DIR = Path(__file__).resolve().parents[2] / "captures"   # lesson_lib/capture/ -> the repo


def reference_dir() -> Path:
    """Where the shared reference captures live (env REFERENCE_CAPTURES)."""
    default = Path(__file__).resolve().parents[3] / "shared" / "reference-captures"
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
        return int((self.sidecar.get("response") or {}).get("status", 200))

    @property
    def demonstrates(self) -> str:
        return self.sidecar.get("demonstrates", "")

    @property
    def request(self) -> dict[str, Any]:
        return self.sidecar.get("request") or {}

    @property
    def key(self) -> str:
        """The corpus name: ``wire/name``."""
        return f"{self.wire}/{self.name}" if self.wire else self.name

    @cached_property
    def chunk_ends(self) -> list[int]:
        # Ends that do not move forward inside the body are dropped, so the
        # chunks always cover the body once, in order (`check` reports them).
        ends: list[int] = []
        for end in (self.sidecar.get("chunks") or {}).get("ends") or []:
            if (ends[-1] if ends else 0) < end <= len(self.body):
                ends.append(end)
        if not ends or ends[-1] != len(self.body):
            ends.append(len(self.body))
        return ends

    @cached_property
    def chunk_times(self) -> list[float | None]:
        times = list((self.sidecar.get("chunks") or {}).get("t_ms") or [])
        times += [None] * (len(self.chunk_ends) - len(times))
        return times[:len(self.chunk_ends)]

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

    @property
    def framing(self) -> str:
        """The wire's framing as its registry entry says (``sse``; ``eventstream`` for
        Bedrock's binary frames); a body on no known wire: ``eventstream`` when it starts
        with a binary frame, else ``sse``."""
        entry = ENTRIES.get(self.wire or "")
        if entry is not None:
            return entry.framing
        return "eventstream" if is_eventstream(self.body) else "sse"

    def decode(self, chunk_size: int | None = None
               ) -> tuple[list[ServerSentEvent], list[Diagnostic]]:
        """Run the body's decoder (the one the wire's registry entry names: SSE, or
        event-stream frames read as events, `bedrock_frames.FrameEventDecoder`); events
        and framing diagnostics."""
        entry = ENTRIES.get(self.wire or "")
        if entry is not None:
            decoder = entry.new_decoder()
        else:
            decoder = FrameEventDecoder() if self.framing == "eventstream" else SSEDecoder()
        events: list[ServerSentEvent] = []
        for chunk, t in self.chunks(chunk_size):
            events.extend(decoder.feed(chunk, t))
        events.extend(decoder.finish())
        return events, decoder.diagnostics

    def frames(self, chunk_size: int | None = None
               ) -> tuple[list[eventstream.Frame], list[Diagnostic]]:
        """The body's binary frames and the decoder's diagnostics (an event-stream body)."""
        decoder = eventstream.EventStreamDecoder()
        frames: list[eventstream.Frame] = []
        for chunk, t in self.chunks(chunk_size):
            frames.extend(decoder.feed(chunk, t))
        return frames + decoder.finish(), decoder.diagnostics

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

    @cached_property
    def text_diagnostics(self) -> list[Diagnostic]:
        """A `not_text` warning where the body is not valid UTF-8 (the reader shows
        U+FFFD there; the bytes stay as they are in `body`)."""
        return not_text(self.body) if self.status < 300 and self.framing == "sse" else []

    @property
    def text(self) -> str:
        """The body as text (replacement characters for invalid UTF-8)."""
        return self.body.decode("utf-8", "replace")


# -- loading -----------------------------------------------------------------


def not_text(body: bytes) -> list[Diagnostic]:
    """A `not_text` warning at the first byte that is not UTF-8, with the count of such runs."""
    try:
        body.decode("utf-8")
    except UnicodeDecodeError as exc:
        first = exc.start
    else:
        return []
    runs = body[first:].decode("utf-8", "replace").count("\ufffd")
    return [Diagnostic(
        code="not_text",
        message=(f"invalid UTF-8 from byte {first} ({runs} invalid sequence"
                 f"{'s' if runs != 1 else ''} in all); the reader shows U+FFFD there"),
        severity="warning", offset=first, extra={"invalid_sequences": runs})]


def load(source: str | os.PathLike, *, search_reference: bool = True,
         max_bytes: int = MAX_BYTES) -> Capture:
    """Load a capture by path (with or without sidecar) or by corpus name.

    A corpus name is the file name without extension, or ``wire/name`` where
    two wires share a name; the project's `captures/` are searched first,
    then the reference captures. Raises `CaptureError` (one line) for what
    cannot be read: see the module docstring.
    """
    path = _resolve(str(source), search_reference)
    if path.suffix == ".json":
        path = next((path.with_suffix(s) for s in body_suffixes()
                     if path.with_suffix(s).exists()), path)
    body = read_body(path, max_bytes)
    sidecar_path = path.with_suffix(".json")
    sidecar: dict[str, Any] = {}
    if sidecar_path.exists() and sidecar_path != path:
        try:
            sidecar = json.loads(sidecar_path.read_text(encoding="utf-8"))
        except (OSError, ValueError, RecursionError) as exc:
            raise CaptureError(f"{sidecar_path}: sidecar is not valid JSON ({exc})") from exc
        problem = sidecar_shape_problem(sidecar)
        if problem is not None:
            raise CaptureError(f"{sidecar_path}: {problem}")
    return from_bytes(body, name=path.stem, sidecar=sidecar, path=path)


def read_body(path: Path, max_bytes: int = MAX_BYTES) -> bytes:
    """The bytes of a regular file of at most `max_bytes`, or a one-line `CaptureError`."""
    try:
        info = path.stat()
        if stat.S_ISDIR(info.st_mode):
            raise CaptureError(f"{path}: is a directory, not a capture")
        if not stat.S_ISREG(info.st_mode):
            raise CaptureError(f"{path}: not a regular file (a device, FIFO or socket), "
                               "so not read; pipe it to stdin (-) instead")
        if info.st_size > max_bytes:
            raise CaptureError(f"{path}: {info.st_size} bytes, more than the limit of "
                               f"{max_bytes} (--max-bytes)")
        with path.open("rb") as handle:
            body = handle.read(max_bytes + 1)
    except OSError as exc:
        raise CaptureError(f"{path}: cannot read ({exc.strerror or exc})") from exc
    if len(body) > max_bytes:
        raise CaptureError(f"{path}: more than the limit of {max_bytes} bytes (--max-bytes)")
    return body


def sidecar_shape_problem(sidecar: Any) -> str | None:
    """One line naming the first sidecar field whose type is wrong, or None."""
    if not isinstance(sidecar, dict):
        return f"sidecar is a JSON {type(sidecar).__name__}, not an object"
    wire = sidecar.get("wire")
    if wire is not None and (not isinstance(wire, str) or wire not in ENTRIES):
        return f"sidecar field 'wire' is {_short(wire)}, not one of {', '.join(ENTRIES)}"
    for name in ("request", "response", "chunks", "provenance", "sdk", "turn"):
        if sidecar.get(name) is not None and not isinstance(sidecar[name], dict):
            return f"sidecar field {name!r} is {_short(sidecar[name])}, not an object"
    if "response" in sidecar and sidecar["response"] is None:
        return "sidecar field 'response' is null, not an object"
    response = sidecar.get("response") or {}
    status = response.get("status", 200)
    if type(status) is not int or not 100 <= status <= 999:
        return f"sidecar field 'response.status' is {_short(status)}, not an HTTP status"
    if response.get("headers") is not None and not isinstance(response["headers"], dict):
        return f"sidecar field 'response.headers' is {_short(response['headers'])}, not an object"
    chunks = sidecar.get("chunks") or {}
    for name, kinds in (("ends", (int,)), ("t_ms", (int, float, type(None)))):
        values = chunks.get(name)
        if values is None:
            continue
        if not isinstance(values, list) or any(
                type(v) not in kinds for v in values):
            return (f"sidecar field 'chunks.{name}' is {_short(values)}, "
                    f"not a list of {'byte offsets' if name == 'ends' else 'times in ms'}")
    if not isinstance(sidecar.get("demonstrates", ""), str):
        return f"sidecar field 'demonstrates' is {_short(sidecar['demonstrates'])}, not text"
    return None


def _short(value: Any) -> str:
    text = json.dumps(value)
    return text if len(text) <= 40 else text[:39] + "…"


def from_bytes(body: bytes, *, name: str = "<bytes>", sidecar: dict | None = None,
               path: Path | None = None) -> Capture:
    """Build a capture from a body in memory (stdin, a test, a fault injector)."""
    sidecar = dict(sidecar or {})
    wire = sidecar.get("wire") or detect_wire(body)
    return Capture(name=name, body=body, wire=wire, sidecar=sidecar, path=path)


def _resolve(source: str, search_reference: bool) -> Path:
    path = Path(source)
    if os.path.lexists(path):  # a dangling link or a link loop is there, just unreadable
        return path
    roots = [CAPTURES_DIR]
    if search_reference:
        roots.append(reference_dir())
    matches: list[Path] = []
    for root in roots:
        for suffix in body_suffixes():
            if (root / f"{source}{suffix}").exists():
                return root / f"{source}{suffix}"
        if root.exists():
            matches += sorted(p for s in body_suffixes() for p in root.glob(f"*/{source}{s}"))
        if matches:
            break
    if len(matches) == 1:
        return matches[0]
    if len(matches) > 1:
        options = ", ".join(f"{m.parent.name}/{m.stem}" for m in matches)
        raise CaptureError(f"{source}: ambiguous corpus name; say one of {options}")
    raise CaptureError(f"{source}: no such file or corpus capture{_suggest(source, roots)}")


def _suggest(source: str, roots: list[Path]) -> str:
    """ "; did you mean hello?" for a corpus name that is nearly right (else "")."""
    names: set[str] = set()
    for root in roots:
        if root.exists():
            for body in bodies(root):
                names.update((body.stem, f"{body.parent.name}/{body.stem}"))
    close = difflib.get_close_matches(source, sorted(names), n=3, cutoff=0.6)
    return f"; did you mean {' or '.join(close)}?" if close else ""


def corpus(root: Path | None = None) -> list[Capture]:
    """Every capture in the project's `captures/` (or `root`), sorted by key."""
    root = root or CAPTURES_DIR
    return [load(p) for p in bodies(root)]


def body_suffixes() -> tuple[str, ...]:
    """The suffixes of a body's file: each registered wire's (``.sse``, ``.eventstream``)."""
    return tuple(dict.fromkeys(entry.suffix for entry in ENTRIES.values()))


def bodies(root: Path) -> list[Path]:
    """The body files (a registered wire's suffix) one folder down from `root`, sorted."""
    return sorted(p for suffix in body_suffixes() for p in root.glob(f"*/*{suffix}"))


def bodies_in(folder: Path) -> list[Path]:
    """The body files in `folder` itself and one folder down, sorted (a wire's folder or
    the corpus root)."""
    return sorted({p for suffix in body_suffixes()
                   for pattern in (f"*{suffix}", f"*/*{suffix}") for p in folder.glob(pattern)})


def reference_folders() -> dict[str, str]:
    """The reference folders and the wire each one's recordings speak, as the wires' registry
    entries name them: the folder says it, since a bare recording has no sidecar
    (compatible servers speak Chat)."""
    return {folder: wire for wire, entry in ENTRIES.items() for folder in entry.reference_folders}


def reference_corpus() -> list[Capture]:
    """Every shared reference capture, its wire taken from its folder (empty when the
    folder is absent)."""
    root = reference_dir()
    if not root.exists():
        return []
    caps, folders = [], reference_folders()
    for p in bodies(root):
        cap = load(p)
        wire = folders.get(p.parent.name)
        if wire is not None and cap.wire != wire:
            cap = from_bytes(cap.body, name=cap.name, path=p, sidecar={"wire": wire})
        caps.append(cap)
    return caps
