"""Errors the server answers with, each in its provider's own error shape (the wire's
registry entry says: its JSON body and headers)."""

from __future__ import annotations

import re
from typing import Any

from ...wires import ENTRIES
from ...wires.common import openai_error_body


def error_body(wire: str | None, status: int, message: str) -> dict[str, Any]:
    """The JSON error document `wire`'s API sends for `status` (OpenAI's shape otherwise)."""
    entry = ENTRIES.get(wire or "")
    return (entry.error_body if entry is not None else openai_error_body)(status, message)


def error_headers(wire: str | None, status: int) -> dict[str, str]:
    """The headers `wire`'s API names an error with (Bedrock's ``x-amzn-ErrorType``)."""
    entry = ENTRIES.get(wire or "")
    return entry.error_headers(status) if entry is not None else {}


def _tail(route: str) -> str:
    """What tells a route's path apart: what follows its last parameter, else all but its
    first segment (the API version)."""
    parts = re.split(r"\{[^}]*\}", route)
    return parts[-1] if len(parts) > 1 else "/" + route.lstrip("/").partition("/")[2]


def wire_of_path(path: str) -> str | None:
    """The wire a path was meant for (its error shape), from its last parts."""
    return next((wire for wire, entry in ENTRIES.items() if _tail(entry.route) in path), None)


def not_found(path: str, paths: dict[str, str]) -> tuple[str | None, str]:
    """The wire a request for an unknown `path` was meant for, and a message saying how to
    set the SDK's base URL (``/v1`` missing or doubled is the common mistake)."""
    wire = wire_of_path(path)
    served = ", ".join(f"POST {p}" for p in paths.values())
    advice = ("Set the SDK's base URL to this server's address: for Anthropic without /v1 "
              "(the SDK adds /v1/messages itself), for OpenAI with /v1 "
              "(base_url='http://HOST:PORT/v1'), for google-genai and boto3 the bare address.")
    versioned = wire is not None and paths.get(wire, "").startswith("/v1/")
    if path.startswith("/v1/v1/"):
        why = "the base URL ends in /v1 and the SDK added /v1 again"
    elif versioned and not path.startswith("/v1/"):
        why = "the base URL lacks /v1"
    else:
        why = "no such path"
    return wire, f"{path}: {why}. {advice} This server answers {served}."
