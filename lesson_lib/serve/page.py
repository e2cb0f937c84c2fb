"""The server's home page: the corpus with links, and a small live viewer (EventSource)."""

from __future__ import annotations

import html
import json
from collections.abc import Sequence

from ..captures import Capture
from .matching import PATHS

_SCRIPT = """
const out = document.getElementById('out');
let source = null;
function play(url) {
  if (source) source.close();
  out.textContent = '';
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
  out.textContent = 'HTTP ' + response.status + ' ' + response.statusText + '\n' +
    await response.text() + '\n';
}
document.querySelectorAll('a.play').forEach((a) => a.addEventListener('click', (e) => {
  e.preventDefault();
  if (Number(a.dataset.status) >= 300) { failed(a.href); return; }
  window.rtwEventNames = JSON.parse(a.dataset.events); play(a.href);
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
            "corpus as JSON. Click a name to watch it stream here.</p>"
            "<pre id=\"out\"></pre>"
            "<table><tr><th>wire</th><th>capture</th><th>status</th><th>shows</th></tr>"
            + "".join(rows) + f"</table><script>{_SCRIPT}</script></body></html>")


def _json_list(names: list[str]) -> str:
    return json.dumps(names)
