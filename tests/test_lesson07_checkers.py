"""Lesson 7's checkers: each passes the package solution, fails the wrong answers that miss
the lesson's points (text doubled, a preview lost, a repeated fragment dropped, a pause read
as success, an approver that never answers) with the first event that differs and what to
fix, says "not attempted" for a starter, and leaves the registry as it found it."""

from __future__ import annotations

from checker_helpers import FRESH_PROGRESS, starter

from lesson_lib import exercises
from lesson_lib.exercises import lesson07 as checks
from lesson_lib.solutions import lesson07 as solutions
from lesson_lib.turn.events import Finish
from lesson_lib.wires import ENTRIES, managed_agents

pytestmark = FRESH_PROGRESS
ma = managed_agents


def test_the_solutions_pass():
    for verdict in (checks.check_reconcile(solutions.reconcile),
                    checks.check_session_adapter(solutions.SessionAdapter),
                    checks.check_answer(solutions.answer)):
        assert verdict.passed, verdict
    assert checks.check_reconcile(solutions.reconcile).cases_total >= 12


def test_the_cases_cover_every_capture_and_rule():
    keys = set(checks.session_capture_keys())
    assert len(keys) >= 9
    labels = {c.label for c in checks.reconcile_cases()}
    assert keys <= labels and any("without ids" in label for label in labels)
    ends = {c.expected[-1]["outcome"] for c in checks.adapter_cases()}
    assert ends >= {"completed", "paused", "budget_reached", "failed", "unknown"}
    answers = [c.expected for c in checks.answer_cases()]
    assert [] in answers and any(len(a) == 2 for a in answers if isinstance(a, list))


def test_starters_are_not_attempted():
    assert checks.check_reconcile(starter).status == "not attempted"
    assert checks.check_answer(starter).status == "not attempted"

    class Starter(solutions.SessionAdapter):
        def classify(self, opened):
            raise NotImplementedError

    assert checks.check_session_adapter(Starter).status == "not attempted"
    assert "not attempted" in repr(exercises.progress("07"))


# -- exercise 1 -------------------------------------------------------------------------------

def test_a_reconciler_that_doubles_text_is_caught():
    def appends_canonical(payloads):
        events = solutions.reconcile(payloads)
        previews = {p["event"]["id"]: "" for p in payloads if p.get("type") == ma.EVENT_START}
        for p in payloads:
            if p.get("type") == ma.EVENT_DELTA:
                previews[p["event_id"]] += p["delta"]["content"]["text"]
        for e in events:      # the preview's text kept, the canonical text appended to it
            if e.get("id") in previews and e.get("content") and not e.get("preview"):
                e["content"][0]["text"] = previews[e["id"]] + e["content"][0]["text"]
        return events
    verdict = checks.check_reconcile(appends_canonical)
    assert verdict.status == "failed"
    assert "Fix: the text is doubled" in verdict.message


def test_a_reconciler_that_keeps_the_preview_and_its_canonical_event_is_caught():
    def both(payloads):
        out = []
        for e in solutions.reconcile(payloads):
            if e.get("type") == ma.AGENT_MESSAGE and not e.get("preview") and any(
                    p.get("type") == ma.EVENT_START and p["event"]["id"] == e["id"]
                    for p in payloads):
                out.append({"id": e["id"], "type": e["type"], "preview": True,
                            "content": e["content"]})
            out.append(e)
        return out
    verdict = checks.check_reconcile(both)
    assert verdict.status == "failed"
    assert "same id" in verdict.message


def test_a_reconciler_that_drops_a_preview_without_its_canonical_event_is_caught():
    def drops(payloads):
        return [e for e in solutions.reconcile(payloads) if not e.get("preview")]
    verdict = checks.check_reconcile(drops)
    assert verdict.status == "failed"
    assert "preview: True" in verdict.message
    assert "is kept where its event_start came" in verdict.message


def test_a_deduplicator_that_drops_a_repeated_fragment_is_caught():
    def by_content(payloads):
        kept, last = [], None
        for p in payloads:
            if p.get("type") == ma.EVENT_DELTA and p == last:
                continue           # "the same delta again": a guess, and wrong
            kept.append(p)
            last = p
        return solutions.reconcile(kept)
    verdict = checks.check_reconcile(by_content)
    assert verdict.status == "failed"
    assert "a preview that laughs" in verdict.message
    assert "a fragment that repeats the one before is text" in verdict.message


def test_a_deduplicator_that_guesses_without_ids_is_caught():
    def by_whole_event(payloads):
        seen, kept = [], []
        for p in payloads:
            if p.get("type") not in (ma.EVENT_DELTA, ma.EVENT_START) and p in seen:
                continue
            seen.append(p)
            kept.append(p)
        return solutions.reconcile(kept)
    verdict = checks.check_reconcile(by_whole_event)
    assert verdict.status == "failed"
    assert "without ids" in verdict.message and "not deduplicated by guessing" in verdict.message


# -- exercise 2 -------------------------------------------------------------------------------

def test_an_adapter_that_reads_requires_action_as_completed_is_caught():
    class Completes(solutions.SessionAdapter):
        def finish(self):
            raw = self.response.get("stop_reason")
            return Finish("stop" if raw == ma.REQUIRES_ACTION else
                          ma.finish_reason(raw) or "other", raw)
    verdict = checks.check_session_adapter(Completes)
    assert verdict.status == "failed"
    assert "requires_action is not end_turn" in verdict.message
    assert "finish='pause'" in verdict.message or "finish='tool_calls'" in verdict.message


def test_an_adapter_whose_every_call_is_the_applications_is_caught():
    class AllMine(solutions.SessionAdapter):
        def classify(self, opened):
            kind, _, channel = super().classify(opened)
            return kind, False, channel
    verdict = checks.check_session_adapter(AllMine)
    assert verdict.status == "failed"
    assert "server_side=True" in verdict.message and "classify()" in verdict.message


def test_the_registry_entry_is_put_back_even_when_the_adapter_raises():
    before = ENTRIES[ma.WIRE]

    class Broken(solutions.SessionAdapter):
        def finish(self):
            raise RuntimeError("boom")
    verdict = checks.check_session_adapter(Broken)
    assert verdict.status == "failed" and "RuntimeError: boom" in verdict.message
    assert ENTRIES[ma.WIRE] is before


# -- exercise 3 -------------------------------------------------------------------------------

def test_an_approver_that_never_answers_is_caught():
    verdict = checks.check_answer(lambda events, approve, tools: [])
    assert verdict.status == "failed"
    assert "waiting on sevt_0006Zk4J2AL01LeeLYeQ4NoG (agent.tool_use edit)" in verdict.message
    assert "an approver that never answers never carries the session on" in verdict.message


def test_an_answer_that_ignores_the_approver_is_caught():
    def always_allows(events, approve, tools):
        return solutions.answer(events, lambda call: True, tools)
    verdict = checks.check_answer(always_allows)
    assert verdict.status == "failed" and "denied" in verdict.message
    assert "what approve(call) says" in verdict.message


def test_answering_an_end_that_asks_for_nothing_is_caught():
    def answers_every_call(events, approve, tools):
        return [{"type": ma.USER_TOOL_CONFIRMATION, "tool_use_id": e["id"], "result": ma.ALLOW}
                for e in events if e.get("type") in ma.CALLS]
    verdict = checks.check_answer(answers_every_call)
    assert verdict.status == "failed"
    assert "answer only what the last idle waits on" in verdict.message


def test_answers_that_leave_one_call_waiting_do_not_carry_the_session_on():
    answers = solutions.answer(checks._hand_made_two_waits(), checks.deny_all, checks.TOOLS)
    events = checks._hand_made_two_waits()
    assert checks._end_after(events, answers) == {"outcome": "completed", "reason": "stop"}
    assert checks._end_after(events, answers[:1]) == {"outcome": "paused",
                                                      "reason": "requires_action"}
