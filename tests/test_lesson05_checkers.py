"""Lesson 5's checkers: each passes the package solution, fails plausible wrong answers
with a first difference a learner can act on, and says "not attempted" for a starter
that still raises NotImplementedError."""

from __future__ import annotations

import math

from checker_helpers import FRESH_PROGRESS, starter

from lesson_lib.exercises import lesson05 as checks
from lesson_lib.solutions import lesson05 as solutions

pytestmark = FRESH_PROGRESS


# -- exercise 1: retry by phase -----------------------------------------------------------------


def test_retry_action_passes_the_solution():
    verdict = checks.check_retry_action(solutions.retry_action)
    assert verdict.passed, verdict
    assert verdict.cases_total == len(checks.RETRY_CASES)


def test_retry_cases_cover_all_three_actions():
    actions = {checks.expected_action(e) for e in checks.RETRY_CASES.values()}
    assert actions == set(checks.ACTIONS)


def test_retry_action_fails_when_the_phase_is_ignored():
    def ignores_phase(error):
        answer = solutions.retry_action(error)
        return "retry" if answer == "not_plain_retry" else answer
    verdict = checks.check_retry_action(ignores_phase)
    assert verdict.status == "failed"
    assert "expected 'not_plain_retry', got 'retry'" in verdict.message
    assert "output already arrived" in verdict.message


def test_retry_action_fails_when_every_error_is_retried():
    verdict = checks.check_retry_action(lambda error: "retry")
    assert verdict.status == "failed" and "expected" in verdict.message


def test_retry_action_names_the_allowed_answers():
    verdict = checks.check_retry_action(lambda error: True)
    assert verdict.status == "failed" and "return one of" in verdict.message


def test_retry_action_starter_is_not_attempted():
    assert checks.check_retry_action(starter).status == "not attempted"


# -- exercise 2: the budget check ---------------------------------------------------------------


def test_cancel_at_passes_the_solution():
    verdict = checks.check_cancel_at(solutions.cancel_at)
    assert verdict.passed, verdict


def test_cancel_cases_include_a_budget_never_reached_and_one_reached():
    answers = [checks.expected_cancel(checks.delta_texts(k), n) for k, n in checks.CANCEL_CASES]
    assert None in answers and any(a is not None and a > 0 for a in answers)


def test_cancel_at_fails_one_delta_late():
    def one_late(texts, max_tokens):
        total = 0
        for i, text in enumerate(texts):
            total += math.ceil(len(text) / 4)
            if total > max_tokens:           # strictly over: one delta late when exact
                return i
        return None
    verdict = checks.check_cancel_at(one_late)
    assert verdict.status == "failed"
    assert "stopping later streams too much" in verdict.message or "got None" in verdict.message


def test_cancel_at_fails_counting_characters_as_tokens():
    def characters(texts, max_tokens):
        total = 0
        for i, text in enumerate(texts):
            total += len(text)
            if total >= max_tokens:
                return i
        return None
    verdict = checks.check_cancel_at(characters)
    assert verdict.status == "failed" and "only" in verdict.message


def test_cancel_at_starter_is_not_attempted():
    assert checks.check_cancel_at(starter).status == "not attempted"


# -- exercise 3: join a resumed stream ----------------------------------------------------------


def test_join_resumed_passes_the_solution():
    verdict = checks.check_join_resumed(solutions.join_resumed)
    assert verdict.passed, verdict


def test_the_corpus_pair_joins_to_consecutive_numbers():
    first = checks.payloads("openai-responses/background-cut")
    resumed = checks.payloads("openai-responses/background-resumed")
    joined = checks.expected_join(first, resumed)
    numbers = [e["sequence_number"] for e in joined]
    assert numbers == list(range(numbers[0], numbers[0] + len(numbers)))


def test_join_resumed_fails_a_plain_concatenation():
    verdict = checks.check_join_resumed(lambda first, resumed: first + resumed)
    assert verdict.status == "failed"
    assert "expected sequence_number" in verdict.message or "too many" in verdict.message


def test_join_resumed_fails_dropping_events_without_a_number():
    def drops_unnumbered(first, resumed):
        return [e for e in solutions.join_resumed(first, resumed) if "sequence_number" in e]
    verdict = checks.check_join_resumed(drops_unnumbered)
    assert verdict.status == "failed" and "hand-made: an event without a number" in verdict.message


def test_join_resumed_starter_is_not_attempted():
    assert checks.check_join_resumed(starter).status == "not attempted"
