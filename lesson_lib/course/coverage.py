"""Which of the official SDKs' stream types the corpus shows: the cheat sheet's coverage table.

`lesson_lib.wires.sdk_unions` reads the SDKs' type unions (`sdk_types`) and
says which members an event shows; `seen_in` and `sightings` read a corpus
(the project's captures, and the shared reference captures when present) and
say where each one was seen at least once. `rows` puts them together with
`NOT_IN_CORPUS` (each type no capture shows, with why) and `markdown` renders
the table ``scripts/build_cheat_sheet.py`` writes under the cheat sheet.

A new SDK version that adds a type makes the table's test fail until the
type has a capture or a reason: the table keeps itself true.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

from ..capture.captures import Capture
from ..wires.sdk_unions import NOT_IN_CORPUS, READERS, UNIONS, Union, sdk_types, shown_by
from ..wires.wire_events import parse_all

__all__ = ["HEADING", "NOT_IN_CORPUS", "OURS", "READERS", "REFERENCE", "UNIONS", "Row", "Union",
           "markdown", "rows", "sdk_types", "seen_in", "sightings"]

OURS, REFERENCE = "ours", "reference"
HEADING = "## What the corpus shows of each SDK type union"


def seen_in(capture: Capture) -> set[tuple[str, str]]:
    """The (union, type) pairs one capture shows at least once."""
    if capture.wire not in READERS or capture.status >= 300:
        return set()
    return shown_by(parse_all(capture.events), capture.wire)


def sightings(ours: Iterable[Capture], reference: Iterable[Capture] = ()
              ) -> dict[tuple[str, str], set[str]]:
    """Every (union, type) the corpus shows, with where: ``ours`` and/or ``reference``."""
    found: dict[tuple[str, str], set[str]] = {}
    for where, caps in ((OURS, ours), (REFERENCE, reference)):
        for capture in caps:
            for pair in seen_in(capture):
                found.setdefault(pair, set()).add(where)
    return found


@dataclass(frozen=True)
class Row:
    """One union in the table: its members by where the corpus shows them."""

    union: Union
    ours: tuple[str, ...]            # shown by the project's own captures
    reference_only: tuple[str, ...]  # shown only by the shared reference captures
    missing: tuple[tuple[str, str], ...]   # (type, why no capture shows it)
    beyond_sdk: tuple[str, ...]      # shown by the corpus, unknown to the SDK's union

    @property
    def total(self) -> int:
        return len(self.ours) + len(self.reference_only) + len(self.missing)

    @property
    def covered(self) -> int:
        return len(self.ours) + len(self.reference_only)


def rows(types: dict[str, frozenset[str]], seen: dict[tuple[str, str], set[str]]) -> list[Row]:
    """The table: for each union, its members split by where they are seen (a member no
    capture shows carries its `NOT_IN_CORPUS` reason, ``"?"`` when there is none)."""
    out = []
    for union in UNIONS:
        members = sorted(types.get(union.name, ()))
        where = {m: seen.get((union.name, m), set()) for m in members}
        beyond = sorted(t for (u, t) in seen if u == union.name and t not in where)
        out.append(Row(
            union,
            tuple(m for m in members if OURS in where[m]),
            tuple(m for m in members if where[m] == {REFERENCE}),
            tuple((m, NOT_IN_CORPUS.get((union.name, m), "?")) for m in members
                  if not where[m]),
            tuple(beyond)))
    return out


def markdown(table: list[Row]) -> str:
    """The coverage table as Markdown, one line per union."""
    def code(names: Iterable[str]) -> str:
        return ", ".join(f"`{n}`" for n in names) or "none"

    lines = [HEADING, "",
             "Read from the installed SDKs' type unions and the captures (the project's "
             "own, and the shared reference captures); `tests/test_coverage.py` keeps it "
             "true. Shown by a reference capture only: the project has no capture of its "
             "own yet.", "",
             "| union | shown | by our captures | by reference captures only | "
             "not in the corpus, and why | seen, not in the SDK's union |",
             "|---|---|---|---|---|---|"]
    for row in table:
        missing = "<br>".join(f"`{m}`: {why}" for m, why in row.missing) or "none"
        lines.append(f"| {row.union.wire} {row.union.what} (`{row.union.source}`) | "
                     f"{row.covered}/{row.total} | {code(row.ours)} | "
                     f"{code(row.reference_only)} | {missing} | {code(row.beyond_sdk)} |")
    return "\n".join(lines) + "\n"
