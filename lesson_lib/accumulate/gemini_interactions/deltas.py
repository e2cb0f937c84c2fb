"""What each ``step.delta`` does to its step (`lesson_lib.wires.gemini_interactions`).

- ``text``: appends to the step's last text item in ``content`` (a model
  output's), or starts one; ``image``, ``audio``, ``video`` and ``document``
  append a whole item;
- ``text_annotation_delta``: adds its annotations to the last text item;
- ``thought_signature``: sets the step's ``signature``;
- ``thought_summary``: appends its item to a thought's ``summary`` (text
  continues the text before it);
- ``arguments_delta``: feeds the function call's `ToolCall` (lesson 3), which
  keeps the raw text and the partial value; checked strictly at the stop;
- a delta typed like its step (a server tool's ``google_search_call``,
  ``code_execution_result``...): states the step's fields; server steps are
  kept whole, and a server call's slot closes at its stop with the step as
  it then stands (its ``arguments``, a search's queries: the call's input).

`APPLY` maps each delta type to its method; each returns whether the delta fit its
step (the core notes one that does not, ``delta_mismatch``).
"""

from __future__ import annotations

import copy
from typing import Any

from ...wires import gemini_interactions as gi
from ...wires.wire_events import WireEvent
from ..base import Fragments
from ..changes import CitationAdded, SlotRestated, SlotSigned, TextAppended, ToolInputGrew
from .step import TEXT, Item, Step


class StepDeltas:
    """The Interactions accumulator's deltas (mixed into `GeminiInteractionsAccumulator`)."""

    changes: list

    def _text(self, block: Step, delta: dict, event: WireEvent) -> bool:
        text = delta.get(TEXT)
        if block.kind != gi.MODEL_OUTPUT_STEP or not isinstance(text, str):
            return False
        self._append_text(block, text, "text", event)
        return True

    def _append_text(self, block: Step, text: str, channel: Any, event: WireEvent) -> None:
        if block.items is None:
            block.items = []
        item = block.last_text()
        if item is None:
            item = Item({"type": TEXT}, Fragments())
            block.items.append(item)
        item.text.append(text)  # type: ignore[union-attr]
        self.changes.append(TextAppended(event.index, block.index, channel, text,
                                         block.items_field or TEXT))

    def _media(self, block: Step, delta: dict, event: WireEvent) -> bool:
        if block.kind != gi.MODEL_OUTPUT_STEP:
            return False
        if block.items is None:
            block.items = []
        block.items.append(Item(copy.deepcopy(delta)))
        return True

    def _summary(self, block: Step, delta: dict, event: WireEvent) -> bool:
        content = delta.get(gi.CONTENT_FIELD)
        if block.kind != gi.THOUGHT_STEP or not isinstance(content, dict):
            return False
        if content.get("type") == TEXT and isinstance(content.get(TEXT), str) \
                and set(content) == {"type", TEXT}:
            self._append_text(block, content[TEXT], "reasoning", event)
            return True
        if block.items is None:
            block.items = []
        block.items.append(Item.of(content))
        self.changes.append(SlotRestated(event.index, block.index, content=block.shown()))
        return True

    def _annotations(self, block: Step, delta: dict, event: WireEvent) -> bool:
        found = delta.get(gi.ANNOTATIONS_KEY)
        item = block.last_text()
        if item is None or not isinstance(found, list):
            return False
        kept = item.data.setdefault(gi.ANNOTATIONS_KEY, [])
        if not isinstance(kept, list):
            return False
        for annotation in found:
            kept.append(copy.deepcopy(annotation))
            self.changes.append(CitationAdded(event.index, block.index, kept[-1]))
        return True

    def _signature(self, block: Step, delta: dict, event: WireEvent) -> bool:
        signature = delta.get(gi.SIGNATURE_KEY)
        if not isinstance(signature, str):
            return False
        block.data[gi.SIGNATURE_KEY] = signature
        self.changes.append(SlotSigned(event.index, block.index, signature))
        return True

    def _arguments(self, block: Step, delta: dict, event: WireEvent) -> bool:
        fragment = delta.get(gi.ARGUMENTS_KEY)
        if not block.takes_input or not isinstance(fragment, str):
            return False
        grew = block.open_call(event).feed(fragment, t=event.t, event=event.index)
        self.changes.append(ToolInputGrew(event.index, block.index, fragment, tuple(grew)))
        return True

    def _whole(self, block: Step, delta: dict, event: WireEvent) -> bool:
        if delta.get("type") != block.kind:
            return False
        for key, value in delta.items():
            block.data[key] = copy.deepcopy(value)
        self.changes.append(SlotRestated(event.index, block.index, content=block.shown()))
        return True


def delta_text(delta: Any) -> str | None:
    """The text a delta carries (its text, argument fragment or signature)."""
    if not isinstance(delta, dict):
        return None
    for key in (TEXT, gi.ARGUMENTS_KEY, gi.SIGNATURE_KEY):
        if isinstance(delta.get(key), str):
            return delta[key]
    return None


APPLY = {gi.TEXT_DELTA: StepDeltas._text, gi.THOUGHT_SIGNATURE_DELTA: StepDeltas._signature,
         gi.THOUGHT_SUMMARY_DELTA: StepDeltas._summary,
         gi.ARGUMENTS_DELTA: StepDeltas._arguments,
         gi.TEXT_ANNOTATION_DELTA: StepDeltas._annotations,
         **{kind: StepDeltas._media for kind in gi.MEDIA_DELTAS},
         **{kind: StepDeltas._whole for kind in gi.WHOLE_STEPS}}
