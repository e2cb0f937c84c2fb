"""Spoken output on the Chat wire (``delta.audio``): one slot per choice, ``(choice, "audio")``.

Its ``transcript`` pieces are the slot's text (channel ``other``), its base64 ``data``
fragments are concatenated, and the last update carries only ``expires_at``. The
message's ``audio`` is the SDK's concatenation, except where the SDK garbles an
identity: a repeated ``id`` is kept once and a repeated ``expires_at`` replaces the
earlier one (the SDK would concatenate the one and add up the other).
"""

from __future__ import annotations

import copy
from typing import TYPE_CHECKING, Any

from ...wires.wire_events import WireEvent
from ..base import Fragments
from ..changes import SlotOpened, TextAppended

if TYPE_CHECKING:
    from .choice import Choice

_new = tuple.__new__


class Audio:
    """A choice's spoken output: its id, its transcript and data fragments, its expiry."""

    __slots__ = ("fields", "texts")

    def __init__(self) -> None:
        self.fields: dict[str, Any] = {}         # id (first kept), expires_at (last), others
        self.texts: dict[str, Fragments] = {}    # transcript, data: concatenated

    def add(self, delta: dict) -> str | None:
        """Take one ``delta.audio``; return its transcript piece (None when it has none)."""
        for key, value in delta.items():
            if value is None:
                continue
            if isinstance(value, str) and key != "id":
                self.texts.setdefault(key, Fragments()).append(value)
            elif key != "id" or "id" not in self.fields:
                self.fields[key] = copy.deepcopy(value)
        piece = delta.get("transcript")
        return piece if isinstance(piece, str) else None

    def as_dict(self) -> dict:
        out = dict(copy.deepcopy(self.fields))
        out.update({key: frags.text for key, frags in self.texts.items()})
        return out



class SpokenOutput:
    """The Chat accumulator's handling of ``delta.audio`` (mixed into `ChatAccumulator`)."""

    def _audio(self, choice: Choice, delta: dict, event: WireEvent) -> None:
        """One ``delta.audio`` to the choice's audio slot (opened by the first): its
        transcript piece is the slot's text."""
        if choice.audio is None:
            choice.audio = Audio()
            self.changes.append(SlotOpened(event.index, (choice.index, "audio"), "audio",
                                           f"[{choice.index}] audio", choice=choice.index))
        piece = choice.audio.add(delta)
        if piece:
            self.changes.append(_new(TextAppended, (event.index, (choice.index, "audio"),
                                                    "other", piece, "transcript")))
