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

PENDING_WIRES = {
}

_ALL = ("*",)
PENDING: dict[str, tuple[tuple[str, ...], str]] = {}

PENDING_FIELDS: dict[str, tuple[set[str], str]] = {}


def reason(key: str, test: str = "*") -> str | None:
    """Why the reference capture `key` (``wire/name``) is skipped in `test`, or None."""
    wire = key.split("/", 1)[0]
    if wire in PENDING_WIRES:
        return PENDING_WIRES[wire]
    tests, why = PENDING.get(key, ((), ""))
    return why if "*" in tests or test in tests else None


def readable(captures: Iterable[Any], test: str = "*") -> list[Any]:
    """The captures a test that loops over them inside one test function can read now."""
    return [c for c in captures if reason(c.key, test) is None]
