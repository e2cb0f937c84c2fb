"""The `drop` fault over a real socket: a broken connection, which a clean `cut` is not.

`cut:N` ends the HTTP body properly after N bytes: curl exits 0 and the SDKs raise
nothing. `drop:N` sends the same N bytes and then abandons the connection in the middle of
the chunked body, as a crashed server or a reset does: curl exits 18 and httpx2, under
both SDKs, raises ``RemoteProtocolError``, which each SDK raises as its own
``APIConnectionError`` (anthropic from 2.17; 2.16 let it through). The bytes that did
arrive are the same in both.
"""

from __future__ import annotations

import logging
import shutil
import subprocess

import anthropic
import httpx2
import openai
import pytest

from lesson_lib.breaks import faults
from lesson_lib.capture.captures import load
from lesson_lib.cli.serve import fault_spec, serving
from lesson_lib.cli.serve.matching import PATHS

pytestmark = pytest.mark.timeout(120)

# Each capture with an offset inside its body, after some events have arrived.
CASES = [("anthropic-messages/text-then-tool", 2400), ("openai-responses/text", 3000),
         ("openai-chat/tool-call", 1500)]


@pytest.fixture(scope="module")
def server():
    with serving(speed="instant") as url:
        yield url


def test_drop_keeps_the_bytes_of_cut_and_marks_the_end_broken():
    cap = load("anthropic-messages/text-then-tool")
    cut, drop = faults.cut_at(cap, 2400), faults.drop_at(cap, 2400)
    assert drop.body == cut.body == cap.body[:2400]
    assert drop.chunk_ends == cut.chunk_ends and drop.chunk_times == cut.chunk_times
    assert drop.sidecar["fault"] == {"kind": "drop_at", "at": 2400}
    assert faults.ends_broken(drop) and not faults.ends_broken(cut)
    assert not faults.ends_broken(cap)
    assert faults.drop_at(cap, 10**6).body == cap.body
    with pytest.raises(faults.FaultError):
        faults.drop_at(cap, -1)


def test_drop_is_in_the_fault_grammar():
    assert fault_spec.parse("drop:1200") == fault_spec.FaultSpec("drop", 1200)
    assert "drop:N" in fault_spec.grammar()
    with pytest.raises(fault_spec.FaultSpecError, match="number of bytes"):
        fault_spec.parse("drop")


def curl(url: str) -> subprocess.CompletedProcess:
    return subprocess.run(["curl", "-sS", "-X", "POST", "-H", "content-type: application/json",
                           "-d", '{"stream": true}', url], capture_output=True, timeout=60)


@pytest.mark.skipif(shutil.which("curl") is None, reason="curl is not installed")
@pytest.mark.parametrize(("key", "offset"), CASES)
def test_curl_exits_0_on_a_cut_and_18_on_a_drop_with_the_same_bytes(server, key, offset):
    cap = load(key)
    url = f"{server}{PATHS[cap.wire]}?capture={cap.key}"
    cut, drop = curl(f"{url}&fault=cut:{offset}"), curl(f"{url}&fault=drop:{offset}")
    assert cut.returncode == 0 and cut.stdout == cap.body[:offset]
    assert drop.returncode == 18, drop.stderr
    assert drop.stdout == cap.body[:offset]


def anthropic_events(base: str, fault: str) -> list:
    client = anthropic.Anthropic(base_url=base, api_key="sk-ant-unused", max_retries=0)
    events = []
    with client.messages.stream(model="claude-sonnet-4-6", max_tokens=100,
                                messages=[{"role": "user", "content": "hi"}],
                                extra_query={"capture": "text-then-tool", "fault": fault}) as s:
        for event in s:
            events.append(event)
    return events


def test_the_anthropic_sdk_raises_on_a_drop_only(server):
    cut = anthropic_events(server, "cut:2400")
    assert cut and cut[-1].type != "message_stop"         # a cut raises nothing
    with pytest.raises(anthropic.APIConnectionError, match="incomplete chunked read") as info:
        anthropic_events(server, "drop:2400")
    assert isinstance(info.value.__cause__, httpx2.RemoteProtocolError)


def openai_stream(base: str, key: str, fault: str):
    client = openai.OpenAI(base_url=f"{base}/v1", api_key="sk-unused", max_retries=0)
    query = {"capture": key, "fault": fault}
    if key.startswith("openai-chat/"):
        return client.chat.completions.create(model="gpt-5", stream=True, extra_query=query,
                                              messages=[{"role": "user", "content": "hi"}])
    return client.responses.create(model="gpt-5", input="hi", stream=True, extra_query=query)


@pytest.mark.parametrize(("key", "offset"), CASES[1:])
def test_the_openai_sdk_raises_on_a_drop_only(server, key, offset):
    cut = list(openai_stream(server, key, f"cut:{offset}"))
    assert cut                                             # a cut raises nothing
    arrived = []
    with pytest.raises(openai.APIConnectionError) as info:
        for event in openai_stream(server, key, f"drop:{offset}"):
            arrived.append(event)
    assert isinstance(info.value.__cause__, httpx2.RemoteProtocolError)
    assert len(arrived) == len(cut)                       # what arrived is the same


class Kept(logging.Handler):
    def __init__(self) -> None:
        super().__init__()
        self.records: list[logging.LogRecord] = []

    def emit(self, record: logging.LogRecord) -> None:
        self.records.append(record)


def test_a_drop_leaves_no_traceback_in_the_servers_log(server):
    logger, kept = logging.getLogger("uvicorn.error"), Kept()
    logger.addHandler(kept)
    try:
        with pytest.raises(anthropic.APIConnectionError):
            anthropic_events(server, "drop:2400")
    finally:
        logger.removeHandler(kept)
    assert not [r for r in kept.records if r.exc_info]
