"""`lesson-lib serve` over a real socket: the official clients, curl, timing, many clients.

The clients are the unmodified `anthropic`, `openai` and `google-genai` SDKs with
``base_url`` at the server (no mock transport); what they give must equal what the
offline replay gives for the same capture.
"""

from __future__ import annotations

import asyncio
import shutil
import signal
import subprocess
import sys
import time

import anthropic
import httpx2
import openai
import pytest
from serve_helpers import gapped, read_ends, timed_reads

from lesson_lib.accumulate import accumulate
from lesson_lib.capture import replay
from lesson_lib.capture.bedrock_replay import served_client
from lesson_lib.capture.captures import corpus, load
from lesson_lib.cli.serve import serving
from lesson_lib.cli.serve.matching import PATHS

pytestmark = pytest.mark.timeout(300)

CORPUS = corpus()


@pytest.fixture(scope="module")
def server():
    with serving(speed="instant") as url:
        yield url


@pytest.fixture(scope="module")
def process_server():
    """The server in its own process, so timing is not shared with the test's own GIL."""
    proc = subprocess.Popen([sys.executable, "-m", "lesson_lib", "serve", "--port", "0",
                             "--speed", "instant"], stderr=subprocess.PIPE, text=True)
    try:
        line = proc.stderr.readline()
        assert "serving" in line, line
        yield line.split(" at ")[1].split()[0]
    finally:
        proc.send_signal(signal.SIGINT)
        try:
            proc.wait(timeout=20)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()


def client_for(base: str, cap, **query):
    headers = {"capture": cap.key}
    if cap.wire in ("aws-bedrock-converse", "aws-bedrock-invoke"):
        return served_client(base, cap.key, **query)     # boto3, endpoint_url at the server
    if cap.wire in ("google-gemini", "google-gemini-interactions"):
        from google import genai
        from google.genai import types
        assert not query, "the Gemini client here names its capture by header only"
        return genai.Client(api_key="unused",
                            http_options=types.HttpOptions(base_url=base, headers=headers))
    if cap.wire in ("anthropic-messages", "anthropic-managed-agents"):
        return anthropic.Anthropic(base_url=base, api_key="sk-ant-unused", max_retries=0,
                                   default_headers=headers, default_query=query or None)
    return openai.OpenAI(base_url=f"{base}/v1", api_key="sk-unused", max_retries=0,
                         default_headers=headers, default_query=query or None)


def dump(obj):
    # google-genai copies the HTTP response's headers into every object it yields: the
    # server's and the mock transport's headers differ, the stream does not.
    if hasattr(obj, "model_dump"):
        return obj.model_dump(mode="json", warnings=False, exclude={"sdk_http_response"})
    return repr(obj)


def outcome_summary(out: replay.SDKOutcome) -> dict:
    return {"raised": out.raised, "error": str(out.error) if out.error else None,
            "text": out.text, "final": dump(out.final) if out.final is not None else None,
            "events": [dump(e) for e in out.events]}


@pytest.mark.parametrize("cap", CORPUS, ids=lambda c: c.key)
def test_the_official_client_over_the_socket_gets_what_the_offline_replay_gives(server, cap):
    live = replay.run_sdk(cap, client=client_for(server, cap))
    offline = replay.run_sdk(cap)
    assert outcome_summary(live) == outcome_summary(offline)


@pytest.mark.parametrize("key", ["anthropic-messages/hello", "openai-chat/content-filter",
                                 "openai-responses/refusal"])
def test_recorded_timing_arrives_with_its_gaps(process_server, key):
    cap = load(key)
    status, reads = timed_reads(process_server, cap, "speed=1")
    assert status == cap.status
    assert b"".join(c for c, _ in reads) == cap.body
    got = dict(read_ends(reads))
    times = list(cap.chunk_times)
    observed, recorded = [], []
    for end, gap in gapped(cap.chunk_ends, times):
        assert end in got, f"no read ended at byte {end} before a {gap:.1f} ms gap"
        i = cap.chunk_ends.index(end)
        # Each chunk is due at its recorded time after the request: never early,
        # and late only by what a busy machine adds.
        assert times[i] - 3 <= got[end] <= times[i] + 150, (end, got[end], times[i])
        later = min(ms for e, ms in got.items() if e > end)
        assert later >= times[i + 1] - 3, (end, later, times[i + 1])
        observed.append(later - got[end])
        recorded.append(gap)
    # A busy machine may hold one read back until the next is due; most gaps survive.
    kept = sum(o >= 0.5 * r for o, r in zip(observed, recorded, strict=True))
    assert kept >= 0.7 * len(recorded), list(zip(observed, recorded, strict=True))


def test_speed_scales_the_timing(process_server):
    cap = load("anthropic-messages/hello")
    _, slow = timed_reads(process_server, cap, "speed=1")
    _, fast = timed_reads(process_server, cap, "speed=4")
    last = cap.chunk_times[-1]
    assert last - 3 <= slow[-1][1] <= last + 200
    assert last / 4 - 3 <= fast[-1][1] <= last / 4 + 200


def test_recorded_status_headers_and_the_capture_chosen(server):
    cap = load("anthropic-messages/http-529-overloaded")
    response = httpx2.post(f"{server}/v1/messages?capture={cap.key}", json={"stream": True})
    assert response.status_code == 529
    assert response.content == cap.body
    assert response.headers["x-should-retry"] == "true"
    assert response.headers["request-id"] == cap.sidecar["response"]["headers"]["request-id"]
    assert response.headers["x-capture"] == cap.key


def test_a_request_is_matched_by_its_content(server):
    cap = load("openai-chat/text-usage")
    client = openai.OpenAI(base_url=f"{server}/v1", api_key="sk-unused", max_retries=0)
    with client.chat.completions.with_streaming_response.create(
            model=cap.request["model"], messages=cap.request["messages"], stream=True) as r:
        assert r.headers["x-capture"] == cap.key
        assert b"".join(r.iter_bytes()) == cap.body


def test_no_match_and_unknown_capture_are_errors_in_the_providers_shape(server):
    ant = anthropic.Anthropic(base_url=server, api_key="x", max_retries=0)
    with pytest.raises(anthropic.NotFoundError) as info:
        ant.messages.create(model="m", max_tokens=5, stream=True,
                            messages=[{"role": "user", "content": "nothing recorded this"}])
    assert info.value.body["error"]["type"] == "not_found_error"
    assert "anthropic-messages/hello" in info.value.body["error"]["message"]
    oai = openai.OpenAI(base_url=f"{server}/v1", api_key="x", max_retries=0)
    with pytest.raises(openai.NotFoundError) as info:
        oai.chat.completions.create(model="m", messages=[{"role": "user", "content": "?"}],
                                    extra_query={"capture": "no-such"})
    assert "openai-chat/tool-call" in info.value.body["message"]
    with pytest.raises(openai.BadRequestError, match="POST it to /v1/messages"):
        oai.responses.create(model="m", input="x",
                             extra_query={"capture": "anthropic-messages/hello"})


def test_a_bad_fault_spec_is_a_400_in_the_providers_shape(server):
    response = httpx2.post(f"{server}/v1/responses?capture=openai-responses/text&fault=cut:x",
                           json={"stream": True})
    assert response.status_code == 400
    assert "cut:N" in response.json()["error"]["message"]
    response = httpx2.post(f"{server}/v1/messages?capture=anthropic-messages/hello&fault=melt",
                           json={"stream": True})
    assert response.status_code == 400
    assert response.json()["error"]["type"] == "invalid_request_error"


def test_faults_on_request(server):
    cap = load("anthropic-messages/hello")
    cut = httpx2.post(f"{server}/v1/messages?capture={cap.key}&fault=cut:300",
                      json={"stream": True})
    assert cut.content == cap.body[:300]
    client = client_for(server, cap, fault="error-after:3")
    out = replay.run_sdk(cap, client=client)
    assert out.raised is not None and "Overloaded" in str(out.error)
    start = time.monotonic()
    stalled = httpx2.post(f"{server}/v1/messages?capture={cap.key}&fault=stall:400",
                          json={"stream": True})
    assert stalled.content == cap.body
    assert time.monotonic() - start >= 0.4


def test_a_non_streaming_request_gets_the_accumulated_final_object(server):
    cap = load("openai-chat/tool-call")
    oai = openai.OpenAI(base_url=f"{server}/v1", api_key="x", max_retries=0)
    completion = oai.chat.completions.create(model="m", messages=[],
                                             extra_query={"capture": cap.key})
    assert completion.model_dump(exclude_unset=True) == accumulate(cap).final
    ant = anthropic.Anthropic(base_url=server, api_key="x", max_retries=0)
    hello = load("anthropic-messages/hello")
    message = ant.messages.create(model="m", max_tokens=5, messages=hello.request["messages"])
    assert message.model_dump(exclude_unset=True) == accumulate(hello).final


def test_captures_listing_and_home_page(server):
    listing = httpx2.get(f"{server}/captures").json()
    assert [c["name"] for c in listing] == [c.key for c in CORPUS]
    assert {c["wire"] for c in listing} == set(PATHS)
    page = httpx2.get(f"{server}/").text
    assert all(f'href="stream/{c.wire}/{c.name}"' in page for c in CORPUS)


def test_behind_a_hub_proxy_the_stream_cookie_names_the_browsers_path(server):
    # jupyter-server-proxy strips /user/<name>/proxy/<port> and sends it as a header: the
    # cookie that turns the reconnect after the end into 204 must name the browser's path.
    prefix = "/user/alice/proxy/8765"
    answer = httpx2.get(f"{server}/stream/anthropic-messages/hello?speed=instant",
                        headers={"x-forwarded-prefix": prefix + "/"})
    assert answer.status_code == 200
    cookie = answer.headers["set-cookie"].lower()
    assert f"path={prefix}/stream/anthropic-messages/hello" in cookie
    plain = httpx2.get(f"{server}/stream/anthropic-messages/hello?speed=instant")
    assert "path=/stream/anthropic-messages/hello" in plain.headers["set-cookie"].lower()


@pytest.mark.skipif(shutil.which("curl") is None, reason="curl is not installed")
def test_curl_sees_the_bytes(server):
    cap = load("openai-responses/text")
    out = subprocess.run(["curl", "-sN", "-X", "POST", "-H", "content-type: application/json",
                          "-d", '{"stream": true}',
                          f"{server}/v1/responses?capture={cap.key}&speed=instant"],
                         capture_output=True, timeout=60, check=True)
    assert out.stdout == cap.body


def test_fifty_concurrent_streams_with_recorded_timing_all_complete_whole():
    keys = ["openai-chat/content-filter", "anthropic-messages/refusal",
            "openai-responses/refusal"]
    caps = [load(k) for k in keys]

    async def one(client, cap):
        url = f"{PATHS[cap.wire]}?capture={cap.key}&speed=1"
        async with client.stream("POST", url, json={"stream": True}) as response:
            return cap.key, b"".join([c async for c in response.aiter_raw()])

    async def all_of_them(base):
        limits = httpx2.Limits(max_connections=60)
        async with httpx2.AsyncClient(base_url=base, timeout=60, limits=limits) as client:
            return await asyncio.wait_for(
                asyncio.gather(*(one(client, caps[i % 3]) for i in range(50))), 60)

    with serving(speed=1) as base:
        start = time.monotonic()
        results = asyncio.run(all_of_them(base))
        elapsed = time.monotonic() - start
    bodies = {c.key: c.body for c in caps}
    assert len(results) == 50
    assert all(body == bodies[key] for key, body in results)
    longest = max(c.chunk_times[-1] for c in caps) / 1000
    assert elapsed >= longest - 0.2          # they really waited, side by side
    assert elapsed < longest * 4 + 5         # and not one after another


def test_the_command_serves_and_stops_on_ctrl_c_with_exit_0():
    proc = subprocess.Popen([sys.executable, "-m", "lesson_lib", "serve", "--port", "0",
                             "--speed", "instant"], stderr=subprocess.PIPE, text=True)
    try:
        line = proc.stderr.readline()
        assert "serving" in line, line
        base = line.split(" at ")[1].split()[0]
        body = httpx2.get(f"{base}/captures", timeout=10).json()
        assert len(body) == len(CORPUS)
        proc.send_signal(signal.SIGINT)
        assert proc.wait(timeout=20) == 0
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()


@pytest.mark.parametrize("argv, says", [
    (["--fault", "cut:x"], "cut:N"),
    (["--capture", "nope"], "no capture 'nope'"),
    (["--speed", "0"], "speed must be"),
    (["--port", "99999"], "a port is 0 to 65535"),
])
def test_the_command_refuses_bad_options_in_one_line(argv, says):
    out = subprocess.run([sys.executable, "-m", "lesson_lib", "serve", *argv],
                         capture_output=True, text=True, timeout=60)
    assert out.returncode == 2
    assert says in out.stderr
    assert len(out.stderr.strip().splitlines()) == 1


def test_the_command_says_port_in_use():
    with serving() as base:
        port = base.rsplit(":", 1)[1]
        out = subprocess.run([sys.executable, "-m", "lesson_lib", "serve", "--port", port],
                             capture_output=True, text=True, timeout=60)
    assert out.returncode == 2
    assert out.stderr.strip() == f"lesson-lib: serve: cannot listen on 127.0.0.1:{port}: port in use"




def test_the_home_page_offers_speed_and_fault_controls_that_the_stream_route_takes(server):
    from lesson_lib.cli.serve.fault_spec import KINDS

    page = httpx2.get(f"{server}/").text
    assert '<select id="speed"' in page and '<select id="fault"' in page
    for name, kind in KINDS.items():
        assert f'<option value="{name}" data-arg="{kind.arg or ""}">' in page, name
    assert '<option value="instant">instant</option>' in page
    # What the page's script asks for when a capture is clicked with a fault chosen:
    cap = load("anthropic-messages/text-then-tool")
    url = f"{server}/stream/{cap.wire}/{cap.name}?speed=instant&fault=cut:2400"
    with httpx2.Client(timeout=30) as client:
        response = client.get(url)
    assert response.status_code == 200 and response.content == cap.body[:2400]
    with httpx2.Client(timeout=30) as client:
        bad = client.get(f"{server}/stream/{cap.wire}/{cap.name}?fault=cut:many")
    assert bad.status_code == 400 and "cut:N" in bad.text
