"""Solutions to lesson 4b's exercises: the code the notebook shows, tested by the checkers."""

from __future__ import annotations

from ..wires.gemini import FINISH_REASONS

TEXT_KEYS = {"text", "thought", "thoughtSignature"}


def gemini_blocks(records: list[dict]) -> list[dict]:
    """The first candidate's parts as blocks, each with an id minted in order (``b0``...).

    A text part continues the block right before it when that block is open,
    of the same kind (``thought: true`` is reasoning, the rest text) and the
    part holds only text fields, unless both carry a ``thoughtSignature``.
    An empty ``{"text": ""}`` that continues nothing is no block. A whole
    ``functionCall`` is a tool-call block; any other part is a block of its
    own (``other``). A ``finishReason`` closes the last block.
    """
    blocks: list[dict] = []
    open_block, signed = False, False
    for record in records:
        for position, candidate in enumerate(record.get("candidates") or []):
            if candidate.get("index", position) != 0:
                continue
            for part in (candidate.get("content") or {}).get("parts") or []:
                if "text" in part:
                    kind = "reasoning" if part.get("thought") is True else "text"
                    has_signature = "thoughtSignature" in part
                    last = blocks[-1] if blocks else None
                    if (open_block and last["kind"] == kind and TEXT_KEYS.issuperset(part)
                            and not (has_signature and signed)):
                        last["text"] += part["text"]
                        signed = signed or has_signature
                        continue
                    if part["text"] == "" and part.keys() == {"text"}:
                        continue
                    blocks.append({"id": f"b{len(blocks)}", "kind": kind, "text": part["text"]})
                    open_block, signed = True, has_signature
                elif "functionCall" in part:
                    call = part["functionCall"]
                    blocks.append({"id": f"b{len(blocks)}", "kind": "tool_call",
                                   "name": call["name"], "input": call.get("args", {})})
                    open_block = False
                else:
                    blocks.append({"id": f"b{len(blocks)}", "kind": "other"})
                    open_block = False
            if "finishReason" in candidate:
                open_block = False
    return blocks


def gemini_finish(finish_reason: str | None, parts: list[dict]) -> str:
    """The unified finish reason of a candidate that ended with `finish_reason` (None: it
    never said) and holds `parts`: ``STOP`` with a ``functionCall`` part asks for tools."""
    if finish_reason is None:
        return "other"
    unified = FINISH_REASONS.get(finish_reason, "other")
    if unified == "stop" and any("functionCall" in part for part in parts):
        return "tool_calls"
    return unified
