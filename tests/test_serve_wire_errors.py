"""`serve` answers an unknown capture on each wire's own path with a 404 in that provider's
shape (its registry entry's error body and headers), so the provider's SDK raises with the
message: every registered wire's official SDK over a real socket (parsed: status, kind,
message; Bedrock's kind from its ``x-amzn-ErrorType`` header), and every wire over HTTP."""

from __future__ import annotations

import json

import httpx
import pytest

from lesson_lib import wires
from lesson_lib.capture.bedrock_replay import served_client
from lesson_lib.capture.captures import load
from lesson_lib.cli.serve.background import serving

MISSING = "no-such-capture"


@pytest.fixture(scope="module")
def url():
    with serving(speed="instant") as base:
        yield base


def _post(url: str, wire: str) -> httpx.Response:
    entry = wires.entry_for(wire)
    request = load(f"{wire}/weather-turn-step1").request
    return httpx.post(url + entry.request_path(request), json=entry.request_body(request),
                      headers={"capture": f"{wire}/{MISSING}"}, timeout=30)


@pytest.mark.parametrize("wire", sorted(wires.WIRES))
def test_an_unknown_capture_is_a_404_in_the_wires_own_shape(url, wire):
    response = _post(url, wire)
    entry = wires.entry_for(wire)
    assert response.status_code == 404
    body = response.json()
    message = json.dumps(body)
    assert MISSING in message
    shape = entry.error_body(404, "m")
    assert _shape(body) == _shape(shape)
    for name, value in entry.error_headers(404).items():
        assert response.headers[name] == value


def _shape(body):
    """The keys of a JSON document, nested, without the values."""
    if isinstance(body, dict):
        return {k: _shape(v) for k, v in body.items()}
    return type(body).__name__


@pytest.mark.parametrize("wire", ["aws-bedrock-converse", "aws-bedrock-invoke"])
def test_boto3_raises_the_servers_message_for_an_unknown_capture(url, wire):
    from botocore.exceptions import ClientError

    cap = load(f"{wire}/weather-turn-step1")
    bedrock = served_client(url, f"{wire}/{MISSING}")
    with pytest.raises(ClientError) as raised:
        if wire == "aws-bedrock-converse":
            bedrock.converse_stream(**cap.request)
        else:
            bedrock.invoke_model_with_response_stream(modelId=cap.request["modelId"],
                                                      body=json.dumps(cap.request["body"]))
    error = raised.value.response["Error"]
    assert error["Code"] == "ResourceNotFoundException"
    assert MISSING in error["Message"]
    assert MISSING in str(raised.value)


def _anthropic(url: str, capture: str):
    import anthropic
    return anthropic.Anthropic(base_url=url, api_key="sk-ant-unused", max_retries=0,
                               default_headers={"capture": capture})


def _openai(url: str, capture: str):
    import openai
    return openai.OpenAI(base_url=f"{url}/v1", api_key="sk-unused", max_retries=0,
                         default_headers={"capture": capture})


def _genai(url: str, capture: str):
    from google import genai
    from google.genai import types
    return genai.Client(api_key="unused", http_options=types.HttpOptions(
        base_url=url, headers={"capture": capture}))


def _boto3_error(error) -> tuple[int, str, str]:
    found = error.response["Error"]
    headers = error.response["ResponseMetadata"]["HTTPHeaders"]
    # Bedrock's body has no type: boto3 names the exception from the header alone.
    assert found.get("Code") == headers.get("x-amzn-errortype"), headers
    return error.response["ResponseMetadata"]["HTTPStatusCode"], found["Code"], found["Message"]


def _genai_error(error) -> tuple[int, str, str]:
    if hasattr(error, "status_code"):
        # Its Interactions client keeps the parsed body whole, Google's shape inside.
        found = error.body.get("error", {}) if isinstance(error.body, dict) else {}
        return error.status_code, found.get("status"), found.get("message")
    return error.code, error.status, error.message


# Per official SDK (by its package, as the registry's `SDKRoute.package` names it): a client
# pointed at the server that asks for one capture, and what its error says, as the SDK
# parsed it: (HTTP status, the error's kind, its message).
SDKS = {
    "anthropic": (_anthropic, lambda e: (e.status_code, e.type, e.api_message)),
    "openai": (_openai, lambda e: (e.status_code, e.code or e.type,
                                   e.body.get("message") if isinstance(e.body, dict) else None)),
    "google-genai": (_genai, lambda e: _genai_error(e)),
    "boto3": (served_client, _boto3_error),
}


@pytest.mark.parametrize("wire", sorted(wires.WIRES))
def test_each_wires_official_sdk_parses_the_servers_404_with_its_message(url, wire):
    from lesson_lib.capture.replay import run_sdk

    route = wires.entry_for(wire).sdk
    if route is None:
        pytest.skip(f"the {wire} wire has no official SDK: no sdk route (its entry says None)")
    assert route.package in SDKS, (f"the {wire} wire's SDK, {route.package}, has no client "
                                   "here pointed at the server: add one to SDKS")
    client, parsed = SDKS[route.package]
    out = run_sdk(load(f"{wire}/weather-turn-step1"),
                  client=client(url, f"{wire}/{MISSING}"))
    assert out.error is not None, f"{route.package} raised nothing for a 404"
    status, kind, message = parsed(out.error)
    assert status == 404, out.error
    assert kind, f"{route.package} read no error type or code from the 404: {out.error!r}"
    assert message and MISSING in message, (f"{route.package} read no message from the "
                                            f"404: {out.error!r}")


def test_google_genai_raises_the_servers_message_for_an_unknown_capture(url):
    from google import genai
    from google.genai import errors, types

    cap = load("google-gemini/weather-turn-step1")
    client = genai.Client(api_key="x", http_options=types.HttpOptions(
        base_url=url, headers={"capture": f"google-gemini/{MISSING}"}))
    with pytest.raises(errors.ClientError) as raised:
        for _ in client.models.generate_content_stream(model=cap.request["model"],
                                                       contents=cap.request["contents"]):
            pass
    assert raised.value.code == 404 and raised.value.status == "NOT_FOUND"
    assert MISSING in (raised.value.message or "")


@pytest.mark.parametrize("wire", sorted(wires.WIRES))
def test_an_unknown_path_near_a_wires_own_is_answered_in_its_shape(url, wire):
    entry = wires.entry_for(wire)
    request = load(f"{wire}/weather-turn-step1").request
    path = "/nothing" + entry.request_path(request).split("?")[0]
    response = httpx.post(url + path, json={}, timeout=30)
    assert response.status_code == 404
    assert _shape(response.json()) == _shape(entry.error_body(404, "m"))
    for name, value in entry.error_headers(404).items():
        assert response.headers[name] == value


@pytest.mark.parametrize("wire", sorted(wires.WIRES))
def test_a_live_turn_says_the_servers_message_for_an_unknown_capture(url, wire):
    import asyncio

    from lesson_lib.live import LiveTurn, RetryPolicy

    request = load(f"{wire}/weather-turn-step1").request
    turn = LiveTurn(url, wire, request, headers={"capture": f"{wire}/{MISSING}"},
                    retry=RetryPolicy(attempts=1))
    result = asyncio.run(asyncio.wait_for(turn.run(), 60))
    assert result.outcome == "failed"
    [error] = result.state.errors
    assert error.phase == "before_output" and MISSING in error.message
    assert "{" not in error.message.split(MISSING)[0], "the error body was shown raw"


def test_the_help_and_the_readme_name_every_registered_path():
    import subprocess
    import sys
    from pathlib import Path

    shown = subprocess.run([sys.executable, "-m", "lesson_lib", "serve", "--help"],
                           capture_output=True, text=True, check=True).stdout
    readme = (Path(__file__).resolve().parents[1] / "README.md").read_text(encoding="utf-8")
    for entry in wires.ENTRIES.values():
        assert f"{entry.method} {entry.route}" in shown
        assert f"{entry.method} {entry.route}" in readme
        if entry.resume is not None:
            assert f"GET {entry.resume.route}?stream=true&{entry.resume.after}=" in shown
            assert f"GET {entry.resume.route}?stream=true&{entry.resume.after}=" in readme
