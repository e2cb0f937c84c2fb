"""`turn` and `final` agree on every broken stream: a stream `final` rejects is never a
`completed` turn, and `completed` never comes with an ``error:`` line.

Every capture of the corpus and the reference captures (on the wires the
library reads) is broken by every fault of `lesson_lib.breaks.faults`, and by three
breaks the lab has no button for: bytes left after the terminal event (an
unfinished event, or a byte that is no event at all), an
event lost on the way, and a payload that is not a JSON object. Event faults
are applied at a few evenly spaced events and cuts at a few evenly spaced
offsets, the same ones on every run, so the matrix stays small enough to run
with the suite.
"""

from __future__ import annotations

import contextlib
import io
import json
from pathlib import Path

import pytest

from lesson_lib import wires
from lesson_lib.breaks import faults
from lesson_lib.capture.captures import Capture, corpus, from_bytes, reference_corpus
from lesson_lib.cli.commands import main
from lesson_lib.wires.wire_events import parse_all

CAPTURES = [c for c in corpus() + reference_corpus()
            if c.status < 300 and c.events and c.wire in wires.WIRES]
EVENT_FAULTS = (faults.inject_error, faults.corrupt_json, faults.duplicate, faults.swap)
SAMPLES = 4          # events (and cut offsets) per capture and fault


def spread(n: int, k: int = SAMPLES) -> list[int]:
    """`k` evenly spaced indexes into `n` things (all of them when fewer)."""
    return sorted({(i * n) // k for i in range(k)} | {n - 1}) if n else []


def rebuilt(cap: Capture, body: bytes, suffix: str) -> Capture:
    return from_bytes(body, name=f"{cap.name}.{suffix}",
                      sidecar={"wire": cap.wire, "request": cap.sidecar.get("request")})


def trailing(cap: Capture) -> Capture:
    """An event's worth of bytes after the terminal, never finished by a blank line."""
    return rebuilt(cap, cap.body + b'data: {"x":1}', "trailing")


def junk(cap: Capture) -> Capture:
    """One byte after the terminal that is no event at all (not even a field name)."""
    return rebuilt(cap, cap.body + b"x", "junk")


def dropped(cap: Capture, index: int) -> Capture:
    """Event `index` lost on the way (a proxy that drops a line)."""
    sse = cap.events[index]
    return rebuilt(cap, cap.body[:sse.start] + cap.body[sse.end:], "dropped")


def not_an_object(cap: Capture, index: int) -> Capture | None:
    """Event `index`'s data replaced by a JSON array: JSON, but no payload of any wire."""
    sse = cap.events[index]
    raw = cap.body[sse.start:sse.end]
    at = raw.find(b"data:")
    if at < 0:
        return None
    end = min((i for i in (raw.find(b"\n", at), raw.find(b"\r", at)) if i >= 0),
              default=len(raw))
    new = raw[:at] + b"data: [1]" + raw[end:]
    return rebuilt(cap, cap.body[:sse.start] + new + cap.body[sse.end:], "not-object")


def mutations(cap: Capture):
    """(what, broken capture) for every fault, at the sampled places."""
    yield "trailing", trailing(cap)
    yield "junk", junk(cap)
    for name, fault in (("drop_terminal", faults.drop_terminal),
                        ("split_character", faults.split_character)):
        with contextlib.suppress(faults.FaultError):
            yield name, fault(cap)
    if all(t is not None for t in cap.chunk_times):
        yield "stall", faults.stall(cap, 1000)
    for offset in spread(len(cap.body)):
        yield f"cut_at {offset}", faults.cut_at(cap, offset)
    n = len(parse_all(cap.events))
    for index in spread(n):
        yield f"dropped {index}", dropped(cap, index)
        broken = not_an_object(cap, index)
        if broken is not None:
            yield f"not an object {index}", broken
        for fault in EVENT_FAULTS:
            with contextlib.suppress(faults.FaultError):
                yield f"{fault.__name__} {index}", fault(cap, index)


def run(*argv: str) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        code = main(list(argv))
    return code, out.getvalue(), err.getvalue()


def verdicts(tmp: Path, cap: Capture) -> tuple[int, int, str | None, str]:
    """`final`'s exit code, `turn`'s, the turn's outcome, and what `turn` printed on stderr."""
    path = tmp / "m.sse"
    path.write_bytes(cap.body)
    (tmp / "m.json").write_text(json.dumps(cap.sidecar))
    final_code, _, _ = run("final", str(path))
    turn_code, out, err = run("turn", str(path), "--json")
    outcome = json.loads(out).get("outcome") if out else None    # exit 2: an error object
    return final_code, turn_code, outcome, err


@pytest.mark.parametrize("capture", CAPTURES, ids=[c.key for c in CAPTURES])
def test_turn_and_final_agree_on_every_fault(tmp_path, capture):
    wrong = []
    for what, broken in mutations(capture):
        final_code, turn_code, outcome, err = verdicts(tmp_path, broken)
        if turn_code != final_code or (outcome == "completed" and ": error: " in err):
            wrong.append((what, final_code, turn_code, outcome, err[-300:]))
    assert not wrong, wrong


def test_the_matrix_covers_every_wire_and_fault():
    assert {c.wire for c in CAPTURES} >= {"anthropic-messages", "openai-responses",
                                           "openai-chat"}
    kinds = {what.split()[0] for cap in CAPTURES[:10] for what, _ in mutations(cap)}
    assert kinds >= {"trailing", "junk", "drop_terminal", "cut_at", "dropped", "inject_error",
                     "corrupt_json", "duplicate", "swap", "stall"}
