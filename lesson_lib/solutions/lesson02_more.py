"""Solutions to lesson 2's extra practice (shown folded in the notebook, tested in CI)."""

from __future__ import annotations


def responses_text(payloads: list) -> dict[str, str]:
    """The text of each message item of a Responses stream, keyed by its item_id.

    Text arrives only in ``response.output_text.delta`` events, each naming
    its item; joining them per item_id, in order, gives each message's text
    (a reasoning summary or function arguments are other event names).
    """
    texts: dict[str, str] = {}
    for payload in payloads:
        if isinstance(payload, dict) and payload.get("type") == "response.output_text.delta":
            item = payload["item_id"]
            texts[item] = texts.get(item, "") + payload.get("delta", "")
    return texts


def thinking_blocks(payloads: list) -> list[tuple]:
    """Each Anthropic thinking block as (index, thinking, signature), in index order.

    The text comes in ``thinking_delta``s, the signature in one
    ``signature_delta`` before the block stops; a ``redacted_thinking``
    block arrives whole in its start event and is (index, None, None).
    """
    blocks: dict[int, list] = {}
    for payload in payloads:
        if not isinstance(payload, dict):
            continue
        kind, index = payload.get("type"), payload.get("index")
        if kind == "content_block_start":
            block_type = payload["content_block"].get("type")
            if block_type == "thinking":
                blocks[index] = [index, "", None]
            elif block_type == "redacted_thinking":
                blocks[index] = [index, None, None]
        elif kind == "content_block_delta" and index in blocks:
            delta = payload["delta"]
            if delta.get("type") == "thinking_delta":
                blocks[index][1] += delta.get("thinking", "")
            elif delta.get("type") == "signature_delta":
                blocks[index][2] = delta.get("signature") or None
    return [tuple(blocks[i]) for i in sorted(blocks)]


def citations(payloads: list) -> list[tuple[int, str]]:
    """Every citation of an Anthropic stream as (block index, cited_text), block by block.

    A cited text block starts with ``"citations": []``; each citation then
    arrives whole in a ``citations_delta`` addressed to the block's index.
    """
    found: dict[int, list[str]] = {}
    for payload in payloads:
        if not isinstance(payload, dict) or payload.get("type") != "content_block_delta":
            continue
        delta = payload["delta"]
        if delta.get("type") == "citations_delta":
            found.setdefault(payload["index"], []).append(delta["citation"].get("cited_text"))
    return [(index, text) for index in sorted(found) for text in found[index]]
