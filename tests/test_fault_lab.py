"""The fault lab, driven from Python: its controls re-render, its reprs say what it shows,
and no deadly fault it offers ever ends a turn as completed."""

from __future__ import annotations

import pytest

from lesson_lib.capture.captures import load
from lesson_lib.views import fault_lab
from lesson_lib.views.fault_lab import DEADLY, FAULTS, FaultLab, apply_fault, honesty

HELLO = "anthropic-messages/hello"
# The one deadly fault a wire can take as an end: Chat's [DONE] dropped after every
# finish_reason and the usage chunk reads as a server that never sends [DONE] (taken as
# the end with a no_done_marker warning, as the SDK does): `wires.chat.ended_without_done`.
TAKEN_AS_THE_END = {("openai-chat/text-usage", "drop_terminal")}
KEYS = (HELLO, "openai-responses/text", "openai-chat/text-usage",
        "anthropic-messages/text-then-tool")


def test_no_fault_leaves_a_good_capture_completed():
    capture = load(HELLO)
    assert apply_fault(capture, "none", 50).capture is capture
    assert "completed" in fault_lab.fault_lab_text(capture, "none", 50)


@pytest.mark.parametrize("fault", DEADLY)
@pytest.mark.parametrize("key", KEYS)
def test_a_deadly_fault_is_never_completed(key, fault):
    for percent in (0, 30, 70, 100):
        broken = apply_fault(load(key), fault, percent)
        assert broken.refused is None
        text = fault_lab.fault_lab_text(load(key), fault, percent)
        if (key, fault) in TAKEN_AS_THE_END:
            assert text.splitlines()[-1].startswith("completed"), (percent, text)
            continue
        assert "completed" not in text.splitlines()[-1], (percent, text)


def test_honesty_counts_every_deadly_fault_and_none_is_completed():
    counts = honesty([load(k) for k in KEYS])
    assert set(counts) == set(DEADLY)
    for fault, outcomes in counts.items():
        assert sum(outcomes.values()) == len(KEYS) * 3, fault
        taken = sum(1 for key, f in TAKEN_AS_THE_END if f == fault) * 3
        assert outcomes.get("completed", 0) == taken, fault


def test_a_refused_fault_says_why_and_keeps_the_capture():
    capture = load("anthropic-messages/hello")
    broken = apply_fault(capture, "no-such-fault", 10)
    assert broken.refused and broken.capture is capture
    assert "not applied" in fault_lab.fault_lab_text(capture, "no-such-fault", 10)


def test_the_widget_rerenders_when_its_controls_move():
    lab = FaultLab([load(k) for k in KEYS], fault="none")
    assert lab.state().outcome == "completed"
    before = lab.view.value
    lab.fault.value = "cut_at"
    lab.slider.value = 40
    assert lab.view.value != before
    assert lab.state().outcome != "completed"
    assert "cut_at at 40%" in lab.view.value and "cut_at at 40%" in repr(lab)
    assert lab._repr_html_() == lab.view.value
    for pane in ("Event table", "Slots", "Turn"):
        assert f'aria-label="{pane}"' in lab.view.value
    lab.capture.value = "openai-chat/text-usage"
    assert "openai-chat/text-usage" in lab.view.value


def test_every_fault_renders_without_raising():
    capture = load("anthropic-messages/text-then-tool")
    for name in FAULTS:
        html = fault_lab.fault_lab_html(capture, name, 50)
        assert 'role="status"' in html and name in html


def test_the_lab_needs_a_capture():
    with pytest.raises(ValueError):
        FaultLab([])


def test_the_mimebundle_carries_the_text_and_html_fallbacks():
    lab = FaultLab([load(HELLO)], fault="drop_terminal")
    bundle = lab._repr_mimebundle_()
    assert bundle["text/plain"] == lab.text() and bundle["text/html"] == lab.view.value
    assert "drop_terminal" in bundle["text/plain"]


def _shown(lab) -> tuple[str, str, int]:
    """What the lab's view says it shows: its root's data attributes."""
    import re

    found = re.search(r'class="rtw-fault-lab" data-capture="([^"]*)" data-fault="([^"]*)" '
                      r'data-percent="(\d+)"', lab.view.value)
    assert found, lab.view.value[:200]
    return found[1], found[2], int(found[3])


def test_the_view_follows_its_dropdowns_however_quickly_they_change():
    """Any sequence of changes, one straight after another: after each, the view shows
    exactly what the controls say (a view left on `swap` under a `cut_at` dropdown fails)."""
    from hypothesis import given, settings
    from hypothesis import strategies as st

    lab = FaultLab([load(k) for k in KEYS], fault="cut_at", percent=90)
    moves = st.lists(st.one_of(
        st.tuples(st.just("capture"), st.sampled_from(KEYS)),
        st.tuples(st.just("fault"), st.sampled_from(list(FAULTS))),
        st.tuples(st.just("slider"), st.integers(0, 100))), min_size=1, max_size=12)

    @settings(max_examples=40, deadline=None, derandomize=True)
    @given(moves)
    def follows(sequence):
        for control, value in sequence:
            getattr(lab, control).value = value
            assert _shown(lab) == (lab.capture.value, lab.fault.value, lab.slider.value)
        assert lab.view.value == fault_lab.fault_lab_html(
            load(lab.capture.value), lab.fault.value, lab.slider.value)

    follows()
    # the loop lesson 5 runs, then back: the view is back on cut_at too
    for name in FAULTS:
        lab.fault.value = name
    lab.fault.value = "cut_at"
    assert _shown(lab)[1] == "cut_at" and "fault cut_at" in lab.view.value


def test_a_view_that_cannot_draw_says_so_instead_of_keeping_the_last_picture(monkeypatch):
    lab = FaultLab([load(k) for k in KEYS], fault="swap", percent=50)

    def broken(*_args):
        raise RuntimeError("no picture")

    monkeypatch.setattr(fault_lab, "fault_lab_html", broken)
    lab.fault.value = "cut_at"
    assert _shown(lab)[1] == "cut_at"
    assert "could not draw" in lab.view.value and "no picture" in lab.view.value


def test_the_panes_wrap_and_none_has_a_fixed_minimum_width():
    html = fault_lab.fault_lab_html(load(HELLO), "cut_at", 90)
    assert "flex-wrap:wrap" in html
    assert html.count('class="rtw-fault-lab-pane"') == 3
    assert "min-width:260px" not in html and html.count("min-width:0") >= 3


@pytest.mark.parametrize("fault", ["none", "cut_at", "inject_error", "drop_terminal"])
def test_the_turn_pane_is_handed_the_broken_turns_state(fault):
    """Past the fault the lab reduces the turn once and hands its pane the state."""
    from lesson_lib.turn.run import turn_state
    from lesson_lib.views import TurnPane
    capture = load("anthropic-messages/weather-turn-step1")
    state = turn_state(apply_fault(capture, fault, 60).capture, route="auto")
    assert TurnPane().render(state) in fault_lab.fault_lab_html(capture, fault, 60)
