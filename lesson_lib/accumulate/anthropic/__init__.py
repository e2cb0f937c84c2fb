"""Lesson 2, the Anthropic Messages wire: blocks in slots addressed by ``index``.

`core` is the lesson's rule; the modules beside it hold what a block holds and
the features around the rule (see `core`).
"""

from .core import AnthropicAccumulator

__all__ = ["AnthropicAccumulator"]
