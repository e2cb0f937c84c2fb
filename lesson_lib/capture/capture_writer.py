"""Writing a capture: the body verbatim, its sidecar, and nothing secret.

Used by `lesson-lib record`. The header allowlist is the one rule for what
response headers may reach a sidecar; the corpus tests hold every committed
capture to it too. Request fields and headers that carry keys, cookies or
organisation ids never get past `scrub_request` / `allowed_headers`.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

# Response headers a sidecar may keep: what a lesson reads (content type,
# request ids, rate limits, retry hints, timing). Everything else is dropped,
# so a new header the provider adds never reaches disk by accident.
HEADER_ALLOWLIST = frozenset({
    "content-type", "cache-control", "date", "server", "request-id", "x-request-id",
    "openai-processing-ms", "openai-version", "x-should-retry", "retry-after",
    "retry-after-ms", "x-robots-tag", "x-ds-trace-id",
    # Bedrock: the exception a refused request names (boto3 reads it), and its request id.
    "x-amzn-errortype", "x-amzn-requestid",
})
HEADER_PREFIXES = ("x-ratelimit-", "anthropic-ratelimit-")

# Never kept, whatever a future allowlist says: keys, cookies, organisations.
SECRET_HEADERS = frozenset({
    "authorization", "x-api-key", "api-key", "cookie", "set-cookie", "openai-organization",
    "openai-project", "anthropic-organization-id", "proxy-authorization",
})
SECRET_REQUEST_KEYS = frozenset({
    "api_key", "api-key", "authorization", "organization", "project", "extra_headers",
    "default_headers", "headers", "user",
})


def header_allowed(name: str) -> bool:
    """Whether a response header may be written to a sidecar."""
    name = name.lower()
    if name in SECRET_HEADERS:
        return False
    return name in HEADER_ALLOWLIST or name.startswith(HEADER_PREFIXES)


def allowed_headers(headers: Any) -> dict[str, str]:
    """The response headers that may reach disk, names lower-cased, in their order."""
    items = headers.items() if hasattr(headers, "items") else headers
    return {str(k).lower(): str(v) for k, v in items if header_allowed(str(k))}


def scrub_request(request: dict[str, Any]) -> dict[str, Any]:
    """The request as sent, without any field that can carry a secret (recursively)."""
    def clean(value: Any) -> Any:
        if isinstance(value, dict):
            return {k: clean(v) for k, v in value.items()
                    if str(k).lower() not in SECRET_REQUEST_KEYS}
        if isinstance(value, list):
            return [clean(v) for v in value]
        return value
    return clean(request)


def chunk_record(chunks: list[tuple[int, float]]) -> dict[str, list]:
    """The sidecar's ``chunks``: end offsets and arrival ms (one decimal) of each read."""
    return {"ends": [end for end, _ in chunks], "t_ms": [round(t, 1) for _, t in chunks]}


def write_capture(folder: Path, name: str, body: bytes, sidecar: dict[str, Any],
                  suffix: str = ".sse") -> Path:
    """Write ``NAME`` + `suffix` (bytes verbatim: the wire's body file, ``.eventstream`` on
    Bedrock) and ``NAME.json`` (the sidecar); the body's path."""
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / f"{name}{suffix}"
    path.write_bytes(body)
    (folder / f"{name}.json").write_text(
        json.dumps(sidecar, indent=1, ensure_ascii=False) + "\n", encoding="utf-8")
    return path
