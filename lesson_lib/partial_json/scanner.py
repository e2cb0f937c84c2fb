"""The PartialJSON state machine: one pass over each fragment, a stack instead of recursion.

The parser is in exactly one state between two characters (`_VALUE`,
`_STRING`, `_NUMBER`, ...). `feed` walks a fragment once: plain runs inside
strings, and numbers and literals that arrive whole, are taken a slice at a
time (a regex or ``str.startswith``), everything else one character at a time. The live value
is updated in place as it goes; the `Change` list says what was done.

See `lesson_lib.partial_json` for the rules this implements.
"""

from __future__ import annotations

import re
from json.decoder import scanstring as _scanstring
from typing import Any

from . import messages as msg
from .borrowed import Borrowed, own
from .settled import SettledPaths
from .values import NOTHING, Change, PartialJSONError, make_change, path_of

# The states between two characters.
_VALUE = 0           # a value is due: at the start, after ':', after ',' in an array
_VALUE_OR_CLOSE = 1  # just after '[': a value or ']'
_NAME_OR_CLOSE = 2   # just after '{': a name or '}'
_NAME = 3            # after ',' in an object: a name
_COLON = 4           # after a name: ':'
_AFTER = 5           # after a value in a container: ',' or the closing bracket
_DONE = 6            # after the top-level value: whitespace only
_STRING = 7          # inside a string (a value, or a name when _in_name)
_ESCAPE = 8          # after a backslash
_UNICODE = 9         # inside \uXXXX
_LOW_BACKSLASH = 10  # after a high-surrogate escape: a '\' may start its low half
_LOW_U = 11          # ... and a 'u' after that '\'
_NUMBER = 12         # inside a number that crossed a fragment or needs checking
_NUMBER_END = 13     # a number is complete; the next character decides
_LITERAL = 14        # inside true, false or null

_STRING_STATES = (_STRING, _ESCAPE, _UNICODE, _LOW_BACKSLASH, _LOW_U)
_WHITESPACE = " \t\n\r"

_plain_run = re.compile(r'[^"\\\x00-\x1f]*').match
# A whole number; the group count tells an int (1 group matched) from a float.
_number = re.compile(r"(-?(?:0|[1-9][0-9]*))(\.[0-9]+)?([eE][-+]?[0-9]+)?").match
_NUMBER_CHARS = frozenset("0123456789.eE+-")

_ESCAPES = {'"': '"', "\\": "\\", "/": "/", "b": "\b", "f": "\f", "n": "\n", "r": "\r", "t": "\t"}
_HEX = {c: int(c, 16) for c in "0123456789abcdefABCDEF"}
_LITERALS = {"t": ("true", True), "f": ("false", False), "n": ("null", None)}

# Number states: where a number is, character by character.
(_N_START, _N_MINUS, _N_ZERO, _N_INT, _N_DOT, _N_FRAC, _N_E, _N_ESIGN, _N_EXP) = range(9)
_N_COMPLETE = frozenset((_N_ZERO, _N_INT, _N_FRAC, _N_EXP))
_N_FLOAT = frozenset((_N_FRAC, _N_EXP))
_N_NAMES = {_N_MINUS: "minus", _N_DOT: "dot", _N_E: "exponent", _N_ESIGN: "exponent"}


def _number_steps() -> list[dict[str, int]]:
    digits = "0123456789"
    steps: list[dict[str, int]] = [{} for _ in range(9)]
    steps[_N_START] = {"-": _N_MINUS, "0": _N_ZERO, **{d: _N_INT for d in digits[1:]}}
    steps[_N_MINUS] = {"0": _N_ZERO, **{d: _N_INT for d in digits[1:]}}
    steps[_N_ZERO] = {".": _N_DOT, "e": _N_E, "E": _N_E}
    steps[_N_INT] = {".": _N_DOT, "e": _N_E, "E": _N_E, **{d: _N_INT for d in digits}}
    steps[_N_DOT] = {d: _N_FRAC for d in digits}
    steps[_N_FRAC] = {"e": _N_E, "E": _N_E, **{d: _N_FRAC for d in digits}}
    steps[_N_E] = {"+": _N_ESIGN, "-": _N_ESIGN, **{d: _N_EXP for d in digits}}
    steps[_N_ESIGN] = {d: _N_EXP for d in digits}
    steps[_N_EXP] = {d: _N_EXP for d in digits}
    return steps


_NUMBER_STEPS = _number_steps()


class PartialJSON:
    """Parse one JSON value from fragments as they arrive; see `lesson_lib.partial_json`."""

    def __init__(self) -> None:
        self._state = _VALUE
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
        self._num_state = _N_START
        self._num_parts: list[str] = []
        self._num_at = 0
        self._lit_word = ""
        self._lit_value: Any = None
        self._lit_n = 0
        self._error: PartialJSONError | None = None
        self._finished = False
        self._settled = SettledPaths(self)

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
        if self._state == _STRING and not self._in_name and fragment:
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
        twin._pending, twin._name_parts, twin._num_parts = [], [], []
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
        if state == _DONE:
            self._leaf = None
        elif state == _NUMBER and not self._stack and self._num_state in _N_COMPLETE:
            text = "".join(self._num_parts)
            self._root = self._to_number(text, self._num_state in _N_FLOAT, self._num_at)
            self._present += 1
            self._state = _DONE
        else:
            self._error = PartialJSONError(self._why_incomplete(), self._offset)
            raise self._error
        return self._root

    # -- helpers -----------------------------------------------------------

    def _lend(self) -> Borrowed:
        """What a copy taken now reads from this parser; from now on the open
        string's pieces are a log that is only appended to."""
        string = self._state in _STRING_STATES and not self._in_name
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

    def _to_number(self, text: str, is_float: bool, at: int) -> Any:
        if is_float:
            return float(text)
        try:
            return int(text)
        except ValueError:
            raise PartialJSONError(msg.too_many_digits(len(text.lstrip("-"))), at) from None

    def _why_incomplete(self) -> str:
        state = self._state
        if self._root is NOTHING and state == _VALUE and not self._stack and not self._num_parts:
            return msg.empty()
        if state in _STRING_STATES:
            kind = "name" if self._in_name else "string"
            return msg.ends_early(f"inside the {kind} that opened at character {self._string_at}")
        if state in (_NUMBER, _LITERAL):
            return msg.ends_early("inside a number" if state == _NUMBER else
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

    # -- the scanner ---------------------------------------------------------

    def _scan(self, text: str, changes: list[Change]) -> None:
        # One loop with the states inline and the hot state in locals: a method call per
        # token would cost more than the token.
        n = len(text)
        i = 0
        base = self._offset
        state = self._state
        stack = self._stack
        if stack:
            top, top_place, top_is_dict, _ = stack[-1]
        else:
            top, top_place, top_is_dict = None, (), False
        leaf = self._leaf
        leaf_value = self._leaf_value
        name = self._name
        pending = self._pending
        present = self._present
        run: list[str] = []  # decoded text of the open string in this fragment
        add = changes.append
        number_text = ""
        number_is_float = False
        try:
            while i < n:
                if state == _STRING:
                    j = _plain_run(text, i).end()
                    if j == n:
                        run.append(text[i:] if i else text)
                        i = n
                        break
                    c = text[j]
                    if j > i:
                        run.append(text[i:j])
                    if c == '"':
                        i = j + 1
                        piece = run[0] if len(run) == 1 else "".join(run)
                        run = []
                        if self._in_name:
                            if self._name_parts:
                                self._name_parts.append(piece)
                                piece = "".join(self._name_parts)
                                self._name_parts = []
                            if piece in top:
                                raise PartialJSONError(msg.duplicate_name(piece, stack[-1][3]),
                                                       base + j)
                            name = piece
                            state = _COLON
                            continue
                        if piece:
                            pending.append(piece)
                            add(make_change(leaf, "append", piece))
                        final = self._catch_up() if pending else self._text
                        self._text = ""
                        self._slot = self._slot_key = None
                        if self._lent:   # copies keep the log; the next string gets a new one
                            pending = self._pending = []
                            self._lent, self._base, self._caught = False, "", 0
                        add(make_change(leaf, "settle", final))
                        leaf = None
                        state = _AFTER if stack else _DONE
                        continue
                    i = j
                    if c == "\\":
                        decoded = _ESCAPES.get(text[i + 1]) if i + 1 < n else None
                        if decoded is not None:  # a whole short escape: no detour via _ESCAPE
                            run.append(decoded)
                            i += 2
                            continue
                        self._escape_at = base + i
                        state = _ESCAPE
                        i += 1
                        continue
                    raise PartialJSONError(msg.control_character(c), base + i)

                if state == _AFTER:
                    c = text[i]
                    if c == ",":
                        if leaf is not None:
                            add(make_change(leaf, "settle", leaf_value))
                            leaf = None
                        state = _NAME if top_is_dict else _VALUE
                        i += 1
                    elif c == ("}" if top_is_dict else "]"):
                        if leaf is not None:
                            add(make_change(leaf, "settle", leaf_value))
                            leaf = None
                        add(make_change(top_place, "settle", top))
                        stack.pop()
                        i += 1
                        if stack:
                            top, top_place, top_is_dict, _ = stack[-1]
                        else:
                            top, top_place, top_is_dict = None, (), False
                            state = _DONE
                    elif c in _WHITESPACE:
                        if leaf is not None:
                            add(make_change(leaf, "settle", leaf_value))
                            leaf = None
                        i += 1
                    else:
                        raise PartialJSONError(
                            msg.expected_after(c, "}" if top_is_dict else "]"), base + i)
                    continue

                if state <= _VALUE_OR_CLOSE:
                    c = text[i]
                    if c in _WHITESPACE:
                        i += 1
                        continue
                    if c == "]" and state == _VALUE_OR_CLOSE:
                        add(make_change(top_place, "settle", top))
                        stack.pop()
                        i += 1
                        if stack:
                            top, top_place, top_is_dict, _ = stack[-1]
                            state = _AFTER
                        else:
                            top, top_place, top_is_dict = None, (), False
                            state = _DONE
                        continue
                    if top is None:
                        place: tuple = ()
                    elif top_is_dict:
                        place = (top_place, name)
                    else:
                        place = (top_place, len(top))
                    if c == '"':
                        if top is None:
                            self._root = ""
                        elif top_is_dict:
                            top[name] = ""
                        else:
                            top.append("")
                        self._slot, self._slot_key = top, place[1] if place else None
                        self._text = ""
                        self._in_name = False
                        self._string_at = base + i
                        add(make_change(place, "set", ""))
                        present += 1
                        leaf = place
                        state = _STRING
                        i += 1
                        continue
                    if c == "{" or c == "[":
                        is_dict = c == "{"
                        container: Any = {} if is_dict else []
                        if top is None:
                            self._root = container
                        elif top_is_dict:
                            top[name] = container
                        else:
                            top.append(container)
                        add(make_change(place, "set", {} if is_dict else []))
                        present += 1
                        stack.append((container, place, is_dict, base + i))
                        top, top_place, top_is_dict = container, place, is_dict
                        state = _NAME_OR_CLOSE if is_dict else _VALUE_OR_CLOSE
                        i += 1
                        continue
                    if c in "-0123456789":
                        m = _number(text, i)
                        if m is not None and m.end() < n and text[m.end()] not in _NUMBER_CHARS:
                            number_text = m.group()
                            number_is_float = m.lastindex != 1
                            self._num_at = base + i
                            i = m.end()
                            state = _NUMBER_END
                        else:
                            self._num_state = _N_START
                            self._num_parts = []
                            self._num_at = base + i
                            state = _NUMBER
                        continue
                    literal = _LITERALS.get(c)
                    if literal is not None:
                        word, value = literal
                        if text.startswith(word, i):
                            i += len(word)
                        else:
                            self._lit_word, self._lit_value, self._lit_n = word, value, 0
                            state = _LITERAL
                            continue
                    elif c == "]" and top is not None and not top_is_dict:
                        raise PartialJSONError(msg.trailing_comma_in_array(), base + i)
                    else:
                        where = "here" if top is None else (
                            "after ':'" if top_is_dict else "in this array")
                        raise PartialJSONError(msg.expected_value(c, where), base + i)
                    # a literal that came whole: it is complete; it settles at its delimiter
                    if top is None:
                        self._root = value
                    elif top_is_dict:
                        top[name] = value
                    else:
                        top.append(value)
                    add(make_change(place, "set", value))
                    present += 1
                    leaf, leaf_value = place, value
                    state = _AFTER if stack else _DONE
                    continue

                if state == _NAME_OR_CLOSE or state == _NAME:
                    c = text[i]
                    if c == '"':
                        self._in_name = True
                        self._string_at = base + i
                        state = _STRING
                        i += 1
                    elif c in _WHITESPACE:
                        i += 1
                    elif c == "}" and state == _NAME_OR_CLOSE:
                        add(make_change(top_place, "settle", top))
                        stack.pop()
                        i += 1
                        if stack:
                            top, top_place, top_is_dict, _ = stack[-1]
                            state = _AFTER
                        else:
                            top, top_place, top_is_dict = None, (), False
                            state = _DONE
                    else:
                        raise PartialJSONError(msg.expected_name(c, state == _NAME), base + i)
                    continue

                if state == _COLON:
                    c = text[i]
                    if c == ":":
                        state = _VALUE
                    elif c not in _WHITESPACE:
                        raise PartialJSONError(msg.expected_colon(c, name), base + i)
                    i += 1
                    continue

                if state == _NUMBER_END:
                    # The character after a complete number: a delimiter settles it.
                    c = text[i]
                    closer = None if top is None else ("}" if top_is_dict else "]")
                    if not (c in _WHITESPACE or (closer is not None and (c == "," or c == closer))):
                        raise PartialJSONError(msg.expected_after(c, closer, "a number"), base + i)
                    value = self._to_number(number_text, number_is_float, self._num_at)
                    if top is None:
                        self._root = value
                        place = ()
                    elif top_is_dict:
                        top[name] = value
                        place = (top_place, name)
                    else:
                        place = (top_place, len(top))
                        top.append(value)
                    add(make_change(place, "set", value))
                    add(make_change(place, "settle", value))
                    present += 1
                    state = _AFTER if stack else _DONE
                    continue

                if state == _NUMBER:
                    steps = _NUMBER_STEPS
                    ns = self._num_state
                    start = i
                    while i < n:
                        following = steps[ns].get(text[i])
                        if following is None:
                            break
                        ns = following
                        i += 1
                    if i > start:
                        self._num_parts.append(text[start:i])
                    self._num_state = ns
                    if i == n:
                        break
                    c = text[i]
                    if ns not in _N_COMPLETE:
                        raise PartialJSONError(msg.bad_number(c, _N_NAMES[ns]), base + i)
                    if ns == _N_ZERO and c in "0123456789":
                        raise PartialJSONError(msg.leading_zero(c), base + i)
                    number_text = "".join(self._num_parts)
                    number_is_float = ns in _N_FLOAT
                    self._num_parts = []
                    state = _NUMBER_END
                    continue

                if state == _ESCAPE:
                    c = text[i]
                    decoded = _ESCAPES.get(c)
                    if decoded is not None:
                        run.append(decoded)
                        state = _STRING
                    elif c == "u":
                        self._hex_n = self._hex_v = 0
                        state = _UNICODE
                    else:
                        raise PartialJSONError(msg.bad_escape(c), base + i)
                    i += 1
                    continue

                if state == _UNICODE:
                    c = text[i]
                    digit = _HEX.get(c)
                    if digit is None:
                        raise PartialJSONError(msg.bad_hex(c), base + i)
                    i += 1
                    self._hex_v = self._hex_v * 16 + digit
                    self._hex_n += 1
                    if self._hex_n < 4:
                        continue
                    code, high = self._hex_v, self._high
                    if high:
                        self._high = 0
                        if 0xDC00 <= code <= 0xDFFF:
                            run.append(chr(0x10000 + ((high - 0xD800) << 10) + (code - 0xDC00)))
                            state = _STRING
                            continue
                        run.append(chr(high))
                    if 0xD800 <= code <= 0xDBFF:
                        # Hold it: a low surrogate escape may follow and join it (as json.loads does).
                        self._high = code
                        state = _LOW_BACKSLASH
                    else:
                        run.append(chr(code))
                        state = _STRING
                    continue

                if state == _LOW_BACKSLASH:
                    if text[i] == "\\":
                        self._escape_at = base + i
                        state = _LOW_U
                        i += 1
                    else:  # a lone high surrogate; the character is read again as string text
                        run.append(chr(self._high))
                        self._high = 0
                        state = _STRING
                    continue

                if state == _LOW_U:
                    if text[i] == "u":
                        self._hex_n = self._hex_v = 0
                        state = _UNICODE
                        i += 1
                    else:  # a lone high surrogate; the character is read again as an escape
                        run.append(chr(self._high))
                        self._high = 0
                        state = _ESCAPE
                    continue

                if state == _LITERAL:
                    word = self._lit_word
                    k = self._lit_n
                    while k < len(word) and i < n:
                        if text[i] != word[k]:
                            raise PartialJSONError(msg.bad_literal(word, text[i]), base + i)
                        k += 1
                        i += 1
                    self._lit_n = k
                    if k < len(word):
                        break
                    value = self._lit_value
                    if top is None:
                        self._root = value
                        place = ()
                    elif top_is_dict:
                        top[name] = value
                        place = (top_place, name)
                    else:
                        place = (top_place, len(top))
                        top.append(value)
                    add(make_change(place, "set", value))
                    present += 1
                    leaf, leaf_value = place, value
                    state = _AFTER if stack else _DONE
                    continue

                # _DONE: the value is complete; whitespace may follow, nothing else.
                c = text[i]
                if c not in _WHITESPACE:
                    raise PartialJSONError(msg.expected_after(c, None), base + i)
                if leaf is not None:
                    add(make_change(leaf, "settle", leaf_value))
                    leaf = None
                i += 1

            if run:
                piece = run[0] if len(run) == 1 else "".join(run)
                if self._in_name:
                    self._name_parts.append(piece)
                elif piece:
                    pending.append(piece)
                    add(make_change(leaf, "append", piece))
        finally:
            self._state = state
            self._leaf = leaf
            self._leaf_value = leaf_value
            self._name = name
            self._present = present
            self._offset = base + n
