"""The chat pane: a thin view over `draw`, in the player and live, with a text fallback."""

from __future__ import annotations

from draw_checks import live_elements

from lesson_lib.capture.captures import load
from lesson_lib.turn import initial, reduce
from lesson_lib.turn.run import turn_events
from lesson_lib.views.chat_pane import ChatPane, ChatView
from lesson_lib.views.player import Player


def test_the_player_has_a_chat_pane_that_follows_the_slider():
    cap = load("anthropic-messages/html-in-text")
    player = Player([cap], sleep=lambda s: None)
    names = [p.name for p in player.panes]
    assert names[0] == "Event table" and "Chat" in names
    chat = player.pane_views[names.index("Chat")]
    player.index = player.last
    assert "[Chat]" in player.render_text()
    assert not live_elements(chat.value.split("</style>", 1)[1])
    assert "<script" not in chat.value


def test_the_pane_draws_what_had_arrived_at_each_event():
    cap = load("anthropic-messages/hello")
    pane = ChatPane()
    texts = [pane.text(cap, i) for i in range(len(cap.events))]
    assert "streaming" in texts[1] or "waiting" in texts[1]
    assert texts[-1].endswith("with its own terminal event")
    assert pane.text(cap, 2) == texts[2]            # back and forth: the same drawing


def test_a_live_view_shows_each_state_and_falls_back_to_text():
    view = ChatView(stalled_after_ms=1000)
    state = initial()
    for event in turn_events(load("openai-chat/weather-turn-step1")):
        state = reduce(state, event)
        view.show(state)
    bundle = view._repr_mimebundle_()
    data = bundle[0] if isinstance(bundle, tuple) else bundle
    assert data["text/plain"] == view.text and "Checking the weather…" in view.text
