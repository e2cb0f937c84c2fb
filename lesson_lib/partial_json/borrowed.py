"""What a copy of a parser reads from the one it was taken from, until it is used.

A copy taken mid-stream (`PartialJSON.copy`, what a history checkpoint
makes) needs the state at that moment, but most of that state is only ever
added to afterwards, so the copy can point at it and remember how much of
it was there:

- an open container (on the stack) gets new entries at its end; of its
  first entries only the last may still change, and only when it is the
  open child (a container on the stack too, or the open string);
- the open string's pieces, once lent, are a log that is only appended to
  (`PartialJSON` stops clearing it), and the text before the log is an
  immutable ``str``;
- the pieces of an open name or number are appended to, then replaced by a
  new list.

So a copy costs the depth of the stack, not the size of what is open, and
memory for a chain of copies stays linear: none of them holds a copy of a
long array, or a ``str`` of the open string at its own moment. The copy
makes its own containers and string (`own`) the first time it is fed or its
value is read: once, at the cost of what is open then.
"""

from __future__ import annotations

from dataclasses import dataclass
from itertools import islice
from typing import Any


@dataclass(frozen=True)
class Borrowed:
    """How much of its parent's open structures a copy holds.

    `root` and `slot`: the value's root and the container holding the open
    string (None for none, or for a string at the top), as the parent has
    them; `sizes`: the length of each container on the stack, root first; `string`:
    whether a value string is open, and then its text is `base` followed by
    the first `log_n` pieces of `log`; `names` and `digits`: the first
    `names_n` and `digits_n` pieces of an open name and an open number.
    """

    root: Any
    slot: Any
    sizes: tuple[int, ...]
    string: bool
    base: str
    log: list[str]
    log_n: int
    names: list[str]
    names_n: int
    digits: list[str]
    digits_n: int

    def text(self) -> str:
        """The open string's text at the copy's moment (joined now)."""
        return self.base + "".join(self.log[:self.log_n])


def own(stack: list[tuple[Any, tuple, bool, int]], sizes: tuple[int, ...]
        ) -> tuple[list[tuple[Any, tuple, bool, int]], dict[int, Any]]:
    """Copies of the stack's containers at the given sizes, each linked into its parent.

    Returns the new stack and a map from each borrowed container's id to its
    copy. One level each, no recursion: every entry but an open child's is
    settled and shared.
    """
    mine: dict[int, Any] = {}
    out = []
    above: Any = None
    for (container, place, is_dict, at), size in zip(stack, sizes, strict=True):
        copied = dict(islice(container.items(), size)) if is_dict else container[:size]
        mine[id(container)] = copied
        if above is not None:
            above[place[1]] = copied      # the open child is its parent's last entry
        out.append((copied, place, is_dict, at))
        above = copied
    return out, mine
