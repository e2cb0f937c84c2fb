"""Lesson-sized station files: the accumulator a lesson sends a learner to opens with the
lesson's rule, and what is not the rule lives beside it, in modules the rule names.

The wires the lessons teach (Anthropic, Responses, Chat, Gemini, Bedrock's two,
Gemini Interactions, lesson 7's two session streams) each keep their accumulator in a
package: a core that reads like the lesson, and the features around it in files named
for them. Code the
wires share is written once: a block its start event states (an Anthropic block, an
Interactions step) makes its call and closes its slot in `accumulate.started`; an
event an index-addressed accumulator cannot read is said in `accumulate.indexed`.
"""

from __future__ import annotations

import ast
import importlib
import inspect
import pkgutil

import pytest

from lesson_lib import wires
from lesson_lib.accumulate import indexed
from lesson_lib.wires import ENTRIES

# The wires whose accumulators the lessons open (lessons 2, 4b and 7), by their modules' names.
LESSON_WIRES = [wires.anthropic.WIRE, wires.responses.WIRE, wires.chat.WIRE, wires.gemini.WIRE,
                wires.bedrock.CONVERSE, wires.bedrock.INVOKE, wires.gemini_interactions.WIRE,
                wires.managed_agents.WIRE, wires.openai_sessions.WIRE]
# The packages those accumulators live in (Chat's entry names a factory beside its package).
PACKAGES = ["anthropic", "responses", "chat", "gemini", "bedrock", "gemini_interactions",
            "managed_agents", "openai_sessions"]


def _entry_module(wire: str):
    """The module the wire's registry entry names for its accumulator."""
    return importlib.import_module(ENTRIES[wire].accumulator.partition(":")[0])


@pytest.mark.parametrize("wire", LESSON_WIRES)
def test_the_registry_still_finds_each_lesson_wire_s_accumulator(wire):
    acc = ENTRIES[wire].new_accumulator(None)
    assert acc.wire == wire


@pytest.mark.parametrize("name", PACKAGES)
def test_each_lesson_wire_s_accumulator_is_a_package(name):
    package = importlib.import_module(f"lesson_lib.accumulate.{name}")
    assert hasattr(package, "__path__"), f"accumulate/{name}.py is one file: split it"
    assert package.__doc__ and package.__doc__.startswith("Lesson")


@pytest.mark.parametrize("name", PACKAGES)
def test_the_rule_names_every_module_beside_it(name):
    """A learner who opens the package or its core finds every feature module named."""
    package = importlib.import_module(f"lesson_lib.accumulate.{name}")
    said = package.__doc__ or ""
    for info in pkgutil.iter_modules(package.__path__):
        said += importlib.import_module(f"{package.__name__}.{info.name}").__doc__ or ""
    cores = {inspect.getmodule(cls).__name__.rpartition(".")[2]
             for cls in vars(package).values() if inspect.isclass(cls)}
    core_docs = "".join(importlib.import_module(f"{package.__name__}.{c}").__doc__ or ""
                        for c in cores)
    for info in pkgutil.iter_modules(package.__path__):
        if info.name not in cores:
            assert f"`{info.name}`" in (package.__doc__ or "") + core_docs, (name, info.name)


@pytest.mark.parametrize("wire", LESSON_WIRES)
def test_the_accumulator_s_own_module_holds_no_other_block_class(wire):
    """What a block holds lives beside the rule: the core defines its accumulator only."""
    cls = type(ENTRIES[wire].new_accumulator(None))
    module = inspect.getmodule(cls)
    tree = ast.parse(inspect.getsource(module))
    classes = [node.name for node in tree.body if isinstance(node, ast.ClassDef)]
    assert classes == [cls.__name__], (module.__name__, classes)


def test_a_started_block_is_one_class_on_both_wires():
    from lesson_lib.accumulate import started
    from lesson_lib.accumulate.anthropic.block import Block
    from lesson_lib.accumulate.gemini_interactions.step import Step
    for cls in (Block, Step):
        assert issubclass(cls, started.StartedBlock)
        for name in ("open_call", "current_input", "identity", "described"):
            assert getattr(cls, name) is getattr(started.StartedBlock, name), (cls, name)


def _literals(function) -> set[str]:
    tree = ast.parse(inspect.getsource(function).lstrip())
    return {node.value for node in ast.walk(tree)
            if isinstance(node, ast.Constant) and isinstance(node.value, str)}


@pytest.mark.parametrize("wire", [wires.anthropic.WIRE, wires.bedrock.CONVERSE,
                                  wires.gemini_interactions.WIRE])
def test_an_unreadable_or_unknown_event_is_said_in_one_place(wire):
    cls = type(ENTRIES[wire].new_accumulator(None))
    assert issubclass(cls, indexed.IndexedAccumulator)
    assert not _literals(cls.feed) & {"unparseable_json", "unknown_event"}
    assert {"unparseable_json", "unknown_event"} <= _literals(indexed.IndexedAccumulator)


@pytest.mark.parametrize("wire, stream", [(wires.anthropic.WIRE, "the Messages stream"),
                                          (wires.bedrock.CONVERSE, "ConverseStream"),
                                          (wires.gemini_interactions.WIRE,
                                           "the Interactions stream")])
def test_the_shared_preamble_says_what_each_wire_said(wire, stream):
    from lesson_lib.sse.decoder import ServerSentEvent
    from lesson_lib.wires.wire_events import WireEvent
    acc = ENTRIES[wire].new_accumulator(None)
    broken = WireEvent(0, ServerSentEvent("x", "{"), "x", None, parse_error="cut short")
    odd = WireEvent(1, ServerSentEvent("odd", "{}"), "odd", {"event_type": "odd"})
    assert acc.feed(broken)[-1].diagnostic.message == "event 'x' skipped: cut short"
    changes = acc.feed(odd)
    assert changes[0].kind == "unknown_event"
    assert changes[1].diagnostic.message == (f"event type 'odd' is not part of {stream}; "
                                             "kept as raw data")
