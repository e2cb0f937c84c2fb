"""What a Managed Agents slot holds: an `Entry` (an agent message's content entry, or a
whole event), and a `Preview` (what ``event_start`` opened, until its canonical event)."""

from __future__ import annotations

from typing import Any

from ...wires import managed_agents as ma
from ..base import Fragments
from ..indexed import IndexedBlock


class Entry(IndexedBlock):
    """One slot: an agent message's content entry, or a whole event (a thinking, a tool
    call or result, an echoed user event)."""

    __slots__ = ("data", "text", "event_id", "input")

    def __init__(self, index: int, kind: str, data: dict, text: Fragments | None = None,
                 event_id: str | None = None) -> None:
        super().__init__(index, kind)
        self.data = data
        self.text = text
        self.event_id = event_id
        self.input: Any = data.get("input") if kind in ma.CALLS else None

    @property
    def takes_input(self) -> bool:
        return self.kind in ma.CALLS

    def identity(self) -> tuple[Any, Any]:
        name = self.data.get("name")
        return (name if isinstance(name, str) else None,
                self.event_id if self.takes_input else None)

    def answers(self) -> str | None:
        field = ma.ANSWERS_FIELD.get(self.kind)
        found = self.data.get(field) if field else None
        return found if isinstance(found, str) else None

    def from_server(self) -> bool:
        return self.kind in ma.AGENT_RESULTS

    def shown(self) -> str:
        return self.text.text if self.text is not None else shown_of(self.kind, self.data)

    def current_input(self) -> Any:
        return self.input if self.input is not None else {}


class Preview:
    """A preview opened by ``event_start``: its event's type and id, its entries' slot
    addresses by content index, and where it stands in the session's events."""

    __slots__ = ("kind", "id", "slots", "position", "open")

    def __init__(self, kind: str, event_id: str, position: int) -> None:
        self.kind, self.id, self.position = kind, event_id, position
        self.slots: list[int] = []
        self.open = True



def event_id_of(payload: dict) -> str | None:
    """An event's own id, where it has one."""
    found = payload.get("id")
    return found if isinstance(found, str) else None


def shown_of(kind: str, data: dict) -> str:
    """What the slot view shows of a whole event: its text content, a confirmation's
    verdict."""
    if kind == ma.USER_TOOL_CONFIRMATION:
        said = data.get("deny_message")
        return f"{data.get('result')} {data.get('tool_use_id')}" + (f": {said}" if said else "")
    content = data.get("content")
    if isinstance(content, list):
        return "".join(c.get("text", "") for c in content
                       if isinstance(c, dict) and isinstance(c.get("text"), str))
    return ""

