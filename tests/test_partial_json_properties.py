"""Property tests for lesson_lib.partial_json: any document, any split, any corruption.

Every stream is checked after every fragment:

- no exception for a prefix of a valid document;
- the changes, applied in order to an empty structure, rebuild `value`;
- the paths the settle changes named are exactly `settled`, and each has,
  at its settle, the value the change carried; that value never changes
  again and is the final value at that path;
- the value only grows: strings and containers at their end, nothing else;
- `finish()` equals ``json.loads(text)``.

Invalid texts fail at the position ``json.loads`` reports, adjusted by the
documented differences (`expected_position`). The tool-argument documents of
every capture are checked the same way, fed exactly as they arrived.
"""

from __future__ import annotations

import copy
import json
import re
from collections import defaultdict
from typing import Any

import pytest
from examples import examples
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

from lesson_lib.capture.captures import Capture, corpus, reference_corpus
from lesson_lib.partial_json import NOTHING, Change, PartialJSON, PartialJSONError

# -- checking one stream --------------------------------------------------------------


def same(a: Any, b: Any) -> bool:
    """Equal and of the same JSON types (1, 1.0 and True differ; key order counts)."""
    if a is NOTHING or b is NOTHING:
        return a is b
    # ensure_ascii=False, so that two lone surrogates and the pair they spell differ
    return json.dumps(a, ensure_ascii=False) == json.dumps(b, ensure_ascii=False)


def value_at(root: Any, path: tuple) -> Any:
    for key in path:
        root = root[key]
    return root


def all_paths(root: Any) -> set[tuple]:
    paths, todo = set(), [((), root)]
    while todo:
        path, node = todo.pop()
        paths.add(path)
        if isinstance(node, dict):
            todo.extend((path + (k,), v) for k, v in node.items())
        elif isinstance(node, list):
            todo.extend((path + (i,), v) for i, v in enumerate(node))
    return paths


def grows(old: Any, new: Any) -> bool:
    """`new` differs from `old` only by strings and containers grown at their end."""
    if old is NOTHING:
        return True
    todo = [(old, new)]
    while todo:
        a, b = todo.pop()
        if type(a) is not type(b):
            return False
        if isinstance(a, str):
            if not b.startswith(a):
                return False
        elif isinstance(a, list):
            if len(b) < len(a):
                return False
            todo.extend(zip(a, b, strict=False))
        elif isinstance(a, dict):
            if list(b)[:len(a)] != list(a):
                return False
            todo.extend((a[k], b[k]) for k in a)
        elif a != b:
            return False
    return True


class Mirror:
    """An empty structure that the changes alone rebuild."""

    def __init__(self) -> None:
        self.root: Any = NOTHING

    def apply(self, change: Change) -> None:
        path, op, value = change.path, change.op, change.value
        if op == "set":
            assert value in ("", {}, []) or not isinstance(value, (str, dict, list)), change
            value = copy.deepcopy(value)
            if path == ():
                assert self.root is NOTHING, change
                self.root = value
                return
            parent, key = value_at(self.root, path[:-1]), path[-1]
            if isinstance(parent, list):
                assert key == len(parent), change
                parent.append(value)
            else:
                assert key not in parent, change
                parent[key] = value
        elif op == "append":
            assert isinstance(value, str) and value, change
            if path == ():
                self.root += value
            else:
                parent, key = value_at(self.root, path[:-1]), path[-1]
                parent[key] += value
        else:
            assert op == "settle", change
            assert same(value_at(self.root, path), value), change


def check_open_chain(parser: PartialJSON, fed: str) -> None:
    """What is present but not settled is one chain from the root, and nothing on it is done.

    A literal may be unsettled only while it ends the text (no delimiter yet).
    """
    value = parser.value
    if value is NOTHING:
        return
    unsettled = sorted((p for p in all_paths(value) if p not in parser.settled), key=len)
    assert not unsettled or unsettled[0] == ()
    for shorter, longer in zip(unsettled, unsettled[1:], strict=False):
        assert longer[:len(shorter)] == shorter and len(longer) == len(shorter) + 1, unsettled
    if unsettled:
        deepest = value_at(value, unsettled[-1])
        assert not isinstance(deepest, (int, float)) or isinstance(deepest, bool), unsettled
        if deepest is None or isinstance(deepest, bool):
            assert fed.endswith(json.dumps(deepest)), (fed[-20:], unsettled)


def check_stream(fragments: list[str]) -> tuple[Any, PartialJSONError | None]:
    """Feed `fragments`, checking every property after each; the final value or the error."""
    parser, mirror = PartialJSON(), Mirror()
    settled_values: dict[tuple, str] = {}
    previous: Any = NOTHING
    fed = ""
    for fragment in fragments:
        fed += fragment
        try:
            changes = parser.feed(fragment)
        except PartialJSONError as error:
            changes = error.changes
            failure: PartialJSONError | None = error
        else:
            failure = None
        for change in changes:
            mirror.apply(change)
            if change.op == "settle":
                assert change.path not in settled_values, change
                settled_values[change.path] = json.dumps(change.value)
        value = parser.value
        assert same(mirror.root, value)
        assert set(parser.settled) == set(settled_values)
        assert len(parser.settled) == len(settled_values)
        for path, dumped in settled_values.items():
            assert json.dumps(value_at(value, path)) == dumped, path
        if failure is None:
            check_open_chain(parser, fed)
        snapshot = copy.deepcopy(value)
        assert grows(previous, snapshot), (previous, snapshot)
        previous = snapshot
        if failure is not None:
            return NOTHING, failure
    try:
        final = parser.finish()
    except PartialJSONError as error:
        assert error.position == sum(map(len, fragments))
        return NOTHING, error
    assert grows(previous, final)
    for path, dumped in settled_values.items():
        assert json.dumps(value_at(final, path)) == dumped, path
    assert set(parser.settled) == all_paths(final)
    return final, None


# -- where json.loads fails, and where we do -------------------------------------------------

_NUMBER_CHARS = "0123456789.eE+-"
_NUMBER_PREFIX = re.compile(r"-?|-?(?:0|[1-9][0-9]*)(?:\.[0-9]*)?"
                            r"|-?(?:0|[1-9][0-9]*)(?:\.[0-9]+)?[eE][-+]?[0-9]*")
_WORDS = {"t": "true", "f": "false", "n": "null"}
_HEX = set("0123456789abcdefABCDEF")


def expected_position(text: str) -> int | None:
    """Where our parser must fail, from where json.loads fails; None if json.loads accepts.

    The adjustments are the differences the module docstring lists: we name
    the first character that can never become valid, json.loads where it
    gave up (the start of an unfinished token, the backslash, the u, the
    opening quote of an unterminated string).
    """
    try:
        json.loads(text)
    except json.JSONDecodeError as error:
        p, why = error.pos, error.msg
    else:
        return None
    if why.startswith("Unterminated string"):
        return len(text)
    if why.startswith("Illegal trailing comma"):
        # Python 3.13 points at the comma; ``[null,`` can still become ``[null,1]``, so the
        # first character that can never be valid is the closing bracket after it.
        k = p + 1
        while text[k] in " \t\n\r":
            k += 1
        return k
    if why == "Invalid \\escape":
        return p + 1
    if why == "Invalid \\uXXXX escape":
        k = p + 1
        while k < len(text) and k < p + 5 and text[k] in _HEX:
            k += 1
        return k
    char = text[p:p + 1]
    if why == "Expecting value" and char in _WORDS:
        word, k = _WORDS[char], 0
        while k < len(word) and p + k < len(text) and text[p + k] == word[k]:
            k += 1
        return p + k
    if why == "Expecting value" and char == "-":
        start = p
    elif char and char in _NUMBER_CHARS and p > 0 and text[p - 1] in "0123456789":
        start = p - 1
        while start > 0 and text[start - 1] in _NUMBER_CHARS:
            start -= 1
    else:
        return p
    k = 0
    while start + k < len(text) and _NUMBER_PREFIX.fullmatch(text, start, start + k + 1):
        k += 1
    return start + k


class _Duplicate(Exception):
    pass


class _Constant(Exception):
    pass


def _no_duplicates(pairs: list[tuple[str, Any]]) -> dict:
    if len({k for k, _ in pairs}) != len(pairs):
        raise _Duplicate
    return dict(pairs)


def _no_constants(name: str) -> Any:
    raise _Constant(name)


def check_failure(text: str, fragments: list[str]) -> None:
    """Feed an arbitrary text; it must succeed or fail exactly where the rules say."""
    final, error = check_stream(fragments)
    json_position = expected_position(text)
    if error is None:
        assert json_position is None, (text, json_position)
        assert same(final, json.loads(text))
        return
    q = error.position
    if "appears twice" in error.message:
        # json.loads keeps the last value; verify the repeat independently.
        assert text[q] == '"'
        opened_at = int(re.search(r"opened at character (\d+)", error.message).group(1))
        with pytest.raises(_Duplicate):
            json.loads(text[opened_at:q + 1] + ":0}", object_pairs_hook=_no_duplicates)
        assert json_position is None or q <= json_position
    elif "is not JSON" in error.message and json_position != q:
        # NaN, Infinity, -Infinity, which json.loads accepts.
        assert text[q] in "NI"
        with pytest.raises(_Constant):
            json.loads(text, parse_constant=_no_constants)
        assert json_position is None or q <= json_position
    else:
        assert q == json_position, (text, error, json_position)


# -- documents ------------------------------------------------------------------------------

_ALL_CHARACTERS = st.characters(exclude_categories=())  # surrogates included
_TRICKY = ["", '"', "\\", "/", "\x00", "\x1f", "\x7f", "\n\r\t\b\f", "é", "😀", "\ud83d",
           "\ude00", "\u2028", "\ufeff", "Zoë — Ōsaka", "\\u0041", 'say "hi"\n']

strings = st.one_of(st.text(_ALL_CHARACTERS, max_size=12), st.sampled_from(_TRICKY),
                    st.text(st.sampled_from('ab"\\\n😀é\ud800\udc00 '), max_size=20))
huge_strings = st.builds(lambda s, n: s * n, st.text(_ALL_CHARACTERS, min_size=1, max_size=30),
                         st.integers(200, 2500))
numbers = st.one_of(st.integers(-(10 ** 30), 10 ** 30),
                    st.floats(allow_nan=False, allow_infinity=False),
                    st.sampled_from([0, -0.0, 0.5, 1e-7, 1.5e300, -2.5e-300, 10 ** 20]))
scalars = st.one_of(st.none(), st.booleans(), numbers, strings)


def _containers(children: st.SearchStrategy) -> st.SearchStrategy:
    return st.one_of(st.lists(children, max_size=5),
                     st.dictionaries(strings, children, max_size=5))


values = st.recursive(scalars, _containers, max_leaves=25)


def _nest(value: Any, shape: list[tuple[bool, str]]) -> Any:
    for is_list, name in shape:
        value = [value] if is_list else {name: value}
    return value


deep_values = st.builds(_nest, values, st.lists(st.tuples(st.booleans(), strings), max_size=120))
documents = st.one_of(values, deep_values, st.builds(lambda s, v: {"path": v, "content": s},
                                                     huge_strings, values))


def _render_string(text: str, pick: st.DataObject) -> str:
    """A JSON string for `text`, each character raw, short-escaped or \\u-escaped at random."""
    out = ['"']
    for char in text:
        code = ord(char)
        style = pick.draw(st.integers(0, 3), label="escape")
        if char in '"\\':
            out.append("\\" + char if style else f"\\u{code:04x}")
        elif code < 0x20:
            short = {"\n": "\\n", "\r": "\\r", "\t": "\\t", "\b": "\\b", "\f": "\\f"}.get(char)
            out.append(short if short and style else f"\\u{code:04X}")
        elif style == 0 and code > 0xFFFF:
            high, low = divmod(code - 0x10000, 0x400)
            out.append(f"\\u{0xD800 + high:04x}\\u{0xDC00 + low:04x}")
        elif style == 0:
            out.append(f"\\u{code:04x}")
        elif char == "/" and style == 1:
            out.append("\\/")
        else:
            out.append(char)
    out.append('"')
    return "".join(out)


def _render_wild(value: Any, pick: st.DataObject) -> str:
    """JSON with random whitespace between tokens, escapes and number spellings."""
    def space() -> str:
        return pick.draw(st.sampled_from(["", "", " ", "\n  ", "\t", "\r\n", " \n "]), label="ws")

    out: list[str] = []
    todo: list[Any] = [("value", value)]
    while todo:
        kind, item = todo.pop()
        if kind == "text":
            out.append(item)
            continue
        out.append(space())
        if isinstance(item, bool) or item is None:
            out.append(json.dumps(item))
        elif isinstance(item, int):
            out.append(pick.draw(st.sampled_from([str(item), f"{item}E0", f"{item}.0e+0"]))
                       if abs(item) < 10 ** 15 else str(item))
        elif isinstance(item, float):
            out.append(pick.draw(st.sampled_from([repr(item), f"{item:.17E}", f"{item:.17e}"])))
        elif isinstance(item, str):
            out.append(_render_string(item, pick))
        elif isinstance(item, list):
            out.append("[")
            todo.append(("text", space() + "]"))
            for i, child in reversed(list(enumerate(item))):
                todo.append(("value", child))
                if i:
                    todo.append(("text", space() + ","))
        else:
            out.append("{")
            todo.append(("text", space() + "}"))
            for i, (name, child) in reversed(list(enumerate(item.items()))):
                todo.append(("value", child))
                todo.append(("text", space() + ":"))
                todo.append(("text", space() + _render_string(name, pick)))
                if i:
                    todo.append(("text", space() + ","))
        out.append(space())
    return "".join(out)


STYLES = ["compact", "compact-utf8", "spaced", "indent-2", "indent-tab-utf8", "wild"]


def render(value: Any, style: str, pick: st.DataObject) -> str:
    if style == "wild":
        return _render_wild(value, pick)
    ascii_only = not style.endswith("utf8")
    if style.startswith("compact"):
        return json.dumps(value, ensure_ascii=ascii_only, separators=(",", ":"))
    if style == "spaced":
        return json.dumps(value, ensure_ascii=ascii_only)
    return json.dumps(value, ensure_ascii=ascii_only, indent=2 if style == "indent-2" else "\t")


def split(text: str, pick: st.DataObject) -> list[str]:
    """Fragments: every character alone, random cuts (empty fragments too), or a cut
    before every backslash (so that escapes and surrogate halves start fragments)."""
    how = pick.draw(st.sampled_from(["chars", "random", "escapes"]), label="split")
    if how == "chars" and len(text) <= 300:
        return list(text)
    cuts = pick.draw(st.lists(st.integers(0, len(text)), max_size=60), label="cuts")
    if how == "escapes":
        cuts += [i for i, char in enumerate(text) if char == "\\"]
    cuts.sort()
    edges = [0, *cuts, len(text)]
    return [text[a:b] for a, b in zip(edges, edges[1:], strict=False)]


SETTINGS = settings(deadline=None, max_examples=examples(150),
                    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])


@SETTINGS
@given(documents, st.sampled_from(STYLES), st.data())
def test_any_document_in_any_style_and_split(value: Any, style: str, pick: st.DataObject) -> None:
    text = render(value, style, pick)
    final, error = check_stream(split(text, pick))
    assert error is None, (text, error)
    assert same(final, json.loads(text))


@SETTINGS
@given(values, st.sampled_from(STYLES), st.data())
def test_every_prefix_is_a_valid_beginning(value: Any, style: str, pick: st.DataObject) -> None:
    text = render(value, style, pick)
    for cut in range(len(text) + 1):
        parser = PartialJSON()
        parser.feed(text[:cut])  # never raises on a prefix of a valid document
        if cut < len(text):
            parser.feed(text[cut:])
        assert same(parser.finish(), json.loads(text))


# -- corrupted documents ------------------------------------------------------------------

_CORRUPTIONS = list('{}[],:"\\/ \t\n\x00\x1f0129-+.eEtfnuNIax\'') + ["\ud800", "é"]


@SETTINGS
@given(values, st.sampled_from(STYLES), st.data())
def test_one_corrupted_character_fails_where_json_loads_says(
        value: Any, style: str, pick: st.DataObject) -> None:
    text = render(value, style, pick)
    at = pick.draw(st.integers(0, len(text) - 1), label="at")
    new = pick.draw(st.sampled_from(_CORRUPTIONS), label="new")
    bad = text[:at] + new + text[at + 1:]
    assume(bad != text)
    check_failure(bad, split(bad, pick))


@SETTINGS
@given(values, values, st.sampled_from(["", " ", "\n"]), st.sampled_from(STYLES), st.data())
def test_a_second_document_fails_at_its_first_character(
        first: Any, second: Any, gap: str, style: str, pick: st.DataObject) -> None:
    one, two = render(first, style, pick), render(second, style, pick)
    bad = one + gap + two
    check_failure(bad, split(bad, pick))
    glued_number = (not gap and one[-1] in "0123456789" and two[0] in "0123456789")
    assume(not glued_number)  # "1" + "2" is the valid document 12
    error = check_stream(split(bad, pick))[1]
    assert error is not None
    assert error.position == len(bad) - len(two.lstrip(" \t\n\r"))


@SETTINGS
@given(st.dictionaries(strings, values, min_size=1, max_size=5), values, st.sampled_from(STYLES),
       st.data())
def test_a_repeated_name_fails_at_its_closing_quote(
        obj: dict, again: Any, style: str, pick: st.DataObject) -> None:
    text = render(obj, style, pick).rstrip(" \t\n\r")
    # A name as the text spells it (an escaped surrogate pair reads back as one character),
    # repeated raw (escaped, two lone surrogates would read back as the pair they spell).
    name = pick.draw(st.sampled_from(sorted(json.loads(text))), label="name")
    head = text[:-1] + "," + json.dumps(name, ensure_ascii=False)
    bad = head + ":" + render(again, style, pick) + "}"
    error = check_stream(split(bad, pick))[1]
    assert error is not None and "appears twice" in error.message
    assert error.position == len(head) - 1
    check_failure(bad, split(bad, pick))


def _closers_after_values(text: str) -> list[int]:
    """Positions just after the last value of each non-empty container."""
    spots, in_string, escaped, last = [], False, False, None
    for i, char in enumerate(text):
        if in_string:
            if escaped:
                escaped = False
            elif char == "\\":
                escaped = True
            elif char == '"':
                in_string = False
                last = i
            continue
        if char == '"':
            in_string = True
        elif char in "]}" and last is not None and text[last] not in "[{,:":
            spots.append(last + 1)
        if char not in " \t\n\r":
            last = i
    return spots


@SETTINGS
@given(values.filter(lambda v: isinstance(v, (list, dict)) and v), st.sampled_from(STYLES),
       st.data())
def test_a_trailing_comma_fails_at_the_closing_bracket(
        value: Any, style: str, pick: st.DataObject) -> None:
    text = render(value, style, pick)
    spot = pick.draw(st.sampled_from(_closers_after_values(text)), label="spot")
    bad = text[:spot] + "," + text[spot:]
    error = check_stream(split(bad, pick))[1]
    assert error is not None and "trailing comma" in error.message
    check_failure(bad, split(bad, pick))
    assert bad[error.position] in "]}"


@pytest.mark.parametrize(("text", "position"), [
    ("[null,]", 6), ('{"a":1,}', 7), ("[1,  ]", 5), ('{"a": [true,\n]}', 13),
])
def test_a_trailing_comma_is_reported_at_its_closer_on_every_python(text, position):
    # Python 3.13's json.loads reports the comma; ours names the first character that can
    # never become valid JSON, and ``[null,`` still can. The same on 3.11 to 3.13.
    with pytest.raises(PartialJSONError) as caught:
        PartialJSON().feed(text)
    assert caught.value.position == position and "trailing comma" in str(caught.value)
    assert expected_position(text) == position


# -- the captures: every tool-argument document, fed as it arrived -----------------------------


def tool_argument_documents(capture: Capture) -> dict[tuple, list[str]]:
    """Argument fragments per call: Anthropic block index, Responses item, Chat (choice, index)."""
    documents: dict[tuple, list[str]] = defaultdict(list)
    if capture.status >= 300:
        return documents
    for event in capture.events:
        try:
            payload = json.loads(event.data)
        except ValueError:
            continue
        if not isinstance(payload, dict):
            continue
        kind = payload.get("type")
        if kind == "content_block_delta" and payload["delta"].get("type") == "input_json_delta":
            documents[(capture.key, "block", payload["index"])].append(
                payload["delta"]["partial_json"])
        elif kind in ("response.function_call_arguments.delta",
                      "response.mcp_call_arguments.delta"):
            item = payload.get("item_id") or payload.get("output_index")
            documents[(capture.key, "item", item)].append(payload["delta"])
        elif payload.get("object") == "chat.completion.chunk":
            for choice in payload.get("choices") or []:
                for call in (choice.get("delta") or {}).get("tool_calls") or []:
                    arguments = (call.get("function") or {}).get("arguments")
                    if arguments is not None:
                        documents[(capture.key, "call", choice["index"], call["index"])].append(
                            arguments)
    return documents


def _capture_documents() -> list[tuple[tuple, list[str]]]:
    found: dict[tuple, list[str]] = {}
    for capture in [*corpus(), *reference_corpus()]:
        for key, fragments in tool_argument_documents(capture).items():
            found[(capture.path.parent.parent.name if capture.path else "", *key)] = fragments
    return sorted(found.items(), key=lambda item: repr(item[0]))


CAPTURE_DOCUMENTS = _capture_documents()


@pytest.mark.skipif(not CAPTURE_DOCUMENTS, reason="no tool-argument documents in any capture")
@pytest.mark.parametrize(("key", "fragments"), CAPTURE_DOCUMENTS,
                         ids=[" ".join(map(str, k[1:])) for k, _ in CAPTURE_DOCUMENTS])
def test_capture_tool_arguments_as_they_arrived(key: tuple, fragments: list[str]) -> None:
    check_failure("".join(fragments), fragments)


def test_the_captures_include_the_cases_this_lesson_is_about() -> None:
    """A cut stream, glued calls and a long argument; not vacuous when captures exist."""
    if not CAPTURE_DOCUMENTS:
        pytest.skip("no tool-argument documents in any capture")
    texts = ["".join(fragments) for _, fragments in CAPTURE_DOCUMENTS]
    assert any(expected_position(t) is None for t in texts)
    assert any(expected_position(t) is not None for t in texts)


# -- copies and the open path ---------------------------------------------------------


def _mutable_fields_shared(a: PartialJSON, b: PartialJSON) -> list[str]:
    mine = vars(b)
    return [name for name, value in vars(a).items()
            if isinstance(value, (list, dict)) and mine[name] is value]


@settings(deadline=None, max_examples=examples(120), derandomize=True, database=None,
          suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
@given(documents, st.sampled_from(STYLES), st.data())
def test_a_copy_taken_after_any_fragment_goes_on_like_a_fresh_parser(
        value: Any, style: str, pick: st.DataObject) -> None:
    text = render(value, style, pick)
    fragments = split(text, pick)
    at = pick.draw(st.integers(0, len(fragments)), label="copy after")
    original = PartialJSON()
    for piece in fragments[:at]:
        original.feed(piece)
    before = (copy.deepcopy(original.value), set(original.settled), original.open_path)
    twin = original.copy()
    if original.open_path is not None:
        # Whatever the parser may still write to is the twin's own: a field added
        # later that holds a list or dict is caught here, not shared by accident.
        assert _mutable_fields_shared(twin, original) == []
    fresh = PartialJSON()
    for piece in fragments[:at]:
        fresh.feed(piece)
    for piece in fragments[at:]:
        expected = fresh.feed(piece)
        got = twin.feed(piece)
        assert [(c.op, c.path, c.value) for c in got] == [(c.op, c.path, c.value) for c in expected]
        assert set(twin.settled) == set(fresh.settled)
        assert twin.open_path == fresh.open_path
    assert same(twin.finish(), json.loads(text))
    # the original did not move
    assert same(original.value, before[0]) and set(original.settled) == before[1]
    assert original.open_path == before[2]


def _state(parser: PartialJSON) -> tuple:
    """What a parser shows, as plain data (read through the public API)."""
    return (json.dumps(parser.value, ensure_ascii=False) if parser.value is not NOTHING
            else NOTHING, frozenset(parser.settled), parser.open_path, parser.settled_count)


def _fed(parser: PartialJSON, piece: str) -> tuple:
    """What feeding one fragment gave: its changes, or the error's place and words."""
    try:
        return ("changes", [(c.op, c.path, json.dumps(c.value)) for c in parser.feed(piece)])
    except PartialJSONError as error:
        return ("error", error.position, error.message.removeprefix("this parser already failed: "))


@settings(deadline=None, max_examples=examples(100), derandomize=True, database=None,
          suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
@given(documents, st.sampled_from(STYLES), st.data())
def test_copies_taken_anywhere_go_on_alone_and_never_move_each_other(
        value: Any, style: str, pick: st.DataObject) -> None:
    # Parsers and copies of them (copies of copies too, used or not yet) are fed
    # in any interleaving, some read after a feed and some not (a read brings a
    # shared open string up to date): each must show, after its i-th fragment,
    # exactly what one parser fed the first i fragments shows, whatever the
    # others did before or after. Some texts are corrupted, so that a copy of a
    # parser that later fails, and one of a parser that failed, are in it too.
    text = render(value, style, pick)
    if text and pick.draw(st.booleans(), label="corrupt"):
        at = pick.draw(st.integers(0, len(text) - 1), label="corrupt at")
        text = text[:at] + pick.draw(st.sampled_from(["}", "x", '"', ",", "\\q"])) + text[at:]
    fragments = split(text, pick)
    fresh = PartialJSON()
    fed_expected, states = [], [_state(fresh)]
    for piece in fragments:
        fed_expected.append(_fed(fresh, piece))
        states.append(_state(fresh))
    parsers: list[list] = [[PartialJSON(), 0]]        # [parser, fragments fed]
    while any(at < len(fragments) for _, at in parsers):
        parser, at = entry = pick.draw(st.sampled_from(parsers), label="who")
        action = pick.draw(st.sampled_from(["feed", "feed", "feed", "copy", "look"]),
                           label="what")
        if action == "copy":
            twin = [parser.copy() if pick.draw(st.booleans(), label="how")
                    else copy.deepcopy(parser), at]
            if len(parsers) < 5:
                parsers.append(twin)
            else:   # five at most: a new copy replaces one (never the first parser)
                parsers[pick.draw(st.integers(1, 4), label="replaces")] = twin
        elif action == "look":
            for other, other_at in parsers:
                assert _state(other) == states[other_at]
        elif at < len(fragments):
            assert _fed(parser, fragments[at]) == fed_expected[at]
            entry[1] = at + 1
            if pick.draw(st.booleans(), label="read"):
                assert _state(parser) == states[at + 1]
    expected = _finish_of(fresh)
    for parser, at in parsers:
        assert _state(parser) == states[at]
        assert _finish_of(parser) == expected


def _finish_of(parser: PartialJSON) -> tuple:
    try:
        return ("value", json.dumps(parser.finish(), ensure_ascii=False))
    except PartialJSONError as error:
        return ("error", error.position)


@SETTINGS
@given(documents, st.sampled_from(STYLES), st.data())
def test_the_open_path_is_the_one_chain_not_settled(value: Any, style: str,
                                                     pick: st.DataObject) -> None:
    from lesson_lib.tool_calls import open_path_of
    parser = PartialJSON()
    for piece in split(render(value, style, pick), pick):
        parser.feed(piece)
        assert parser.open_path == open_path_of(parser.value, parser.settled)
        assert parser.settled_count == len(set(parser.settled))
    parser.finish()
    assert parser.open_path is None
    assert parser.settled_count == len(all_paths(parser.value))


def test_a_failed_parser_copies_as_failed() -> None:
    parser = PartialJSON()
    parser.feed('{"a": [1, ')
    with pytest.raises(PartialJSONError):
        parser.feed("]")
    twin = copy.deepcopy(parser)
    assert twin is not parser and twin.value == parser.value
    errors = []
    for one in (parser, twin):
        with pytest.raises(PartialJSONError) as again:
            one.feed("2]}")
        errors.append((again.value.position, again.value.message))
    assert errors[0] == errors[1] and errors[0][0] == 10
