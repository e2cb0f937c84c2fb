"""Lesson 7, the OpenAI Agents session stream: each event once (by its id), the server's
statement of a text replacing its deltas.

`core` is the lesson's rule; the modules beside it hold what a slot holds and the
bookkeeping around the rule (see `core`).
"""

from .core import OpenAISessionsAccumulator

__all__ = ["OpenAISessionsAccumulator"]
