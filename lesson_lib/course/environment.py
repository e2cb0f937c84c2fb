"""The course environment: the pinned versions, and `setup()`, the one call a notebook makes first.

`setup()` pins display options, warns when installed versions drift from
the pins, and seeds the learner's own folder ``my-work/`` (exposed as
``lesson_lib.setup``).
"""

from __future__ import annotations

import sys
import warnings
from importlib import metadata

# The versions the committed notebook outputs were produced with: every SDK the course
# replays through (tests/test_environment_pins.py checks none is left out), and the
# libraries that shape what a notebook prints.
PINNED = {
    "anthropic": "2.17.0",
    "openai": "3.63.0",
    "google-genai": "3.6.1",
    "boto3": "1.44.18",
    "botocore": "1.44.18",
    "jiter": "0.19.0",
    "pandas": "3.1.1",
    "ipywidgets": "8.1.9",
    "matplotlib": "3.11.2",
}


# The Pythons the course is tested on (`.ci/run` runs the suite on the oldest and the newest).
SUPPORTED_PYTHONS = ((3, 11), (3, 12), (3, 13))


def python_supported(version: tuple[int, ...] = tuple(sys.version_info)) -> bool:
    """Whether `version` (``sys.version_info`` by default) is one the course supports."""
    return tuple(version[:2]) in SUPPORTED_PYTHONS


def python_check(version: tuple[int, ...] = tuple(sys.version_info)) -> str:
    """One line saying whether this Python is one the course supports.

    The line is the same on every supported Python, so a notebook that prints
    it compares equal wherever the course runs; only an unsupported one is named.
    """
    first, last = SUPPORTED_PYTHONS[0], SUPPORTED_PYTHONS[-1]
    span = f"{first[0]}.{first[1]} to {last[0]}.{last[1]}"
    if python_supported(version):
        return f"Python {span}: supported"
    return f"Python {version[0]}.{version[1]} is not supported: the course runs on Python {span}"


def version_drift() -> dict[str, tuple[str, str | None]]:
    """Packages whose installed version differs from the pinned one."""
    drift = {}
    for name, pinned in PINNED.items():
        try:
            found: str | None = metadata.version(name)
        except metadata.PackageNotFoundError:
            found = None
        if found != pinned:
            drift[name] = (pinned, found)
    return drift


def setup(*, quiet: bool = False) -> dict[str, str]:
    """Pin pandas/matplotlib display options, warn when package versions drift, and
    seed the learner's own folder ``my-work/`` with any lesson it lacks (never
    overwriting one: see `lesson_lib.course.learner`).

    Returns the pinned versions so a notebook can print them.
    """
    import matplotlib
    import pandas as pd

    pd.set_option("display.max_columns", 30)
    pd.set_option("display.width", 160)
    pd.set_option("display.max_colwidth", 60)
    pd.set_option("display.max_rows", 60)
    matplotlib.rcParams.update({"figure.dpi": 80, "svg.hashsalt": "reading-the-wire",
                                "figure.figsize": (9, 3.2)})
    warnings.filterwarnings("ignore", category=DeprecationWarning, module="anthropic")
    from . import learner

    try:
        learner.seed()
    except OSError as exc:  # a read-only checkout still runs the lessons
        warnings.warn(f"could not seed your folder {learner.FOLDER}/: {exc}", stacklevel=2)
    drift = version_drift()
    if drift and not quiet:
        lines = ", ".join(f"{k} {v[1]} (pinned {v[0]})" for k, v in drift.items())
        warnings.warn(f"package versions differ from the course's pins: {lines}; "
                      "outputs may not match the committed notebooks", stacklevel=2)
    return dict(PINNED)


if __name__ == "__main__":  # `make` checks the venv's Python with this before installing
    print(python_check())
    sys.exit(0 if python_supported() else 1)
