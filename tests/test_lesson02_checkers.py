"""Lesson 2's checkers: each passes the package solution, fails plausible wrong answers
(the naive handler among them) with a useful first difference, and says "not attempted"
for a starter that still raises NotImplementedError."""

from __future__ import annotations

import json

from checker_helpers import FRESH_PROGRESS, starter

from lesson_lib import exercises
from lesson_lib.accumulate.naive_handler import Executed, execute, naive_loop
from lesson_lib.exercises import lesson02 as checks
from lesson_lib.solutions import lesson02 as solutions

pytestmark = FRESH_PROGRESS


# -- exercise 1: Anthropic content by index ------------------------------------------------


def test_content_passes_the_solution():
    verdict = checks.check_anthropic_content(solutions.accumulate_content)
    assert verdict.passed, verdict
    assert verdict.cases_total == len(checks.CONTENT_CAPTURES) + 1


def test_content_names_event_and_block_when_tool_input_is_never_parsed():
    def input_left_empty(payloads):                # keeps the start event's input: {}
        blocks = solutions.accumulate_content(payloads)
        for block in blocks:
            if block["type"] == "tool_use":
                block["input"] = {}
        return blocks
    verdict = checks.check_anthropic_content(input_left_empty)
    assert verdict.status == "failed"
    assert verdict.message == ("case 'anthropic-messages/get-weather': event 13, block [1]: "
                               "expected tool input {'location': 'San Francisco, CA'}, got {}")


def test_content_rejects_one_text_for_everything():
    def one_text(payloads):
        text = "".join(p["delta"]["text"] for p in payloads
                       if p["type"] == "content_block_delta" and p["delta"]["type"] == "text_delta")
        return [{"type": "text", "text": text}]
    verdict = checks.check_anthropic_content(one_text)
    assert verdict.status == "failed"
    assert "block [1] (tool_use, started at event 8) is missing" in verdict.message


def test_content_rejects_a_strict_parse_of_empty_arguments():
    def strict(payloads):
        blocks, parts = {}, {}
        for p in payloads:
            if p["type"] == "content_block_start":
                blocks[p["index"]], parts[p["index"]] = dict(p["content_block"]), []
            elif p["type"] == "content_block_delta":
                d = p["delta"]
                parts[p["index"]].append(d.get("text", d.get("partial_json", "")))
            elif p["type"] == "content_block_stop":
                block, text = blocks[p["index"]], "".join(parts[p["index"]])
                if block["type"] == "tool_use":
                    block["input"] = json.loads(text)
                else:
                    block["text"] = text
        return [blocks[i] for i in sorted(blocks)]
    verdict = checks.check_anthropic_content(strict)
    assert verdict.status == "failed"
    assert "tool-no-params" in verdict.message and "JSONDecodeError" in verdict.message


def test_content_rejects_following_the_latest_block_instead_of_the_index():
    """Right on every real stream (one block at a time), wrong on the hand-made one."""
    def latest_block(payloads):
        blocks, parts = [], []
        for p in payloads:
            if p["type"] == "content_block_start":
                blocks.append(dict(p["content_block"]))
                parts.append([])
            elif p["type"] == "content_block_delta":
                d = p["delta"]
                parts[-1].append(d.get("text", d.get("partial_json", "")))
            elif p["type"] == "content_block_stop":
                text = "".join(parts[-1])
                if blocks[-1]["type"] == "tool_use":
                    try:
                        blocks[-1]["input"] = json.loads(text) if text else {}
                    except ValueError:
                        blocks[-1]["input"] = None
                else:
                    blocks[-1]["text"] = text
        return blocks
    verdict = checks.check_anthropic_content(latest_block)
    assert verdict.status == "failed"
    assert verdict.cases_passed == len(checks.CONTENT_CAPTURES)
    assert verdict.message.startswith(f"case '{checks.HAND_MADE_LABEL}': event 19, block [1]: "
                                      "expected tool input {'location': 'Lyon, France'}")


def test_content_explains_a_text_difference_at_the_delta_that_went_wrong():
    def drops_first_delta(payloads):
        seen, kept = set(), []
        for p in payloads:
            if p["type"] == "content_block_delta" and p["index"] not in seen:
                seen.add(p["index"])
                continue
            kept.append(p)
        return solutions.accumulate_content(kept)
    verdict = checks.check_anthropic_content(drops_first_delta)
    assert verdict.status == "failed"
    assert verdict.message.startswith("case 'anthropic-messages/hello': event 3, block [0]: "
                                      "this text_delta adds 'Hello'")


def test_content_rejects_a_wrong_return_type_and_extra_blocks():
    verdict = checks.check_anthropic_content(lambda payloads: "Hello")
    assert "return a list of content blocks" in verdict.message
    verdict = checks.check_anthropic_content(
        lambda payloads: solutions.accumulate_content(payloads) + [{"type": "text", "text": ""}])
    assert "the extra one is" in verdict.message


def test_content_not_attempted():
    verdict = checks.check_anthropic_content(starter)
    assert verdict.status == "not attempted"


# -- exercise 2: the keyed loop -------------------------------------------------------------


def test_keyed_loop_passes_the_solution():
    verdict = checks.check_keyed_loop(solutions.keyed_loop)
    assert verdict.passed, verdict
    assert verdict.cases_total == len(checks.KEYED_CAPTURES) + 1


def test_keyed_loop_rejects_the_naive_loop_on_chat_parallel_calls():
    verdict = checks.check_keyed_loop(naive_loop)
    assert verdict.status == "failed"
    assert verdict.cases_passed == 2        # Anthropic and Responses: right by luck of order
    assert verdict.message.startswith(
        "case 'openai-chat/weather-turn-step1': call 0 (get_weather, "
        "call_x3y8bOGy7qgYTjRV9OqrNe2j): expected input {'location': 'Paris, France', "
        "'unit': 'celsius'}, but parsing its arguments")
    assert verdict.message.endswith("fragments of another call got into its arguments")


def test_keyed_loop_rejects_keys_without_the_empty_arguments_rule():
    def strict_keyed(events):
        pending, out = {}, []
        for e in events:
            if e.type == "tool_start":
                pending[e.key] = [e.tool_name, e.tool_id, ""]
            elif e.type == "tool_delta" and e.key in pending:
                pending[e.key][2] += e.tool_args
            elif e.type == "tool_done" and e.key in pending:
                name, call_id, args = pending.pop(e.key)
                out.append(execute(name, call_id, args, e.event))
        return out
    verdict = checks.check_keyed_loop(strict_keyed)
    assert verdict.status == "failed"
    assert "tool-no-params" in verdict.message
    assert "a tool with no parameters sends no arguments at all; that means {}" in verdict.message


def test_keyed_loop_rejects_executing_at_the_first_stop_only():
    def first_only(events):
        return solutions.keyed_loop(events)[:1]
    verdict = checks.check_keyed_loop(first_only)
    assert "your loop executed 1: never executed: get_weather" in verdict.message


def test_keyed_loop_accepts_dicts_and_checks_names_and_ids():
    def as_dicts(events):
        return [{"name": c.name, "id": c.call_id, "input": c.input}
                for c in solutions.keyed_loop(events)]
    assert checks.check_keyed_loop(as_dicts).passed

    def swapped(events):
        calls = solutions.keyed_loop(events)
        return calls[::-1]
    verdict = checks.check_keyed_loop(swapped)
    assert "call 0: expected get_weather (toolu_01GaXqKZT6736J4gBFaaUPTs)" in verdict.message


def test_keyed_loop_not_attempted_and_wrong_type():
    assert checks.check_keyed_loop(starter).status == "not attempted"
    assert "return a list of executed calls" in checks.check_keyed_loop(lambda e: None).message
    wrong = checks.check_keyed_loop(
        lambda e: [Executed(c.name, c.call_id, c.arguments, {"x": 1}) for c in
                   solutions.keyed_loop(e)])
    assert "expected input {'location': 'Lyon, France'}, got {'x': 1}" in wrong.message


# -- exercise 3: when a Chat call can be trusted --------------------------------------------


def test_trusted_at_passes_the_solution():
    verdict = checks.check_trusted_at(solutions.trusted_at)
    assert verdict.passed, verdict
    assert verdict.cases_total == len(checks.TRUSTED_CAPTURES)


def test_trusted_at_expected_values_come_from_the_stream():
    got = {key: checks.expected_trusted_at(checks.corpus_capture(key))
           for key in checks.TRUSTED_CAPTURES}
    assert got["openai-chat/weather-turn-step1"] == 27
    assert got["openai-chat/parallel-tools-interleaved"] == 37
    assert got["openai-chat/index-reused-new-id"] == 2
    for never in ("cut-in-arguments", "finish-length", "error-mid-stream", "text-usage"):
        assert got[f"openai-chat/{never}"] is None


def test_trusted_at_rejects_the_last_argument_fragment():
    def last_fragment(payloads):
        last = None
        for i, p in enumerate(payloads):
            if isinstance(p, dict):
                for choice in p.get("choices") or []:
                    if (choice.get("delta") or {}).get("tool_calls"):
                        last = i
        return last
    verdict = checks.check_trusted_at(last_fragment)
    assert verdict.message == (
        "case 'openai-chat/tool-call': expected event 28 (choice 0 · finish_reason "
        "tool_calls); at event 27 (choice 0 · tool_calls[0] · arguments) nothing on the wire "
        "says the calls are complete yet")


def test_trusted_at_rejects_any_finish_reason():
    def any_finish(payloads):
        for i, p in enumerate(payloads):
            if isinstance(p, dict) and any(c.get("finish_reason") for c in p.get("choices") or []):
                return i
        return None
    verdict = checks.check_trusted_at(any_finish)
    assert verdict.message.startswith(
        "case 'openai-chat/finish-length': the tool calls here can never be trusted "
        "(it finishes with 'length'): the answer is None; you returned event 44")


def test_trusted_at_rejects_waiting_for_done_and_explains_the_errors():
    def at_done(payloads):
        return payloads.index("[DONE]") if solutions.trusted_at(payloads) is not None else None
    assert "the calls had already been complete for 2 events" in \
        checks.check_trusted_at(at_done).message

    def ignores_errors(payloads):
        answer = solutions.trusted_at(payloads)
        return answer if answer is not None else len(payloads) - 1
    message = checks.check_trusted_at(ignores_errors).message
    assert "openai-chat/cut-in-arguments" in message and "cut before any finish_reason" in message


def test_trusted_at_not_attempted_and_wrong_type():
    assert checks.check_trusted_at(starter).status == "not attempted"
    assert "an event index (an int) or None" in checks.check_trusted_at(lambda p: "27").message
    assert "an event index (an int) or None" in checks.check_trusted_at(lambda p: True).message


def test_progress_lists_the_three_exercises_and_the_extra_practice():
    checks.check_anthropic_content(solutions.accumulate_content)
    checks.check_keyed_loop(naive_loop)
    lines = repr(exercises.progress("02")).splitlines()
    assert lines == ["Progress in 02:",
                     "  Exercise 1 (Accumulate Anthropic content blocks by index): passed",
                     "  Exercise 2 (Fix the pending-tools loop): failed",
                     "  Exercise 3 (When can a Chat tool call be trusted?): not checked yet",
                     "  Exercise 4 (Message text per item on the Responses wire): not checked yet",
                     "  Exercise 5 (Thinking blocks and their signatures): not checked yet",
                     "  Exercise 6 (Citations, block by block): not checked yet"]


def test_payloads_helper_matches_the_stream():
    stream = checks.payloads("openai-chat/tool-call")
    assert stream[-1] == "[DONE]" and all(isinstance(p, dict) for p in stream[:-1])
    assert checks.payloads("anthropic-messages/hello")[0]["type"] == "message_start"
