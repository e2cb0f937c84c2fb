"""The events of tools the server runs itself: progress, partial images, shell, audio.

A web search, file search, code interpreter, image generation or MCP call
reports its progress (``in_progress``, ``searching``, ``completed``...),
which becomes the item's status until the item is done; image generation
streams partial images; a shell call streams its commands and their
output. An item that streams no field of its own shows a description made
from its data (an image's size, a shell's commands): each of these events
says it again, whole. Audio events address no output item and add nothing
to the `Response`.
"""

from __future__ import annotations

from ...wires.wire_events import WireEvent
from ..base import Fragments
from .compare import ServerComparison
from .objects import Item
from .registry import Items
from .slots import SlotChanges, own_shown
from .vocabulary import STATUS_EVENTS, Malformed, index_of, string_delta


class ServerToolEvents:
    """The handlers for server-side tools and audio: the stream's `items`, the
    `compare` checks and the `say` changes."""

    def __init__(self, items: Items, compare: ServerComparison, say: SlotChanges) -> None:
        self.items = items
        self.compare = compare
        self.say = say

    def _restated(self, ev: WireEvent, item: Item, shown: str) -> None:
        self.say.stated(item, (item.index,), shown, own_shown(item), ev.index)

    def on_status(self, ev: WireEvent, p: dict) -> None:
        """A server tool's progress: the item's status until it is done (shown nowhere)."""
        kind, status = STATUS_EVENTS[ev.type]
        item = self.items.item_for(ev, p, kind)
        if status is not None and "status" in item.data and item.state == "open":
            item.status = status

    def on_partial_image(self, ev: WireEvent, p: dict) -> None:
        """A partial image: kept, and the item's slot describes the latest."""
        item = self.items.item_for(ev, p, "image_generation_call")
        b64 = p.get("partial_image_b64")
        if not isinstance(b64, str):
            raise Malformed("partial_image_b64 is not a string")
        shown = own_shown(item)
        item.partial_images.append((p.get("partial_image_index"), b64))
        self._restated(ev, item, shown)

    def on_shell_command(self, ev: WireEvent, p: dict) -> None:
        """A shell command added, streamed into or stated whole; the slot shows them all."""
        item = self.items.item_for(ev, p, "shell_call")
        n = index_of(p, "command_index")
        path = ("action", "commands", n)
        shown = own_shown(item)
        if ev.type.endswith(".delta"):
            item.text_field(path).append(string_delta(p))
        else:
            command = p.get("command")
            if not isinstance(command, str):
                raise Malformed("command is not a string")
            frags = item.texts.get(path)
            if ev.type.endswith(".done") and frags is not None and frags.text != command:
                self.compare.differs(ev, (item.index, *path), frags.text, command)
            item.texts[path] = Fragments(command)
        self._restated(ev, item, shown)

    def on_shell_output(self, ev: WireEvent, p: dict) -> None:
        """A shell command's output streamed (stdout, stderr); its item shows no text."""
        item = self.items.item_for(ev, p, "shell_call_output")
        n = index_of(p, "command_index")
        if ev.type.endswith(".delta"):
            delta = p.get("delta")
            if not isinstance(delta, dict):
                raise Malformed("delta is not an object")
            for stream in ("stdout", "stderr"):
                if isinstance(delta.get(stream), str):
                    item.text_field(("output", n, stream)).append(delta[stream])
        # .done states the outputs whole; output_item.done carries them in the item

    def on_unaddressed(self, ev: WireEvent, p: dict) -> None:
        """Audio events: no output item, nothing in the `Response`."""
