"""The claim of lessons 4 and 4b, tested: a new provider is one more adapter.

The reducer, the order validator, the text summary, the drawing and every view
of the turn read only the turn's own events: none of them names a wire (a
string literal or an identifier with a provider's or a wire's name in it),
spells a wire's own event name or block type, or imports a wire module
(`lesson_lib.wires`, the accumulators, the turn adapters). Docstrings may name
wires as examples; code may not.

Two views are about the wire itself, not the turn: lesson 2's slot view and
lesson 3's tool-call card draw the accumulator's slots in the wire's own words
(a slot kind ``tool_use`` or ``functionCall``).
`WIRE_LEVEL` lists them (and the replay that feeds them) with the accumulator
modules each may read, exactly: a new entry, or one that is no longer needed,
fails here. They may spell a wire's event names and block types; they may not
name a wire.
"""

from __future__ import annotations

import ast
import re

import pytest
from import_graph import PACKAGE, imports_of, module_names
from source_ast import parse as parse_source

from lesson_lib import wires

ROOT = PACKAGE.parent
MODULES = module_names(PACKAGE)
# What the claim covers: the reducer, the order validator, the text summary, every view,
# the drawing.
COVERED = sorted(name for name in MODULES
                 if name in ("lesson_lib.turn.reduce", "lesson_lib.turn.order",
                             "lesson_lib.turn.summary")
                 or name.startswith(("lesson_lib.views.", "lesson_lib.draw."))
                 or name in ("lesson_lib.views", "lesson_lib.draw"))
WIRE_PACKAGES = ("lesson_lib.wires", "lesson_lib.accumulate", "lesson_lib.turn.adapters")
# Lesson 1's readings of any wire alike: its parsed events and the raw event table (one
# set of columns for every wire). Views of the raw stream read them; they name no wire.
ANY_WIRE = frozenset({"lesson_lib.wires.wire_events", "lesson_lib.wires.event_rows"})
# Providers, wires, their SDKs and their models, as they appear in names and literals.
WIRE_NAME = re.compile(r"anthropic|openai|gemini|google|bedrock|\baws|converse|vertex|"
                       r"chat[-_ ]?completion|deepseek|mistral|claude|\bgpt", re.I)
# Each wire's own event names (unique to wires: the turn's own words, such as `error`,
# `text` or `stop`, are the turn's vocabulary, not a wire's).
TURN_WORDS = {"error", "ping", "text", "refusal", "stop", "length", "tool_calls",
              "content_filter", "citation", "image", "reasoning", "message", "[DONE]"}
WIRE_EVENTS = {t for m in wires.WIRES.values() for t in m.EVENT_TYPES} - TURN_WORDS
# Each wire's own block, item and delta types: a turn module that spells one decides by a
# wire's vocabulary (as the reducer once did with ``redacted_thinking``), which is the
# adapter's job (the turn's events say it: `BlockStarted.block_kind`, `.redacted`).
WIRE_KINDS = (wires.anthropic.KNOWN_BLOCKS | wires.responses.KNOWN_ITEMS
              | wires.bedrock_converse.DELTA_TYPES
              | {wires.bedrock_converse.REDACTED_CONTENT}) - TURN_WORDS

# Views about the wire's own slots (lessons 2 and 3): what each may read, and why.
WIRE_LEVEL = {
    "lesson_lib.views.slot_view": (
        {"lesson_lib.accumulate.base", "lesson_lib.accumulate.history",
         "lesson_lib.accumulate.labels"},
        "lesson 2's slot view draws the accumulator's slots (its History) in the wire's "
        "own slot kinds"),
    "lesson_lib.views.tool_card": (
        {"lesson_lib.accumulate.base", "lesson_lib.accumulate.history",
         "lesson_lib.accumulate.labels"},
        "lesson 3's tool-call card draws a call as the accumulator forms it (with the "
        "event the accumulator says will end it), and shows the slots a server tool wrote "
        "under it"),
    "lesson_lib.views.replays": (
        {"lesson_lib.accumulate.history", "lesson_lib.accumulate.labels"},
        "the replay feeds one accumulator History per capture for the two views above"),
}


def _docstrings(tree: ast.AST) -> set[int]:
    found = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Module | ast.ClassDef | ast.FunctionDef | ast.AsyncFunctionDef):
            first = node.body[0] if node.body else None
            if isinstance(first, ast.Expr) and isinstance(first.value, ast.Constant):
                found.add(id(first.value))
    return found


def wire_mentions(source: str) -> list[str]:
    """Where code names a wire: literals (docstrings aside), identifiers, attributes,
    definitions and import aliases that carry a wire's name, and literals that are a
    wire's own event names."""
    tree = parse_source(source)
    docs = _docstrings(tree)
    found = []
    for node in ast.walk(tree):
        line = getattr(node, "lineno", 0)
        if isinstance(node, ast.Constant) and isinstance(node.value, str) \
                and id(node) not in docs:
            if WIRE_NAME.search(node.value):
                found.append(f"line {line}: the literal {node.value[:60]!r}")
            elif node.value in WIRE_EVENTS:
                found.append(f"line {line}: the wire event name {node.value!r}")
            elif node.value in WIRE_KINDS:
                found.append(f"line {line}: the wire's block type {node.value!r}")
        names = []
        if isinstance(node, ast.Name):
            names = [node.id]
        elif isinstance(node, ast.Attribute):
            names = [node.attr]
        elif isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
            names = [node.name]
        elif isinstance(node, ast.arg):
            names = [node.arg]
        elif isinstance(node, ast.alias):
            names = [node.asname or node.name]
        found += [f"line {line}: the name {n!r}" for n in names if WIRE_NAME.search(n)]
    return found


def wire_imports(name: str) -> set[str]:
    """The wire modules `name` imports (wires, accumulators, turn adapters)."""
    return {m for m in imports_of(name, MODULES[name], MODULES)
            if m.startswith(WIRE_PACKAGES) and m not in ANY_WIRE}


def test_the_claim_covers_the_reducer_the_order_validator_the_views_and_the_drawing():
    assert {"lesson_lib.turn.reduce", "lesson_lib.turn.order", "lesson_lib.views.turn_view",
            "lesson_lib.views.player", "lesson_lib.views.panes", "lesson_lib.draw.drawer"} \
        <= set(COVERED)
    assert len(COVERED) >= 25
    assert {"content_block_delta", "response.output_text.delta", "chat.completion.chunk",
            "contentBlockDelta"} <= WIRE_EVENTS
    assert {"redacted_thinking", "tool_use", "function_call", "reasoningContent",
            "redactedContent"} <= WIRE_KINDS


@pytest.mark.parametrize("name", COVERED)
def test_no_turn_module_or_view_names_a_wire(name):
    found = wire_mentions(MODULES[name].read_text(encoding="utf-8"))
    if name in WIRE_LEVEL:      # a view of the wire's slots says the wire's own words
        found = [f for f in found if "wire event name" not in f and "block type" not in f]
    assert not found, f"{name} names a wire: " + "; ".join(found)


@pytest.mark.parametrize("name", COVERED)
def test_no_turn_module_or_view_imports_a_wire_module(name):
    allowed = WIRE_LEVEL.get(name, (set(), ""))[0]
    assert wire_imports(name) <= allowed, (
        f"{name} imports {sorted(wire_imports(name) - allowed)}: read the turn's events, "
        "or the wire's facts through the event table")


def test_the_wire_level_views_list_is_exact():
    for name, (allowed, why) in WIRE_LEVEL.items():
        assert name in COVERED and why
        assert wire_imports(name) == allowed, f"{name}: update WIRE_LEVEL ({why})"


def test_the_checks_can_fail():
    bad = ('import lesson_lib.wires.gemini\n'
           'from lesson_lib.accumulate import gemini as g\n'
           'ANTHROPIC_COLUMNS = {"openai-chat": ("choice",)}\n'
           'def on(e):\n    """Anthropic\'s index, as an example."""\n'
           '    return e.type == "content_block_stop" or e.wire == "google-gemini"\n')
    found = wire_mentions(bad)
    assert any("'ANTHROPIC_COLUMNS'" in f for f in found)
    assert any("'openai-chat'" in f for f in found)
    assert any("wire event name 'content_block_stop'" in f for f in found)
    assert any("'google-gemini'" in f for f in found)
    assert not any("example" in f for f in found)                      # the docstring
    assert any("'g'" not in f and "gemini" in f for f in found)        # the import's name
    assert wire_mentions('x = {"text": "stop", "kind": "error"}\n') == []
    assert wire_mentions('hidden = b.wire_kind == "redacted_thinking"\n') == [
        "line 1: the wire's block type 'redacted_thinking'"]
