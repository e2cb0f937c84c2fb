"""Gemini's SDK objects, read back as the records they were parsed from.

google-genai's ``generate_content_stream`` yields one ``GenerateContentResponse``
object per record and assembles nothing: each object *is* a record, typed. So
the SDK route reads each object's data (`sdk_record`) as that record, through
the same accumulator as the wire route; what differs between the routes is
only what the SDK let through.

What the SDK does not let it see:

- where and when anything arrived (byte offsets, arrival times);
- fields its types do not know: Vertex's ``createTime`` on the Gemini API
  route, ``usageMetadata.serviceTier``: they are dropped;
- a record cut in the middle: the SDK raises on the partial JSON (the records
  before it were yielded), so the step is failed on this route, truncated on
  the wire route.

It re-spells what it does see: a ``thoughtSignature`` becomes bytes (written
back here in the wire's base64), enums become enum members (their values here).
"""

from __future__ import annotations

import base64
import enum
from typing import Any

from ...accumulate.changes import StreamEnded
from ...accumulate.gemini import GeminiAccumulator
from ...sse.decoder import ServerSentEvent
from ...wires.wire_events import GEMINI_RECORD, WireEvent


def sdk_record(response: Any) -> dict:
    """One SDK response object as the record it came from (its wire names and values;
    the SDK's own ``sdkHttpResponse`` left out)."""
    dump = response.model_dump(mode="python", by_alias=True, exclude_none=True)
    dump.pop("sdkHttpResponse", None)
    return _as_wire(dump)


def _as_wire(value: Any) -> Any:
    """Bytes back to standard base64, enum members to their values, all the way down
    (iteratively: a record may nest as deep as its arguments do)."""
    root: list[Any] = [value]
    stack: list[tuple[Any, Any]] = [(root, 0)]
    while stack:
        holder, key = stack.pop()
        item = holder[key]
        if isinstance(item, bytes):
            holder[key] = base64.b64encode(item).decode("ascii")
        elif isinstance(item, enum.Enum):
            holder[key] = item.value
        elif isinstance(item, dict):
            stack.extend((item, k) for k in item)
        elif isinstance(item, list):
            stack.extend((item, i) for i in range(len(item)))
    return root[0]


class GeminiSDKTranslator:
    """SDK response objects -> the changes the Gemini accumulator makes of their records."""

    def __init__(self) -> None:
        self.accumulator = GeminiAccumulator()
        self.count = 0
        self.terminal = False

    def changes(self, response: Any) -> list:
        """The changes of one SDK response object (one record)."""
        record = sdk_record(response)
        event = WireEvent(self.count, ServerSentEvent(None, ""), GEMINI_RECORD, record)
        self.count += 1
        out = self.accumulator.feed(event)
        self.terminal = self.accumulator.complete
        return out

    def close_all(self) -> list:
        """The SDK's iteration is over: what the accumulator's end closes (its own
        `StreamEnded` left to the SDK adapter, which knows how the iteration ended)."""
        return [c for c in self.accumulator.finish() if not isinstance(c, StreamEnded)]
