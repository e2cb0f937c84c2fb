"""The server's home page: the corpus with links, and a small live viewer (EventSource).

Above the list, a speed and a fault control (the fault grammar's own kinds, with their
argument), so that an instructor can play any capture, slowed or broken, from the
projector without typing a URL: a click streams ``/stream/<wire>/<name>?speed=..&fault=..``.
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
function play(url) {
  if (source) source.close();
  out.textContent = 'GET ' + url + '\\n';
  source = new EventSource(url);
  const show = (e) => { out.textContent += (e.type) + ': ' + e.data + '\\n'; };
  source.onmessage = show;
  for (const name of window.rtwEventNames || []) source.addEventListener(name, show);
  source.onerror = () => { if (source.readyState === EventSource.CLOSED) out.textContent += '(closed)\\n'; };
}
// A capture of a failed request has no events: EventSource would only say it closed, so
// its status and body are fetched and shown as they are.
async function failed(url) {
  if (source) source.close();
  out.textContent = '';
  const response = await fetch(url);
  out.textContent = 'HTTP ' + response.status + ' ' + response.statusText + '\\n' +
    await response.text() + '\\n';
}
document.querySelectorAll('a.play').forEach((a) => a.addEventListener('click', (e) => {
  e.preventDefault();
  if (Number(a.dataset.status) >= 300) { failed(a.href); return; }
  window.rtwEventNames = JSON.parse(a.dataset.events); play(withControls(a.href));
}));
"""


def index_html(corpus: Sequence[Capture]) -> str:
    """The home page: one row per capture (wire, name, what it shows), each playable."""
    rows = []
    for cap in corpus:
        names = sorted({e.event for e in cap.events if e.event})
        url = f"/stream/{cap.wire}/{cap.name}"
        events = html.escape(_json_list(names))
        rows.append(
            f"<tr><td>{html.escape(cap.wire or '')}</td>"
            f"<td><a class=\"play\" href=\"{html.escape(url)}\" data-events=\"{events}\" "
            f"data-status=\"{int(cap.status)}\">"
            f"{html.escape(cap.name)}</a></td>"
            f"<td>{cap.status}</td><td>{html.escape(cap.demonstrates)}</td></tr>")
    paths = "".join(f"<li><code>POST {p}</code> ({html.escape(w)})</li>"
                    for w, p in PATHS.items())
    return ("<!doctype html><html><head><meta charset=\"utf-8\"><title>Reading the Wire: "
            "captures</title><style>body{font-family:sans-serif;margin:1em}"
            "td{padding:2px 8px;vertical-align:top}pre{background:#f4f4f4;padding:8px;"
            "max-height:20em;overflow:auto}</style></head><body>"
            "<h1>Reading the Wire: the capture server</h1>"
            f"<p>The providers' paths:</p><ul>{paths}</ul>"
            "<p>Pick a capture with <code>?capture=wire/name</code> (or the <code>capture</code>"
            " header), a speed with <code>?speed=2</code> or <code>instant</code>, and faults "
            "with <code>?fault=cut:1200</code>. <a href=\"/captures\">/captures</a> lists the "
            "corpus as JSON. Click a name to watch it stream here, at the speed and with the "
            "fault chosen below.</p>" + controls_html() +
            "<pre id=\"out\" aria-live=\"polite\"></pre>"
            "<table><tr><th>wire</th><th>capture</th><th>status</th><th>shows</th></tr>"
            + "".join(rows) + f"</table><script>{_SCRIPT}</script></body></html>")


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
