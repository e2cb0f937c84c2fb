"""The import graph of `lesson_lib`, read from the source with `ast`, not by importing.

Every import counts: at the top of a module, inside a function, and under
``if TYPE_CHECKING:`` (a cycle "for types only" is still two modules that
each need the other to be understood). One kind of arrow is left out: a
package's ``__init__`` importing modules inside that package (it re-exports
its children; they never need it back unless they import it, which counts).
Used by `test_architecture` (cycles, views, builders) and `test_layers`
(the station order).
"""

from __future__ import annotations

import ast
from collections.abc import Iterable, Mapping
from pathlib import Path

from source_ast import parse as parse_source

ROOT = Path(__file__).resolve().parent.parent
PACKAGE = ROOT / "lesson_lib"


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
    for node in ast.walk(parse_source(path.read_text(), str(path))):
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
