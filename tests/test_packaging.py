"""The package's metadata: an SPDX licence with its file, and a setuptools that reads it.

The old ``license = { text = ... }`` table makes setuptools print a deprecation warning
on every fresh install (``make lab``); the SPDX string with ``license-files`` (PEP 639)
is read quietly from setuptools 77.0.3 on.
"""

from __future__ import annotations

import re
import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
PYPROJECT = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))


def _setuptools_minimum() -> tuple[int, ...]:
    for requirement in PYPROJECT["build-system"]["requires"]:
        found = re.fullmatch(r"setuptools\s*>=\s*([\d.]+)", requirement.strip())
        if found:
            return tuple(int(part) for part in found.group(1).split("."))
    raise AssertionError("build-system.requires names no setuptools minimum")


def test_the_licence_is_an_spdx_expression_with_its_file():
    project = PYPROJECT["project"]
    assert project["license"] == "MIT"
    assert project["license-files"] == ["LICENSE"]
    text = (ROOT / "LICENSE").read_text(encoding="utf-8")
    assert text.startswith("MIT License")
    assert "Copyright (c) 2026 The Reading the Wire authors" in text
    assert "THE SOFTWARE IS PROVIDED \"AS IS\"" in text


def test_the_build_asks_for_a_setuptools_that_reads_the_spdx_form():
    assert _setuptools_minimum() >= (77, 0, 3)
    assert not any(c.startswith("License ::") for c in PYPROJECT["project"].get(
        "classifiers", []))
