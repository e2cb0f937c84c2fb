"""Lesson 3, station partial_json: tool arguments as they form, with settled paths.

A tool call's arguments arrive as text fragments (Anthropic
``input_json_delta``, Responses ``function_call_arguments.delta``, Chat
``tool_calls[].function.arguments``). `PartialJSON` reads them one fragment
at a time and says, after each, what the value looks like so far and which
parts of it are final::

    parser = PartialJSON()
    parser.feed('{"city": "Par')    # [set () {}, set ('city',) '', append ('city',) 'Par']
    parser.value                    # {'city': 'Par'}
    parser.feed('is", "days": 1')   # [append ('city',) 'is', settle ('city',) 'Paris']
    parser.settled                  # SettledPaths({('city',)}): "days" may still become 12
    parser.feed('2}')               # [set ('days',) 12, settle ('days',) 12, settle () {...}]
    parser.finish()                 # {'city': 'Paris', 'days': 12}

The rules
---------

What the value shows (`value`):

- `NOTHING` until a value begins (``None`` is JSON null).
- A string appears as soon as its opening quote arrives and grows with each
  fragment. An escape cut between fragments (``\\``, ``\\u00``) shows nothing
  until it is whole; so does a high-surrogate escape, until the next
  character says whether a low half joins it.
- An object's name appears when its value begins (not while the name is
  being read, not at the colon).
- A number appears only when it is complete, that is at the delimiter after
  it (``12`` may still become ``123``); true, false and null appear at their
  last letter. Nothing that is shown ever changes, except strings and
  containers that grow at their end.
- The value is live: the dicts and lists returned are the parser's own, and
  later feeds add to them in place (the open string is brought up to date
  whenever `value` is read). Copy it (``copy.deepcopy``) to keep a snapshot.
  A top-level string is a plain ``str``: read `value` again to see it grow.

What is final (`settled`): a path (a tuple of names and indices, ``()`` for
the root) is settled once its value can no longer change: a string at its
closing quote; a number, true, false or null at the delimiter after it
(whitespace, ``,`` or a closing bracket; a top-level one at `finish`); an
object or array when it closes. `settled` is a live, read-only set view;
`open_path` names the deepest path that may still change (None when nothing
is open), and `settled_count` is ``len(settled)``.

Copying mid-stream: `copy()` (what ``copy.deepcopy`` calls) gives a parser
that goes on independently from here. It costs the depth of the open
containers, not their size nor the text so far: what is open only grows at
its end, so the copy shares it and remembers its sizes, and makes its own
containers and string the first time it is fed or read (see `borrowed`).
Copying a copy that was never used costs the same again, so a chain of
checkpoints over a long array or string stays linear in time and memory.

What each `feed` returns: a list of `Change` objects in the order things
happened. ``set`` carries the first value (``""``, a fresh empty container,
or the complete scalar); ``append`` the decoded text added to a string (one
per string per fragment); ``settle`` the final value. Applying the changes in
order to an empty structure rebuilds `value` exactly. The set and settle
that `finish` makes for a top-level number (and the settle of a top-level
literal) are not reported as changes (`finish` returns the value); `value`
and `settled` show them.

Strictness (`finish`, and `feed` as early as it can tell): exactly RFC 8259.
No NaN or Infinity, no trailing commas, no leading zeros, no single quotes,
no comments, no raw control characters in strings, nothing but whitespace
after the value, and (beyond the RFC's "should") no name twice in one object:
a settled value must never change, and "last one wins" would change it. The
empty text is not JSON: a tool with no parameters may send ``""``, and the
tool-call layer maps that to ``{}``, not this parser. Escaped lone surrogates
(``"\\ud800"``) are accepted, as ``json.loads`` accepts them, so that
``finish() == json.loads(text)`` for every text both accept.

Errors: `PartialJSONError` (a ``ValueError``) with `position`, the 0-based
character offset in all the text fed so far, and a message that says what was
expected. `feed` raises at the first character that can never become valid
JSON, and the parser then stays failed (every later call raises the same
error); text that simply stops fails only at `finish`, with the position at
the end. The error's `changes` lists what the failing fragment changed before
its bad character (`value` and `settled` include it). `feed` after `finish`
raises. Where the position differs from the
one ``json.loads`` reports, it is because we name the first impossible
character and ``json.loads`` names where it gave up:

- an unfinished number or literal (``[1.]``, ``[-]``, ``[tru]``): ours is the
  character that cannot continue it (the ``]``), ``json.loads`` points at the
  ``.`` or the start of the token;
- a bad escape: ours is the character after the backslash (or the first
  non-hex digit of ``\\u``), ``json.loads`` points at the backslash (or the u);
- an unterminated string: ours is the end of the text, ``json.loads`` points
  at the opening quote;
- NaN, Infinity and duplicate names, which ``json.loads`` accepts: ours is
  the ``N`` or ``I``, or the closing quote of the repeated name.

Cost
----

Each `feed` costs time proportional to its fragment: one pass, a stack
instead of recursion (10,000 levels work), plain runs of string text taken a slice at a time and never
re-joined. Paths are shared with their parent and made into tuples only when
read, so a fragment 5,000 levels deep costs no more than one at the top. A
string is kept as a list of pieces and materialised when `value` is read, by
extending the text seen last time (CPython grows a string in place when
nothing else refers to it), so reading the value after each of 15,000
deltas of a 300 KB argument copies the deltas, not the argument 15,000
times. If you hold on to an earlier version of the open string, the next
read copies it once (a ``str`` never changes). `settled` is not a growing
set: the only open values form one chain from the root (a container's
earlier children all ended before the comma after them), so settled means
"present and not on the chain the parser's stack already holds"; membership
costs the path's length plus the depth of that chain, and ``len`` is O(1).

Compared with jiter's partial modes
-----------------------------------

The Anthropic SDK re-parses the whole buffer with
``jiter.from_json(buf, partial_mode=True)`` on every delta (quadratic), and
``partial_mode="trailing-strings"`` also shows the open string. jiter reads
any prefix leniently, so it cannot say what is final, and:

- it hides corruption: ``{"a":"x"}{"b":1}`` (two calls' arguments glued
  together) parses as ``{"a": "x"}`` and ``{"a": "x"} x`` as ``{"a": "x"}``;
  we fail at the second ``{`` or the ``x``;
- it shows an unfinished number as if final: ``{"n": 1`` gives ``{"n": 1}``,
  which the next delta may turn into 12; we show ``n`` at its delimiter;
- it drops an incomplete ``1.`` or ``tr`` with its name, and a stream cut
  there looks like a valid, shorter object; we show nothing for it either,
  but `finish` fails at the end instead of returning a plausible value;
- it accepts NaN and lets a repeated name overwrite the first; we reject both.
"""

from __future__ import annotations

from .scanner import PartialJSON
from .settled import FixedChain, SettledPaths
from .values import NOTHING, Change, PartialJSONError

__all__ = ["NOTHING", "Change", "FixedChain", "PartialJSON", "PartialJSONError",
           "SettledPaths"]
