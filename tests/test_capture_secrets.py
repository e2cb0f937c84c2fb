"""No sidecar, on any wire, keeps a header that carries a credential."""

from __future__ import annotations

import re

import pytest

from lesson_lib.capture.captures import corpus, reference_corpus
from lesson_lib.wires import WIRES

SECRET = re.compile(r"authorization|x-api-key|api-key|cookie|set-cookie|openai-organization"
                    r"|anthropic-.*-key", re.IGNORECASE)


def every_header(capture) -> list[str]:
    response = capture.sidecar.get("response") or {}
    request = capture.sidecar.get("request") or {}
    return [*(response.get("headers") or {}), *(request.get("headers") or {})]


def test_the_pattern_names_every_secret_header():
    for name in ("Authorization", "x-api-key", "api-key", "Cookie", "set-cookie",
                 "OpenAI-Organization", "anthropic-admin-key", "anthropic-api-key"):
        assert SECRET.fullmatch(name), name
    assert not SECRET.fullmatch("request-id") and not SECRET.fullmatch("anthropic-version")


@pytest.mark.parametrize("wire", sorted(WIRES))
def test_no_sidecar_keeps_a_secret_header(wire):
    caps = [c for c in corpus() + reference_corpus() if c.wire == wire]
    assert caps, f"no capture of {wire}"
    for cap in caps:
        leaked = [h for h in every_header(cap) if SECRET.fullmatch(h)]
        assert not leaked, f"{cap.key}: {leaked}"
