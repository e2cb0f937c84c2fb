"""Lesson 6's prose agrees with the code: the API card above exercise 2 names what imports
from where it says, the cut labelled "inside the second call" is inside it, and the server is
credited to the lesson that introduces it."""

from __future__ import annotations

import dataclasses
import inspect
import re
import typing
from pathlib import Path

import nbformat
import pytest

ROOT = Path(__file__).resolve().parent.parent
LESSON = ROOT / "notebooks" / "06-the-live-turn.ipynb"


def cells() -> list:
    return nbformat.read(LESSON, as_version=4).cells


def card() -> str:
    found = [c.source for c in cells() if c.cell_type == "markdown"
             and c.source.startswith("#### API card")]
    assert len(found) == 1, "lesson 6 has one API card"
    return found[0]


def card_names() -> dict:
    """What the card's import block binds, run as a learner would run it."""
    code = re.search(r"```python\n(.*?)```", card(), re.S)[1]
    names: dict = {}
    exec(compile(code, "the API card", "exec"), names)
    return names


def rows(heading_cells: str) -> list[list[str]]:
    """The rows of the card's table whose header starts with `heading_cells`."""
    text = card()
    start = text.index(heading_cells)
    table = []
    for line in text[start:].splitlines()[2:]:
        if not line.startswith("|"):
            break
        table.append([cell.strip() for cell in line.strip("|").split("|")])
    return table


def test_the_card_sits_between_exercise_2_and_its_starter():
    sources = [c.source for c in cells()]
    at = next(i for i, s in enumerate(sources) if s.startswith("#### API card"))
    assert sources[at - 1].startswith("### Exercise 2")
    assert "async def live_turn(" in sources[at + 1]


def test_every_import_of_the_card_works_and_counter_is_the_turns():
    from lesson_lib.turn.adapters import Counter

    names = card_names()
    assert names["Counter"] is Counter
    hint = next(c.source for c in cells() if "One `Counter()`" in c.source)
    assert "from lesson_lib.turn.adapters import Counter" in hint
    assert "collections.Counter" in hint


def test_every_name_the_card_shows_is_one_it_imports():
    names = card_names()
    shown = set(re.findall(r"`([A-Za-z_]\w*)(?:\(|`)", card()))
    objects = {n for n in shown if n[0].isupper() or n in names}
    # Names a learner meets on values the card's calls return, not imported themselves.
    on_values = {"ToolCallReady", "ToolCallInvalid", "TurnState"}
    missing = {n for n in objects - on_values if n not in names and n != "None"}
    assert not missing, f"the card shows {sorted(missing)} but its imports do not bind them"
    from lesson_lib.turn import events

    for name in on_values & objects:
        assert hasattr(events, name) or name == "TurnState"


def test_every_helper_call_on_the_card_fits_its_signature():
    names = card_names()
    from lesson_lib.turn import TurnStream

    methods = {"stream": TurnStream}
    for first, _ in rows("| Call |"):
        call = re.fullmatch(r"`(?:\w+ = )?(\w+)(?:\.(\w+))?\((.*)\)`", first)
        assert call, first
        owner, method, args = call.groups()
        fn = getattr(methods[owner], method) if method else names[owner]
        params = [a.strip() for a in args.split(",") if a.strip()]
        positional = [a for a in params if "=" not in a]
        keywords = {a.split("=")[0]: None for a in params if "=" in a}
        if method:
            positional = ["self", *positional]
        inspect.signature(fn).bind(*positional, **keywords)


def _literal_values(cls: type, path: str) -> tuple | None:
    hints = typing.get_type_hints(cls)
    head, _, rest = path.partition(".")
    assert head in hints, f"{cls.__name__} has no field {head!r}"
    kind = hints[head]
    if rest:
        return _literal_values(kind, rest)
    args = [a for a in typing.get_args(kind) if a is not type(None)]
    if typing.get_origin(kind) is typing.Literal:
        return typing.get_args(kind)
    if args and typing.get_origin(args[0]) is typing.Literal:
        return typing.get_args(args[0])
    return None


@pytest.mark.parametrize("header", ["| Event | `kind` |", "| Event | Fields |"])
def test_every_event_field_and_status_on_the_card_is_the_events_own(header):
    from lesson_lib.turn import events

    for row in rows(header):
        cls = getattr(events, row[0].strip("`"))
        if len(row) == 3:
            assert cls.kind == row[1].strip('`"'), row
        fields = {f.name for f in dataclasses.fields(cls)}
        for part in re.split(r";|, (?=`\w)", row[-1]):
            named = re.match(r"\s*`(\w+(?:\.\w+)?)`", part)
            if not named:
                continue
            path = named[1]
            assert path.split(".")[0] in fields, f"{cls.__name__}: no field {path}"
            values = re.findall(r'`"(\w+)"`', part)
            if values:
                allowed = _literal_values(cls, path)
                assert allowed is not None and set(values) <= set(allowed), (cls, path, values)


def test_the_card_says_call_ids_can_be_none_and_tools_are_keyed_by_block():
    from lesson_lib.turn.events import ToolCallReady

    text = card()
    assert "`call_id` can be `None`" in text and "Gemini" in text and "`call.block`" in text
    hint = typing.get_type_hints(ToolCallReady)["call_id"]
    assert type(None) in typing.get_args(hint)


# -- the cut "inside the second call" ---------------------------------------------------------


def call_spans(key: str) -> list[tuple[int, int, int]]:
    """Each tool call of a capture: (first byte, the byte its first field settled, last byte)."""
    from lesson_lib.capture.captures import load
    from lesson_lib.turn.stream import TurnStream

    cap = load(key)
    stream = TurnStream(cap.wire, request=cap.request)
    spans: dict[str, list] = {}
    previous = 0
    for (chunk, t), end in zip(cap.chunks(), cap.chunk_ends, strict=True):
        for event in stream.feed(chunk, t):
            block = getattr(event, "block", None)
            if event.kind == "block_started" and event.block_kind == "tool_call":
                spans[block] = [previous, None, None]
            elif block in spans and event.kind == "block_delta" and event.settled:
                spans[block][1] = spans[block][1] or end
            elif block in spans and event.kind == "block_ended":
                spans[block][2] = end
        previous = end
    return [tuple(s) for s in spans.values()]


def test_the_cut_labelled_inside_the_second_call_is_inside_it_and_the_note_says_what_it_shows():
    cell = next(c for c in cells() if "cut inside the second call" in c.source)
    offset = int(re.search(r"cut_at\(step1, (\d+)\)", cell.source)[1])
    (_, _, first_end), (second_start, settled, second_end) = call_spans(
        "anthropic-messages/weather-turn-step1")
    assert first_end <= second_start < offset < second_end
    sources = [c.source for c in cells()]
    note = sources[sources.index(cell.source) + 1]
    quoted = [int(n.replace(",", "")) for n in re.findall(r"byte (\d[\d,]*)", note)]
    assert quoted[0] == offset
    assert set(quoted) <= {offset, second_start, second_end, settled}, quoted

    from lesson_lib.breaks import faults
    from lesson_lib.capture.captures import load
    from lesson_lib.draw import Drawer
    from lesson_lib.turn.reduce import reduce_all
    from lesson_lib.turn.run import turn_events

    final = reduce_all(turn_events(faults.cut_at(load("anthropic-messages/weather-turn-step1"),
                                                 offset)))
    first, second = final.calls
    assert first.call_state == "complete" and second.call_state == "cut"
    drawn = [p.text for p in Drawer().draw(final).parts if p.kind == "tool_input"]
    # What the note says the second call shows: `location` settled, `unit` not drawn.
    assert 'location: "Tokyo, Japan"' in drawn
    assert sum(t.startswith("unit:") for t in drawn) == 1          # the first call's only
    assert "`location`" in note and "`unit`" in note and "cut" in note


def test_the_server_is_credited_to_the_lesson_that_introduces_it():
    text = next(c.source for c in cells() if "The course's server" in c.source)
    first = int(re.search(r"The course's server \(introduced in lesson (\d+)", text)[1])
    lessons = sorted((ROOT / "notebooks").glob("[0-9][0-9]*-*.ipynb"))
    using = [int(p.name[:2]) for p in lessons
             if any("serving(" in c.source for c in nbformat.read(p, as_version=4).cells
                    if c.cell_type == "code")]
    assert using and first == using[0], using
