"""Lesson 1's checkers: each passes the package solution, fails plausible wrong answers,
and says "not attempted" for a starter that still raises NotImplementedError."""

from __future__ import annotations

import pytest
from checker_helpers import FRESH_PROGRESS, starter

from lesson_lib import exercises
from lesson_lib.capture.captures import CaptureError, load
from lesson_lib.exercises import lesson01 as checks
from lesson_lib.solutions import lesson01 as solutions


def _corpus_ready() -> bool:
    keys = set(checks.SPLIT_CAPTURES + checks.FIRST_TEXT_CAPTURES + checks.DIED_CAPTURES)
    try:
        for key in keys:
            load(key, search_reference=False)
    except CaptureError:
        return False
    return True


pytestmark = [FRESH_PROGRESS,
              pytest.mark.skipif(not _corpus_ready(),
                                 reason="the constructed captures the checkers use are not built")]


# -- exercise 1: split a stream into events -----------------------------------------------


def test_split_events_passes_the_solution():
    verdict = checks.check_split_events(solutions.split_events)
    assert verdict.passed, verdict
    assert verdict.cases_total == 8


def test_split_events_rejects_stripping_every_leading_space():
    def stripped(text):                            # right but for .strip()
        return [(name, data.strip()) for name, data in solutions.split_events(text)]
    verdict = checks.check_split_events(stripped)
    assert verdict.status == "failed"
    assert "expected data ' two', got 'two'" in verdict.message
    assert "drop only the first space after the colon" in verdict.message


def test_split_events_rejects_a_parser_that_ignores_event_names():
    def data_only(text):                           # reads data: lines, forgets event:
        return [(None, line[6:]) for line in text.split("\n") if line.startswith("data: ")]
    verdict = checks.check_split_events(data_only)
    assert verdict.status == "failed"
    assert "event 0: expected the name 'ping', got None" in verdict.message


def test_split_events_rejects_one_event_per_data_line():
    def per_line(text):                            # names right, but no joining of data lines
        out, name = [], None
        for line in text.split("\n"):
            if line.startswith("event:"):
                name = line.partition(":")[2].lstrip(" ")
            elif line.startswith("data:"):
                out.append((name, line.partition(":")[2].lstrip(" ")))
            elif line == "":
                name = None
        return out
    verdict = checks.check_split_events(per_line)
    assert verdict.status == "failed"
    assert "expected data 'first line\\nsecond line'" in verdict.message


def test_split_events_rejects_dispatching_the_cut_last_block():
    def keeps_tail(text):                          # also dispatches a block with no blank line
        return solutions.split_events(text + "\n\n")
    verdict = checks.check_split_events(keeps_tail)
    assert verdict.status == "failed"
    assert "a stream cut inside its last event" in verdict.message
    assert "only when a blank line ends it" in verdict.message


def test_split_events_not_attempted():
    verdict = checks.check_split_events(starter)
    assert verdict.status == "not attempted"
    assert "not attempted yet" in str(verdict)


# -- exercise 2: time to the first text fragment --------------------------------------------


def test_first_text_ms_passes_the_solution():
    verdict = checks.check_first_text_ms(solutions.first_text_ms)
    assert verdict.passed, verdict


def test_first_text_ms_rejects_the_time_of_the_first_event():
    verdict = checks.check_first_text_ms(lambda table: float(table["t_ms"].iloc[0]))
    assert verdict.status == "failed"
    assert "expected 1380.5 ms (the first text fragment), got 453.9 ms" in verdict.message


def test_first_text_ms_rejects_counting_thinking_as_text():
    def any_delta(table):                          # the first delta of any kind
        rows = table[table["type"].str.endswith("delta")]
        return float(rows["t_ms"].iloc[0]) if len(rows) else None
    verdict = checks.check_first_text_ms(any_delta)
    assert verdict.status == "failed"
    assert "thinking-signature" in verdict.message


def test_first_text_ms_rejects_an_anthropic_only_answer():
    def anthropic_only(table):
        rows = table[table["delta_type"] == "text_delta"]
        return float(rows["t_ms"].iloc[0]) if len(rows) else None
    verdict = checks.check_first_text_ms(anthropic_only)
    assert verdict.status == "failed"
    assert "openai-responses/text" in verdict.message
    assert "this stream does have text" in verdict.message


def test_first_text_ms_rejects_nan_for_no_text():
    def nan_when_missing(table):
        rows = table[table["delta_type"].isin(["text_delta", "output_text", "content"])]
        return float(rows["t_ms"].iloc[0]) if len(rows) else float("nan")
    verdict = checks.check_first_text_ms(nan_when_missing)
    assert verdict.status == "failed"
    assert "openai-chat/tool-call" in verdict.message and "None" in verdict.message


def test_first_text_ms_not_attempted():
    assert checks.check_first_text_ms(starter).status == "not attempted"


# -- exercise 3: where did the response die? ------------------------------------------------


def test_where_it_died_passes_the_solution():
    verdict = checks.check_where_it_died(solutions.where_it_died)
    assert verdict.passed, verdict
    assert verdict.cases_total == 9


def test_where_it_died_rejects_always_the_last_row():
    verdict = checks.check_where_it_died(lambda table: int(table["seq"].iloc[-1]))
    assert verdict.status == "failed"
    assert "anthropic-messages/hello" in verdict.message
    assert "expected None (it ended properly with message_stop), got 10" in verdict.message


def test_where_it_died_rejects_errors_only():
    def errors_only(table):                        # misses streams that were cut
        rows = table[table["error"]]
        return int(rows["seq"].iloc[0]) if len(rows) else None
    verdict = checks.check_where_it_died(errors_only)
    assert verdict.status == "failed"
    assert "cut-in-tool-json" in verdict.message and "the stream was cut" in verdict.message


def test_where_it_died_rejects_the_last_error_instead_of_the_first():
    def last_error(table):                         # response.failed, not the error before it
        rows = table[table["error"]]
        if len(rows):
            return int(rows["seq"].iloc[-1])
        return solutions.where_it_died(table)
    verdict = checks.check_where_it_died(last_error)
    assert verdict.status == "failed"
    assert "openai-responses/error-then-failed" in verdict.message
    assert "its first error row, type 'error'" in verdict.message


def test_where_it_died_rejects_treating_max_tokens_as_death():
    def stop_reason_death(table):                  # a max_tokens finish is a proper ending
        if table["preview"].eq("stop_reason=max_tokens").any():
            return int(table["seq"].iloc[-1])
        return solutions.where_it_died(table)
    verdict = checks.check_where_it_died(stop_reason_death)
    assert verdict.status == "failed" and "max-tokens-in-tool-json" in verdict.message


def test_where_it_died_accepts_numpy_integers():
    verdict = checks.check_where_it_died(
        lambda table: None if solutions.where_it_died(table) is None
        else table["seq"].iloc[solutions.where_it_died(table)])
    assert verdict.passed, verdict


def test_where_it_died_not_attempted():
    assert checks.check_where_it_died(starter).status == "not attempted"


# -- the lesson as a whole ------------------------------------------------------------------


def test_three_exercises_are_registered_with_their_solutions():
    lesson = {num: ex for (les, num), ex in exercises.REGISTRY.items() if les == "01"}
    assert sorted(lesson) == [1, 2, 3]
    for ex in lesson.values():
        module, _, name = ex.solution.partition(":")
        assert module == "lesson_lib.solutions.lesson01" and hasattr(solutions, name)


def test_progress_reports_each_exercise():
    checks.check_split_events(solutions.split_events)
    checks.check_first_text_ms(starter)
    lines = repr(exercises.progress("01")).splitlines()
    assert lines[0] == "Progress in 01:"
    assert lines[1:] == ["  Exercise 1 (Split a stream into events): passed",
                         "  Exercise 2 (Time to the first text fragment): not attempted",
                         "  Exercise 3 (Where did the response die?): not checked yet"]


def test_checkers_do_not_let_the_learner_change_the_shared_tables():
    def vandal(table):
        table["t_ms"] = 0.0
        return None
    checks.check_first_text_ms(vandal)
    checks.check_where_it_died(vandal)
    hello = checks._table("anthropic-messages/hello")
    assert hello["t_ms"].iloc[3] == 1380.5         # the shared table is untouched
    assert checks.check_first_text_ms(solutions.first_text_ms).passed
