"""Reference recordings the course does not read yet, by name, each with its issue.

The shared reference set (`../shared/reference-captures/`) grew ahead of the
course: it holds two wires the course does not read yet and recordings of
wire features it does not handle yet. A test that reads every reference
capture skips these, and pytest prints the reason; when the issue lands, its
lines here go, and the tests read the recordings again.

- `PENDING_WIRES`: a whole folder's wire (every test skips its recordings).
- `PENDING`: one recording, in the tests named with it (``"*"``: every test).
- `PENDING_FIELDS`: envelope fields real recordings carry that the course's own
  captures do not yet (the "at least as messy" tests leave them out until then).
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

ISSUE_19 = "issue 19 (a new wire is one adapter)"
ISSUE_21 = "issue 21 (every event the SDKs know, and the ones they don't)"
ISSUE_32 = "issue 32 (a sixth wire: Gemini Interactions, as one registry entry)"

# Reference folders whose wire the course does not read yet, by folder name.
PENDING_WIRES: dict[str, str] = {}

_ALL = ("*",)
PENDING: dict[str, tuple[tuple[str, ...], str]] = {}

PENDING_FIELDS: dict[str, tuple[set[str], str]] = {}


def folder_of(capture: Any) -> str | None:
    """The reference folder a capture was read from (None for one built in memory)."""
    path = getattr(capture, "path", None)
    return path.parent.name if path is not None else None


def reason(capture: Any, test: str = "*") -> str | None:
    """Why the reference capture `capture` (a `Capture`, or its key ``wire/name``) is
    skipped in `test`, or None.

    A folder named in `PENDING_WIRES` is skipped with its issue; any other folder whose
    recordings no registered wire reads is skipped with its name, never read as a wire.
    """
    if isinstance(capture, str):
        key, folder, wire = capture, capture.split("/", 1)[0], capture.split("/", 1)[0]
    else:
        key, folder, wire = capture.key, folder_of(capture), capture.wire
    if folder in PENDING_WIRES:
        return PENDING_WIRES[folder]
    if wire in PENDING_WIRES:
        return PENDING_WIRES[wire]
    if not isinstance(capture, str) and wire is None:
        return (f"reference folder {folder!r}: no registered wire reads it "
                "(name it in tests/pending.py with its issue)")
    tests, why = PENDING.get(key, ((), ""))
    return why if "*" in tests or test in tests else None


def readable(captures: Iterable[Any], test: str = "*") -> list[Any]:
    """The captures a test that loops over them inside one test function can read now."""
    return [c for c in captures if reason(c, test) is None]
