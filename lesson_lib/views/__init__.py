"""Lessons 1 to 6, station views (the last): thin widgets over plain renderer functions
(HTML in, HTML out).

- `palette`: the marker colours (Okabe-Ito hues at 3:1 on the light and dark
  themes) and the contrast ratio they are checked with;
- `html`: escaping, the event kinds' looks, the shared CSS, the counter markup;
- `event_table`: lesson 1's pandas table, one row per event (`wires.event_rows`'s
  rows), and the questions the lesson asks of it;
- `panes`: renderers ``(capture, index) -> HTML``: the event table window, the raw bytes;
- `player`: the replay `Player` every lesson reuses;
- `replays`: one `Replay` per capture, shared by every pane and counter
  (its event table, accumulator history, labels and turn, each built once);
- `timeline_plot`: arrival times of events as a matplotlib figure;
- `slot_view`: lesson 2's pane, one box per slot, and its counter labeller;
- `tool_card`: lesson 3's pane, tool calls as their arguments form;
- `turn_view`: lesson 4's pane, the turn state (steps, blocks, tool cards, outcome);
- `turn_player`: `TurnPlayer`, a slider over one turn's states (a `TurnState`, its
  turn events, or a live or loop result): given a state, never a capture;
- `turn_timeline`: the agent loop's tools drawn over the stream's arrival timeline.

Views never parse: they render what `wires.event_rows` and the later stations
computed, and they escape every piece of model text.
"""

from __future__ import annotations

from .panes import Pane, RawBytesPane, TablePane, default_labeller
from .player import Player
from .slot_view import SlotPane, show_slots, slot_labeller
from .timeline_plot import timeline_figure, timeline_text
from .tool_card import ToolCardPane, show_tool_calls, tool_call_labeller
from .turn_player import TurnPlayer
from .turn_timeline import tool_timeline_figure, tool_timeline_text
from .turn_view import TurnPane, render_turn, show_turn, turn_labeller, turn_text

__all__ = ["Pane", "Player", "RawBytesPane", "SlotPane", "TablePane", "ToolCardPane",
           "default_labeller", "show_slots", "show_tool_calls", "slot_labeller",
           "timeline_figure", "timeline_text", "tool_call_labeller"]
__all__ += ["TurnPane", "TurnPlayer", "render_turn", "show_turn", "tool_timeline_figure",
            "tool_timeline_text", "turn_labeller", "turn_text"]
