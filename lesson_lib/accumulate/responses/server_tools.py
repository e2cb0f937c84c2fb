"""The events of tools the server runs itself: progress, partial images, shell, audio.

A web search, file search, code interpreter, image generation or MCP call
reports its progress (``in_progress``, ``searching``, ``completed``...),
which becomes the item's status until the item is done; image generation
streams partial images; a shell call streams its commands and their
output. An item that streams no field of its own shows a description made
from its data (an image's size, a shell's commands): each of these events
says it again, whole.

Spoken output (``response.audio.delta`` and ``response.audio.transcript.delta``,
each ended by its ``.done``) addresses no output item and adds nothing to the
`Response` (the SDK's assembly has no place for it): it is one slot of its own,
``("audio",)``, whose text is the transcript (channel ``other``, as Chat's spoken
output) and whose close carries the sound and the transcript.
"""

from __future__ import annotations

from ...wires import responses as r
from ...wires.wire_events import WireEvent
from ..base import Fragments, Slot
from ..changes import SlotOpened
from .items import Handlers
from .slots import own_shown
from .vocabulary import AUDIO, AUDIO_EVENTS, STATUS_EVENTS, Malformed, index_of, string_field


class ServerToolEvents(Handlers):
    """The handlers for server-side tools and audio."""

    audio: Audio | None = None     # the spoken output, from its first event

    def on_status(self, ev: WireEvent, p: dict) -> None:
        """A server tool's progress: the item's status until it is done (shown nowhere)."""
        kind, status = STATUS_EVENTS[ev.type]
        item = self.items.item_for(ev, p, kind)
        if status is not None and "status" in item.data and item.state == "open":
            item.status = status

    def on_partial_image(self, ev: WireEvent, p: dict) -> None:
        """A partial image: kept, and the item's slot describes the latest."""
        item = self.items.item_for(ev, p, r.IMAGE_GENERATION_CALL_ITEM)
        b64 = string_field(p, "partial_image_b64")
        shown = own_shown(item)
        item.partial_images.append((p.get("partial_image_index"), b64))
        self.slot_changes.own_stated(item, shown, ev.index)

    def on_shell_command(self, ev: WireEvent, p: dict) -> None:
        """A shell command added, streamed into or stated whole; the slot shows them all."""
        item = self.items.item_for(ev, p, r.SHELL_CALL_ITEM)
        n = index_of(p, "command_index")
        path = ("action", "commands", n)
        shown = own_shown(item)
        if ev.type.endswith(".delta"):
            item.text_field(path).append(string_field(p))
        else:
            command = string_field(p, "command")
            self.compare.field_stated(ev, item, path, command, check=ev.type.endswith(".done"))
        self.slot_changes.own_stated(item, shown, ev.index)

    def on_shell_output(self, ev: WireEvent, p: dict) -> None:
        """A shell command's output streamed (stdout, stderr); its item shows no text."""
        item = self.items.item_for(ev, p, r.SHELL_CALL_OUTPUT_ITEM)
        n = index_of(p, "command_index")
        if ev.type.endswith(".delta"):
            delta = p.get("delta")
            if not isinstance(delta, dict):
                raise Malformed("delta is not an object")
            for stream in ("stdout", "stderr"):
                if isinstance(delta.get(stream), str):
                    item.text_field(("output", n, stream)).append(delta[stream])
        # .done states the outputs whole; output_item.done carries them in the item

    def on_audio(self, ev: WireEvent, p: dict) -> None:
        """Spoken output: the first audio event opens its slot (`AUDIO`); each transcript
        piece is the slot's text, each sound piece (base64) is kept; the slot closes when
        both the sound and the transcript are done."""
        stream, is_delta = AUDIO_EVENTS[ev.type]
        delta = string_field(p) if is_delta else None
        audio = self.audio
        if audio is None:
            audio = self.audio = Audio()
            self.slot_changes.opening.append(SlotOpened(ev.index, AUDIO, "audio", "audio"))
        if delta is not None:
            audio.pieces[stream].append(delta)
            if stream == "transcript":
                self.slot_changes.grew(AUDIO, "other", delta, "transcript", ev.index)
            return
        audio.done.add(stream)
        if audio.state == "open" and len(audio.done) == 2:
            audio.state = "closed"
            self.slot_changes.close(AUDIO, "closed", None, ev.index, data=audio.as_dict())

    def cut_audio(self, why: str) -> None:
        """The end of the stream: spoken output not yet done is closed, never finished."""
        audio = self.audio
        if audio is None or audio.state != "open":
            return
        audio.state = "never closed"
        missing = " and ".join(event for event, (stream, delta) in AUDIO_EVENTS.items()
                               if not delta and stream not in audio.done)
        self.note("block_never_stopped", f"the spoken output was never done (no "
                  f"{missing}) before {why}", severity="warning", slot=AUDIO)
        self.slot_changes.close(AUDIO, "never closed", None, None, data=audio.as_dict())

    def audio_slots(self) -> list[Slot]:
        """The spoken output's slot, when there is one: its text is the transcript."""
        audio = self.audio
        if audio is None:
            return []
        return [Slot(AUDIO, "audio", "audio", audio.pieces["transcript"].text, audio.state)]


class Audio:
    """The response's spoken output: its sound (base64) and transcript pieces, and which
    of the two is done."""

    __slots__ = ("pieces", "done", "state")

    def __init__(self) -> None:
        self.pieces = {"data": Fragments(), "transcript": Fragments()}
        self.done: set[str] = set()
        self.state = "open"

    def as_dict(self) -> dict:
        """What the stream said of it, joined: the sound and the transcript."""
        return {key: frags.text for key, frags in self.pieces.items()}
