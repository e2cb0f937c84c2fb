"""No key on disk: what `record` writes is cleared of the key it sent, then checked.

A server may echo the key back: in a request id, a rate-limit header, or the
body of an error ("Incorrect API key provided: sk-...abcd1234"). `record`
knows the key it sent, so before anything is written every occurrence of the
key, of its ``Bearer`` form and of its last 8 characters (how the vendors
quote a key in an error) is overwritten with asterisks of the same length, so
the body's byte offsets and chunk ends stay true.

Then a last check: if a string shaped like a vendor's key is still there (a
key the server made up, or one the request carried), nothing is written and
`KeyOnDisk` says where.
"""

from __future__ import annotations

import re
from typing import Any

TAIL = 8            # how many of a key's last characters the vendors quote

# The vendors' key prefixes, each followed by enough key characters to be a key.
KEY_SHAPE = re.compile(
    r"sk-ant-[A-Za-z0-9_\-]{8,}"                    # Anthropic
    r"|sk-(?:proj-|svcacct-|admin-|None-)?[A-Za-z0-9_\-]{20,}"   # OpenAI
    r"|AIza[0-9A-Za-z_\-]{30,}"                     # Google
    r"|AKIA[0-9A-Z]{16}"                            # AWS access key id
    r"|xai-[A-Za-z0-9]{20,}")                       # xAI


class KeyOnDisk(ValueError):
    """A key-shaped string would reach disk: `where` names the header or byte."""

    def __init__(self, where: str) -> None:
        super().__init__(f"a key-shaped string would reach disk in {where}; nothing was "
                         "written")
        self.where = where


def _forms(key: str) -> list[str]:
    """What of `key` may be echoed, longest first (the key's own text covers its Bearer
    form; the tail is replaced where it still stands alone)."""
    forms = [f"Bearer {key}", key]
    if len(key) > TAIL:
        forms.append(key[-TAIL:])
    return [f for f in forms if f]


def redact_text(text: str, key: str) -> str:
    """`text` with every echo of `key` overwritten by asterisks of the same length."""
    for form in _forms(key):
        if form in text:
            text = text.replace(form, "*" * len(form))
    return text


def redact_bytes(body: bytes, key: str) -> bytes:
    """`body` with every echo of `key` (as UTF-8) overwritten, its length unchanged."""
    for form in _forms(key):
        raw = form.encode("utf-8")
        if raw in body:
            body = body.replace(raw, b"*" * len(raw))
    return body


def redact_headers(headers: dict[str, str], key: str) -> dict[str, str]:
    """The header values with every echo of `key` overwritten."""
    return {name: redact_text(value, key) for name, value in headers.items()}


def check_no_key(body: bytes, headers: dict[str, str], request: Any) -> None:
    """Raise `KeyOnDisk` if a key-shaped string is left in the body, a header or the
    request."""
    for name, value in headers.items():
        if KEY_SHAPE.search(value):
            raise KeyOnDisk(f"the response header {name!r}")
    found = KEY_SHAPE.search(body.decode("utf-8", "replace"))
    if found is not None:
        at = len(body.decode("utf-8", "replace")[:found.start()].encode("utf-8"))
        raise KeyOnDisk(f"the body (near byte {at})")
    if KEY_SHAPE.search(repr(request)):
        raise KeyOnDisk("the request")
