"""A resumed response's ``message_start``, which may already hold whole blocks.

Each block the start carries in ``message.content`` is fed as the start, deltas
and stop it would have streamed as (`wires.anthropic.as_streamed`), so it means
just what the same block streamed means: a call's input is checked and ready,
a signature said.
"""

from __future__ import annotations

from ...wires import anthropic
from ...wires.wire_events import WireEvent


class StatedWhole:
    """The Anthropic accumulator's blocks stated whole (mixed into `AnthropicAccumulator`)."""

    def _stated_whole(self, index: int, block: dict, event: WireEvent) -> None:
        """A block the start states whole: its start, the deltas that build the rest and its
        stop (`wires.anthropic.as_streamed`), fed as the stream would have sent them."""
        start, deltas = anthropic.as_streamed(block)
        self._block_start({"index": index, "content_block": start}, event)
        for delta in deltas:
            self._block_delta({"index": index, "delta": delta}, event)
        self._block_stop({"index": index}, event)
