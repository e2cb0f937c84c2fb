"""The recipes for pointing each official SDK at the course's server, from the registry.

Every registered wire's SDK route says how its SDK is pointed at a server (`SDKRoute.recipe`);
INSTRUCTORS.md shows the recipes and the README and INSTRUCTORS.md list the server's paths,
each generated between markers (`lesson_lib.course.recipes`). Here every recipe is run as
written against `serving()`, and a capture is read through the client it makes.
"""

from __future__ import annotations

import dataclasses
from pathlib import Path
from types import SimpleNamespace

import pytest

from lesson_lib import wires
from lesson_lib.capture import replay
from lesson_lib.capture.captures import corpus
from lesson_lib.cli.serve import serving
from lesson_lib.course import recipes

pytestmark = pytest.mark.timeout(300)

ROOT = Path(__file__).resolve().parent.parent
WIRES = list(wires.ENTRIES)


def _client(wire: str, url: str):
    """The `client` that the wire's recipe makes, run as a learner would paste it."""
    scope: dict = {}
    exec(wires.entry_for(wire).sdk.recipe(url), scope)     # noqa: S102 - the recipe is the test
    return scope["client"]


def _readable(wire: str):
    """A capture of `wire` that its SDK reads whole offline, and what it read."""
    for cap in corpus():
        if cap.wire == wire and cap.status == 200:
            offline = replay.run_sdk(cap)
            if offline.error is None and offline.text:
                return cap, offline
    pytest.fail(f"no capture of {wire} reads whole through its SDK offline")


@pytest.mark.parametrize("wire", WIRES)
def test_every_registered_wire_has_a_recipe_on_the_page(wire):
    entry = wires.entry_for(wire)
    if entry.sdk is None:
        pytest.skip(f"{wire}: its entry names no official SDK")
    recipe = entry.sdk.recipe(recipes.URL)
    assert recipe.splitlines()[-1].startswith("client = "), recipe
    assert recipes.URL in recipe
    assert f"```python\n{recipe}\n```" in recipes.recipes_markdown()
    assert f"`{entry.method} {entry.route}`" in recipes.paths_markdown()


def test_the_committed_guide_and_readme_are_what_the_registry_renders():
    guide = (ROOT / "INSTRUCTORS.md").read_text(encoding="utf-8")
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    assert recipes.recipes_markdown() in guide, "run `make cheat-sheet`"
    assert recipes.paths_markdown() in guide, "run `make cheat-sheet`"
    assert recipes.paths_markdown() in readme, "run `make cheat-sheet`"
    assert recipes.replace_in(guide) == guide and recipes.replace_in(readme) == readme


@pytest.mark.parametrize("wire", WIRES)
def test_each_recipe_run_against_the_server_reads_a_capture_through_its_sdk(wire):
    if wires.entry_for(wire).sdk is None:
        pytest.skip(f"{wire}: its entry names no official SDK")
    cap, offline = _readable(wire)
    # The recipe names no capture: the server answers every request with this one.
    with serving(speed="instant", capture=cap.key) as url:
        live = replay.run_sdk(cap, client=_client(wire, url))
    assert live.error is None, f"{wire}: {live.error!r}"
    assert live.text == offline.text and live.event_count == offline.event_count


def _retries(client, package: str) -> int | None:
    """How many times the client retries a failed request, as its SDK keeps it."""
    if package in ("anthropic", "openai"):
        return client.max_retries
    if package == "google-genai":      # no retry options: one attempt (`retry_args`)
        options = client._api_client._http_options.retry_options
        return None if options is not None else 0
    if package == "boto3":
        return client.meta.config.retries["total_max_attempts"] - 1
    raise AssertionError(f"no reader of {package}'s retries: add one here")


@pytest.mark.parametrize("wire", WIRES)
def test_each_recipe_turns_its_sdks_retries_off(wire):
    entry = wires.entry_for(wire)
    if entry.sdk is None:
        pytest.skip(f"{wire}: its entry names no official SDK")
    assert _retries(_client(wire, recipes.URL), entry.sdk.package) == 0, wire


def test_a_wire_registered_later_is_on_the_page_and_one_without_an_sdk_says_so():
    source = wires.WIRES["openai-chat"]
    names = {name: getattr(source, name) for name in wires.REQUIRED}
    toy = SimpleNamespace(**names, WIRE="toy-chat")
    toy.ENTRY = dataclasses.replace(source.ENTRY, wire="toy-chat", title="Toy Chat", sdk=None,
                                    route="/toy/chat", method="GET")
    wires.register(toy)
    try:
        assert "- Toy Chat (`toy-chat`): no official SDK." in recipes.recipes_markdown()
        assert recipes.paths_markdown().endswith(f" and `GET /toy/chat`{recipes.PATHS_END}")
    finally:
        wires.unregister("toy-chat")
    assert "toy-chat" not in recipes.recipes_markdown()


def test_the_generated_parts_need_their_markers():
    with pytest.raises(ValueError, match="markers"):
        recipes.replace_in("a page without them")
