"""Closing an SDK's stream early (``with`` exit, ``close()``), offline through replay: what each
SDK leaves behind, and that the offline replay behaves as a real socket does."""

from __future__ import annotations

import anthropic
import httpx2
import openai
import pytest

from lesson_lib.breaks import sdk_close
from lesson_lib.capture import replay
from lesson_lib.capture.captures import load
from lesson_lib.cli.serve import serving

pytestmark = pytest.mark.timeout(300)

KEYS = ("anthropic-messages/hello", "openai-responses/text", "openai-chat/text-usage",
        "anthropic-messages/text-then-tool", "openai-responses/function-call",
        "openai-chat/tool-call")
N = 6
# Per wire: the helper's text event and its field (to count the text read, independently).
TEXT_EVENT = {"anthropic-messages": ("text", "text"),
              "openai-responses": ("response.output_text.delta", "delta"),
              "openai-chat": ("content.delta", "delta")}
# What the final call raises on a closed response, and what from: every SDK wraps the
# transport's error in its own (anthropic from 2.17; 2.16 let the ReadError through).
RAISES = {wire: ("APIConnectionError", "ReadError")
          for wire in ("anthropic-messages", "openai-responses", "openai-chat")}


def _text_of_first(capture, n: int) -> str:
    kind, field = TEXT_EVENT[capture.wire]
    events = replay.run_sdk(capture).events[:n]
    return "".join(getattr(e, field) for e in events if e.type == kind)


@pytest.mark.parametrize("how", ["with", "close"])
@pytest.mark.parametrize("key", KEYS)
def test_closing_early_closes_the_response_and_keeps_the_snapshot(key, how):
    capture = load(key)
    left = sdk_close.close_early(capture, N, how)
    assert left.events_read == N and left.open_when_stopped and left.closed
    full = replay.run_sdk(capture)
    read = _text_of_first(capture, N)
    if read:                 # the snapshot holds exactly the text handed out so far
        assert left.snapshot_text == read
        assert full.text.startswith(read) and read != full.text
    assert left.snapshot_stop is None
    # The final call reads on, and a closed response cannot be read.
    assert (left.final.raised, left.final.cause) == RAISES[capture.wire]
    assert str(left.final) == f"raises {left.final.raised} (from {left.final.cause})"
    assert left.next_event.startswith("StopIteration")


@pytest.mark.parametrize("key", KEYS)
def test_a_second_final_call_passes_the_partial_off_as_final_except_on_responses(key):
    capture = load(key)
    left = sdk_close.close_early(capture, N, "close")
    again = left.final_again
    if capture.wire == "openai-responses":
        assert again.raised == "RuntimeError" and "response.completed" in again.message
    else:
        assert again.raised is None and again.stop is None
        assert again.text == (left.snapshot_text or "")


@pytest.mark.parametrize("key", KEYS)
def test_without_a_close_the_final_call_reads_the_whole_answer(key):
    capture = load(key)
    left = sdk_close.close_early(capture, N, "none")
    full = replay.run_sdk(capture)
    assert left.open_when_stopped and not left.closed
    assert left.final.raised is None and left.final.text == full.text
    stop = {"anthropic-messages": lambda f: f.stop_reason,
            "openai-responses": lambda f: f.status,
            "openai-chat": lambda f: f.choices[0].finish_reason}[capture.wire](full.final)
    assert left.final.stop == stop


def test_a_stream_read_to_its_end_was_already_closed_by_the_sdk():
    capture = load("anthropic-messages/hello")
    left = sdk_close.close_early(capture, 10_000, "close")
    assert left.events_read == replay.run_sdk(capture).event_count
    assert not left.open_when_stopped and left.closed
    assert left.final.raised is None and left.final.stop == "end_turn"


def test_before_the_first_event_there_is_no_snapshot_to_leave():
    left = sdk_close.close_early(load("anthropic-messages/hello"), 0, "with")
    assert left.events_read == 0 and left.snapshot_text is None


def test_the_offline_body_reads_like_a_closed_socket_after_close():
    capture = load("openai-chat/text-usage")
    with httpx2.Client(transport=replay.transport(capture)) as client:
        with client.stream("POST", "http://offline/v1/chat/completions") as response:
            chunks = response.iter_raw()
            assert next(chunks)
            response.close()
            with pytest.raises(httpx2.ReadError):
                next(chunks)


def test_the_table_rows_name_every_wire_and_way():
    rows = [r.row() for r in sdk_close.left_behind([load(k) for k in KEYS[:3]], N)]
    assert [(r["wire"], r["stopped by"]) for r in rows] == [
        (w, h) for w in ("anthropic-messages", "openai-responses", "openai-chat")
        for h in sdk_close.HOWS]
    with pytest.raises(ValueError):
        sdk_close.close_early(load(KEYS[0]), 1, "drop")


def _live_client(base: str, capture):
    headers = {"capture": capture.key}
    if capture.wire == "anthropic-messages":
        return anthropic.Anthropic(base_url=base, api_key="sk-ant-unused", max_retries=0,
                                   default_headers=headers)
    return openai.OpenAI(base_url=f"{base}/v1", api_key="sk-unused", max_retries=0,
                         default_headers=headers)


def _observed(left: sdk_close.LeftBehind) -> tuple:
    return (left.events_read, left.open_when_stopped, left.closed, left.snapshot_text,
            left.snapshot_stop, left.final.raised, left.next_event)


class _Counting(httpx2.SyncByteStream):
    def __init__(self, chunks):
        self.chunks, self.pulled = chunks, 0

    def __iter__(self):
        for chunk in self.chunks:
            self.pulled += 1
            yield chunk


def _pause_after(capture, n: int) -> float:
    """The recorded pause (ms) between the last network chunk the SDK had pulled when it
    handed out its `n`-th event and the next chunk: how long a close has to come first."""
    body = _Counting([c for c, _ in capture.chunks()])
    mock = httpx2.MockTransport(lambda request: httpx2.Response(
        200, headers={"content-type": "text/event-stream"}, stream=body, request=request))
    http = httpx2.Client(transport=mock)
    if capture.wire == "anthropic-messages":
        manager = anthropic.Anthropic(api_key="x", max_retries=0, http_client=http).messages.stream(
            **replay.request_kwargs(capture))
    else:
        client = openai.OpenAI(api_key="x", max_retries=0, http_client=http)
        open_ = (client.responses.stream if capture.wire == "openai-responses"
                 else client.chat.completions.stream)
        manager = open_(**replay.request_kwargs(capture))
    with manager as stream:
        for _ in range(n):
            next(stream)
        pulled = body.pulled
    times = capture.chunk_times
    return times[pulled] - times[pulled - 1] if pulled < len(times) else float("inf")


def _roomy_n(capture, least_ms: float = 25.0) -> int:
    """The first number of events (from 4) after which the stream pauses at least `least_ms`."""
    return next(n for n in range(4, 60) if _pause_after(capture, n) >= least_ms)


def test_what_had_already_arrived_is_still_decoded_after_a_close():
    for key in KEYS[:3]:
        capture = load(key)
        whole = sdk_close.close_early(capture, N, "close", chunk_size=len(capture.body))
        assert whole.closed and whole.final.raised is None
        assert whole.final.text == replay.run_sdk(capture).text


@pytest.mark.parametrize("how", sdk_close.HOWS)
def test_over_a_real_socket_the_sdks_leave_the_same_behind(how):
    """The offline replay's closed body is not a guess: `lesson-lib serve` over TCP, at half
    the recorded pace (so the next chunk is still on its way when the stream is closed), agrees."""
    with serving(speed="0.5") as base:
        for key in KEYS[:3]:
            capture = load(key)
            n = _roomy_n(capture)      # 50 ms at half pace before the next chunk: time to close
            live = sdk_close.close_early(capture, n, how, client=_live_client(base, capture))
            offline = sdk_close.close_early(capture, n, how)
            assert _observed(live) == _observed(offline), key
            assert (live.final_again.raised, live.final_again.text) == (
                offline.final_again.raised, offline.final_again.text), key
            if how == "none":
                assert live.final == offline.final
