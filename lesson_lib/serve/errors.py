"""Errors the server answers with, each in its provider's own error shape."""

from __future__ import annotations

from typing import Any

_ANTHROPIC_TYPES = {400: "invalid_request_error", 404: "not_found_error",
                    405: "invalid_request_error", 500: "api_error"}
_GOOGLE_STATUSES = {400: "INVALID_ARGUMENT", 404: "NOT_FOUND", 413: "INVALID_ARGUMENT"}


def error_body(wire: str | None, status: int, message: str) -> dict[str, Any]:
    """The JSON error document `wire`'s API sends for `status` (OpenAI's shape otherwise)."""
    if wire == "anthropic-messages":
        return {"type": "error",
                "error": {"type": _ANTHROPIC_TYPES.get(status, "api_error"), "message": message}}
    if wire == "google-gemini":
        return {"error": {"code": status, "message": message,
                          "status": _GOOGLE_STATUSES.get(status, "INTERNAL")}}
    code = {404: "capture_not_found", 400: "invalid_request"}.get(status)
    kind = "server_error" if status >= 500 else "invalid_request_error"
    return {"error": {"message": message, "type": kind, "param": None, "code": code}}
