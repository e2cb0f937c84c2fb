"""How long a live read waits, and what counts as the stream moving on.

Every wait of an attempt has a limit, so that no server holds a turn forever:

- `HEADERS_S` (60 s): from sending the request to the response's headers. A
  real provider answers with its headers at once and streams the model's work
  after them; a minute of nothing is a server that will not answer.
- `PROGRESS_S` (60 s): between two pieces of *progress*, a wire event that is
  not a keep-alive. Anthropic's ``ping`` keeps an idle connection open and says
  nothing of the answer, so a ping every second does not keep a read alive;
  nor does one byte a second that never completes an event. The gaps of real
  streams are far shorter (`lesson_lib.breaks.watchdog` measures them), so a
  slow model does not trip it.
- `BUSY_S` (600 s): the progress limit while the stream itself says a long
  silence is normal (a thinking block or a reasoning item open, a server-side
  tool running: `watchdog.activity`), the official SDKs' own read timeout.

A whole turn can also have a deadline (`LiveTurn(deadline_s=)`, none by
default): past it the turn is cancelled, whatever it is waiting on.

The body's limit is the loop's stall watchdog: a stall is retried like any
dropped read, and a step whose last attempt it stopped ends the turn
``cancelled`` with reason ``watchdog`` (`watchdog_end`), never ``failed``: the
server said nothing wrong, the loop chose to stop waiting. A request whose
headers never came, or a refused request whose error body never came, is no
stream gone silent: it fails.

Pure: `Progress` is told what each chunk completed and the time, and says
when the read gives up and why; the loop does the waiting.
"""

from __future__ import annotations

from typing import Any

from ..breaks.watchdog import READ_TIMEOUT_MS, activity
from ..turn.ends import TurnEnd
from ..turn.outcome import arriving
from ..turn.reduce import TurnState
from ..wires import anthropic
from ..wires.wire_events import WireEvent

HEADERS_S = 60.0
PROGRESS_S = 60.0
BUSY_S = READ_TIMEOUT_MS / 1000.0

# The wire events that only keep a connection open (the wires that have one say it).
KEEPALIVES = frozenset({anthropic.PING})

# The code of the error a read the loop abandoned for one of these limits reports.
STALL = "stall"

# The content encodings the loop decodes (it asks for none: ``identity``).
DECODED = frozenset({"identity", "gzip", "deflate"})


def unreadable_encoding(header: str) -> str | None:
    """The first content coding in a ``content-encoding`` header the loop cannot decode,
    or None when it can read the body (no coding, or only `DECODED` ones)."""
    for coding in header.split(","):
        coding = coding.strip().lower()
        if coding and coding not in DECODED:
            return coding
    return None


def is_progress(event: WireEvent) -> bool:
    """Whether a wire event moves the answer on: any event but a keep-alive."""
    return event.type not in KEEPALIVES


class Progress:
    """The clock of one attempt's body: when the read gives up without progress.

    `limit_s` is the progress limit (None: no limit), `busy_s` the limit while
    the stream says it is busy. Times are the loop's clock, in seconds.
    """

    def __init__(self, wire: str, limit_s: float | None, now: float, *,
                 busy_s: float | None = BUSY_S) -> None:
        self.wire, self.limit_s, self.busy_s = wire, limit_s, busy_s
        self.last = now
        self.events: list[WireEvent] = []
        self.keepalives = 0         # since the last progress
        self.busy: str | None = None

    def saw(self, events: list[WireEvent], now: float) -> None:
        """The wire events one chunk completed, at `now`."""
        for event in events:
            self.events.append(event)
            if is_progress(event):
                self.last, self.keepalives, self.busy = now, 0, None
            else:
                self.keepalives += 1

    def due(self) -> float | None:
        """When the read gives up unless progress comes (None: never)."""
        limit = self.busy_s if self.busy is not None else self.limit_s
        return None if limit is None else self.last + max(limit, self.limit_s or 0.0)

    def expired(self, now: float) -> str | None:
        """At the due time: why the read gives up, or None to wait on (the stream says
        it is busy: the wait stretches to `busy_s`, once per silence)."""
        due = self.due()
        if due is None or now < due:
            return None
        if self.busy is None and self.busy_s is not None:
            self.busy = activity(self.events, self.wire)
            if self.busy is not None and now < (self.due() or now):
                return None
        pings = f" (only {self.keepalives} keep-alive pings)" if self.keepalives else ""
        doing = f" while {self.busy}" if self.busy else ""
        limit = max(self.busy_s if self.busy else 0.0, self.limit_s or 0.0)
        return (f"no progress for {limit:g} s{doing}{pings}: the stream stalled; the read "
                "was abandoned")


def watchdog_end(attempt: Any, state: TurnState) -> TurnEnd | None:
    """The end of a turn whose step's last attempt (`live.attempts.Attempt`) the stall
    watchdog stopped: a stream (headers in, 2xx) whose read was abandoned for want of
    progress. ``cancelled``, reason ``watchdog``, its detail saying why (`by`), what was
    arriving when the stream fell silent (`where`) and the step's attempts; None for any
    other end."""
    error = attempt.errors[-1] if attempt.errors else None
    if error is None or error.code != STALL or error.scope != "transport" \
            or attempt.status is None or attempt.status >= 300:
        return None
    cut = [b for b in state.blocks if b.step == attempt.step and not b.complete]
    if cut:
        where = arriving(cut[-1].kind)
    else:
        where = "before_first_byte" if attempt.first_byte is None else "streaming"
    return TurnEnd("cancelled", "watchdog", {"by": error.message, "where": where,
                                             "tools": [], "attempts": attempt.number})
