"""What a Chat chunk carries beside the message: an in-band error, moderation, logprobs.

A payload with a top-level ``error`` is an in-band error (its ``usage`` kept; the
text its choices carried stays in the diagnostic). The moderation chunk
(``moderation``: the input's and the output's results) is kept on the completion
as the SDK keeps it (the latest wins), and noted: a warning when either side is
flagged or failed, since the text it judges has already streamed. A choice's
``logprobs`` lists are concatenated.
"""

from __future__ import annotations

import copy
from typing import TYPE_CHECKING, Any

from ...wires.chat import has_usage
from ...wires.wire_events import WireEvent
from ..changes import InBandError, ResponseChanged
from .choice import delta_text

if TYPE_CHECKING:
    from .choice import Choice


class BesideTheMessage:
    """The Chat accumulator's errors, moderation and logprobs (mixed into `ChatAccumulator`)."""

    def _error(self, payload: dict, event: WireEvent) -> None:
        self.errored = True
        self.complete = False
        error = payload.get("error")
        if isinstance(error, dict):
            kind = error.get("type") or error.get("code") or "error"
            text = error.get("message") or event.sse.data
        else:
            kind, text = "error", str(error)
        self.changes.append(InBandError(event.index, f"{kind}: {text}", copy.deepcopy(error),
                                        kind if isinstance(kind, str) else None))
        # An error inside a chunk (OpenRouter) may carry usage: kept. Its choices are not
        # applied (the error ends them); any text they carry stays in the diagnostic.
        choices = payload.get("choices")
        orphan = "".join(delta_text(c.get("delta")) or "" for c in choices
                         if isinstance(c, dict)) if isinstance(choices, list) else ""
        self.note("in_band_error", f"{kind}: {text}", event=event, raw=event.sse.data,
                  error=copy.deepcopy(error), **({"orphan_text": orphan} if orphan else {}))
        if has_usage(payload):
            self.usage = copy.deepcopy(payload["usage"])
            self.changes.append(ResponseChanged(event.index, {"usage": copy.deepcopy(
                payload["usage"])}))

    def _moderation(self, moderation: Any, event: WireEvent) -> None:
        """The moderation chunk: kept (the latest wins, as in the SDK) and noted."""
        self.head["moderation"] = copy.deepcopy(moderation)
        said = []
        for side in ("input", "output"):
            result = moderation.get(side) if isinstance(moderation, dict) else None
            result = result if isinstance(result, dict) else {}
            if result.get("type") == "error":
                said.append(f"the {side} could not be judged ({result.get('code')})")
            elif any(isinstance(r, dict) and r.get("flagged")
                     for r in result.get("results") or []):
                said.append(f"the {side} is flagged")
        if said:
            self.note("moderation", "; ".join(said) + " by moderation, after the text "
                      "streamed", event=event, severity="warning", raw=event.sse.data)
        else:
            self.note("moderation", "moderation flagged nothing", event=event,
                      severity="info")

    def _logprobs(self, choice: Choice, logprobs: dict) -> None:
        if choice.logprobs is None:
            choice.logprobs = {"content": None, "refusal": None}
        for key, value in logprobs.items():
            if isinstance(value, list):
                have = choice.logprobs.get(key)
                if not isinstance(have, list):
                    have = choice.logprobs[key] = []
                have.extend(copy.deepcopy(value))
            elif value is not None:
                choice.logprobs[key] = copy.deepcopy(value)
