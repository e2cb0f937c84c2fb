"""What Chat's few markers say about order, and what breaks it.

Chat numbers nothing, but its markers show an order: only a call's opening
fragment carries its ``id``, and nothing follows a choice's ``finish_reason``
or ``data: [DONE]``. A fragment with the ``id`` of a call already opened is a
second opening (``duplicate_start``, not applied); an id-less fragment at an
index whose call's arguments are already a whole JSON value cannot continue it
(``event_before_start``): it is held for the next call opened at that index.
Each keeps the text it carried beside the raw chunk (``orphan_text``). A body
that ends without ``data: [DONE]`` ended properly, with a ``no_done_marker``
warning, when `wires.chat.ended_without_done` says so; else it was cut.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from ...wires.chat import ended_without_done, fragment_arguments
from ...wires.wire_events import WireEvent
from .choice import Call, address_of, label_of

if TYPE_CHECKING:
    from .choice import Choice


class OrderChecks:
    """The Chat accumulator's checks of order (mixed into `ChatAccumulator`)."""

    def _announced_again(self, choice: Choice, call: Call, fragment: dict,
                         event: WireEvent) -> None:
        """A fragment with the id of a call this choice already opened: only a call's
        opening carries its id, so this is a second opening (the first is kept)."""
        self.note("duplicate_start", f"tool call {call.id} ({label_of(choice, call)}) was "
                  "already opened; this fragment with its id is not applied, the first "
                  "opening is kept (its text is kept here)", event=event,
                  slot=address_of(choice, call), raw=event.sse.data,
                  orphan_text=fragment_arguments(fragment))

    def _held(self, choice: Choice, call: Call, index: int, fragment: dict,
              event: WireEvent) -> bool:
        """Whether an id-less argument fragment at `index` belongs to a call not opened
        yet: the call there already has a whole JSON value (nothing can follow it), or
        fragments are already held for that index. Held text goes to the next call
        opened at `index`, and stays in the diagnostic."""
        text = fragment_arguments(fragment)
        held = choice.held.get(index)
        if held is None:
            ready = call.call.state == "forming" and () in call.call.settled
            if not (text and not text.isspace() and ready):
                return False
            held = choice.held[index] = []
        held.append(text or "")
        self.note("event_before_start", f"an argument fragment at tool_calls index {index} "
                  f"after the arguments of {label_of(choice, call)} were already whole: it "
                  "belongs to a call not opened yet, so it is held for the next call opened "
                  "at that index (its text is kept here)", event=event, slot=choice.index,
                  raw=event.sse.data, orphan_text=text)
        return True

    def _without_done(self) -> None:
        """The body ended without ``data: [DONE]``: ended properly, with a warning, when
        `wires.chat.ended_without_done` says so (every choice finished, the usage came if
        owed, the body whole); else cut."""
        finished = bool(self.choices) and all(c.finish_reason is not None
                                              for c in self.choices.values())
        whole = not any(d.code in ("undispatched_bytes", "unparseable_json")
                        for d in self.diagnostics)
        if ended_without_done(every_choice_finished=finished,
                              usage_owed=self._usage_owed,
                              usage_came=self.usage is not None, whole=whole):
            self.note("no_done_marker", "the body ended without data: [DONE], after every "
                      "choice's finish_reason and at an event boundary: taken as the end "
                      "(the official SDK does the same)", severity="warning")
            self.complete = True
            return
        why = ("a choice never got its finish_reason" if not finished else
               "the usage chunk the request asked for never came" if whole else
               "the body does not end at an event boundary")
        self.note("no_terminal", f"the stream ended before data: [DONE] ({why}); what "
                  "arrived is kept, but the completion is incomplete")
        self.complete = False
