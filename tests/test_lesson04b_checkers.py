"""Lesson 4b's checkers: each passes the package solution, fails plausible wrong answers
with the input it was given and what to fix, and says "not attempted" for a starter."""

from __future__ import annotations

import pytest
from checker_helpers import FRESH_PROGRESS, starter

from lesson_lib import exercises
from lesson_lib.capture.captures import reference_corpus
from lesson_lib.exercises import lesson04b as checks
from lesson_lib.solutions import lesson04b as solutions

pytestmark = FRESH_PROGRESS


def test_the_solutions_pass():
    blocks = checks.check_gemini_blocks(solutions.gemini_blocks)
    assert blocks.passed, blocks
    assert blocks.cases_total >= 12
    finish = checks.check_gemini_finish(solutions.gemini_finish)
    assert finish.passed, finish
    assert finish.cases_total >= 12


def test_the_cases_cover_every_rule():
    labels = [c.label for c in checks.blocks_cases()]
    assert "google-gemini/thinking-signature" in labels and "google-gemini/parallel-calls" in labels
    assert "google-gemini/streamed-partial-args" not in labels   # streamed: section 3's
    kinds = {b["kind"] for c in checks.blocks_cases() for b in c.expected}
    assert kinds == {"text", "reasoning", "tool_call", "other"}
    reasons = {c.expected for c in checks.finish_cases()}
    assert reasons >= {"stop", "tool_calls", "length", "content_filter", "error", "other"}


def test_starters_are_not_attempted():
    assert checks.check_gemini_blocks(starter).status == "not attempted"
    assert checks.check_gemini_finish(starter).status == "not attempted"
    assert "not attempted" in repr(exercises.progress("04b"))


def test_one_block_per_part_is_caught_and_the_input_shown():
    def per_part(records):
        out = []
        for record in records:
            for part in record["candidates"][0]["content"]["parts"]:
                out.append({"id": f"b{len(out)}", "kind": "text", "text": part.get("text", "")})
        return out
    verdict = checks.check_gemini_blocks(per_part)
    assert verdict.status == "failed"
    assert "blocks[0]['text']" in verdict.message
    assert "Fix: this block's text goes on in later parts" in verdict.message
    assert 'record 1: {"text": ' in verdict.message      # the input, part by part


def test_joining_two_signed_thoughts_is_caught():
    def ignore_signatures(records):
        stripped = [{**r, "candidates": [{**c, "content": {**c["content"], "parts": [
            {k: v for k, v in p.items() if k != "thoughtSignature"}
            for p in c["content"]["parts"]]}} for c in r["candidates"]]} for r in records]
        return solutions.gemini_blocks(stripped)
    verdict = checks.check_gemini_blocks(ignore_signatures)
    assert verdict.status == "failed"
    assert verdict.message.startswith("case 'hand-made: two signed thoughts")
    assert "two parts that both carry a thoughtSignature are two blocks" in verdict.message


def test_continuing_past_a_finish_reason_is_caught():
    def never_closed(records):
        for record in records:
            for cand in record["candidates"]:
                cand.pop("finishReason", None)
        return solutions.gemini_blocks(records)
    verdict = checks.check_gemini_blocks(never_closed)
    assert verdict.status == "failed"
    assert "text after a finishReason" in verdict.message
    assert "finishReason 'STOP'" in verdict.message


def test_ids_minted_per_part_are_caught():
    def id_per_part(records):
        blocks = solutions.gemini_blocks(records)
        return [b | {"id": f"b{2 * i}"} for i, b in enumerate(blocks)]
    verdict = checks.check_gemini_blocks(id_per_part)
    assert verdict.status == "failed"
    assert "not one per part" in verdict.message


def test_a_finish_that_trusts_stop_is_caught():
    def table_only(reason, parts):
        return solutions.FINISH_REASONS.get(reason, "other") if reason else "other"
    verdict = checks.check_gemini_finish(table_only)
    assert verdict.status == "failed"
    assert "expected 'tool_calls', got 'stop'" in verdict.message
    assert "functionCall" in verdict.message and "Fix: STOP says only" in verdict.message


def test_a_finish_that_counts_code_execution_as_a_call_is_caught():
    def any_tool(reason, parts):
        if reason == "STOP" and any(set(p) - {"text", "thought", "thoughtSignature"}
                                    for p in parts):
            return "tool_calls"
        return solutions.gemini_finish(reason, parts)
    verdict = checks.check_gemini_finish(any_tool)
    assert verdict.status == "failed"
    assert "'executableCode'" in verdict.message and "the provider's own" in verdict.message


def test_a_learner_who_changes_the_records_changes_nothing_for_the_next_case():
    def destructive(records):
        result = solutions.gemini_blocks(records)
        records.clear()
        return result
    assert checks.check_gemini_blocks(destructive).passed


# -- exercise 3: the whole Gemini Interactions adapter ---------------------------------------

def test_the_adapter_solution_passes_every_capture_recording_and_the_live_turn():
    verdict = checks.check_interactions_adapter(solutions.InteractionsAdapter)
    assert verdict.passed, verdict
    labels = [c.label for c in checks.interactions_cases()]
    assert "google-gemini-interactions/cut-mid-step" in labels
    assert "google-gemini-interactions/weather-turn-step1" in labels
    assert verdict.cases_total == len(labels) + 1            # and the live weather turn


def test_the_recordings_are_graded_when_present(monkeypatch, tmp_path, capsys):
    labels = [c.label for c in checks.interactions_cases()]
    if not any(c.wire == checks.INTERACTIONS for c in reference_corpus()):
        pytest.skip("no shared Interactions recordings (REFERENCE_CAPTURES)")
    assert "google-gemini-interactions/basic" in labels
    assert "google-gemini-interactions/tool-call-step2" in labels
    monkeypatch.setenv("REFERENCE_CAPTURES", str(tmp_path))
    assert len(checks.interactions_cases()) < len(labels)
    verdict = checks.check_interactions_adapter(solutions.InteractionsAdapter)
    assert verdict.passed, verdict
    assert "the shared recordings were not checked" in capsys.readouterr().out


def test_the_adapter_starter_is_not_attempted():
    class Starter(solutions.WireAdapter):
        wire = checks.INTERACTIONS

        def feed(self, changes, *, t=None, at=None):
            raise NotImplementedError

    assert checks.check_interactions_adapter(Starter).status == "not attempted"
    assert "Exercise 3 (The whole Gemini Interactions adapter): not attempted" in repr(
        exercises.progress("04b"))


def test_an_adapter_that_never_ends_the_step_is_caught():
    class NeverEnds(solutions.InteractionsAdapter):
        def feed(self, changes, *, t=None, at=None):
            kept = [c for c in changes or () if not isinstance(c, solutions.ch.StreamEnded)]
            return super().feed(kept, t=t, at=at)

    verdict = checks.check_interactions_adapter(NeverEnds)
    assert verdict.status == "failed"
    assert "expected step_finished(" in verdict.message
    assert "got no event" in verdict.message
    assert "never ended the step" in verdict.message


def test_an_adapter_that_readies_a_call_before_its_arguments_settle_is_caught():
    class Eager(solutions.InteractionsAdapter):
        def step_started(self, c):
            out = super().step_started(c)
            if c.slot_kind == "function_call":
                out.append(solutions.ToolCallReady(self.seq(), block=out[0].block,
                                                   name=c.name, call_id=c.call_id, input={}))
            return out

    verdict = checks.check_interactions_adapter(Eager)
    assert verdict.status == "failed"
    assert "got tool_call_ready(" in verdict.message
    assert "before its arguments settled" in verdict.message


def test_an_adapter_that_drops_the_thought_signature_is_caught():
    class Unsigned(solutions.InteractionsAdapter):
        def feed(self, changes, *, t=None, at=None):
            kept = [c for c in changes or () if not isinstance(c, solutions.ch.SlotSigned)]
            return super().feed(kept, t=t, at=at)

    verdict = checks.check_interactions_adapter(Unsigned)
    assert verdict.status == "failed"
    assert "expected signature_added(" in verdict.message
    assert "the thought's signature was dropped" in verdict.message


def test_a_failed_check_leaves_the_course_adapter_in_place():
    class Broken(solutions.InteractionsAdapter):
        def step_started(self, c):
            raise ValueError("oops")

    verdict = checks.check_interactions_adapter(Broken)
    assert verdict.status == "failed" and "ValueError: oops" in verdict.message
    from lesson_lib.turn.adapters import ADAPTERS, GeminiInteractionsAdapter
    assert ADAPTERS[checks.INTERACTIONS] is GeminiInteractionsAdapter


def test_an_instance_instead_of_the_class_is_named():
    verdict = checks.check_interactions_adapter(solutions.InteractionsAdapter())
    assert verdict.status == "failed"
    assert "pass the class itself, a subclass of WireAdapter" in verdict.message


def test_an_adapter_not_attempted_prints_nothing_of_the_recordings(monkeypatch, tmp_path, capsys):
    # The committed notebook's output must not depend on where the course runs.
    class Starter(checks.WireAdapter):
        def feed(self, changes, t=None, at=None):
            raise NotImplementedError

    monkeypatch.setenv("REFERENCE_CAPTURES", str(tmp_path))
    verdict = checks.check_interactions_adapter(Starter)
    assert verdict.status == "not attempted"
    assert capsys.readouterr().out == ""
