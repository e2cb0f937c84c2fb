"""Lesson 3, station tool_calls: one `ToolCall` per call as it forms, on every wire.

A tool call's identity arrives first (Anthropic ``content_block_start``, a
Responses ``output_item.added``, Chat's first ``tool_calls[]`` fragment): its
name and call id. Its arguments follow as fragments of JSON text. Every
accumulator keeps one `ToolCall` per call and feeds it each fragment as it
arrives; the call owns a `PartialJSON` parser and the raw fragments::

    call = ToolCall("get_weather", "toolu_1")
    call.feed('{"city": "Par')     # [set () {}, set ('city',) '', append ...]
    call.value, call.state         # ({'city': 'Par'}, 'forming')
    call.feed('is"}')              # ... settle ('city',) 'Paris', settle () {...}
    call.state                     # still 'forming': the wire has not said "end"
    call.end()                     # content_block_stop, arguments.done, finish_reason
    call.state, call.value         # ('complete', {'city': 'Paris'})

States (`state`)
----------------

- ``forming``: arguments may still arrive.
- ``complete``: the wire said the call ended, and its text is one valid JSON
  value (checked strictly by `PartialJSON.finish`); empty text means ``{}``,
  as the vendors do for a tool with no parameters.
- ``invalid``: the text can never be the JSON value it should be. Said at
  the first impossible character (``{"a":1}{"b":2}``, two calls' arguments
  glued together, fails at the second ``{``), or at the wire's end when the
  text stopped short. `error` holds the position and the message; the raw
  text goes on being collected.
- ``cut``: the stream ended before the wire ended the call; `value` is what
  did arrive (a number whose digits had all arrived is shown, not settled).

A call becomes final only at its wire's explicit end: Anthropic
``content_block_stop``; Responses ``function_call_arguments.done`` or
``output_item.done``; Chat the choice's ``finish_reason`` or ``data:
[DONE]``. Never because the text so far happens to parse: ``{"n": 1}`` parses,
and the next fragment may still make it ``{"n": 1}`` plus a second key, or
turn it into two documents.

Cost: `feed` costs the parser's work on the fragment plus an append. A
`view` (what `Accumulator.tool_calls()` returns) is an immutable snapshot
that copies only the containers still open (settled values never change, so
they are shared), never the whole value.

Sharing
-------

A value that can no longer change is shared, never copied: by views, by
`copy.deepcopy` of a call (a history checkpoint), by the accumulators'
`final()` and `slots()`. This holds because nothing writes to it again:

- the parser writes only to the containers on its stack (the open chain)
  and to the open string's slot; a container leaves the stack when it
  closes, and a settled string, number or literal is an immutable object;
- an ended call's value (`value` after `end` or `cut`, `_final`) is what
  the parser had built; the parser is dropped then, and neither the call
  nor an accumulator writes to it (they hand it out as ``input``);
- a `Change`'s value is a fresh empty container (``set``), text
  (``append``) or a settled value (``settle``).

Readers must treat shared values as read-only too. Copies of what still
changes are made without recursion (`PartialJSON.copy`,
`paths.copy_open_chain`), so a value 10,000 levels deep can be copied,
viewed and checkpointed.

The package: `call` (a `ToolCall` as it forms, and `partial_value`),
`states` (what a call can be), `view` (`ToolCallView`, a call at one
moment) and `paths` (open and settled paths of a partial value).
"""

from __future__ import annotations

from .call import ToolCall, partial_value
from .paths import open_path_of
from .states import CallError, ToolCallState
from .view import ToolCallView

__all__ = ["CallError", "ToolCall", "ToolCallState", "ToolCallView", "open_path_of",
           "partial_value"]
