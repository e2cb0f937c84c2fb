"""Resume by the wire's own point, live: the registry says how, `serve` answers the resume
request from the corpus, `LiveTurn` resumes a broken stream instead of asking again, and
the official SDKs resume against `serve`."""

from __future__ import annotations

import asyncio
import json
from dataclasses import replace
from urllib.parse import parse_qs, urlsplit

import httpx
import pytest
from examples import examples
from hypothesis import given, settings
from hypothesis import strategies as st

from lesson_lib import wires
from lesson_lib.accumulate.gemini_interactions import GeminiInteractionsAccumulator
from lesson_lib.breaks import resume
from lesson_lib.capture.captures import from_bytes, load
from lesson_lib.cli.serve.background import serving
from lesson_lib.live import LiveTurn, RetryPolicy
from lesson_lib.turn import TurnStream
from lesson_lib.turn.adapters import WireAdapter
from lesson_lib.turn.events import Finish
from lesson_lib.turn.order import check
from lesson_lib.wires import gemini_interactions as gi
from lesson_lib.wires.wire_events import WireEvent, parse_all

FAST = RetryPolicy(attempts=3, initial_s=0.01, max_s=0.05)
CUT, RESUMED = "openai-responses/background-cut", "openai-responses/background-resumed"
INTERACTION = "v1_resumable_interaction"


def _uncut_text() -> str:
    """The whole answer: what the recorded resume's ``response.completed`` states."""
    last = parse_all(load(RESUMED).events)[-1].payload
    return last["response"]["output"][0]["content"][0]["text"]


def _texts(state) -> list[str]:
    return [b.text for b in state.blocks if b.kind == "text"]


def _recording_client(seen: list[httpx.Request]) -> httpx.AsyncClient:
    async def note(request: httpx.Request) -> None:
        seen.append(request)
    return httpx.AsyncClient(timeout=httpx.Timeout(60.0, read=None),
                             event_hooks={"request": [note]})


def _run_live(url: str, wire: str, request: dict, **options):
    seen: list[httpx.Request] = []

    async def go():
        async with _recording_client(seen) as client:
            return await LiveTurn(url, wire, request, client=client,
                                  **{"retry": FAST, **options}).run()
    return asyncio.run(asyncio.wait_for(go(), 60)), seen


# -- the registry -------------------------------------------------------------------------

def test_the_registry_says_which_wires_resume_and_how():
    responses_how = wires.entry_for("openai-responses").resume
    assert responses_how.request_path("resp_1", 59) == \
        "/v1/responses/resp_1?stream=true&starting_after=59"
    assert responses_how.allows({"background": True})
    assert not responses_how.allows({"input": "hi"})     # a foreground stream is not kept
    assert gi.ENTRY.resume.request_path("v1_a/b", "evt 1") == \
        "/v1beta/interactions/v1_a%2Fb?stream=true&last_event_id=evt+1"
    assert gi.ENTRY.resume.stream_id({"interaction_id": "v1_x"}) == "v1_x"
    assert gi.ENTRY.resume.stream_id({"interaction": {"id": "v1_y"}}) == "v1_y"
    for name in ("anthropic-messages", "openai-chat", "google-gemini"):
        assert wires.entry_for(name).resume is None


# -- the join, on an opaque point ----------------------------------------------------------

def _event(i: int, eid: str | None) -> WireEvent:
    payload = {"event_type": gi.STEP_DELTA, "index": 0, "delta": {"type": "text", "text": str(i)}}
    if eid is not None:
        payload["event_id"] = eid
    return WireEvent(i, None, gi.STEP_DELTA, payload)


@settings(max_examples=examples(60), deadline=None)
@given(st.lists(st.uuids().map(str), min_size=1, max_size=30, unique=True), st.data())
def test_an_event_id_stream_cut_and_resumed_with_overlap_joins_to_itself(ids, data):
    events = [_event(i, eid) for i, eid in enumerate(ids)]
    k = data.draw(st.integers(1, len(events)))
    overlap = data.draw(st.integers(0, k))
    point = resume.resume_point(events[:k], gi.RESUME)
    assert point == ids[k - 1]
    served = resume.served_after(events, point, gi.RESUME)
    assert served == events[k:]
    joined = resume.join(events[:k], events[k - overlap:], gi.RESUME)
    assert [e.payload for e in joined.events] == [e.payload for e in events]
    assert len(joined.dropped) == overlap and not joined.diagnostics


def test_a_numbered_gap_is_still_a_resume_gap():
    events = parse_all(load(RESUMED).events)
    first = parse_all(load(CUT).events)
    joined = resume.join(first, events[2:])
    assert [d.code for d in joined.diagnostics] == ["resume_gap"]
    assert joined.diagnostics[0].extra == {"expected": 60, "got": 62}


# -- TurnStream carries a step on into the resumed body -----------------------------------

@pytest.mark.parametrize("overlap", [0, 3])
def test_a_turn_stream_resumed_mid_event_draws_every_character_once(overlap):
    cut, rest = load(CUT), load(RESUMED)
    first = parse_all(cut.events)
    stream = TurnStream("openai-responses", request=cut.request)
    joiner = resume.Joiner()
    events = []
    for chunk, t in cut.chunks():
        for wire_event, out in stream.feed_batches(chunk, t):
            events += out
            if wire_event is not None:
                joiner.received(wire_event)
    stream.resume(joiner.take)
    # A server that sends a little more than asked: the last `overlap` events again.
    again = b"".join(cut.body[e.start:e.end] for e in cut.events[len(first) - overlap:])
    events += stream.feed(again + rest.body)
    events += stream.finish()
    assert not [e for e in events if e.kind == "error_reported"]
    assert [e.ended for e in events if e.kind == "step_finished"] == ["proper"]
    text = "".join(e.fragment for e in events if e.kind == "block_delta")
    assert text == _uncut_text()


# -- serve answers the resume request ------------------------------------------------------

@pytest.fixture(scope="module")
def url():
    with serving(speed="instant") as base:
        yield base


def test_serve_answers_a_responses_resume_request_after_the_point(url):
    rest = load(RESUMED)
    response_id = rest.request["response_id"]
    stored = parse_all(load(CUT).events)
    with httpx.Client(timeout=30) as client:
        got = client.get(f"{url}/v1/responses/{response_id}",
                         params={"stream": "true", "starting_after": 40})
        unknown = client.get(f"{url}/v1/responses/resp_nothing",
                             params={"stream": "true", "starting_after": 1})
    assert got.status_code == 200
    served = parse_all(from_bytes(got.content, sidecar={"wire": "openai-responses"}).events)
    numbers = [resume.sequence_number(e) for e in served]
    assert numbers == list(range(41, numbers[-1] + 1))
    joined = resume.join([e for e in stored if resume.sequence_number(e) <= 40], served)
    assert not joined.diagnostics and joined.events[-1].type == "response.completed"
    assert unknown.status_code == 404 and unknown.json()["error"]["message"]


# -- LiveTurn resumes ----------------------------------------------------------------------

def test_a_responses_background_stream_dropped_mid_text_is_resumed_not_asked_again(url):
    cut = load(CUT)
    drop = len(cut.body) // 2           # inside the text's deltas
    result, seen = _run_live(url, "openai-responses", cut.request,
                             params={"fault": f"drop:{drop}@first"})
    assert result.outcome == "completed"
    assert check(result.events) == []
    assert _texts(result.state) == [_uncut_text()]
    first, second = result.attempts
    assert first.errors[0].code == "transport" and first.resume_at is not None
    assert second.resumed_after == first.resume_at and not second.errors
    assert [r.method for r in seen] == ["POST", "GET"]
    get = seen[1]
    assert get.url.path == f"/v1/responses/{load(RESUMED).request['response_id']}"
    query = parse_qs(urlsplit(str(get.url)).query)
    assert query["stream"] == ["true"] and query["starting_after"] == [str(first.resume_at)]
    # Every text delta once: the turn's deltas add up to the text, nothing doubled.
    assert "".join(e.fragment for e in result.events if e.kind == "block_delta") == \
        _uncut_text()


def test_a_background_stream_cut_before_its_end_is_resumed_after_its_last_event(url):
    cut = load(CUT)
    result, seen = _run_live(url, "openai-responses", cut.request)
    assert result.outcome == "completed"
    assert _texts(result.state) == [_uncut_text()]
    assert result.attempts[0].resume_at == load(RESUMED).request["starting_after"]
    assert [r.method for r in seen] == ["POST", "GET"]


def test_a_stream_the_provider_does_not_keep_is_asked_again_as_before(url):
    request = {k: v for k, v in load(CUT).request.items() if k != "background"}
    result, seen = _run_live(url, "openai-responses", request)
    assert {r.method for r in seen} == {"POST"} and len(seen) == FAST.attempts
    assert result.outcome == "truncated"
    assert all(a.cut and a.resume_at is None for a in result.attempts)


# -- Gemini Interactions: a capture with event ids, built here ------------------------------

TEXT = ["Low tide ", "on the Île ", "de Bréhat ", "is the time ", "to walk."]


def _interactions_body() -> bytes:
    payloads = [
        {"interaction": {"id": INTERACTION, "status": "in_progress", "object": "interaction",
                         "model": "gemini-2.5-flash"}, "event_type": gi.INTERACTION_CREATED},
        {"interaction_id": INTERACTION, "status": "in_progress",
         "event_type": gi.INTERACTION_STATUS_UPDATE},
        {"index": 0, "step": {"type": gi.MODEL_OUTPUT_STEP}, "event_type": gi.STEP_START},
        *({"index": 0, "delta": {"text": text, "type": gi.TEXT_DELTA},
           "event_type": gi.STEP_DELTA} for text in TEXT),
        {"index": 0, "event_type": gi.STEP_STOP},
        {"interaction": {"id": INTERACTION, "status": "completed", "object": "interaction",
                         "model": "gemini-2.5-flash",
                         "usage": {"total_input_tokens": 7, "total_output_tokens": 12}},
         "event_type": gi.INTERACTION_COMPLETED},
    ]
    out = b""
    for i, payload in enumerate(payloads):
        # Opaque tokens, in no order a client could read.
        payload = {**payload, "event_id": f"Ev{(i * 7919) % 1000:03d}x{i}"}
        out += (f"event: {payload['event_type']}\n"
                f"data: {json.dumps(payload, ensure_ascii=False)}\n\n").encode()
    return out


@pytest.fixture
def interactions_url(tmp_path, monkeypatch):
    """`serve` over one Interactions capture with event ids, the wire registered."""
    # The wire's entry with the parts this test reads it with, while the course's own
    # adapter for it is not registered.
    entry = replace(gi.ENTRY, adapter=gi.ENTRY.adapter or _InteractionsText,
                    accumulator=gi.ENTRY.accumulator or GeminiInteractionsAccumulator)
    monkeypatch.setitem(wires.WIRES, gi.WIRE, gi)
    monkeypatch.setitem(wires.ENTRIES, gi.WIRE, entry)
    folder = tmp_path / gi.WIRE
    folder.mkdir()
    body = _interactions_body()
    (folder / "resumable.sse").write_bytes(body)
    (folder / "resumable.json").write_text(json.dumps({
        "wire": gi.WIRE, "demonstrates": "a stream with event ids, for resume",
        "request": {"model": "gemini-2.5-flash", "input": "Plan me a walk."},
        "response": {"status": 200, "headers": {"content-type": "text/event-stream"}}}))
    with serving(speed="instant", root=tmp_path) as base:
        yield base


def _ids(body: bytes) -> list[str]:
    return [e.payload["event_id"]
            for e in parse_all(from_bytes(body, sidecar={"wire": gi.WIRE}).events)]


def test_serve_answers_an_interactions_resume_request_after_the_event(interactions_url):
    ids = _ids(_interactions_body())
    with httpx.Client(timeout=30) as client:
        got = client.get(f"{interactions_url}/v1beta/interactions/{INTERACTION}",
                         params={"stream": "true", "last_event_id": ids[4]})
        unknown = client.get(f"{interactions_url}/v1beta/interactions/{INTERACTION}",
                             params={"stream": "true", "last_event_id": "nope"})
    assert got.status_code == 200
    assert _ids(got.content) == ids[5:]
    assert unknown.status_code == 400 and "last_event_id" in unknown.json()["error"]["message"]


def test_google_genai_resumes_an_interaction_against_serve(interactions_url):
    from google import genai
    from google.genai import types

    ids = _ids(_interactions_body())
    client = genai.Client(api_key="offline", http_options=types.HttpOptions(
        base_url=interactions_url, api_version="v1beta"))
    events = list(client.interactions.get(INTERACTION, stream=True, last_event_id=ids[3]))
    assert [e.event_id for e in events] == ids[4:]
    texts = [e.delta.text for e in events if e.event_type == gi.STEP_DELTA]
    assert texts == TEXT[1:]
    assert events[-1].event_type == gi.INTERACTION_COMPLETED


def test_openai_resumes_a_background_response_against_serve(url):
    import openai

    rest = load(RESUMED)
    first = [e for e in parse_all(load(CUT).events)
             if resume.sequence_number(e) <= rest.request["starting_after"]]
    client = openai.OpenAI(base_url=f"{url}/v1", api_key="unused", max_retries=0)
    events = list(client.responses.retrieve(rest.request["response_id"], stream=True,
                                            starting_after=rest.request["starting_after"]))
    assert events[0].sequence_number == rest.request["starting_after"] + 1
    before = "".join(e.payload["delta"] for e in first
                     if e.type == "response.output_text.delta")
    after = "".join(e.delta for e in events if e.type == "response.output_text.delta")
    assert before + after == _uncut_text()
    assert events[-1].type == "response.completed"
    # Asked for no stream, the stored response is its final object.
    whole = client.responses.retrieve(rest.request["response_id"])
    assert (whole.id, whole.status, whole.output_text) == (
        rest.request["response_id"], "completed", _uncut_text())


class _InteractionsText(WireAdapter):
    """What this test reads of an Interactions step (its text and the interaction's
    status), for while the course's own adapter for the wire is not registered."""

    wire = gi.WIRE

    def classify(self, opened):
        if opened.slot_kind == gi.MODEL_OUTPUT_STEP:
            return "text", False, "text"
        return super().classify(opened)

    def finish(self) -> Finish:
        status = self.response.get("status")
        return Finish(gi.finish_reason(status) or "other", status)


def test_an_interactions_stream_dropped_mid_text_is_resumed_live(interactions_url,
                                                                 monkeypatch):
    body = _interactions_body()
    drop = body.index(TEXT[2].encode()) + 3     # inside the third text delta
    result, seen = _run_live(interactions_url, gi.WIRE,
                             {"model": "gemini-2.5-flash", "input": "Plan me a walk."},
                             params={"fault": f"drop:{drop}@first"})
    assert result.outcome == "completed"
    assert check(result.events) == []
    assert _texts(result.state) == ["".join(TEXT)]
    assert "".join(e.fragment for e in result.events if e.kind == "block_delta") == \
        "".join(TEXT)
    assert [r.method for r in seen] == ["POST", "GET"]
    assert seen[1].url.path == f"/v1beta/interactions/{INTERACTION}"
    query = parse_qs(urlsplit(str(seen[1].url)).query)
    # The last whole event before the drop: the second text delta (the sixth event).
    assert query["stream"] == ["true"] and query["last_event_id"] == [_ids(body)[4]]
    assert result.attempts[1].resumed_after == _ids(body)[4]


def test_a_policy_that_redoes_no_step_after_output_still_resumes(url):
    cut = load(CUT)
    policy = RetryPolicy(attempts=3, after_output=False, initial_s=0.01, max_s=0.05)
    result, seen = _run_live(url, "openai-responses", cut.request, retry=policy)
    assert result.outcome == "completed"
    assert _texts(result.state) == [_uncut_text()]
    assert [r.method for r in seen] == ["POST", "GET"]


def test_a_refused_resume_asks_again_from_the_start_with_nothing_twice():
    cut, rest = load(CUT), load(RESUMED)
    whole = b"".join(cut.body[e.start:e.end] for e in cut.events) + rest.body
    seen = []

    async def handler(request):
        seen.append(request)
        if request.method == "GET":
            return httpx.Response(404, json={"error": {"message": "gone", "type": "x"}})
        body = cut.body if len(seen) == 1 else whole
        return httpx.Response(200, content=body,
                              headers={"content-type": "text/event-stream"})

    async def go():
        async with httpx.AsyncClient(transport=httpx.MockTransport(handler)) as client:
            return await LiveTurn("http://test", "openai-responses", cut.request,
                                  client=client, retry=FAST).run()

    result = asyncio.run(asyncio.wait_for(go(), 60))
    assert [r.method for r in seen] == ["POST", "GET", "POST"]
    assert [e.code for a in result.attempts for e in a.errors] == ["cut", "resume_refused"]
    assert result.outcome == "completed"
    assert check(result.events) == []
    assert "".join(e.fragment for e in result.events if e.kind == "block_delta") == \
        _uncut_text()


def _blocks(events):
    from lesson_lib.turn.reduce import initial, reduce
    state = initial()
    for event in events:
        state = reduce(state, event)
    return [(b.kind, b.text, b.input, b.complete) for b in state.blocks]


def _whole_background() -> bytes:
    cut, rest = load(CUT), load(RESUMED)
    return b"".join(cut.body[e.start:e.end] for e in cut.events) + rest.body


STREAMS = {"background": _whole_background,
           "weather": lambda: load("openai-responses/weather-turn-step1").body}


@settings(max_examples=examples(40), deadline=None)
@given(st.sampled_from(sorted(STREAMS)), st.data())
def test_a_turn_stream_cut_anywhere_and_resumed_is_the_uncut_turn(name, data):
    body = STREAMS[name]()
    whole = TurnStream("openai-responses")
    expected = _blocks(whole.feed(body) + whole.finish())
    events = parse_all(from_bytes(body, sidecar={"wire": "openai-responses"}).events)
    cut_at = data.draw(st.integers(1, len(body) - 1))
    stream, joiner, out = TurnStream("openai-responses"), resume.Joiner(), []
    for wire_event, batch in stream.feed_batches(body[:cut_at]):
        out += batch
        if wire_event is not None:
            joiner.received(wire_event)
    stream.resume(joiner.take)
    # The server answers after the point, or after an older one (it resends some).
    after = joiner.last if joiner.last is not None else -1
    older = after - data.draw(st.integers(0, 3))
    sent = resume.served_after(events, older)
    raw = from_bytes(body, sidecar={"wire": "openai-responses"}).events
    out += stream.feed(b"".join(body[raw[e.index].start:raw[e.index].end] for e in sent))
    out += stream.finish()
    assert _blocks(out) == expected
    assert not [e for e in out if e.kind == "error_reported"]
