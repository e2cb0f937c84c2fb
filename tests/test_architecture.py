"""The shape of the river: no import cycle, the views' own rules, builders outside.

The import graph is read from the source (`import_graph`, every import
counted); the station order itself is `test_layers`.
"""

from __future__ import annotations

import ast
import fnmatch
from pathlib import Path

from import_graph import PACKAGE, ROOT, find_cycle, import_graph, module_names
from source_ast import parse as parse_source

# -- the finder itself ------------------------------------------------------------------


def test_the_cycle_finder_finds_a_cycle_and_only_a_cycle():
    assert find_cycle({"a": ["b"], "b": ["c"], "c": ["a"]}) == ["a", "b", "c", "a"]
    assert find_cycle({"a": ["a"]}) == ["a", "a"]
    assert find_cycle({"a": ["b", "c"], "b": ["d"], "c": ["d"], "d": []}) is None   # a diamond
    assert find_cycle({"x": ["y"], "y": [], "p": ["q"], "q": ["r"], "r": ["q"]}) == ["q", "r", "q"]
    assert find_cycle({}) is None


def test_the_graph_counts_imports_inside_functions_and_for_types_only(tmp_path):
    pkg = tmp_path / "pkg"
    (pkg / "sub").mkdir(parents=True)
    (pkg / "__init__.py").write_text("from .a import A\n")                 # a re-export
    (pkg / "a.py").write_text("from typing import TYPE_CHECKING\n"
                              "if TYPE_CHECKING:\n    from .b import B\nA = 1\n")
    (pkg / "b.py").write_text("def f():\n    from . import a\n    return a\n")
    (pkg / "sub" / "__init__.py").write_text("")
    (pkg / "sub" / "c.py").write_text("import pkg.sub\nfrom ..a import A\nfrom pkg import b\n")
    graph = import_graph(pkg)
    assert graph == {"pkg": set(), "pkg.a": {"pkg.b"}, "pkg.b": {"pkg.a"},
                     "pkg.sub": set(), "pkg.sub.c": {"pkg.sub", "pkg.a", "pkg.b"}}
    assert find_cycle(graph) == ["pkg.a", "pkg.b", "pkg.a"]


# -- the rules --------------------------------------------------------------------------


def test_no_import_cycle_in_lesson_lib():
    graph = import_graph()
    assert len(graph) > 40 and "lesson_lib.partial_json.scanner" in graph
    assert find_cycle(graph) is None


VIEWS = "lesson_lib.views"
LESSON02 = "lesson_lib.exercises.lesson02"


def _view_importers() -> dict[str, set[str]]:
    return {module: {t for t in targets if t == VIEWS or t.startswith(VIEWS + ".")}
            for module, targets in import_graph().items()
            if not (module == VIEWS or module.startswith(VIEWS + "."))}


def test_lesson02_exercises_import_no_view():
    assert _view_importers()[LESSON02] == set()


def packages_found(root: Path, include: list[str]) -> list[str]:
    """What setuptools' package finder installs: folders with an ``__init__.py``, reached
    through packages only, whose dotted names match an `include` pattern. (Read here, not
    imported: Python 3.12+ venvs have no setuptools.)"""
    found, folders = [], [p for p in root.iterdir() if p.is_dir()]
    while folders:
        folder = folders.pop()
        if not (folder / "__init__.py").is_file():
            continue
        name = ".".join(folder.relative_to(root).parts)
        if any(fnmatch.fnmatchcase(name, pattern) for pattern in include):
            found.append(name)
        folders += [p for p in folder.iterdir() if p.is_dir()]
    return found


def test_the_package_finder_reading_finds_packages_only():
    found = packages_found(ROOT, ["lesson_lib*"])
    assert {"lesson_lib", "lesson_lib.turn", "lesson_lib.cli.serve"} <= set(found)
    assert "lesson_lib.__pycache__" not in found and "corpus" not in found
    assert "corpus" in packages_found(ROOT / "scripts", ["*"])


def test_the_corpus_builders_are_outside_lesson_lib():
    import tomllib

    builders = {p.stem for p in (ROOT / "scripts" / "corpus").glob("*.py")} - {"__init__"}
    assert {"anthropic_corpus", "chat_corpus", "responses_corpus", "writer"} <= builders
    assert not (PACKAGE / "construct").exists()
    assert not [p for p in PACKAGE.rglob("*.py") if p.stem in builders]
    find = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["setuptools"]
    installed = packages_found(ROOT, find["packages"]["find"]["include"])
    assert "lesson_lib" in installed and not [p for p in installed if "corpus" in p]
    for name, path in module_names(PACKAGE).items():
        tree = parse_source(path.read_text())
        named = {alias.name.split(".")[0] for node in ast.walk(tree)
                 if isinstance(node, ast.Import) for alias in node.names}
        named |= {(node.module or "").split(".")[0] for node in ast.walk(tree)
                  if isinstance(node, ast.ImportFrom) and not node.level}
        assert not named & {"corpus", "scripts"}, name


def test_views_do_not_reach_into_each_others_modules():
    """The slot view and the tool card share pieces through html, panes and replays,
    never through each other's module."""
    panes = {f"{VIEWS}.slot_view", f"{VIEWS}.tool_card"}
    graph = import_graph()
    reach = {m: targets & panes - {m} for m, targets in graph.items() if m.startswith(VIEWS + ".")}
    assert panes <= set(graph) and {m: t for m, t in reach.items() if t} == {}


# -- per-capture state lives on the shared replay -------------------------------------------


def identity_calls(source: str) -> list[int]:
    """The lines of `source` that call the builtin ``id`` (the key of a per-object cache)."""
    return [node.lineno for node in ast.walk(parse_source(source))
            if isinstance(node, ast.Call) and isinstance(node.func, ast.Name)
            and node.func.id == "id"]


def test_the_identity_finder_finds_a_call_and_only_a_call():
    source = "cache = {}\ndef f(c):\n    key = id(c)\n    ident = c.id\n    c.id(3)\n"
    assert identity_calls(source) == [3]


def test_no_view_keeps_a_cache_keyed_by_a_capture_s_id():
    """The views share one `replays.Replay` per capture; none keeps its own
    ``id(capture)``-keyed cache beside it."""
    views = PACKAGE / "views"
    found = {path.name: lines for path in sorted(views.rglob("*.py"))
             if (lines := identity_calls(path.read_text()))}
    assert (views / "replays.py").exists() and found == {}
