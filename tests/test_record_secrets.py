"""`record` never writes the key, even when the server echoes it back.

A small echo server on 127.0.0.1 returns the key it was sent in allowlisted
headers (``x-request-id``, ``request-id``, ``x-ratelimit-*``) and in its body:
a stream, or an error kept with ``--keep-failed``. Every file written is
searched for the key, its last 8 characters and any key-shaped string.
"""

from __future__ import annotations

import base64
import json
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest
from hypothesis import given
from hypothesis import strategies as st

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
                if "text" in mode:          # the key, encoded, in the first text delta
                    body = body.replace(b'"Hello', f'"Hello {mode["text"](key)}'.encode(), 1)
                if "split" in mode:         # the key in two parts, in two text deltas
                    half = mode["split"]
                    body = body.replace(b'"! ', f'"{key[half:]}! '.encode(), 1)
                    body = body.replace(b'"Hello', f'"Hello {key[:half]}'.encode(), 1)
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
            if "header" in mode:
                self.send_header("x-request-id", mode["header"](key))
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


# -- the key echoed encoded, or in pieces ---------------------------------------------

ENCODINGS = {
    "base64": lambda k: base64.b64encode(k.encode()).decode(),
    "base64 after a prefix": lambda k: base64.b64encode(b"id:" + k.encode()).decode(),
    "URL-safe base64": lambda k: base64.urlsafe_b64encode(b"x" + k.encode()).decode(),
    "percent-encoded": lambda k: "".join(f"%{b:02X}" for b in k.encode()),
    "hex": lambda k: k.encode().hex(),
    "HEX": lambda k: k.encode().hex().upper(),
    "\\u-escaped in JSON": lambda k: "".join(f"\\u{ord(c):04x}" for c in k),
    "half \\u-escaped": lambda k: "".join(f"\\u{ord(c):04X}" if i % 2 else c
                                          for i, c in enumerate(k)),
    "a 16-character prefix": lambda k: k[:16],
    "a 20-character slice": lambda k: k[20:40],
    "a 12-character piece": lambda k: k[30:42],
}


@pytest.mark.parametrize("how", ENCODINGS)
@pytest.mark.parametrize("wire", ["anthropic-messages", "openai-chat"])
def test_a_key_echoed_encoded_in_the_body_refuses_to_write(echo, tmp_path, how, wire):
    url, mode = echo
    mode["text"] = ENCODINGS[how]
    key = ANTHROPIC_KEY if wire == "anthropic-messages" else OPENAI_KEY
    result = record(wire, "hi", base_url=url if wire == "anthropic-messages" else f"{url}/v1",
                    out=tmp_path, env={"ANTHROPIC_API_KEY": key, "OPENAI_API_KEY": key})
    assert result.code == 2, result.message
    assert "would reach disk in the body" in result.message
    assert written(tmp_path) == b""


@pytest.mark.parametrize("how", ["base64", "URL-safe base64", "percent-encoded", "hex",
                                 "a 16-character prefix", "a 20-character slice"])
def test_a_key_echoed_encoded_in_a_kept_header_refuses_to_write(echo, tmp_path, how):
    url, mode = echo
    mode["header"] = lambda k: "req_" + ENCODINGS[how](k)
    result = record("openai-chat", "hi", base_url=f"{url}/v1", out=tmp_path,
                    env={"OPENAI_API_KEY": OPENAI_KEY})
    assert result.code == 2 and "header 'x-request-id'" in result.message, result.message
    assert written(tmp_path) == b""


def test_a_key_split_across_two_text_deltas_refuses_to_write(echo, tmp_path):
    url, mode = echo
    mode["split"] = 16      # neither part shaped like a key: "sk-proj-" + 8, and the rest
    result = record("openai-chat", "hi", base_url=f"{url}/v1", out=tmp_path,
                    env={"OPENAI_API_KEY": OPENAI_KEY})
    assert result.code == 2, result.message
    assert written(tmp_path) == b""


SHORT_KEY = "sk-" + "Hj3kL9pQ2wX7zR4tB8n"       # 22 characters: halves of 11


def _delta(text: str) -> str:
    return ('event: content_block_delta\ndata: {"type":"content_block_delta","index":0,'
            f'"delta":{{"type":"text_delta","text":{json.dumps(text)}}}}}\n\n')


def test_only_the_joined_text_shows_a_key_cut_into_pieces_under_twelve():
    from lesson_lib.capture.key_pieces import key_pieces

    half = len(SHORT_KEY) // 2
    body = (_delta("Your key is ") + _delta(SHORT_KEY[:half]) + _delta(SHORT_KEY[half:])
            + _delta(".")).encode()
    assert key_pieces(SHORT_KEY).find(body.decode()) is None     # no piece as it stands
    with pytest.raises(ValueError, match="the body read as the 'text' strings"):
        check_no_key(body, {}, {}, key=SHORT_KEY)
    escaped = "".join(f"\\u{ord(c):04x}" if i % 3 == 0 else c for i, c in enumerate(SHORT_KEY))
    mixed = _delta("@").replace("@", escaped).encode()     # the escapes as JSON carries them
    with pytest.raises(ValueError, match="decoded"):
        check_no_key(mixed, {}, {}, key=SHORT_KEY)


def test_the_sidecar_is_checked_too():
    sidecar = {"request": {}, "provenance": {"transport_error": "ReadError: " + ENCODINGS[
        "base64"](OPENAI_KEY)}}
    with pytest.raises(ValueError, match="in the sidecar"):
        check_no_key(b"", {}, sidecar, key=OPENAI_KEY)


def test_what_the_record_tests_send_is_no_echo():
    """The public prefix is no secret, the last 8 characters are cleared, other text is
    text: none of it refuses."""
    body = _delta("keys start sk-ant-api03- or sk-proj-, and ends in " + ANTHROPIC_KEY[-8:])
    check_no_key(body.encode() + HELLO, {"x-request-id": "req_123"}, {"request": {}},
                 key=ANTHROPIC_KEY)
    check_no_key(HELLO, {}, {"request": {}}, key=OPENAI_KEY)


KEY_TEXT = st.text("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_-",
                   min_size=14, max_size=80)
PLAIN = st.text(" .,:;!?\n'()[]{}", max_size=40)


@given(key=KEY_TEXT, start=st.integers(0, 66), length=st.integers(14, 80),
       how=st.sampled_from(list(ENCODINGS)[:8]), pad=st.binary(max_size=2),
       before=PLAIN, after=PLAIN)
def test_any_slice_of_14_or_more_in_any_encoding_is_found(key, start, length, how, pad,
                                                          before, after):
    piece = key[start:start + length]
    if len(piece) < 14:
        piece = key[-14:]
    encode = ENCODINGS[how]
    shown = (base64.b64encode(pad + piece.encode()).decode() if "base64" in how
             else encode(piece))
    if "\\u" in how:       # the escapes as JSON carries them, inside a JSON string
        body = f'{{"text": {json.dumps(before)[:-1]}{shown}{json.dumps(after)[1:]}}}'.encode()
    else:
        body = (before + shown + after).encode()
    with pytest.raises(ValueError, match="reach disk"):
        check_no_key(body, {}, {}, key=key)


@given(key=KEY_TEXT, text=st.text(max_size=200))
def test_text_without_the_key_passes(key, text):
    for i in range(len(key) - 11):
        if key[i:i + 12] in text:
            return
    if any(p in text for p in ("sk-ant-", "sk-", "AIza", "AKIA", "xai-")):
        return
    check_no_key(text.encode(), {"x-request-id": text}, {"request": text}, key=key)


def test_the_check_is_linear_in_the_body():
    from lesson_lib.capture.key_pieces import key_pieces

    pieces = key_pieces(OPENAI_KEY)
    noise = base64.b64encode(bytes(range(256)) * 4096).decode()     # one long run, ~1.4 MB
    start = time.perf_counter()
    assert pieces.find(noise) is None
    check_no_key(noise.encode(), {}, {}, key=OPENAI_KEY)
    assert time.perf_counter() - start < 10
