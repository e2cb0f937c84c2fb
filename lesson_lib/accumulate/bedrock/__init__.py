"""Lesson 2 (lesson 4b's new wires), AWS Bedrock: ConverseStream's own blocks in slots by
``contentBlockIndex``, and InvokeModelWithResponseStream's Anthropic events.

`converse` is the ConverseStream lesson's rule; `block` and `deltas` hold what a
block holds and what each delta does to it; `invoke` is the Anthropic accumulator
reading Bedrock's exception frames.
"""

from .converse import ConverseAccumulator
from .invoke import InvokeAccumulator

__all__ = ["ConverseAccumulator", "InvokeAccumulator"]
