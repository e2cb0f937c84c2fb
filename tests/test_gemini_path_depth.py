"""Gemini's ``partialArgs`` at depth: the course's depth rule, and memory linear in the entries.

A ``jsonPath`` is a string, so a payload nested a few levels can name a value
100,000 levels down. Past `strict_json.MAX_DEPTH` steps the path is refused
(a typed diagnostic, never a crash); below it, open containers share their
paths, so the memory is linear in the entries, not in their depth squared.
"""

from __future__ import annotations

import json
import tracemalloc

from examples import examples
from hypothesis import given, settings
from hypothesis import strategies as st
from test_gemini_accumulate import gemini, rec

from lesson_lib.accumulate import accumulate
from lesson_lib.accumulate.path_arguments import PathArguments, PathError, parse_path
from lesson_lib.partial_json import PartialJSON
from lesson_lib.sse.strict_json import MAX_DEPTH


def _peak(job) -> tuple[object, int]:
    """What `job` returns and the most memory it held at once (bytes, by tracemalloc)."""
    tracemalloc.start()
    try:
        tracemalloc.reset_peak()
        result = job()
        return result, tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()


def _chain(steps: list[str | int], leaf: int) -> object:
    """The value `leaf` at path `steps` (built from the inside out, no recursion)."""
    value: object = leaf
    for step in reversed(steps):
        value = {step: value} if isinstance(step, str) else [value]
    return value


def _json_path(steps: list[str | int]) -> str:
    return "$" + "".join(f"[{s}]" if isinstance(s, int) else f".{s}" for s in steps)


def test_a_path_deeper_than_the_rule_is_refused_in_bounded_memory():
    deep = {"jsonPath": "$" + ".a" * 3_000, "numberValue": 1}
    args = PathArguments()

    def add():
        try:
            return args.add(deep)
        except PathError as exc:
            return exc

    refused, peak = _peak(add)
    assert isinstance(refused, PathError) and f"deeper than {MAX_DEPTH}" in str(refused)
    assert len(str(refused)) < 300                    # the message quotes the path's start
    assert peak < 1_000_000, peak                     # 3,000 levels held as prefixes: 36 MB
    assert args.add({"jsonPath": "$.b", "numberValue": 2}) == '{"b":2'   # nothing written


def test_the_deepest_path_the_rule_allows_is_read():
    steps = ["a"] * (MAX_DEPTH - 1) + [0]
    assert parse_path(_json_path(steps)) == tuple(steps)
    args = PathArguments()
    text = args.add({"jsonPath": _json_path(steps), "numberValue": 7}) + args.close()
    assert json.loads(text) == _chain(steps, 7)


def test_many_deep_paths_take_memory_linear_in_the_entries():
    # Each entry opens 400 containers beside the last one's: closing those settles 400
    # paths each time. As tuples they held 80,000 steps per entry; shared, 400 nodes.
    entries = [{"jsonPath": f"$.k{i}" + ".a" * 400, "numberValue": i} for i in range(20)]
    size = sum(len(e["jsonPath"]) for e in entries)
    args = PathArguments()

    def run():
        pieces = [args.add(entry) for entry in entries]
        pieces.append(args.close())
        return "".join(pieces)

    text, peak = _peak(run)
    assert json.loads(text) == {f"k{i}": _chain(["a"] * 400, i) for i in range(20)}
    assert peak < 100 * size, (peak, size)
    assert len(args.settled) == 20 * 401 + 1
    assert args.settled[-1] == () and args.settled[0] == ("k0", *["a"] * 400)


def test_a_gemini_stream_with_a_path_3000_levels_deep_is_a_typed_diagnostic():
    body = (rec({"functionCall": {"name": "f", "willContinue": True}})
            + rec({"functionCall": {"partialArgs": [
                {"jsonPath": "$.ok", "numberValue": 1},
                {"jsonPath": "$" + ".a" * 3_000, "numberValue": 1}], "willContinue": True}})
            + rec({"functionCall": {}}, finish="STOP"))
    result, peak = _peak(lambda: accumulate(gemini(body)))
    diags = [d for d in result.diagnostics if d.code == "partial_args_out_of_order"]
    assert len(diags) == 1 and diags[0].severity == "error"
    assert f"deeper than {MAX_DEPTH}" in diags[0].message
    part = result.final["candidates"][0]["content"]["parts"][0]
    assert part["functionCall"] == {"name": "f", "args": {"ok": 1}}
    assert peak < 200 * len(body), (peak, len(body))


_pattern = st.lists(st.one_of(st.sampled_from(["a", "b c", "é"]), st.just(0)),
                    min_size=1, max_size=6)


@settings(max_examples=examples(60), deadline=None, derandomize=True, database=None)
@given(_pattern, st.integers(1, MAX_DEPTH + 40))
def test_a_path_is_read_to_the_rule_and_refused_past_it(pattern, depth):
    # A short pattern repeated to `depth` steps, after the name every argument has.
    steps = ["top", *(pattern * depth)[:depth - 1]]
    entry = {"jsonPath": "$" + "".join(f"[{s}]" if isinstance(s, int) else f"[{json.dumps(s)}]"
                                       for s in steps), "numberValue": 5}
    args = PathArguments()
    if len(steps) > MAX_DEPTH:
        try:
            args.add(entry)
        except PathError as exc:
            assert "deeper than" in str(exc)
        else:
            raise AssertionError("a path past the rule was read")
        assert args.close() == "" and list(args.settled) == []
        return
    text = args.add(entry) + args.close()
    value = _chain(steps, 5)
    assert text == json.dumps(value, ensure_ascii=False, separators=(",", ":"))
    whole = PartialJSON()
    whole.feed(text)
    whole.finish()
    assert set(args.settled) == set(whole.settled)
    assert len(args.settled) == len(set(args.settled)) == len(steps) + 1
