"""Every piece of a key a server might echo, raw or encoded: the set `record` refuses.

`record` clears the key where it stands whole (`redact`); what a server may still send
back is a piece of it, or the key encoded: base64 (standard or URL-safe), hex,
percent-encoded, ``\\u``-escaped in JSON, a 16-character prefix, a slice, or the key
split across two text deltas. The rule: no `PIECE`-character piece of the key, raw or
in any of those encodings, may reach disk.

`KeyPieces` is built once per key: the set of forbidden substrings. Hex, percent and
``\\u`` forms are matched without regard to case; the raw key and base64 with it.
Pieces that lie wholly inside a vendor's public prefix (``sk-ant-api03-``) are no
secret and are left out.
"""

from __future__ import annotations

import base64
import re
from dataclasses import dataclass

PIECE = 12      # characters of the key that must not reach disk together

_PUBLIC_PREFIX = re.compile(r"sk-ant-[a-z]+\d*-|sk-(?:proj|svcacct|admin|None)-|sk-|AIza|"
                            r"xai-|AKIA")


@dataclass(frozen=True)
class KeyPieces:
    """The forbidden substrings of one key: `exact` (raw, base64) are matched as they
    are, `folded` (hex, percent, ``\\u``: lower case) in the text made lower case."""

    exact: frozenset[str]
    folded: frozenset[str]

    def find(self, text: str) -> int | None:
        """Where the first forbidden piece starts in `text` (a character index), or None.

        Each piece is one C-speed substring search: the key is short, so there are a few
        hundred at most, and the time stays linear in the text.
        """
        hits = [i for piece in self.exact if (i := text.find(piece)) >= 0]
        if self.folded:
            lowered = text.lower()
            hits += [i for piece in self.folded if (i := lowered.find(piece)) >= 0]
        return min(hits) if hits else None


def key_pieces(key: str) -> KeyPieces:
    """The forbidden substrings of `key`: each of its `PIECE`-character pieces that is not
    all public prefix, raw and in every encoding `record` guards against."""
    size = min(PIECE, len(key))
    public = m.end() if (m := _PUBLIC_PREFIX.match(key)) else 0
    raw = key.encode("utf-8")
    exact: set[str] = set()
    folded: set[str] = set()
    for start in range(len(key) - size + 1) if size else ():
        if start + size <= public:
            continue
        piece = key[start:start + size]
        data = piece.encode("utf-8")
        exact.add(piece)
        folded.add(data.hex())
        folded.add("".join(f"%{b:02x}" for b in data))
        folded.add("".join(f"\\u{ord(c):04x}" for c in piece))
    # base64 of the key's bytes at each of the three alignments a surrounding text can
    # put them in: whole groups only, each 12 bytes (16 characters) at a group boundary.
    for shift in range(3):
        usable = (len(raw) - shift) // 3 * 3
        encoded = base64.b64encode(raw[shift:shift + usable]).decode("ascii")
        for group in range(0, max(0, len(encoded) - 16) + 1, 4):
            first_byte = shift + group // 4 * 3
            if len(encoded) < 16 or first_byte + size <= public:
                continue
            piece = encoded[group:group + 16]
            exact.add(piece)
            exact.add(piece.replace("+", "-").replace("/", "_"))
    return KeyPieces(frozenset(exact), frozenset(folded))
