"""Lesson 2 (lesson 4b's second new wire), Gemini's Interactions stream: steps in slots
addressed by ``index``.

`core` is the lesson's rule; the modules beside it hold what a step holds and the
features around the rule (see `core`).
"""

from .core import GeminiInteractionsAccumulator

__all__ = ["GeminiInteractionsAccumulator"]
