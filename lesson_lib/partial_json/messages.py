"""What the partial-JSON parser says when the text goes wrong: one message a learner can act on.

Each function returns the message for one kind of mistake; the scanner
decides where (the position) and raises.
"""

from __future__ import annotations

_NAMED = {"\n": "a line break", "\r": "a carriage return", "\t": "a tab"}


def show(char: str) -> str:
    """A character as a message shows it: quoted, or named when invisible."""
    code = ord(char)
    if char in _NAMED:
        return f"{_NAMED[char]} (U+{code:04X})"
    if code < 0x20 or code == 0x7F:
        return f"the control character U+{code:04X}"
    if char == "\ufeff":
        return "a byte-order mark (U+FEFF)"
    return repr(char)


def expected_value(char: str, where: str) -> str:
    """A value was due (`where`: 'here', "after ':'", ...) but `char` came."""
    found = show(char)
    if char == "N":
        return (f"found {found}: NaN is not JSON (only finite numbers are) and neither is "
                "Python's None; write null (lowercase)")
    if char in "TF":
        return f"found {found}: JSON writes true and false in lowercase (True/False are Python)"
    if char == "I":
        return f"found {found}: Infinity is not JSON (only finite numbers are); send null or a string"
    if char == "'":
        return "found a single quote: JSON strings use double quotes (\")"
    if char == "+":
        return "found '+': a JSON number has no plus sign; drop it"
    if char == ".":
        return "found '.': a JSON number needs a digit before the point (0.5, not .5)"
    if char in "]}":
        return f"found {found} where a value was due {where}: a trailing comma or a missing value"
    if char.isalpha() or char == "_":
        return (f"found {found}: a bare word is not a value; strings need double quotes, "
                "and the only words are true, false and null")
    return (f"expected a value {where} (a string, number, object, array, true, false or null) "
            f"but found {found}")


def expected_after(char: str, closer: str | None, what: str = "a value") -> str:
    """After a complete value only ',' or the closing bracket (or, at the top, nothing) may come."""
    found = show(char)
    if closer is None:
        if char in "{[\"" or char.isalnum() or char == "-":
            return (f"found {found} after the complete JSON value: exactly one value is "
                    "allowed (were two documents, or two tool calls' arguments, glued together?)")
        return f"found {found} after the complete JSON value: only whitespace may follow it"
    if char in "]}":
        opener = "[" if closer == "]" else "{"
        return f"found {found} but the innermost open bracket is '{opener}': close it with '{closer}'"
    return f"expected ',' or '{closer}' after {what} but found {found} (a missing comma?)"


def expected_name(char: str, after_comma: bool) -> str:
    """Inside an object a name in double quotes was due."""
    found = show(char)
    if after_comma and char == "}":
        return "found '}' right after ',': JSON allows no trailing comma; remove the comma"
    if char == "'":
        return "found a single quote: object names need double quotes (\")"
    return f"expected a name in double quotes (\"name\") but found {found}"


def expected_colon(char: str, name: str) -> str:
    """After an object's name the ':' was due."""
    return f"expected ':' after the name {name!r} but found {show(char)}"


def trailing_comma_in_array() -> str:
    """']' came right after ','."""
    return "found ']' right after ',': JSON allows no trailing comma; remove the comma"


def control_character(char: str) -> str:
    """A raw control character inside a string."""
    hint = {"\n": "\\n", "\r": "\\r", "\t": "\\t"}.get(char, f"\\u{ord(char):04x}")
    return f"{show(char)} inside a string must be escaped (write {hint})"


def bad_escape(char: str) -> str:
    """A backslash followed by something that is not an escape."""
    return (f"'\\' followed by {show(char)} is not an escape; JSON has \\\" \\\\ \\/ \\b \\f "
            "\\n \\r \\t and \\uXXXX (write \\\\ for a backslash)")


def bad_hex(char: str) -> str:
    """A \\u escape with a character that is not a hex digit."""
    return f"\\u needs exactly four hex digits (0-9, a-f) but found {show(char)}"


def duplicate_name(name: str, opened_at: int) -> str:
    """A name given twice in one object."""
    return (f"the name {name!r} appears twice in the object opened at character {opened_at}; "
            "JSON names in one object must be unique (a settled value must never change)")


def bad_number(char: str, state: str) -> str:
    """A number that cannot continue with `char` and is not complete yet."""
    found = show(char)
    if state == "minus":
        if char == "I":
            return "-Infinity is not JSON (only finite numbers are); send null or a string"
        return f"a '-' must be followed by a digit but found {found}"
    if state == "dot":
        return f"a digit must follow the decimal point but found {found} (write 1.0 or 1)"
    return f"an exponent needs digits (1e5, 1e-5) but found {found}"


def leading_zero(char: str) -> str:
    """A digit after a leading 0."""
    return f"a number may not start with 0 followed by {show(char)} (write 7, or 0.7, not 07)"


def bad_literal(word: str, char: str) -> str:
    """A literal (true, false, null) that went wrong."""
    return f"expected {word!r} but found {show(char)}: the only bare words are true, false and null"


def too_many_digits(count: int) -> str:
    """An integer longer than Python converts (sys.set_int_max_str_digits)."""
    return (f"an integer of {count} digits is longer than Python converts "
            "(see sys.set_int_max_str_digits)")


def ends_early(what: str) -> str:
    """The text stopped before the value was complete."""
    return f"the text ends {what}: the JSON value is incomplete (a cut stream?)"


def empty() -> str:
    """No value at all."""
    return ("the text holds no JSON value (an empty argument string is not JSON; "
            "a tool with no parameters sends '', which the tool-call layer maps to {})")
