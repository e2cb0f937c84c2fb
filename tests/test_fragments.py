"""`Fragments`: append-only text, and checkpoints that share its log."""

from __future__ import annotations

import copy

import pytest

from lesson_lib.accumulate.fragments import Fragments
from lesson_lib.tool_calls.checkpoints import checkpoint


class _Holder:
    """Like an accumulator: a `Fragments` and a hot path holding its live list."""

    def __init__(self) -> None:
        self.frags = Fragments("a")
        self.sink = self.frags.parts


def test_a_checkpoint_keeps_its_prefix_while_the_original_reads_and_grows():
    live = _Holder()
    live.sink.append("b")
    assert live.frags.text == "ab"                 # joined in place: not shared yet
    frozen = checkpoint(live)
    assert frozen.sink is frozen.frags._parts      # the holder gets the same prefix
    for piece in "cdef":
        live.sink.append(piece)
        assert live.frags.text.endswith(piece)     # reads no longer rewrite the log
    assert frozen.frags.text == "ab" and live.frags.text == "abcdef"
    later = checkpoint(live)
    live.frags.append("g")
    assert later.frags.text == "abcdef" and frozen.frags.text == "ab"


def test_a_copy_of_a_checkpoint_goes_on_alone_and_its_holder_follows():
    live = _Holder()
    frozen = checkpoint(live)
    live.sink.append("X")
    thawed = copy.deepcopy(frozen)
    assert thawed.sink is thawed.frags.parts       # one list, whichever was copied first
    thawed.sink.append("b")
    assert thawed.frags.text == "ab" and live.frags.text == "aX" and frozen.frags.text == "a"
    again = copy.deepcopy(frozen)
    assert again.frags.text == "a"


def test_a_checkpoint_is_read_only():
    frozen = checkpoint(Fragments("a"))
    with pytest.raises(TypeError):
        frozen.append("b")
    with pytest.raises(TypeError):
        frozen.parts  # noqa: B018


def test_an_ordinary_copy_is_independent():
    frags = Fragments("a")
    twin = copy.deepcopy(frags)
    frags.append("b")
    twin.append("c")
    assert (frags.text, twin.text, len(twin), bool(Fragments())) == ("ab", "ac", 2, False)
