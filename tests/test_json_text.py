"""The CLI's JSON text: valid JSON however deep, non-finite floats and split surrogates."""

from __future__ import annotations

import json

from lesson_lib.capture.json_text import dumps, printable


def test_ordinary_values_are_laid_out_as_json_dumps_does():
    value = {"a": [1, {"b": "é", "c": []}, {}], "d": None, "e": 1.5}
    assert dumps(value) == json.dumps(value, ensure_ascii=False, indent=1)


def test_a_value_nested_past_the_recursion_limit_is_written_and_reads_back():
    deep: list = []
    for _ in range(20_000):
        deep = [deep]
    text = dumps({"input": deep})
    assert "".join(text.split()) == '{"input":' + "[" * 20_001 + "]" * 20_001 + "}"
    assert text.startswith('{\n "input": [\n  [\n   [')


def test_non_finite_floats_become_null_so_the_text_is_json():
    text = dumps({"a": float("nan"), "b": [float("inf"), 1]})
    assert json.loads(text) == {"a": None, "b": [None, 1]}


def test_a_split_surrogate_pair_is_joined_and_a_lone_half_is_escaped():
    assert dumps(["\ud83d" + "\ude00"]) == '[\n "😀"\n]'
    text = dumps({"t": "a\ud83db"})
    assert text == '{\n "t": "a\\ud83db"\n}'
    text.encode("utf-8")
    assert json.loads(text) == {"t": "a\ud83db"}
    assert printable("plain") == "plain"
