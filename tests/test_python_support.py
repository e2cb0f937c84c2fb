"""The Pythons the course supports: one line that notebook 00 prints, the same on each."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from lesson_lib.course.environment import SUPPORTED_PYTHONS, python_check, python_supported

ROOT = Path(__file__).resolve().parent.parent


@pytest.mark.parametrize("version", [(3, 11, 7), (3, 12, 1), (3, 13, 0), (3, 13, 9, "final", 0)])
def test_every_supported_python_prints_the_same_line(version):
    assert python_supported(version)
    assert python_check(version) == "Python 3.11 to 3.13: supported"


@pytest.mark.parametrize("version", [(3, 10, 13), (3, 14, 0), (2, 7, 18)])
def test_an_unsupported_python_is_named(version):
    assert not python_supported(version)
    assert python_check(version) == (f"Python {version[0]}.{version[1]} is not supported: "
                                     "the course runs on Python 3.11 to 3.13")


def test_this_python_is_supported():
    assert python_supported()


def test_the_readme_names_the_supported_versions():
    readme = (ROOT / "README.md").read_text()
    names = ", ".join(f"{major}.{minor}" for major, minor in SUPPORTED_PYTHONS[:-1])
    last = "{}.{}".format(*SUPPORTED_PYTHONS[-1])
    assert f"Python {names} or {last}" in readme


def test_notebook_00_prints_the_check_not_the_full_version():
    text = (ROOT / "notebooks" / "00-start-here.ipynb").read_text()
    assert "print(python_check())" in text
    assert not re.search(r"sys\.version(?!_info)", text)
