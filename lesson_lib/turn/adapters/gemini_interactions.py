"""The Gemini Interactions adapter: steps by index, ``status`` as the finish, running usage.

The accumulator already did the reading: each ``step.start`` opened the slot
``index``, ``arguments_delta`` fragments went through lesson 3's parser, a
``thought_signature`` delta signed its step, and ``interaction.completed``
stated the status and the usage. What is left is what this wire says its own
way:

- step kinds: a ``thought`` is reasoning (its signature travels with it, sent
  back with the next request); a ``model_output`` is the answer's text; a
  ``function_call`` is a call the client runs; the provider's own tools are
  server work, each ``*_call`` step what it ran and each ``*_result`` step what
  it got back (whole steps: they start and end at once);
- the finish: the interaction's ``status``. ``requires_action`` is a step that
  waits on tools (``tool_calls``: the turn goes on once they run, it is not
  answered yet); ``incomplete`` and ``budget_exceeded`` are length stops,
  ``requires_continuation`` a pause, ``failed`` an error;
- the names: ``usage`` is the interaction's running total (the last wins),
  ``model`` and ``id`` are the turn's own names already.

An ``error`` event is an in-band failure (the step fails), and a body cut
before ``interaction.completed`` is a truncated step: both said by the base.
"""

from __future__ import annotations

from typing import Any

from ... import wires
from ...accumulate import changes as ch
from ..events import Finish
from .base import WireAdapter

_gi = wires.gemini_interactions


class GeminiInteractionsAdapter(WireAdapter):
    """Turn events from the Gemini Interactions accumulator's changes."""

    wire = _gi.WIRE

    def classify(self, opened: ch.SlotOpened):
        """Thoughts are reasoning, model output is text, function calls are the client's;
        server tool steps are the provider's work (``*_call``) and its results."""
        kind = opened.slot_kind
        if kind == _gi.THOUGHT_STEP:
            return "reasoning", False, "reasoning"
        if kind == _gi.MODEL_OUTPUT_STEP:
            return "text", False, "text"
        if kind in _gi.SERVER_CALL_STEPS:
            return "tool_call", True, "text"
        if kind in _gi.SERVER_RESULT_STEPS:
            return "tool_result", True, "other"
        return super().classify(opened)

    def stated_call(self, wire_kind: str | None, data: Any
                    ) -> tuple[str | None, str | None, Any] | None:
        """A server call's tool, id and input (its ``arguments``: a search's queries), as
        its step states them at its stop."""
        if wire_kind not in _gi.SERVER_CALL_STEPS:
            return None
        return _gi.server_call(data)

    def finish(self) -> Finish:
        """The interaction's last ``status``, in the unified vocabulary."""
        raw = self.response.get("status")
        return Finish(_gi.finish_reason(raw) or "other", raw)
