"""Reading a fragment token by token: one reader per state, a stack instead of recursion.

The parser is in exactly one state between two characters (`VALUE`,
`STRING`, `NUMBER`, ...). `_scan` walks a fragment once, handing it to the
reader of the current state, which takes what it can and says where it
stopped: `_read_value` (a value is due: it opens a string or a container,
or starts a number or a literal), `_read_string` and `_read_escape`,
`_read_number`, `_read_literal`, and the punctuation between values
(`_read_name`, `_read_colon`, `_read_after`, `_read_done`). Plain runs inside
strings, and numbers and literals that arrive whole, are taken a slice at a
time (a regex or ``str.startswith``); the rest one character at a time.

What the readers do to the value is written once each:

- `_place` puts a value where the next one is due (the root, the current
  name of an object, the end of an array) and says so (a ``set`` change);
  a number is placed at the delimiter after it, true, false and null at
  their last letter, a string at its opening quote, a container at its
  opening bracket;
- `_close` settles the innermost container and pops it;
- `_settle_leaf` settles a scalar. A number, true, false or null is placed
  complete and settles at its delimiter; a string settles at its closing
  quote.

See `lesson_lib.partial_json` for the rules this implements.
"""

from __future__ import annotations

import re
from typing import Any

from . import messages as msg
from .values import Change, PartialJSONError, make_change

# The states between two characters.
VALUE = 0           # a value is due: at the start, after ':', after ',' in an array
VALUE_OR_CLOSE = 1  # just after '[': a value or ']'
NAME_OR_CLOSE = 2   # just after '{': a name or '}'
NAME = 3            # after ',' in an object: a name
COLON = 4           # after a name: ':'
AFTER = 5           # after a value in a container: ',' or the closing bracket
DONE = 6            # after the top-level value: whitespace only
STRING = 7          # inside a string (a value, or a name when _in_name)
ESCAPE = 8          # after a backslash
UNICODE = 9         # inside \uXXXX
LOW_BACKSLASH = 10  # after a high-surrogate escape: a '\' may start its low half
LOW_U = 11          # ... and a 'u' after that '\'
NUMBER = 12         # inside a number that crossed a fragment or needs checking
LITERAL = 13        # inside true, false or null

STRING_STATES = (STRING, ESCAPE, UNICODE, LOW_BACKSLASH, LOW_U)
_WHITESPACE = " \t\n\r"

_plain_run = re.compile(r'[^"\\\x00-\x1f]*').match
# A whole number; the group count tells an int (1 group matched) from a float.
_number = re.compile(r"(-?(?:0|[1-9][0-9]*))(\.[0-9]+)?([eE][-+]?[0-9]+)?").match
_NUMBER_CHARS = frozenset("0123456789.eE+-")

_ESCAPES = {'"': '"', "\\": "\\", "/": "/", "b": "\b", "f": "\f", "n": "\n", "r": "\r", "t": "\t"}
_HEX = {c: int(c, 16) for c in "0123456789abcdefABCDEF"}
_LITERALS = {"t": ("true", True), "f": ("false", False), "n": ("null", None)}

# Number states: where a number is, character by character.
(N_START, _N_MINUS, _N_ZERO, _N_INT, _N_DOT, _N_FRAC, _N_E, _N_ESIGN, _N_EXP) = range(9)
N_COMPLETE = frozenset((_N_ZERO, _N_INT, _N_FRAC, _N_EXP))
N_FLOAT = frozenset((_N_FRAC, _N_EXP))
_N_NAMES = {_N_MINUS: "minus", _N_DOT: "dot", _N_E: "exponent", _N_ESIGN: "exponent"}


def _number_steps() -> list[dict[str, int]]:
    digits = "0123456789"
    steps: list[dict[str, int]] = [{} for _ in range(9)]
    steps[N_START] = {"-": _N_MINUS, "0": _N_ZERO, **{d: _N_INT for d in digits[1:]}}
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


class TokenReader:
    """The readers `PartialJSON` is made of; its `__init__` sets the state they share."""

    # Set by PartialJSON.__init__ (listed here for the readers).
    _state: int
    _stack: list[tuple[Any, tuple, bool, int]]   # (container, place, is_dict, at)
    _root: Any
    _offset: int
    _present: int
    _leaf: tuple | None
    _leaf_value: Any
    _name: str
    _in_name: bool
    _name_parts: list[str]
    _pending: list[str]
    _text: str
    _lent: bool
    _base: str
    _caught: int
    _slot: Any
    _slot_key: Any
    _string_at: int
    _escape_at: int
    _hex_n: int
    _hex_v: int
    _high: int
    _num_state: int
    _num_parts: list[str]
    _num_at: int
    _lit_word: str
    _lit_value: Any
    _lit_n: int
    _run: list[str]
    _add: Any

    def _catch_up(self) -> str:
        raise NotImplementedError

    # -- the loop --------------------------------------------------------------

    def _scan(self, text: str, changes: list[Change]) -> None:
        """Read one fragment: hand it to the reader of each state in turn."""
        self._add = changes.append
        self._run = []
        readers = _READERS
        i, n = 0, len(text)
        try:
            while i < n:
                i = readers[self._state](self, text, i, n)
            run = self._run
            if run:
                piece = run[0] if len(run) == 1 else "".join(run)
                if self._in_name:
                    self._name_parts.append(piece)
                elif piece:
                    self._pending.append(piece)
                    self._add(make_change(self._leaf, "append", piece))
        finally:
            self._offset += n

    # -- what the readers do to the value ------------------------------------------

    def _place(self, value: Any, shown: Any) -> tuple:
        """Put `value` where the next value is due, say so (`shown` is what the
        ``set`` change carries) and count it; its place. It is the leaf (the scalar
        or string not settled yet; a container is kept by the stack instead), and
        what comes after a value is due next."""
        stack = self._stack
        if not stack:
            self._root = value
            place: tuple = ()
            self._state = DONE
        else:
            top, top_place, is_dict, _ = stack[-1]
            if is_dict:
                place = (top_place, self._name)
                top[self._name] = value
            else:
                place = (top_place, len(top))
                top.append(value)
            self._state = AFTER
        self._add(make_change(place, "set", shown))
        self._present += 1
        self._leaf = place
        self._leaf_value = value
        return place

    def _settle_leaf(self) -> None:
        """The scalar or string just read can no longer change: settle it."""
        self._add(make_change(self._leaf, "settle", self._leaf_value))
        self._leaf = None

    def _close(self) -> None:
        """Settle the innermost container and pop it: the value it was in goes on."""
        container, place, _, _ = self._stack.pop()
        self._add(make_change(place, "settle", container))
        self._state = AFTER if self._stack else DONE

    # -- a value ------------------------------------------------------------------------

    def _read_value(self, text: str, i: int, n: int) -> int:
        """A value is due (or, just after '[', the ']' of an empty array)."""
        c = text[i]
        while c in _WHITESPACE:
            i += 1
            if i == n:
                return i
            c = text[i]
        if c == '"':
            return self._open_string(text, i, n)
        if c == "{" or c == "[":
            return self._open_container(c, i)
        if c in "-0123456789":
            return self._start_number(text, i, n)
        literal = _LITERALS.get(c)
        if literal is not None:
            return self._start_literal(text, i, n, literal)
        if c == "]" and self._stack and not self._stack[-1][2]:
            if self._state == VALUE_OR_CLOSE:
                self._close()
                return i + 1
            raise PartialJSONError(msg.trailing_comma_in_array(), self._offset + i)
        where = "here" if not self._stack else (
            "after ':'" if self._stack[-1][2] else "in this array")
        raise PartialJSONError(msg.expected_value(c, where), self._offset + i)

    def _open_container(self, c: str, i: int) -> int:
        """'{' or '[': a new container, empty until its first value."""
        is_dict = c == "{"
        container: Any = {} if is_dict else []
        place = self._place(container, {} if is_dict else [])
        self._leaf = self._leaf_value = None
        self._stack.append((container, place, is_dict, self._offset + i))
        self._state = NAME_OR_CLOSE if is_dict else VALUE_OR_CLOSE
        return i + 1

    # -- strings and names ------------------------------------------------------------

    def _open_string(self, text: str, i: int, n: int) -> int:
        """A string value's opening quote: it is shown (empty) at once and grows.
        One without escapes that closes in this fragment (the usual one) is taken
        whole; `_read_string` reads any other."""
        stack = self._stack
        j = _plain_run(text, i + 1).end()
        if j < n and text[j] == '"':
            value = text[i + 1:j]
            place = self._place(value, "")
            if value:
                self._add(make_change(place, "append", value))
            self._settle_leaf()
            return j + 1
        self._place("", "")
        self._slot = stack[-1][0] if stack else None
        self._slot_key = self._leaf[1] if stack else None
        self._text = ""
        self._in_name = False
        self._string_at = self._offset + i
        self._state = STRING
        return self._read_string(text, i + 1, n)

    def _read_name(self, text: str, i: int, n: int) -> int:
        """In an object, where a name is due (or, just after '{', the '}')."""
        c = text[i]
        while c in _WHITESPACE:
            i += 1
            if i == n:
                return i
            c = text[i]
        if c == '"':
            j = _plain_run(text, i + 1).end()
            if j < n and text[j] == '"':   # a whole name without escapes: the usual one
                self._close_name(text[i + 1:j], j)
                return self._read_colon(text, j + 1, n) if j + 1 < n else j + 1
            self._in_name = True
            self._string_at = self._offset + i
            self._state = STRING
            return self._read_string(text, i + 1, n)
        if c == "}" and self._state == NAME_OR_CLOSE:
            self._close()
            return i + 1
        raise PartialJSONError(msg.expected_name(c, self._state == NAME), self._offset + i)

    def _read_colon(self, text: str, i: int, n: int) -> int:
        """After a name: the ':' before its value."""
        c = text[i]
        if c == ":":
            self._state = VALUE
            if i + 1 < n:   # the value most often follows at once
                return self._read_value(text, i + 1, n)
        elif c not in _WHITESPACE:
            raise PartialJSONError(msg.expected_colon(c, self._name), self._offset + i)
        return i + 1

    def _read_string(self, text: str, i: int, n: int) -> int:
        """Inside a string or name: plain runs a slice at a time and whole short
        escapes inline, up to the closing quote or the end of the fragment."""
        run = self._run
        while True:
            j = _plain_run(text, i).end()
            if j == n:
                run.append(text[i:] if i else text)
                return n
            if j > i:
                run.append(text[i:j])
            c = text[j]
            if c == '"':
                self._close_string(j)
                return j + 1
            if c != "\\":
                raise PartialJSONError(msg.control_character(c), self._offset + j)
            decoded = _ESCAPES.get(text[j + 1]) if j + 1 < n else None
            if decoded is None:   # a long escape, or one cut by the fragment's end
                self._escape_at = self._offset + j
                self._state = ESCAPE
                return j + 1
            run.append(decoded)
            i = j + 2

    def _close_string(self, j: int) -> None:
        """The closing quote (at `j`): a name waits for its colon, a string settles."""
        run = self._run
        piece = run[0] if len(run) == 1 else "".join(run)
        run.clear()
        if self._in_name:
            if self._name_parts:
                self._name_parts.append(piece)
                piece = "".join(self._name_parts)
                self._name_parts = []
            self._close_name(piece, j)
            return
        if piece:
            self._pending.append(piece)
            self._add(make_change(self._leaf, "append", piece))
        self._leaf_value = self._catch_up() if self._pending else self._text
        self._text = ""
        self._slot = self._slot_key = None
        if self._lent:   # copies keep the log; the next string gets a new one
            self._pending = []
            self._lent, self._base, self._caught = False, "", 0
        self._settle_leaf()
        self._state = AFTER if self._stack else DONE

    def _close_name(self, name: str, j: int) -> None:
        """A name's closing quote (at `j`): its value is due after a colon."""
        container, _, _, opened_at = self._stack[-1]
        if name in container:
            raise PartialJSONError(msg.duplicate_name(name, opened_at), self._offset + j)
        self._name = name
        self._state = COLON

    def _read_escape(self, text: str, i: int, n: int) -> int:
        """One character of an escape that is long (``\\uXXXX``) or was cut."""
        c = text[i]
        state = self._state
        if state == ESCAPE:
            decoded = _ESCAPES.get(c)
            if decoded is not None:
                self._run.append(decoded)
                self._state = STRING
            elif c == "u":
                self._hex_n = self._hex_v = 0
                self._state = UNICODE
            else:
                raise PartialJSONError(msg.bad_escape(c), self._offset + i)
            return i + 1
        if state == UNICODE:
            digit = _HEX.get(c)
            if digit is None:
                raise PartialJSONError(msg.bad_hex(c), self._offset + i)
            self._hex_v = self._hex_v * 16 + digit
            self._hex_n += 1
            if self._hex_n == 4:
                self._add_code_point(self._hex_v)
            return i + 1
        # LOW_BACKSLASH or LOW_U: a low-surrogate escape may follow a high one.
        if c == ("\\" if state == LOW_BACKSLASH else "u"):
            if state == LOW_BACKSLASH:
                self._escape_at = self._offset + i
                self._state = LOW_U
            else:
                self._hex_n = self._hex_v = 0
                self._state = UNICODE
            return i + 1
        # A lone high surrogate; the character is read again (as text, or as an escape).
        self._run.append(chr(self._high))
        self._high = 0
        self._state = STRING if state == LOW_BACKSLASH else ESCAPE
        return i

    def _add_code_point(self, code: int) -> None:
        """A whole ``\\uXXXX``: a high surrogate waits for a low half (as json.loads joins them)."""
        high = self._high
        if high:
            self._high = 0
            if 0xDC00 <= code <= 0xDFFF:
                self._run.append(chr(0x10000 + ((high - 0xD800) << 10) + (code - 0xDC00)))
                self._state = STRING
                return
            self._run.append(chr(high))
        if 0xD800 <= code <= 0xDBFF:
            self._high = code
            self._state = LOW_BACKSLASH
        else:
            self._run.append(chr(code))
            self._state = STRING

    # -- numbers and literals -----------------------------------------------------------

    def _start_number(self, text: str, i: int, n: int) -> int:
        """A number's first character: the whole number when it and the character
        after it are here, else one character at a time."""
        self._num_at = self._offset + i
        m = _number(text, i)
        if m is not None:
            end = m.end()
            if end < n and text[end] not in _NUMBER_CHARS:
                self._end_number(text[end], self._offset + end, m.group(), m.lastindex != 1)
                return end
        self._num_state = N_START
        self._num_parts = []
        self._state = NUMBER
        return i

    def _read_number(self, text: str, i: int, n: int) -> int:
        """Inside a number, one character at a time, up to the first that cannot continue it."""
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
            return n
        c = text[i]
        if ns not in N_COMPLETE:
            raise PartialJSONError(msg.bad_number(c, _N_NAMES[ns]), self._offset + i)
        if ns == _N_ZERO and c in "0123456789":
            raise PartialJSONError(msg.leading_zero(c), self._offset + i)
        number_text = "".join(self._num_parts)
        self._num_parts = []
        self._end_number(c, self._offset + i, number_text, ns in N_FLOAT)
        return i

    def _end_number(self, c: str | None, at: int, number_text: str, is_float: bool) -> None:
        """A complete number: `c` is the character after it (at `at`, not taken; None
        at the end of the text), which must be a delimiter. It settles there."""
        if c is not None and c not in _WHITESPACE:
            closer = None if not self._stack else ("}" if self._stack[-1][2] else "]")
            if closer is None or (c != "," and c != closer):
                raise PartialJSONError(msg.expected_after(c, closer, "a number"), at)
        if is_float:
            value: Any = float(number_text)
        else:
            try:
                value = int(number_text)
            except ValueError:
                raise PartialJSONError(msg.too_many_digits(len(number_text.lstrip("-"))),
                                       self._num_at) from None
        self._place(value, value)

    def _start_literal(self, text: str, i: int, n: int, literal: tuple[str, Any]) -> int:
        """The first letter of true, false or null: the whole word when it is here."""
        word, value = literal
        if text.startswith(word, i):
            self._place(value, value)
            return i + len(word)
        self._lit_word, self._lit_value, self._lit_n = word, value, 0
        self._state = LITERAL
        return i

    def _read_literal(self, text: str, i: int, n: int) -> int:
        """Inside true, false or null, one letter at a time."""
        word, k = self._lit_word, self._lit_n
        while k < len(word) and i < n:
            if text[i] != word[k]:
                raise PartialJSONError(msg.bad_literal(word, text[i]), self._offset + i)
            k += 1
            i += 1
        self._lit_n = k
        if k == len(word):
            self._place(self._lit_value, self._lit_value)
        return i

    # -- between values ----------------------------------------------------------------

    def _read_after(self, text: str, i: int, n: int) -> int:
        """After a value in a container: ',' or the closing bracket (whitespace too)."""
        c = text[i]
        is_dict = self._stack[-1][2]
        if c == ",":
            if self._leaf is not None:
                self._settle_leaf()
            i += 1
            if is_dict:
                self._state = NAME
                return self._read_name(text, i, n) if i < n else i
            self._state = VALUE
            return self._read_value(text, i, n) if i < n else i
        if c == ("}" if is_dict else "]"):
            if self._leaf is not None:
                self._settle_leaf()
            self._close()
            return i + 1
        if c not in _WHITESPACE:
            raise PartialJSONError(msg.expected_after(c, "}" if is_dict else "]"),
                                   self._offset + i)
        if self._leaf is not None:
            self._settle_leaf()
        return i + 1

    def _read_done(self, text: str, i: int, n: int) -> int:
        """After the top-level value: whitespace only."""
        c = text[i]
        if c not in _WHITESPACE:
            raise PartialJSONError(msg.expected_after(c, None), self._offset + i)
        if self._leaf is not None:
            self._settle_leaf()
        return i + 1


_READERS = (
    TokenReader._read_value,    # VALUE
    TokenReader._read_value,    # VALUE_OR_CLOSE
    TokenReader._read_name,     # NAME_OR_CLOSE
    TokenReader._read_name,     # NAME
    TokenReader._read_colon,    # COLON
    TokenReader._read_after,    # AFTER
    TokenReader._read_done,     # DONE
    TokenReader._read_string,   # STRING
    TokenReader._read_escape,   # ESCAPE
    TokenReader._read_escape,   # UNICODE
    TokenReader._read_escape,   # LOW_BACKSLASH
    TokenReader._read_escape,   # LOW_U
    TokenReader._read_number,   # NUMBER
    TokenReader._read_literal,  # LITERAL
)
