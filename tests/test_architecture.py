"""The shape of the river: no import arrow runs back up, views stay at the end, builders outside.

Read from the source with `ast`, not by importing, so that every import
counts: at the top of a module, inside a function, and under
``if TYPE_CHECKING:`` (a cycle "for types only" is still two modules that
each need the other to be understood). One kind of arrow is left out: a
package's ``__init__`` importing modules inside that package (it re-exports
its children; they never need it back unless they import it, which counts).
"""

from __future__ import annotations

import ast
import fnmatch
from collections.abc import Iterable, Mapping
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
PACKAGE = ROOT / "lesson_lib"


# -- the import graph ---------------------------------------------------------------


def module_names(package: Path) -> dict[str, Path]:
    """Every module of `package` by dotted name (a package is its ``__init__``)."""
    out = {}
    for path in sorted(package.rglob("*.py")):
        parts = list(path.relative_to(package.parent).with_suffix("").parts)
        if parts[-1] == "__init__":
            parts.pop()
        out[".".join(parts)] = path
    return out


def _resolve(importer: str, is_package: bool, node: ast.ImportFrom) -> str:
    """The absolute module a ``from ... import`` names (before its imported names)."""
    if not node.level:
        return node.module or ""
    base = importer.split(".")
    if not is_package:
        base = base[:-1]
    if node.level > 1:
        base = base[:len(base) - (node.level - 1)]
    return ".".join(base + ([node.module] if node.module else []))


def imports_of(name: str, path: Path, known: Iterable[str]) -> set[str]:
    """The modules of `known` that module `name` imports, anywhere in its source."""
    known = set(known)
    is_package = path.name == "__init__.py"
    found: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        if isinstance(node, ast.Import):
            targets = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            module = _resolve(name, is_package, node)
            # `from pkg import x` imports the module pkg.x when there is one.
            targets = [f"{module}.{alias.name}" if f"{module}.{alias.name}" in known else module
                       for alias in node.names]
        else:
            continue
        for target in targets:
            while target and target not in known:      # `import a.b.c` names a.b.c, or a name in it
                target = target.rpartition(".")[0]
            if target:
                found.add(target)
    return found


def import_graph(package: Path = PACKAGE) -> dict[str, set[str]]:
    """Module -> the modules it imports, a package's ``__init__`` re-exports left out."""
    modules = module_names(package)
    graph = {}
    for name, path in modules.items():
        targets = imports_of(name, path, modules) - {name}
        if path.name == "__init__.py":
            targets = {t for t in targets if not t.startswith(name + ".")}
        graph[name] = targets
    return graph


def find_cycle(graph: Mapping[str, Iterable[str]]) -> list[str] | None:
    """One import cycle as a path that returns to its start (``[a, b, a]``), or None.

    A depth-first walk without recursion; a node reached again while still on
    the walk's path closes a cycle.
    """
    done: set[str] = set()
    for start in sorted(graph):
        if start in done:
            continue
        path: list[str] = [start]
        on_path = {start}
        todo = [iter(sorted(graph.get(start, ())))]
        while todo:
            nxt = next(todo[-1], None)
            if nxt is None:
                todo.pop()
                done.add(path[-1])
                on_path.discard(path.pop())
                continue
            if nxt in on_path:
                return path[path.index(nxt):] + [nxt]
            if nxt in done:
                continue
            path.append(nxt)
            on_path.add(nxt)
            todo.append(iter(sorted(graph.get(nxt, ()))))
    return None


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


def test_no_module_outside_views_imports_a_view():
    offenders = {m: t for m, t in _view_importers().items() if t}
    assert offenders == {}


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
    assert {"lesson_lib", "lesson_lib.turn", "lesson_lib.serve"} <= set(found)
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
        tree = ast.parse(path.read_text())
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
    return [node.lineno for node in ast.walk(ast.parse(source))
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
