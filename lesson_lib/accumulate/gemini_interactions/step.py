"""What one Interactions step holds: the start event's step, plus what its deltas added.

A `Step` is one slot, addressed by its ``index`` (a `StartedBlock`: its name, id and
function call come from its start, as an Anthropic block's do). A model output's
``content`` and a thought's ``summary`` are lists of `Item`s: a text item whose
fragments grow, or a whole item (an image, a text the start stated).
"""

from __future__ import annotations

import copy
import json
from typing import Any

from ...wires import gemini_interactions as gi
from ..base import Fragments, SlotState
from ..started import StartedBlock

TEXT = "text"


class Item:
    """One item of a step's content or summary: a text whose fragments grow, or a whole
    item (an image, a text the start stated)."""

    __slots__ = ("data", "text")

    def __init__(self, data: Any, text: Fragments | None = None) -> None:
        self.data = data
        self.text = text

    @classmethod
    def of(cls, data: Any) -> Item:
        """An item as a start or a delta states it (a text item's text made to grow)."""
        item = copy.deepcopy(data)
        if isinstance(item, dict) and item.get("type") == TEXT \
                and isinstance(item.get(TEXT), str):
            text = Fragments()
            text.append(item.pop(TEXT))
            return cls(item, text)
        return cls(item)

    def as_dict(self) -> Any:
        out = copy.deepcopy(self.data)
        if self.text is not None:
            out[TEXT] = self.text.text
        return out


class Step(StartedBlock):
    """One slot: the start event's step, plus what the deltas added."""

    __slots__ = ("items", "items_field")

    input_key = gi.ARGUMENTS_KEY
    ended_by = gi.CALL_ENDED_BY

    def __init__(self, index: int, data: dict, state: SlotState = "open") -> None:
        super().__init__(index, data, state)
        # A model output's content, a thought's summary: items, in order.
        self.items_field = {gi.MODEL_OUTPUT_STEP: gi.CONTENT_FIELD,
                            gi.THOUGHT_STEP: gi.SUMMARY_FIELD}.get(self.kind)
        # (A start's items that are no list stay in the step as they came.)
        given = data.get(self.items_field) if self.items_field else None
        self.items: list[Item] | None = None
        if isinstance(given, list):
            del data[self.items_field]    # type: ignore[arg-type]
            self.items = [Item.of(item) for item in given]

    @property
    def takes_input(self) -> bool:
        return self.kind in gi.CALL_STEPS

    def from_server(self) -> bool:
        return self.kind in gi.SERVER_RESULT_STEPS

    def answers(self) -> str | None:
        call_id = self.data.get("call_id")
        return call_id if isinstance(call_id, str) else None

    def last_text(self) -> Item | None:
        """The last item, when it is a text (where text and annotations go)."""
        if self.items and self.items[-1].text is not None:
            return self.items[-1]
        return None

    def shown(self) -> str:
        if self.items_field is not None:
            return "".join(i.text.text for i in self.items or () if i.text is not None)
        rest = {k: v for k, v in self.data.items() if k != "type"}
        return json.dumps(rest, ensure_ascii=False) if rest else ""

    def as_dict(self) -> dict:
        out = copy.deepcopy(self.data)
        if self.items is not None and self.items_field is not None:
            out[self.items_field] = [item.as_dict() for item in self.items]
        if self.takes_input:
            out[gi.ARGUMENTS_KEY] = self.current_input()
        return out
