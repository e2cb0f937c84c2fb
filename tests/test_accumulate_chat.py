"""The Chat Completions accumulator: choices by index, tool calls by id then index."""

from __future__ import annotations

import json

import pytest
from examples import examples
from hypothesis import given, settings
from hypothesis import strategies as st

from lesson_lib.accumulate import accumulate
from lesson_lib.accumulate.changes import SlotClosed, ToolInputGrew
from lesson_lib.accumulate.chat import ChatAccumulator
from lesson_lib.capture.captures import corpus, from_bytes, reference_corpus
from lesson_lib.sse.decoder import ServerSentEvent
from lesson_lib.wires.wire_events import parse_all, parse_payload

WIRE = "openai-chat"
DONE = "[DONE]"


def chunk(*choices: dict, **extra) -> dict:
    return {"id": "chatcmpl-1", "object": "chat.completion.chunk", "created": 1700000000,
            "model": "gpt-x", "system_fingerprint": "fp_1", "choices": list(choices), **extra}


def choice(index: int = 0, finish: str | None = None, logprobs=None, **delta) -> dict:
    return {"index": index, "delta": delta, "logprobs": logprobs, "finish_reason": finish}


def call(index: int, fragment: str = "", call_id: str | None = None,
         name: str | None = None) -> dict:
    out: dict = {"index": index, "function": {"arguments": fragment}}
    if call_id:
        out.update(id=call_id, type="function")
        out["function"]["name"] = name
    return out


def body(*payloads: dict | str) -> bytes:
    return "".join(f"data: {p if isinstance(p, str) else json.dumps(p)}\n\n"
                   for p in payloads).encode()


def run(*payloads: dict | str):
    return accumulate(from_bytes(body(*payloads), sidecar={"wire": WIRE}))


def codes(result) -> list[str]:
    return [d.code for d in result.diagnostics]


USAGE = {"prompt_tokens": 5, "completion_tokens": 2, "total_tokens": 7}


def message(result, i: int = 0) -> dict:
    return result.final["choices"][i]["message"]


# -- the happy path ------------------------------------------------------------


def test_text_with_usage_chunk_has_the_non_streaming_shape():
    r = run(chunk(choice(role="assistant", content="", refusal=None)),
            chunk(choice(content="Hel")), chunk(choice(content="lo")),
            chunk(choice(finish="stop")), chunk(usage=USAGE), DONE)
    assert r.complete and r.diagnostics == []
    assert r.final == {
        "id": "chatcmpl-1", "object": "chat.completion", "created": 1700000000,
        "model": "gpt-x", "system_fingerprint": "fp_1",
        "choices": [{"index": 0, "message": {"role": "assistant", "content": "Hello",
                                             "refusal": None},
                     "finish_reason": "stop", "logprobs": None}],
        "usage": USAGE}


def test_sequential_parallel_calls_are_parsed_at_the_finish_reason():
    r = run(chunk(choice(role="assistant", content=None)),
            chunk(choice(tool_calls=[call(0, "", "call_a", "get_weather")])),
            chunk(choice(tool_calls=[call(0, '{"city":')])),
            chunk(choice(tool_calls=[call(0, '"Rome"}')])),
            chunk(choice(tool_calls=[call(1, "", "call_b", "get_time")])),
            chunk(choice(tool_calls=[call(1, "")])),
            chunk(choice(finish="tool_calls")), DONE)
    assert r.complete and r.diagnostics == []
    assert message(r)["tool_calls"] == [
        {"id": "call_a", "type": "function",
         "function": {"name": "get_weather", "arguments": '{"city":"Rome"}'}},
        {"id": "call_b", "type": "function", "function": {"name": "get_time", "arguments": ""}}]
    assert message(r)["content"] is None


def test_interleaved_parallel_calls_follow_their_index():
    r = run(chunk(choice(tool_calls=[call(0, "", "call_a", "f"), call(1, "", "call_b", "g")])),
            chunk(choice(tool_calls=[call(1, '{"y"'), call(0, '{"x"')])),
            chunk(choice(tool_calls=[call(0, ": 1}")])),
            chunk(choice(tool_calls=[call(1, ": 2}")])),
            chunk(choice(finish="tool_calls")), DONE)
    calls = message(r)["tool_calls"]
    assert [c["function"]["arguments"] for c in calls] == ['{"x": 1}', '{"y": 2}']
    assert r.diagnostics == []


def test_a_reused_index_with_a_new_id_opens_a_new_call():
    payloads = (chunk(choice(tool_calls=[call(0, '{"a": 1}', "call_a", "f")])),
                chunk(choice(tool_calls=[call(0, "", "call_b", "g")])),
                chunk(choice(tool_calls=[call(0, '{"b": 2}')])),
                chunk(choice(finish="tool_calls")), DONE)
    r = run(*payloads)
    calls = message(r)["tool_calls"]
    assert [(c["id"], c["function"]["name"], c["function"]["arguments"]) for c in calls] == [
        ("call_a", "f", '{"a": 1}'), ("call_b", "g", '{"b": 2}')]
    acc = ChatAccumulator()
    for e in parse_all(from_bytes(body(*payloads), sidecar={"wire": WIRE}).events):
        acc.feed(e)
    assert [(s.address, s.call_id) for s in acc.slots()] == [
        ((0, ("tool", 0)), "call_a"), ((0, ("tool", 1)), "call_b")]


def test_n2_choices_interleave_and_stay_apart():
    r = run(chunk(choice(1, role="assistant", content="B")),
            chunk(choice(0, role="assistant", content="A")),
            chunk(choice(0, content="a"), choice(1, content="b")),
            chunk(choice(1, finish="stop")), chunk(choice(0, finish="length")), DONE)
    assert [c["index"] for c in r.final["choices"]] == [0, 1]
    assert [message(r, i)["content"] for i in (0, 1)] == ["Aa", "Bb"]
    assert [c["finish_reason"] for c in r.final["choices"]] == ["length", "stop"]
    assert r.complete


def test_refusal_reasoning_content_and_logprobs():
    lp = {"token": "No", "logprob": -0.1, "bytes": [78, 111], "top_logprobs": []}
    r = run(chunk(choice(role="assistant", content=None, refusal="",
                         logprobs={"content": None, "refusal": []})),
            chunk(choice(reasoning_content="think ")), chunk(choice(reasoning_content="more")),
            chunk(choice(refusal="No", logprobs={"content": None, "refusal": [lp]})),
            chunk(choice(refusal=".", logprobs={"content": None, "refusal": [lp]})),
            chunk(choice(finish="stop")), DONE)
    m = message(r)
    assert (m["refusal"], m["content"], m["reasoning_content"]) == ("No.", None, "think more")
    assert r.final["choices"][0]["logprobs"] == {"content": None, "refusal": [lp, lp]}
    assert r.diagnostics == []


def test_unknown_delta_fields_are_kept_on_the_message_with_one_warning():
    r = run(chunk(choice(role="assistant", sparkle="a", extra_obj={"k": 1})),
            chunk(choice(sparkle="b")), chunk(choice(finish="stop")), DONE)
    assert message(r)["sparkle"] == "ab" and message(r)["extra_obj"] == {"k": 1}
    assert codes(r) == ["unknown_delta", "unknown_delta"]
    assert r.complete


# -- tool input at the end -----------------------------------------------------


def test_invalid_arguments_at_the_finish_reason_are_a_diagnostic():
    r = run(chunk(choice(tool_calls=[call(0, '{"a": tru', "call_a", "f")])),
            chunk(choice(finish="tool_calls")), DONE)
    assert codes(r) == ["invalid_tool_input"]
    assert r.diagnostics[0].raw == '{"a": tru' and r.diagnostics[0].slot == (0, ("tool", 0))
    assert r.complete


def test_cut_in_arguments_keeps_the_raw_text_and_the_partial_value():
    r = run(chunk(choice(tool_calls=[call(0, '{"city": "Ro', "call_a", "f")])))
    assert not r.complete
    assert codes(r) == ["block_never_stopped", "cut_tool_input", "no_terminal"]
    assert r.diagnostics[1].raw == '{"city": "Ro'
    assert message(r)["tool_calls"][0]["function"]["arguments"] == '{"city": "Ro'
    assert r.final["choices"][0]["finish_reason"] is None


def test_done_before_every_choice_finished_is_not_complete():
    r = run(chunk(choice(0, content="a", finish="stop"), choice(1, content="b")), DONE)
    assert not r.complete and codes(r) == ["block_never_stopped"]


def test_finish_length_and_content_filter_are_complete_streams():
    for reason in ("length", "content_filter"):
        r = run(chunk(choice(content="x")), chunk(choice(finish=reason)), DONE)
        assert r.complete and r.final["choices"][0]["finish_reason"] == reason


def test_slots_per_choice_and_call():
    acc = ChatAccumulator()
    cap = from_bytes(body(chunk(choice(role="assistant", content="Hi")),
                          chunk(choice(tool_calls=[call(0, '{"a": "b', "call_a", "f")]))),
                     sidecar={"wire": WIRE})
    for e in parse_all(cap.events):
        acc.feed(e)
    slots = acc.slots()
    assert [(s.address, s.kind, s.label, s.state) for s in slots] == [
        ((0, "content"), "content", "[0] content", "open"),
        ((0, ("tool", 0)), "function", "[0] tool 0 f", "open")]
    assert slots[1].input == {"a": "b"} and slots[1].raw_input == '{"a": "b'
    acc.finish()
    assert {s.state for s in acc.slots()} == {"never closed"}


# -- errors and odd input ------------------------------------------------------


def test_error_payload_mid_stream_is_an_in_band_error():
    err = {"error": {"message": "The server had an error", "type": "server_error"}}
    r = run(chunk(choice(content="par")), err)
    assert not r.complete
    assert codes(r) == ["in_band_error", "block_never_stopped"]
    assert "server_error: The server had an error" in r.diagnostics[0].message
    assert message(r)["content"] == "par"


def test_http_error_capture_has_no_final():
    cap = from_bytes(b'{"error": {"message": "Rate limit reached", "type": "requests"}}',
                     sidecar={"wire": WIRE, "response": {"status": 429}})
    r = accumulate(cap)
    assert (r.final, r.complete, codes(r)) == (None, False, ["http_error"])
    assert "Rate limit reached" in r.diagnostics[0].message


def test_deltas_after_the_finish_and_data_after_done_are_reported():
    r = run(chunk(choice(content="a", finish="stop")), chunk(choice(content="late")), DONE,
            chunk(choice(content="later")))
    assert codes(r) == ["delta_after_finish", "event_after_terminal", "delta_after_finish"]
    assert message(r)["content"] == "a"


def changes_of(*payloads: dict | str) -> list:
    """Every change the accumulator returned, feed by feed, then `finish`."""
    acc = ChatAccumulator()
    cap = from_bytes(body(*payloads), sidecar={"wire": WIRE})
    out = [c for e in parse_all(cap.events) for c in acc.feed(e)]
    return out + acc.finish()


@pytest.mark.parametrize("again", ["stop", "length"])
def test_a_second_finish_reason_is_a_duplicate_stop_and_the_first_is_kept(again):
    good = (chunk(choice(role="assistant", content="a")), chunk(choice(finish="stop")), DONE)
    r = run(good[0], good[1], chunk(choice(finish=again, content="b")), DONE)
    (twice,) = r.diagnostics
    assert (twice.code, twice.severity, twice.index) == ("duplicate_stop", "error", 2)
    assert twice.extra["orphan_text"] == "b" and '"b"' in twice.raw
    assert r.final == run(*good).final and r.complete
    closes = [c for c in changes_of(good[0], good[1], chunk(choice(finish=again)), DONE)
              if isinstance(c, SlotClosed)]
    assert [c.event for c in closes] == [1]      # the slot closed once, at the first


def test_a_call_opened_again_is_a_duplicate_start_not_applied():
    opening = chunk(choice(tool_calls=[call(0, '{"a"', "call_a", "f")]))
    rest = (chunk(choice(tool_calls=[call(0, ": 1}")])), chunk(choice(finish="tool_calls")),
            DONE)
    r = run(opening, opening, *rest)
    (twice,) = r.diagnostics
    assert (twice.code, twice.severity, twice.slot) == ("duplicate_start", "error",
                                                        (0, ("tool", 0)))
    assert twice.extra["orphan_text"] == '{"a"' and "call_a" in twice.raw
    assert r.final == run(opening, *rest).final
    assert message(r)["tool_calls"][0]["function"]["arguments"] == '{"a": 1}'
    # The same id at another index is the same call announced again, too.
    other = chunk(choice(tool_calls=[call(1, "", "call_a", "f")]))
    assert codes(run(opening, other, *rest)) == ["duplicate_start"]


REUSED = (chunk(choice(tool_calls=[call(0, "", "call_a", "f")])),
          chunk(choice(tool_calls=[call(0, '{"a": 1}')])),
          chunk(choice(tool_calls=[call(0, "", "call_b", "g")])),
          chunk(choice(tool_calls=[call(0, '{"b": ')])),
          chunk(choice(tool_calls=[call(0, "2}")])),
          chunk(choice(finish="tool_calls")), DONE)


def test_a_fragment_before_its_opening_at_a_reused_index_is_held_for_that_opening():
    a, a_args, b, b1, b2, *end = REUSED
    assert run(*REUSED).diagnostics == []
    r = run(a, a_args, b1, b2, b, *end)     # both of b's fragments before its opening
    assert codes(r) == ["event_before_start", "event_before_start"]
    assert [d.extra["orphan_text"] for d in r.diagnostics] == ['{"b": ', "2}"]
    assert all(d.severity == "error" for d in r.diagnostics)
    assert r.final == run(*REUSED).final
    grew = [c for c in changes_of(a, a_args, b1, b2, b, *end)
            if isinstance(c, ToolInputGrew) and c.address == (0, ("tool", 1))]
    assert [(c.event, c.fragment) for c in grew] == [(4, ""), (4, '{"b": '), (4, "2}")]


def test_held_text_no_opening_claims_stays_in_its_diagnostic():
    a, a_args, _, b1, b2, *end = REUSED
    r = run(a, a_args, b1, b2, *end)
    assert codes(r) == ["event_before_start", "event_before_start"]
    assert "".join(d.extra["orphan_text"] for d in r.diagnostics) == '{"b": 2}'
    assert message(r)["tool_calls"] == [
        {"id": "call_a", "type": "function", "function": {"name": "f", "arguments": '{"a": 1}'}}]


def test_a_fragment_that_can_still_continue_its_call_is_applied():
    # Whitespace after a whole value, and text while the value is still open, continue it.
    a, a_args, *_ = REUSED
    r = run(a, a_args, chunk(choice(tool_calls=[call(0, " \n")])),
            chunk(choice(finish="tool_calls")), DONE)
    assert r.diagnostics == []
    assert message(r)["tool_calls"][0]["function"]["arguments"] == '{"a": 1} \n'
    r = run(a, chunk(choice(tool_calls=[call(0, '{"a": 1')])),
            chunk(choice(tool_calls=[call(0, "2}")])), chunk(choice(finish="tool_calls")), DONE)
    assert r.diagnostics == [] and message(r)["tool_calls"][0]["function"]["arguments"] == \
        '{"a": 12}'


def test_a_tool_call_index_that_is_not_an_integer_is_an_unknown_slot():
    for index in ([0], {"i": 0}, "0", 1.5):
        r = run(chunk(choice(tool_calls=[{"index": index, "function": {"arguments": "{}"}}])),
                chunk(choice(finish="stop")), DONE)
        (odd,) = r.diagnostics
        assert (odd.code, odd.extra["orphan_text"]) == ("unknown_slot", "{}"), index


def test_unparseable_payload_and_fragments_without_id():
    r = run("{oops", chunk(choice(tool_calls=[{"index": 0, "function": {"arguments": "{}"}}])),
            chunk(choice(finish="tool_calls")), DONE)
    assert codes(r) == ["unparseable_json", "tool_call_without_id"]
    assert message(r)["tool_calls"][0]["function"]["arguments"] == "{}"


_CHOICE = st.builds(
    lambda i, content, frag, cid, finish: choice(
        i, finish=finish, content=content,
        tool_calls=[call(i, frag, cid, "f")] if frag is not None else None),
    st.integers(0, 2), st.one_of(st.none(), st.text(max_size=3)),
    st.one_of(st.none(), st.sampled_from(['{"a', '": 1', "}", ""])),
    st.one_of(st.none(), st.sampled_from(["call_a", "call_b"])),
    st.one_of(st.none(), st.sampled_from(["stop", "tool_calls"])))
_PAYLOAD = st.one_of(
    st.builds(lambda cs: chunk(*cs), st.lists(_CHOICE, max_size=3)),
    st.just(DONE), st.just({"error": {"message": "x"}}), st.just(chunk(usage=USAGE)),
    st.dictionaries(st.sampled_from(["choices", "id", "usage"]),
                    st.one_of(st.none(), st.integers(), st.text(max_size=2),
                              st.lists(st.integers(), max_size=2))))


@settings(max_examples=examples(300), deadline=None)
@given(st.lists(_PAYLOAD, max_size=20))
def test_any_sequence_of_chunks_is_accumulated_without_raising(payloads):
    acc = ChatAccumulator()
    for i, p in enumerate(payloads):
        data = p if isinstance(p, str) else json.dumps(p)
        acc.feed(parse_payload(ServerSentEvent(None, data), i))
    acc.finish()
    json.dumps(acc.final())
    assert all(s.state != "open" for s in acc.slots())
    if acc.complete:      # [DONE], or its absence after every finish (with a warning)
        assert DONE in payloads or "no_done_marker" in [d.code for d in acc.diagnostics]
        if DONE not in payloads:
            assert acc.choices and all(c.finish_reason for c in acc.choices.values())


_FRAGMENT = st.builds(
    lambda index, text, call_id: {"index": index, "function": {"arguments": text},
                                  **({"id": call_id, "type": "function"} if call_id else {})},
    st.integers(0, 1), st.sampled_from(['{"a": 1}', '{"b": ', "2}", " ", "x", ""]),
    st.sampled_from([None, None, "call_a", "call_b", "call_c"]))
_TOOL_CHUNK = st.one_of(
    st.builds(lambda fs: chunk(choice(tool_calls=fs)), st.lists(_FRAGMENT, min_size=1,
                                                                 max_size=2)),
    st.just(chunk(choice(finish="tool_calls"))))


@settings(max_examples=examples(300), deadline=None, derandomize=True, database=None)
@given(st.lists(_TOOL_CHUNK, max_size=12))
def test_no_argument_text_is_lost_whatever_the_order(payloads):
    r = run(*payloads, DONE)
    calls = message(r).get("tool_calls") or [] if r.final["choices"] else []
    applied = "\x00".join(c["function"]["arguments"] for c in calls)
    kept = "\x00".join(d.extra.get("orphan_text") or "" for d in r.diagnostics)
    for p in payloads:
        for fragment in (p["choices"][0]["delta"] or {}).get("tool_calls") or []:
            text = fragment["function"]["arguments"]
            assert text in applied or text in kept, (text, codes(r))


# -- every capture ------------------------------------------------------------

CAPTURES = [c for c in corpus() + reference_corpus() if c.wire == WIRE]


@pytest.mark.parametrize("capture", CAPTURES, ids=[c.key for c in CAPTURES])
def test_every_capture_accumulates_with_a_consistent_outcome(capture):
    r = accumulate(capture)
    if capture.status >= 300:
        assert r.final is None and "http_error" in codes(r)
        return
    json.dumps(r.final)
    events = parse_all(capture.events)
    types = [e.type for e in events]
    if r.complete:
        assert "[DONE]" in types or "no_done_marker" in codes(r)
        assert "error" not in types
        assert all(c["finish_reason"] for c in r.final["choices"])
    if "error" in types:
        assert "in_band_error" in codes(r) and not r.complete
    content = {}
    for e in events:
        for ch in (e.payload or {}).get("choices") or []:
            piece = _answer((ch.get("delta") or {}).get("content"))
            if piece:
                content[ch["index"]] = content.get(ch["index"], "") + piece
    for c in r.final["choices"]:
        assert _answer(c["message"]["content"]) == content.get(c["index"], "")


def _answer(content) -> str:
    """The answer text of a ``content``: a string, or typed parts' ``text`` parts joined."""
    if isinstance(content, list):
        return "".join(p["text"] for p in content if p.get("type") == "text")
    return content or ""


def test_provider_fields_on_chunks_and_choices_are_kept():
    first = chunk(choice(role="assistant", content="a"),
                  prompt_filter_results=[{"prompt_index": 0}], obfuscation="xyz")
    first["choices"][0]["content_filter_results"] = {"hate": {"filtered": False}}
    r = run(first, chunk(choice(finish="stop")), DONE)
    assert r.final["prompt_filter_results"] == [{"prompt_index": 0}]
    assert "obfuscation" not in r.final
    assert r.final["choices"][0]["content_filter_results"] == {"hate": {"filtered": False}}


AZURE_FILTERS = [{"prompt_index": 0, "content_filter_results": {
    "hate": {"filtered": False, "severity": "safe"}}}]
# Azure OpenAI's first chunk: its prompt's filter results, and placeholders for the names.
AZURE_FIRST = {"choices": [], "created": 0, "id": "", "model": "", "object": "",
               "prompt_filter_results": AZURE_FILTERS}


def test_a_placeholder_first_chunk_does_not_name_the_completion():
    r = run(AZURE_FIRST, chunk(choice(role="assistant", content="Hi")),
            chunk(choice(finish="stop")), DONE)
    assert (r.final["id"], r.final["created"], r.final["model"]) == ("chatcmpl-1",
                                                                      1700000000, "gpt-x")
    assert r.final["prompt_filter_results"] == AZURE_FILTERS      # the bytes win
    assert message(r)["content"] == "Hi" and r.complete


def test_the_first_real_name_is_kept_and_a_placeholder_alone_stays():
    later = {**chunk(choice(finish="stop")), "id": "chatcmpl-2", "model": "other"}
    r = run(AZURE_FIRST, chunk(choice(role="assistant", content="Hi")), later, DONE)
    assert (r.final["id"], r.final["model"]) == ("chatcmpl-1", "gpt-x")
    r = run(AZURE_FIRST, {**chunk(choice(role="assistant", content="Hi", finish="stop")),
                          "id": "", "created": 0, "model": ""}, DONE)
    assert (r.final["id"], r.final["created"], r.final["model"]) == ("", 0, "")


@pytest.mark.parametrize("route", ["wire", "sdk"])
def test_both_routes_name_the_model_after_a_placeholder_first_chunk(route):
    from lesson_lib.turn.run import turn_state
    cap = from_bytes(body(AZURE_FIRST, chunk(choice(role="assistant", content="Hi")),
                          chunk(choice(finish="stop")), DONE), sidecar={"wire": WIRE})
    (step,) = turn_state(cap, route=route).steps
    assert (step.model, step.response_id) == ("gpt-x", "chatcmpl-1")


def test_complete_is_known_as_soon_as_done_arrives():
    acc = ChatAccumulator()
    cap = from_bytes(body(chunk(choice(content="a")), chunk(choice(finish="stop")), DONE),
                     sidecar={"wire": WIRE})
    seen = []
    for e in parse_all(cap.events):
        acc.feed(e)
        seen.append(acc.complete)
    assert seen == [False, False, True]


def test_legacy_function_call_is_accumulated_and_parsed_at_the_finish():
    r = run(chunk(choice(role="assistant", function_call={"name": "f", "arguments": ""})),
            chunk(choice(function_call={"arguments": '{"a":'})),
            chunk(choice(function_call={"arguments": " 1}"})),
            chunk(choice(finish="function_call")), DONE)
    assert message(r)["function_call"] == {"name": "f", "arguments": '{"a": 1}'}
    assert r.diagnostics == [] and r.complete
    bad = run(chunk(choice(function_call={"name": "f", "arguments": "{"})),
              chunk(choice(finish="function_call")), DONE)
    assert [d.code for d in bad.diagnostics] == ["invalid_tool_input"]


def test_a_delta_after_the_finish_is_an_error_that_keeps_its_text():
    r = run(chunk(choice(content="a", finish="stop")),
            chunk(choice(content="late ", tool_calls=[call(0, '{"x"')])), DONE)
    (late,) = r.diagnostics
    assert (late.code, late.severity) == ("delta_after_finish", "error")
    assert late.extra["orphan_text"] == 'late {"x"' and "late" in late.raw
    assert message(r)["content"] == "a"


# -- content as typed parts (Mistral) -------------------------------------------------


def thinking(text: str, **extra) -> dict:
    return {"type": "thinking", "thinking": [{"type": "text", "text": text}], **extra}


def test_array_content_thinking_to_reasoning_text_to_content_parts_kept():
    acc = ChatAccumulator()
    cap = from_bytes(body(
        chunk(choice(role="assistant", content="")),
        chunk(choice(content=[thinking("Two ", closed=True)]), p="abc"),
        chunk(choice(content=[thinking("and two")])),
        chunk(choice(content=[thinking(".", closed=False), {"type": "text", "text": "4"}])),
        chunk(choice(content="!", finish="stop")), DONE), sidecar={"wire": WIRE})
    for ev in parse_all(cap.events):
        acc.feed(ev)
    acc.finish()
    r = accumulate(cap)
    assert r.complete and "unknown_delta" not in codes(r)
    assert message(r)["content"] == [
        {"type": "thinking", "thinking": [{"type": "text", "text": "Two and two."}],
         "closed": False},
        {"type": "text", "text": "4!"}]
    assert "p" not in r.final           # padding, like obfuscation: stream-only
    slots = {s.kind: s.content for s in acc.slots()}
    assert slots == {"content": "4!", "reasoning": "Two and two."}


def test_array_content_text_before_the_first_array_stays_the_first_text_part():
    r = run(chunk(choice(content="Hi ")), chunk(choice(content=[{"type": "text", "text": "you"}])),
            chunk(choice(content=[{"type": "image_url", "image_url": {"url": "u"}}])),
            chunk(choice(finish="stop")), DONE)
    assert message(r)["content"] == [{"type": "text", "text": "Hi you"},
                                     {"type": "image_url", "image_url": {"url": "u"}}]
    assert "unknown_delta" in codes(r)       # a part type the course does not read: warned


def test_array_content_gives_a_reasoning_block_and_a_text_block_on_both_routes():
    from lesson_lib.turn.reduce import reduce_all
    from lesson_lib.turn.run import turn_events
    # Mistral's shape: an empty string first (the SDK's helper then drops the arrays
    # from its own message, but still yields every chunk to the SDK route).
    cap = from_bytes(body(chunk(choice(content="")), chunk(choice(content=[thinking("hm")])),
                          chunk(choice(content=[{"type": "text", "text": "ok"}],
                                       finish="stop")), DONE), sidecar={"wire": WIRE})
    for route in ("wire", "sdk"):
        state = reduce_all(turn_events(cap, route))
        assert [(b.kind, b.text) for b in state.blocks] == [("reasoning", "hm"),
                                                             ("text", "ok")], route
        assert state.outcome == "completed", route


# -- a body without [DONE] ---------------------------------------------------------------


def test_no_done_after_every_finish_and_the_usage_is_ended_with_a_warning():
    r = run(chunk(choice(content="a"), usage=None), chunk(choice(finish="stop"), usage=None),
            chunk(usage=USAGE))
    assert r.complete
    (warning,) = [d for d in r.diagnostics if d.code == "no_done_marker"]
    assert warning.severity == "warning" and "no_terminal" not in codes(r)


def test_no_done_before_the_owed_usage_chunk_is_cut():
    # "usage": null on the chunks says the request asked for usage: it never came.
    r = run(chunk(choice(content="a"), usage=None), chunk(choice(finish="stop"), usage=None))
    assert not r.complete and "no_terminal" in codes(r)
    asked = accumulate(from_bytes(body(chunk(choice(content="a")), chunk(choice(finish="stop"))),
                                  sidecar={"wire": WIRE, "request": {
                                      "stream_options": {"include_usage": True}}}))
    assert not asked.complete and "no_terminal" in codes(asked)


def test_no_done_and_no_finish_reason_is_cut():
    # A vLLM-style body that stops with no finish_reason: however whole it looks, cut.
    r = run(chunk(choice(role="assistant", content="The answer")), chunk(choice(content=" is")))
    assert not r.complete
    assert {"no_terminal", "block_never_stopped"} <= set(codes(r))


def test_no_done_and_a_body_that_ends_inside_an_event_is_cut():
    whole = body(chunk(choice(content="a")), chunk(choice(finish="stop")))
    r = accumulate(from_bytes(whole + b'data: {"id"', sidecar={"wire": WIRE}))
    assert not r.complete and "no_terminal" in codes(r)


def test_the_missing_done_rule_is_the_same_for_the_stream_end_and_the_accumulator():
    from lesson_lib.wires.stream_end import how_it_ended
    from lesson_lib.wires.wire_events import parse_all
    cases = [(chunk(choice(content="a")), chunk(choice(finish="stop"))),
             (chunk(choice(content="a"), usage=None), chunk(choice(finish="stop"), usage=None)),
             (chunk(choice(content="a"), usage=None), chunk(choice(finish="stop"), usage=None),
              chunk(usage=USAGE)),
             (chunk(choice(0, content="a"), choice(1, content="b")),
              chunk(choice(0, finish="stop"))),
             (chunk(choice(content="a")),)]
    verdicts = []
    for payloads in cases:
        cap = from_bytes(body(*payloads), sidecar={"wire": WIRE})
        ending = how_it_ended(WIRE, parse_all(cap.events), cap.sse_diagnostics)
        assert ending.proper == accumulate(cap).complete
        verdicts.append(ending.kind)
        if ending.proper:
            assert [d.code for d in ending.diagnostics] == ["no_done_marker"]
    assert verdicts == ["ended", "cut", "ended", "cut", "cut"]


# -- an error inside a chunk (OpenRouter) ----------------------------------------------


def test_an_error_object_inside_a_chunk_with_choices_is_an_in_band_error_usage_kept():
    r = run(chunk(choice(content="a", finish="length")),
            chunk(choice(role="assistant", content=""), error={"code": 400, "message": "Token"
                                                                " limit reached"},
                  usage=USAGE), DONE)
    assert not r.complete and "in_band_error" in codes(r)
    assert r.final["usage"] == USAGE
    assert "delta_after_finish" not in codes(r)    # the error's own choices are not applied
    assert message(r)["content"] == "a"


# -- spoken output, the moderation chunk ----------------------------------------------


def test_audio_fields_are_concatenated_and_the_expiry_comes_last():
    stream = (chunk(choice(role="assistant", content=None, audio={"id": "audio_1",
                                                                  "transcript": ""})),
              chunk(choice(audio={"transcript": "Bon"})), chunk(choice(audio={"data": "AAAA"})),
              chunk(choice(audio={"transcript": "jour"})), chunk(choice(audio={"data": "BBB="})),
              chunk(choice(audio={"expires_at": 1700003600})), chunk(choice(finish="stop")), DONE)
    r = run(*stream)
    assert message(r)["audio"] == {"id": "audio_1", "transcript": "Bonjour", "data": "AAAABBB=",
                                   "expires_at": 1700003600}
    assert message(r)["content"] is None and "unknown_delta" not in codes(r)
    closed = [c for c in changes_of(*stream)
              if isinstance(c, SlotClosed) and c.address == (0, "audio")]
    assert closed[0].data["transcript"] == "Bonjour"


def test_a_repeated_audio_id_or_expiry_is_not_garbled_as_the_sdk_does():
    # The SDK's delta merge would give "audio_1audio_1" and the sum of the two expiries.
    r = run(chunk(choice(audio={"id": "audio_1", "expires_at": 5})),
            chunk(choice(audio={"id": "audio_1", "data": "AA"})),
            chunk(choice(audio={"expires_at": 7})), chunk(choice(finish="stop")), DONE)
    assert message(r)["audio"] == {"id": "audio_1", "expires_at": 7, "data": "AA"}


@pytest.mark.parametrize(("output", "severity"), [
    ({"type": "moderation_results", "model": "m", "results": [{"flagged": True}]}, "warning"),
    ({"type": "error", "code": "timeout", "message": "m"}, "warning"),
    ({"type": "moderation_results", "model": "m", "results": [{"flagged": False}]}, "info")])
def test_the_moderation_chunk_is_kept_latest_first_and_noted(output, severity):
    mod = {"input": {"type": "moderation_results", "model": "m",
                     "results": [{"flagged": False}]}, "output": output}
    r = run(chunk(choice(content="Hi")), chunk(choice(finish="stop")),
            chunk(moderation={"input": {}, "output": {}}), chunk(moderation=mod), DONE)
    assert r.final["moderation"] == mod
    notes = [d for d in r.diagnostics if d.code == "moderation"]
    assert [d.severity for d in notes] == ["info", severity]
