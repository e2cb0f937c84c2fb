"""The turn's honest mapping of wire features a naive reducer gets wrong: spoken output, the
moderation chunk, the legacy functions API (Chat); a call the client must approve or apply
(Responses); per-hop usage (Anthropic's fallback)."""

from __future__ import annotations

from lesson_lib.capture.captures import load
from lesson_lib.turn.events import Noted
from lesson_lib.turn.reduce import reduce_all
from lesson_lib.turn.run import turn_events


def state(name: str):
    return reduce_all(turn_events(load(name), "wire"))


def test_chat_audio_is_a_block_of_its_own_with_the_transcript_and_the_sound():
    s = state("openai-chat/audio-output")
    (block,) = s.blocks
    assert (block.kind, block.wire_kind, block.channel) == ("other", "audio", "other")
    assert block.text.startswith("Bonjour!") and block.complete
    assert block.end_data["id"].startswith("audio_") and block.end_data["expires_at"]
    assert len(block.end_data["data"]) > 10_000          # the sound is kept, not dropped
    assert s.outcome == "completed" and s.steps[0].finish.reason == "stop"


def test_chat_moderation_flagging_the_output_is_noted_on_the_turn():
    events = turn_events(load("openai-chat/moderation-chunk"), "wire")
    notes = [e for e in events if isinstance(e, Noted) and e.code == "moderation"]
    assert len(notes) == 1 and "output is flagged" in notes[0].message
    assert reduce_all(events).outcome == "completed"


def test_chat_legacy_function_call_is_a_client_tool_call():
    s = state("openai-chat/legacy-function-call")
    (block,) = s.blocks
    assert (block.kind, block.server_side, block.name) == ("tool_call", False,
                                                           "convert_currency")
    assert block.input == {"amount": 249.9, "from": "EUR", "to": "JPY"}
    assert block.call_id is None        # the functions API has no call id
    finish = s.steps[0].finish
    assert (finish.reason, finish.raw) == ("tool_calls", "function_call")
