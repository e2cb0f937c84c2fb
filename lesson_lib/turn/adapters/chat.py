"""The Chat Completions adapter: choices, and a call ready only at its finish reason.

A choice's content, refusal and reasoning are text and reasoning blocks; its tool calls,
and the legacy ``function_call`` (the functions API, ``finish_reason: "function_call"``),
are client tool calls; its spoken output (``delta.audio``) is an ``other`` block whose
text is the transcript and whose end data is the audio object (id, data, expires_at).

Chat has no per-call end event: a call's arguments are over only when its
choice's ``finish_reason`` arrives (the accumulator closes the slot then,
``how="finish_reason"``). So a Chat call can never be ready earlier, and the
agent loop cannot start its tool earlier: that is the wire, not the loop.
"""

from __future__ import annotations

from ... import wires
from ...accumulate import changes as ch
from ..events import Finish
from .base import WireAdapter


class ChatAdapter(WireAdapter):
    """Turn events from the Chat accumulator's changes."""

    wire = wires.chat.WIRE

    def classify(self, opened: ch.SlotOpened):
        """By the slot's address: a choice's content, refusal, reasoning, or a call."""
        address = opened.address
        part = address[1] if isinstance(address, tuple) and len(address) > 1 else None
        if part == "refusal":
            return "text", False, "refusal"
        if part == "reasoning":
            return "reasoning", False, "reasoning"
        if part == "content" and not opened.takes_input:
            return "text", False, "text"
        if part == "audio":
            # Spoken output: its transcript is the block's text, the sound (base64) and its
            # id and expiry the block's end data. Not the answer's text (``content`` stays
            # null), so a block of its own: ``other``, on the ``other`` channel.
            return "other", False, "other"
        return super().classify(opened)

    def finish(self) -> Finish:
        """Choice 0's ``finish_reason``."""
        # The step's finish is choice 0's (a request for several choices is still one step).
        raw = self.choice_finish.get(0, self.response.get("finish_reason"))
        return Finish(wires.chat.finish_reason(raw) or "other", raw)
