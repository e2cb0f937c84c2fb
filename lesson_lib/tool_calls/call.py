"""`ToolCall`: one tool call as it forms, from its identity to its wire's end.

See `lesson_lib.tool_calls` for the states and for what is shared between
a call, its views and its copies.
"""

from __future__ import annotations

import copy
from typing import Any

from ..partial_json import NOTHING, Change, FixedChain, PartialJSON, PartialJSONError, SettledPaths
from .checkpoints import is_checkpoint_copy
from .paths import copy_open_chain, open_path_of
from .states import CallError, ToolCallState
from .view import ToolCallView


class ToolCall:
    """One tool call as it forms: identity first, then arguments fragment by fragment.

    `name` and `call_id` are known from the call's first event (a wire that
    sends the name in pieces may extend `name`). `kind` is the wire's word
    for it (``tool_use``, ``function_call``, ``function``, ``structured
    output``...), `address` where the wire put it (block index, output index,
    ``(choice, n)``). With ``json_arguments=False`` (a custom tool's free-form
    input) the text is not parsed: its value is the text. `given` is a value
    the call's start already carried (used when no fragment arrives).
    `ended_by` names, in the wire's words, what will make the call final (its
    block's stop, its arguments' ``.done``, the choice's ``finish_reason``):
    the accumulator says it from its wire's module, so a view need not know wires.
    `t` and `event` (here and in `feed`, `end`) are the arrival time in ms
    and the event index, kept for views (pauses, counters); never read from
    a clock.
    """

    def __init__(self, name: str | None = None, call_id: str | None = None, *,
                 kind: str = "tool_use", address: Any = None, json_arguments: bool = True,
                 given: Any = NOTHING, t: float | None = None, event: int | None = None,
                 structured: bool = False, ended_by: str | None = None) -> None:
        self.name = name or ""
        self.ended_by = ended_by
        self.call_id = call_id
        self.kind = kind
        self.address = address
        self.structured = structured
        self.given = given
        self.json_arguments = json_arguments
        self._parser: PartialJSON | None = PartialJSON() if json_arguments else None
        self._parts: list[str] = []      # append-only: views read a prefix of it
        self._shared_count: int | None = None   # a checkpoint's: how many of `_parts` are its
        self._length = 0
        self._blank = True               # only whitespace so far
        self._changes: list[Change] = []
        self._state: ToolCallState = "forming"
        self._error: CallError | None = None
        self._final: Any = NOTHING       # the value once the parser is dropped
        self._final_open: tuple | None = None
        self.scanned = 0                 # characters handed to the parser
        self.ignored = 0                 # fragments that arrived after the end
        self.restated = False            # the wire's end stated other text than the fragments
        self._cut_invalid = False        # invalid, and then the stream ended before the end
        self._ended = False              # the wire (or the stream) ended the call
        self.start_t, self.start_event = t, event
        self.last_t: float | None = None
        self.last_event: int | None = None
        self.end_event: int | None = None

    # -- feeding -----------------------------------------------------------------

    def feed(self, fragment: str, *, t: float | None = None,
             event: int | None = None) -> list[Change]:
        """Take the next argument fragment; return what it changed (empty when invalid).

        Never raises on bad JSON: the first impossible character makes the
        call ``invalid`` at once, and later fragments are still collected as
        raw text. A fragment after the end is counted in `ignored` and not used.
        """
        if self._ended:
            self.ignored += 1
            return []
        self._parts.append(fragment)
        self._length += len(fragment)
        self.last_t, self.last_event = t, event
        if self._blank and fragment and not fragment.isspace():
            self._blank = False
        parser = self._parser
        if parser is None:                      # invalid already, or free-form text
            self._changes = []
            return []
        self.scanned += len(fragment)
        try:
            changes = parser.feed(fragment)
        except PartialJSONError as error:
            changes = error.changes
            self._fail(error)
        self._changes = changes
        return changes

    def end(self, final_text: str | None = None, *, t: float | None = None,
            event: int | None = None) -> None:
        """The wire ended the call: check the text strictly (complete or invalid).

        `final_text` is the whole text where the wire states it at the end
        (Responses ``arguments.done``); if it differs from the fragments, it
        wins, and `restated` says so. Idempotent.
        """
        if self._ended:
            return
        self._ended = True
        self.end_event = event
        if final_text is not None and final_text != self.raw:
            self._restate(final_text)
        if not self.json_arguments:
            self._freeze("complete", self.raw, None)
            return
        if self._state == "invalid":
            return
        if self._blank:
            self._freeze("complete", {} if self.given is NOTHING else self.given, None)
            return
        parser = self._parser
        assert parser is not None
        try:
            value = parser.finish()
        except PartialJSONError as error:
            self._fail(error)
            return
        self._freeze("complete", value, None)

    def cut(self, *, event: int | None = None) -> None:
        """The stream ended before the wire ended the call: keep what arrived."""
        if self._ended:
            return
        self._ended = True
        self.end_event = event
        if self._state == "invalid":
            self._cut_invalid = True
            return
        if self._blank:
            self._freeze("cut", {} if self.given is NOTHING else self.given, None)
            return
        if not self.json_arguments:
            self._freeze("cut", self.raw, ())
            return
        parser = self._parser
        assert parser is not None
        value = _with_trailing_number(parser, self._parts)
        self._freeze("cut", value, open_path_of(value, parser.settled))

    # -- reading -----------------------------------------------------------------

    @property
    def state(self) -> ToolCallState:
        """``forming``, ``complete``, ``invalid`` or ``cut`` (see the module)."""
        return self._state

    @property
    def ended(self) -> bool:
        """Whether the wire ended the call, or the stream did."""
        return self._ended

    @property
    def was_cut(self) -> bool:
        """True when the stream ended before the wire ended the call (also when invalid)."""
        return self._state == "cut" or self._cut_invalid

    @property
    def error(self) -> CallError | None:
        """Where and why the text is not JSON (None unless ``invalid``)."""
        return self._error

    @property
    def raw(self) -> str:
        """The argument text so far, exactly as it arrived (joined on demand)."""
        return "".join(self._parts)

    @property
    def raw_length(self) -> int:
        """How many characters of argument text arrived (O(1))."""
        return self._length

    @property
    def fragments(self) -> int:
        """How many fragments arrived (empty ones included)."""
        return len(self._parts)

    @property
    def value(self) -> Any:
        """The value so far: NOTHING before any value began; ``{}`` for empty text at
        the end. While forming this is the parser's live structure: read it, copy
        it to keep it (or take a `view`)."""
        if self._parser is not None and self._state == "forming":
            return self._parser.value
        if not self.json_arguments and self._state == "forming":
            return self.raw if self._parts else NOTHING     # free-form text: the text
        return self._final

    @property
    def settled(self) -> SettledPaths:
        """The paths whose values can no longer change: a set view, live while forming
        (see `ToolCallView.settled` for what its operations cost)."""
        if self._parser is not None and self._state == "forming":
            return self._parser.settled
        return SettledPaths(FixedChain(self._final, self._final_open))

    @property
    def changes(self) -> list[Change]:
        """What the last fragment changed (set, append, settle), in order."""
        return self._changes

    @property
    def input(self) -> Any:
        """The value for the provider's final object: the value, ``{}`` before any
        arrived, None when nothing valid arrived at all."""
        value = self.value
        if value is NOTHING:
            return {} if not self.ended or self._blank else None
        return value

    def view(self) -> ToolCallView:
        """An immutable snapshot of the call now (what `tool_calls()` returns)."""
        count = None
        if self._parser is not None and self._state == "forming":
            live = self._parser.value
            open_path = self._parser.open_path
            value = copy_open_chain(live, open_path)
            count = self._parser.settled_count
        elif not self.json_arguments and self._state == "forming":
            value, open_path = self.value, ()
        else:
            value, open_path = self._final, self._final_open
        return ToolCallView(
            name=self.name, call_id=self.call_id, kind=self.kind, address=self.address,
            state=self._state, value=value, open_path=open_path,
            changes=tuple(self._changes), raw_length=self._length, fragments=len(self._parts),
            error=self._error, structured=self.structured, was_cut=self.was_cut,
            ended=self._ended,
            start_t=self.start_t, start_event=self.start_event, last_t=self.last_t,
            last_event=self.last_event, end_event=self.end_event, ended_by=self.ended_by,
            _parts=self._parts, _count=len(self._parts), _settled_count=count)

    def __deepcopy__(self, memo: dict) -> ToolCall:
        """A copy for a history checkpoint, made without recursion, however deep the value.

        What can no longer change is shared, not copied: an ended call's value
        (`value` after `end` or `cut`: nothing writes to it again, see "Sharing"
        in the module), the value the start gave, and the `Change` objects of the
        last fragment. A forming call's parser copies itself (`PartialJSON.copy`):
        the copy shares the open containers and string, keeping their sizes, and
        makes its own (one level each) when first fed or read. The fragment list is copied
        (one pointer per fragment); views taken earlier keep the original list. In
        a checkpoint copy (`lesson_lib.tool_calls.checkpoints`: read-only, only ever copied
        again) the list is shared with its length instead, O(1).
        """
        twin = copy.copy(self)
        memo[id(self)] = twin
        shared = self._shared_count
        if is_checkpoint_copy(memo):
            # Append-only: a checkpoint keeps the list itself and how many it had.
            twin._shared_count = len(self._parts) if shared is None else shared
        else:
            twin._parts = self._parts[:shared] if shared is not None else list(self._parts)
            twin._shared_count = None
        twin._changes = list(self._changes)
        if self._parser is not None:
            twin._parser = self._parser.copy()
        return twin

    def __repr__(self) -> str:
        return (f"ToolCall({self.name!r}, {self.call_id!r}, state={self._state!r}, "
                f"{self._length} characters in {len(self._parts)} fragments)")

    # -- inside ------------------------------------------------------------------

    def _fail(self, error: PartialJSONError) -> None:
        parser = self._parser
        assert parser is not None
        value = parser.value
        self._error = CallError(error.position, error.message)
        # A failed parser stays failed; keep what it had built and drop it.
        self._freeze("invalid", value, parser.open_path)

    def _freeze(self, state: ToolCallState, value: Any, open_path: tuple | None) -> None:
        self._state = state
        self._final = value
        self._final_open = open_path
        self._parser = None

    def _restate(self, text: str) -> None:
        self.restated = True
        self._parts = [text]            # a new list: views of the old one stay right
        self._length = len(text)
        self._blank = not text or text.isspace()
        self._error = None
        self._state = "forming"
        if self.json_arguments:
            self._parser = PartialJSON()
            self.scanned += len(text)
            try:
                self._changes = self._parser.feed(text)
            except PartialJSONError as error:
                self._changes = error.changes
                self._fail(error)


def _with_trailing_number(parser: PartialJSON, parts: list[str]) -> Any:
    """The value of a cut text, with a number whose digits had all arrived.

    The parser shows a number only at the delimiter after it (``1`` may
    become ``12``). When the stream is cut right after the digits, they are
    what arrived: a second parser, fed the same text and then one space,
    says whether a number completes (inside a string or a name the space is
    just text and sets nothing). Called once, at the cut, and only when the
    text ends with a digit.
    """
    last = next((p for p in reversed(parts) if p), "")
    if not last[-1:].isdigit():
        return parser.value
    twin = PartialJSON()
    try:
        for piece in parts:
            twin.feed(piece)
        changes = twin.feed(" ")
    except PartialJSONError:
        return parser.value
    if any(c.op == "set" for c in changes):
        return twin.value
    return parser.value


def partial_value(raw: str) -> Any:
    """The value a call's raw text had formed, as for a call cut there.

    Empty (or blank) text is ``{}``; text with nothing usable is None. Text
    that can never be JSON gives what was valid before the first impossible
    character.
    """
    call = ToolCall()
    call.feed(raw)
    call.cut()
    return call.input
