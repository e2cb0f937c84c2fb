"""Solutions to lesson 4b's exercises: the code the notebook shows, tested by the checkers."""

from __future__ import annotations

from .. import wires
from ..accumulate import changes as ch
from ..turn.adapters.base import WireAdapter
from ..turn.events import (
    BlockDelta,
    BlockEnded,
    BlockStarted,
    Finish,
    SignatureAdded,
    SourceAdded,
    ToolCallInvalid,
    ToolCallReady,
)
from ..wires.gemini import FINISH_REASONS

gi = wires.gemini_interactions

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


# -- exercise 3: the whole Gemini Interactions adapter ---------------------------------------

class InteractionsAdapter(WireAdapter):
    """Gemini Interactions' changes as turn events, written plainly (exercise 3).

    It handles the changes that make blocks itself (a step opened, its text or
    its arguments grew, a thought signed, a source cited, a step stopped, the stream ended
    with steps still open) and passes every other change (usage, errors,
    notes, the terminal, the step's end) to the base class.
    """

    wire = gi.WIRE

    def __init__(self, *args, **kwargs) -> None:
        super().__init__(*args, **kwargs)
        # a step's index -> its block id, block kind, and a call's name and id
        self.open: dict = {}

    def feed(self, changes, *, t=None, at=None):
        """The turn events that one wire event's changes mean."""
        out = []
        for c in changes or ():
            if isinstance(c, ch.SlotOpened):
                out += self.step_started(c)
            elif isinstance(c, ch.TextAppended | ch.ToolInputGrew) and c.address in self.open:
                block, kind = self.open[c.address][:2]
                channel = "reasoning" if kind == "reasoning" else "text"
                out.append(BlockDelta(self.seq(), block=block, fragment=c.fragment,
                                      channel=channel))
            elif isinstance(c, ch.SlotSigned) and c.address in self.open:
                out.append(SignatureAdded(self.seq(), block=self.open[c.address][0],
                                          signature=c.signature))
            elif isinstance(c, ch.CitationAdded) and c.address in self.open:
                out.append(SourceAdded(self.seq(), block=self.open[c.address][0],
                                       source=c.citation))
            elif isinstance(c, ch.SlotClosed) and c.address in self.open:
                out += self.step_stopped(c)
            elif isinstance(c, ch.StreamEnded):
                for address in list(self.open):     # steps the stream never stopped
                    out += self.step_stopped(ch.SlotClosed(None, address, "end_of_stream",
                                                           synthesised=True, call_state="cut"))
                out += super().feed([c], t=t, at=at)
            else:
                out += super().feed([c], t=t, at=at)
        return out

    def step_started(self, c: ch.SlotOpened) -> list:
        """A step began: a block of the kind its step type says (a server result whole; a
        server call, like a function call, open until its stop)."""
        kind, server = {gi.THOUGHT_STEP: ("reasoning", False),
                        gi.MODEL_OUTPUT_STEP: ("text", False),
                        gi.FUNCTION_CALL_STEP: ("tool_call", False)}.get(
                            c.slot_kind, ("tool_call", True) if c.slot_kind
                            in gi.SERVER_CALL_STEPS else ("tool_result", True) if c.slot_kind
                            in gi.SERVER_RESULT_STEPS else ("other", True))
        name, call_id = c.name, c.call_id
        if c.slot_kind in gi.SERVER_CALL_STEPS:     # the server's tool, named by its step
            name, call_id = gi.server_call(c.data)[:2]
        block = self.new_block_id()
        self.output_seen = True
        channel = ("reasoning" if kind == "reasoning" else "text"
                   if kind in ("text", "tool_call") else "other")
        out = [BlockStarted(self.seq(), block=block, step=self.step, block_kind=kind,
                            channel=channel, name=name, call_id=call_id,
                            server_side=server, content=c.content)]
        if c.whole:
            out.append(BlockEnded(self.seq(), block=block))
        else:
            self.open[c.address] = (block, kind, name, call_id)
        return out

    def step_stopped(self, c: ch.SlotClosed) -> list:
        """A step ended: its block ends, and a call is ready (or not) only now, once its
        arguments have all arrived (a server call's in the step its stop states)."""
        block, kind, name, call_id = self.open.pop(c.address)
        cut = c.synthesised
        out = [BlockEnded(self.seq(), block=block, complete=not cut, synthesised=cut)]
        if kind != "tool_call":
            return out
        stated = gi.server_call(c.data)
        if stated is not None and not cut:
            out.append(ToolCallReady(self.seq(), block=block, name=name, call_id=call_id,
                                     input=stated[2], server_side=True))
        elif c.call_state == "complete":
            out.append(ToolCallReady(self.seq(), block=block, name=name, call_id=call_id,
                                     input=c.input))
        else:
            out.append(ToolCallInvalid(self.seq(), block=block, name=name, call_id=call_id,
                                       state="cut" if cut else "invalid"))
        return out

    def finish(self) -> Finish:
        """The interaction's last ``status`` in the turn's words (``requires_action``:
        the model waits on tools)."""
        raw = self.response.get("status")
        return Finish(gi.finish_reason(raw) or "other", raw)
