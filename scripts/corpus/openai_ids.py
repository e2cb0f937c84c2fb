"""Identifiers that look like the ones OpenAI sends, drawn from a seeded generator.

Real Responses ids share a per-response prefix and embed a creation time:
``resp_`` + 18 hex digits common to every id of that response + 8 hex
digits of Unix time + 4 random hex digits + ``819`` + 17 more. Item ids
(``msg_``, ``fc_``, ``rs_``, ``ws_``) follow the same layout with the same
prefix. Chat ids are ``chatcmpl-`` + 29 letters and digits; tool call ids
``call_`` + 24. Deltas carry an ``obfuscation`` string that pads short
deltas to about 16 characters, so a delta's length on the wire does not
reveal the token.
"""

from __future__ import annotations

import random
import string

ALNUM = string.ascii_letters + string.digits
HEX = "0123456789abcdef"


def _pick(rng: random.Random, alphabet: str, n: int) -> str:
    return "".join(rng.choice(alphabet) for _ in range(n))


class ResponseIds:
    """Ids for one Responses stream: the response and its items share a prefix."""

    def __init__(self, rng: random.Random, created_at: int) -> None:
        self.rng = rng
        self.created_at = created_at
        self.prefix = "0" + _pick(rng, HEX, 15) + "00"

    def _id(self, kind: str, seconds_later: int) -> str:
        stamp = f"{self.created_at + seconds_later:08x}"
        return (f"{kind}_{self.prefix}{stamp}{_pick(self.rng, HEX, 4)}819"
                f"{_pick(self.rng, HEX, 17)}")

    def response(self) -> str:
        """The ``resp_…`` id."""
        return self._id("resp", 0)

    def item(self, kind: str, seconds_later: int = 1) -> str:
        """An item id: ``msg``, ``fc``, ``rs``, ``ws`` …, minted a little after the response."""
        return self._id(kind, seconds_later)


def call_id(rng: random.Random) -> str:
    """A function call id as OpenAI mints it: ``call_`` + 24 letters and digits."""
    return "call_" + _pick(rng, ALNUM, 24)


def chat_completion_id(rng: random.Random) -> str:
    """A Chat Completions id: ``chatcmpl-`` + 29 letters and digits."""
    return "chatcmpl-" + _pick(rng, ALNUM, 29)


def system_fingerprint(rng: random.Random) -> str:
    """A backend fingerprint such as ``fp_5050236cbd``."""
    return "fp_" + _pick(rng, HEX, 10)


def request_id(rng: random.Random) -> str:
    """The ``x-request-id`` response header: ``req_`` + 32 hex digits."""
    return "req_" + _pick(rng, HEX, 32)


def obfuscation(rng: random.Random, delta: str) -> str:
    """Padding sent beside a delta: short deltas are padded to ~16 characters."""
    if len(delta) < 15:
        return _pick(rng, ALNUM, 16 - len(delta))
    return _pick(rng, ALNUM, rng.randint(1, 12))


def hex_digits(rng: random.Random, n: int) -> str:
    """`n` random lowercase hex digits (for uuids and opaque ids)."""
    return _pick(rng, HEX, n)


def uuid4(rng: random.Random) -> str:
    """A version-4 uuid string from the seeded generator (DeepSeek-style ids)."""
    h = _pick(rng, HEX, 32)
    return f"{h[:8]}-{h[8:12]}-4{h[13:16]}-{rng.choice('89ab')}{h[17:20]}-{h[20:]}"


def opaque_blob(rng: random.Random, n: int) -> str:
    """A base64url-looking opaque string (encrypted reasoning content)."""
    return "gAAAAAB" + _pick(rng, ALNUM + "-_", n)
