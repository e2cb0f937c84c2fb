"""`lesson-lib record`, offline: record from `lesson-lib serve` on every wire and compare.

A full loop: serve a capture at its recorded speed, record it through the
official SDK's raw streaming response, and get the same body bytes and the
same chunk ends wherever the recorded gap is at least 5 ms. The key is
fake, and no byte written may contain it.
"""

from __future__ import annotations

import os
import subprocess
import sys

import pytest
from serve_helpers import gapped

from lesson_lib import wires
from lesson_lib.capture import captures as captures_mod
from lesson_lib.capture.capture_writer import allowed_headers, header_allowed, scrub_request
from lesson_lib.capture.captures import load
from lesson_lib.capture.record import recordable, request_for
from lesson_lib.cli import commands as cli
from lesson_lib.cli.serve import serving

pytestmark = pytest.mark.timeout(300)

FAKE_KEY = "sk-fake-0123456789-DO-NOT-WRITE"
ROUND_TRIPS = ["anthropic-messages/hello", "openai-chat/text-usage",
               "openai-responses/refusal"]


def prompt_of(cap):
    if cap.wire == "openai-responses" and isinstance(cap.request.get("input"), str):
        return cap.request["input"]
    messages = cap.request.get("messages") or cap.request.get("input")
    assert len(messages) == 1 and isinstance(messages[0]["content"], str), cap.key
    return messages[0]["content"]


def run_record(argv, env):
    return subprocess.run([sys.executable, "-m", "lesson_lib", "record", *argv],
                          capture_output=True, text=True, timeout=120, env=env)


@pytest.fixture(scope="module")
def server():
    with serving(speed=1) as url:
        yield url


def every_byte(folder):
    return b"".join(p.read_bytes() for p in sorted(folder.rglob("*")) if p.is_file())


@pytest.mark.parametrize("key", ROUND_TRIPS)
def test_record_from_serve_gives_the_same_bytes_and_chunk_ends(server, tmp_path, key):
    cap = load(key)
    base = server if cap.wire == "anthropic-messages" else f"{server}/v1"
    env = dict(os.environ, ANTHROPIC_API_KEY=FAKE_KEY, OPENAI_API_KEY=FAKE_KEY)
    out = run_record(["--wire", cap.wire, "--model", cap.request["model"], "--base-url", base,
                      "--out", str(tmp_path), "--name", "again", prompt_of(cap)], env)
    assert out.returncode == 0, out.stderr
    again = load(tmp_path / cap.wire / "again.sse")
    assert again.body == cap.body
    assert again.sidecar["provenance"]["kind"] == "recorded"
    assert again.sidecar["response"]["status"] == cap.status
    assert set(again.chunk_ends) >= {end for end, _ in gapped(cap.chunk_ends, cap.chunk_times)}
    assert again.sidecar["request"]["messages" if cap.wire != "openai-responses" else "input"]
    assert FAKE_KEY.encode() not in every_byte(tmp_path)
    assert cli.main(["check", str(again.path)]) == 0


def test_record_offers_every_wire_whose_registry_entry_has_a_record_route():
    offered = set(recordable())
    assert offered == {w for w, e in wires.ENTRIES.items() if e.record is not None}
    assert {"anthropic-messages", "openai-responses", "openai-chat", "google-gemini",
            "google-gemini-interactions", "aws-bedrock-converse", "aws-bedrock-invoke"} <= offered


@pytest.mark.parametrize("key, asked", [("google-gemini/text-crlf", "contents"),
                                        ("google-gemini-interactions/text", "input")])
def test_record_through_google_genai_pointed_at_serve_gives_the_same_bytes(tmp_path, key,
                                                                           asked):
    cap = load(key)
    env = dict(os.environ, GEMINI_API_KEY=FAKE_KEY)
    with serving(speed=1, capture=key) as base:
        out = run_record(["--wire", cap.wire, "--model", cap.request["model"], "--base-url",
                          base, "--out", str(tmp_path), "--name", "again", "hi"], env)
    assert out.returncode == 0, out.stderr
    again = load(tmp_path / cap.wire / "again.sse")
    assert again.body == cap.body
    assert again.chunk_ends == cap.chunk_ends
    assert again.sidecar["request"] == {"model": cap.request["model"], asked: "hi"}
    assert FAKE_KEY.encode() not in every_byte(tmp_path)
    assert cli.main(["check", str(again.path)]) == 0


@pytest.mark.parametrize("wire", sorted(wires.ENTRIES))
def test_record_round_trips_through_each_wires_official_sdk(tmp_path, wire):
    # serve plays the wire's capture; `record` reads it through the wire's official SDK
    # (its registry entry's record route): the same bytes, read where the capture's were.
    route = wires.entry_for(wire).record
    if route is None:
        pytest.skip(f"the {wire} wire has no record route (its entry says None)")
    cap = load(f"{wire}/weather-turn-step1")
    env = {k: v for k, v in os.environ.items() if k not in route.keys}
    env[route.keys[0]] = FAKE_KEY
    with serving(speed=1, capture=cap.key) as base:
        out = run_record(["--wire", wire, "--base-url", base + route.base_path, "--out",
                          str(tmp_path), "--name", "again", "hi"], env)
    assert out.returncode == 0, out.stderr
    [body] = [p for p in (tmp_path / wire).iterdir() if p.suffix != ".json"]
    assert body.name == "again" + cap.path.suffix
    again = load(body)
    assert again.body == cap.body
    # The same chunk ends: every one before a gap the network keeps, and none of its own
    # (the SDK's reader neither split a chunk nor read ahead of one).
    assert set(again.chunk_ends) >= {end for end, _ in gapped(cap.chunk_ends, cap.chunk_times)}
    assert set(again.chunk_ends) <= set(cap.chunk_ends)
    assert again.sidecar["request"] == scrub_request(request_for(wire, "hi", route.model))
    assert again.sidecar["provenance"]["sdk"][wires.entry_for(wire).sdk.package]
    assert FAKE_KEY.encode() not in every_byte(tmp_path)
    assert cli.main(["check", str(again.path)]) == 0


def test_bedrock_records_with_a_secret_access_key_that_never_reaches_disk(tmp_path):
    # The other boto3 credentials: the secret signs the request (SigV4) and never travels.
    cap = load("aws-bedrock-converse/converse-hello")
    env = {k: v for k, v in os.environ.items() if not k.startswith("AWS_")}
    env.update(AWS_SECRET_ACCESS_KEY=FAKE_KEY, AWS_ACCESS_KEY_ID="AKIAFAKE0123456789")
    with serving(speed="instant", capture=cap.key) as base:
        out = run_record(["--wire", cap.wire, "--base-url", base, "--out", str(tmp_path),
                          "--name", "signed", "Hello"], env)
        del env["AWS_ACCESS_KEY_ID"]
        half = run_record(["--wire", cap.wire, "--base-url", base, "--out", str(tmp_path),
                           "--name", "half", "Hello"], env)
    assert out.returncode == 0, out.stderr
    assert load(tmp_path / cap.wire / "signed.eventstream").body == cap.body
    assert FAKE_KEY.encode() not in every_byte(tmp_path)
    assert half.returncode == 2 and "AWS_ACCESS_KEY_ID" in half.stderr
    assert len(half.stderr.strip().splitlines()) == 1


@pytest.mark.parametrize("key", ["aws-bedrock-invoke/invoke-throttling-exception",
                                 "aws-bedrock-converse/converse-model-stream-error"])
def test_a_bedrock_exception_frame_ends_boto3s_reading_and_the_whole_body_is_kept(tmp_path,
                                                                                 key):
    # boto3 raises at the exception frame; the recording goes on to the body's last byte.
    cap = load(key)
    env = {k: v for k, v in os.environ.items() if not k.startswith("AWS_")}
    env["AWS_BEARER_TOKEN_BEDROCK"] = FAKE_KEY
    with serving(speed="instant", capture=key) as base:
        out = run_record(["--wire", cap.wire, "--base-url", base, "--out", str(tmp_path),
                          "--name", "thrown", "hi"], env)
    assert out.returncode == 3, out.stderr          # recorded; the stream did not end well
    again = load(tmp_path / cap.wire / "thrown.eventstream")
    assert again.body == cap.body and again.status == 200
    assert "transport_error" not in again.sidecar["provenance"]


def test_a_bedrock_request_the_server_refuses_is_kept_with_its_error_type(tmp_path):
    env = {k: v for k, v in os.environ.items() if not k.startswith("AWS_")}
    env["AWS_BEARER_TOKEN_BEDROCK"] = FAKE_KEY
    with serving(speed="instant") as base:      # no capture holds this conversation: a 404
        out = run_record(["--wire", "aws-bedrock-invoke", "--base-url", base, "--out",
                          str(tmp_path), "--name", "refused", "no capture asks this"], env)
    assert out.returncode == 3, out.stderr
    kept = load(tmp_path / "aws-bedrock-invoke" / "refused.eventstream")
    assert kept.status == 404 and b"no aws-bedrock-invoke capture matches" in kept.body
    assert kept.sidecar["response"]["headers"].get("x-amzn-errortype") == \
        "ResourceNotFoundException"


def test_a_gemini_request_the_server_refuses_is_kept_and_exits_3(tmp_path):
    env = dict(os.environ, GEMINI_API_KEY=FAKE_KEY)
    with serving(speed="instant", capture="google-gemini/http-429") as base:
        out = run_record(["--wire", "google-gemini", "--base-url", base, "--out",
                          str(tmp_path), "--name", "refused", "hi"], env)
    assert out.returncode == 3, out.stderr
    kept = load(tmp_path / "google-gemini" / "refused.sse")
    assert kept.status == 429 and kept.body == load("google-gemini/http-429").body


def test_a_failed_request_is_kept_and_exits_3(server, tmp_path):
    cap = load("openai-responses/http-429")
    env = dict(os.environ, OPENAI_API_KEY=FAKE_KEY)
    out = run_record(["--wire", cap.wire, "--model", cap.request["model"],
                      "--base-url", f"{server}/v1", "--out", str(tmp_path), "--name", "limited",
                      prompt_of(cap)], env)
    assert out.returncode == 3, out.stderr
    again = load(tmp_path / cap.wire / "limited.sse")
    assert again.status == 429 and again.body == cap.body
    assert FAKE_KEY.encode() not in every_byte(tmp_path)
    assert cli.main(["check", str(again.path)]) == 0


def test_a_stream_that_did_not_end_properly_exits_3(server, tmp_path):
    env = dict(os.environ, ANTHROPIC_API_KEY=FAKE_KEY)
    out = run_record(["--wire", "anthropic-messages", "--base-url", server, "--out",
                      str(tmp_path), "--name", "cut", "Hello"], env)
    # "Hello" matches the hello capture by content; nothing cuts it yet: exit 0.
    assert out.returncode == 0, out.stderr
    with serving(speed="instant", faults=["cut:700"]) as cutting:
        out = run_record(["--wire", "anthropic-messages", "--base-url", cutting, "--out",
                          str(tmp_path), "--name", "cut", "Hello"], env)
    assert out.returncode == 3
    assert load(tmp_path / "anthropic-messages" / "cut.sse").body == load("hello").body[:700]


def test_no_key_is_one_line_naming_the_variable_and_exit_2(tmp_path):
    env = {k: v for k, v in os.environ.items() if not k.endswith("_API_KEY")}
    out = run_record(["--wire", "openai-chat", "--out", str(tmp_path), "hi"], env)
    assert out.returncode == 2
    assert out.stderr.strip() == ("lesson-lib: record: no key: set OPENAI_API_KEY to record "
                                  "on the openai-chat wire")
    assert not any(tmp_path.iterdir())


def test_cannot_connect_is_exit_2(tmp_path):
    with serving() as base:
        dead = base                      # a port that was just freed
    env = dict(os.environ, ANTHROPIC_API_KEY=FAKE_KEY)
    out = run_record(["--wire", "anthropic-messages", "--base-url", dead, "--out",
                      str(tmp_path), "hi"], env)
    assert out.returncode == 2
    assert "cannot connect" in out.stderr and len(out.stderr.strip().splitlines()) == 1


def test_bad_options_exit_2():
    out = run_record(["--wire", "carrier-pigeon", "hi"], dict(os.environ))
    assert out.returncode == 2
    assert len(out.stderr.strip().splitlines()) == 1


# -- the one allowlist, for the recorder and for the corpus -----------------------------


@pytest.mark.parametrize("cap", captures_mod.corpus(), ids=lambda c: c.key)
def test_every_corpus_sidecar_keeps_only_allowlisted_headers(cap):
    headers = cap.sidecar["response"].get("headers", {})
    assert allowed_headers(headers) == {k.lower(): v for k, v in headers.items()}


@pytest.mark.parametrize("name", ["authorization", "X-Api-Key", "api-key", "cookie",
                                  "set-cookie", "openai-organization",
                                  "anthropic-organization-id", "x-new-header"])
def test_secret_and_unknown_headers_never_pass(name):
    assert not header_allowed(name)
    assert allowed_headers({name: "v", "request-id": "r"}) == {"request-id": "r"}


def test_scrub_request_drops_secret_fields_at_any_depth():
    request = {"model": "m", "api_key": "k", "extra_headers": {"x-api-key": "k"},
               "metadata": {"organization": "org-1", "keep": 1}, "messages": [{"user": "u"}]}
    assert scrub_request(request) == {"model": "m", "metadata": {"keep": 1}, "messages": [{}]}


@pytest.mark.parametrize("key", ["anthropic-messages/hello", "openai-chat/text-usage"])
def test_the_recorded_first_chunk_time_is_the_servers_within_50_ms(server, tmp_path, key):
    # The clock starts when the request is sent, not before the SDK is imported (which once
    # put the first chunk of `hello`, sent at 454 ms, at 2,137 ms).
    cap = load(key)
    base = server if cap.wire == "anthropic-messages" else f"{server}/v1"
    env = dict(os.environ, ANTHROPIC_API_KEY=FAKE_KEY, OPENAI_API_KEY=FAKE_KEY)
    out = run_record(["--wire", cap.wire, "--model", cap.request["model"], "--base-url", base,
                      "--out", str(tmp_path), "--name", "timed", prompt_of(cap)], env)
    assert out.returncode == 0, out.stderr
    again = load(tmp_path / cap.wire / "timed.sse")
    sent, recorded = cap.chunk_times[0], again.chunk_times[0]
    assert sent > 200 and abs(recorded - sent) <= 50, (sent, recorded)
