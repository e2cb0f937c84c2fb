"""What the lesson checker tests share."""

from __future__ import annotations

import pytest

# Every test of a checker starts and ends with empty progress (the `fresh_progress` fixture).
FRESH_PROGRESS = pytest.mark.usefixtures("fresh_progress")


def starter(*args):
    """A learner's starter, not attempted yet."""
    raise NotImplementedError
