"""`serve` on bad requests: the provider's own error shape and status, never a bare 500."""

from __future__ import annotations

import json
import logging

import pytest
from starlette.testclient import TestClient

from lesson_lib.cli.serve import MAX_BODY, build_app, settings_for
from lesson_lib.cli.serve.background import StartError
from lesson_lib.cli.serve.page import index_html

HELLO = {"model": "claude-sonnet-4-6", "max_tokens": 5, "stream": True,
         "messages": [{"role": "user", "content": "hi"}]}


@pytest.fixture(scope="module")
def client():
    with TestClient(build_app(settings_for(speed="instant")), raise_server_exceptions=False) as c:
        yield c


def anthropic_error(response, status: int) -> str:
    assert response.status_code == status, response.text
    body = response.json()
    assert body["type"] == "error" and isinstance(body["error"]["message"], str)
    return body["error"]["message"]


def openai_error(response, status: int) -> str:
    assert response.status_code == status, response.text
    error = response.json()["error"]
    assert set(error) >= {"message", "type", "param", "code"}
    return error["message"]


def test_a_deeply_nested_body_is_400_without_a_traceback(client, caplog):
    deep = "[" * 100_000 + "]" * 100_000
    with caplog.at_level(logging.ERROR):
        response = client.post("/v1/messages", content=deep)
        assert "nests too deeply" in anthropic_error(response, 400)
        response = client.post("/v1/chat/completions", content='{"messages": ' + deep + "}")
        assert openai_error(response, 400)
    assert "Traceback" not in caplog.text


@pytest.mark.parametrize("tools", [5, "x", {"a": 1}, True])
def test_tools_that_are_not_a_list_are_400(tmp_path, tools):
    from lesson_lib.capture.captures import load
    cap = load("openai-chat/tool-call")
    folder = tmp_path / "openai-chat"
    folder.mkdir()
    (folder / "c.sse").write_bytes(cap.body)
    (folder / "c.json").write_text(json.dumps(cap.sidecar))
    with TestClient(build_app(settings_for(speed="instant", root=tmp_path)),
                    raise_server_exceptions=False) as c:
        response = c.post("/v1/chat/completions",
                          json={"model": "m", "messages": [], "tools": tools})
    assert "tools" in openai_error(response, 400)


def test_a_body_over_the_limit_is_413_and_the_limit_can_be_raised(client):
    big = json.dumps(HELLO | {"pad": "x" * MAX_BODY}).encode()
    assert "max-body" in anthropic_error(client.post("/v1/messages", content=big), 413)
    assert openai_error(client.post("/v1/responses", content=big), 413)
    with TestClient(build_app(settings_for(speed="instant", max_body=4 * MAX_BODY))) as c:
        response = c.post("/v1/messages?capture=anthropic-messages/hello", content=big)
        assert response.status_code == 200


def test_max_body_below_one_cannot_start():
    with pytest.raises(StartError):
        settings_for(max_body=0)


@pytest.mark.parametrize("query", ["fault=stall:1e308", "fault=stall:600001", "speed=1e-300",
                                   "speed=1e300", "speed=0.001"])
def test_absurd_stalls_and_speeds_are_400(client, query):
    response = client.post(f"/v1/messages?capture=anthropic-messages/hello&{query}", json=HELLO)
    anthropic_error(response, 400)


def test_a_ten_minute_stall_and_the_speed_range_ends_are_accepted(client):
    for query in ("fault=stall:600000&speed=instant", "speed=1000", "speed=0.01"):
        response = client.post(f"/v1/messages?capture=anthropic-messages/hello&{query}",
                               json=HELLO | {"stream": False})
        assert response.status_code == 200, (query, response.text)


@pytest.mark.parametrize("path, wire, says", [
    ("/v1/v1/messages", "anthropic", "added /v1 again"),
    ("/messages", "anthropic", "lacks /v1"),
    ("/chat/completions", "openai", "lacks /v1"),
    ("/v1/v1/responses", "openai", "added /v1 again"),
    ("/nothing/here", "openai", "no such path")])
def test_an_unknown_path_is_404_saying_how_to_set_the_base_url(client, path, wire, says):
    response = client.post(path, json=HELLO)
    message = (anthropic_error if wire == "anthropic" else openai_error)(response, 404)
    assert says in message and "base URL" in message and "/v1/messages" in message


def test_the_page_fetches_an_http_error_captures_status_and_body(client):
    from lesson_lib.capture.captures import corpus
    page = index_html(corpus())
    assert 'data-status="429"' in page and "fetch(url)" in page and "response.status" in page
    response = client.get("/stream/anthropic-messages/http-429-rate-limited")
    assert response.status_code == 429 and "rate_limit" in response.text
