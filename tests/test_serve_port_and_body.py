"""`serve` on a port of its own, and a request body that never finishes.

``--port 0`` lets thirty learners on one host each get a free port: the command prints
the URL it really listens on, one that a client can use as it stands (an IPv6 address
in brackets). A client that sends half a body and then waits holds nothing for long:
after the body timeout it gets a 408 in its provider's error shape and the connection
closes; a client that leaves mid-body costs one line in the log, not a traceback.
"""

from __future__ import annotations

import re
import signal
import socket
import subprocess
import sys
import time

import httpx2
import pytest

from lesson_lib.cli.serve import serving

pytestmark = pytest.mark.timeout(120)

PRINTED = re.compile(r"lesson-lib: serving \d+ captures at (http://\S+) \(Ctrl-C stops\)")


def _ipv6_loopback() -> bool:
    try:
        with socket.socket(socket.AF_INET6, socket.SOCK_STREAM) as probe:
            probe.bind(("::1", 0))
        return True
    except OSError:
        return False


@pytest.mark.parametrize("host", ["127.0.0.1", pytest.param("::1", marks=pytest.mark.skipif(
    not _ipv6_loopback(), reason="no IPv6 loopback here"))])
def test_port_0_prints_a_url_that_answers(host):
    proc = subprocess.Popen([sys.executable, "-m", "lesson_lib", "serve", "--host", host,
                             "--port", "0", "--speed", "instant"],
                            stderr=subprocess.PIPE, text=True)
    try:
        line = proc.stderr.readline()
        found = PRINTED.fullmatch(line.strip())
        assert found, line
        url = found.group(1)
        port = int(url.rsplit(":", 1)[1])
        assert port not in (0, 8765)
        assert httpx2.get(f"{url}/captures", timeout=10).status_code == 200
        proc.send_signal(signal.SIGINT)
        assert proc.wait(timeout=20) == 0
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()


def test_servers_on_port_0_each_get_their_own_port_and_say_which():
    with serving(speed="instant") as one, serving(speed="instant") as two, \
            serving(host="::1" if _ipv6_loopback() else "127.0.0.1") as three:
        urls = [one, two, three]
        assert len({u.rsplit(":", 1)[1] for u in urls}) == 3
        for url in urls:
            assert httpx2.get(f"{url}/captures", timeout=10).status_code == 200


def _half_sent(base: str, path: str, *, declared: int = 1000) -> socket.socket:
    """A connection that sends the headers and 10 bytes of a `declared`-byte body."""
    host, port = base.removeprefix("http://").rsplit(":", 1)
    conn = socket.create_connection((host.strip("[]"), int(port)), timeout=15)
    conn.sendall(f"POST {path} HTTP/1.1\r\nhost: x\r\ncontent-type: application/json\r\n"
                 f"content-length: {declared}\r\n\r\n{{\"model\": ".encode())
    return conn


def _until_closed(conn: socket.socket) -> bytes:
    """Everything the server sends until it closes the connection."""
    got = b""
    while chunk := conn.recv(65536):
        got += chunk
    conn.close()
    return got


@pytest.mark.parametrize("path, shape", [
    ("/v1/messages", lambda b: b["type"] == "error" and "within 0.5 s" in b["error"]["message"]),
    ("/v1/chat/completions", lambda b: "within 0.5 s" in b["error"]["message"]),
])
def test_a_half_sent_body_gets_408_in_the_provider_s_shape_and_a_close(path, shape):
    import json

    with serving(speed="instant", body_timeout=0.5) as base:
        start = time.monotonic()
        conn = _half_sent(base, path)
        answer = _until_closed(conn)           # the server closes: recv returns b""
        elapsed = time.monotonic() - start
    head, _, body = answer.partition(b"\r\n\r\n")
    assert head.startswith(b"HTTP/1.1 408 "), answer[:200]
    assert b"connection: close" in head.lower()
    assert shape(json.loads(body))
    assert 0.4 < elapsed < 5


def test_many_half_sent_bodies_hold_nothing_after_the_timeout():
    with serving(speed="instant", body_timeout=1) as base:
        conns = [_half_sent(base, "/v1/responses") for _ in range(100)]
        start = time.monotonic()
        answers = [_until_closed(c) for c in conns]
        assert time.monotonic() - start < 10
        # and the server still answers a whole request at once
        ok = httpx2.post(f"{base}/v1/responses?capture=openai-responses/text",
                         json={"stream": True}, timeout=10)
    assert all(a.startswith(b"HTTP/1.1 408 ") for a in answers)
    assert ok.status_code == 200


def test_a_byte_now_and_then_does_not_keep_a_body_open():
    with serving(speed="instant", body_timeout=1) as base:
        conn = _half_sent(base, "/v1/messages")
        start = time.monotonic()
        conn.settimeout(0.3)
        answer = b""
        while time.monotonic() - start < 8:
            try:
                conn.sendall(b" ")
            except OSError:
                break
            try:
                chunk = conn.recv(65536)
            except TimeoutError:
                continue
            answer += chunk
            if not chunk:
                break
        conn.close()
    assert answer.startswith(b"HTTP/1.1 408 ")
    assert time.monotonic() - start < 5


def test_a_client_leaving_mid_body_is_one_line_in_the_log_not_a_traceback():
    proc = subprocess.Popen([sys.executable, "-m", "lesson_lib", "serve", "--port", "0",
                             "--speed", "instant"], stderr=subprocess.PIPE, text=True)
    try:
        base = PRINTED.fullmatch(proc.stderr.readline().strip()).group(1)
        _half_sent(base, "/v1/messages").close()
        time.sleep(1)
        assert httpx2.get(f"{base}/captures", timeout=10).status_code == 200
        proc.send_signal(signal.SIGINT)
        assert proc.wait(timeout=20) == 0
        log = proc.stderr.read()
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    assert "Traceback" not in log and "ClientDisconnect" not in log, log
    left = [line for line in log.splitlines() if "left before its request body" in line]
    assert left == ["INFO:     POST /v1/messages: the client left before its request body "
                    "was complete"], log
