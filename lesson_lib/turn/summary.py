"""The turn in words: each piece's state, and the whole turn as plain text.

What a reader is told about a `TurnState`, whatever shows it: the states
of a tool call (``forming``, ``ready``, ``running``, ``done``, ``failed``,
``invalid``, ``cut``, ``interrupted``) and of a block (``arriving``,
``complete``, ``incomplete``), each with a glyph; the outcome as a sentence
that never says done for a stream that died; and `turn_text`, the turn as
plain text, which ``lesson-lib turn`` prints and the turn view
(`lesson_lib.views.turn_view`) gives as its ``text/plain`` fallback. The
view adds colours and borders to these words, never other words.
"""

from __future__ import annotations

from typing import Any

from ..capture.json_text import one_line
from ..tool_calls import ToolCall
from .ends import TurnEnd, end_sentence
from .reduce import BlockView, StepView, TurnState

TEXT_TAIL = 2000      # characters of a long block shown (its end), so a step stays cheap
INPUT_TAIL = 600      # characters of a tool's raw input shown while it forms

# (glyph, word) of each state: a shape and a name, so no reader needs colour.
TOOL_STATE_WORDS: dict[str, tuple[str, str]] = {
    "forming": ("⋯", "forming"), "ready": ("✓", "ready"), "running": ("▶", "running"),
    "done": ("✔", "done"), "failed": ("✖", "failed"), "invalid": ("✗", "invalid"),
    "cut": ("✂", "cut"), "interrupted": ("⏹", "interrupted"), "held": ("⏸", "held"),
}
BLOCK_STATE_WORDS: dict[str, tuple[str, str]] = {
    "arriving": ("⋯", "arriving"), "complete": ("✔", "complete"),
    "incomplete": ("✂", "incomplete"),
}
OUTCOME_WORDS: dict[str | None, tuple[str, str]] = {
    None: ("⋯", "in progress"), "completed": ("✔", "completed"), "paused": ("⏸", "paused"),
    "failed": ("✖", "failed"), "truncated": ("✂", "truncated"), "cancelled": ("⊘", "cancelled"),
    "max_steps": ("⏹", "stopped at max steps"), "budget_reached": ("⛁", "budget reached"),
    "unknown": ("?", "ended for an unknown reason"),
    # A `completed` turn whose last step asked for tools has not answered yet (`shown_outcome`).
    "tools_to_run": ("⏭", "tools to run"), "next_step": ("⏭", "waiting for the next step"),
}
# What each outcome means, in a sentence a learner can act on.
OUTCOME_SAYS: dict[str | None, str] = {
    None: "the turn has not finished: what is shown is what has arrived so far",
    "completed": "every step's stream ended properly, with its own terminal event",
    "paused": "the provider paused the turn; send it back as it is to continue",
    "failed": "an error ended the turn; what arrived before it is kept",
    "truncated": ("a stream was cut before its terminal event, so the turn is not done; "
                  "what arrived is kept and marked incomplete"),
    "cancelled": "the turn was cancelled: open blocks were closed, running tools interrupted",
    "max_steps": "the turn reached its step limit before the model finished",
    "budget_reached": "a budget was reached, so the turn stopped before the model finished",
    "unknown": ("the turn ended with a reason this reader does not know, so it is not read as "
                "success"),
    "tools_to_run": ("the last step ended properly, asking for tools: the turn goes on once "
                     "they run and their results are sent in the next step"),
    "next_step": ("the last step asked for tools and they have run: the turn goes on when "
                  "their results are sent in the next step"),
}
ENDED_SAYS = {"proper": "ended properly", "cut": "cut (no terminal event)",
              "error": "ended by an error", "cancelled": "cancelled", None: "streaming…"}


# -- states of the pieces -----------------------------------------------------------------


def tool_state(block: BlockView) -> str:
    """A tool call's state for the card: the call's (lesson 3), then its execution's."""
    if block.call_state == "forming":
        return "forming"
    if block.call_state in ("invalid", "cut"):
        return block.call_state
    if block.execution_status == "interrupted":
        return "interrupted"
    if block.execution in ("running", "done", "failed", "held"):
        return block.execution
    return "ready"


def block_state(block: BlockView) -> str:
    """A text, reasoning or other block's state: ``arriving``, ``complete``, ``incomplete``."""
    if block.open:
        return "arriving"
    return "complete" if block.complete else "incomplete"


def tail(text: str, limit: int) -> tuple[str, int]:
    """The last `limit` characters of `text`, and how many were left out."""
    if len(text) <= limit:
        return text, 0
    return text[-limit:], len(text) - limit


def forming_fields(block: BlockView) -> list[tuple[str, str, bool]]:
    """A forming call's arguments as lesson 3 reads them: each top-level field that has
    begun, its value so far as JSON (an open string or container without its closer), and
    whether it has settled. Empty when nothing has begun or the arguments are no object."""
    call = ToolCall(block.name or "")
    call.feed(block.raw_input or "")
    view = call.view()
    if not isinstance(view.value, dict):
        return []
    fields = []
    for key, value in view.value.items():
        settled = view.is_settled((key,))
        text = one_line(value)
        if not settled and isinstance(value, str | dict | list):
            text = text[:-1]
        shown, hidden = tail(text, INPUT_TAIL)
        fields.append((key, ("…" if hidden else "") + shown, settled))
    return fields


def usage_words(usage: Any) -> str:
    """A `Usage` as ``input 12 · output 3 · ...``."""
    return (f"input {usage.input} · output {usage.output} · cache read {usage.cache_read} · "
            f"cache write {usage.cache_write} · reasoning {usage.reasoning}")


def finish_words(step: StepView) -> str:
    """A step's finish reason next to the provider's raw value."""
    if step.finish is None:
        return "not finished"
    raw = step.finish.raw
    return f"{step.finish.reason} (raw: {raw!r})" if raw is not None else step.finish.reason


def error_words(error: Any) -> str:
    """An `ErrorReported` in one line: step, scope, phase, code, whether a retry helps."""
    cure = "a retry may cure it" if error.retryable else "a retry will not cure it"
    code = f" [{error.code}]" if error.code else ""
    return (f"step {error.step} · {error.scope} · {error.phase}{code} · {cure}: "
            f"{error.message}")


def shown_outcome(state: TurnState) -> str | None:
    """The outcome as a reader is told it: the turn's own, except that a ``completed`` turn
    whose last step asked for tools is ``tools_to_run`` (or ``next_step`` once they ran).

    Every stream of such a turn ended properly, so its outcome is ``completed`` (the
    contract's word, in ``--json``); but the answer has not come, and a banner saying
    "completed" over it would tell a reader the opposite.
    """
    if state.outcome != "completed" or not state.steps:
        return state.outcome
    last = state.steps[-1]
    if last.finish is None or last.finish.reason != "tool_calls":
        return state.outcome
    calls = [b for b in state.calls if b.step == last.step and not b.server_side]
    if calls and all(b.execution_status is not None for b in calls):
        return "next_step"
    return "tools_to_run"


def warnings_of(state: TurnState) -> list[str]:
    """The stations' warnings so far (``noted`` events): what the decoder, the accumulator or
    the adapter flagged that is not an error of the turn, as ``step N · code: message``."""
    return [f"step {event.step} · {event.code}: {event.message}" for event in state.passed
            if event.kind == "noted"]


# Outcomes whose sentence is their reason's (`turn.ends`): the rest keep lesson 4's words.
_SAID_BY_REASON = ("paused", "cancelled", "budget_reached", "unknown", "max_steps")


def end_says(state: TurnState) -> str:
    """What the turn's end means, in a sentence: the outcome's own words, or, for an end that
    is no plain success or failure (a pause, a cancel, a budget, an unknown reason), its
    reason's, with who ended it and what it interrupted (from the turn's events when the end
    does not say)."""
    shown = shown_outcome(state)
    end = state.end
    if end is not None and shown == end.outcome == "failed" and end.reason == "gave_up":
        return end_sentence(end)
    if end is None or shown != end.outcome or end.outcome not in _SAID_BY_REASON:
        return OUTCOME_SAYS.get(shown, "")
    if end.outcome in ("cancelled", "budget_reached"):
        detail = end.detail if isinstance(end.detail, dict) else {}
        if "where" not in detail:
            detail = {**detail, **_interrupted(state)}
        end = TurnEnd(end.outcome, end.reason, detail)
    return end_sentence(end)


def _interrupted(state: TurnState) -> dict[str, Any]:
    """Where a cancel found the turn, read back from the events it left: the blocks it
    closed (ended synthesised and incomplete) and the tools it interrupted."""
    blocks = state.blocks
    tools = [b.name or b.call_id or b.id for b in blocks
             if b.execution_status == "interrupted"]
    closed = [b for b in blocks if b.synthesised and not b.complete]
    steps = state.steps
    if closed:
        where = {"tool_call": "tool_arguments", "reasoning": "reasoning"}.get(closed[-1].kind,
                                                                          "text")
    elif tools:
        where = "tools"
    elif steps and steps[-1].ended == "cancelled" and not any(
            b.step == steps[-1].step for b in blocks):
        where = "before_first_byte"
    else:
        where = "between_steps"
    return {"where": where, "tools": tools}


def outcome_line(state: TurnState, *, glyph: bool = True) -> str:
    """The outcome banner as one line: glyph, word, and what it means."""
    shown = shown_outcome(state)
    mark, word = OUTCOME_WORDS.get(shown, OUTCOME_WORDS[None])
    line = f"{word}: {end_says(state)}"
    line = f"{mark} {line}" if glyph else line
    errors = state.errors
    if state.outcome == "failed" and errors:
        line += f" ({errors[0].scope} error, {errors[0].phase}: {errors[0].message})"
    return line


# -- plain text -----------------------------------------------------------------------------


def turn_text(state: TurnState) -> str:
    """The turn as plain text: outcome, steps with their blocks and tool calls, usage, errors.

    The ``text/plain`` fallback of the view and what ``lesson-lib turn`` prints.
    """
    lines = [f"turn · {outcome_line(state)}"]
    blocks_by_step: dict[int, list[BlockView]] = {}
    for block in state.blocks:
        blocks_by_step.setdefault(block.step, []).append(block)
    for step in state.steps:
        lines.append(f"step {step.step} · {step.wire} · {step.model or 'model not named'} · "
                     f"finish {finish_words(step)} · {ENDED_SAYS.get(step.ended, step.ended)}")
        for block in blocks_by_step.get(step.step, []):
            lines += ["  " + line for line in _block_text(block)]
        if step.finished:
            lines.append(f"  usage: {usage_words(step.usage)}")
    if not state.steps:
        lines.append("(no step has started)")
    lines.append(f"usage (turn): {usage_words(state.usage)}")
    for error in state.errors:
        lines.append(f"error: {error_words(error)}")
    for warning in warnings_of(state):
        lines.append(f"warning (noted): {warning}")
    return "\n".join(lines)


def _block_text(block: BlockView) -> list[str]:
    choice = f" choice {block.choice}" if block.choice else ""
    side = " server-side" if block.server_side else ""
    if block.kind == "tool_call":
        state = tool_state(block)
        mark, word = TOOL_STATE_WORDS[state]
        out = [f"[{block.id}] tool call{side}{choice} {block.name} ({block.call_id or 'no id'}) "
               f"· {mark} {word}"]
        if block.input is not None and state not in ("forming", "invalid", "cut"):
            out.append(f"    input: {one_line(block.input)}")
        else:
            fields = forming_fields(block) if state == "forming" else []
            if fields:
                out.append("    arguments so far (✔ settled, ⋯ still forming):")
            for key, text, settled in fields:
                out.append(f"      {one_line(key)}: {text}  "
                           f"{'✔' if settled else '⋯'}")
            raw, hidden = tail(block.raw_input or "", INPUT_TAIL)
            out.append(f"    raw input{f' (last {INPUT_TAIL} of {hidden + len(raw)})' if hidden else ''}: "
                       f"{raw!r}")
        if block.execution_status is not None:
            again = ", not run again: an attempt a retry replaced had it" if block.reused else ""
            out.append(f"    result ({block.execution_status}{again}): "
                       f"{one_line(block.result)}")
        return out
    mark, word = BLOCK_STATE_WORDS[block_state(block)]
    label = "refusal" if block.channel == "refusal" else block.kind
    head = f"[{block.id}] {label}{side}{choice} · {mark} {word}"
    if block.signature:
        head += " · signed"
    if block.redacted:
        head += " · redacted"
    if block.restated:
        head += " · restated: the server's text differs from the deltas and is kept"
    text, hidden = tail(block.text, TEXT_TAIL)
    more = f"… {hidden} earlier characters … " if hidden else ""
    return [head, f"    {more}{text!r}" if text or not block.data else f"    {block.wire_kind}"]
