"""`ToolCallView`: one tool call at one moment, immutable (what `tool_calls()` returns)."""

from __future__ import annotations

from dataclasses import dataclass, field
from functools import cached_property
from typing import Any

from ..partial_json import Change, FixedChain, SettledPaths
from .paths import is_present
from .states import CallError, ToolCallState


@dataclass(frozen=True, eq=False)
class ToolCallView:
    """A tool call at one moment, immutable: what `Accumulator.tool_calls()` returns.

    `value` shares every settled part with the call (settled values never
    change) and has its own copies of the containers that were still open;
    treat it as read-only. `open_path` is the deepest path still open (None:
    nothing open). `raw` is joined on demand from the fragments that had
    arrived; `raw_length` and `raw_tail` cost nothing like that. `ended_by` is
what its wire says will make the call final (`ToolCall`), None where not said.
    """

    name: str
    call_id: str | None
    kind: str
    address: Any
    state: ToolCallState
    value: Any
    open_path: tuple | None
    changes: tuple[Change, ...]
    raw_length: int
    fragments: int
    error: CallError | None
    structured: bool = False
    was_cut: bool = False
    ended: bool = False
    start_t: float | None = None
    start_event: int | None = None
    last_t: float | None = None
    last_event: int | None = None
    end_event: int | None = None
    ended_by: str | None = None      # what makes it final, in its wire's words
    _parts: list[str] = field(default_factory=list, repr=False)
    _count: int = field(default=0, repr=False)
    _settled_count: int | None = field(default=None, repr=False)   # None: count on demand

    @property
    def raw(self) -> str:
        """The argument text that had arrived."""
        return "".join(self._parts[:self._count])

    def raw_fragments(self) -> list[str]:
        """The argument fragments that had arrived, in order (a new list)."""
        return self._parts[:self._count]

    def raw_tail(self, limit: int) -> tuple[str, int]:
        """The last `limit` characters of the raw text, and how many come before them."""
        pieces, have = [], 0
        for i in range(self._count - 1, -1, -1):
            if have >= limit:
                break
            pieces.append(self._parts[i])
            have += len(self._parts[i])
        tail = "".join(reversed(pieces))
        if len(tail) > limit:
            tail = tail[-limit:]
        return tail, self.raw_length - len(tail)

    def is_settled(self, path: tuple) -> bool:
        """Whether the value at `path` is present and can no longer change."""
        if not is_present(self.value, path):
            return False
        open_path = self.open_path
        return open_path is None or path != open_path[:len(path)]

    @cached_property
    def settled(self) -> SettledPaths:
        """Every settled path, as a read-only set view (nothing is built up front).

        Membership costs the path's length; `len` is O(1) after one count of
        the value's paths; iterating builds every path, so it costs the total
        length of the paths (a value nested N deep: N squared over 2).
        """
        return SettledPaths(FixedChain(self.value, self.open_path, self._settled_count))

    def settled_keys(self) -> list:
        """The top-level keys (or indices) whose values are settled, in order."""
        value = self.value
        if type(value) is dict:
            return [k for k in value if self.is_settled((k,))]
        if type(value) is list:
            return [i for i in range(len(value)) if self.is_settled((i,))]
        return []
