"""Lesson 4b's new wire, Google Gemini: whole records in, parts in slots the accumulator
mints.

`core` is the lesson's rule (a part continues the part before it or opens the next
slot); the modules beside it hold what a part holds and the function calls (see
`core`).
"""

from .core import GeminiAccumulator

__all__ = ["GeminiAccumulator"]
