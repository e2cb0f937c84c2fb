"""Diagnostics: typed, visible records of everything that did not go to plan.

Every station reports problems as `Diagnostic` values next to what did
arrive, instead of raising or dropping data. A diagnostic names what went
wrong (`code`), says it in words a learner can act on (`message`), and
points at where it happened (a byte `offset` in the body, an event
`index`, a block `slot`), carrying the raw text where that helps.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Literal

Severity = Literal["error", "warning", "info"]


@dataclass(frozen=True)
class Diagnostic:
    """One problem found in a stream, typed by `code`.

    Codes in use (grouped by station):

    - SSE decoding: ``undispatched_bytes`` (an event never finished),
      ``not_text`` (the body is not UTF-8 text).
    - Event-stream decoding (Bedrock's binary frames): ``bad_prelude_crc``,
      ``bad_message_crc``, ``bad_length``, ``bad_header``, ``duplicate_header``
      (a frame that cannot be read: decoding stops there), ``truncated_frame``
      (the stream ended inside a frame), ``unknown_message_type``.
    - Wire events: ``unparseable_json``, ``unknown_event``, ``unknown_delta``,
      ``unknown_block``, ``in_band_error``, ``http_error``.
    - Accumulators: ``event_before_start``, ``duplicate_start``,
      ``duplicate_stop``, ``unknown_slot``, ``block_never_stopped``,
      ``delta_mismatch``, ``delta_after_stop``, ``delta_after_finish``,
      ``event_after_terminal``, ``tool_call_without_id``, ``malformed_event``,
      ``no_terminal``,
      ``cut_tool_input``, ``invalid_tool_input``, ``sequence_gap``,
      ``sequence_duplicate``, ``sequence_out_of_order``,
      ``server_object_differs``, ``rotating_ids`` (a server whose ids change from
      event to event: matched by output_index, a warning).
    """

    code: str
    message: str
    severity: Severity = "error"
    offset: int | None = None
    index: int | None = None
    slot: Any = None
    raw: str | None = None
    extra: dict[str, Any] = field(default_factory=dict)

    def __str__(self) -> str:
        where = []
        if self.offset is not None:
            where.append(f"byte {self.offset}")
        if self.index is not None:
            where.append(f"event {self.index}")
        if self.slot is not None:
            where.append(f"slot {self.slot}")
        prefix = f"{', '.join(where)}: " if where else ""
        return f"{prefix}{self.code}: {self.message}"

    def as_dict(self) -> dict[str, Any]:
        """A JSON-ready dict, omitting empty fields."""
        out: dict[str, Any] = {"code": self.code, "severity": self.severity,
                               "message": self.message}
        for name in ("offset", "index", "slot", "raw"):
            value = getattr(self, name)
            if value is not None:
                out[name] = value
        if self.extra:
            out.update(self.extra)
        return out
