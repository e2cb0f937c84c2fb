"""The timeline figure shows text from data literally: `$` is a dollar, not mathtext."""

from __future__ import annotations

import pytest
from matplotlib.text import Text

from lesson_lib.capture.captures import from_bytes
from lesson_lib.views.timeline_plot import figure_png, timeline_figure

BODY = (b'event: message_start\ndata: {"type":"message_start","message":{"id":"m",'
        b'"type":"message","role":"assistant","model":"x","content":[],"stop_reason":null,'
        b'"usage":{"input_tokens":1,"output_tokens":1}}}\n\n'
        b'event: message_stop\ndata: {"type":"message_stop"}\n\n')


@pytest.mark.parametrize("name", ["x$^$b", "cost $5 or $6", "$\\alpha$"])
def test_a_dollar_in_a_captures_name_is_drawn_literally(name):
    cap = from_bytes(BODY, name=name, sidecar={"wire": "anthropic-messages"})
    fig = timeline_figure(cap)
    (title,) = [t for t in fig.axes[0].findobj(Text) if t.get_text().endswith(name)]
    assert not title.get_parse_math()
    assert figure_png(fig).startswith(b"\x89PNG")   # drawing it raises nothing
