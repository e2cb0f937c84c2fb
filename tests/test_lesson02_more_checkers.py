"""Lesson 2's extra practice: each checker passes the solution, fails plausible wrong
answers with a message that says what was missed, and says "not attempted" for a starter."""

from __future__ import annotations

from checker_helpers import FRESH_PROGRESS, starter

from lesson_lib import exercises
from lesson_lib.exercises import lesson02_more as checks
from lesson_lib.solutions import lesson02_more as solutions

pytestmark = [FRESH_PROGRESS]


def test_the_solutions_pass_and_the_starters_are_not_attempted():
    for check, solution in ((checks.check_responses_text, solutions.responses_text),
                            (checks.check_thinking_blocks, solutions.thinking_blocks),
                            (checks.check_citations, solutions.citations)):
        assert check(solution).passed, check(solution)
        assert check(starter).status == "not attempted"


def test_responses_text_rejects_reading_every_delta_as_message_text():
    def every_delta(payloads):                      # summaries and arguments too
        texts = {}
        for p in payloads:
            if isinstance(p, dict) and p.get("type", "").endswith(".delta") and "item_id" in p:
                texts[p["item_id"]] = texts.get(p["item_id"], "") + p.get("delta", "")
        return texts
    verdict = checks.check_responses_text(every_delta)
    assert verdict.status == "failed"
    assert "only response.output_text.delta events carry message text" in verdict.message


def test_thinking_blocks_names_a_missing_signature():
    def no_signature(payloads):
        return [(i, text, None) for i, text, _ in solutions.thinking_blocks(payloads)]
    verdict = checks.check_thinking_blocks(no_signature)
    assert verdict.status == "failed"
    assert "the signature arrives in its own signature_delta" in verdict.message


def test_citations_rejects_losing_the_block_index():
    def all_in_block_zero(payloads):
        return [(0, text) for _, text in solutions.citations(payloads)]
    verdict = checks.check_citations(all_in_block_zero)
    assert verdict.status == "failed"
    assert verdict.message.startswith("case 'anthropic-messages/citations': citation 0: "
                                      "expected (1, ")


def test_progress_for_lesson_two_lists_the_extra_exercises():
    lines = exercises.progress("02").lines
    assert len(lines) == 6 and "Exercise 6 (Citations, block by block)" in lines[5]
