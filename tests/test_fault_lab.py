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
