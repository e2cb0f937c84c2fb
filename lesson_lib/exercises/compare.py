"""Explain the first difference between an expected and an actual value."""

from __future__ import annotations

from typing import Any


def first_difference(expected: Any, got: Any, path: str = "") -> str | None:
    """The first place where `got` differs from `expected`, in words; None if equal.

    Dicts are compared key by key, lists item by item, floats to 1e-9.
    """
    where = path or "the result"
    if isinstance(expected, dict) and isinstance(got, dict):
        for key in expected:
            if key not in got:
                return f"{where} is missing key {key!r} (expected {_short(expected[key])})"
            inner = first_difference(expected[key], got[key], f"{path}[{key!r}]")
            if inner:
                return inner
        extra = [k for k in got if k not in expected]
        if extra:
            return f"{where} has an unexpected key {extra[0]!r}"
        return None
    if isinstance(expected, list | tuple) and isinstance(got, list | tuple):
        for i, (e, g) in enumerate(zip(expected, got, strict=False)):
            inner = first_difference(e, g, f"{path}[{i}]")
            if inner:
                return inner
        if len(expected) != len(got):
            return f"{where} has {len(got)} items, expected {len(expected)}"
        return None
    if isinstance(expected, float) and isinstance(got, int | float) and not isinstance(got, bool):
        return None if abs(expected - got) <= 1e-9 * max(1.0, abs(expected)) else (
            f"{where}: expected {expected!r}, got {got!r}")
    if type(expected) is not type(got) and not (expected is None or got is None):
        if not (isinstance(expected, int | float) and isinstance(got, int | float)):
            return (f"{where}: expected a {type(expected).__name__} {_short(expected)}, "
                    f"got a {type(got).__name__} {_short(got)}")
    if expected != got:
        return f"{where}: expected {_short(expected)}, got {_short(got)}"
    return None


def _short(value: Any, limit: int = 80) -> str:
    text = repr(value)
    return text if len(text) <= limit else text[: limit - 1] + "…"
