"""An interaction stated whole: ``interaction.created`` and ``interaction.completed``
carry an ``Interaction`` object, whose ``steps`` may say steps the stream did not send.

Its fields are taken (the last word wins); a step the stream did not send becomes a
closed slot, as if it had streamed (a call's input checked); one it sent keeps what the
stream said, and a difference is a ``step_restated`` warning: the bytes win.
"""

from __future__ import annotations

import copy
import json
from typing import Any

from ...wires.wire_events import WireEvent
from ..changes import ResponseChanged
from .step import Step


class StatedSteps:
    """The Interactions accumulator's stated interaction (mixed into
    `GeminiInteractionsAccumulator`)."""

    changes: list
    interaction: dict[str, Any]
    blocks: dict[int, Step]

    def _merge_interaction(self, interaction: Any, event: WireEvent) -> None:
        """Take the fields an interaction object states (its steps go to the slots)."""
        if not isinstance(interaction, dict):
            self.note("unknown_event", f"{event.type} carries no interaction object",
                      event=event, raw=event.sse.data)
            return
        fields = copy.deepcopy(interaction)
        steps = fields.pop("steps", None)
        self.interaction.update(fields)
        self.changes.append(ResponseChanged(event.index, copy.deepcopy(fields)))
        if isinstance(steps, list):
            self._stated_steps(steps, event)

    def _stated_steps(self, steps: list, event: WireEvent) -> None:
        """Steps an interaction states whole: a step the stream did not send becomes a closed
        slot; one it sent keeps what the stream said, and a difference is noted."""
        for index, step in enumerate(steps):
            if not isinstance(step, dict):
                continue
            block = self.blocks.get(index)
            if block is None:
                block = self.blocks[index] = Step(index, copy.deepcopy(step), "closed")
                self._opened(block, event)
                if block.takes_input:
                    block.input = self.close_call_slot(block.open_call(event), index,
                                                       cut=False, event=event,
                                                       what=block.described(), how="done")
                    block.input_ended = True
            elif block.as_dict() != step:
                self.note("step_restated", f"{event.type} states step {index} otherwise than "
                          "the stream did; the stream's is kept", event=event,
                          severity="warning", slot=index, raw=json.dumps(step))

