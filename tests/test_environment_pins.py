"""The test environment's pins and environment.yml's pins stay in step."""

from __future__ import annotations

import re
import tomllib
from pathlib import Path

from lesson_lib.course.environment import PINNED

ROOT = Path(__file__).resolve().parent.parent


LEARNER_EXTRAS = ("lab", "hub")


def pyproject_pins(extras: tuple[str, ...] | None = None) -> dict[str, str]:
    """The exact pins of the dependencies and of `extras` (every extra when None)."""
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    specs = list(project["dependencies"])
    for name, extra in project["optional-dependencies"].items():
        if extras is None or name in extras:
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


def test_environment_yml_is_the_learners_pins_with_the_same_versions():
    assert environment_pins() == pyproject_pins(LEARNER_EXTRAS)


def test_environment_yml_holds_no_test_tool():
    test_only = set(pyproject_pins()) - set(pyproject_pins(LEARNER_EXTRAS))
    assert {"pytest", "playwright", "nbval", "hypothesis", "ruff"} <= test_only
    assert not test_only & set(environment_pins())


def test_a_learner_environment_has_the_hub_proxy_and_the_puller():
    pins = pyproject_pins(LEARNER_EXTRAS)
    assert "jupyter-server-proxy" in pins and "nbgitpuller" in pins


def test_the_notebook_drift_warning_uses_the_same_pins():
    pins = pyproject_pins()
    for name, version in PINNED.items():
        assert pins[name] == version, name


# The SDKs the course replays through: what each raises and returns is what the lessons
# quote, so a learner whose versions differ is warned.
SDKS = ("anthropic", "openai", "google-genai", "boto3", "botocore")


def test_the_drift_warning_covers_every_pinned_sdk():
    pins = pyproject_pins()
    assert {name: pins[name] for name in SDKS} == {name: PINNED.get(name) for name in SDKS}


def test_environment_yml_uses_python_311():
    assert re.search(r"^\s*- python=3\.11$", (ROOT / "environment.yml").read_text(), re.M)
