"""Lesson 7, the Managed Agents session stream: each event once (by its id), a preview
replaced by its canonical event.

`core` is the lesson's rule; the modules beside it hold what a slot holds and the
bookkeeping around the rule (see `core`).
"""

from .core import PREVIEW_ONLY, ManagedAgentsAccumulator

__all__ = ["PREVIEW_ONLY", "ManagedAgentsAccumulator"]
