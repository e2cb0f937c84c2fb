"""The Markdown of a text as it arrives: settled blocks never change, the tail is held back."""

from __future__ import annotations

import re
import time
from html.parser import HTMLParser

import pytest
from examples import examples
from hypothesis import assume, given, settings
from hypothesis import strategies as st

from lesson_lib.draw import MarkdownBlocks, hold_back
from lesson_lib.draw.markdown import render

LINES = ["# Heading", "Heading two", "===", "---", "- item", "- **bold** item", "  - nested",
         "1. first", "2) second", "> quoted", "> > deeper", "lazy continuation", "```py",
         "```", "~~~", "    indented code", "| a | b |", "|---|---|", "| 1 | 2 |",
         "plain *emphasis* and `code` text", "**strong", "[link](https://example.com/x)",
         "![img](https://attacker.example/?q=SECRET)", "<b>tag</b>", "\\*escaped\\*", "",
         "", "", "***", "Foo", "#", "#x", "+ plus item", "* star item", "\t tab", "a\r"]


def feed_all(fragments: list[str]) -> tuple[list[tuple[int, str]], MarkdownBlocks, list]:
    blocks = MarkdownBlocks()
    settled: list[tuple[int, str]] = []
    history = []
    for fragment in fragments:
        settled += blocks.feed(fragment)
        history.append((list(settled), blocks.offset, blocks.tail))
    settled += blocks.finish()
    return settled, blocks, history


def cut(text: str, points: list[int]) -> list[str]:
    points = sorted({p % (len(text) + 1) for p in points})
    edges = [0, *points, len(text)]
    return [text[a:b] for a, b in zip(edges, edges[1:], strict=False)]


@settings(max_examples=examples(300), deadline=None)
@given(st.lists(st.sampled_from(LINES), max_size=25), st.lists(st.integers(0, 10_000),
                                                               max_size=30))
def test_blocks_settled_mid_stream_are_the_blocks_of_the_whole_text(lines, points):
    text = "\n".join(lines)
    whole, _, _ = feed_all([text])
    pieces, _, history = feed_all(cut(text, points))
    assert pieces == whole                      # a block settled early is a block of the end
    normal = text.replace("\r\n", "\n").replace("\r", "\n")
    assert "".join(src for _, src in whole) == normal          # nothing lost, nothing added
    for settled, offset, tail in history:        # at every step: settled + tail = text so far
        assert "".join(src for _, src in settled) == normal[:offset]
        assert normal[offset:offset + len(tail)] == tail
    joined = "".join(render(src, forming=False) for _, src in whole)
    assert joined == render(normal, forming=False)   # each block drawn alone as in context


@settings(max_examples=examples(200), deadline=None)
@given(st.lists(st.sampled_from(LINES), max_size=12))
def test_a_held_back_tail_never_raises_and_never_draws_a_live_element(lines):
    text = "\n".join(lines)
    for end in range(len(text) + 1):
        html = render(hold_back(text[:end]), forming=True)
        assert "<img" not in html and "<a " not in html and "<b>" not in html


def test_an_unclosed_fence_is_drawn_as_code_from_its_first_line():
    assert render(hold_back("```py\nx = 1"), forming=True).startswith("<pre><code")
    assert render(hold_back("``"), forming=True) == ""


def test_half_bold_is_never_drawn_as_emphasis_that_later_goes():
    for partial in ["**bo", "**bold*", "*it", "__x", "~~gone", "**bold** and *it"]:
        html = render(hold_back(partial), forming=True)
        assert "<em>" not in html and html.count("<strong>") == partial.count("**bold**")
    assert "<strong>bold</strong>" in render(hold_back("**bold** x"), forming=True)


def test_half_a_table_is_drawn_as_the_rows_that_arrived():
    assert "<table>" in render(hold_back("| a | b |\n|--"), forming=True)
    html = render(hold_back("| a | b |\n|---|---|\n| 1 | 2 |\n| 3"), forming=True)
    assert html.count("<tr>") == 3 and "<td>3</td>" in html


def test_a_link_still_arriving_shows_its_text_only():
    assert render(hold_back("see [the docs](https://exa"), forming=True) == "<p>see the docs</p>\n"


def test_a_line_that_only_looks_like_a_block_start_is_not_used_to_settle():
    blocks = MarkdownBlocks()
    assert blocks.feed("Foo\n#") == []           # "#" may become "#x": same paragraph
    assert blocks.feed("x\n\nBar\n") == [(0, "Foo\n#x\n\n")]


CURSOR = '<span class="draw-cursor" aria-hidden="true">▍</span>'
FENCE_LINES = ["```py", "~~~", "````", "  ```js x", "code <b>&amp;", "  indented", "```",
               "~~~~", "   ``` ", "    ```", "", "text after", "`", "``"]


@settings(max_examples=examples(300), deadline=None)
@given(st.lists(st.sampled_from(FENCE_LINES), min_size=1, max_size=20),
       st.lists(st.integers(0, 10_000), max_size=20))
def test_an_open_fence_is_drawn_without_a_parse_as_markdown_it_draws_it(lines, points):
    from lesson_lib.draw.text import TextDrawer
    text = "\n".join(lines)
    drawer = TextDrawer("b")
    for piece in cut(text, points):
        drawer.feed(piece)
        fence = drawer.blocks.open_fence
        tail = drawer.blocks.tail
        if fence is not None:
            from lesson_lib.draw.fences import draw_open_fence
            assert draw_open_fence(fence, tail) == render(hold_back(tail), forming=True)
            live = drawer.segments()[0][2][-1].html        # drawn line by line: the same
            assert live.removesuffix(CURSOR) == draw_open_fence(fence, tail)
    whole, _, _ = feed_all([text])
    pieces, _, _ = feed_all(cut(text, points))
    assert pieces == whole


def test_a_long_code_block_costs_each_line_not_its_length():
    from lesson_lib.draw.text import TextDrawer
    code = "".join(f"x_{i} = compute({i})\n" for i in range(3000))
    drawer = TextDrawer("b")
    drawer.feed("Intro\n\n```python\n")
    started = time.process_time()
    for k in range(0, len(code), 5):
        drawer.feed(code[k:k + 5])
        drawer.segments()
    assert time.process_time() - started < 20
    drawer.feed("```\n\nDone.\n")
    drawer.end()
    html = as_one_block(drawer.settled)      # drawn in chunks that read as one block
    assert html.count("<pre><code") == 1 and "x_2999 = compute(2999)" in html
    assert html == render("Intro\n\n```python\n" + code + "```\n\nDone.\n", forming=False)


class _Words(HTMLParser):
    """The text a drawing shows, and the attribute values that keep a link's or code's words."""

    KEPT = ("href", "title", "alt", "class")

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.out: list[str] = []

    def handle_starttag(self, tag, attrs):
        self.out.extend(f" {value} " for name, value in attrs if name in self.KEPT and value)

    def handle_data(self, data):
        self.out.append(data)


def shown_text(html: str) -> str:
    parser = _Words()
    parser.feed(html)
    parser.close()
    return "".join(parser.out)


MARKUP = st.sampled_from(["> ", "- ", "* ", "+ ", "1. ", "2) ", "  ", "    ", "\t", "# ", "### ",
                          "*", "**", "_", "`", "``", "~~", "[", "]", "(", ")", "![", "](", "|",
                          "---", "===", "\\", "<", ">", ":", " ", "\n", "\n\n", "-", "!", '"',
                          "#", "```", "~~~"])
NESTING = st.builds(lambda marker, depth: marker * depth,
                    st.sampled_from(["> ", "- ", "1. ", "  - ", "> - ", "* > "]),
                    st.integers(15, 40))
WORD = st.from_regex(r"[a-z]{1,6}", fullmatch=True)
# A table whose rows have fewer or more cells than its header (GFM drops the extra ones).
TABLE = st.builds(lambda head, rows: "\n|" + "|".join(head) + "|\n|" + "---|" * len(head)
                  + "".join("\n|" + "|".join(row) + "|" for row in rows) + "\n",
                  st.lists(WORD, min_size=1, max_size=3),
                  st.lists(st.lists(WORD, max_size=5), max_size=3))
# A fence's info string keeps only its first word (as a class): markup, not text.
_FENCE_INFO_WORDS = re.compile(r"(```|~~~)[^\n]*\s[^\n]*[a-z]")


@settings(max_examples=examples(400), deadline=None)
@given(st.lists(st.one_of(WORD, WORD, MARKUP, NESTING, TABLE), max_size=60))
def test_every_word_of_a_text_is_drawn_at_any_depth(tokens):
    text = "".join(tokens)
    assume(not _FENCE_INFO_WORDS.search(text))
    shown = shown_text(render(text, forming=False))
    for word in set(re.findall(r"[a-z]+", text)):
        assert shown.count(word) >= len(re.findall(rf"(?<![a-z]){word}(?![a-z])", text)), word


def test_text_nested_past_the_limit_is_drawn_flat_not_dropped():
    assert "hello" in render("> " * 20 + "hello", forming=False)
    html = render("- " * 30 + "deep\n" + "  " * 30 + "deeper\n\nafter", forming=False)
    assert all(word in html for word in ("deep", "deeper", "after"))
    html = render("| a | b |\n|---|---|\n| one | two | three |", forming=False)
    assert "<td>two | three</td>" in html           # a cell past the header's count is kept
    started = time.process_time()
    html = render("> " * 50_000 + "far", forming=False)     # linear, no recursion error
    assert "far" in html and time.process_time() - started < 20


LONG_BLOCK_LINES = ["- item", "- **bold** item", "* star", "+ plus", "1. one", "2. two", "3) three",
                    "  - nested", "  continued", "lazy", "    indented", "", "", "| a | b |",
                    "|---|---|", "| 1 | 2 |", "3 | 4", "para line", "more *text*", "===", "---",
                    "> quote", "# head", "```", "x |", "- ", "-", "10. ten", "  ", "\t- tab"]


@settings(max_examples=examples(400), deadline=None)
@given(st.lists(st.sampled_from(LONG_BLOCK_LINES), max_size=40),
       st.lists(st.integers(0, 10_000), max_size=40))
def test_a_block_settles_at_the_line_a_whole_parse_says_it_ends(lines, points):
    # The window (a list from its last item, a paragraph from its last line, a table from
    # its header) settles exactly when parsing the whole text so far would.
    from lesson_lib.draw.markdown import block_starts
    text = "\n".join(lines)
    blocks, settled, so_far = MarkdownBlocks(), 0, ""
    for piece in cut(text, points):
        settled += len(blocks.feed(piece))
        so_far += piece
        complete = so_far[:so_far.rfind("\n") + 1]
        assert settled == max(0, len(block_starts(complete)) - 1), so_far


def count_markdown_work(monkeypatch) -> list[int]:
    """Characters handed to markdown-it (block parses and renders) and to `hold_back`."""
    from lesson_lib.draw import markdown, text
    work = [0]
    parse, render_, hold = markdown.MD.block.parse, markdown.MD.render, text.hold_back

    def counted(fn):
        def wrapper(source, *args, **kwargs):
            work[0] += len(source)
            return fn(source, *args, **kwargs)
        return wrapper

    monkeypatch.setattr(markdown.MD.block, "parse", counted(parse))
    monkeypatch.setattr(markdown.MD, "render", counted(render_))
    monkeypatch.setattr(text, "hold_back", counted(hold))
    return work


SHAPES = {
    "list": lambda i: f"- item {i} with **bold** and `code`\n",
    "table": lambda i: ("| name | value |\n|---|---|\n" if i == 0 else "") + f"| a{i} | *{i}* |\n",
    "paragraph": lambda i: f"word{i} **bold** and `c` more text," + ("\n" if i % 3 == 2 else " "),
    "fence": lambda i: ("```py\n" if i == 0 else "") + f"x_{i} = compute({i})\n",
}


@pytest.mark.parametrize("shape", sorted(SHAPES))
def test_a_forming_block_costs_each_delta_not_its_length(shape, monkeypatch):
    from lesson_lib.draw.text import TextDrawer
    work = count_markdown_work(monkeypatch)

    def drawn(size: int) -> int:
        source, i = "", 0
        while len(source) < size:
            source += SHAPES[shape](i)
            i += 1
        drawer = TextDrawer("b")
        work[0] = 0
        for k in range(0, size, 4):
            drawer.feed(source[k:k + 4])
            drawer.segments()
        return work[0]

    small, large = drawn(4_000), drawn(8_000)
    assert large / small < 2.3, (small, large)      # linear: 2; a whole redraw per delta: 4


# -- a long code fence drawn in settled chunks (lesson_lib.draw.chunks) ---------------------

_JOIN = re.compile(r'</code></pre>\n<pre class="draw-code-rest[^"]*"><code[^>]*>')


def run_parts(drawer) -> tuple:
    from lesson_lib.draw.parts import Drawing
    return Drawing(drawer.segments()).parts


def as_one_block(parts) -> str:
    """The parts' HTML with the seams between a fence's chunks taken out."""
    html = "".join(p.html for p in parts)
    return _JOIN.sub("", html).replace('<pre class="draw-code-more">', "<pre>")


def drawers(chunk: int):
    from lesson_lib.draw.text import TextDrawer
    cut_up, whole = TextDrawer("b"), TextDrawer("b")
    cut_up.chunk_chars, whole.chunk_chars = chunk, 10**9      # whole: never cut
    return cut_up, whole


def check_same_as_drawn_whole(pieces: list[str], chunk: int) -> int:
    """Feed both drawers; at every delta the chunked one shows what the whole one shows,
    and no settled part changes. Returns how many chunks were drawn."""
    from lesson_lib.draw.parts import Drawing
    cut_up, whole = drawers(chunk)
    settled: dict[str, object] = {}
    for piece in [*pieces, None]:
        for drawer in (cut_up, whole):
            drawer.feed(piece) if piece is not None else drawer.end()
        parts, plain = run_parts(cut_up), run_parts(whole)
        assert Drawing([(parts, len(parts), ())]).text == Drawing([(plain, len(plain), ())]).text
        assert as_one_block(parts) == as_one_block(plain) == "".join(p.html for p in plain)
        now = {p.key: p for p in parts}
        assert len(now) == len(parts)
        for key, part in settled.items():
            assert now.get(key) == part, key            # a settled chunk never changes
        settled |= {p.key: p for p in parts if p.settled}
    return sum("/code" in key for key in settled)


CODE_LINES = FENCE_LINES + ["x = a < b && c > d", "print('<script>')", "", "    deep",
                            "x" * 30, "![img](https://example.com/i.png)", "# not a heading"]


@settings(max_examples=examples(300), deadline=None)
@given(st.lists(st.sampled_from(CODE_LINES), min_size=1, max_size=30),
       st.lists(st.integers(0, 10_000), max_size=25), st.integers(1, 40),
       st.sampled_from(["", "Intro\n\n", "\n \n"]))
def test_a_fence_drawn_in_chunks_shows_what_it_drawn_whole_shows(lines, points, chunk, lead):
    text = lead + "```py\n" + "\n".join(lines)
    check_same_as_drawn_whole(cut(text, points), chunk)


def test_a_fence_cut_at_every_point_is_drawn_in_chunks_as_whole():
    code = "".join(f"x_{i} = f({i}) < {i} & 'q'\n" for i in range(40))
    for ending in ("```\n\nAfter.\n", "```", "~~~\n", "``"):
        text = "Intro\n\n```python\n" + code + ending
        assert check_same_as_drawn_whole(list(text), 100) >= 8


def test_a_fence_is_cut_the_same_whatever_the_deltas():
    code = "".join(f"line {i} <&>\n" for i in range(200))
    text = "```\n" + code + "```\n\nDone.\n"
    at_once, by_char = drawers(64)[0], drawers(64)[0]
    at_once.feed(text)
    for c in text:
        by_char.feed(c)
    for drawer in (at_once, by_char):
        drawer.end()
    assert run_parts(at_once) == run_parts(by_char)
    assert render(text, forming=False) == as_one_block(run_parts(at_once))


def test_an_indented_fence_and_a_short_one_are_drawn_whole():
    for text in ["  ```\n" + "  code line\n" * 200 + "  ```\n", "```\nshort\n```\n"]:
        drawer = drawers(64)[0]
        drawer.feed(text)
        drawer.end()
        parts = run_parts(drawer)
        assert len(parts) == 1 and parts[0].html == render(text, forming=False)


def test_the_chat_pane_styles_every_class_a_cut_fence_uses():
    from lesson_lib.draw import chunks
    from lesson_lib.views.chat_pane import CHAT_STYLE
    for head in (chunks.MORE, chunks.REST, chunks.REST_MORE):
        for name in re.search(r'class="([^"]*)"', head).group(1).split():
            assert f"pre.{name} " in CHAT_STYLE, name


def count_fence_work(monkeypatch) -> list[int]:
    """Characters escaped, handed to markdown-it, or copied into a live part."""
    import importlib
    work = count_markdown_work(monkeypatch)

    def counted(fn):
        def wrapper(source, *args, **kwargs):
            work[0] += len(source)
            return fn(source, *args, **kwargs)
        return wrapper

    for name in ("fences", "chunks"):
        try:
            module = importlib.import_module(f"lesson_lib.draw.{name}")
        except ImportError:
            continue
        monkeypatch.setattr(module, "escapeHtml", counted(module.escapeHtml))
    return work


def test_a_delta_in_an_open_fence_costs_the_same_however_long_the_fence(monkeypatch):
    from lesson_lib.draw.text import TextDrawer
    work = count_fence_work(monkeypatch)

    def drawn(size: int) -> int:
        source, i = "```python\n", 0
        while len(source) < size:
            source += f"x_{i} = compute({i}, 'text') < 2\n"
            i += 1
        drawer = TextDrawer("b")
        work[0] = 0
        for k in range(0, size, 4):
            drawer.feed(source[k:k + 4])
            for _, _, live in drawer.segments():
                work[0] += sum(len(p.html) + len(p.text) for p in live)   # copied per delta
        return work[0]

    small, large = drawn(4_000), drawn(8_000)
    assert large / small < 2.3, (small, large)      # linear: 2; the fence copied per delta: 4
