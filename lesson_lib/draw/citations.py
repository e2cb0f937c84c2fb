"""Citations drawn on the span they cite, with their source.

A source arrives as the wire gave it (`SourceAdded`): an Anthropic citation
(``cited_text`` with a ``url`` and ``title``, or a document's
``document_title``), a Responses annotation (``url_citation`` with the
``start_index`` / ``end_index`` of the cited span in the text). Each becomes
one settled part, ``<block>/cite<n>`` (`n` counts the turn's sources), after its
text: the cited span
quoted, and the source's title and address. A source's address is the
provider's, not model text, so an http(s) one is a link (a click fetches it,
nothing else does).
"""

from __future__ import annotations

from typing import Any

from .parts import Part
from .safety import esc, link_allowed

QUOTE = 200


def citation_part(block: str, n: int, source: Any, text_so_far: str) -> Part:
    """The `n`-th source of a block as a settled part (see the module)."""
    src = source if isinstance(source, dict) else {"value": source}
    span = src.get("cited_text")
    start, end = src.get("start_index"), src.get("end_index")
    if not span and isinstance(start, int) and isinstance(end, int) and 0 <= start <= end:
        span = text_so_far[start:end]
    span = str(span or "").strip()
    if len(span) > QUOTE:
        span = span[:QUOTE] + "…"
    title = src.get("title") or src.get("document_title") or src.get("type") or "source"
    url = src.get("url")
    where = ""
    if isinstance(url, str) and link_allowed(url):
        where = (f' <a href="{esc(url)}" rel="nofollow noopener noreferrer" target="_blank">'
                 f"{esc(url)}</a>")
    elif url:
        where = f" <code>{esc(url)}</code>"
    quote = f'<q class="draw-span">{esc(span)}</q> ' if span else ""
    html = (f'<div class="draw-cite"><sup class="draw-cite-mark">[{n}]</sup> {quote}'
            f'<span class="draw-source">— {esc(title)}</span>{where}</div>')
    text = f"[{n}] " + (f"“{span}” " if span else "") + f"— {title}" + (f" <{url}>" if url else "")
    return Part(f"{block}/cite{n}", "citation", html, text, True)
