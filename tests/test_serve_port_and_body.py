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
