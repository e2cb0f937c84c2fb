"""Checks shared by the drawing tests: what a drawing's HTML may contain."""

from __future__ import annotations

from html.parser import HTMLParser

# Attributes a browser fetches from (or runs) without a click.
FETCHING = frozenset({"src", "srcset", "poster", "data", "action", "formaction", "background",
                      "xlink:href", "style", "lowsrc", "dynsrc", "ping", "manifest", "codebase",
                      "cite", "longdesc", "icon", "archive", "profile", "usemap"})
LIVE_TAGS = frozenset({"script", "iframe", "object", "embed", "style", "link", "meta", "base",
                       "form", "input", "button", "svg", "math", "video", "audio", "source",
                       "frame", "frameset", "template", "img", "picture", "textarea", "select"})


class _Collect(HTMLParser):
    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.tags: list[tuple[str, list[tuple[str, str | None]]]] = []

    def handle_starttag(self, tag, attrs):
        self.tags.append((tag, attrs))

    handle_startendtag = handle_starttag


def tags_of(html: str) -> list[tuple[str, list[tuple[str, str | None]]]]:
    """Every start tag in `html` with its attributes (as a browser's tokenizer reads them)."""
    parser = _Collect()
    parser.feed(html)
    parser.close()
    return parser.tags


def live_elements(html: str, *, allow_img_from: tuple[str, ...] = ()) -> list[str]:
    """Everything in `html` that would run or fetch without a click (empty when safe)."""
    problems = []
    for tag, attrs in tags_of(html):
        src = dict(attrs).get("src") or ""
        if tag == "img" and allow_img_from and src.startswith(allow_img_from):
            continue
        if tag in LIVE_TAGS:
            problems.append(f"<{tag}> {attrs}")
        for name, value in attrs:
            if name.startswith("on") or name in FETCHING:
                problems.append(f"<{tag} {name}={value!r}>")
            if name == "href" and not (value or "").lower().startswith(
                    ("http://", "https://", "mailto:")):
                problems.append(f"<{tag} href={value!r}>")
            if name == "href" and tag != "a":
                problems.append(f"<{tag} href={value!r}>")
    return problems
