"""The ``serve`` subcommand: its options, and the start-up that can fail in one line."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

DESCRIPTION = """\
Serve the capture corpus over HTTP at the providers' own paths (one per registered wire),
each streaming a capture byte for byte with its recorded timing, status and headers:
{paths}
Choose the capture with ?capture=wire/name
(or a `capture` header), else the one whose recorded request matches. Per request:
?speed=2|instant (0.01 to 1000), ?fault=cut:1200|drop:1200|error-after:5|stall:3000|
drop-terminal|split-character|corrupt-json:N (cut ends the body cleanly, drop breaks the
connection; a stall at most 10 minutes). A fault ending in @first (drop:800@first) breaks
only a client's first request for a capture: asked again, it is served clean, so a retry
succeeds. A request body over --max-body (1 MiB) gets 413, one not all there within
--body-timeout (10 s) gets 408 and the connection closes.
GET /stream/<wire>/<name> for EventSource,
GET /captures (JSON), GET / (a page). Ctrl-C stops it (exit 0); bad options or
a port in use: one line, exit 2."""


def add_command(sub) -> None:
    """Add ``serve`` to the CLI's subparsers."""
    from ...wires import ENTRIES
    from . import BODY_TIMEOUT_S, DEFAULT_HOST, DEFAULT_PORT, MAX_BODY

    paths = "\n".join(f"  {entry.method} {entry.route}" for entry in ENTRIES.values())
    paths += "".join(
        f"\n  GET {entry.resume.route}?stream=true&{entry.resume.after}=<{entry.resume.point_field}>"
        f" (a stored stream, after a point)"
        for entry in ENTRIES.values() if entry.resume is not None)
    parser = sub.add_parser("serve", help="serve the captures over HTTP at the providers' paths",
                            description=DESCRIPTION.format(paths=paths),
                            formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--host", default=DEFAULT_HOST, help=f"default {DEFAULT_HOST}")
    parser.add_argument("--port", type=_port, default=DEFAULT_PORT,
                        help=f"default {DEFAULT_PORT}; 0 picks a free one")
    parser.add_argument("--speed", default="1",
                        help="1 recorded timing (default), 2 twice as fast, or instant")
    parser.add_argument("--fault", action="append", default=[], metavar="NAME:ARG",
                        help="a fault for every request that names none (repeatable); "
                             "NAME:ARG@first breaks only each client's first request")
    parser.add_argument("--capture", default=None, metavar="NAME",
                        help="answer requests that name no capture with this one")
    parser.add_argument("--dir", type=Path, default=None,
                        help="serve the captures under DIR (WIRE/NAME.sse) instead of the corpus")
    parser.add_argument("--max-body", type=int, default=MAX_BODY, metavar="BYTES",
                        help=f"a larger request body gets 413 (default {MAX_BODY:,}: 1 MiB)")
    parser.add_argument("--body-timeout", type=float, default=BODY_TIMEOUT_S,
                        metavar="SECONDS", help="a request body not all there by then gets "
                                                f"408 (default {BODY_TIMEOUT_S:g})")
    parser.set_defaults(run=run)


def _port(text: str) -> int:
    try:
        port = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a port number: {text!r}") from None
    if not 0 <= port <= 65535:
        raise argparse.ArgumentTypeError(f"a port is 0 to 65535, not {port}")
    return port


def run(args: argparse.Namespace) -> int:
    """Start the server in the foreground; 2 with one line when it cannot start."""
    from .background import StartError, base_url, bind, settings_for
    from .background import run as serve_forever

    try:
        settings = settings_for(speed=args.speed, faults=args.fault, capture=args.capture,
                                root=args.dir, max_body=args.max_body,
                                body_timeout=args.body_timeout)
        sock = bind(args.host, args.port)
    except StartError as exc:
        print(f"lesson-lib: serve: {exc}", file=sys.stderr)
        return 2
    print(f"lesson-lib: serving {len(settings.corpus)} captures at {base_url(sock)} "
          "(Ctrl-C stops)", file=sys.stderr, flush=True)
    try:
        serve_forever(settings, sock)
    except KeyboardInterrupt:
        pass
    finally:
        sock.close()
    return 0
