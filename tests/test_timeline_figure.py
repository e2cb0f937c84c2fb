"""The timeline figure says what its text says: the same pause lengths, no arrow without a
label, and the pauses hatched as the lesson describes them."""

from __future__ import annotations

import re

import pytest

from lesson_lib.capture.captures import load
from lesson_lib.views.timeline_plot import pause_label, timeline_figure, timeline_text

CAPTURES = ("anthropic-messages/text-then-tool", "openai-chat/structured-output")


@pytest.mark.parametrize("key", CAPTURES)
def test_every_arrow_is_labelled_with_a_length_the_text_also_gives(key):
    cap = load(key, search_reference=False)
    fig = timeline_figure(cap)
    ax = fig.axes[0]
    arrows = [a for a in ax.texts if getattr(a, "arrow_patch", None) is not None]
    labels = [t.get_text() for t in ax.texts if t.get_text().endswith(" pause")]
    assert arrows and len(arrows) == len(labels)
    said = re.findall(r"^  ([\d,]+ ms) before event", timeline_text(cap), re.M)
    assert {label.removesuffix(" pause") for label in labels} <= set(said)


def test_pauses_are_hatched():
    fig = timeline_figure(load("anthropic-messages/text-then-tool", search_reference=False))
    bands = [p for p in fig.axes[0].patches if p.get_hatch()]
    assert len(bands) >= 3


def test_a_pause_is_written_the_same_way_everywhere():
    assert pause_label(519.9) == "520 ms"
    assert pause_label(1032.4) == "1,032 ms"
