"""What the deltas built, checked against the server's own objects.

Every ``*.done`` event, ``response.output_item.done`` and the terminal
event's `Response` are the server's statement of what the stream built.
Where ours and theirs disagree, a ``server_object_differs`` diagnostic says
where (the path, and the slot it belongs to) with both whole values, and
the server's value is kept. The fields only the terminal `Response` knows
(opaque ``encrypted_content``, the status of an item never done) are taken
from it.

A field no delta builds but the stream stated whole (an item's ``id`` in
``output_item.added``, a ``fingerprint``) that the terminal `Response`
restates differently is a ``server_restated`` warning: the final object
follows the server's terminal word, while the stream's own events stay
addressed by the stream's id. It says the server changed its mind, not that
the stream is broken, so an otherwise proper stream still ends properly.
A difference in what the deltas built stays a ``server_object_differs``.

`differences` compares two JSON values and lists where they differ.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable, Iterator
from typing import Any

from ...wires.wire_events import WireEvent
from ..base import Fragments
from .objects import ABSENT, Item, clone, get_path

# Opaque fields the server issues and may re-issue between the item's
# ``output_item.done`` and the terminal ``Response`` (the recorded streams
# re-encrypt ``encrypted_content``): nothing a client can accumulate, so they
# are not compared, and the terminal's value is the one kept.
OPAQUE_FIELDS = frozenset({"encrypted_content"})

def format_path(path: tuple) -> str:
    """``('output', 1, 'content', 0, 'text')`` -> ``output[1].content[0].text``."""
    out = ""
    for step in path:
        if isinstance(step, int):
            out += f"[{step}]"
        else:
            out += f".{step}" if out else str(step)
    return out


def differences(ours: Any, theirs: Any, path: tuple = (),
                ignore: frozenset = OPAQUE_FIELDS) -> Iterator[tuple[tuple, Any, Any]]:
    """Where two JSON values differ: ``(path, ours, theirs)``, `ABSENT` for a missing key.

    Keys in `ignore` are skipped at any depth; numbers compare by value
    (``0 == 0.0 == -0.0``), with a tolerance of 1e-9 for floats.
    """
    if isinstance(ours, dict) and isinstance(theirs, dict):
        for key in theirs:
            if key in ignore:
                continue
            yield from differences(ours.get(key, ABSENT) if key in ours else ABSENT,
                                   theirs[key], (*path, key), ignore)
        for key in ours:
            if key not in theirs and key not in ignore:
                yield (*path, key), ours[key], ABSENT
        return
    if isinstance(ours, list) and isinstance(theirs, list):
        for i in range(max(len(ours), len(theirs))):
            a = ours[i] if i < len(ours) else ABSENT
            b = theirs[i] if i < len(theirs) else ABSENT
            yield from differences(a, b, (*path, i), ignore)
        return
    if ours is ABSENT or theirs is ABSENT:
        if ours is not theirs:
            yield path, ours, theirs
        return
    if type(ours) is not type(theirs) and not (_number(ours) and _number(theirs)):
        yield path, ours, theirs
    elif isinstance(ours, float) or isinstance(theirs, float):
        if not math.isclose(ours, theirs, rel_tol=1e-9, abs_tol=1e-9):
            yield path, ours, theirs
    elif ours != theirs:
        yield path, ours, theirs


def _number(x: Any) -> bool:
    return isinstance(x, (int, float)) and not isinstance(x, bool)


def preview(value: Any, limit: int = 160) -> Any:
    """A JSON-ready value for a diagnostic: long strings cut, containers summarised."""
    if value is ABSENT:
        return "<absent>"
    if isinstance(value, str):
        if len(value) > limit:
            return f"{value[:limit]}… ({len(value)} characters)"
        return value
    if isinstance(value, (dict, list)):
        text = repr(value)
        if len(text) > limit:
            kind = "object" if isinstance(value, dict) else "array"
            return f"<{kind} of {len(value)} entries: {text[:limit]}…>"
        return clone(value)
    return value


# At most this many server_object_differs per terminal event (then one summary).
DIFF_LIMIT = 20


def both(ours: Any, theirs: Any) -> dict[str, Any]:
    """The two sides of a difference for a diagnostic's extra: whole values (JSON copies).

    A side that has no such key or index is ``"<absent>"``, and ``absent`` names it.
    """
    out = {"ours": preview(ours, 0) if ours is ABSENT else clone(ours),
           "theirs": preview(theirs, 0) if theirs is ABSENT else clone(theirs)}
    if ours is ABSENT or theirs is ABSENT:
        out["absent"] = "ours" if ours is ABSENT else "theirs"
    return out


def say(value: Any) -> str:
    """A value in a diagnostic's message: a string by its length and start."""
    if value is ABSENT:
        return "nothing"
    if isinstance(value, str):
        return f"{len(value)} characters {preview(value, 40)!r}"
    return repr(preview(value, 60))


def slot_of(path: tuple) -> tuple | None:
    """The slot address of a path inside ``output``."""
    if len(path) < 2 or path[0] != "output" or not isinstance(path[1], int):
        return None
    if len(path) >= 4 and path[2] in ("content", "summary") and isinstance(path[3], int):
        return (path[1], path[3]) if path[2] == "content" else (path[1], "summary", path[3])
    return (path[1],)


def _restated(path: tuple, ours: Any, theirs: Any, built: list[tuple], ours_out: list,
              theirs_out: list) -> bool:
    """Whether a difference is a restatement: one value for another (no side missing,
    neither a container) in a field no delta built, of the same item on both sides."""
    if len(path) < 3 or ours is ABSENT or theirs is ABSENT:
        return False
    if isinstance(ours, (dict, list)) or isinstance(theirs, (dict, list)):
        return False
    if any(path[:len(b)] == b or b[:len(path)] == path for b in built):
        return False
    mine, server = get_path(ours_out, path[1:2]), get_path(theirs_out, path[1:2])
    return (isinstance(mine, dict) and isinstance(server, dict)
            and mine.get("type") == server.get("type"))


class ServerComparison:
    """The accumulator's checks against the server's objects: its `items` and `note`."""

    def __init__(self, items: Iterable[Item], note: Callable[..., Any]) -> None:
        self.items = items
        self.note = note
        # A stream resumed mid-way lacks the deltas the first stream carried, so its
        # ``*.done`` statements differ from its own deltas as a rule.
        self.resumed = False
        self.restated: list[tuple[tuple, Any]] = []   # (path in output, the server's value)

    def differs(self, ev: WireEvent, path: tuple, ours: Any, theirs: Any) -> None:
        """A ``*.done`` event states another value than the deltas built (path in output):
        an error, since deltas were lost or changed on the way (a warning in a stream
        resumed mid-way, which never had the first stream's deltas)."""
        where = format_path(("output", *path))
        self.note("server_object_differs",
                  f"{where}: the deltas built {say(ours)}, but {ev.type} says {say(theirs)}; "
                  "the server's value is kept", event=ev,
                  severity="warning" if self.resumed else "error",
                  slot=slot_of(("output", *path)), path=where, against=ev.type,
                  **both(ours, theirs))

    def field_stated(self, ev: WireEvent, item: Item, path: tuple, theirs: str, *,
                     check: bool = True) -> None:
        """An item's string field stated whole: checked against what the deltas built
        (when `check`: a ``*.done``), and kept."""
        frags = item.texts.get(path)
        if check and frags is not None and frags.text != theirs:
            self.differs(ev, (item.index, *path), frags.text, theirs)
        item.texts[path] = Fragments(theirs)

    def check_streamed(self, ev: WireEvent, item: Item, done: dict) -> None:
        """What the deltas built against the server's item at its end."""
        for path, ours in item.streamed():
            theirs = get_path(done, path)
            if ours != theirs:
                self.differs(ev, (item.index, *path), ours, theirs)

    def compare_with_server(self, ev: WireEvent, resp: dict, started: dict | None) -> None:
        """Check our output items against the server's own, in the terminal event
        (`started`: the response as the lifecycle events stated it)."""
        for key in ("model", "created_at"):
            ours = (started or {}).get(key)
            theirs = resp.get(key)
            if ours is not None and theirs is not None and ours != theirs:
                self.note("server_object_differs", f"{key}: ours {ours!r}, the server's "
                          f"{theirs!r}", severity="warning", event=ev, path=key,
                          ours=ours, theirs=theirs)
        theirs_out = resp.get("output")
        if not isinstance(theirs_out, list):      # newer servers may leave it out
            return
        ours_out = [item.build() for item in self.items]
        self.fill_from(resp, ours_out)
        built = self._built_paths()
        shown = 0
        for path, a, b in differences(ours_out, theirs_out, ("output",)):
            if shown == DIFF_LIMIT:
                self.note("server_object_differs", f"more differences from {ev.type}'s response "
                          "not listed", severity="warning", event=ev)
                break
            shown += 1
            where = format_path(path)
            if _restated(path, a, b, built, ours_out, theirs_out):
                # Stated whole, never built by deltas (an item's id, a fingerprint):
                # the server's terminal word is final; the stream's events keep the
                # stream's id. Not a fault of the stream: a warning.
                self.restated.append((path, b))
                self.note("server_restated", f"{where}: the stream said {say(a)}, the "
                          f"server's {ev.type} says {say(b)}; the final object follows the "
                          "server", severity="warning", event=ev, slot=slot_of(path),
                          path=where, against=ev.type, **both(a, b))
                continue
            self.note("server_object_differs", f"{where}: ours is {say(a)}, the server's "
                      f"{ev.type} says {say(b)}", severity="warning", event=ev,
                      slot=slot_of(path), path=where, against=ev.type, **both(a, b))

    def _built_paths(self) -> list[tuple]:
        """The paths in ``output`` the deltas built (texts, arguments, annotations)."""
        return [("output", pos, *path) for pos, item in enumerate(self.items)
                for path, _ in item.streamed()]

    def follow_server(self, output: list[dict]) -> None:
        """Put the terminal response's restated values (`server_restated`) into `output`."""
        for path, theirs in self.restated:
            node: Any = output
            for step in path[1:-1]:
                node = get_path(node, (step,))
            if isinstance(node, dict):
                if theirs is ABSENT:
                    node.pop(path[-1], None)
                else:
                    node[path[-1]] = clone(theirs)

    def fill_from(self, terminal: dict, output: list[dict]) -> None:
        """What only the terminal `Response` knows about our items, taken from it.

        Opaque fields (``encrypted_content``, re-issued at the end) for every
        item; the ``status`` of an item that never got its ``output_item.done``
        (the server says how it ended: ``incomplete``, as a rule).
        """
        theirs = terminal.get("output")
        if not isinstance(theirs, list):
            return
        by_id = {t["id"]: t for t in theirs if isinstance(t, dict) and isinstance(t.get("id"), str)}
        undone = {it.id for it in self.items if it.done is None}
        for item in output:
            iid = item.get("id")
            match = by_id.get(iid) if isinstance(iid, str) else None
            if match is None:
                continue
            for key in OPAQUE_FIELDS:
                if key in match:
                    item[key] = clone(match[key])
            if iid in undone and "status" in match and "status" in item:
                item["status"] = match["status"]
