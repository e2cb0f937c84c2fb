"""What each event of a stream addressed, in words: the slot view's and the graders' labels.

``block [1] tool_use · input_json_delta`` (Anthropic), ``item [1] function_call ·
function_call_arguments.delta`` (Responses), ``choice 0 · tool_calls[1] · arguments``
(Chat). The labels are a fact of the stream, not of a view: the slot view's
counter, the tool-call card's counter and lesson 2's graders all read them
from here, and `address_text` is how any of them writes a slot's address.
"""

from __future__ import annotations

from collections import OrderedDict
from typing import Any

from ..captures import Capture
from ..wire_events import DONE, WireEvent, parse_all
from ..wires import anthropic, chat

_KEPT = 16
_LABELS: OrderedDict[int, tuple[Capture, list[str]]] = OrderedDict()


def address_text(address: Any) -> str:
    """A slot's address in the wire's own terms.

    Anthropic ``1`` -> ``[1]``; Responses ``(0,)`` -> ``item [0]``,
    ``(0, 1)`` -> ``item [0] · part [1]``, ``(0, "summary", 1)`` ->
    ``item [0] · summary [1]``; Chat ``(0, "content")`` -> ``choice 0 ·
    content``, ``(0, ("tool", 1))`` -> ``choice 0 · tool_calls[1]``.
    """
    if isinstance(address, int):
        return f"[{address}]"
    if isinstance(address, tuple) and address and isinstance(address[0], int):
        head, rest = address[0], address[1:]
        if not rest:
            return f"item [{head}]"
        if len(rest) == 1 and isinstance(rest[0], int):
            return f"item [{head}] · part [{rest[0]}]"
        if len(rest) == 2 and rest[0] == "summary":
            return f"item [{head}] · summary [{rest[1]}]"
        if len(rest) == 1 and isinstance(rest[0], str):
            return f"choice {head} · {rest[0]}"
        if len(rest) == 1 and isinstance(rest[0], tuple) and rest[0][:1] == ("tool",):
            return f"choice {head} · tool_calls[{rest[0][1]}]"
    return f"[{address}]"


def event_counter(capture: Capture, index: int) -> str:
    """The player's counter: the event, then the slot it addresses and what it carries.

    ``event 12 / 48 · block [1] tool_use · input_json_delta`` (Anthropic),
    ``event 5 / 29 · item [1] function_call · function_call_arguments.delta``
    (Responses), ``event 7 / 31 · choice 0 · tool_calls[1] · arguments`` (Chat).
    """
    n = len(capture.events)
    if n == 0:
        return f"no events · HTTP {capture.status}: the request failed before any event"
    i = max(0, min(int(index), n - 1))
    return f"event {i} / {n} · {labels_for(capture)[i]}"




def labels_for(capture: Capture) -> list[str]:
    """What each event addresses, computed once per capture (kept for the last few)."""
    key = id(capture)
    hit = _LABELS.get(key)
    if hit is not None and hit[0] is capture:
        _LABELS.move_to_end(key)
        return hit[1]
    events = parse_all(capture.events)
    reader = {"anthropic-messages": _anthropic_labels, "openai-responses": _responses_labels,
              "openai-chat": _chat_labels}.get(capture.wire or "", _plain_labels)
    labels = reader(events)
    _LABELS[key] = (capture, labels)
    while len(_LABELS) > _KEPT:
        _LABELS.popitem(last=False)
    return labels


def _plain(ev: WireEvent) -> str:
    if ev.parse_error is not None:
        return f"{ev.type or '(no type)'} (not JSON)"
    return ev.type or "(no type)"


def _plain_labels(events: list[WireEvent]) -> list[str]:
    return [_plain(ev) for ev in events]


def _anthropic_labels(events: list[WireEvent]) -> list[str]:
    kinds: dict[Any, str] = {}
    out = []
    for ev in events:
        p = ev.payload
        if not isinstance(p, dict):
            out.append(_plain(ev))
            continue
        kind = ev.type
        index = p.get("index")
        if kind == "content_block_start":
            block = p.get("content_block") if isinstance(p.get("content_block"), dict) else {}
            kinds[index] = str(block.get("type", "?"))
        if kind in anthropic.BLOCK_EVENTS:
            what = kind
            if kind == "content_block_delta":
                delta = p.get("delta") if isinstance(p.get("delta"), dict) else {}
                what = str(delta.get("type", "?"))
            out.append(f"block [{index}] {kinds.get(index, '?')} · {what}")
        elif kind == "message_delta":
            delta = p.get("delta") if isinstance(p.get("delta"), dict) else {}
            reason = delta.get("stop_reason")
            out.append(f"message_delta · stop_reason {reason}" if reason else "message_delta")
        elif kind in anthropic.FAILURES:
            error = anthropic.read_error(kind, p)
            out.append(f"error · {(error.type if error else None) or '?'}")
        else:
            out.append(_plain(ev))
    return out


def _responses_labels(events: list[WireEvent]) -> list[str]:
    items: dict[Any, str] = {}
    out = []
    for ev in events:
        p = ev.payload
        if not isinstance(p, dict):
            out.append(_plain(ev))
            continue
        kind = ev.type or "(no type)"
        oi = p.get("output_index")
        item = p.get("item")
        if isinstance(item, dict) and oi is not None:
            items[oi] = str(item.get("type", "?"))
        if oi is None:
            out.append(_plain(ev))
            continue
        where = f"item [{oi}] {items.get(oi, '?')}"
        if p.get("content_index") is not None:
            where += f" · part [{p['content_index']}]"
        if p.get("summary_index") is not None:
            where += f" · summary [{p['summary_index']}]"
        out.append(f"{where} · {kind.removeprefix('response.')}")
    return out


def _chat_labels(events: list[WireEvent]) -> list[str]:
    out = []
    for ev in events:
        p = ev.payload
        if ev.type == DONE:
            out.append("[DONE]")
            continue
        if not isinstance(p, dict):
            out.append(_plain(ev))
            continue
        if chat.is_error_payload(p):
            out.append("error")
            continue
        parts = []
        for choice in p.get("choices") or []:
            if isinstance(choice, dict):
                parts.append(_chat_choice_label(choice))
        if p.get("usage") and not p.get("choices"):
            parts.append("usage")
        out.append("; ".join(parts) if parts else "(empty chunk)")
    return out


def _chat_choice_label(choice: dict) -> str:
    delta = choice.get("delta") if isinstance(choice.get("delta"), dict) else {}
    fields = []
    for call in delta.get("tool_calls") or []:
        if not isinstance(call, dict):
            continue
        function = call.get("function") if isinstance(call.get("function"), dict) else {}
        what = f"start {function.get('name') or ''}".rstrip() if call.get("id") else "arguments"
        fields.append(f"tool_calls[{call.get('index')}] · {what}")
    texts = [name for name in chat.TEXT_FIELDS if isinstance(delta.get(name), str)]
    fields += [name for name in texts if delta[name]]
    if not fields and delta.get("role"):
        fields.append("role")
    if not fields:
        fields += texts            # an empty string is still a (tiny) fragment
    if choice.get("finish_reason") is not None:
        fields.append(f"finish_reason {choice['finish_reason']}")
    return f"choice {choice.get('index', 0)} · " + (" · ".join(fields) if fields else "(empty)")
