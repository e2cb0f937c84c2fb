"""A ``fallback`` block (beta): the model it hands over to serves what follows.

The message's ``model`` becomes the block's ``to.model``, as the non-streaming
message and the SDK's beta helper say (the stable helper keeps the requested model).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from ...wires.wire_events import WireEvent
from ..changes import ResponseChanged

if TYPE_CHECKING:
    from .block import Block


class ModelFallback:
    """The Anthropic accumulator's ``fallback`` block (mixed into `AnthropicAccumulator`)."""

    def _fallback(self, block: Block, event: WireEvent) -> None:
        """A ``fallback`` block: the model it hands over to serves what follows, so the
        message's ``model`` becomes its ``to.model`` (as the non-streaming message and
        the SDK's beta helper say; the stable helper keeps the requested model)."""
        to = block.data.get("to")
        model = to.get("model") if isinstance(to, dict) else None
        if isinstance(model, str) and model:
            self.message["model"] = model
            self.changes.append(ResponseChanged(event.index, {"model": model}))
