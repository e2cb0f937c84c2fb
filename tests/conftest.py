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


def pytest_collection_modifyitems(items):
    """Skip, with its reason, each reference capture a pending issue is about to read
    (`tests/pending.py`); keep together on one worker what must run together when the suite
    runs in parallel (`xdist_groups`)."""
    from pending import reason

    xdist_groups(items)

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


def xdist_groups(items) -> None:
    """Under ``pytest -n N --dist loadgroup`` (``make test``), the tests that must share one
    process stay on one worker: a notebook's cells (nbval runs them in order in one kernel)
    and the tests of a module with a module- or session-scoped fixture (a server, a lab, a
    hub: started once, not once per worker). Every other test goes wherever a worker is
    free."""
    for item in items:
        path = str(getattr(item, "path", "") or item.nodeid.split("::")[0])
        if path.endswith(".ipynb") or _has_shared_fixture(item):
            item.add_marker(pytest.mark.xdist_group(name=path))


def _has_shared_fixture(item) -> bool:
    info = getattr(item, "_fixtureinfo", None)
    if info is None:
        return False
    for name in info.names_closure:
        for definition in info.name2fixturedefs.get(name, ()):
            # A fixture of the project's own (pytest's and plugins' have no baseid).
            if definition.baseid and definition.scope in ("module", "session", "package",
                                                          "class"):
                return True
    return False
