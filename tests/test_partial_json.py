"""Unit tests for lesson_lib.partial_json: each rule of the contract, one small document at a time."""

from __future__ import annotations

import copy
import json
import pickle

import jiter
import pytest

from lesson_lib.partial_json import NOTHING, Change, PartialJSON, PartialJSONError


def feed_all(*fragments: str) -> tuple[PartialJSON, list[list[Change]]]:
    parser = PartialJSON()
    return parser, [parser.feed(f) for f in fragments]


def error_of(text: str, *, step: int | None = None) -> PartialJSONError:
    """The error for `text`, fed whole (step None) or `step` characters at a time."""
    parser = PartialJSON()
    pieces = [text] if step is None else [text[i:i + step] for i in range(0, len(text), step)]
    with pytest.raises(PartialJSONError) as info:
        for piece in pieces:
            parser.feed(piece)
        parser.finish()
    return info.value


# -- the Change stream, written out ------------------------------------------------


def test_the_module_docstring_example() -> None:
    parser = PartialJSON()
    assert parser.feed('{"city": "Par') == [
        Change((), "set", {}), Change(("city",), "set", ""), Change(("city",), "append", "Par")]
    assert parser.value == {"city": "Par"}
    assert parser.feed('is", "days": 1') == [
        Change(("city",), "append", "is"), Change(("city",), "settle", "Paris")]
    assert parser.settled == {("city",)}
    assert parser.feed("2}") == [
        Change(("days",), "set", 12), Change(("days",), "settle", 12),
        Change((), "settle", {"city": "Paris", "days": 12})]
    assert parser.finish() == {"city": "Paris", "days": 12}


def test_change_stream_of_a_nested_document() -> None:
    parser, changes = feed_all('{"a": ["x', '\\n", tr', "ue, null, {}], ", '"b": -1.5e', "3 }")
    assert changes == [
        [Change((), "set", {}), Change(("a",), "set", []), Change(("a", 0), "set", ""),
         Change(("a", 0), "append", "x")],
        [Change(("a", 0), "append", "\n"), Change(("a", 0), "settle", "x\n")],
        [Change(("a", 1), "set", True), Change(("a", 1), "settle", True),
         Change(("a", 2), "set", None), Change(("a", 2), "settle", None),
         Change(("a", 3), "set", {}), Change(("a", 3), "settle", {}),
         Change(("a",), "settle", ["x\n", True, None, {}])],
        [],
        [Change(("b",), "set", -1500.0), Change(("b",), "settle", -1500.0),
         Change((), "settle", {"a": ["x\n", True, None, {}], "b": -1500.0})],
    ]
    assert parser.finish() == {"a": ["x\n", True, None, {}], "b": -1500.0}


def test_change_stream_of_top_level_scalars() -> None:
    parser, changes = feed_all('"h', 'i"')
    assert changes == [[Change((), "set", ""), Change((), "append", "h")],
                       [Change((), "append", "i"), Change((), "settle", "hi")]]
    parser, changes = feed_all('""')
    assert changes == [[Change((), "set", ""), Change((), "settle", "")]]
    parser, changes = feed_all("tr", "ue", " ")
    assert changes == [[], [Change((), "set", True)], [Change((), "settle", True)]]
    parser, changes = feed_all("1", "2")
    assert changes == [[], []]
    assert parser.value is NOTHING and () not in parser.settled
    assert parser.finish() == 12
    assert parser.value == 12 and parser.settled == {()}


def test_set_carries_a_fresh_container_and_settle_the_final_one() -> None:
    parser = PartialJSON()
    begun = parser.feed("[{")[1]
    assert begun == Change((0,), "set", {})
    assert begun.value is not parser.value[0]
    settled = parser.feed("}]")
    assert settled[0].value is parser.value[0]
    assert settled[1].value is parser.value


# -- what the value shows ------------------------------------------------------------


def test_nothing_before_a_value_begins() -> None:
    parser = PartialJSON()
    assert parser.value is NOTHING
    parser.feed(" \n\t")
    assert parser.value is NOTHING
    assert repr(NOTHING) == "NOTHING" and not NOTHING and NOTHING is not None
    assert pickle.loads(pickle.dumps(NOTHING)) is NOTHING
    parser.feed("nul")
    assert parser.value is NOTHING
    parser.feed("l")
    assert parser.value is None


def test_strings_appear_as_they_grow() -> None:
    parser = PartialJSON()
    seen = []
    for fragment in ['{"s": "', "ab", "c", 'd"}']:
        parser.feed(fragment)
        seen.append(copy.deepcopy(parser.value))
    assert seen == [{"s": ""}, {"s": "ab"}, {"s": "abc"}, {"s": "abcd"}]


def test_a_name_appears_when_its_value_begins() -> None:
    parser = PartialJSON()
    seen = []
    for fragment in ['{"na', 'me"', " :", " ", '"', 'v", "n": ', "4", "2", "}"]:
        parser.feed(fragment)
        seen.append(copy.deepcopy(parser.value))
    assert seen == [{}, {}, {}, {}, {"name": ""}, {"name": "v"}, {"name": "v"},
                    {"name": "v"}, {"name": "v", "n": 42}]


@pytest.mark.parametrize("cut", ["[1", "[1.", "[1.5", "[1.5e", "[1.5e-", "[1.5e-7", "[-", "[-0",
                                 "[t", "[tru", "[f", "[n"])
def test_an_unfinished_number_or_literal_is_absent(cut: str) -> None:
    parser = PartialJSON()
    parser.feed(cut)
    assert parser.value == []


def test_a_literal_appears_at_its_last_letter_and_settles_at_its_delimiter() -> None:
    parser = PartialJSON()
    parser.feed("[fals")
    assert parser.value == []
    parser.feed("e")
    assert parser.value == [False] and (0,) not in parser.settled
    parser.feed(" ")
    assert (0,) in parser.settled


def test_an_escape_cut_between_fragments_shows_nothing_until_whole() -> None:
    parser = PartialJSON()
    shown = []
    for fragment in ['"a\\', "n", "\\u0", "0", "e", "9", "\\", '"', "\\ud83d", "\\", "u", "de0",
                     "0", '"']:
        parser.feed(fragment)
        shown.append(parser.value)
    assert shown == ["a", "a\n", "a\n", "a\n", "a\n", "a\né", "a\né", 'a\né"', 'a\né"',
                     'a\né"', 'a\né"', 'a\né"', 'a\né"😀', 'a\né"😀']


@pytest.mark.parametrize("text", ['"\\ud83d\\ude00"', '"\\uD83D\\uDE00x"', '"\\ud83d"',
                                  '"\\ude00"', '"\\ud83d\\n"', '"\\ud83d\\u0041"',
                                  '"\\ud83d\\ud83d\\ude00"', '"\\udbff\\udfff"', '"\\ud83dx"',
                                  '"\\ud800\\\\"'])
def test_surrogate_escapes_decode_as_json_loads_does_at_every_split(text: str) -> None:
    for first in range(1, len(text)):
        for second in range(first, len(text)):
            parser = PartialJSON()
            for fragment in (text[:first], text[first:second], text[second:]):
                parser.feed(fragment)
            assert parser.finish() == json.loads(text)


def test_the_value_is_live() -> None:
    parser = PartialJSON()
    parser.feed('{"items": [1, ')
    live = parser.value
    items = live["items"]
    parser.feed('2, {"k": "v"')
    assert parser.value is live and live["items"] is items
    assert live == {"items": [1, 2, {"k": "v"}]}


def test_the_open_string_is_brought_up_to_date_on_each_read_even_when_held() -> None:
    parser = PartialJSON()
    parser.feed('{"content": "')
    expected = ""
    held = []
    for k in range(500):
        piece = f"line {k} \\\"é\\\"\\n" if k % 3 else f"ab{k}"
        parser.feed(piece)
        expected += json.loads(f'"{piece}"')
        text = parser.value["content"]
        assert text == expected
        if k % 7 == 0:
            held.append((text, expected))  # an old version must not change under us
    for text, then in held:
        assert text == then


# -- settled paths -----------------------------------------------------------------------


def test_each_kind_of_value_settles_at_its_rule() -> None:
    parser = PartialJSON()
    parser.feed('{"s": "ab')
    assert parser.settled == set()
    parser.feed('"')
    assert parser.settled == {("s",)}
    parser.feed(', "n": 12')
    assert ("n",) not in parser.settled
    parser.feed(' , "b": true')
    assert parser.settled == {("s",), ("n",)}
    parser.feed(', "l": [[]')
    assert parser.settled == {("s",), ("n",), ("b",), ("l", 0)}
    parser.feed("]")
    assert ("l",) in parser.settled and () not in parser.settled
    parser.feed("}")
    assert parser.settled == {(), ("s",), ("n",), ("b",), ("l",), ("l", 0)}


def test_settled_is_a_live_view_with_cheap_membership() -> None:
    parser = PartialJSON()
    settled = parser.settled
    parser.feed('[1, "x", {"a": [2]}')
    assert settled is parser.settled
    assert len(settled) == 5
    assert (2, "a", 0) in settled and (2, "a") in settled and (2,) in settled
    assert () not in settled
    for absent in [(3,), (-1,), ("0",), (1, 0), (2, "b"), (2, 0), [0], "x", None, (True, 5)]:
        assert absent not in settled
    assert list(settled) == [(0,), (1,), (2,), (2, "a"), (2, "a", 0)]
    assert repr(settled) == "SettledPaths({(0,), (1,), (2,), (2, 'a'), (2, 'a', 0)})"
    snapshot = set(settled)
    parser.feed("]")
    assert () in settled and () not in snapshot


def test_settle_changes_and_the_settled_set_agree() -> None:
    parser = PartialJSON()
    from_changes: set[tuple] = set()
    for fragment in ['{"a": [tr', 'ue, 1', "0, ", '"s"], "b"', ': {"c": nu', "ll}", "}"]:
        for change in parser.feed(fragment):
            if change.op == "settle":
                from_changes.add(change.path)
        assert from_changes == set(parser.settled)
        assert len(parser.settled) == len(from_changes)


def test_a_top_level_number_settles_at_finish() -> None:
    parser = PartialJSON()
    parser.feed("-0.5")
    assert parser.settled == set()
    assert parser.finish() == -0.5
    assert parser.settled == {()}


# -- strictness: exact positions ---------------------------------------------------------

STRICT = [
    ('{"a":1,}', 7, "trailing comma"),
    ("[1,]", 3, "trailing comma"),
    ("[01]", 2, "0 followed by"),
    ("[-01]", 3, "0 followed by"),
    ("NaN", 0, "NaN is not JSON"),
    ("[Infinity]", 1, "Infinity is not JSON"),
    ("[-Infinity]", 2, "-Infinity is not JSON"),
    ('{"a":1}{"b":2}', 7, "exactly one value"),
    ('{"a":"x"} x', 10, "exactly one value"),
    ("1 2", 2, "exactly one value"),
    ('{"a" 1}', 5, "expected ':'"),
    ('["a\nb"]', 3, "must be escaped"),
    ('["a\x00"]', 3, "must be escaped"),
    ("trux", 3, "expected 'true'"),
    ("[tru]", 4, "expected 'true'"),
    ("truex", 4, "after the complete JSON value"),
    ("[true1]", 5, "expected ',' or ']'"),
    ('{"a":1,"a":2}', 9, "appears twice"),
    ('{"a":{"b":1,"c":{},"b":[]}}', 21, "appears twice"),
    ('["\\x"]', 3, "not an escape"),
    ('["\\u12x4"]', 6, "four hex digits"),
    ('["\\ud800\\u12x4"]', 12, "four hex digits"),
    ("[1.]", 3, "decimal point"),
    ("[1e]", 3, "exponent"),
    ("[1e+]", 4, "exponent"),
    ("[-]", 2, "followed by a digit"),
    ("[.5]", 1, "before the point"),
    ("[+1]", 1, "plus sign"),
    ("['a']", 1, "double quotes"),
    ("{'a': 1}", 1, "double quotes"),
    ("{1:2}", 1, "name in double quotes"),
    ("[1}", 2, "innermost open bracket"),
    ('{"a":1]', 6, "innermost open bracket"),
    ("]", 0, "where a value was due"),
    ("\ufeff{}", 0, "byte-order mark"),
    ("[1 2]", 3, "missing comma"),
    ("[1.5.2]", 4, "expected ',' or ']' after a number"),
    ("[None]", 1, "write null"),
    ("[True]", 1, "lowercase"),
    ("[yes]", 1, "bare word"),
    ("[1,,2]", 3, "expected a value"),
    ('{"a":}', 5, "where a value was due"),
    ('{"a",1}', 4, "expected ':'"),
]


@pytest.mark.parametrize(("text", "position", "words"), STRICT)
def test_strictness_with_exact_positions(text: str, position: int, words: str) -> None:
    for step in (None, 1, 2, 3):
        error = error_of(text, step=step)
        assert error.position == position, (step, error)
        assert words in error.message
        assert isinstance(error, ValueError)
        assert str(error).endswith(f"(at character {position})")


@pytest.mark.parametrize("text", ['{"a": [1, "two", {"three": 3.0}], "b": null}', '"abc"', "[[]]"])
def test_a_cut_text_fails_only_at_finish_with_the_end_as_position(text: str) -> None:
    for cut in range(len(text)):
        parser = PartialJSON()
        parser.feed(text[:cut])
        with pytest.raises(PartialJSONError) as info:
            parser.finish()
        assert info.value.position == cut
        assert ("ends" in info.value.message) or ("holds no JSON value" in info.value.message)


def test_the_empty_text_is_not_json() -> None:
    for text in ["", "   ", "\n"]:
        parser = PartialJSON()
        parser.feed(text)
        with pytest.raises(PartialJSONError) as info:
            parser.finish()
        assert info.value.position == len(text)
        assert "maps to {}" in info.value.message


def test_finish_is_idempotent() -> None:
    parser = PartialJSON()
    parser.feed('{"a": [1]}  ')
    first = parser.finish()
    assert parser.finish() is first
    broken = PartialJSON()
    broken.feed('{"a": ')
    positions = []
    for _ in range(2):
        with pytest.raises(PartialJSONError) as info:
            broken.finish()
        positions.append(info.value.position)
    assert positions == [6, 6]


def test_feed_after_finish_raises() -> None:
    parser = PartialJSON()
    parser.feed("[]")
    parser.finish()
    with pytest.raises(PartialJSONError, match="after finish"):
        parser.feed(" ")
    with pytest.raises(PartialJSONError, match="after finish"):
        parser.feed("")


def test_a_failed_parser_stays_failed() -> None:
    parser = PartialJSON()
    parser.feed('{"a": 1')
    with pytest.raises(PartialJSONError) as first:
        parser.feed("x")
    for again in (lambda: parser.feed(""), lambda: parser.feed("}"), parser.finish,
                  parser.finish, lambda: parser.feed("}")):
        with pytest.raises(PartialJSONError) as info:
            again()
        assert info.value.position == first.value.position == 7
        assert "already failed" in info.value.message


def test_the_failing_fragment_reports_what_it_changed_before_the_error() -> None:
    parser = PartialJSON()
    with pytest.raises(PartialJSONError) as info:
        parser.feed('["x", 1, }')
    assert info.value.position == 9
    assert info.value.changes == [
        Change((), "set", []), Change((0,), "set", ""), Change((0,), "append", "x"),
        Change((0,), "settle", "x"), Change((1,), "set", 1), Change((1,), "settle", 1)]
    assert parser.value == ["x", 1]


@pytest.mark.parametrize("text", ['"\\ud800"', '"\\udc00"', '["\\udfff", "\\ud800\\ud800"]',
                                  '{"\\ud800": 1}', '"\ud800 raw"'])
def test_lone_surrogates_are_accepted_like_json_loads(text: str) -> None:
    parser = PartialJSON()
    for char in text:
        parser.feed(char)
    assert parser.finish() == json.loads(text)


@pytest.mark.parametrize("text", ["0", "-0", "-0.0", "1E5", "1e-5", "2.5E+3", "123456789012345678901234567890",
                                  "0.1", "1e400", "-1e-400", "10.00"])
def test_numbers_have_the_value_and_type_json_loads_gives(text: str) -> None:
    for step in (1, len(text)):
        parser = PartialJSON()
        for i in range(0, len(text), step):
            parser.feed("[" + text[i:i + step] if i == 0 else text[i:i + step])
        parser.feed("]")
        value = parser.finish()[0]
        expected = json.loads(text)
        assert value == expected and type(value) is type(expected)


def test_an_integer_too_long_for_python_is_a_clear_error() -> None:
    error = error_of("[" + "7" * 5000 + "]")
    assert error.position == 1 and "5000 digits" in error.message


def test_feed_takes_only_text() -> None:
    with pytest.raises(TypeError, match="decode bytes"):
        PartialJSON().feed(b"{}")  # type: ignore[arg-type]


# -- depth, and the Change object -----------------------------------------------------------


def depth_of(value: object) -> int:
    depth = 0
    while isinstance(value, (list, dict)) and value:
        value = value[0] if isinstance(value, list) else next(iter(value.values()))
        depth += 1
    return depth


def test_ten_thousand_levels_in_one_fragment() -> None:
    depth = 10_000
    parser = PartialJSON()
    changes = parser.feed("[" * depth + '"deep"' + "]" * depth)
    assert len(changes) == 2 * depth + 3
    assert changes[depth - 1] == Change((0,) * (depth - 1), "set", [])
    assert changes[depth].path == (0,) * depth and changes[depth].op == "set"
    assert changes[-1].path == () and changes[-1].op == "settle"
    assert len(parser.settled) == depth + 1
    assert (0,) * depth in parser.settled and (0,) * (depth + 1) not in parser.settled
    value = parser.finish()
    assert depth_of(value) == depth


def test_ten_thousand_levels_one_character_at_a_time() -> None:
    depth = 10_000
    parser = PartialJSON()
    text = '{"k":' * depth + "7" + "}" * depth
    for char in text:
        parser.feed(char)
        if char == "7":
            assert len(parser.settled) == 0
            assert parser.open_path == ("k",) * (depth - 1)
    assert depth_of(parser.finish()) == depth
    assert len(parser.settled) == depth + 1


def test_change_behaves_like_a_frozen_dataclass() -> None:
    parser = PartialJSON()
    made = parser.feed('{"a": [1')[1]
    assert made == Change(("a",), "set", [])
    assert made != Change(("a",), "set", {}) and made != ("a",)
    assert repr(made) == "Change(path=('a',), op='set', value=[])"
    string_change = Change(("a", 0), "append", "x")
    assert hash(string_change) == hash(Change(("a", 0), "append", "x"))
    assert {string_change, Change(("a", 0), "append", "x")} == {string_change}
    assert pickle.loads(pickle.dumps(made)) == made
    with pytest.raises(AttributeError):
        made.op = "settle"  # type: ignore[misc]
    with pytest.raises(AttributeError):
        made.path = ()  # type: ignore[misc]


# -- the claims the module docstring makes about jiter -----------------------------------------


def test_the_docstring_claims_about_jiter_hold_for_the_pinned_version() -> None:
    def lenient(text: str) -> object:
        return jiter.from_json(text.encode(), partial_mode="trailing-strings")

    assert lenient('{"a":"x"}{"b":1}') == {"a": "x"}
    assert lenient('{"a": "x"} x') == {"a": "x"}
    assert lenient('{"n": 1') == {"n": 1}
    assert lenient('{"a": "x", "n": 1.') == {"a": "x"}
    assert lenient('{"a": "x", "n": tr') == {"a": "x"}
    assert lenient('{"a":1,"a":2}') == {"a": 2}
    assert error_of('{"a":"x"}{"b":1}').position == 9
    assert error_of('{"a":1,"a":2}').position == 9
    cut = PartialJSON()
    cut.feed('{"a": "x", "n": 1.')
    assert cut.value == {"a": "x"}
    with pytest.raises(PartialJSONError):
        cut.finish()


def test_the_benchmark_runs_and_every_implementation_agrees() -> None:
    import sys
    from pathlib import Path

    sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "bench"))
    try:
        import bench_partial_json
    finally:
        sys.path.pop(0)
    rows = bench_partial_json.run(quick=True)  # best_of checks each value against json.loads
    shapes = set(bench_partial_json.SHAPES)
    assert {(r["case"], r["implementation"]) for r in rows} == {
        (case, name) for case in shapes for name in bench_partial_json.IMPLEMENTATIONS}
    for row in rows:
        assert set(row) >= {"case", "implementation", "size_kb", "seconds", "ratio"}
        assert row["seconds"] > 0
        if row["implementation"] == "lesson_lib":
            assert row["ratio"] == 1.0
