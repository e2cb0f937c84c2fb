"""Two runs of ``make bench`` side by side: which figures moved, and by how much.

    python bench/compare.py bench/results.json /tmp/new.json [--tolerance 0.10]

Every row of both files is matched by what it measures (its bench, case,
size, implementation, wire, route: every field that is not a figure), and
each of its figures is compared:

- a ratio of the SDK's time to ours (``ratio``, ``ratio_to_ours``,
  ``speedup``): higher is better for us (on a bench that times several
  implementations, each row's ratio is its time over ours: our own row is
  judged by its growth only, the others by their ratio only);
- a growth (``ours_x2``, ``time_x2``, ``memory_x2``, ``growth``): what a
  doubling of the input cost, lower is better;
- the live loop's ``ratio`` is our time over a bare socket's (the price of
  the stations on a live connection): lower is better there.

A figure that moved against us by more than the tolerance is marked
``worse``, one that moved for us ``better``. Rows found in one file only are
listed as such. The exit status is 1 when any figure is worse, so a script
can stop on it; on a shared machine, rerun both before calling it a
regression.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any, NamedTuple

HIGHER_IS_BETTER = ("ratio", "ratio_to_ours", "speedup")
LOWER_IS_BETTER = ("ours_x2", "time_x2", "memory_x2", "growth")
# Everything a bench records about a run rather than about what it ran.
MEASURES = frozenset(HIGHER_IS_BETTER + LOWER_IS_BETTER + (
    "seconds", "ours_s", "sdk_s", "ours_wall_s", "sdk_wall_s", "sdk_x2", "baseline_s",
    "baseline_sampled_every", "peak_mb", "rounds", "goal_x2", "bytes", "raw_s",
    "us_per_delta"))
# Benches whose ratio is ours over another's time, not another's over ours.
OURS_OVER_THEIRS = frozenset({"live"})
OURS = "lesson_lib"


class Change(NamedTuple):
    """One figure of one row in both runs."""

    row: str
    figure: str
    before: float
    after: float
    verdict: str     # "worse", "better" or "same"

    @property
    def moved(self) -> float:
        """The relative change, after against before."""
        return self.after / self.before - 1 if self.before else 0.0


def _hashable(value: Any) -> Any:
    return tuple(value) if isinstance(value, list) else value


def row_key(bench: str, row: dict) -> tuple:
    """What a row measures: its bench and every field that is not a figure."""
    return (bench,) + tuple(sorted((k, _hashable(v)) for k, v in row.items()
                                   if k not in MEASURES and k != "bench"))


def label(key: tuple) -> str:
    """A row's key as one readable line."""
    bench, *fields = key
    return bench + ": " + ", ".join(str(v) for _, v in fields)


def rows_by_key(results: dict) -> dict[tuple, dict]:
    """Every row of a results file, by what it measures."""
    return {row_key(bench, row): row
            for bench, rows in results.get("benches", {}).items() for row in rows}


def _verdict(bench: str, figure: str, before: float, after: float, tolerance: float) -> str:
    moved = after / before - 1 if before else 0.0
    if figure in LOWER_IS_BETTER or (bench in OURS_OVER_THEIRS and figure == "ratio"):
        moved = -moved
    if moved < -tolerance:
        return "worse"
    return "better" if moved > tolerance else "same"


def _figures(key: tuple) -> tuple[str, ...]:
    """The figures to compare on a row. A row of one implementation among several (the
    decoder and partial-JSON benches) says its time over ours, always 1.0 on our own row,
    and its own growth: our row is judged by its growth, another's by its ratio."""
    fields = dict(key[1:])
    implementation = fields.get("impl", fields.get("implementation"))
    if implementation is None:
        return HIGHER_IS_BETTER + LOWER_IS_BETTER
    return LOWER_IS_BETTER if implementation == OURS else HIGHER_IS_BETTER


def compare(before: dict, after: dict, tolerance: float = 0.10
            ) -> tuple[list[Change], list[str], list[str]]:
    """The figures of the rows both runs have, and the rows only one has."""
    old, new = rows_by_key(before), rows_by_key(after)
    changes = []
    for key in (k for k in old if k in new):
        for figure in _figures(key):
            a, b = old[key].get(figure), new[key].get(figure)
            if isinstance(a, int | float) and isinstance(b, int | float):
                changes.append(Change(label(key), figure, a, b,
                                      _verdict(key[0], figure, a, b, tolerance)))
    only_before = [label(k) for k in old if k not in new]
    only_after = [label(k) for k in new if k not in old]
    return changes, only_before, only_after


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("before", type=Path)
    parser.add_argument("after", type=Path)
    parser.add_argument("--tolerance", type=float, default=0.10)
    args = parser.parse_args(argv)
    changes, only_before, only_after = compare(
        json.loads(args.before.read_text()), json.loads(args.after.read_text()), args.tolerance)
    width = max((len(c.row) for c in changes), default=10)
    for c in changes:
        print(f"{c.row:<{width}}  {c.figure:<13} {c.before:>9.2f} -> {c.after:>9.2f}"
              f"  {c.moved:>+7.0%}  {c.verdict}")
    for name, rows in (("only in " + str(args.before), only_before),
                       ("only in " + str(args.after), only_after)):
        for row in rows:
            print(f"{row}  ({name})")
    worse = [c for c in changes if c.verdict == "worse"]
    print(f"\n{len(changes)} figures: {len(worse)} worse, "
          f"{sum(c.verdict == 'better' for c in changes)} better, beyond {args.tolerance:.0%}")
    return 1 if worse else 0


if __name__ == "__main__":
    sys.exit(main())
