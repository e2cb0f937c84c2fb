"""Views: thin widgets over plain renderer functions (HTML in, HTML out).

- `html`: escaping, the Okabe-Ito palette, the shared CSS, the counter markup;
- `panes`: renderers ``(capture, index) -> HTML``: the event table window, the raw bytes;
- `player`: the replay `Player` every lesson reuses;
- `timeline_plot`: arrival times of events as a matplotlib figure.

Views never parse: they render what `event_table` and the later stations
computed, and they escape every piece of model text.
"""

from __future__ import annotations

from .panes import Pane, RawBytesPane, TablePane, default_labeller
from .player import Player
from .timeline_plot import timeline_figure, timeline_text

__all__ = ["Pane", "Player", "RawBytesPane", "TablePane", "default_labeller",
           "timeline_figure", "timeline_text"]
