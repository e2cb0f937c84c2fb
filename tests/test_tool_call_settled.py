"""`ToolCallView.settled`: a lazy set view, cheap however deep the arguments nest."""

from __future__ import annotations

import tracemalloc

from lesson_lib.tool_calls import ToolCall
from lesson_lib.tool_calls.paths import settled_paths

TEXT = '{"a": [1, {"b": "xy", "c": [true, null]}, 2.5], "d": {"e": "f"}, "g": []}'


def _deep_call(n: int, *, closed: bool) -> ToolCall:
    call = ToolCall("f", "c")
    call.feed("[" * n)
    if closed:
        call.feed("]" * n)
        call.end()
    return call


def _lookup_peak(n: int, *, closed: bool) -> int:
    """Peak traced memory of `len` and the deepest membership, on a fresh view."""
    view = _deep_call(n, closed=closed).view()
    deepest = (0,) * (n - 1)
    tracemalloc.start()
    try:
        settled = view.settled
        assert (deepest in settled) is closed and len(settled) == (n if closed else 0)
        return tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()


def test_len_and_membership_on_deep_arguments_build_no_paths():
    # The frozenset of every path of a value n deep holds n * n / 2 keys: 2.3 MB at
    # 1,000 levels and four times that at 2,000, before the view.
    for closed in (True, False):
        for n in (1_000, 2_000):
            assert _lookup_peak(n, closed=closed) < 20 * n, (n, closed)


def test_the_view_is_the_set_of_settled_paths_at_every_prefix():
    call = ToolCall("f", "c")
    for i in range(len(TEXT) + 1):
        if i:
            call.feed(TEXT[i - 1])
        if i == len(TEXT):
            call.end()
        view = call.view()
        expected = set(settled_paths(view.value, view.open_path))
        for settled in (view.settled, call.settled):
            assert set(settled) == expected and len(settled) == len(expected), i
            assert all(path in settled for path in expected)
            assert ("a", 9) not in settled and ("zz",) not in settled and "a" not in settled
            assert settled == frozenset(expected)
            both = settled | {("new",)}
            assert type(both) is frozenset and both == expected | {("new",)}
