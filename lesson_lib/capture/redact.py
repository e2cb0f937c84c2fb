"""No key on disk: what `record` writes is cleared of the key it sent, then checked.

A server may echo the key back: in a request id, a rate-limit header, or the
body of an error ("Incorrect API key provided: sk-...abcd1234"). `record`
knows the key it sent, so before anything is written every occurrence of the
key, of its ``Bearer`` form and of its last 8 characters (how the vendors
quote a key in an error) is overwritten with asterisks of the same length, so
the body's byte offsets and chunk ends stay true.

Then a last check: if a string shaped like a vendor's key is still there (a
key the server made up, or one the request carried), or any 12-character piece
of the key sent, raw or encoded (`lesson_lib.capture.key_pieces`), in the body,
a header or the sidecar, nothing is written and `KeyOnDisk` says where. The body
is read as it stands, percent-decoded, as its SSE ``data`` lines joined, and as
its JSON strings decoded and joined (all of them, and those of each field name:
a key split across two text deltas is whole again in the ``text`` fields).
"""

from __future__ import annotations

import json
import re
from typing import Any
from urllib.parse import unquote

from .key_pieces import KeyPieces, key_pieces

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


def check_no_key(body: bytes, headers: dict[str, str], sidecar: Any,
                 key: str | None = None) -> None:
    """Raise `KeyOnDisk` if a key-shaped string is left in the body, a header or the
    sidecar (or just the request), or, given the `key` sent, a piece of it in any
    encoding (`key_pieces`, built once here)."""
    pieces = key_pieces(key) if key else None
    for name, value in headers.items():
        if KEY_SHAPE.search(value) or (pieces and _echoed(pieces, value)):
            raise KeyOnDisk(f"the response header {name!r}")
    text = body.decode("utf-8", "replace")
    found = KEY_SHAPE.search(text)
    if found is not None:
        raise KeyOnDisk(f"the body (near byte {len(text[:found.start()].encode('utf-8'))})")
    if pieces is not None and (echo := _echoed(pieces, text)):
        how, at = echo
        raise KeyOnDisk(f"the body (near byte {len(text[:at].encode('utf-8'))})" if not how
                        else f"the body {how}")
    if KEY_SHAPE.search(repr(sidecar)):
        raise KeyOnDisk("the request")
    if pieces and _echoed(pieces, json.dumps(sidecar, ensure_ascii=False, default=str)):
        raise KeyOnDisk("the sidecar")


def _echoed(pieces: KeyPieces, text: str) -> tuple[str, int] | None:
    """How `text` shows a piece of the key (read as it stands: ``""``, or decoded) and
    where in that reading; None when it shows none."""
    for how, seen in _readings(text):
        at = pieces.find(seen)
        if at is not None:
            return how, at
    return None


_DATA = re.compile(r"^data: ?(.*?)\r?$", re.MULTILINE)
# A JSON string, and the name it is the value of when there is one.
_STRING = re.compile(r'(?:"((?:[^"\\\r\n]|\\.)*)"\s*:\s*)?"((?:[^"\\\r\n]|\\.)*)"')


def _readings(text: str):
    """`text` as it stands, percent-decoded, its SSE data joined, its JSON strings decoded
    and joined (all, and per field name): each (how it was read, the text)."""
    yield "", text
    yield "percent-decoded", unquote(text)
    yield "read as its SSE data joined", "".join(_DATA.findall(text))
    joined: dict[str, list[str]] = {"": []}
    for match in _STRING.finditer(text):
        name, value = match.group(1), _decoded(match.group(2))
        joined[""].append(value)
        if name is not None:
            joined.setdefault(_decoded(name), []).append(value)
    for name, values in joined.items():
        what = f"the {name!r} strings" if name else "its JSON strings"
        whole = "".join(values)
        yield f"read as {what} decoded and joined", whole
        yield f"read as {what} decoded, joined and percent-decoded", unquote(whole)


def _decoded(inner: str) -> str:
    try:
        return json.loads(f'"{inner}"')
    except ValueError:
        return inner
