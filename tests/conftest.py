"""Fixtures shared by several test modules."""

from __future__ import annotations

import pytest
from examples import examples
from hypothesis import settings

from lesson_lib import exercises

# A property that names no number of examples tries hypothesis's default (100), scaled the
# same way as those that do (`tests/examples.py`).
settings.register_profile("course", max_examples=examples(100))
settings.load_profile("course")


@pytest.fixture
def fresh_progress():
    """The checkers' progress record, empty before the test and after it."""
    exercises.reset()
    yield
    exercises.reset()


def pytest_collection_modifyitems(items):
    """Skip, with its reason, each reference capture a pending issue is about to read
    (`tests/pending.py`)."""
    from pending import reason

    from lesson_lib.capture.captures import Capture

    for item in items:
        params = getattr(getattr(item, "callspec", None), "params", {})
        for value in params.values():
            if isinstance(value, Capture):
                why = reason(value, item.originalname)
                if why is not None and _is_reference(value):
                    item.add_marker(pytest.mark.skip(reason=why))


def _is_reference(capture) -> bool:
    from lesson_lib.capture.captures import reference_dir

    try:
        return capture.path is not None and capture.path.resolve().is_relative_to(
            reference_dir().resolve())
    except OSError:
        return False
