"""Markdown to HTML with markdown-it-py, under the drawing's rules.

One parser for every block, configured for streaming:

- CommonMark plus tables and strikethrough, ``html=False``: raw HTML in model
  text is shown as text, never rendered.
- No reference definitions (``[x]: https://...``): a definition arriving
  later would change how an earlier, settled block reads.
- At most 20 levels of nesting (markdown-it's own limit): a 10,000-deep list
  is drawn flat beyond that, in linear time, never a recursion error. Flat,
  not cut: markdown-it skips whatever lies deeper than its limit, so beyond
  it our block parser reads the rest with the rules that open no container
  (quotes and lists become the text of paragraphs, markers and all).
- A table row with more cells than its header keeps them: GFM drops the
  extra cells, so their text would vanish; here they join the row's last
  cell, separated by ``|`` as they were written.

Links and images go through `safety`: while a block forms (`forming`) a link
is drawn as text; a settled link is an ``<a href>`` only for http(s) and
mailto. An image is an ``<img>`` only when `images` is on (its block settled
and the turn completed) and its origin is on `origins`; otherwise it is its
alt text and its URL, as text.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from markdown_it import MarkdownIt
from markdown_it.common.utils import mdTrim
from markdown_it.parser_block import ParserBlock
from markdown_it.rules_block import StateBlock, blockquote, list_block, table
from markdown_it.rules_block.table import escapedSplit, getLine
from markdown_it.token import Token

from .safety import esc, image_allowed, link_allowed

MAX_NESTING = 20


class _FlatBeyondLimit(ParserBlock):
    """markdown-it's block parser, which draws what lies past the nesting limit flat."""

    def tokenize(self, state: StateBlock, startLine: int, endLine: int) -> None:  # noqa: N803
        """The blocks of lines `startLine` to `endLine`; past the limit, without containers."""
        if state.level < state.md.options.maxNesting:
            super().tokenize(state, startLine, endLine)   # a container's rule calls us again
            return
        rules = [rule for rule in self.ruler.getRules("")
                 if rule is not blockquote and rule is not list_block]
        line = startLine
        while line < endLine:
            state.line = line = state.skipEmptyLines(line)
            if line >= endLine or state.sCount[line] < state.blkIndent:
                break               # the end of the container we are in (as markdown-it's loop)
            for rule in rules:      # the paragraph rule always matches: each turn takes a line
                if rule(state, line, endLine, False):
                    break
            line = state.line


def _table_keeping_cells(state: StateBlock, startLine: int, endLine: int,  # noqa: N803
                         silent: bool) -> bool:
    """markdown-it's table rule, with a row's cells past the header's count kept (in its
    last cell) instead of dropped."""
    first = len(state.tokens)
    if not table(state, startLine, endLine, silent):
        return False
    if silent:
        return True
    row_map, cells, last = None, 0, None
    for token in state.tokens[first:]:
        if token.type == "tr_open" and token.map and token.map[0] >= startLine + 2:
            row_map, cells, last = token.map, 0, None            # a body row (not the header)
        elif token.type == "td_open":
            cells += 1
        elif token.type == "inline" and row_map is not None:
            last = token
        elif token.type == "tr_close" and row_map is not None and last is not None:
            columns = escapedSplit(mdTrim(getLine(state, row_map[0])))
            if columns and columns[0] == "":
                columns.pop(0)
            if columns and columns[-1] == "":
                columns.pop()
            extra = [mdTrim(c) for c in columns[cells:]]
            if extra:
                last.content = " | ".join([last.content, *extra]) if last.content else \
                    " | ".join(extra)
            row_map = None
    return True


def _parser() -> MarkdownIt:
    md = MarkdownIt("commonmark", {"html": False, "linkify": False, "typographer": False,
                                   "maxNesting": MAX_NESTING})
    md.block = _FlatBeyondLimit()
    md.block.ruler.at("table", _table_keeping_cells, {"alt": ["paragraph", "reference"]})
    md.enable(["table", "strikethrough"])
    md.disable("reference")
    md.add_render_rule("link_open", _link_open)
    md.add_render_rule("link_close", _link_close)
    md.add_render_rule("image", _image)
    return md


def _link_open(self: Any, tokens: Sequence[Token], idx: int, options: Any, env: dict) -> str:
    href = str(tokens[idx].attrGet("href") or "")
    live = not env.get("forming", True) and link_allowed(href)
    env.setdefault("links", []).append(live)
    if live:
        return (f'<a href="{esc(href)}" rel="nofollow noopener noreferrer" '
                'target="_blank">')
    return f'<span class="draw-link" title="{esc(href)}">'


def _link_close(self: Any, tokens: Sequence[Token], idx: int, options: Any, env: dict) -> str:
    stack = env.get("links") or [False]
    return "</a>" if stack.pop() else "</span>"


def _image(self: Any, tokens: Sequence[Token], idx: int, options: Any, env: dict) -> str:
    token = tokens[idx]
    src = str(token.attrGet("src") or "")
    alt = self.renderInlineAsText(token.children or [], options, env)
    if env.get("images") and image_allowed(src, env.get("origins", frozenset())):
        return (f'<img src="{esc(src)}" alt="{esc(alt)}" loading="lazy" '
                'referrerpolicy="no-referrer">')
    return (f'<span class="draw-image-blocked">[image: {esc(alt)}] '
            f'<code>{esc(src)}</code></span>')


MD = _parser()


def render(source: str, *, forming: bool, images: bool = False,
           origins: frozenset[str] = frozenset()) -> str:
    """`source` (one Markdown block, or the tail) as HTML under the rules above."""
    env: dict[str, Any] = {"forming": forming, "images": images, "origins": origins}
    return MD.render(source, env)


def block_tokens(source: str) -> list[Token]:
    """`source`'s block tokens (block parse only: no inline, no rendering)."""
    tokens: list[Token] = []
    MD.block.parse(source, MD, {}, tokens)
    return tokens


def block_starts(source: str, tokens: list[Token] | None = None) -> list[int]:
    """The line numbers where `source`'s top-level blocks begin (block parse only)."""
    if tokens is None:
        tokens = block_tokens(source)
    return [t.map[0] for t in tokens if t.level == 0 and t.nesting >= 0 and t.map]
