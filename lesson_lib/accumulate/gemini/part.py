"""What one Gemini part and one candidate hold.

A `Part` is one slot ``(candidate, n)``: the part as it arrived, and the text its
continuations appended or the call its arguments feed. A `Candidate` is one of a
record's ``candidates``: its parts in order, its finish reason and the fields it
carries (grounding, citations, the rest kept as they came: `Candidate.take_fields`).
"""

from __future__ import annotations

import copy
import json
from typing import Any

from ...partial_json import NOTHING
from ...tool_calls import ToolCall
from ...wires import gemini as wire
from ..base import Fragments, SlotState
from ..path_arguments import PathArguments

# Fields of a candidate read on their own; any other is kept, last value.
CANDIDATE_OWN = frozenset({"content", "finishReason", "index", "groundingMetadata",
                           "citationMetadata"})
# A whole part's text for the slot view and the turn: the code, the output.
SAID = {wire.EXECUTABLE_CODE: "code", wire.CODE_EXECUTION_RESULT: "output"}


class Part:
    """One part in a candidate's ``parts``: its slot, its text or its call."""

    __slots__ = ("address", "kind", "data", "text", "call", "args", "streamed", "state")

    def __init__(self, address: tuple[int, int], kind: str, data: dict) -> None:
        self.address = address
        self.kind = kind                 # text, thought, functionCall, or the part's field
        self.data = data                 # the part as it arrived, without the streamed text
        self.text: Fragments | None = None
        self.call: ToolCall | None = None
        self.args: PathArguments | None = None    # a streamed call's arguments
        self.streamed = False
        self.state: SlotState = "open"

    @property
    def name(self) -> str | None:
        call = self.data.get(wire.FUNCTION_CALL)
        name = call.get("name") if isinstance(call, dict) else None
        return name if isinstance(name, str) else None

    @property
    def call_id(self) -> str | None:
        call = self.data.get(wire.FUNCTION_CALL)
        found = call.get("id") if isinstance(call, dict) else None
        return found if isinstance(found, str) else None

    def label(self) -> str:
        name = self.name
        return f"[{self.address[1]}] {self.kind}" + (f" {name}" if name else "")

    def current_input(self) -> Any:
        call = self.call
        if call is None:
            return {}
        if call.ended:
            return call.input
        value = call.view().value
        return {} if value is NOTHING else value

    def as_dict(self) -> dict:
        out = copy.deepcopy(self.data)
        if self.text is not None:
            out = {wire.TEXT_PART: self.text.text, **out}
        if self.kind == wire.FUNCTION_CALL and (self.streamed or "args" in out[wire.FUNCTION_CALL]):
            out[wire.FUNCTION_CALL]["args"] = self.current_input()
        return out

    def shown(self) -> str:
        """The slot view's text: the text, the raw arguments, or the whole part."""
        if self.text is not None:
            return self.text.text
        if self.call is not None:
            return self.call.raw
        inner = self.data.get(self.kind)
        said = inner.get(SAID.get(self.kind, "")) if isinstance(inner, dict) else None
        if isinstance(said, str):
            return said
        body = {k: v for k, v in self.data.items() if k not in (wire.THOUGHT_SIGNATURE, wire.THOUGHT)}
        return json.dumps(body, ensure_ascii=False)


class Candidate:
    """One candidate: its parts, its finish reason and the fields it carries."""

    __slots__ = ("index", "parts", "role", "finish_reason", "fields", "grounding",
                 "citations", "open_call", "said_index")

    def __init__(self, index: int) -> None:
        self.index = index
        self.parts: list[Part] = []
        self.role: str | None = None
        self.finish_reason: str | None = None
        self.fields: dict[str, Any] = {}
        self.grounding: Any = None
        self.citations: list | None = None
        self.open_call: Part | None = None
        self.said_index = False

    def take_fields(self, data: dict) -> None:
        """Keep what a record says of the candidate besides its parts: a field not read on
        its own (the last value), ``groundingMetadata`` (empty on every record and whole
        on the last: the last non-empty one wins), ``citationMetadata`` (added up)."""
        for key, value in data.items():
            if key not in CANDIDATE_OWN:
                self.fields[key] = value
        grounding = data.get("groundingMetadata")
        if grounding is not None and (grounding or self.grounding is None):
            self.grounding = grounding
        cited = data.get("citationMetadata")
        if isinstance(cited, dict) and isinstance(cited.get("citations"), list):
            self.citations = (self.citations or []) + cited["citations"]

    def as_dict(self) -> dict:
        out: dict[str, Any] = {"content": {"parts": [p.as_dict() for p in self.parts],
                                           "role": self.role or "model"}}
        if self.finish_reason is not None:
            out["finishReason"] = self.finish_reason
        if self.said_index:
            out["index"] = self.index
        out.update(copy.deepcopy(self.fields))
        if self.grounding is not None:
            out["groundingMetadata"] = copy.deepcopy(self.grounding)
        if self.citations is not None:
            out["citationMetadata"] = {"citations": copy.deepcopy(self.citations)}
        return out
