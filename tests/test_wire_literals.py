"""One home per wire fact: outside `wires/`, no module spells a wire's event type.

Every event type of every wire is named in its wire's module (`EVENT_TYPES`,
and a constant for each one another station matches on). This test reads
every module of `lesson_lib` outside `wires/` with the AST and fails on a
string literal that is one of those event types: the module reads the name
from `wires/` instead (``anthropic.CONTENT_BLOCK_DELTA``, ``responses.ITEM_DONE``).

A few modules must spell one, each for the reason beside it in `SPELLED`; an
entry lists the very literals it may spell, and one that no longer does fails
the test too, so the list only shrinks. Docstrings do not count.
"""

from __future__ import annotations

import ast

from import_graph import PACKAGE, module_names
from source_ast import parse as parse_source

from lesson_lib.wires import WIRES, gemini_interactions

# Event types that are also plain words of the course, in other senses, so a literal
# of them says nothing about a wire: a diagnostic's or a turn error's ``"error"``, a
# network ``"chunk"``, a capture's or a frame's ``"metadata"``.
SHARED_WORDS = frozenset({"error", "chunk", "metadata"})

VOCABULARY = frozenset().union(*(m.EVENT_TYPES for m in WIRES.values())) - SHARED_WORDS

UPSTREAM = "upstream of `wires/` (the layer test forbids the import)"
SPELLED: dict[str, tuple[frozenset[str], str]] = {
    "lesson_lib.sse.bedrock_frames": (
        frozenset({"messageStart", "contentBlockStart", "contentBlockDelta",
                   "contentBlockStop", "messageStop"}),
        f"Bedrock's framing builds events from frames, {UPSTREAM}"),
    "lesson_lib.capture.replay": (
        frozenset({"response.output_text.delta", "interaction.completed"}),
        f"the SDK's own text events, and the event that reports Gemini Interactions' "
        f"interaction, read from the SDK's objects, {UPSTREAM}"),
    "lesson_lib.capture.bedrock_replay": (
        frozenset({"contentBlockDelta"}),
        f"boto3's text events, read from the SDK's dicts, {UPSTREAM}"),
    "lesson_lib.accumulate.naive_handler": (
        frozenset({"content_block_start", "content_block_delta", "content_block_stop",
                   "message_delta"}),
        "lesson 2's counter-example spells the types it matches, as a first attempt does"),
    "lesson_lib.solutions.lesson01": (
        frozenset({"[DONE]", "message_stop", "response.completed", "response.incomplete"}),
        "a solution is shown to the learner: it spells the wire as the learner's code does"),
    "lesson_lib.solutions.lesson02": (
        frozenset({"content_block_start", "content_block_delta", "content_block_stop"}),
        "a solution is shown to the learner: it spells the wire as the learner's code does"),
    "lesson_lib.solutions.lesson02_more": (
        frozenset({"content_block_start", "content_block_delta", "response.output_text.delta"}),
        "a solution is shown to the learner: it spells the wire as the learner's code does"),
    "lesson_lib.solutions.lesson04": (
        frozenset({"[DONE]", "message_stop", "response.completed", "response.incomplete",
                   "response.failed"}),
        "a solution is shown to the learner: it spells the wire as the learner's code does"),
    "lesson_lib.views.html": (
        frozenset({"ping"}),
        "``ping`` is also one of the event table's kinds of event, which it gives a marker"),
    "lesson_lib.breaks.watchdog": (
        frozenset({"ping"}),
        "``ping`` is also the name of one of its own kinds of arrival (a keep-alive)"),
}


def docstrings(tree: ast.AST) -> set[int]:
    """The ids of the docstring nodes of a module and of its classes and functions."""
    found = set()
    for node in ast.walk(tree):
        body = getattr(node, "body", None)
        if (isinstance(body, list) and body and isinstance(body[0], ast.Expr)
                and isinstance(body[0].value, ast.Constant)):
            found.add(id(body[0].value))
    return found


def wire_literals(source: str, vocabulary: frozenset[str] = VOCABULARY) -> dict[str, list[int]]:
    """The event-type literals in `source`, with the lines they are on."""
    tree = parse_source(source)
    skip = docstrings(tree)
    found: dict[str, list[int]] = {}
    for node in ast.walk(tree):
        if (isinstance(node, ast.Constant) and isinstance(node.value, str)
                and node.value in vocabulary and id(node) not in skip):
            found.setdefault(node.value, []).append(node.lineno)
    return found


def spelled_outside_wires() -> dict[str, dict[str, list[int]]]:
    return {name: found for name, path in module_names(PACKAGE).items()
            if not (name == "lesson_lib.wires" or name.startswith("lesson_lib.wires."))
            and (found := wire_literals(path.read_text()))}


# -- the rule -------------------------------------------------------------------------


def test_the_vocabulary_is_every_wire_s_event_types():
    assert {"content_block_delta", "response.output_item.done", "chat.completion.chunk",
            "[DONE]", "GenerateContentResponse", "contentBlockDelta", "messageStop"} <= VOCABULARY
    assert len(VOCABULARY) > 70


def test_no_module_outside_wires_spells_an_event_type_unless_listed():
    found = spelled_outside_wires()
    unlisted = {name: lits for name, lits in found.items()
                if not set(lits) <= SPELLED.get(name, (frozenset(), ""))[0]}
    assert unlisted == {}, "read these names from lesson_lib.wires"


def test_every_listed_module_still_spells_what_it_is_listed_for():
    found = spelled_outside_wires()
    stale = {name: sorted(allowed - set(found.get(name, {})))
             for name, (allowed, _) in SPELLED.items() if allowed - set(found.get(name, {}))}
    assert stale == {}, "take these from SPELLED"
    assert all(reason for _, reason in SPELLED.values())


# -- wire names ---------------------------------------------------------------------------
# A wire's name is a wire fact too: every station reads it from the registry
# (`lesson_lib.wires.ENTRIES`) or from its wire module's ``WIRE``, so a new wire
# touches no list of wires. Lesson material shown to learners spells the names
# as a learner's code does; the framing upstream of `wires/` cannot import them.

WIRE_NAMES = frozenset(WIRES) | {gemini_interactions.WIRE}
LESSON = "lesson material shown to the learner: it spells the wire as the learner's code does"
NAMED: dict[str, tuple[int, str]] = {
    "lesson_lib.exercises.lesson04": (5, LESSON),
    "lesson_lib.exercises.lesson05": (11, LESSON),
    "lesson_lib.exercises.lesson06": (4, LESSON),
    "lesson_lib.solutions.lesson04": (3, LESSON),
    "lesson_lib.accumulate.naive_handler": (4, "lesson 2's counter-example, kept as a first "
                                               "attempt writes it"),
    "lesson_lib.sse.bedrock_frames": (2, f"Bedrock's framing names the two APIs its frames "
                                         f"belong to, {UPSTREAM}; their wire modules take the "
                                         "names from it"),
    "lesson_lib.capture.bedrock_replay": (2, f"boto3 put in front of a capture, {UPSTREAM}"),
}
# Outside `wires/` and the lesson material, at most this many wire names in all.
MAX_NAMED = 15


def named_outside_wires() -> dict[str, int]:
    """How many wire-name literals each module outside `wires/` spells (docstrings apart)."""
    return {name: sum(map(len, found.values())) for name, path in module_names(PACKAGE).items()
            if not (name == "lesson_lib.wires" or name.startswith("lesson_lib.wires."))
            and (found := wire_literals(path.read_text(), WIRE_NAMES))}


def test_no_module_outside_wires_spells_a_wire_name_unless_listed():
    found = named_outside_wires()
    unlisted = {name: n for name, n in found.items() if n > NAMED.get(name, (0, ""))[0]}
    assert unlisted == {}, "read the wire's name from lesson_lib.wires (its module's WIRE)"
    stale = {name: n for name, (n, _) in NAMED.items() if found.get(name, 0) < n}
    assert stale == {}, "lower these counts in NAMED"
    outside_lessons = sum(n for name, (n, why) in NAMED.items() if why != LESSON
                          and not name.endswith("naive_handler"))
    assert outside_lessons <= MAX_NAMED


def test_the_wire_name_finder_counts_code_not_docstrings():
    source = ('"""Reads "openai-chat"."""\n'
              'WIRE = "openai-chat"\n'
              'OTHER = {"anthropic-messages": 1, "openai": 2}\n')
    assert wire_literals(source, WIRE_NAMES) == {"openai-chat": [2], "anthropic-messages": [3]}


# -- the finder itself -----------------------------------------------------------------


def test_the_finder_finds_a_literal_and_only_a_literal():
    source = ('"""A docstring that says content_block_delta."""\n'
              'def f(ev):\n'
              '    """message_stop"""\n'
              '    if ev.type == "content_block_delta":\n'
              '        return {"type": "message_stop", "error": "error"}\n'
              '    return f"{ev.type}: content_block_stop" + anthropic.MESSAGE_STOP\n')
    assert wire_literals(source) == {"content_block_delta": [4], "message_stop": [5]}
