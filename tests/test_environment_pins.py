"""The test environment's pins and environment.yml's pins stay in step."""

from __future__ import annotations

import re
import tomllib
from pathlib import Path

from lesson_lib.course.environment import PINNED

ROOT = Path(__file__).resolve().parent.parent


def pyproject_pins() -> dict[str, str]:
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    specs = list(project["dependencies"])
    for extra in project["optional-dependencies"].values():
        specs += extra
    pins = {}
    for spec in specs:
        name, sep, version = spec.partition("==")
        assert sep, f"{spec!r} in pyproject.toml is not pinned exactly"
        pins[name.lower()] = version
    return pins


def environment_pins() -> dict[str, str]:
    text = (ROOT / "environment.yml").read_text()
    return {m[1].lower(): m[2] for m in re.finditer(r"^\s*- ([A-Za-z0-9_.-]+)==(\S+)$", text, re.M)}


def test_every_pin_in_pyproject_is_in_environment_yml_with_the_same_version():
    assert pyproject_pins() == environment_pins()


def test_the_notebook_drift_warning_uses_the_same_pins():
    pins = pyproject_pins()
    for name, version in PINNED.items():
        assert pins[name] == version, name


def test_environment_yml_uses_python_311():
    assert re.search(r"^\s*- python=3\.11$", (ROOT / "environment.yml").read_text(), re.M)
