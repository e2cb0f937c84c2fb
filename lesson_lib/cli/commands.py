"""The command line: ``python -m lesson_lib`` / ``lesson-lib``.

Commands (contracts in the course guide; exit codes shared by all):

    events CAPTURE [--chunk-size N] [--json]   decode any event stream
    check [CAPTURE|FOLDER...]                  validate captures (none: the corpus)
    list                                       the corpus, one line per capture
    final CAPTURE [--chunk-size N] [--json]    the provider's final object, accumulated
    serve [--host H] [--port N] [--speed X]    the corpus over HTTP (lesson_lib.cli.serve)
    record --wire W [...] PROMPT               record a live stream (lesson_lib.capture.record)
    turn CAPTURE... [--json]                   the captures as the steps of one agent turn

Exit codes: 0 the stream ended properly; 2 cannot start (usage, missing,
empty, not an event stream); 3 the stream did not end properly (cut,
in-band error, undispatched bytes, unparseable payloads, HTTP error; for
``final``, also a protocol violation: any ``error`` diagnostic) —
everything that did arrive is still printed. Diagnostics go to stderr, one
line each, naming the file and the byte offset.

Input is a regular file or stdin, at most ``--max-bytes`` (default 1 GiB);
anything else cannot start. Output that cannot be written (a full disk, a
closed stdout) is one line and exit 2; a reader that closes the pipe early
(``| head``) ends the command quietly.
"""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from ..capture import captures as captures_mod
from ..capture.captures import Capture, CaptureError
from ..capture.diagnostics import Diagnostic
from ..capture.json_text import dumps, printable
from ..wires.stream_end import Ending, how_it_ended
from ..wires.wire_events import parse_all

OK, CANNOT_START, NOT_PROPER = 0, 2, 3
# The commands whose result is their stdout: with stdout closed they cannot start.
_PRINTING = frozenset({"events", "check", "list", "final", "turn"})


class _Usage(Exception):
    pass


class _Parser(argparse.ArgumentParser):
    def error(self, message: str) -> None:  # one line, exit 2, no usage dump
        raise _Usage(message)


def main(argv: Sequence[str] | None = None) -> int:
    """Run the CLI; returns the exit code (also used by ``python -m lesson_lib``)."""
    parser = _build_parser()
    try:
        args = parser.parse_args(argv)
        if args.command is None:
            raise _Usage("a command is required: events, check, list, final, serve, record "
                         "or turn")
        if sys.stdout is None and args.command in _PRINTING:
            # Python gives a closed stdout as None, and print() to None prints nothing.
            _err("cannot write the output (stdout is closed)")
            return CANNOT_START
        code = args.run(args)
        if sys.stdout is not None:
            sys.stdout.flush()
        return code
    except _Usage as exc:
        return _cannot_start(f"usage: {exc}", argv)
    except CaptureError as exc:
        return _cannot_start(str(exc), argv)
    except BrokenPipeError:
        _silence_stdout()
        return OK
    except OSError as exc:  # only writes get here: reads raise CaptureError
        _silence_stdout()
        _err(f"cannot write the output ({exc.strerror or exc})")
        return CANNOT_START


def _cannot_start(message: str, argv: Sequence[str] | None) -> int:
    """Exit 2: one line on stderr, and with ``--json`` a JSON error object on stdout too,
    so that a script reading stdout always gets JSON."""
    _err(message)
    words = sys.argv[1:] if argv is None else argv
    if "--json" in words and sys.stdout is not None:
        try:
            sys.stdout.write(dumps({"error": {"exit": CANNOT_START, "message": message}}) + "\n")
            sys.stdout.flush()
        except (OSError, ValueError):
            pass
    return CANNOT_START


def _silence_stdout() -> None:
    """Point stdout at /dev/null, so the flush at exit cannot fail a second time."""
    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        os.close(devnull)
    except (OSError, AttributeError, ValueError):
        pass


def _build_parser() -> argparse.ArgumentParser:
    parser = _Parser(prog="lesson-lib", description="Read LLM response streams, event by event.")
    sub = parser.add_subparsers(dest="command", parser_class=_Parser)

    events = sub.add_parser("events", help="decode any event stream")
    events.add_argument("capture")
    events.add_argument("--chunk-size", type=_positive, default=None)
    events.add_argument("--json", action="store_true")
    _max_bytes_option(events)
    events.set_defaults(run=_cmd_events)

    check = sub.add_parser("check", help="validate captures and replay them through the SDK "
                                         "(a folder: every capture in it; none: the corpus)")
    check.add_argument("captures", nargs="*")
    _max_bytes_option(check)
    check.set_defaults(run=_cmd_check)

    listing = sub.add_parser("list", help="the capture corpus")
    listing.set_defaults(run=_cmd_list)

    final = sub.add_parser("final", help="the provider's final object, built by our accumulator")
    final.add_argument("capture")
    final.add_argument("--chunk-size", type=_positive, default=None)
    final.add_argument("--json", action="store_true")
    _max_bytes_option(final)
    final.set_defaults(run=_cmd_final)

    from ..capture.record import add_command as add_record
    from .serve.command import add_command as add_serve
    add_serve(sub)
    add_record(sub)

    turn = sub.add_parser("turn", help="the captures as the consecutive steps of one turn")
    turn.add_argument("captures", nargs="+")
    turn.add_argument("--json", action="store_true")
    turn.set_defaults(run=_cmd_turn)
    return parser


def _max_bytes_option(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--max-bytes", type=_positive, default=captures_mod.MAX_BYTES,
                        help="refuse a body larger than this (default 1 GiB)")


def _positive(text: str) -> int:
    try:
        value = int(text)
    except ValueError as exc:
        raise argparse.ArgumentTypeError(f"not a whole number: {text!r}") from exc
    if value < 1:
        raise argparse.ArgumentTypeError("must be at least 1")
    return value


# -- loading, with the checks that decide "cannot start" ---------------------


def open_capture(source: str, max_bytes: int = captures_mod.MAX_BYTES) -> Capture:
    """Load a capture for the CLI; raise CaptureError with one clear line if it can't start."""
    if source == "-":
        cap = captures_mod.from_bytes(_read_stdin(max_bytes), name="<stdin>")
    else:
        cap = captures_mod.load(source, max_bytes=max_bytes)
    label = _label(cap, source)
    if not cap.body:
        raise CaptureError(f"{label}: empty file, nothing to decode")
    if cap.status < 300:
        if cap.framing == "eventstream" and not cap.events and not cap.sse_diagnostics:
            raise CaptureError(f"{label}: an event stream of binary frames with no frame "
                               f"in its {len(cap.body)} bytes")
        if cap.framing == "sse" and _looks_binary(cap.body):
            raise CaptureError(f"{label}: not text (binary data), so not an event stream")
        if not cap.events:
            raise CaptureError(f"{label}: not an event stream (no event could be dispatched "
                               f"from {len(cap.body)} bytes)")
    return cap


def _read_stdin(max_bytes: int) -> bytes:
    stream = getattr(sys.stdin, "buffer", None)
    if stream is None:
        raise CaptureError("<stdin>: stdin is closed, nothing to read")
    try:
        body = stream.read(max_bytes + 1)
    except (OSError, ValueError) as exc:
        raise CaptureError(f"<stdin>: cannot read ({getattr(exc, 'strerror', None) or exc})"
                           ) from exc
    if len(body) > max_bytes:
        raise CaptureError(f"<stdin>: more than the limit of {max_bytes} bytes (--max-bytes)")
    return body


def _looks_binary(body: bytes) -> bool:
    """What cannot be an event stream: mostly invalid UTF-8, or no line structure.

    NUL is legal (in ``data`` it is data; in ``id`` it voids the field), so
    it counts only as one sign among others of a body with no lines at all.
    """
    if b"\n" not in body and b"\r" not in body:
        return b"\x00" in body
    try:
        body.decode("utf-8")
        return False
    except UnicodeDecodeError:
        pass
    replaced = body.decode("utf-8", "replace").count("\ufffd") - body.count("\ufffd".encode())
    return replaced > max(4, len(body) // 10)


def _label(cap: Capture, source: str) -> str:
    return str(cap.path) if cap.path is not None else source


def _text_and_wire(cap: Capture) -> list[Diagnostic]:
    """Warnings about the body itself: not UTF-8, or no wire can be told."""
    diags = list(cap.text_diagnostics)
    if cap.wire is None and cap.status < 300:
        diags.append(Diagnostic(
            "wire_unknown", "cannot tell which wire this stream speaks (no event name or "
            "payload type of a known wire), so whether it ended properly cannot be checked",
            severity="warning"))
    return diags


def _ending(cap: Capture, chunk_size: int | None = None) -> tuple[list, Ending]:
    sse, sse_diags = cap.decode(chunk_size) if cap.status < 300 else ([], [])
    events = parse_all(sse)
    return events, how_it_ended(cap.wire, events, sse_diags, cap.status, cap.text)


def _report(label: str, diagnostics: list[Diagnostic]) -> None:
    for diag in diagnostics:
        where = f"byte {diag.offset}" if diag.offset is not None else "end"
        _err(f"{label}: {where}: {diag.severity}: {diag.code}: {diag.message}")


def _err(line: str) -> None:
    print(f"lesson-lib: {line}", file=sys.stderr)


# -- commands -------------------------------------------------------------------


def _cmd_events(args: argparse.Namespace) -> int:
    cap = open_capture(args.capture, args.max_bytes)
    label = _label(cap, args.capture)
    sse, sse_diags = cap.decode(args.chunk_size) if cap.status < 300 else ([], [])
    events = parse_all(sse)
    ending = how_it_ended(cap.wire, events, sse_diags, cap.status, cap.text)
    if args.json:
        sys.stdout.write(dumps([e.as_dict() for e in sse]) + "\n")
    else:
        for i, e in enumerate(sse):
            t = f"{e.t:>8.1f}ms" if e.t is not None else "        -"
            name = e.event if e.event is not None else "(message)"
            print(f"{i:>4} {t} {e.start:>7}-{e.end:<7} {name:<40} {_preview(e.data)}")
            if cap.framing == "eventstream":    # a binary frame: its headers too
                print(f"{'':>24}{_frame_headers(e)}")
        if cap.status >= 300:
            print(f"HTTP {cap.status}: {_preview(cap.text, 160)}")
    _report(label, ending.diagnostics + _text_and_wire(cap))
    return OK if ending.proper else NOT_PROPER


def _cmd_final(args: argparse.Namespace) -> int:
    from ..accumulate import accumulate

    cap = open_capture(args.capture, args.max_bytes)
    label = _label(cap, args.capture)
    if cap.wire is None:
        raise CaptureError(f"{label}: cannot tell which wire this stream speaks, "
                           "so there is no final object to build")
    result = accumulate(cap, chunk_size=args.chunk_size)
    _, ending = _ending(cap, args.chunk_size)
    if args.json:
        sys.stdout.write(dumps(result.final) + "\n")
    else:
        print(_summarise_final(cap.wire, result.final))
    seen = {(d.code, d.offset) for d in result.diagnostics}
    extra = [d for d in ending.diagnostics if (d.code, d.offset) not in seen]
    reported = list(result.diagnostics) + extra + _text_and_wire(cap)
    _report(label, reported)
    # An `error:` line never goes with exit 0: a protocol violation (a delta
    # outside its block, a second start, ...) fails a stream that did end.
    clean = not any(d.severity == "error" for d in reported)
    return OK if ending.proper and result.complete and clean else NOT_PROPER


def _summarise_final(wire: str, final: dict[str, Any] | None) -> str:
    if final is None:
        return "(no final object: the request failed before any event)"
    return dumps(final)


def _cmd_turn(args: argparse.Namespace) -> int:
    from ..turn.run import turn_state
    from ..turn.summary import turn_text

    caps = [open_capture(source) for source in args.captures]
    labels = [_label(cap, source) for cap, source in zip(caps, args.captures, strict=True)]
    for cap, label in zip(caps, labels, strict=True):
        if cap.wire is None:
            raise CaptureError(f"{label}: cannot tell which wire this stream speaks, "
                               "so it cannot be a step of a turn")
    state = turn_state(caps, "auto")
    if args.json:
        sys.stdout.write(dumps(state.as_dict()) + "\n")
    else:
        print(printable(turn_text(state)))
    for event in state.events:
        if event.kind == "error_reported":
            cap = caps[event.step - 1]
            at = cap.events[event.at].start if event.at is not None and event.at < len(
                cap.events) else None
            where = f"byte {at}" if at is not None else "end"
            _err(f"{labels[event.step - 1]}: {where}: error: {event.scope} "
                 f"({event.phase}): {event.message}")
        elif event.kind == "noted" and event.diagnostic is not None:
            _report(labels[event.step - 1], [event.diagnostic])
    # The exit code says whether every stream ended properly, as `final`'s does; whether the
    # turn succeeded is the outcome's to say (`unknown`, `paused` are proper ends, no success).
    return NOT_PROPER if state.outcome in ("failed", "truncated") else OK


def _cmd_list(args: argparse.Namespace) -> int:
    caps = captures_mod.corpus()
    width = max((len(c.key) for c in caps), default=10)
    wire_width = max((len(c.wire or "") for c in caps), default=18)
    for cap in caps:
        print(f"{cap.key:<{width}}  {cap.wire:<{wire_width}}  {cap.demonstrates}")
    return OK


def _cmd_check(args: argparse.Namespace) -> int:
    from . import sdk_warnings

    with sdk_warnings.kept() as noted:
        worst = _check_all(args)
    if (line := sdk_warnings.summary(noted)) is not None:
        _err(f"check: {line}")
    return worst


def _check_all(args: argparse.Namespace) -> int:
    from .validate import validate

    worst = OK
    for source in _check_sources(args.captures):
        try:
            cap = open_capture(source, args.max_bytes)
        except CaptureError as exc:
            _err(f"FAIL {exc}")
            worst = CANNOT_START
            continue
        report = validate(cap)
        label = _label(cap, source)
        print(f"{'ok  ' if report.well_formed else 'FAIL'} {label}: {report.summary}")
        for line in report.details:
            print(f"     {line}")
        for problem in report.problems:
            _err(f"{label}: {problem}")
        if not report.well_formed:
            worst = CANNOT_START
    return worst


def _check_sources(sources: list[str]) -> list[str]:
    """What `check` reads: each source as given, a folder as every capture body in it and
    one level down (whatever its framing's suffix), and no source as the whole corpus."""
    if not sources:
        return [str(p) for p in captures_mod.bodies(captures_mod.CAPTURES_DIR)]
    expanded: list[str] = []
    for source in sources:
        folder = Path(source)
        if source != "-" and folder.is_dir():
            found = captures_mod.bodies_in(folder)
            expanded += [str(p) for p in found] or [source]
        else:
            expanded.append(source)
    return expanded


def _frame_headers(event: Any) -> str:
    """A frame's headers on one line: ``name=value`` (type), in the frame's order."""
    from ..wires.bedrock import header_text
    return "  ".join(f"{h.name}={header_text(h.value)} ({h.type})"
                     for h in getattr(event, "headers", ()))


def _preview(text: str, limit: int = 72) -> str:
    flat = printable(text.replace("\n", "\\n"))
    return flat if len(flat) <= limit else flat[: limit - 1] + "…"
