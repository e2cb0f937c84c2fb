"""Errors the server answers with, each in its provider's own error shape."""

from __future__ import annotations

from typing import Any

_ANTHROPIC_TYPES = {400: "invalid_request_error", 404: "not_found_error",
                    405: "invalid_request_error", 413: "request_too_large", 500: "api_error"}
_GOOGLE_STATUSES = {400: "INVALID_ARGUMENT", 404: "NOT_FOUND", 413: "INVALID_ARGUMENT"}


def error_body(wire: str | None, status: int, message: str) -> dict[str, Any]:
    """The JSON error document `wire`'s API sends for `status` (OpenAI's shape otherwise)."""
    if wire == "anthropic-messages":
        return {"type": "error",
                "error": {"type": _ANTHROPIC_TYPES.get(status, "api_error"), "message": message}}
    if wire == "google-gemini":
        return {"error": {"code": status, "message": message,
                          "status": _GOOGLE_STATUSES.get(status, "INTERNAL")}}
    code = {404: "not_found", 400: "invalid_request", 413: "request_too_large"}.get(status)
    kind = "server_error" if status >= 500 else "invalid_request_error"
    return {"error": {"message": message, "type": kind, "param": None, "code": code}}


def wire_of_path(path: str) -> str | None:
    """The wire a path was meant for (its error shape), from its last parts."""
    if path.rstrip("/").endswith("/messages"):
        return "anthropic-messages"
    if "/responses" in path:
        return "openai-responses"
    if "/chat/completions" in path:
        return "openai-chat"
    return None


def not_found(path: str, paths: dict[str, str]) -> tuple[str | None, str]:
    """The wire a request for an unknown `path` was meant for, and a message saying how to
    set the SDK's base URL (``/v1`` missing or doubled is the common mistake)."""
    wire = wire_of_path(path)
    served = ", ".join(f"POST {p}" for p in paths.values())
    advice = ("Set the SDK's base URL to this server's address: for Anthropic without /v1 "
              "(the SDK adds /v1/messages itself), for OpenAI with /v1 "
              "(base_url='http://HOST:PORT/v1').")
    if path.startswith("/v1/v1/"):
        why = "the base URL ends in /v1 and the SDK added /v1 again"
    elif wire is not None and not path.startswith("/v1/"):
        why = "the base URL lacks /v1"
    else:
        why = "no such path"
    return wire, f"{path}: {why}. {advice} This server answers {served}."
