"""Fixtures shared by several test modules."""

from __future__ import annotations

import pytest

from lesson_lib import exercises


@pytest.fixture
def fresh_progress():
    """The checkers' progress record, empty before the test and after it."""
    exercises.reset()
    yield
    exercises.reset()
