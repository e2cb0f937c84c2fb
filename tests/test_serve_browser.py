"""`lesson-lib serve` in a real browser: headless Chromium reads streams from a served page.

With `fetch()` and its `ReadableStream`, the bytes must be the capture's; with
`EventSource`, the events the browser dispatched (type, data, last event id)
must equal `lesson_lib.sse.decoder`'s for the same bytes, and after the end the
reconnect gets 204, so `EventSource` closes. Over the registry: the page's player plays a
capture of every registered wire (binary frames through its own reader), and `fetch` reads
each wire's capture byte for byte at the wire's own path. Skipped (with the reason) when
Chromium is not installed; ``.ci/run`` installs Debian's ``chromium``.
"""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from lesson_lib import wires
from lesson_lib.capture.captures import load
from lesson_lib.cli.serve import serving

CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")
CHROMIUM_FLAGS = ["--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
                  "--disable-background-networking", "--disable-component-update",
                  "--disable-sync", "--disable-dev-shm-usage"]

pytestmark = [
    pytest.mark.browser,
    pytest.mark.timeout(180),
    pytest.mark.skipif(CHROMIUM is None, reason="Chromium is not installed "
                       "(Debian package `chromium`; .ci/run installs it)"),
]

FETCH = """async ([path, method]) => {
  const response = await fetch(path, method === 'GET' ? {} : {method: 'POST',
      body: '{"stream": true}', headers: {'content-type': 'application/json'}});
  const reader = response.body.getReader();
  const bytes = [];
  let reads = 0;
  for (;;) {
    const {done, value} = await reader.read();
    if (done) break;
    reads += 1;
    bytes.push(...value);
  }
  return {status: response.status, bytes, reads};
}"""

EVENT_SOURCE = """([path, names]) => new Promise((resolve) => {
  const seen = [];
  const source = new EventSource(path);
  const keep = (e) => seen.push({type: e.type, data: e.data, id: e.lastEventId});
  source.onmessage = keep;
  for (const name of names) source.addEventListener(name, keep);
  let opens = 0;
  source.onopen = () => { opens += 1; };
  source.onerror = () => {
    if (source.readyState === EventSource.CLOSED) resolve({seen, opens});
  };
  setTimeout(() => resolve({seen, opens, timedOut: true}), 30000);
})"""


@pytest.fixture(scope="module")
def page():
    from playwright.sync_api import sync_playwright

    with serving(speed="instant") as base, sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, headless=True,
                                    args=CHROMIUM_FLAGS)
        try:
            tab = browser.new_page()
            tab.goto(f"{base}/")
            assert "capture server" in tab.content()
            yield tab
        finally:
            browser.close()


@pytest.mark.parametrize("key", ["openai-chat/parallel-tools-interleaved",
                                 "anthropic-messages/hello", "openai-responses/http-429"])
def test_fetch_reads_the_capture_byte_for_byte(page, key):
    cap = load(key)
    path = {"anthropic-messages": "/v1/messages", "openai-chat": "/v1/chat/completions",
            "openai-responses": "/v1/responses"}[cap.wire]
    got = page.evaluate(FETCH, [f"{path}?capture={key}&speed=1", "POST"])
    assert got["status"] == cap.status
    assert bytes(got["bytes"]) == cap.body
    assert got["reads"] >= min(3, len(cap.chunk_ends))   # it arrived as a stream


@pytest.mark.parametrize("key", ["anthropic-messages/hello", "openai-responses/refusal",
                                 "openai-chat/content-filter"])
def test_event_source_dispatches_what_lesson_lib_sse_decodes(page, key):
    cap = load(key)
    names = sorted({e.event for e in cap.events if e.event})
    got = page.evaluate(EVENT_SOURCE, [f"/stream/{cap.wire}/{cap.name}", names])
    assert not got.get("timedOut"), "EventSource did not close after the stream ended"
    expected = [{"type": e.event or "message", "data": e.data, "id": e.id} for e in cap.events]
    assert got["seen"] == expected
    assert got["opens"] == 1     # the reconnect after the end got 204, not the stream again


def test_the_home_page_controls_play_a_capture_slowed_or_broken(page):
    from lesson_lib.breaks import faults

    cap = load("anthropic-messages/text-then-tool")
    page.select_option("#speed", "instant")
    page.select_option("#fault", "cut")
    assert page.is_enabled("#fault-arg") and page.inner_text("#fault-unit") == "bytes"
    page.fill("#fault-arg", "2400")
    page.click(f'a.play[href="stream/{cap.wire}/{cap.name}"]')
    page.wait_for_function("document.getElementById('out').textContent.includes('(closed)')",
                           timeout=30000)
    shown = page.inner_text("#out").splitlines()
    assert shown[0] == f"GET /stream/{cap.wire}/{cap.name}?speed=instant&fault=cut%3A2400"
    events = [line for line in shown[1:] if line and line != "(closed)"]
    assert len(events) == len(faults.cut_at(cap, 2400).events)   # the whole events before it
    page.select_option("#fault", "drop-terminal")
    assert not page.is_enabled("#fault-arg")


def _play(page, cap) -> list[str]:
    page.select_option("#speed", "instant")
    page.select_option("#fault", "")
    page.click(f'a.play[href="stream/{cap.wire}/{cap.name}"]')
    page.wait_for_function("document.getElementById('out').textContent.includes('(closed)')",
                           timeout=30000)
    return page.inner_text("#out").splitlines()


@pytest.mark.parametrize("key", ["aws-bedrock-converse/converse-hello",
                                 "aws-bedrock-invoke/invoke-hello"])
def test_the_page_plays_binary_frames_through_its_own_reader(page, key):
    cap = load(key)
    shown = _play(page, cap)
    assert "binary frames" in shown[0]
    frames = [line for line in shown[1:] if line and line != "(closed)"]
    kinds = [line.split(": ", 1)[0] for line in frames]
    if cap.wire == "aws-bedrock-invoke":       # each chunk's Anthropic event, decoded
        assert kinds == ["chunk"] * len(cap.events)
    else:
        assert kinds == [e.event for e in cap.events]
    assert [line.split(": ", 1)[1] for line in frames] == [e.data for e in cap.events]


def _shown_lines(cap) -> list[str]:
    """What the player shows for each of the capture's events: the event's type (a binary
    frame's own, `:event-type`; an Invoke chunk's is ``chunk``) and its data."""
    from lesson_lib.sse.eventstream import decode

    if cap.framing == "eventstream":
        kinds = [f.header(":event-type") or f.header(":exception-type")
                 for f in decode(cap.body)[0]]
    else:
        kinds = [e.event or "message" for e in cap.events]
    assert len(kinds) == len(cap.events), cap.key
    return [line for kind, e in zip(kinds, cap.events, strict=True)
            for line in f"{kind}: {e.data}".splitlines() if line]


@pytest.mark.parametrize("wire", sorted(wires.ENTRIES))
def test_the_page_plays_a_capture_of_every_registered_wire(page, wire):
    cap = load(f"{wire}/weather-turn-step1")
    expected = _shown_lines(cap)
    page.select_option("#speed", "instant")
    page.select_option("#fault", "")
    page.click(f'a.play[href="stream/{cap.wire}/{cap.name}"]')
    # Waits for the last event, not for "(closed)": EventSource closes only after its
    # reconnect (about 3 s later) is answered 204, which the test above checks once.
    page.wait_for_function("([n]) => document.getElementById('out').textContent"
                           ".split('\\n').filter((l) => l).length > n", arg=[len(expected)],
                           timeout=30000)
    shown = page.inner_text("#out").splitlines()
    assert shown[0].startswith(f"GET /stream/{wire}/{cap.name}?speed=instant"), shown[0]
    assert [line for line in shown[1:] if line and line != "(closed)"] == expected


@pytest.mark.parametrize("wire", sorted(wires.ENTRIES))
def test_fetch_reads_each_wires_capture_at_its_own_path(page, wire):
    entry = wires.entry_for(wire)
    cap = load(f"{wire}/weather-turn-step1")
    path = entry.request_path(cap.request)
    path += ("&" if "?" in path else "?") + f"capture={cap.key}&speed=instant"
    got = page.evaluate(FETCH, [path, entry.method])
    assert got["status"] == cap.status == 200
    assert bytes(got["bytes"]) == cap.body


def test_what_plays_is_in_view_at_1280x800_and_follows_the_stream(page):
    from lesson_lib.capture.captures import corpus

    page.set_viewport_size({"width": 1280, "height": 800})
    last = corpus()[-1]
    longest = max(corpus(), key=lambda c: len(c.events))
    for cap in (last, longest):
        _play(page, cap)
        box = page.evaluate("(() => { const r = document.getElementById('out')"
                            ".getBoundingClientRect(); return [r.top, r.bottom, r.left, "
                            "r.right]; })()")
        top, bottom, left, right = box
        assert 0 <= top and bottom <= 800 and 0 <= left and right <= 1280, (cap.key, box)
        page.wait_for_function("(() => { const o = document.getElementById('out'); "
                               "return o.scrollTop + o.clientHeight >= o.scrollHeight - 2; })()",
                               timeout=5000)     # the player shows the stream's last line
    assert page.evaluate("document.documentElement.scrollWidth") <= 1280, "runs off the side"
    artifacts = Path(__file__).resolve().parent.parent / "test-artifacts"
    artifacts.mkdir(exist_ok=True)
    page.screenshot(path=str(artifacts / "serve-page-1280x800.png"))
