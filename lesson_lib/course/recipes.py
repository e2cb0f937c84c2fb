"""Pointing each official SDK at the course's server, and the server's paths, from the registry.

Each wire's SDK route (`wires.entry.SDKRoute`) says how its SDK is pointed at a server, as
the lines a learner types (`SDKRoute.recipe`). INSTRUCTORS.md shows them for every wire,
and the README and INSTRUCTORS.md list the paths `serve` answers, each between two markers
that ``make cheat-sheet`` fills (`scripts/build_cheat_sheet.py`). A test runs every recipe
against `serving()` and reads a capture through the client it makes, so a recipe on the page
is one that works.
"""

from __future__ import annotations

from .. import wires
from ..cli.serve import DEFAULT_HOST, DEFAULT_PORT
from .markers import replace_between

# The server's root URL as the room starts it (`lesson-lib serve`, its defaults).
URL = f"http://{DEFAULT_HOST}:{DEFAULT_PORT}"
RECIPES_START = "<!-- recipes: generated from lesson_lib.wires.ENTRIES by `make cheat-sheet` -->"
RECIPES_END = "<!-- recipes: end -->"
PATHS_START = "<!-- paths: generated from lesson_lib.wires.ENTRIES by `make cheat-sheet` -->"
PATHS_END = "<!-- paths: end -->"


def recipes_markdown(url: str = URL) -> str:
    """Every registered wire's recipe (its SDK pointed at `url`) as Markdown between the
    markers; a wire whose entry gives none is named with the reason."""
    parts = [RECIPES_START]
    for entry in wires.ENTRIES.values():
        route = entry.sdk
        recipe = route.recipe(url) if route is not None else ""
        if not recipe:
            why = "no official SDK" if route is None else f"no recipe for `{route.package}`"
            parts.append(f"- {entry.title} (`{entry.wire}`): {why}.")
            continue
        parts.append(f"{entry.title} (`{entry.wire}`, `{entry.method} {entry.route}`), "
                     f"with `{route.package}`:\n\n```python\n{recipe}\n```")
    return "\n\n".join([*parts, RECIPES_END])


def paths_markdown() -> str:
    """The paths `serve` answers, one per registered wire, as a Markdown phrase between the
    markers (``A, B and C``)."""
    paths = [f"`{entry.method} {entry.route}`" for entry in wires.ENTRIES.values()]
    listed = ", ".join(paths[:-1]) + f" and {paths[-1]}" if len(paths) > 1 else "".join(paths)
    return f"{PATHS_START}{listed}{PATHS_END}"


def replace_in(text: str) -> str:
    """`text` with whichever of the two generated parts it holds rendered anew (ValueError
    when it holds neither)."""
    found = False
    for start, end, render in ((RECIPES_START, RECIPES_END, recipes_markdown),
                               (PATHS_START, PATHS_END, paths_markdown)):
        if start in text:
            text, found = replace_between(text, start, end, render()), True
    if not found:
        raise ValueError("neither the recipes' nor the paths' markers are in the text")
    return text
