"""The station order: no import in `lesson_lib` runs upstream against the river.

    capture < sse < wires < accumulate = partial_json = tool_calls < turn < breaks < draw < views

A module may import its own station and any station upstream of it, never
one downstream. The accumulators, the partial-JSON parser and the tool-call
layer are one level (lessons 2 and 3 feed each other: an accumulator hands
tool input to the parser). The side rooms (exercises, solutions, course,
cli) may import anything, and no station imports them. Every import counts,
at the top of a module, inside a function or for types only (`import_graph`).

The package is not laid out by station yet, so `STATION_OF` says, one line
per top-level module or package, which station each belongs to; a module
missing from it fails the test. When the layout moves to one folder per
station, its lines go.
"""

from __future__ import annotations

from functools import cache

from import_graph import PACKAGE
from import_graph import import_graph as _import_graph

import_graph = cache(_import_graph)     # read once for the three rules

# Upstream first. Stations on one level may import each other.
LEVELS: tuple[tuple[str, ...], ...] = (
    ("capture",),
    ("sse",),
    ("wires",),
    ("accumulate", "partial_json", "tool_calls"),
    ("turn",),
    ("breaks",),
    ("draw",),
    ("views",),
)
SIDE_ROOMS = ("exercises", "solutions", "course", "cli")
RANK = {station: rank for rank, level in enumerate(LEVELS) for station in level}
RANK.update({room: len(LEVELS) for room in SIDE_ROOMS})

# Module (or package, for all its modules) -> its station, named from `lesson_lib`.
STATION_OF = {
    "": "cli",                        # lesson_lib itself: the map of the package
    "__main__": "cli",
    "diagnostics": "capture",         # the one diagnostic type every station reports with
    "captures": "capture",
    "capture_writer": "capture",
    "record": "capture",
    "redact": "capture",      # record keeps no key on disk
    "replay": "capture",
    "bedrock_replay": "capture",      # boto3 in front of a Bedrock capture, offline
    "sse": "sse",
    "framing": "sse",
    "eventstream": "sse",             # Bedrock's binary frames
    "bedrock_frames": "sse",          # ... read as events
    "wire_events": "wires",
    "wires": "wires",
    "stream_end": "wires",            # how a stream ended: its wire's terminal and errors
    "event_table": "wires",
    "accumulate": "accumulate",
    "naive_handler": "accumulate",
    "checkpoints": "accumulate",      # checkpoint copies of the accumulators' and calls' logs
    "partial_json": "partial_json",
    "tool_calls": "tool_calls",
    "turn": "turn",
    "tools": "turn",
    "budget": "breaks",
    "faults": "breaks",
    "fault_save": "breaks",
    "fault_visibility": "breaks",
    "recovery": "breaks",
    "resume": "breaks",
    "retry": "breaks",
    "sdk_close": "breaks",
    "watchdog": "breaks",
    "draw": "draw",
    "live": "draw",       # lesson 6: the live loop, beside the drawing it feeds
    "views": "views",
    "exercises": "exercises",
    "solutions": "solutions",
    "course": "course",
    "environment": "course",
    "learner": "course",
    "cheat_sheet": "course",
    "cli": "cli",
    "json_text": "capture",   # JSON text at any depth: the CLI, the turn summary and views share it
    "validate": "cli",
    "serve": "cli",
}

# Upstream imports there are today, each with why it stays for now. An entry that
# no longer matches an import fails the test, so this list only shrinks.
KNOWN_UPSTREAM = {
    ("captures", "sse"): "`Capture.events` decodes the body with the recorded chunk timing, "
                         "so every lesson can start from a capture (issue 17 moves decoding "
                         "into sight: lesson 1 names `sse`)",
    ("captures", "eventstream"): "the same, for Bedrock's binary frames",
    ("captures", "bedrock_frames"): "the same, for Bedrock's binary frames read as events",
    ("captures", "wire_events"): "`detect_wire` tells a bare Gemini body by its records' type, "
                                 "named once in `wire_events`",
    ("record", "stream_end"): "`record` reports whether the recorded stream ended properly "
                              "(its exit code); it is the CLI's `record` command's engine",
    ("record", "wire_events"): "the same: it reads the recorded stream's end",
    ("fault_save", "learner"): "a faulted capture is kept in the learner's folder, whose rule "
                               "(`learner.learner_folder`) lives with the course",
}


def station(module: str) -> str | None:
    """The station of a `lesson_lib` module: the line of its longest listed prefix."""
    name = module.removeprefix("lesson_lib").removeprefix(".")
    parts = name.split(".") if name else []
    for n in range(len(parts), -1, -1):
        found = STATION_OF.get(".".join(parts[:n]))
        if found is not None and (n or not parts):
            return found
    return None


def upstream_imports(graph: dict[str, set[str]], station_of=station
                     ) -> dict[tuple[str, str], str]:
    """Every import that runs upstream: (importer, imported) -> the two stations."""
    out = {}
    for module, targets in graph.items():
        mine = station_of(module)
        if mine is None or mine in SIDE_ROOMS:
            continue
        for target in targets:
            theirs = station_of(target)
            if theirs is not None and RANK[theirs] > RANK[mine]:
                out[(module, target)] = f"{mine} imports {theirs}"
    return out


def _short(pair: tuple[str, str]) -> tuple[str, str]:
    return tuple(m.removeprefix("lesson_lib.") for m in pair)  # type: ignore[return-value]


# -- the rules ------------------------------------------------------------------------


def test_every_module_has_a_station():
    graph = import_graph()
    assert len(graph) > 40
    missing = sorted(m for m in graph if station(m) is None)
    assert missing == [], ("add a line to STATION_OF for each", missing)
    assert set(STATION_OF.values()) <= set(RANK)


def test_every_line_of_the_table_names_a_module():
    tops = {m.removeprefix("lesson_lib").removeprefix(".").split(".")[0] for m in import_graph()}
    assert sorted(set(STATION_OF) - tops) == []


def test_no_import_runs_upstream():
    found = {_short(pair): why for pair, why in upstream_imports(import_graph()).items()}
    unexplained = {pair: why for pair, why in found.items() if pair not in KNOWN_UPSTREAM}
    assert unexplained == {}
    # A known one that is gone goes from the list too.
    assert sorted(set(KNOWN_UPSTREAM) - set(found)) == []


# -- the checker itself ------------------------------------------------------------------


def test_the_checker_finds_an_upstream_import_and_only_that():
    stations = {"p.a": "sse", "p.b": "turn", "p.c": "turn", "p.x": "exercises"}
    graph = {"p.a": {"p.b"}, "p.b": {"p.a", "p.c"}, "p.c": {"p.x"}, "p.x": {"p.a", "p.b"}}
    assert upstream_imports(graph, stations.get) == {
        ("p.a", "p.b"): "sse imports turn", ("p.c", "p.x"): "turn imports exercises"}


def test_one_level_may_import_itself_and_the_side_rooms_anything():
    stations = {"p.acc": "accumulate", "p.pj": "partial_json", "p.cli": "cli",
                "p.v": "views", "p.cap": "capture"}
    graph = {"p.acc": {"p.pj"}, "p.pj": {"p.acc"}, "p.cli": {"p.v", "p.cap"}, "p.v": {"p.cap"}}
    assert upstream_imports(graph, stations.get) == {}


def test_a_module_s_station_is_its_longest_listed_prefix():
    assert station("lesson_lib") == "cli"
    assert station("lesson_lib.turn.adapters.base") == "turn"
    assert station("lesson_lib.wires.chat") == "wires"
    assert station("lesson_lib.nowhere") is None


def test_function_level_and_type_only_imports_count(tmp_path):
    from import_graph import import_graph as graph_of
    pkg = tmp_path / "lesson_lib"
    pkg.mkdir()
    (pkg / "__init__.py").write_text("")
    (pkg / "sse.py").write_text("from typing import TYPE_CHECKING\n"
                                "if TYPE_CHECKING:\n    from .turn import T\n")
    (pkg / "wires.py").write_text("def f():\n    from . import views\n")
    (pkg / "turn.py").write_text("T = 1\n")
    (pkg / "views.py").write_text("")
    found = upstream_imports(graph_of(pkg))
    assert set(found) == {("lesson_lib.sse", "lesson_lib.turn"),
                          ("lesson_lib.wires", "lesson_lib.views")}
    assert PACKAGE.name == pkg.name
