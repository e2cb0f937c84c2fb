"""The station order: no import in `lesson_lib` runs upstream against the river.

    diagnostics < capture < sse < wires < accumulate = partial_json = tool_calls
            < turn < breaks < draw = live < views

A module may import its own station and any station upstream of it, never
one downstream. The accumulators, the partial-JSON parser and the tool-call
layer are one level (lessons 2 and 3 feed each other: an accumulator hands
tool input to the parser); drawing and the live loop of lesson 6 are one
level too. `diagnostics` (the one `Diagnostic` type) heads the river and imports
nothing else, so every station can report with it without importing a station
upstream of itself. The side rooms (exercises, solutions, course, cli) may import
anything, and no station imports them. Every import counts, at the top of a
module, inside a function or for types only (`import_graph`).

The layout is the table: a module's station is the top-level package it sits
in (`lesson_lib.breaks.budget` is in `breaks`). The top level holds nothing but
the stations, the side rooms, the package's map (`__init__`) and
``python -m lesson_lib`` (`__main__`).
"""

from __future__ import annotations

import ast
from functools import cache

from import_graph import PACKAGE, module_names
from import_graph import import_graph as _import_graph
from source_ast import parse as parse_source

import_graph = cache(_import_graph)     # read once for the three rules

# Upstream first. Stations on one level may import each other.
LEVELS: tuple[tuple[str, ...], ...] = (
    ("diagnostics",),
    ("capture",),
    ("sse",),
    ("wires",),
    ("accumulate", "partial_json", "tool_calls"),
    ("turn",),
    ("breaks",),
    ("draw", "live"),
    ("views",),
)
SIDE_ROOMS = ("exercises", "solutions", "course", "cli")
RANK = {station: rank for rank, level in enumerate(LEVELS) for station in level}
RANK.update({room: len(LEVELS) for room in SIDE_ROOMS})

# The top level's two modules, which belong to no station: the map, and the command line's door.
ROOT_MODULES = {"lesson_lib": "cli", "lesson_lib.__main__": "cli"}

# Upstream imports there are today, each with why it stays for now. An entry that
# no longer matches an import fails the test, so this list only shrinks.
KNOWN_UPSTREAM = {
    ("capture.captures", "sse.decoder"): "`Capture.events` decodes the body with the recorded chunk timing, "
                         "so every lesson can start from a capture (issue 17 moves decoding "
                         "into sight: lesson 1 names `sse`)",
    ("capture.captures", "sse.eventstream"): "the same, for Bedrock's binary frames",
    ("capture.captures", "sse.bedrock_frames"): "the same, for Bedrock's binary frames read as events",
    ("capture.captures", "wires"): "a capture's wire, framing, decoder, body suffix and reference "
                         "folder are its wire's registry entry's (`wires.ENTRIES`), the one list "
                         "of wires; a bare body's wire is told by the wire station "
                         "(`wires.detect_wire`)",
    ("capture.record", "wires.stream_end"): "`record` reports whether the recorded stream ended properly "
                              "(its exit code); it is the CLI's `record` command's engine",
    ("capture.replay", "wires"): "replay puts the wire's official SDK in front of a capture: the "
                       "wire's registry entry names how (its SDK route)",
    ("capture.replay", "wires.entry"): "the same: a route's parts are named and resolved there",
    ("capture.record", "wires"): "`record` offers the wires whose registry entry names a record "
                       "route, and goes through it",
    ("capture.record", "wires.entry"): "the same: a route's parts are named and resolved there",
    ("capture.record", "wires.wire_events"): "the same: it reads the recorded stream's end",
    ("capture.record_boto3", "wires.bedrock"): "Bedrock's record route: which of the keys the "
                             "route names is a bearer token is the wire's fact",
    ("wires.event_table", "views.event_table"): "lesson 1's table moved to the views; lessons 1 "
                              "and 2 import it by its old name, which only re-exports it (goes "
                              "when the notebooks import `lesson_lib.views.event_table`)",
    ("breaks.save", "course.learner"): "a faulted capture is kept in the learner's folder, whose rule "
                               "(`course.learner.learner_folder`) lives with the course",
}


def station(module: str) -> str | None:
    """The station of a `lesson_lib` module: the top-level package it sits in."""
    if module in ROOT_MODULES:
        return ROOT_MODULES[module]
    top = module.removeprefix("lesson_lib.").split(".")[0]
    return top if module.startswith("lesson_lib.") and top in RANK else None


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
    assert missing == [], ("put each in its station's folder", missing)


def test_the_top_level_is_the_stations_and_the_side_rooms():
    entries = {p.stem for p in PACKAGE.iterdir() if p.name != "__pycache__"}
    assert entries == set(RANK) | {"__init__", "__main__"}
    for name in RANK:
        assert (PACKAGE / name / "__init__.py").is_file(), name


def test_no_import_runs_upstream():
    found = {_short(pair): why for pair, why in upstream_imports(import_graph()).items()}
    unexplained = {pair: why for pair, why in found.items() if pair not in KNOWN_UPSTREAM}
    assert unexplained == {}
    # A known one that is gone goes from the list too.
    assert sorted(set(KNOWN_UPSTREAM) - set(found)) == []


def test_the_diagnostic_s_home_imports_nothing_of_lesson_lib():
    graph = import_graph()
    home = {m: sorted(t for t in targets if t.startswith("lesson_lib.")
                      and station(t) != "diagnostics")
            for m, targets in graph.items() if station(m) == "diagnostics"}
    assert home and all(found == [] for found in home.values()), home


def test_the_decoders_start_from_bytes_not_from_the_capture_station():
    # The framing station is sans-IO: it reads chunks, never a `Capture`, the corpus or the
    # SDK replays, and reports with the head's `Diagnostic`.
    graph = import_graph()
    found = sorted((module, target) for module, targets in graph.items()
                   if station(module) == "sse"
                   for target in targets if station(target) == "capture")
    assert found == []


def test_the_wire_station_needs_neither_pandas_nor_a_capture():
    # One home per wire fact is data and small functions: lesson 1's pandas table is a view,
    # and the coverage table reads the corpus in the course's room. `wires.event_table`
    # only re-exports the view under its old name (KNOWN_UPSTREAM).
    graph = import_graph()
    old_name = "lesson_lib.wires.event_table"
    found = sorted((module, target) for module, targets in graph.items()
                   if station(module) == "wires" and module != old_name
                   for target in targets if station(target) in ("capture", "views"))
    assert found == []
    assert graph[old_name] == {"lesson_lib.views.event_table"}
    pandas = sorted(module for module, path in module_names(PACKAGE).items()
                    if station(module) == "wires" and module != old_name
                    and "pandas" in top_level_imports(path))
    assert pandas == []


def top_level_imports(path) -> set[str]:
    """The top-level names of every package a module imports (``pandas`` for
    ``import pandas.api``), relative imports left out."""
    found = set()
    for node in ast.walk(parse_source(path.read_text())):
        if isinstance(node, ast.Import):
            found |= {alias.name.split(".")[0] for alias in node.names}
        elif isinstance(node, ast.ImportFrom) and not node.level:
            found.add((node.module or "").split(".")[0])
    return found


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


def test_a_module_s_station_is_its_top_level_package():
    assert station("lesson_lib") == "cli"
    assert station("lesson_lib.turn.adapters.base") == "turn"
    assert station("lesson_lib.wires.chat") == "wires"
    assert station("lesson_lib.breaks") == "breaks"
    assert station("lesson_lib.nowhere") is None
    assert station("lesson_lib.nowhere.x") is None
    assert station("other.turn") is None


def test_function_level_and_type_only_imports_count(tmp_path):
    from import_graph import import_graph as graph_of
    pkg = tmp_path / "lesson_lib"
    pkg.mkdir()
    (pkg / "__init__.py").write_text("")
    (pkg / "capture.py").write_text("from typing import TYPE_CHECKING\n"
                                    "if TYPE_CHECKING:\n    from .turn import T\n")
    (pkg / "wires.py").write_text("def f():\n    from . import views\n")
    (pkg / "turn.py").write_text("T = 1\n")
    (pkg / "views.py").write_text("")
    found = upstream_imports(graph_of(pkg))
    assert set(found) == {("lesson_lib.capture", "lesson_lib.turn"),
                          ("lesson_lib.wires", "lesson_lib.views")}
    assert PACKAGE.name == pkg.name
