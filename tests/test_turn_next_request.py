"""The next request from a TurnState keeps what the model must see again: thinking
signatures, redacted thinking, reasoning items with their encrypted content.

(Its check against the recorded step-2 requests of the weather turn, on Anthropic
Messages, OpenAI Responses and OpenAI Chat, is in test_turn_loop.py: that needs the
loop's tool results.)
"""

from __future__ import annotations

import pytest

from lesson_lib.accumulate import accumulate
from lesson_lib.capture.captures import load
from lesson_lib.turn.next_request import next_request
from lesson_lib.turn.reduce import reduce_all
from lesson_lib.turn.run import turn_events

REQUEST = {"model": "m", "messages": [{"role": "user", "content": "Hi"}]}


def assistant_content(name: str) -> tuple[list, dict]:
    cap = load(name)
    request = next_request(reduce_all(turn_events(cap, "sdk")), REQUEST)
    assert request["messages"][0] == REQUEST["messages"][0]
    return request["messages"][1]["content"], accumulate(cap).final


@pytest.mark.parametrize("name", ["anthropic-messages/thinking-signature",
                                  "anthropic-messages/redacted-thinking"])
def test_anthropic_thinking_goes_back_with_its_signature_or_data(name):
    content, final = assistant_content(name)
    sent = [b for b in content if b["type"] in ("thinking", "redacted_thinking")]
    recorded = [b for b in final["content"] if b["type"] in ("thinking", "redacted_thinking")]
    assert sent and len(sent) == len(recorded)
    for ours, theirs in zip(sent, recorded, strict=True):
        assert ours["type"] == theirs["type"]
        if ours["type"] == "thinking":
            assert (ours["thinking"], ours["signature"]) == (theirs["thinking"],
                                                             theirs["signature"])
        else:
            assert ours["data"] == theirs["data"]


def test_responses_reasoning_item_goes_back_with_encrypted_content():
    cap = load("openai-responses/reasoning-summary")
    request = next_request(reduce_all(turn_events(cap, "sdk")), {"model": "m", "input": "Hi"})
    assert request["input"][0] == {"role": "user", "content": "Hi"}
    reasoning = [i for i in request["input"] if i.get("type") == "reasoning"]
    recorded = [i for i in accumulate(cap).final["output"] if i["type"] == "reasoning"]
    assert len(reasoning) == len(recorded) == 1
    assert reasoning[0]["id"] == recorded[0]["id"]
    assert reasoning[0]["encrypted_content"] == recorded[0]["encrypted_content"]
    assert reasoning[0]["summary"][0]["text"] == "".join(
        s["text"] for s in recorded[0]["summary"])
    message = next(i for i in request["input"] if i.get("type") == "message")
    assert message["content"][0]["text"]


def test_the_request_given_is_not_modified():
    request = {"model": "m", "messages": [{"role": "user", "content": "Hi"}]}
    next_request(reduce_all(turn_events(load("anthropic-messages/hello"), "sdk")), request)
    assert request == {"model": "m", "messages": [{"role": "user", "content": "Hi"}]}
