"""The replay player and its panes, driven from Python; and the timeline plot."""

from __future__ import annotations

import json
import re

import pytest
from matplotlib.figure import Figure

from lesson_lib.capture.captures import corpus, from_bytes, reference_corpus
from lesson_lib.views import (
    Player,
    RawBytesPane,
    TablePane,
    replays,
    timeline_figure,
    timeline_text,
)
from lesson_lib.views import panes as panes_mod
from lesson_lib.views.html import counter_html, esc, kind_badge
from lesson_lib.views.timeline_plot import figure_png

REFERENCE = {c.name: c for c in reference_corpus()}


def stream(events, *, wire="anthropic-messages", name="tiny", crlf=False):
    """An in-memory capture from (arrival ms or None, event name, payload) triples."""
    eol = "\r\n" if crlf else "\n"
    body, ends, times = b"", [], []
    for t, event, payload in events:
        data = payload if isinstance(payload, str) else json.dumps(payload)
        body += f"event: {event}{eol}data: {data}{eol}{eol}".encode()
        ends.append(len(body))
        times.append(t)
    sidecar = {"wire": wire}
    if any(t is not None for t in times):
        sidecar["chunks"] = {"ends": ends, "t_ms": times}
    return from_bytes(body, name=name, sidecar=sidecar)


def text_stream(texts, times=None, name="tiny"):
    times = times or [None] * (len(texts) + 2)
    events = [(times[0], "message_start", {"type": "message_start", "message": {}})]
    for i, text in enumerate(texts):
        events.append((times[i + 1], "content_block_delta",
                       {"type": "content_block_delta", "index": 0,
                        "delta": {"type": "text_delta", "text": text}}))
    events.append((times[-1], "message_stop", {"type": "message_stop"}))
    return stream(events, name=name)


TIMED = text_stream(["a", "b", "c"], times=[0.0, 100.0, 400.0, 1000.0, 1000.0], name="timed")
UNTIMED = text_stream(["x", "y"], name="untimed")
HOSTILE = text_stream(["Careful: ", "<script>alert(1)</script>", " and ",
                       "<img src=x onerror=alert(2)>", " & done"], name="hostile")


def player(*caps, **kwargs):
    caps = caps or (TIMED, UNTIMED)
    return Player(list(caps), **kwargs)


def current_seq(html: str) -> int:
    match = re.search(r'<tr class="rtw-row rtw-current-row" data-seq="(\d+)"', html)
    assert match, "the current row is marked"
    return int(match.group(1))


# -- moving around ------------------------------------------------------------------------


def test_it_starts_at_the_first_event_and_does_not_play():
    p = player()
    assert p.index == 0 and not p.playing and p.play_button.value is False
    assert p.state() == {"capture": "anthropic-messages/timed", "index": 0, "events": 5,
                         "speed": "1x", "playing": False,
                         "label": "event 0 of 0-4 · message_start"}


def test_setting_the_slider_moves_the_counter_and_the_marked_row():
    p = player()
    p.slider.value = 2
    assert "event 2 of 0-4 · content_block_delta" in p.counter.value
    assert current_seq(p.pane_views[0].value) == 2
    p.index = 99                                     # clamped, not an error
    assert p.index == 4 and "message_stop" in p.counter.value


def test_buttons_step_and_reset():
    p = player()
    p.forward_button.click()
    p.forward_button.click()
    assert p.index == 2
    p.back_button.click()
    assert p.index == 1
    p.reset_button.click()
    assert p.index == 0
    p.back_button.click()                            # nothing before the first event
    assert p.index == 0


def test_picking_another_capture_starts_it_from_the_beginning():
    p = player()
    p.index = 3
    p.picker.value = "anthropic-messages/untimed"
    assert p.capture is UNTIMED and p.index == 0 and p.slider.max == 3
    assert "event 0 of 0-3" in p.counter.value
    p.select(HOSTILE)                                # a capture the picker did not list
    assert p.picker.value == "anthropic-messages/hostile" and p.slider.max == 6


def test_the_corpus_is_the_default_list():
    caps = corpus()
    if not caps:
        pytest.skip("constructed corpus not built yet")
    p = Player()
    assert list(p.picker.options) == [c.key for c in caps]
    names = [c.name for c in caps]
    unique = next(c for c in caps if names.count(c.name) == 1)
    named = Player(capture=unique.name)              # a bare corpus name selects it
    assert named.capture.key == unique.key
    assert list(named.picker.options) == [c.key for c in caps]


# -- playing ----------------------------------------------------------------------------------


def test_play_follows_the_recorded_timing_scaled_by_speed():
    waits = []
    p = player(sleep=waits.append)
    p.play_button.value = True
    p.join()
    assert waits == [0.1, 0.3, 0.6, 0.0]
    assert p.index == 4 and p.play_button.value is False
    assert p.play_button.description == "Play"

    waits.clear()
    p.speed.value = 4.0
    p.play_button.value = True                       # at the end: plays again from the start
    p.join()
    assert waits == pytest.approx([0.025, 0.075, 0.15, 0.0])


def test_untimed_captures_play_at_a_steady_pace():
    waits = []
    p = player(UNTIMED, sleep=waits.append)
    p.speed.value = 0.25
    p.start()
    p.join()
    assert waits == pytest.approx([0.8, 0.8, 0.8])
    assert p.index == 3


def test_instant_jumps_to_the_end_without_a_thread():
    waits = []
    p = player(sleep=waits.append)
    p.speed.value = float("inf")
    p.play_button.value = True
    assert p.index == 4 and not p.playing and waits == []
    assert p.play_button.value is False


def test_pause_stops_the_thread():
    p = None
    waits = []

    def sleep(seconds):
        waits.append(seconds)
        if len(waits) == 2:
            p.pause()                                # as if Pause were pressed mid-wait

    p = player(sleep=sleep)
    p.start()
    p.join()
    assert p.index == 1 and not p.playing and p.play_button.value is False
    assert len(waits) == 2


def test_the_real_wait_is_interrupted_by_pause():
    slow = text_stream(["a"], times=[0.0, 60_000.0, 60_000.0], name="slow")
    p = player(slow)
    p.start()
    assert p.playing
    p.pause()
    p.join(2.0)
    assert not p.playing and p.index == 0


# -- what is shown ----------------------------------------------------------------------------


def test_model_text_is_always_escaped():
    p = player(HOSTILE)
    for i in range(len(HOSTILE.events)):
        p.index = i
        html = p.render_html() + "".join(v.value for v in p.pane_views) + p.counter.value
        assert "<script" not in html and "<img" not in html
    p.index = 2
    html = p.render_html()
    assert "&lt;script&gt;" in html
    p.index = 4
    assert "&lt;img src=x onerror=alert(2)&gt;" in p.render_html()


def test_the_constructed_html_capture_renders_escaped():
    hostile = [c for c in corpus() if c.name == "html-in-text"]
    if not hostile:
        pytest.skip("constructed capture html-in-text not built yet")
    p = Player(hostile)
    for i in range(len(hostile[0].events)):
        p.index = i
        assert "<script" not in p.render_html() and "<img" not in p.render_html()


def test_raw_bytes_pane_shows_line_ends_padding_and_network_reads():
    body = (b'event: ping\r\ndata: {"type": "ping"      }\r\n\r\n'
            b'event: message_stop\r\ndata: {"type":"message_stop"}\r\n\r\n')
    split = 30                                       # a network read ends inside event 0
    cap = from_bytes(body, name="crlf", sidecar={
        "wire": "anthropic-messages", "chunks": {"ends": [split, len(body)], "t_ms": [5, 9]}})
    pane = RawBytesPane()
    html = pane(cap, 0)
    # An event ends after the CR of its CRLF blank line (the LF belongs to no event).
    assert html.count("‹CR›‹LF›") == 2 and pane.text(cap, 0).splitlines()[-1] == "‹CR›"
    assert 'class="rtw-pad" title="6 spaces"' in html
    assert html.count('class="rtw-chunk-break"') == 1
    assert "bytes 0–" in html and "t = 9.0 ms" in html
    text = pane.text(cap, 1)
    assert text.splitlines()[1:] == ["event: message_stop‹CR›‹LF›",
                                     'data: {"type":"message_stop"}‹CR›‹LF›', "‹CR›"]
    assert "never dispatched" not in pane.text(cap, 1)


def test_raw_bytes_pane_shows_bytes_never_dispatched_after_the_last_event():
    body = b'event: message_start\ndata: {"type":"message_start"}\n\nevent: content_blo'
    cap = from_bytes(body, sidecar={"wire": "anthropic-messages"})
    html = RawBytesPane()(cap, 0)
    assert "never dispatched" in html and "event: content_blo" in html


def test_a_failed_request_shows_its_error_body():
    cap = from_bytes(b'{"type":"error","error":{"type":"overloaded_error","message":"<b>"}}',
                     name="http-529", sidecar={"wire": "anthropic-messages",
                                               "response": {"status": 529}})
    p = player(cap)
    assert "no events · HTTP 529" in p.counter.value
    assert p.slider.max == 0
    assert "&lt;b&gt;" in p.pane_views[1].value and "<b>" not in p.pane_views[1].value
    p.forward_button.click()
    assert p.index == 0


def test_a_step_renders_a_window_not_the_whole_capture():
    long = REFERENCE.get("pause-turn-web-search")
    if long is None:
        pytest.skip("reference captures not present")
    pane = TablePane(window=15)
    for i in (0, 1, 80, len(long.events) - 1):
        html = pane(long, i)
        assert html.count('<tr class="rtw-row') == 15
        assert current_seq(html) == i
    assert "… 153 later events" in pane(long, 0)


def test_step_cost_does_not_grow_with_the_capture():
    short = text_stream(["word "] * 40, name="short")
    long = text_stream(["word "] * 4000, name="long")
    pane = TablePane(window=15)
    short_html, long_html = pane(short, 20), pane(long, 20)
    # the same rows but for the digits of the "earlier/later" note
    assert abs(len(long_html) - len(short_html)) < 10
    sizes = [len(pane(long, i)) for i in (20, 2000, 3990)]
    assert max(sizes) - min(sizes) < 100


def test_the_table_is_prepared_once_per_capture(monkeypatch):
    calls = []
    real = panes_mod._prepare
    monkeypatch.setattr(panes_mod, "_prepare", lambda *a: calls.append(1) or real(*a))
    p = player(text_stream(["a"] * 30, name="thirty"))
    for _ in range(20):
        p.forward_button.click()
    assert len(calls) == 1 and p.steps_rendered == 21


def test_current_row_is_marked_by_words_and_style_not_colour_alone():
    html = TablePane()(TIMED, 1)
    row = re.search(r'<tr class="rtw-row rtw-current-row".*?</tr>', html).group(0)
    assert "▶ now" in row and 'aria-current="true"' in row and "font-weight:bold" in row
    badge = kind_badge("text delta")
    assert "●" in badge and "text delta" in badge and "solid" in badge


def test_counter_is_a_polite_live_region():
    assert 'aria-live="polite"' in counter_html("event 1 of 0-1")
    assert "rtw-counter" in player().counter._dom_classes


def test_every_control_has_a_description_a_tooltip_and_a_stable_class():
    p = player()
    controls = {"rtw-picker": p.picker, "rtw-play": p.play_button,
                "rtw-step-back": p.back_button, "rtw-step-forward": p.forward_button,
                "rtw-reset": p.reset_button, "rtw-speed": p.speed, "rtw-slider": p.slider}
    for css, widget in controls.items():
        assert widget.description, css
        assert widget.tooltip or getattr(widget, "tooltips", None), css
        assert css in widget._dom_classes
    assert [label for label, _ in p.speed.options] == ["0.25x", "1x", "4x", "instant"]
    assert "rtw-player" in p._dom_classes


def test_fallback_reprs_are_meaningful_and_deterministic():
    p = player()
    p.index = 2
    bundle = p._repr_mimebundle_()
    assert bundle["text/plain"].startswith("anthropic-messages/timed: event 2 of 0-4")
    assert "▶ event 2 · text delta content[0]" in bundle["text/plain"]
    assert "0x" not in bundle["text/plain"]
    assert "Event table" in bundle["text/html"] and "Raw bytes" in bundle["text/html"]
    assert "application/vnd.jupyter.widget-view+json" in bundle
    q = player()
    q.index = 2
    assert q.render_text() == p.render_text()
    assert "[Raw bytes]" in p.render_text() and "‹LF›" in p.render_text()


def test_panes_and_labeller_plug_in():
    def echo(capture, index):
        return f"<p>{esc(capture.events[index].data)}</p>"

    def label(capture, index):
        return f"step {index} of {capture.name}"

    p = player(panes=[("Echo", echo)], labeller=label)
    p.index = 1
    assert p.pane_views[0].value.startswith("<p>{")
    assert "step 1 of timed" in p.counter.value
    assert "rtw-pane-view-echo" in p.pane_views[0]._dom_classes
    with pytest.raises(TypeError):
        player(panes=[42])


# -- the timeline ---------------------------------------------------------------------------


def test_timeline_marks_each_kind_and_labels_pauses():
    events = [(0.0, "message_start", {"type": "message_start", "message": {}}),
              (10.0, "ping", {"type": "ping"}),
              (900.0, "content_block_delta", {"type": "content_block_delta", "index": 0,
                                              "delta": {"type": "text_delta", "text": "a"}}),
              (3400.0, "content_block_delta", {"type": "content_block_delta", "index": 1,
                                               "delta": {"type": "input_json_delta",
                                                         "partial_json": "{"}}),
              (3500.0, "error", {"type": "error", "error": {"type": "overloaded_error"}})]
    fig = timeline_figure(stream(events), pause_ms=500)
    assert isinstance(fig, Figure)
    ax = fig.axes[0]
    assert len(ax.collections) == 5                  # one scatter per kind present
    labels = [t.get_text() for t in fig.legends[0].get_texts()]
    assert labels == ["start/stop (1)", "text delta (1)", "tool-args delta (1)", "ping (1)",
                      "error (1)"]
    texts = [t.get_text() for t in ax.texts]
    assert sorted(t for t in texts if t) == ["2,500 ms pause", "890 ms pause"]
    assert texts.count("") == 2                      # one double-headed arrow per pause
    assert ax.get_xlabel().startswith("arrival time")


def test_timeline_text_says_the_same_in_words():
    text = timeline_text(TIMED, pause_ms=250)
    assert text.splitlines() == [
        "5 events (2 start/stop, 3 text delta), from 0 ms to 1,000 ms after the request.",
        "First output fragment at 100 ms.",
        "2 pauses longer than 250 ms:",
        "  300 ms before event 2 (text delta in content[0])",
        "  600 ms before event 3 (text delta in content[0])"]
    assert timeline_text(UNTIMED) == "4 events; this capture has no recorded timing."
    assert "No pause longer than 5000 ms." in timeline_text(TIMED, pause_ms=5000)


def test_timeline_without_timing_uses_the_event_index():
    fig = timeline_figure(UNTIMED)
    assert "no recorded timing" in fig.axes[0].get_xlabel()
    assert figure_png(fig).startswith(b"\x89PNG") and figure_png(fig) == figure_png(fig)
    assert len(fig.axes[0].texts) == 0


def test_pause_before_reads_the_events_arrival_times_not_a_table(monkeypatch):
    capture = next(c for c in corpus() if len(c.events) > 3
                   and all(e.t is not None for e in c.events))
    player = Player([capture])
    monkeypatch.setattr(panes_mod, "table_for", lambda _: pytest.fail("read a table"))
    monkeypatch.setattr(replays.Replay, "table", property(lambda _: pytest.fail("read a table")))
    for i in range(1, len(capture.events)):
        gap = capture.events[i].t - capture.events[i - 1].t
        assert player.pause_before(i) == pytest.approx(max(0.0, gap))
    assert player.pause_before(0) == 0.0
