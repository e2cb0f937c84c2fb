"""One replay per capture: every pane and counter of a player reads the same table,
history and turn, each built once, and a replay does not outlive its place in the list."""

from __future__ import annotations

import gc
import weakref

import pytest

from lesson_lib.capture.captures import load
from lesson_lib.views import (
    Player,
    SlotPane,
    TablePane,
    ToolCardPane,
    TurnPane,
    panes,
    replays,
    turn_labeller,
    turn_view,
)

KEY = "anthropic-messages/parallel-tools"


@pytest.fixture
def counted(monkeypatch):
    """Every construction of a shared piece, by name and capture key."""
    built: list[tuple[str, str]] = []

    def counting(name, real):
        def build(capture, *args, **kwargs):
            built.append((name, capture.key))
            return real(capture, *args, **kwargs)
        return build

    monkeypatch.setattr(replays, "_REPLAYS", [])
    monkeypatch.setattr(replays, "event_table", counting("table", replays.event_table))
    monkeypatch.setattr(replays, "History", counting("history", replays.History))
    monkeypatch.setattr(panes, "_prepare", counting("rows", panes._prepare))
    monkeypatch.setattr(turn_view, "replay_turn", counting("turn", turn_view.replay_turn))
    return built


def test_a_player_with_many_panes_builds_each_piece_once_per_capture(counted):
    capture = load(KEY)
    player = Player([capture], panes=[TablePane(), TablePane(window=5), SlotPane(),
                                      ToolCardPane(), TurnPane()], labeller=turn_labeller)
    for _ in range(len(capture.events)):
        player.step(1)
    player.render_text()
    player.render_html()
    assert sorted(counted) == sorted([("table", KEY), ("rows", KEY), ("history", KEY),
                                      ("turn", KEY)])


def test_two_players_of_one_capture_share_its_replay(counted):
    capture = load(KEY)
    first = Player([capture], panes=[TablePane(), SlotPane()])
    second = Player([capture], panes=[TablePane(window=3), ToolCardPane()])
    first.index = second.index = 7
    assert sorted(counted) == sorted([("table", KEY), ("rows", KEY), ("history", KEY)])
    assert replays.replay_for(capture) is replays.replay_for(capture)


def test_a_turn_is_kept_per_route(counted):
    capture = load("openai-chat/weather-turn-step1")
    TurnPane()(capture, 3)
    TurnPane(route="auto")(capture, 4)
    TurnPane(route="openai-chat")(capture, 5)
    assert [name for name, _ in counted] == ["turn", "turn"]


def test_two_loads_of_one_file_are_two_replays(counted):
    a, b = load(KEY), load(KEY)
    assert replays.replay_for(a) is not replays.replay_for(b)
    TablePane()(a, 0)
    TablePane()(b, 0)
    assert [name for name, _ in counted].count("table") == 2


def test_only_the_last_kept_replays_stay_alive(counted):
    first = load(KEY)
    TablePane()(first, 0)
    gone = weakref.ref(first)
    del first
    for _ in range(replays.KEPT):
        TablePane()(load(KEY), 0)
    gc.collect()
    assert gone() is None                    # dropped from the list, then collected
    assert len(replays._REPLAYS) == replays.KEPT


def test_the_most_recently_used_replay_is_kept_longest(counted):
    first = load(KEY)
    TablePane()(first, 0)
    for _ in range(replays.KEPT - 1):
        TablePane()(load(KEY), 0)
        TablePane()(first, 0)                # used again: moves to the end
    TablePane()(load(KEY), 0)
    assert any(r.capture is first for r in replays._REPLAYS)
    assert [name for name, key in counted].count("table") == replays.KEPT + 1
