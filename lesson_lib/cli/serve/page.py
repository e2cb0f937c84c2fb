"""The server's home page: the corpus with links, and a small live viewer.

Above the list, a speed and a fault control (the fault grammar's own kinds, with their
argument), so that an instructor can play any capture, slowed or broken, from the
projector without typing a URL: a click streams ``/stream/<wire>/<name>?speed=..&fault=..``.
An SSE capture plays through the browser's ``EventSource``; a capture in binary frames
(Bedrock's event stream, which ``EventSource`` refuses) plays through ``fetch`` and the
page's own frame reader, the lesson 4b layout in a few lines of JavaScript. The list and
the player sit side by side, the player pinned in view and following the stream, so a row
clicked far down the list plays where it can be seen.
"""

from __future__ import annotations

import html
import json
from collections.abc import Sequence

from ...capture.captures import Capture
from .fault_spec import KINDS
from .matching import PATHS

SPEED_CHOICES = ("0.25", "0.5", "1", "2", "4", "instant")

_SCRIPT = """
const out = document.getElementById('out');
let source = null;
function withControls(href) {
  const url = new URL(href, window.location.href);
  url.searchParams.set('speed', document.getElementById('speed').value);
  const kind = document.getElementById('fault').value;
  const arg = document.getElementById('fault-arg');
  const takes = document.getElementById('fault').selectedOptions[0].dataset.arg;
  if (kind) url.searchParams.set('fault', takes ? kind + ':' + arg.value : kind);
  return url.pathname + url.search;
}
document.getElementById('fault').addEventListener('change', (e) => {
  const takes = e.target.selectedOptions[0].dataset.arg || '';
  const arg = document.getElementById('fault-arg');
  arg.disabled = !takes;
  document.getElementById('fault-unit').textContent = takes;
});
let following = 0;
function say(line) {
  out.append(line + '\\n');          // a text node: no re-reading of what is shown
  if (!following) {                  // follow the stream, once a frame
    following = requestAnimationFrame(() => { following = 0; out.scrollTop = out.scrollHeight; });
  }
}
function play(url) {
  if (source) source.close();
  out.textContent = '';
  say('GET ' + url);
  source = new EventSource(url);
  const show = (e) => say(e.type + ': ' + e.data);
  source.onmessage = show;
  for (const name of window.rtwEventNames || []) source.addEventListener(name, show);
  source.onerror = () => { if (source.readyState === EventSource.CLOSED) say('(closed)'); };
}
// Binary frames (application/vnd.amazon.eventstream): total length, headers length and
// prelude CRC (4 bytes each), the headers, the payload, the message CRC (4 bytes).
const utf8 = new TextDecoder();
function frameHeaders(bytes) {
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  const headers = {};
  let i = 0;
  while (i < bytes.length) {
    const name = utf8.decode(bytes.subarray(i + 1, i + 1 + bytes[i]));
    i += 1 + bytes[i];
    const type = bytes[i++];
    const fixed = {2: 1, 3: 2, 4: 4, 5: 8, 8: 8, 9: 16}[type];
    if (type === 0 || type === 1) { headers[name] = type === 0; continue; }
    if (fixed) { i += fixed; headers[name] = '(' + fixed + ' bytes)'; continue; }
    if (type !== 6 && type !== 7) break;            // an unknown type: stop reading headers
    const length = view.getUint16(i);
    const raw = bytes.subarray(i + 2, i + 2 + length);
    headers[name] = type === 7 ? utf8.decode(raw) : '(' + length + ' bytes)';
    i += 2 + length;
  }
  return headers;
}
function showFrame(headers, payload) {
  const kind = headers[':event-type'] || headers[':exception-type'] || '(frame)';
  let shown = payload;
  try {        // an Invoke chunk carries one Anthropic event, base64 in "bytes"
    const inner = JSON.parse(payload).bytes;
    if (typeof inner === 'string') {
      shown = utf8.decode(Uint8Array.from(atob(inner), (c) => c.charCodeAt(0)));
    }
  } catch (e) { /* not JSON: shown as it came */ }
  say(kind + ': ' + shown);
}
async function playFrames(url) {
  if (source) source.close();
  out.textContent = '';
  say('GET ' + url + '  (binary frames, read by this page)');
  const response = await fetch(url);
  const reader = response.body.getReader();
  let buffer = new Uint8Array(0);
  for (;;) {
    const {done, value} = await reader.read();
    if (done) break;
    const joined = new Uint8Array(buffer.length + value.length);
    joined.set(buffer); joined.set(value, buffer.length);
    buffer = joined;
    while (buffer.length >= 12) {
      const view = new DataView(buffer.buffer, buffer.byteOffset, buffer.byteLength);
      const total = view.getUint32(0), headersLength = view.getUint32(4);
      if (total < 16 || headersLength > total - 16) { say('(not a frame: stopped)'); return; }
      if (buffer.length < total) break;
      showFrame(frameHeaders(buffer.subarray(12, 12 + headersLength)),
                utf8.decode(buffer.subarray(12 + headersLength, total - 4)));
      buffer = buffer.subarray(total);
    }
  }
  if (buffer.length) say('(' + buffer.length + ' bytes that make no whole frame)');
  say('(closed)');
}
// A capture of a failed request has no events: EventSource would only say it closed, so
// its status and body are fetched and shown as they are.
async function failed(url) {
  if (source) source.close();
  out.textContent = '';
  const response = await fetch(url);
  say('HTTP ' + response.status + ' ' + response.statusText);
  say(await response.text());
}
document.querySelectorAll('a.play').forEach((a) => a.addEventListener('click', (e) => {
  e.preventDefault();
  if (Number(a.dataset.status) >= 300) { failed(a.href); return; }
  if (a.dataset.framing === 'eventstream') { playFrames(withControls(a.href)); return; }
  window.rtwEventNames = JSON.parse(a.dataset.events); play(withControls(a.href));
}));
"""


def index_html(corpus: Sequence[Capture]) -> str:
    """The home page: one row per capture (wire, name, what it shows), each playable."""
    rows = []
    for cap in corpus:
        names = sorted({e.event for e in cap.events if e.event})
        url = f"stream/{cap.wire}/{cap.name}"   # relative: the page may sit behind a proxy
        events = html.escape(_json_list(names))
        rows.append(
            f"<tr><td>{html.escape(cap.wire or '')}</td>"
            f"<td><a class=\"play\" href=\"{html.escape(url)}\" data-events=\"{events}\" "
            f"data-framing=\"{html.escape(cap.framing)}\" data-status=\"{int(cap.status)}\">"
            f"{html.escape(cap.name)}</a></td>"
            f"<td>{cap.status}</td><td>{html.escape(cap.demonstrates)}</td></tr>")
    paths = "".join(f"<li><code>POST {p}</code> ({html.escape(w)})</li>"
                    for w, p in PATHS.items())
    return ("<!doctype html><html><head><meta charset=\"utf-8\"><title>Reading the Wire: "
            f"captures</title><style>{_STYLE}</style></head><body>"
            "<h1>Reading the Wire: the capture server</h1>"
            f"<p>The providers' paths:</p><ul>{paths}</ul>"
            "<p>Pick a capture with <code>?capture=wire/name</code> (or the <code>capture</code>"
            " header), a speed with <code>?speed=2</code> or <code>instant</code>, and faults "
            "with <code>?fault=cut:1200</code>. <a href=\"captures\">/captures</a> lists the "
            "corpus as JSON. Click a name to watch it stream here, at the speed and with the "
            "fault chosen below.</p>" + controls_html() +
            "<div class=\"layout\"><div class=\"list\">"
            "<table><tr><th>wire</th><th>capture</th><th>status</th><th>shows</th></tr>"
            + "".join(rows) + "</table></div>"
            "<pre id=\"out\" aria-live=\"polite\">Click a capture to play it here.</pre></div>"
            f"<script>{_SCRIPT}</script></body></html>")


# The list scrolls on the left; the player stays in view on the right, as tall as the
# window allows (a projector at 1280x800 shows both).
_STYLE = ("body{font-family:sans-serif;margin:1em}td{padding:2px 8px;vertical-align:top}"
          ".layout{display:grid;grid-template-columns:minmax(0,1.1fr) minmax(0,1fr);gap:1em;"
          "align-items:start}"
          "#out{position:sticky;top:0.5em;margin:0;background:#f4f4f4;padding:8px;"
          "height:calc(100vh - 2em);box-sizing:border-box;overflow:auto;"
          "white-space:pre-wrap;overflow-wrap:anywhere}"
          "td:last-child{overflow-wrap:anywhere}")


def controls_html() -> str:
    """The speed and fault controls the page's links read when clicked."""
    speeds = "".join(f'<option value="{s}"{" selected" if s == "1" else ""}>'
                     f'{s if s == "instant" else s + "x"}</option>' for s in SPEED_CHOICES)
    faults = ['<option value="" data-arg="">none</option>']
    for name, kind in KINDS.items():
        faults.append(f'<option value="{html.escape(name)}" '
                      f'data-arg="{html.escape(kind.arg or "")}">{html.escape(name)}</option>')
    return ('<form class="controls" onsubmit="return false">'
            '<label for="speed">Speed</label> '
            f'<select id="speed" title="1x is the recorded timing">{speeds}</select> '
            '<label for="fault">Fault</label> '
            f'<select id="fault" title="break the stream on purpose">{"".join(faults)}</select> '
            '<label for="fault-arg">at</label> '
            '<input id="fault-arg" type="number" min="0" value="1200" disabled '
            'title="the fault\'s argument"> <span id="fault-unit"></span>'
            "</form>")


def _json_list(names: list[str]) -> str:
    return json.dumps(names)
