"""The live loop over a real socket: the course's server on 127.0.0.1, httpx reading the
body as it arrives, `TurnStream` and the reducer after every chunk."""

from __future__ import annotations

import asyncio
import json

import httpx
import pytest

from lesson_lib import wires
from lesson_lib.capture.captures import load
from lesson_lib.cli.serve.background import serving
from lesson_lib.live import LiveTool, LiveTurn, RetryPolicy, weather_tool
from lesson_lib.turn.ends import WHERE as ENDS_WHERE
from lesson_lib.turn.order import check
from lesson_lib.turn.run import turn_state

WIRES = ["anthropic-messages", "openai-responses", "openai-chat"]
REGISTRY = sorted(wires.WIRES)      # every registered wire streams live
FAST = RetryPolicy(attempts=2, initial_s=0.01, max_s=0.05)


@pytest.fixture(scope="module")
def url():
    with serving(speed="instant") as base:
        yield base


def step1(wire):
    return load(f"{wire}/weather-turn-step1")


def run(turn: LiveTurn):
    return asyncio.run(asyncio.wait_for(turn.run(), 60))


def blocks(state):
    return [(b.step, b.kind, b.name, b.text if b.kind != "tool_call" else b.input, b.complete)
            for b in state.blocks]


@pytest.mark.parametrize("wire", REGISTRY)
def test_the_weather_turn_completes_live_as_it_does_offline(url, wire):
    result = run(LiveTurn(url, wire, step1(wire).request, [weather_tool(0.01)]))
    offline = turn_state([step1(wire), load(f"{wire}/weather-turn-step2")])
    assert result.outcome == "completed"
    assert check(result.events) == []
    assert blocks(result.state) == blocks(offline)
    assert [s.finish.reason for s in result.state.steps] == ["tool_calls", "stop"]
    runs = [b.execution_status for b in result.state.calls]
    assert runs == ["ok", "ok"]
    assert [len([a for a in result.attempts if a.step == s]) for s in (1, 2)] == [1, 1]
    assert all(t.first_byte is not None for t in result.timings)


@pytest.mark.parametrize("wire", WIRES)
def test_a_cut_stream_is_retried_then_truncated_with_what_arrived(url, wire):
    cut = len(step1(wire).body) * 2 // 3
    result = run(LiveTurn(url, wire, step1(wire).request, [weather_tool(0.01)],
                          params={"fault": f"cut:{cut}"}, retry=FAST))
    assert result.outcome == "truncated"
    assert [a.cut for a in result.attempts] == [True, True]
    assert result.state.blocks and not all(b.complete for b in result.state.blocks)
    assert check(result.events) == []


@pytest.mark.parametrize("wire", REGISTRY)
def test_a_dropped_connection_is_retried_on_every_wire(url, wire):
    drop = len(step1(wire).body) // 2
    result = run(LiveTurn(url, wire, step1(wire).request, [weather_tool(0.01)],
                          params={"fault": f"drop:{drop}"}, retry=FAST))
    assert result.outcome == "failed"
    assert result.state.end.reason == "gave_up"          # every retry was spent
    assert [(a.step, a.number) for a in result.attempts] == [(1, 1), (1, 2)]
    assert all(a.errors and a.errors[0].code == "transport" for a in result.attempts)
    assert check(result.events) == []


@pytest.mark.parametrize("wire", REGISTRY)
def test_a_budget_of_three_tokens_cancels_the_live_turn_on_every_wire(url, wire):
    result = run(LiveTurn(url, wire, step1(wire).request, [weather_tool(0.01)],
                          budget_tokens=3))
    # A budget's end says so (lesson 7): never `completed`, and not a plain cancel.
    assert result.outcome == "budget_reached"
    end = result.state.end
    assert end.reason == "application_budget"
    assert end.detail["limit"] == "output_tokens" and end.detail["budget"] == 3
    assert end.detail["spent"] >= 3
    # What was arriving, or (a call that comes whole, as on Gemini) the tool it started.
    assert end.detail["where"] in ("text", "reasoning", "tool_arguments", "tools")
    assert result.stopped and "budget of 3 output tokens" in result.stopped
    assert [a.step for a in result.attempts] == [1]
    # Stopped mid-stream: the step never reached its proper end.
    assert [e.ended for e in result.events if e.kind == "step_finished"] == ["cancelled"]
    assert check(result.events) == []


@pytest.mark.parametrize("wire", REGISTRY)
def test_a_live_request_goes_to_the_providers_own_path_with_its_own_body(wire):
    sent = []
    cap = step1(wire)

    async def handler(request):
        sent.append(request)
        return httpx.Response(200, stream=Chunks([cap.body]),
                              headers={"content-type": wires.entry_for(wire).content_type})

    async def go():
        async with _client(handler) as client:
            return await LiveTurn("http://test", wire, cap.request, client=client,
                                  max_steps=1, params={"speed": "instant"}).run()

    result = asyncio.run(go())
    entry = wires.entry_for(wire)
    [request] = sent
    path = entry.request_path(cap.request)
    assert request.url.path == httpx.URL(path).path
    # The path's own query (Gemini's alt=sse) stays beside the caller's parameters.
    assert dict(request.url.params) == {**dict(entry.query), "speed": "instant"}
    body = json.loads(request.content)
    assert not set(entry.path_fields) & set(body)
    assert ("stream" in body) is not entry.streams_by_path
    assert result.state.blocks, "the recorded body, served at that path, was not read"


@pytest.mark.parametrize("wire", WIRES)
def test_an_error_after_output_fails_after_the_last_attempt_with_every_error_kept(url, wire):
    result = run(LiveTurn(url, wire, step1(wire).request, [weather_tool(0.01)],
                          params={"fault": "error-after:4"}, retry=FAST))
    assert result.outcome == "failed"
    assert len(result.attempts) == 2
    assert all(a.errors and a.errors[0].phase == "after_output" for a in result.attempts)
    assert result.state.errors


def test_a_stall_is_abandoned_retried_and_the_watchdog_cancels_the_turn(url):
    wire = "anthropic-messages"
    result = run(LiveTurn(url, wire, step1(wire).request, [weather_tool(0.01)],
                          params={"fault": "stall:2000"}, retry=FAST, stall_s=0.3))
    assert (result.outcome, result.state.end.reason) == ("cancelled", "watchdog")
    assert result.state.end.detail["attempts"] == 2
    assert [a.errors[0].code for a in result.attempts] == ["stall", "stall"]
    assert check(result.events) == []


def test_a_stall_ends_the_same_on_one_attempt_as_after_retries(url):
    # The outcome says what happened, not how many attempts the policy allowed.
    wire = "anthropic-messages"
    result = run(LiveTurn(url, wire, step1(wire).request, [weather_tool(0.01)],
                          params={"fault": "stall:2000"}, retry=RetryPolicy(attempts=1),
                          stall_s=0.3))
    assert (result.outcome, result.state.end.reason) == ("cancelled", "watchdog")
    [attempt] = result.attempts
    assert attempt.errors[0].code == "stall" and attempt.errors[0].scope == "transport"
    assert check(result.events) == []


@pytest.mark.parametrize("wire", REGISTRY)
def test_the_stall_watchdog_cancels_a_live_turn_on_every_wire(url, wire):
    # The watchdog's own reason, on every registered wire: not `failed`, not `user`.
    result = run(LiveTurn(url, wire, step1(wire).request, [weather_tool(0.01)],
                          params={"fault": "stall:2000"}, retry=RetryPolicy(attempts=1),
                          stall_s=0.3))
    end = result.state.end
    assert (end.outcome, end.reason) == ("cancelled", "watchdog"), end
    assert "no progress for 0.3 s" in end.detail["by"] and end.detail["where"] in ENDS_WHERE
    assert result.events[-1].reason == "watchdog"
    assert check(result.events) == []


def test_a_429_waits_as_the_server_says_or_not_at_all(url):
    wire = "openai-responses"
    result = run(LiveTurn(url, wire, step1(wire).request, params={"capture":
                          "http-429-retry-after"}, retry=FAST))
    assert result.outcome == "failed"
    [attempt] = result.attempts          # retry-after: 360 s, more than the loop waits
    assert "retry-after asks for 360 s" in attempt.wait_source
    patient = RetryPolicy(attempts=2, initial_s=0.01, max_s=400)
    turn = LiveTurn(url, wire, step1(wire).request, params={"capture": "http-429"},
                    retry=patient)
    result = run(turn)
    assert result.outcome == "failed" and len(result.attempts) == 2
    assert result.attempts[0].waited_s is not None


@pytest.mark.parametrize("wire", WIRES)
def test_stop_cancels_the_stream_and_every_running_tool_and_keeps_what_arrived(url, wire):
    seen = []

    async def slow(arguments):
        try:
            await asyncio.sleep(30)
        except asyncio.CancelledError:
            seen.append(arguments)
            raise

    async def go():
        turn = LiveTurn(url, wire, step1(wire).request, [LiveTool("get_weather", slow)])

        async def stop_when_a_tool_runs():
            while not any(b.execution == "running" for b in turn.state.calls):
                await asyncio.sleep(0.005)
            turn.cancel()

        stopper = asyncio.ensure_future(stop_when_a_tool_runs())
        result = await asyncio.wait_for(turn.run(), 30)
        stopper.cancel()
        return result

    result = asyncio.run(go())
    assert result.outcome == "cancelled"
    # Who stopped it, and the tool it interrupted by name (lesson 7).
    end = result.state.end
    assert end.reason == "user" and "get_weather" in end.detail["tools"]
    assert end.detail["where"] in ("text", "tool_arguments", "tools", "streaming")
    assert seen, "the running tool never saw CancelledError"
    statuses = {b.execution_status for b in result.state.calls}
    assert "interrupted" in statuses
    assert not any(b.execution == "running" for b in result.state.calls)
    assert not any(b.open for b in result.state.blocks)
    assert check(result.events) == []


def test_the_budget_cancels_at_the_crossing_delta(url):
    wire = "anthropic-messages"
    result = run(LiveTurn(url, wire, step1(wire).request, [weather_tool(0.01)],
                          budget_tokens=5))
    assert result.outcome == "budget_reached"
    deltas = [e for e in result.events if e.kind == "block_delta"]
    spent = 0
    for i, e in enumerate(deltas):
        spent += -(-len(e.fragment) // 4)
        if spent >= 5:
            assert i == len(deltas) - 1, "deltas went on after the crossing"


def test_a_tool_that_raises_or_hangs_is_its_calls_error_not_the_loops(url):
    async def broken(arguments):
        raise RuntimeError("the weather service is down")

    async def hangs(arguments):
        await asyncio.sleep(30)

    wire = "openai-chat"
    for tool, words in ((LiveTool("get_weather", broken), "RuntimeError: the weather"),
                        (LiveTool("get_weather", hangs, timeout_s=0.05), "did not answer")):
        result = run(LiveTurn(url, wire, step1(wire).request, [tool]))
        ends = [e for e in result.events if e.kind == "tool_execution_finished"]
        assert len(ends) == 2 and all(e.status == "error" and words in e.error for e in ends)
        # The errors go back to the model; the course's server knows only the recorded
        # step 2, so it answers this conversation with its own 400, and the turn says so.
        assert result.outcome == "failed"
        [error] = result.state.errors
        assert error.step == 2 and error.phase == "before_output"
        assert check(result.events) == []


class Chunks(httpx.AsyncByteStream):
    """A response body that arrives in these chunks, then raises `then` (a dropped
    connection) if given."""

    def __init__(self, chunks, then=None):
        self.chunks, self.then = chunks, then

    async def __aiter__(self):
        for chunk in self.chunks:
            yield chunk
        if self.then is not None:
            raise self.then


def _client(handler):
    return httpx.AsyncClient(transport=httpx.MockTransport(handler))


@pytest.mark.parametrize("body", [b"<html>not a stream</html>", b"\x00\xff" * 50, b""])
def test_a_body_that_is_not_an_event_stream_is_an_honest_outcome(body):
    async def handler(request):
        return httpx.Response(200, stream=Chunks([body]), headers={"content-type": "text/html"})

    async def go():
        async with _client(handler) as client:
            return await LiveTurn("http://test", "anthropic-messages", {"model": "m"},
                                  client=client, retry=FAST).run()

    result = asyncio.run(go())
    assert result.outcome in ("truncated", "failed")
    assert check(result.events) == []


def test_a_dropped_connection_is_a_retryable_transport_error():
    body = load("anthropic-messages/weather-turn-step1").body

    async def handler(request):
        return httpx.Response(200, stream=Chunks([body[:700]], then=httpx.ReadError(
            "connection reset by peer")), headers={"content-type": "text/event-stream"})

    async def go():
        async with _client(handler) as client:
            return await LiveTurn("http://test", "anthropic-messages", {"model": "m"},
                                  client=client, retry=FAST).run()

    result = asyncio.run(go())
    assert result.outcome == "failed"
    assert [a.errors[0].code for a in result.attempts] == ["transport", "transport"]
    assert result.state.blocks, "what arrived before the drop was lost"


def test_a_whole_json_answer_where_a_stream_was_asked_for_is_a_protocol_error():
    sent = []

    async def handler(request):
        sent.append(request.content)
        return httpx.Response(200, json={"type": "message", "content": []})

    async def go():
        async with _client(handler) as client:
            return await LiveTurn("http://test", "anthropic-messages", {"model": "m"},
                                  client=client, retry=FAST).run()

    result = asyncio.run(go())
    assert b'"stream":true' in sent[0].replace(b" ", b"")
    assert result.outcome == "failed"
    assert [e.code for e in result.state.errors] == ["not_an_event_stream"]
    assert check(result.events) == []


def test_a_client_that_leaves_mid_stream_leaves_nothing_in_the_log(url, caplog):
    wire = "anthropic-messages"
    caplog.set_level("WARNING", logger="asyncio")
    for _ in range(3):
        result = run(LiveTurn(url, wire, step1(wire).request, [weather_tool(0.01)],
                              budget_tokens=3))
        assert result.outcome == "budget_reached"
    import time
    time.sleep(0.5)                     # the server's writes after the client left
    assert not [r for r in caplog.records if "socket.send()" in r.getMessage()]


def test_stop_before_the_first_byte_keeps_the_turns_order():
    async def go():
        async def silent(reader, writer):       # accepts, reads, never answers
            await reader.read(65536)
            await asyncio.sleep(30)

        server = await asyncio.start_server(silent, "127.0.0.1", 0)
        port = server.sockets[0].getsockname()[1]
        try:
            turn = LiveTurn(f"http://127.0.0.1:{port}", "anthropic-messages",
                            step1("anthropic-messages").request)
            running = asyncio.ensure_future(turn.run())
            await asyncio.sleep(0.3)
            turn.cancel("pressed Stop")
            return await asyncio.wait_for(running, 10)
        finally:
            server.close()

    result = asyncio.run(go())
    assert result.outcome == "cancelled"
    end = result.state.end
    assert (end.reason, end.detail["where"], end.detail["by"]) == (
        "user", "before_first_byte", "pressed Stop")
    kinds = [e.kind for e in result.events]
    assert kinds[:2] == ["turn_started", "step_started"] and kinds[-1] == "turn_finished"
    assert check(result.events) == []


def test_a_retry_does_not_run_a_finished_tool_twice(url):
    """The first request drops after Paris's call ran and before Tokyo's call is whole:
    the retry announces both calls again; Paris gets its result back, Tokyo runs once."""
    from lesson_lib.turn.summary import turn_text

    runs = []

    async def get_weather(arguments):
        runs.append(arguments["location"])
        return {"location": arguments["location"]}

    wire = "anthropic-messages"
    turn = LiveTurn(url, wire, step1(wire).request, [LiveTool("get_weather", get_weather)],
                    params={"speed": "1",
                            "fault": "drop:3000@first"},
                    retry=RetryPolicy(attempts=2, initial_s=0.01, max_s=0.05))
    result = run(turn)
    assert sorted(runs) == sorted(set(runs)) and len(runs) == 2, runs   # each ran once
    assert len(result.attempts) >= 2
    step1_blocks = {b.id for b in result.state.blocks if b.step == 1}
    finished = [e for e in result.events
                if e.kind == "tool_execution_finished" and e.block in step1_blocks]
    reused = [e for e in finished if e.reused]
    assert len(reused) == 1 and reused[0].result == {"location": runs[0]}
    step1_calls = [b for b in result.state.calls if b.step == 1]
    assert [b.reused for b in step1_calls] == [True, False]
    assert "not run again" in turn_text(result.state)
    assert check(result.events) == []
