"""After an error that came after output: the two ways on, and what each costs.

`lesson_lib.breaks.retry` says an error after output is ``not_plain_retry``:
sending the same request again would show the answer twice and could run
its tools twice. An application has two honest options
(`after_output_options` lays them out from the failed step's `TurnState`):

- **continue** from what arrived: the next request carries the partial
  assistant output, then a short user message asking to go on from where
  it stopped; the screen keeps the partial text and appends what comes.
  Paid again: the input, plus the partial output, now sent as input. The
  output already paid for is not generated again. (The request ends with a
  user message on every wire: the Claude 4.6 models refuse a request that
  ends with an assistant message, a "prefill", and the OpenAI wires have
  no prefill.)
- **redo** the step and replace it: the same request again; the partial
  text is taken off the screen and replaced by the new answer. Paid again:
  the input, and the output so far, generated a second time.

In both, a tool that already ran is **not run again**: its result is kept
and reused (sent with the continued request, or given back when the redone
step asks for the same call). A call whose arguments were cut never ran
and is dropped in both.

Figures come from the turn's usage where the stream reported them, and are
estimates (``ceil(characters / 4)``, `lesson_lib.breaks.budget`) where it did not,
each labelled as such. What a stream reports after an error differs by wire:
Anthropic counts the output only in ``message_delta`` (with the
``stop_reason``, after the last block), so a step that failed before it has
only ``message_start``'s count, taken before any output, and its output so
far is an estimate; a Responses ``response.failed`` or a Chat usage chunk may carry
the real figures, or (as in the corpus) ``null``.
"""

from __future__ import annotations

import copy
import json
import math
from dataclasses import dataclass, field
from typing import Any

from .. import wires
from ..diagnostics import Diagnostic
from ..turn.next_request import next_request
from ..turn.reduce import BlockView, StepView, TurnState
from .budget import CHARS_PER_TOKEN

CONTINUE_PROMPT = ("Your previous message was cut off by an error. Continue exactly where it "
                   "stopped, without repeating any of it.")

# How a figure is known: reported by the stream, estimated, exact by construction (a zero), or not.
REPORTED, ESTIMATE, EXACT, UNKNOWN = "reported", "estimate", "exact", "unknown"


@dataclass(frozen=True)
class Tokens:
    """A token figure and its basis: ``reported`` by the stream, an ``estimate``, ``exact``
    (known by construction, such as nothing at all), or ``unknown``."""

    value: int
    basis: str

    def __add__(self, other: Tokens) -> Tokens:
        bases = {self.basis, other.basis}
        basis = next(b for b in (UNKNOWN, ESTIMATE, REPORTED, EXACT) if b in bases)
        return Tokens(self.value + other.value, basis)

    def __str__(self) -> str:
        if self.basis == UNKNOWN:
            return "unknown"
        return f"{self.value} tokens" + (" (estimate)" if self.basis == ESTIMATE else "")


@dataclass(frozen=True)
class ToolDone:
    """A tool call of the turn and what happens to it in both options."""

    step: int
    call_id: str | None
    name: str | None
    state: str        # "ran" | "running" | "ready" | "dropped"
    says: str


@dataclass(frozen=True)
class Option:
    """One way on after the error: its request, what it pays again, what the user sees."""

    name: str                       # "continue" | "redo"
    request: dict[str, Any] | None  # the next request (None when the step's was not given)
    input_again: Tokens             # input tokens paid again
    output_again: Tokens            # output tokens generated (and paid) again
    screen: str                     # what happens on screen
    kept: str                       # what is kept
    input_why: str = ""             # what the input paid again is made of


@dataclass(frozen=True)
class AfterOutput:
    """The failed step, what arrived, and the two options (empty when the error does not apply)."""

    step: int | None
    wire: str | None
    partial_text: str = ""
    input_tokens: Tokens = Tokens(0, UNKNOWN)
    output_so_far: Tokens = Tokens(0, UNKNOWN)
    tools: tuple[ToolDone, ...] = ()
    options: tuple[Option, ...] = ()
    diagnostics: tuple[Diagnostic, ...] = field(default_factory=tuple)

    def option(self, name: str) -> Option | None:
        """The option called `name` (``continue`` or ``redo``), if laid out."""
        return next((o for o in self.options if o.name == name), None)

    def text(self) -> str:
        """The options as a few plain lines (what the notebook prints)."""
        if not self.options:
            return "no options: " + "; ".join(d.message for d in self.diagnostics)
        lines = [f"step {self.step} ({self.wire}) failed after output: "
                 f"{len(self.partial_text)} characters arrived; input {self.input_tokens}, "
                 f"output so far {self.output_so_far}"]
        for o in self.options:
            lines.append(f"  {o.name:8} pays again: input {o.input_again} ({o.input_why}); "
                         f"output {o.output_again}")
            lines.append(f"  {'':8} on screen: {o.screen}")
        ran = [t for t in self.tools if t.state in ("ran", "running")]
        lines.append("  tools: " + ("; ".join(f"{t.name} ({t.call_id}) {t.says}" for t in ran)
                                    if ran else "none had run, so none can run twice"))
        return "\n".join(lines)

    __repr__ = text


def _estimate(chars: int) -> Tokens:
    return Tokens(math.ceil(chars / CHARS_PER_TOKEN), ESTIMATE)


def _strings(value: Any) -> int:
    """The characters of every string in a request's content (keys and punctuation left out)."""
    if isinstance(value, str):
        return len(value)
    if isinstance(value, dict):
        return sum(_strings(v) for v in value.values())
    if isinstance(value, list):
        return sum(_strings(v) for v in value)
    return 0


def input_estimate(request: dict[str, Any]) -> Tokens:
    """The request's input tokens, estimated from its text (messages or input, system or
    instructions) and its tools' definitions as JSON."""
    chars = sum(_strings(request.get(k)) for k in ("messages", "input", "system", "instructions"))
    if request.get("tools"):
        chars += len(json.dumps(request["tools"], ensure_ascii=False))
    return _estimate(chars)


def _failed_step(state: TurnState) -> tuple[StepView | None, Diagnostic | None]:
    errors = [e for e in state.errors if e.phase == "after_output"]
    if not errors:
        before = [e for e in state.errors if e.phase == "before_output"]
        why = ("the error came before any output: retry the request as is" if before
               else f"no error came after output (outcome {state.outcome})")
        return None, Diagnostic("not_after_output", why)
    step = errors[-1].step
    view = next((s for s in state.steps if s.step == step), None)
    if view is None:
        return None, Diagnostic("not_after_output", f"the error names step {step}, "
                                "which never started")
    return view, None


def _output_chars(blocks: list[BlockView]) -> int:
    return sum(len(b.raw_input or "") if b.kind == "tool_call" else len(b.text) for b in blocks)


def _output_so_far(step: StepView, blocks: list[BlockView]) -> Tokens:
    """The step's output tokens: the stream's count where it covers the output, else an estimate."""
    reported = step.usage.output
    # Anthropic's only count before message_delta is message_start's (see the module);
    # message_delta also brings the stop_reason, so a step without one never had it.
    entry = wires.ENTRIES.get(step.wire or "")
    early = entry is not None and entry.early_usage
    covers = not early or (step.finish is not None and step.finish.raw is not None)
    if reported > 0 and covers:
        return Tokens(reported, REPORTED)
    return _estimate(_output_chars(blocks))


def _tools(state: TurnState, failed: int) -> tuple[ToolDone, ...]:
    out = []
    for b in state.calls:
        if b.step > failed or b.server_side:
            continue
        if b.execution in ("done", "failed"):
            state_, says = "ran", ("ran: its result is kept and reused, never run again")
        elif b.execution == "running":
            state_, says = "running", "still running: wait for its result; never start it again"
        elif b.call_state == "complete":
            state_, says = "ready", ("ready but not run: run it once, and reuse the result "
                                     "whichever option is taken")
        else:
            state_, says = "dropped", ("its arguments never finished: it did not run, and is "
                                       "dropped in both options")
        out.append(ToolDone(b.step, b.call_id, b.name, state_, says))
    return tuple(out)


def continue_request(state: TurnState, request: dict[str, Any], step: int) -> dict[str, Any]:
    """The step's request with the partial output appended, then a user message to go on."""
    out = next_request(state, request, step)
    wire = next((s.wire for s in state.steps if s.step == step), "")
    entry = wires.ENTRIES.get(wire or "")
    append = (entry.part("user_message") if entry is not None else None) or _user_message
    append(out, CONTINUE_PROMPT)
    return out


def _user_message(request: dict[str, Any], text: str) -> None:
    """The default of an entry's `user_message`: a user message appended to ``messages``."""
    request["messages"].append({"role": "user", "content": text})


def messages_user_message(request: dict[str, Any], text: str) -> None:
    """Anthropic's `user_message`: where the request ends with the tool results' user
    message, that message takes the words too (one user turn); else a new one."""
    items = request["messages"]
    if items and items[-1].get("role") == "user":
        items[-1] = dict(items[-1], content=list(items[-1]["content"])
                         + [{"type": "text", "text": text}])
    else:
        items.append({"role": "user", "content": text})


def input_user_message(request: dict[str, Any], text: str) -> None:
    """Responses' `user_message`: a user message appended to ``input``."""
    request["input"].append({"role": "user", "content": text})


def after_output_options(state: TurnState, request: dict[str, Any] | None = None
                         ) -> AfterOutput:
    """Lay out continue and redo for a turn whose step failed after output.

    `request` is the failed step's request as sent (a capture's
    ``request``); without it the options carry no request and the input is
    ``unknown`` unless the stream reported it. Bad input never raises: a turn
    that did not fail after output gets no options and a ``not_after_output``
    diagnostic.
    """
    step, problem = _failed_step(state)
    if step is None:
        return AfterOutput(None, None, diagnostics=(problem,) if problem else ())
    blocks = [b for b in state.blocks if b.step == step.step and b.choice == 0]
    partial = "".join(b.text for b in blocks if b.kind == "text")
    if step.usage.input > 0:
        input_tokens = Tokens(step.usage.input, REPORTED)
    elif request:
        input_tokens = input_estimate(request)
    else:
        input_tokens = Tokens(0, UNKNOWN)
    output = _output_so_far(step, blocks)
    prompt = _estimate(len(CONTINUE_PROMPT))
    go_on = Option(
        "continue",
        continue_request(state, request, step.step) if request else None,
        input_again=input_tokens + output + prompt, output_again=Tokens(0, EXACT),
        screen="the partial text stays, marked incomplete; the continuation is appended",
        kept="the partial output (sent back as the assistant's message) and the tool results",
        input_why=f"the input {input_tokens.value} + the partial output {output.value} sent "
                  f"back + {prompt.value} asking to go on")
    redo = Option(
        "redo", copy.deepcopy(request) if request else None,
        input_again=input_tokens, output_again=output,
        screen="the partial text is taken off the screen and replaced by the new answer",
        kept="the tool results only; the partial output is discarded",
        input_why="the same input")
    return AfterOutput(step.step, step.wire, partial, input_tokens, output,
                       _tools(state, step.step), (go_on, redo))


__all__ = ["AfterOutput", "CONTINUE_PROMPT", "Option", "ToolDone", "Tokens",
           "after_output_options", "continue_request", "input_estimate"]
