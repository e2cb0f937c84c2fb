"""`record` never writes the key, even when the server echoes it back.

A small echo server on 127.0.0.1 returns the key it was sent in allowlisted
headers (``x-request-id``, ``request-id``, ``x-ratelimit-*``) and in its body:
a stream, or an error kept with ``--keep-failed``. Every file written is
searched for the key, its last 8 characters and any key-shaped string.
"""

from __future__ import annotations

import json
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest

from lesson_lib.capture.captures import load
from lesson_lib.capture.record import record
from lesson_lib.capture.redact import KEY_SHAPE, check_no_key, redact_bytes

pytestmark = pytest.mark.timeout(120)

ANTHROPIC_KEY = "sk-ant-api03-" + "A1b2C3d4" * 8 + "-zyXW9876"
OPENAI_KEY = "sk-proj-" + "Q9w8E7r6" * 8 + "T5y4U3i2"
HELLO = load("anthropic-messages/hello").body


def make_handler(mode: dict):
    class Echo(BaseHTTPRequestHandler):
        def log_message(self, *args):
            pass

        def do_POST(self):
            self.rfile.read(int(self.headers.get("content-length") or 0))
            key = self.headers.get("x-api-key") or self.headers.get("authorization", "")
            key = key.removeprefix("Bearer ")
            echo = mode.get("echo", key)
            status = mode.get("status", 200)
            if status == 200:
                body = HELLO.replace(b'"Hello', f'"Hello {key[-8:]} '.encode(), 1)
                ctype = "text/event-stream"
            else:
                body = json.dumps({"type": "error", "error": {
                    "type": "authentication_error",
                    "message": f"invalid x-api-key {echo}, ends in {echo[-8:]}"}}).encode()
                ctype = "application/json"
            self.send_response(status)
            self.send_header("content-type", ctype)
            self.send_header("x-request-id", f"req_{echo}")
            self.send_header("request-id", f"Bearer {echo}")
            self.send_header("x-ratelimit-limit-requests", f"50 for {echo[-8:]}")
            self.send_header("content-length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)
    return Echo


@pytest.fixture
def echo():
    mode: dict = {}
    server = ThreadingHTTPServer(("127.0.0.1", 0), make_handler(mode))
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}", mode
    finally:
        server.shutdown()
        server.server_close()


def written(folder) -> bytes:
    return b"".join(p.read_bytes() for p in sorted(folder.rglob("*")) if p.is_file())


def assert_no_secret(folder, key: str) -> None:
    data = written(folder)
    assert data, "nothing was written"
    assert key.encode() not in data and key[-8:].encode() not in data
    assert KEY_SHAPE.search(data.decode("utf-8", "replace")) is None


def test_a_key_echoed_in_headers_and_the_stream_never_reaches_disk(echo, tmp_path):
    url, _ = echo
    result = record("anthropic-messages", "hi", base_url=url, out=tmp_path,
                    env={"ANTHROPIC_API_KEY": ANTHROPIC_KEY})
    assert result.code == 0, result.message
    assert_no_secret(tmp_path, ANTHROPIC_KEY)
    cap = load(result.path)
    headers = cap.sidecar["response"]["headers"]
    assert headers["x-request-id"].startswith("req_***") and "x-ratelimit-limit-requests" in headers
    assert len(cap.body) == len(HELLO) + 10 and cap.chunk_ends[-1] == len(cap.body)


@pytest.mark.parametrize("wire", ["anthropic-messages", "openai-chat"])
def test_a_key_echoed_in_a_kept_error_body_never_reaches_disk(echo, tmp_path, wire):
    url, mode = echo
    mode["status"] = 401
    key = ANTHROPIC_KEY if wire == "anthropic-messages" else OPENAI_KEY
    base = url if wire == "anthropic-messages" else f"{url}/v1"
    result = record(wire, "hi", base_url=base, out=tmp_path, keep_failed=True,
                    env={"ANTHROPIC_API_KEY": key, "OPENAI_API_KEY": key})
    assert result.code == 3, result.message
    assert_no_secret(tmp_path, key)
    assert b"invalid x-api-key ****" in load(result.path).body


def test_another_key_shaped_string_refuses_to_write(echo, tmp_path):
    url, mode = echo
    mode["status"], mode["echo"] = 401, "sk-ant-api03-" + "Zz" * 20
    result = record("anthropic-messages", "hi", base_url=url, out=tmp_path, keep_failed=True,
                    env={"ANTHROPIC_API_KEY": ANTHROPIC_KEY})
    assert result.code == 2 and "key-shaped" in result.message
    assert written(tmp_path) == b""


def test_redaction_keeps_the_length_and_the_check_names_where():
    body = f"x {OPENAI_KEY} y".encode()
    assert len(redact_bytes(body, OPENAI_KEY)) == len(body)
    with pytest.raises(ValueError, match="header 'x-request-id'"):
        check_no_key(b"", {"x-request-id": OPENAI_KEY}, {})
