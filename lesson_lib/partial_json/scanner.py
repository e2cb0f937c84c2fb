"""The PartialJSON parser: what it shows, what is settled, copies, and the end of the text.

`feed` hands each fragment to the token readers (`lesson_lib.partial_json.tokens`),
which update the live value in place as they go; the `Change` list says what
was done. This module keeps the parser's state between fragments: the open
string as a list of pieces brought up to date when the value is read,
copies that borrow what is open until first used, and `finish`.

See `lesson_lib.partial_json` for the rules this implements.
"""

from __future__ import annotations

from json.decoder import scanstring as _scanstring
from typing import Any

from . import messages as msg
from .borrowed import Borrowed, own
from .settled import SettledPaths
from .tokens import (
    DONE,
    LITERAL,
    N_COMPLETE,
    N_FLOAT,
    N_START,
    NUMBER,
    STRING,
    STRING_STATES,
    VALUE,
    TokenReader,
)
from .values import NOTHING, Change, PartialJSONError, make_change, path_of


def _ignore(change: Change) -> None:
    """Where the changes go that are not reported (those `finish` makes)."""


class PartialJSON(TokenReader):
    """Parse one JSON value from fragments as they arrive; see `lesson_lib.partial_json`."""

    def __init__(self) -> None:
        self._state = VALUE
        self._stack: list[tuple[Any, tuple, bool, int]] = []  # (container, place, is_dict, at)
        self._root: Any = NOTHING
        self._offset = 0          # characters fed before the current fragment
        self._present = 0         # values present in the live value
        self._leaf: tuple | None = None  # place of the open string, or of a literal before its delimiter
        self._leaf_value: Any = None
        self._name = ""           # the object name whose value comes next
        self._in_name = False
        self._name_parts: list[str] = []
        self._pending: list[str] = []  # text of the open string not yet in self._text
        self._text = ""           # the open string as far as it is materialised
        # Once a copy was taken inside the open string, `_pending` is a log a copy reads:
        # only appended to, its first `_caught` pieces in `_text`, after `_base`.
        self._lent = False
        self._base = ""
        self._caught = 0
        self._borrowed: Borrowed | None = None   # a copy not used yet: what it reads
        self._slot: Any = None    # the container holding the open string (None: the root)
        self._slot_key: Any = None
        self._string_at = 0
        self._escape_at = 0
        self._hex_n = 0
        self._hex_v = 0
        self._high = 0            # a high-surrogate escape waiting for its low half
        self._num_state = N_START
        self._num_parts: list[str] = []
        self._num_at = 0
        self._lit_word = ""
        self._lit_value: Any = None
        self._lit_n = 0
        self._error: PartialJSONError | None = None
        self._finished = False
        self._settled = SettledPaths(self)
        self._run: list[str] = []   # the open string's text decoded in the current fragment
        self._add = _ignore         # where the current fragment's changes go

    # -- public ------------------------------------------------------------

    def feed(self, fragment: str) -> list[Change]:
        """Consume the next fragment of the text; return what it changed, in order.

        Raises PartialJSONError at the first character that can never become
        valid JSON; the parser then stays failed.
        """
        if self._error is not None:
            raise self._error.again()
        if self._finished:
            raise PartialJSONError("feed() after finish(): the text is complete; "
                                   "start a new PartialJSON for another value", self._offset)
        if not isinstance(fragment, str):
            raise TypeError(f"feed() takes str, not {type(fragment).__name__} "
                            "(decode bytes as UTF-8 first)")
        if self._borrowed is not None:
            self._own()
        if self._state == STRING and not self._in_name and fragment:
            # The common case for a long string argument: the whole fragment is string
            # text with whole escapes. The standard library's C string scanner decodes it;
            # anything else (the closing quote, a cut or bad escape, a high surrogate
            # that may pair with the next fragment) takes the general path below.
            try:
                piece, end = _scanstring(fragment + '"', 0, True)
            except ValueError:
                end = 0
            if end > len(fragment) and not "\ud800" <= piece[-1] <= "\udbff":
                self._pending.append(piece)
                self._offset += len(fragment)
                return [make_change(self._leaf, "append", piece)]
        changes: list[Change] = []
        try:
            self._scan(fragment, changes)
        except PartialJSONError as error:
            error.changes = changes
            self._error = error
            raise
        return changes

    @property
    def value(self) -> Any:
        """The value so far (NOTHING before any value began); a live structure, see the module."""
        if self._borrowed is not None:
            self._own()
        if self._pending:
            self._catch_up()
        return self._root

    @property
    def settled(self) -> SettledPaths:
        """The paths whose values can no longer change (a live, read-only set view)."""
        return self._settled

    @property
    def open_path(self) -> tuple | None:
        """The deepest path whose value may still change (its ancestors may too), or None
        when nothing is open: before any value began, or after `finish`."""
        place = self._open_place()
        return None if place is None else path_of(place)

    @property
    def settled_count(self) -> int:
        """How many values of `value` (the root and every descendant) can no longer change."""
        if self._open_place() is None:
            return self._present
        return self._present - len(self._stack) - (self._leaf is not None)

    def copy(self) -> PartialJSON:
        """A parser that goes on independently from where this one is; no recursion.

        Only the open containers and the open string, name or number can
        still change, and they only grow at their end (see
        `lesson_lib.partial_json.borrowed`). So the copy takes the stack (one
        chain from the root) and the size of each of them now, and shares
        everything else (closed values, numbers, strings, tuples, the error
        are never written to again). It makes its own containers and string,
        one level each, the first time it is fed or its value is read. So a
        copy costs the stack's depth, and a copy that is only ever copied
        again (a history checkpoint) never costs more, however long the
        array or string being built.
        """
        twin = PartialJSON.__new__(PartialJSON)
        twin.__dict__.update(vars(self))
        twin._borrowed = self._lend() if self._borrowed is None else self._borrowed
        twin._stack = list(self._stack)
        twin._pending, twin._name_parts, twin._num_parts, twin._run = [], [], [], []
        twin._text, twin._base, twin._lent, twin._caught = "", "", False, 0
        twin._root, twin._slot = NOTHING, None     # in `_borrowed` until the twin is used
        twin._settled = SettledPaths(twin)
        return twin

    def __deepcopy__(self, memo: dict) -> PartialJSON:
        twin = self.copy()
        memo[id(self)] = twin
        return twin

    def finish(self) -> Any:
        """The complete value, checked strictly (RFC 8259, unique names); idempotent."""
        if self._borrowed is not None:
            self._own()
        if self._error is not None:
            self._finished = True
            raise self._error.again()
        if self._finished:
            return self._root
        self._finished = True
        state = self._state
        if state == DONE:
            self._leaf = None
        elif state == NUMBER and not self._stack and self._num_state in N_COMPLETE:
            # A top-level number ends with the text: placed and settled here, and
            # (as the package says) not reported as changes.
            self._add = _ignore
            text = "".join(self._num_parts)
            self._end_number(None, self._offset, text, self._num_state in N_FLOAT)
            self._leaf = None
        else:
            self._error = PartialJSONError(self._why_incomplete(), self._offset)
            raise self._error
        return self._root

    # -- helpers -----------------------------------------------------------

    def _lend(self) -> Borrowed:
        """What a copy taken now reads from this parser; from now on the open
        string's pieces are a log that is only appended to."""
        string = self._state in STRING_STATES and not self._in_name
        if string and not self._lent:
            self._lent, self._base, self._caught = True, self._text, 0
        pending = self._pending
        return Borrowed(self._root, self._slot, tuple(len(entry[0]) for entry in self._stack),
                        string,
                        self._base if string else "", pending, len(pending),
                        self._name_parts, len(self._name_parts),
                        self._num_parts, len(self._num_parts))

    def _own(self) -> None:
        """A copy's first use: make its own open containers and string from what it borrowed."""
        borrowed = self._borrowed
        assert borrowed is not None
        self._borrowed = None
        self._stack, mine = own(self._stack, borrowed.sizes)
        self._root = mine.get(id(borrowed.root), borrowed.root)
        self._slot = None if borrowed.slot is None else mine[id(borrowed.slot)]
        if borrowed.string:
            text = self._text = borrowed.text()
            if self._slot is None:
                self._root = text
            else:
                self._slot[self._slot_key] = text
        self._name_parts = borrowed.names[:borrowed.names_n]
        self._num_parts = borrowed.digits[:borrowed.digits_n]

    def _catch_up(self) -> str:
        """Bring the open string's text up to date in the live value; return it.

        The text is extended with ``+=`` after dropping every reference the
        parser holds, so CPython can grow it in place: reading the value after
        each of n deltas costs the deltas, not n copies of the string. A lent
        log (see `copy`) is not cleared: what was caught up is counted instead.
        """
        pending = self._pending
        if self._lent:
            start = self._caught
            if start == len(pending):
                return self._text
            addition = pending[start] if start + 1 == len(pending) else "".join(pending[start:])
            self._caught = len(pending)
        elif not pending:
            return self._text
        else:
            addition = pending[0] if len(pending) == 1 else "".join(pending)
            pending.clear()
        slot, key = self._slot, self._slot_key
        text = self._text
        self._text = ""
        if slot is None:
            self._root = ""
        else:
            slot[key] = ""
        text += addition
        self._text = text
        if slot is None:
            self._root = text
        else:
            slot[key] = text
        return text

    def _why_incomplete(self) -> str:
        state = self._state
        if self._root is NOTHING and state == VALUE and not self._stack and not self._num_parts:
            return msg.empty()
        if state in STRING_STATES:
            kind = "name" if self._in_name else "string"
            return msg.ends_early(f"inside the {kind} that opened at character {self._string_at}")
        if state in (NUMBER, LITERAL):
            return msg.ends_early("inside a number" if state == NUMBER else
                                  f"inside {self._lit_word!r}")
        if not self._stack:
            return msg.empty()
        _, _, is_dict, at = self._stack[-1]
        kind, closer = ("object", "}") if is_dict else ("array", "]")
        return msg.ends_early(f"before the {kind} opened at character {at} was closed "
                              f"with '{closer}'")

    def _open_place(self) -> tuple | None:
        """The deepest place still open (its ancestors are open too), or None."""
        if self._finished and self._error is None:
            return None
        if self._leaf is not None:
            return self._leaf
        if self._stack:
            return self._stack[-1][1]
        return None
