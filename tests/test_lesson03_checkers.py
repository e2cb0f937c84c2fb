"""Lesson 3's checkers: each passes the package solution, fails plausible wrong answers
with a first difference a learner can act on, and says "not attempted" for a starter
that still raises NotImplementedError."""

from __future__ import annotations

import json

import jiter
from checker_helpers import FRESH_PROGRESS, starter

from lesson_lib import exercises
from lesson_lib.exercises import lesson03 as checks
from lesson_lib.partial_json import PartialJSON
from lesson_lib.solutions import lesson03 as solutions

pytestmark = FRESH_PROGRESS


# -- exercise 1: settled keys -------------------------------------------------------------------


def test_settled_keys_passes_the_solution():
    verdict = checks.check_settled_keys(solutions.settled_keys)
    assert verdict.passed, verdict
    assert verdict.cases_total == len(checks.SETTLED_CALLS) + len(checks.SETTLED_HAND_MADE)


def test_settled_keys_cases_cover_numbers_strings_and_containers():
    pieces = checks.fragments("anthropic-messages/text-then-tool")
    after = checks.expected_settled(pieces)
    raw = "".join(pieces)
    assert after[-1] == set(json.loads(raw))
    # "adults": 2 is not settled by the fragment that brings the 2, only by the next one
    two = next(i for i, p in enumerate(pieces) if p.endswith(": 2"))
    assert "adults" not in after[two] and "adults" in after[two + 1]
    split = checks.expected_settled(checks.SETTLED_HAND_MADE[
        "hand-made: a number split between fragments"])
    assert split == [set(), set(), {"count"}, {"count", "ok"}]


def test_settled_keys_rejects_keys_settled_when_their_value_begins():
    def at_set(fragments):
        parser, keys, out = PartialJSON(), set(), []
        for fragment in fragments:
            for change in parser.feed(fragment):
                if change.op == "set" and len(change.path) == 1:
                    keys.add(change.path[0])
            out.append(set(keys))
        return out
    verdict = checks.check_settled_keys(at_set)
    assert verdict.status == "failed"
    assert verdict.message == (
        "case 'anthropic-messages/text-then-tool, call search_flights': after fragment 5 "
        "(': \"TYO'; the text so far ends with '{\"origin\": \"AUS\", \"destination\": \"TYO'): "
        "expected settled {'origin'}, got {'destination', 'origin'}: 'destination' is not "
        "settled yet: its string's closing quote has not arrived yet")


def test_settled_keys_rejects_a_strict_parse_per_fragment():
    def loads_or_nothing(fragments):
        text, out = "", []
        for fragment in fragments:
            text += fragment
            try:
                out.append(set(json.loads(text)))
            except ValueError:
                out.append(set())
        return out
    verdict = checks.check_settled_keys(loads_or_nothing)
    assert verdict.status == "failed"
    assert "after fragment 2 ('n\": \"AUS\"'" in verdict.message
    assert verdict.message.endswith("'origin' is settled: its string's closing quote has arrived")


def test_settled_keys_rejects_the_keys_of_a_lenient_parse():
    """jiter's partial mode drops an unfinished string but shows an unfinished number."""
    def lenient(fragments):
        text, out = "", []
        for fragment in fragments:
            text += fragment
            value = jiter.from_json(text.encode(), partial_mode=True) if text.strip() else {}
            out.append(set(value) if isinstance(value, dict) else set())
        return out
    verdict = checks.check_settled_keys(lenient)
    assert verdict.status == "failed"
    assert verdict.message.endswith("'adults' is not settled yet: a number or literal settles "
                                    "only at the delimiter after it (its digits or letters so far may still "
                                    "grow)")


def test_settled_keys_checks_shape():
    assert "one set per fragment" in checks.check_settled_keys(lambda f: [set()]).message
    assert "return a list" in checks.check_settled_keys(lambda f: None).message
    assert checks.check_settled_keys(starter).status == "not attempted"


# -- exercise 2: scanning a string ------------------------------------------------------------


def test_scan_string_passes_the_solution():
    verdict = checks.check_scan_string(solutions.scan_string)
    assert verdict.passed, verdict


def test_scan_string_expected_values():
    assert checks.expected_scan('{"city": "Lyon", "n": 1}', 10) == (14, "quote")
    assert checks.expected_scan('say \\"hi', 0) == (4, "backslash")
    assert checks.expected_scan("abc", 3) == (3, "end")


def test_scan_string_rejects_scanning_from_the_beginning():
    def from_zero(text, start):
        return solutions.scan_string(text, 0)
    verdict = checks.check_scan_string(from_zero)
    assert verdict.message == (
        "case 'starts in the middle': scan_string('{\"city\": \"Lyon\", \"n\": 1}', 10): "
        "expected (14, 'quote'), got (1, 'quote'): the run begins at `start`; nothing before "
        "it is looked at")


def test_scan_string_rejects_skipping_escapes():
    """Escapes are the next step's job: the plain run stops at the backslash."""
    def skip_escaped(text, start):
        i = start
        while i < len(text):
            if text[i] == "\\":
                i += 2
                continue
            if text[i] == '"':
                return i, "quote"
            i += 1
        return len(text), "end"
    verdict = checks.check_scan_string(skip_escaped)
    assert verdict.message.endswith("your scan went past the backslash at 4; a backslash "
                                    "ends the plain run too (the escape is the next step's job)")


def test_scan_string_says_a_backslash_was_missed_not_off_by_one():
    def quotes_only(text, start):                  # never stops at a backslash
        at = text.find('"', start)
        return (at, "quote") if at >= 0 else (len(text), "end")
    message = checks.check_scan_string(quotes_only).message
    assert "off by one" not in message
    assert message.startswith("case 'stops at a backslash'")
    assert message.endswith("expected (4, 'backslash'), got (5, 'quote'): your scan went past "
                            "the backslash at 4; a backslash ends the plain run too (the "
                            "escape is the next step's job)")


def test_scan_string_rejects_off_by_one_and_bad_shapes():
    def last_index(text, start):
        end, stop = solutions.scan_string(text, start)
        return (end - 1, stop) if stop == "end" else (end, stop)
    assert "off by one" in checks.check_scan_string(last_index).message
    assert "return a pair" in checks.check_scan_string(lambda t, s: 3).message
    assert "the stop word is one of" in checks.check_scan_string(
        lambda t, s: (solutions.scan_string(t, s)[0], "q")).message
    assert checks.check_scan_string(starter).status == "not attempted"


# -- exercise 3: complete, invalid or cut ------------------------------------------------------


def test_call_state_passes_the_solution():
    verdict = checks.check_call_state(solutions.call_state)
    assert verdict.passed, verdict
    assert verdict.cases_total == len(checks.STATE_CALLS) + len(checks.STATE_HAND_MADE)


def test_call_events_come_from_the_wire():
    cut = checks.call_events("anthropic-messages/cut-in-tool-json")
    assert all(e["type"] == "fragment" for e in cut)
    assert checks.expected_state(cut) == "cut"
    ended = checks.call_events("openai-chat/parallel-tools-interleaved", 1)
    assert ended[-1] == {"type": "end"} and checks.expected_state(ended) == "complete"
    assert checks.call_events("anthropic-messages/tool-no-params") == [
        {"type": "fragment", "text": ""}, {"type": "end"}]


def test_call_state_rejects_parsing_without_the_wires_end():
    def parses(events):
        text = "".join(e.get("text", "") for e in events)
        try:
            json.loads(text or "{}")
        except ValueError:
            return "cut"
        return "complete"
    verdict = checks.check_call_state(parses)
    assert verdict.cases_passed == len(checks.STATE_CALLS)     # right on the corpus by luck
    assert verdict.message.startswith(
        "case 'hand-made: two calls' arguments glued together, then the end': expected "
        "'invalid', got 'cut'")

    def parses_unless_ended(events):
        if events and events[-1]["type"] == "end":
            return solutions.call_state(events)
        return parses(events) if solutions.call_state(events) != "invalid" else "invalid"
    verdict = checks.check_call_state(parses_unless_ended)
    assert verdict.message.startswith(
        "case 'hand-made: text that parses, but the wire never ended the call': expected 'cut', "
        "got 'complete'")
    assert verdict.message.endswith("the wire never ended this call; whatever its text, it was "
                                    "cut")


def test_call_state_rejects_trusting_the_end_without_a_strict_check():
    def ended_is_complete(events):
        return "complete" if any(e["type"] == "end" for e in events) else "cut"
    verdict = checks.check_call_state(ended_is_complete)
    assert "expected 'invalid', got 'complete'" in verdict.message
    assert "the text can never be JSON, whatever comes next: found '{' after the complete " \
        "JSON value" in verdict.message


def test_call_state_rejects_json_loads_as_the_strict_check():
    def with_json_loads(events):
        state = solutions.call_state(events)
        if state == "invalid" and events[-1]["type"] == "end":
            try:
                json.loads("".join(e.get("text", "") for e in events))
            except ValueError:
                return "invalid"
            return "complete"
        return state
    verdict = checks.check_call_state(with_json_loads)
    assert verdict.message.startswith("case 'hand-made: NaN (json.loads accepts it; JSON does "
                                      "not)': expected 'invalid', got 'complete'")


def test_call_state_rejects_the_empty_text_as_invalid_and_a_cut_that_hides_invalid():
    def empty_invalid(events):
        text = "".join(e.get("text", "") for e in events)
        return "invalid" if not text.strip() else solutions.call_state(events)
    assert "empty arguments (a tool with no parameters) mean {}" in \
        checks.check_call_state(empty_invalid).message

    def cut_first(events):
        return "cut" if events[-1]["type"] != "end" else solutions.call_state(events)
    assert "glued together, then the stream stops': expected 'invalid', got 'cut'" in \
        checks.check_call_state(cut_first).message


def test_call_state_not_attempted_and_wrong_type():
    assert checks.check_call_state(starter).status == "not attempted"
    assert "return 'complete', 'invalid' or 'cut'" in checks.check_call_state(lambda e: 1).message


def test_progress_lists_the_three_exercises():
    checks.check_settled_keys(solutions.settled_keys)
    checks.check_scan_string(lambda t, s: (0, "end"))
    lines = repr(exercises.progress("03")).splitlines()
    assert lines == ["Progress in 03:",
                     "  Exercise 1 (Which keys are settled?): passed",
                     "  Exercise 2 (Scan a run of string text): failed",
                     "  Exercise 3 (Complete, invalid or cut?): not checked yet"]
