"""The OpenAI Responses accumulator: one test per rule, then every Responses capture.

Unit tests build small event lists by hand (`ev` / `stream`); the corpus
tests run every Responses capture in the project's `captures/` and in the
shared reference captures through the accumulator, and check the result
against the server's own terminal `Response` and against what the official
SDK builds.
"""

from __future__ import annotations

import json
import time

import pytest
from examples import examples
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from lesson_lib.accumulate.responses import ResponsesAccumulator
from lesson_lib.accumulate.responses.compare import differences
from lesson_lib.capture.captures import Capture, corpus, reference_corpus, reference_dir
from lesson_lib.capture.replay import run_sdk
from lesson_lib.sse.decoder import ServerSentEvent
from lesson_lib.wires.wire_events import WireEvent, parse_all, parse_payload

WIRE = "openai-responses"

# -- building events by hand ---------------------------------------------------


def ev(payload: dict | str, index: int = 0) -> WireEvent:
    """One wire event from a payload dict (or raw data text that is not JSON)."""
    if isinstance(payload, str):
        return parse_all([ServerSentEvent("x", payload)])[0]
    data = json.dumps(payload)
    kind = payload.get("type")
    return WireEvent(index, ServerSentEvent(kind, data, start=index * 100), kind, payload)


def feed(payloads: list, *, finish: bool = True, numbered: bool = False) -> ResponsesAccumulator:
    """Feed payloads in order (numbering them 0, 1, ... when `numbered`)."""
    acc = ResponsesAccumulator()
    for i, p in enumerate(payloads):
        if numbered and isinstance(p, dict) and "sequence_number" not in p:
            p = {**p, "sequence_number": i}
        acc.feed(ev(p, i))
    if finish:
        acc.finish()
    return acc


def codes(acc: ResponsesAccumulator) -> list[str]:
    return [d.code for d in acc.diagnostics]


def response(status: str = "in_progress", output: list | None = None, **extra) -> dict:
    return {"id": "resp_1", "object": "response", "created_at": 1700000000, "status": status,
            "error": None, "incomplete_details": None, "model": "gpt-test", "output": output or [],
            "usage": None, **extra}


USAGE = {"input_tokens": 5, "output_tokens": 7, "total_tokens": 12}


def created() -> dict:
    return {"type": "response.created", "response": response()}


def completed(output: list, **extra) -> dict:
    return {"type": "response.completed",
            "response": response("completed", output, usage=USAGE, **extra)}


def message_item(status: str = "in_progress", content: list | None = None, mid="msg_1") -> dict:
    return {"id": mid, "type": "message", "status": status, "role": "assistant",
            "content": content or []}


def text_part(text: str = "", annotations: list | None = None) -> dict:
    return {"type": "output_text", "annotations": annotations or [], "logprobs": [], "text": text}


def text_stream(deltas: list[str], oi: int = 0, mid: str = "msg_1") -> list[dict]:
    """A message at `oi` streamed as `deltas`, from output_item.added to output_item.done."""
    text = "".join(deltas)
    addr = {"item_id": mid, "output_index": oi}
    return [
        {"type": "response.output_item.added", "output_index": oi, "item": message_item(mid=mid)},
        {"type": "response.content_part.added", **addr, "content_index": 0, "part": text_part()},
        *({"type": "response.output_text.delta", **addr, "content_index": 0, "delta": d,
           "logprobs": []} for d in deltas),
        {"type": "response.output_text.done", **addr, "content_index": 0, "text": text,
         "logprobs": []},
        {"type": "response.content_part.done", **addr, "content_index": 0,
         "part": text_part(text)},
        {"type": "response.output_item.done", "output_index": oi,
         "item": message_item("completed", [text_part(text)], mid=mid)},
    ]


def call_item(status="in_progress", arguments="", oi_id="fc_1", call_id="call_1",
              name="get_weather") -> dict:
    return {"id": oi_id, "type": "function_call", "status": status, "arguments": arguments,
            "call_id": call_id, "name": name}


def call_stream(deltas: list[str], oi: int = 0, fid="fc_1", call_id="call_1",
                name="get_weather", end: bool = True) -> list[dict]:
    args = "".join(deltas)
    addr = {"item_id": fid, "output_index": oi}
    events = [
        {"type": "response.output_item.added", "output_index": oi,
         "item": call_item(oi_id=fid, call_id=call_id, name=name)},
        *({"type": "response.function_call_arguments.delta", **addr, "delta": d}
          for d in deltas),
    ]
    if end:
        events += [
            {"type": "response.function_call_arguments.done", **addr, "arguments": args},
            {"type": "response.output_item.done", "output_index": oi,
             "item": call_item("completed", args, fid, call_id, name)},
        ]
    return events


HELLO = [created(), *text_stream(["Hel", "lo", "!"]),
         completed([message_item("completed", [text_part("Hello!")])])]


# -- the basic shapes ----------------------------------------------------------


def test_text_stream_builds_the_response_of_the_non_streaming_api():
    acc = feed(HELLO, numbered=True)
    final = acc.final()
    assert acc.diagnostics == []
    assert acc.complete and acc.terminal == "completed" and acc.status == "completed"
    assert final["output"] == [message_item("completed", [text_part("Hello!")])]
    assert final["usage"] == USAGE and final["status"] == "completed"
    assert json.loads(json.dumps(final)) == final


def test_final_is_available_mid_stream_and_shows_the_text_so_far():
    acc = feed(HELLO[:5], finish=False)
    final = acc.final()
    assert final["status"] == "in_progress" and final["usage"] is None
    assert final["output"][0]["content"][0]["text"] == "Hello"
    assert final["output"][0]["status"] == "in_progress"
    assert not acc.complete


def test_final_shares_no_container_with_the_events():
    events = [ev(p, i) for i, p in enumerate(HELLO)]
    acc = ResponsesAccumulator()
    for e in events:
        acc.feed(e)
    before = json.dumps([e.payload for e in events])
    final = acc.final()
    final["output"][0]["content"][0]["annotations"].append("x")
    final["output"].clear()
    assert json.dumps([e.payload for e in events]) == before
    assert acc.final()["output"][0]["content"][0]["annotations"] == []


def test_slots_follow_the_parts_with_state():
    acc = feed(HELLO[:4], finish=False)
    (slot,) = acc.slots()
    assert slot.address == (0, 0) and slot.kind == "output_text"
    assert slot.label == "[0.0] output_text" and slot.content == "Hel" and slot.state == "open"
    acc = feed(HELLO)
    assert [(s.address, s.content, s.state) for s in acc.slots()] == [((0, 0), "Hello!", "closed")]
    acc = feed(HELLO[:5])
    assert acc.slots()[0].state == "never closed"


def test_an_item_with_no_parts_yet_still_has_a_slot():
    acc = feed([created(), HELLO[1]], finish=False)
    assert [(s.address, s.kind, s.label) for s in acc.slots()] == [((0,), "message",
                                                                      "[0] message")]


def test_function_call_arguments_are_raw_text_parsed_strictly_at_the_end():
    acc = feed([created(), *call_stream(['{"ci', 'ty": "Par', 'is"}']),
                completed([call_item("completed", '{"city": "Paris"}')])])
    assert acc.diagnostics == []
    assert acc.final()["output"][0]["arguments"] == '{"city": "Paris"}'
    assert acc.tool_inputs() == {0: {"city": "Paris"}}
    (slot,) = acc.slots()
    assert slot.label == "[0] function_call get_weather"
    assert (slot.name, slot.call_id, slot.raw_input) == ("get_weather", "call_1",
                                                         '{"city": "Paris"}')
    assert "parsed_arguments" not in acc.final()["output"][0]


def test_a_function_call_cut_in_its_arguments_gets_the_partial_value_and_the_raw_text():
    acc = feed([created(), *call_stream(['{"city": "Par'], end=False)])
    assert codes(acc) == ["cut_tool_input", "no_terminal"]
    cut = acc.diagnostics[0]
    assert cut.raw == '{"city": "Par' and cut.slot == (0,)
    assert acc.tool_inputs() == {0: {"city": "Par"}}
    assert acc.final()["output"][0]["arguments"] == '{"city": "Par'
    assert acc.slots()[0].state == "never closed" and not acc.complete


def test_invalid_arguments_at_the_end_are_a_diagnostic_with_the_raw_text():
    acc = feed([created(), *call_stream(['{"city": "Paris"}{"x": 1}']),
                completed([call_item("completed", '{"city": "Paris"}{"x": 1}')])])
    assert codes(acc) == ["invalid_tool_input"]
    assert acc.diagnostics[0].raw == '{"city": "Paris"}{"x": 1}'


def test_empty_arguments_of_a_tool_without_parameters_are_an_empty_object():
    acc = feed([created(), *call_stream([]), completed([call_item("completed", "")])])
    assert acc.tool_inputs() == {0: {}} and acc.diagnostics == []


def test_parallel_calls_interleaved_go_to_their_own_items():
    a, b = call_stream(['{"city":', ' "Paris"}'], 0, "fc_a", "call_a"), \
        call_stream(['{"city":', ' "Oslo"}'], 1, "fc_b", "call_b")
    interleaved = [a[0], b[0], a[1], b[1], b[2], a[2], a[3], b[3], a[4], b[4]]
    acc = feed([created(), *interleaved], finish=False)
    out = acc.final()["output"]
    assert [o["arguments"] for o in out] == ['{"city": "Paris"}', '{"city": "Oslo"}']
    assert acc.tool_inputs() == {0: {"city": "Paris"}, 1: {"city": "Oslo"}}
    assert acc.diagnostics == []


def _summary_part_events(addr: dict, si: int, deltas: list[str]) -> list[dict]:
    text = "".join(deltas)
    return [
        {"type": "response.reasoning_summary_part.added", **addr, "summary_index": si,
         "part": {"type": "summary_text", "text": ""}},
        *({"type": "response.reasoning_summary_text.delta", **addr, "summary_index": si,
           "delta": d} for d in deltas),
        {"type": "response.reasoning_summary_text.done", **addr, "summary_index": si,
         "text": text},
        {"type": "response.reasoning_summary_part.done", **addr, "summary_index": si,
         "part": {"type": "summary_text", "text": text}},
    ]


def test_reasoning_summaries_by_summary_index():
    addr = {"item_id": "rs_1", "output_index": 0}
    item = {"id": "rs_1", "type": "reasoning", "summary": []}
    added = {"type": "response.output_item.added", "output_index": 0, "item": item}
    first = _summary_part_events(addr, 0, ["**A**", " one"])
    second = _summary_part_events(addr, 1, ["**B**", " two"])
    acc = feed([created(), added, *first, *second[:2]], finish=False)
    slots = acc.slots()
    assert [(s.address, s.content, s.state) for s in slots] == [
        ((0, "summary", 0), "**A** one", "closed"), ((0, "summary", 1), "**B**", "open")]
    assert slots[0].label == "[0.s0] summary_text of reasoning"
    done = {**item, "summary": [{"type": "summary_text", "text": "**A** one"},
                                {"type": "summary_text", "text": "**B** two"}]}
    acc = feed([created(), added, *first, *second,
                {"type": "response.output_item.done", "output_index": 0, "item": done},
                completed([done])])
    assert acc.diagnostics == [] and acc.final()["output"] == [done]


def test_reasoning_text_parts_and_refusals_are_parts_too():
    rid, mid = "rs_1", "msg_1"
    events = [
        created(),
        {"type": "response.output_item.added", "output_index": 0,
         "item": {"id": rid, "type": "reasoning", "summary": []}},
        {"type": "response.content_part.added", "item_id": rid, "output_index": 0,
         "content_index": 0, "part": {"type": "reasoning_text", "text": ""}},
        {"type": "response.reasoning_text.delta", "item_id": rid, "output_index": 0,
         "content_index": 0, "delta": "think"},
        {"type": "response.output_item.added", "output_index": 1, "item": message_item(mid=mid)},
        {"type": "response.content_part.added", "item_id": mid, "output_index": 1,
         "content_index": 0, "part": {"type": "refusal", "refusal": ""}},
        {"type": "response.refusal.delta", "item_id": mid, "output_index": 1,
         "content_index": 0, "delta": "I can't"},
        {"type": "response.refusal.delta", "item_id": mid, "output_index": 1,
         "content_index": 0, "delta": " help."},
        {"type": "response.refusal.done", "item_id": mid, "output_index": 1,
         "content_index": 0, "refusal": "I can't help."},
    ]
    acc = feed(events, finish=False)
    out = acc.final()["output"]
    assert out[0]["content"] == [{"type": "reasoning_text", "text": "think"}]
    assert out[0]["summary"] == []
    assert out[1]["content"] == [{"type": "refusal", "refusal": "I can't help."}]
    assert [s.kind for s in acc.slots()] == ["reasoning_text", "refusal"]
    assert acc.diagnostics == []


def test_annotations_are_added_onto_their_part():
    citation = {"type": "url_citation", "start_index": 0, "end_index": 5, "title": "T",
                "url": "https://example.com"}
    events = [created(), *text_stream(["Paris", " is big."])]
    events.insert(5, {"type": "response.output_text.annotation.added", "item_id": "msg_1",
                      "output_index": 0, "content_index": 0, "annotation_index": 0,
                      "annotation": citation})
    acc = feed(events[:6], finish=False)
    assert acc.final()["output"][0]["content"][0]["annotations"] == [citation]
    # the server's part and item (without the annotation here) disagree: said, and kept
    acc = feed(events, finish=False)
    assert "server_object_differs" in codes(acc)
    diag = acc.diagnostics[0]
    assert diag.extra["path"] == "output[0].content[0].annotations"
    assert diag.extra["ours"] == [citation] and diag.extra["theirs"] == []


def test_a_part_of_an_unknown_type_is_kept_raw():
    part = {"type": "output_hologram", "shape": "cube"}
    events = [created(), HELLO[1],
              {"type": "response.content_part.added", "item_id": "msg_1", "output_index": 0,
               "content_index": 0, "part": part},
              {"type": "response.content_part.done", "item_id": "msg_1", "output_index": 0,
               "content_index": 0, "part": {**part, "shape": "sphere"}}]
    acc = feed(events, finish=False)
    assert acc.final()["output"][0]["content"] == [{**part, "shape": "sphere"}]
    assert acc.slots()[0].kind == "output_hologram"


# -- other item types ----------------------------------------------------------


def _tool_item_stream(item: dict, done: dict, middle: list[dict]) -> list[dict]:
    return [created(), {"type": "response.output_item.added", "output_index": 0, "item": item},
            *middle, {"type": "response.output_item.done", "output_index": 0, "item": done},
            completed([done])]


def test_web_search_call_progress_and_the_done_item_replacing_the_added_one():
    wid = "ws_1"
    item = {"id": wid, "type": "web_search_call", "status": "in_progress"}
    done = {**item, "status": "completed", "action": {"type": "search", "query": "alberta"}}
    middle = [{"type": f"response.web_search_call.{s}", "item_id": wid, "output_index": 0}
              for s in ("in_progress", "searching", "completed")]
    events = _tool_item_stream(item, done, middle)
    acc = feed(events[:4], finish=False)
    assert acc.final()["output"] == [{**item, "status": "searching"}]
    acc = feed(events)
    assert acc.diagnostics == [] and acc.final()["output"] == [done]
    assert acc.slots()[0].content == "alberta"


def test_code_interpreter_code_deltas():
    cid = "ci_1"
    item = {"id": cid, "type": "code_interpreter_call", "status": "in_progress", "code": "",
            "container_id": "cntr_1", "outputs": None}
    done = {**item, "status": "completed", "code": "print(1)"}
    addr = {"item_id": cid, "output_index": 0}
    middle = [{"type": "response.code_interpreter_call.in_progress", **addr},
              {"type": "response.code_interpreter_call_code.delta", **addr, "delta": "print("},
              {"type": "response.code_interpreter_call_code.delta", **addr, "delta": "1)"},
              {"type": "response.code_interpreter_call_code.done", **addr, "code": "print(1)"},
              {"type": "response.code_interpreter_call.interpreting", **addr},
              {"type": "response.code_interpreter_call.completed", **addr}]
    events = _tool_item_stream(item, done, middle)
    acc = feed(events[:5], finish=False)
    assert acc.final()["output"][0]["code"] == "print(1)"
    assert acc.slots()[0].content == "print(1)"
    acc = feed(events)
    assert acc.diagnostics == [] and acc.final()["output"] == [done]


def test_apply_patch_diff_mcp_arguments_and_custom_tool_input_stream_into_their_fields():
    cases = [
        ({"id": "apc_1", "type": "apply_patch_call", "status": "in_progress", "call_id": "c",
          "operation": {"type": "create_file", "diff": "", "path": "a.md"}},
         "response.apply_patch_call_operation_diff", "diff", ("operation", "diff")),
        ({"id": "mcp_1", "type": "mcp_call", "status": "in_progress", "arguments": "",
          "name": "ask", "server_label": "wiki", "output": None, "error": None},
         "response.mcp_call_arguments", "arguments", ("arguments",)),
        ({"id": "ctc_1", "type": "custom_tool_call", "call_id": "c", "input": "",
          "name": "grammar"}, "response.custom_tool_call_input", "input", ("input",)),
    ]
    for item, prefix, field, path in cases:
        addr = {"item_id": item["id"], "output_index": 0}
        middle = [{"type": f"{prefix}.delta", **addr, "delta": "+a"},
                  {"type": f"{prefix}.delta", **addr, "delta": "+b"},
                  {"type": f"{prefix}.done", **addr, field: "+a+b"}]
        announced = json.dumps(item)
        acc = feed(_tool_item_stream(item, item, middle)[:4], finish=False)
        value = acc.final()["output"][0]
        for step in path:
            value = value[step]
        assert value == "+a+b", prefix
        assert json.dumps(item) == announced          # the event's item is never mutated
        assert acc.slots()[0].content == "+a+b"
        done = json.loads(announced)
        holder = done
        for step in path[:-1]:
            holder = holder[step]
        holder[path[-1]] = "+a+b"
        acc = feed(_tool_item_stream(item, done, middle))
        assert acc.diagnostics == [], prefix
        assert acc.final()["output"] == [done]


def test_image_generation_partial_images_show_in_the_slot_not_in_the_response():
    gid = "ig_1"
    item = {"id": gid, "type": "image_generation_call", "status": "in_progress"}
    addr = {"item_id": gid, "output_index": 0}
    events = [created(), {"type": "response.output_item.added", "output_index": 0, "item": item},
              {"type": "response.image_generation_call.generating", **addr},
              {"type": "response.image_generation_call.partial_image", **addr,
               "partial_image_index": 0, "partial_image_b64": "QUJD"}]
    acc = feed(events, finish=False)
    assert acc.final()["output"] == [{**item, "status": "generating"}]
    assert acc.slots()[0].content == "partial image 0: 4 base64 characters"


def test_shell_call_commands_stream_by_command_index():
    item = {"id": "sh_1", "type": "shell_call", "call_id": "c", "status": "in_progress",
            "action": {"commands": []}}
    events = [created(), {"type": "response.output_item.added", "output_index": 0, "item": item},
              {"type": "response.shell_call_command.added", "output_index": 0,
               "command_index": 0, "command": ""},
              {"type": "response.shell_call_command.delta", "output_index": 0,
               "command_index": 0, "delta": "ls "},
              {"type": "response.shell_call_command.delta", "output_index": 0,
               "command_index": 0, "delta": "-la"},
              {"type": "response.shell_call_command.done", "output_index": 0,
               "command_index": 0, "command": "ls -la"}]
    acc = feed(events, finish=False)
    assert acc.final()["output"][0]["action"] == {"commands": ["ls -la"]}
    assert item["action"] == {"commands": []}
    assert acc.diagnostics == []


def _spoken(*kinds_and_deltas) -> list[dict]:
    """Audio events: ("transcript", "Bon") is a transcript delta, ("data", "AA") a sound
    delta, ("transcript", None) the transcript's done."""
    names = {"data": "response.audio", "transcript": "response.audio.transcript"}
    return [{"type": f"{names[k]}.delta", "delta": d} if d is not None
            else {"type": f"{names[k]}.done"} for k, d in kinds_and_deltas]


def test_spoken_output_is_a_slot_of_its_own_that_the_response_has_no_place_for():
    events = [created(), *_spoken(("transcript", "Bon"), ("data", "AA"), ("transcript", "jour"),
                                  ("data", "BB"), ("transcript", None), ("data", None)),
              completed([])]
    acc = ResponsesAccumulator()
    said = [acc.feed(ev(p, i)) for i, p in enumerate(events)]
    assert acc.final()["output"] == [] and acc.diagnostics == []
    (slot,) = acc.slots()
    assert (slot.address, slot.kind, slot.content, slot.state) == (
        ("audio",), "audio", "Bonjour", "closed")
    assert [c.kind for c in said[1]] == ["slot_opened", "text_appended"]
    assert said[2] == [] and said[5] == []          # sound is kept, shown nowhere
    (closed,) = said[6]                             # the second done closes it
    assert closed.kind == "slot_closed" and closed.data == {"data": "AABB",
                                                            "transcript": "Bonjour"}


def test_spoken_output_cut_before_its_dones_is_never_closed_and_said_so():
    acc = feed([created(), *_spoken(("data", "AA"), ("transcript", "Bon"), ("transcript", None))])
    (slot,) = acc.slots()
    assert (slot.content, slot.state) == ("Bon", "never closed")
    assert "block_never_stopped" in codes(acc) and "no_terminal" in codes(acc)
    said = [d.message for d in acc.diagnostics if d.code == "block_never_stopped"]
    assert said == ["the spoken output was never done (no response.audio.done) before the end "
                    "of the stream"]


def test_an_unknown_item_type_is_kept_as_announced_then_as_done():
    item = {"id": "x_1", "type": "teleport_call", "status": "in_progress", "where": "moon"}
    done = {**item, "status": "completed"}
    acc = feed(_tool_item_stream(item, done, []))
    assert acc.diagnostics == [] and acc.final()["output"] == [done]


def test_an_unknown_event_type_passes_through_as_a_warning():
    odd = {"type": "response.teleport_call.beaming", "item_id": "msg_1", "output_index": 0}
    events = [*HELLO[:4], odd, *HELLO[4:]]
    acc = feed(events)
    assert codes(acc) == ["unknown_event"]
    diag = acc.diagnostics[0]
    assert diag.severity == "warning" and diag.index == 4 and "teleport" in diag.message
    assert acc.passed_through[0].payload == odd
    assert acc.complete and acc.final()["output"][0]["content"][0]["text"] == "Hello!"


# -- sequence numbers ----------------------------------------------------------


def numbered(payloads: list[dict], numbers: list[int]) -> list[dict]:
    return [{**p, "sequence_number": n} for p, n in zip(payloads, numbers, strict=True)]


def test_no_sequence_numbers_at_all_is_fine():
    acc = feed(HELLO)
    assert acc.diagnostics == []


def test_a_sequence_gap_says_how_many_events_are_missing():
    events = numbered(HELLO, [0, 1, 2, 3, 4, 7, 8, 9, 10, 11])
    acc = feed(events)
    assert codes(acc) == ["sequence_gap"]
    gap = acc.diagnostics[0]
    assert gap.extra["missing"] == 2 and gap.extra["after"] == 4 and gap.index == 5


def test_an_exact_duplicate_is_skipped_and_text_is_not_doubled():
    events = numbered(HELLO, list(range(len(HELLO))))
    events.insert(4, events[3])
    acc = feed(events)
    assert codes(acc) == ["sequence_duplicate"]
    assert acc.diagnostics[0].extra["repeat"] is True
    assert acc.final()["output"][0]["content"][0]["text"] == "Hello!"
    assert acc.diagnostics[0].severity == "warning"


def test_a_different_event_reusing_a_number_is_kept_and_said():
    events = numbered(HELLO[:5], [0, 1, 2, 3, 3])
    acc = feed(events, finish=False)
    assert codes(acc) == ["sequence_duplicate"]
    assert acc.diagnostics[0].extra["repeat"] is False
    assert acc.final()["output"][0]["content"][0]["text"] == "Hello"


def test_out_of_order_events_are_said_and_one_filling_a_gap_says_so():
    events = numbered(HELLO, list(range(len(HELLO))))
    events[4], events[5] = events[5], events[4]          # "!" (5) arrives before "lo" (4)
    acc = feed(events)
    assert codes(acc) == ["sequence_gap", "sequence_out_of_order", "server_object_differs"]
    late = acc.diagnostics[1]
    assert late.extra == {"sequence_number": 4, "after": 5}
    assert "fills part of a gap" in late.message
    # the deltas were applied as they arrived; output_text.done sets the text right
    assert acc.diagnostics[2].extra["ours"] == "Hel!lo"
    assert acc.final()["output"][0]["content"][0]["text"] == "Hello!"


def test_sequence_numbers_may_start_anywhere_in_a_resumed_stream():
    acc = feed(numbered(HELLO[4:], list(range(40, 40 + len(HELLO) - 4))), finish=False)
    assert "sequence_gap" not in codes(acc)


# -- how a stream may start ----------------------------------------------------


def test_a_stream_starting_with_response_queued_is_accepted():
    queued = {"type": "response.queued", "response": response("queued")}
    acc = feed([queued, *HELLO])
    assert acc.diagnostics == [] and acc.complete
    acc = feed([queued, *HELLO[1:]])
    assert acc.diagnostics == [] and acc.final()["status"] == "completed"
    acc = feed([queued], finish=False)
    assert acc.final()["status"] == "queued" and acc.final()["id"] == "resp_1"


def test_a_resumed_stream_is_accepted_with_what_had_to_be_assumed():
    # starts at a text delta for an item never added, in a part never added
    events = HELLO[4:]
    acc = feed(events)
    assert codes(acc) == ["event_before_start", "event_before_start", "event_before_start",
                          "server_object_differs"]
    assert [d.slot for d in acc.diagnostics] == [None, (0,), (0, 0), (0, 0)]
    assert acc.diagnostics[3].extra["ours"] == "lo!"
    final = acc.final()
    assert final["output"] == [message_item("completed", [text_part("Hello!")])]
    assert final["id"] == "resp_1" and acc.complete


def test_a_resumed_stream_cut_before_anything_is_stated_keeps_what_arrived():
    acc = feed(HELLO[4:6])
    final = acc.final()
    assert final["id"] is None and final["status"] == "in_progress"
    assert final["output"][0]["content"][0]["text"] == "lo!"
    assert final["output"][0]["id"] == "msg_1" and final["output"][0]["role"] == "assistant"
    assert codes(acc)[-2:] == ["block_never_stopped", "no_terminal"]


def test_text_done_after_missing_deltas_is_a_difference_and_the_server_text_is_kept():
    events = [created(), *text_stream(["Hel", "lo", "!"])]
    del events[4]                      # the "lo" delta is lost
    acc = feed(events, finish=False)
    (diag,) = acc.diagnostics
    assert diag.code == "server_object_differs" and diag.slot == (0, 0)
    assert (diag.extra["path"], diag.extra["ours"], diag.extra["theirs"]) == (
        "output[0].content[0].text", "Hel!", "Hello!")
    assert diag.extra["against"] == "response.output_text.done"
    assert acc.final()["output"][0]["content"][0]["text"] == "Hello!"


def test_arguments_delta_before_output_item_added_is_accepted():
    # docker/docker-agent#2976: an argument delta arrived before its item was added
    stream = call_stream(['{"a":', " 1}"])
    events = [created(), stream[1], stream[0], *stream[2:]]
    acc = feed(events, finish=False)
    assert codes(acc) == ["event_before_start"]
    out = acc.final()["output"][0]
    assert out == call_item("completed", '{"a": 1}') and acc.tool_inputs() == {0: {"a": 1}}


def test_an_item_id_that_contradicts_its_output_index_is_said():
    events = [created(), *text_stream(["a"], 0, "msg_1"), *text_stream(["b"], 1, "msg_2")]
    events[-4] = {**events[-4], "item_id": "msg_1"}      # msg_2's delta names msg_1
    acc = feed(events, finish=False)
    assert "unknown_slot" in codes(acc)


def test_a_delta_after_its_item_was_done_is_said_once():
    late = {"type": "response.output_text.delta", "item_id": "msg_1", "output_index": 0,
            "content_index": 0, "delta": "??"}
    acc = feed([*HELLO[:-1], late, late, HELLO[-1]])
    assert codes(acc) == ["delta_after_stop"]
    assert acc.final()["output"][0]["content"][0]["text"] == "Hello!"


# -- errors and terminals ------------------------------------------------------

NESTED_ERROR = {"type": "error", "error": {"type": "insufficient_quota",
                                           "code": "insufficient_quota",
                                           "message": "You exceeded your current quota",
                                           "param": None}}
FLAT_ERROR = {"type": "error", "code": "server_error", "message": "The server had an error",
              "param": None}


@pytest.mark.parametrize("error", [NESTED_ERROR, FLAT_ERROR], ids=["nested", "flat"])
def test_an_error_event_in_either_shape_is_an_in_band_error(error):
    acc = feed([*HELLO[:5], error])
    assert codes(acc) == ["in_band_error", "block_never_stopped"]
    diag = acc.diagnostics[0]
    inner = error.get("error", error)
    assert inner["message"] in diag.message and diag.extra["error_code"] == inner["code"]
    assert diag.extra["shape"] == ("nested" if "error" in error else "flat")
    final = acc.final()
    assert final["status"] == "failed" and acc.status == "failed"
    assert final["error"] == {"code": inner["code"], "message": inner["message"]}
    assert final["output"][0]["content"][0]["text"] == "Hello"
    assert not acc.complete and "no_terminal" not in codes(acc)


def test_response_failed_after_an_error_is_honoured_and_said_once():
    failed_error = {"code": "insufficient_quota", "message": "You exceeded your current quota"}
    failed = {"type": "response.failed", "response": response("failed", error=failed_error)}
    acc = feed([created(), NESTED_ERROR, failed])
    assert codes(acc) == ["in_band_error"]
    final = acc.final()
    assert final["status"] == "failed" and final["error"] == failed_error
    assert not acc.complete and acc.terminal == "failed"


def test_response_failed_alone_is_an_in_band_error():
    failed = {"type": "response.failed",
              "response": response("failed", error={"code": "server_error", "message": "boom"})}
    acc = feed([created(), failed])
    assert codes(acc) == ["in_band_error"] and "boom" in acc.diagnostics[0].message
    assert not acc.complete


def test_response_incomplete_ends_the_stream_properly():
    text = "Hello, wor"
    item = message_item("incomplete", [text_part(text)])
    events = [created(), *text_stream(["Hello", ", wor"])[:-1],
              {"type": "response.output_item.done", "output_index": 0, "item": item},
              {"type": "response.incomplete",
               "response": response("incomplete", [item], usage=USAGE,
                                    incomplete_details={"reason": "max_output_tokens"})}]
    acc = feed(events)
    assert acc.diagnostics == [] and acc.complete and acc.terminal == "incomplete"
    final = acc.final()
    assert final["incomplete_details"] == {"reason": "max_output_tokens"}
    assert final["output"] == [item] and final["usage"] == USAGE


def test_an_item_never_done_takes_its_status_from_the_terminal():
    item = message_item("incomplete", [text_part("Hello")])
    failed = {"type": "response.failed",
              "response": response("failed", [item], error={"code": "server_error",
                                                            "message": "boom"})}
    acc = feed([*HELLO[:5], NESTED_ERROR, failed])
    assert codes(acc) == ["in_band_error", "block_never_stopped"]
    assert acc.final()["output"] == [item]
    assert acc.final()["error"] == {"code": "server_error", "message": "boom"}


def test_a_lifecycle_event_may_carry_finished_items():
    item = message_item("completed", [text_part("ready")])
    acc = feed([{"type": "response.created", "response": response(output=[item])},
                completed([item])])
    assert acc.diagnostics == [] and acc.final()["output"] == [item]


def test_a_cut_stream_is_not_complete_and_says_so():
    acc = feed(HELLO[:-1])
    assert codes(acc) == ["no_terminal"] and not acc.complete
    acc = feed(HELLO[:6])
    assert codes(acc) == ["block_never_stopped", "no_terminal"]
    assert acc.diagnostics[0].slot == (0,)


def test_the_terminal_object_is_checked_against_ours():
    server_item = message_item("completed", [text_part("Hello?")])
    acc = feed([*HELLO[:-1], completed([server_item])])
    (diag,) = acc.diagnostics
    assert diag.code == "server_object_differs" and diag.slot == (0, 0)
    assert diag.extra["path"] == "output[0].content[0].text"
    assert (diag.extra["ours"], diag.extra["theirs"]) == ("Hello!", "Hello?")
    assert diag.extra["against"] == "response.completed" and diag.index == len(HELLO) - 1
    final = acc.final()      # ours, with what only the terminal knows
    assert final["output"][0]["content"][0]["text"] == "Hello!" and final["usage"] == USAGE


def test_an_item_missing_from_either_side_is_a_difference():
    acc = feed([*HELLO[:-1], completed([])])
    assert codes(acc) == ["server_object_differs"]
    extra = acc.diagnostics[0].extra
    assert extra["theirs"] == "<absent>" and extra["absent"] == "theirs"
    assert extra["ours"] == message_item("completed", [text_part("Hello!")])
    acc = feed([created(), completed([message_item("completed", [text_part("x")])])])
    assert codes(acc) == ["server_object_differs"]
    assert acc.diagnostics[0].extra["ours"] == "<absent>"
    assert acc.diagnostics[0].extra["absent"] == "ours"


def test_a_difference_carries_both_whole_values():
    long_text = "x" * 5000
    acc = feed([*HELLO[:-1], completed([message_item("completed", [text_part(long_text)])])])
    (diag,) = acc.diagnostics
    assert diag.extra["theirs"] == long_text and diag.extra["ours"] == "Hello!"
    assert "absent" not in diag.extra and len(diag.message) < 400


def test_differences_are_capped_per_terminal():
    many = [message_item("completed", [text_part(str(i))], mid=f"m{i}") for i in range(30)]
    acc = feed([created(), completed(many)])
    assert codes(acc).count("server_object_differs") == 21
    assert "not listed" in acc.diagnostics[-1].message


def test_a_terminal_without_output_is_not_a_difference():
    acc = feed([*HELLO[:-1], {"type": "response.completed",
                              "response": {**response("completed"), "output": None}}])
    assert acc.diagnostics == []
    assert acc.final()["output"][0]["content"][0]["text"] == "Hello!"


def test_encrypted_content_is_opaque_and_the_terminal_value_is_kept():
    item = {"id": "rs_1", "type": "reasoning", "encrypted_content": "AAA", "summary": []}
    done = {**item, "encrypted_content": "BBB"}
    final_item = {**item, "encrypted_content": "CCC"}
    acc = feed([created(), {"type": "response.output_item.added", "output_index": 0,
                            "item": item},
                {"type": "response.output_item.done", "output_index": 0, "item": done},
                completed([final_item])])
    assert acc.diagnostics == []
    assert acc.final()["output"] == [final_item]


def test_events_after_the_terminal_are_said():
    acc = feed([*HELLO, HELLO[-1]])
    assert "event_after_terminal" in codes(acc)


def test_a_second_response_created_is_a_duplicate_start():
    acc = feed([created(), *HELLO])
    assert codes(acc) == ["duplicate_start"]


def test_a_changed_response_id_is_said_once_as_a_warning():
    # One stream is one response: a server whose ids change from event to event.
    other = {"type": "response.in_progress", "response": {**response(), "id": "resp_2"}}
    third = {"type": "response.in_progress", "response": {**response(), "id": "resp_3"}}
    acc = feed([created(), other, third], finish=False)
    assert codes(acc) == ["rotating_ids", "duplicate_start"]
    said = acc.diagnostics[0]
    assert said.severity == "warning" and said.extra["path"] == "id"
    assert (said.extra["ours"], said.extra["theirs"]) == ("resp_1", "resp_2")


# -- bad input never raises ----------------------------------------------------


def test_unparseable_and_malformed_events_are_diagnostics():
    acc = ResponsesAccumulator()
    acc.feed(ev("{not json"))
    acc.feed(ev({"type": "response.output_text.delta", "output_index": 0, "item_id": "m",
                 "content_index": 0}))                                  # no delta
    acc.feed(ev({"type": "response.output_item.added", "output_index": "zero"}))
    acc.feed(ev({"type": "response.created"}))                          # no response
    acc.feed(ev({"type": "response.output_text.delta", "output_index": 0, "item_id": "m",
                 "content_index": 0, "delta": 5}))
    acc.feed(WireEvent(9, ServerSentEvent(None, "[1, 2]"), None, [1, 2]))
    acc.finish()
    assert codes(acc)[0] == "unparseable_json"
    assert codes(acc).count("malformed_event") == 4
    assert "unknown_event" in codes(acc)
    json.dumps(acc.final())
    acc.slots()


EVENT_TYPES = sorted({
    "response.created", "response.queued", "response.in_progress", "response.completed",
    "response.incomplete", "response.failed", "error", "response.output_item.added",
    "response.output_item.done", "response.content_part.added", "response.content_part.done",
    "response.output_text.delta", "response.output_text.done", "response.refusal.delta",
    "response.refusal.done", "response.reasoning_text.delta", "response.reasoning_text.done",
    "response.output_text.annotation.added", "response.reasoning_summary_part.added",
    "response.reasoning_summary_part.done", "response.reasoning_summary_text.delta",
    "response.reasoning_summary_text.done", "response.function_call_arguments.delta",
    "response.function_call_arguments.done", "response.mcp_call_arguments.delta",
    "response.code_interpreter_call_code.delta", "response.web_search_call.searching",
    "response.image_generation_call.partial_image", "response.shell_call_command.delta",
    "response.shell_call_output_content.delta", "response.audio.delta", "response.audio.done",
    "response.audio.transcript.delta", "response.audio.transcript.done", "response.unknown.x",
})
_scalars = st.one_of(st.none(), st.integers(-2, 3), st.text(max_size=4), st.booleans())
_values = st.recursive(_scalars, lambda inner: st.one_of(
    st.lists(inner, max_size=3), st.dictionaries(st.sampled_from(
        ["type", "id", "text", "content", "summary", "arguments", "status", "output"]),
        inner, max_size=3)), max_leaves=8)
_payloads = st.builds(
    lambda kind, fields: {"type": kind, **fields},
    st.sampled_from(EVENT_TYPES),
    st.dictionaries(st.sampled_from(
        ["output_index", "content_index", "summary_index", "item_id", "delta", "text", "item",
         "part", "response", "sequence_number", "error", "message", "annotation",
         "annotation_index", "arguments", "command_index", "partial_image_b64", "refusal"]),
        _values, max_size=6))


@settings(max_examples=examples(300), deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(_payloads, max_size=12))
def test_any_sequence_of_payloads_never_raises(payloads):
    acc = feed(payloads)
    json.dumps(acc.final())
    for slot in acc.slots():
        assert slot.state in ("open", "closed", "never closed")


_ITEM_TYPES = ["message", "reasoning", "function_call", "web_search_call", "mcp_call",
               "code_interpreter_call", "apply_patch_call", "shell_call", "x_call"]
_plausible_item = st.builds(
    lambda kind, iid, extra: {"type": kind, "id": iid, **extra},
    st.sampled_from(_ITEM_TYPES), st.sampled_from(["a", "b", "c"]),
    st.dictionaries(st.sampled_from(["status", "arguments", "content", "summary", "code",
                                     "operation", "action", "name", "call_id"]),
                    st.one_of(st.just(""), st.just([]), st.just({}), st.just("x"),
                              st.just({"diff": "", "type": "create_file"})), max_size=4))
_plausible_part = st.fixed_dictionaries(
    {"type": st.sampled_from(["output_text", "refusal", "reasoning_text", "summary_text", "y"])},
    optional={"text": st.sampled_from(["", "t"]), "annotations": st.just([]),
              "refusal": st.just("")})
_plausible = st.builds(
    lambda kind, fields: {"type": kind, **fields},
    st.sampled_from(EVENT_TYPES),
    st.fixed_dictionaries({}, optional={
        "output_index": st.integers(0, 2), "content_index": st.integers(0, 1),
        "summary_index": st.integers(0, 1), "item_id": st.sampled_from(["a", "b", "c"]),
        "delta": st.sampled_from(["", "x", '{"', "}"]), "text": st.sampled_from(["", "x"]),
        "arguments": st.sampled_from(["", "{}", '{"'], ), "item": _plausible_item,
        "part": _plausible_part, "sequence_number": st.integers(0, 6),
        "response": st.fixed_dictionaries({"id": st.sampled_from(["r1", "r2"])}, optional={
            "output": st.lists(_plausible_item, max_size=2), "status": st.just("completed")}),
        "annotation_index": st.integers(0, 2), "annotation": st.just({"type": "url_citation"}),
        "command_index": st.integers(0, 1), "command": st.just("ls"),
        "partial_image_b64": st.just("QQ=="), "code": st.just("x"), "diff": st.just("x"),
        "refusal": st.just("no")}))


@settings(max_examples=examples(400), deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(_plausible, max_size=16))
def test_any_plausible_stream_never_raises(payloads):
    acc = feed(payloads)
    json.dumps(acc.final())
    json.dumps([d.as_dict() for d in acc.diagnostics])
    for slot in acc.slots():
        assert slot.state in ("closed", "never closed")


@settings(max_examples=examples(100), deadline=None)
@given(st.permutations(list(range(len(HELLO)))))
def test_any_order_of_a_real_stream_never_raises(order):
    acc = feed([HELLO[i] for i in order], numbered=False)
    json.dumps(acc.final())


# -- linear time ---------------------------------------------------------------


def _long_stream(n: int) -> list[WireEvent]:
    deltas = [f"tok{i} " for i in range(n)]
    payloads = numbered([created(), *text_stream(deltas),
                         completed([message_item("completed", [text_part("".join(deltas))])])],
                        list(range(n + 7)))
    return [ev(p, i) for i, p in enumerate(payloads)]


def test_sixteen_thousand_deltas_are_at_least_three_times_faster_than_the_sdk():
    from openai import omit
    from openai._models import construct_type
    from openai.lib.streaming.responses._responses import ResponseStreamState
    from openai.types.responses import ResponseStreamEvent

    events = _long_stream(16_000)
    sdk_events = [construct_type(type_=ResponseStreamEvent, value=e.payload) for e in events]

    def ours() -> None:
        acc = ResponsesAccumulator()
        for e in events:
            acc.feed(e)
        acc.finish()
        acc.final()
        assert acc.diagnostics == []

    def sdk() -> None:
        state = ResponseStreamState(input_tools=omit, text_format=omit)
        for e in sdk_events:
            state.handle_event(e)

    def best(fn) -> float:
        times = []
        for _ in range(3):
            t = time.perf_counter()
            fn()
            times.append(time.perf_counter() - t)
        return min(times)

    assert best(ours) * 3 < best(sdk)


def test_feeding_is_linear_in_the_number_of_deltas():
    def cost(n: int) -> float:
        events = _long_stream(n)
        t = time.perf_counter()
        acc = ResponsesAccumulator()
        for e in events:
            acc.feed(e)
            if e.index % 1000 == 0:
                acc.slots()
        acc.final()
        return time.perf_counter() - t

    small = min(cost(4_000) for _ in range(3))
    large = min(cost(32_000) for _ in range(3))
    assert large < small * 8 * 3          # 8x the input: well under 3x the linear cost


# -- every Responses capture ---------------------------------------------------


def _responses(captures: list[Capture]) -> list[Capture]:
    return [c for c in captures if c.wire == WIRE]


PROJECT = _responses(corpus())
REFERENCE = _responses(reference_corpus())
ALL = PROJECT + REFERENCE
needs_reference = pytest.mark.skipif(
    not REFERENCE, reason=f"no reference captures at {reference_dir()} (set REFERENCE_CAPTURES)")


def run(capture: Capture, chunk_size: int | None = None) -> ResponsesAccumulator:
    events, sse_diags = capture.decode(chunk_size) if chunk_size else (
        capture.events, capture.sse_diagnostics)
    acc = ResponsesAccumulator()
    for event in parse_all(events):
        acc.feed(event)
    acc.finish(sse_diags)
    return acc


def terminal_of(capture: Capture) -> tuple[str, dict] | None:
    for event in reversed(parse_all(capture.events)):
        if event.type in ("response.completed", "response.incomplete", "response.failed"):
            return event.type, event.payload["response"]
    return None


def _without_sdk_fields(value):
    if isinstance(value, dict):
        return {k: _without_sdk_fields(v) for k, v in value.items()
                if k not in ("parsed", "parsed_arguments", "output_parsed")}
    if isinstance(value, list):
        return [_without_sdk_fields(v) for v in value]
    return value


def _ids(captures: list[Capture]) -> list[str]:
    return [c.key for c in captures]


@pytest.mark.parametrize("capture", ALL, ids=_ids(ALL))
def test_every_capture_accumulates_to_the_servers_own_response(capture):
    if capture.status >= 300:
        pytest.skip("an HTTP error before any event: no stream to accumulate")
    acc = run(capture)
    final = acc.final()
    json.dumps(final)
    acc.slots()
    events = parse_all(capture.events)
    if events and events[0].type != "response.created":
        # A resumed stream (starting_after) alone: its text lacks what the first stream
        # carried, so the .done events disagree with its deltas, and ours says so.
        assert {"event_before_start", "server_object_differs"} <= set(codes(acc))
    else:
        assert "server_object_differs" not in codes(acc), [str(d) for d in acc.diagnostics]
    terminal = terminal_of(capture)
    if terminal is None:
        assert not acc.complete
        return
    kind, server = terminal
    assert final["output"] == server["output"]
    for key in ("usage", "status", "error", "incomplete_details"):
        assert final.get(key) == server.get(key), key
    assert acc.complete == (kind != "response.failed" and acc.error is None)


@pytest.mark.parametrize("capture", ALL, ids=_ids(ALL))
def test_every_capture_matches_what_the_sdk_builds(capture):
    if capture.status >= 300:
        pytest.skip("an HTTP error before any event")
    if capture.events and parse_all(capture.events)[0].type != "response.created":
        pytest.skip("a resumed stream: the SDK helper refuses it (its sidecar says so)")
    outcome = run_sdk(capture)
    acc = run(capture)
    if outcome.final is None:          # the SDK raised: ours must not claim a clean end
        assert outcome.error is not None
        if "identity changed" in str(outcome.error):
            # The helper's own check (an item restated with another call_id): the stream
            # is whole; ours says what changed.
            assert "server_restated" in codes(acc)
            return
        assert not acc.complete or acc.terminal == "incomplete", outcome.raised
        return
    ours = acc.final()
    sdk = _without_sdk_fields(outcome.final.to_dict())
    assert list(differences(ours, sdk)) == []
    assert ours["output"] == sdk["output"]


@pytest.mark.parametrize("capture", ALL, ids=_ids(ALL))
def test_every_capture_gives_the_same_result_in_any_chunking(capture):
    if capture.status >= 300:
        pytest.skip("an HTTP error before any event")
    whole = run(capture)
    for size in (1, 7, 4096):
        again = run(capture, size)
        assert again.final() == whole.final()
        assert codes(again) == codes(whole)


@pytest.mark.parametrize("capture", ALL, ids=_ids(ALL))
def test_every_capture_cut_anywhere_keeps_what_arrived(capture):
    if capture.status >= 300:
        pytest.skip("an HTTP error before any event")
    events = parse_all(capture.events)
    step = max(1, len(events) // 25)
    for n in range(0, len(events), step):
        acc = ResponsesAccumulator()
        for event in events[:n]:
            acc.feed(event)
        acc.finish()
        if any(e.type in ("response.completed", "response.incomplete") for e in events[:n]):
            continue    # cut after the terminal (before OpenRouter's [DONE]): it had ended
        assert not acc.complete
        assert "no_terminal" in codes(acc) or acc.error is not None
        json.dumps(acc.final())
        for slot in acc.slots():
            assert slot.state in ("closed", "never closed")


@needs_reference
def test_the_legacy_stream_without_sequence_numbers_has_no_sequence_diagnostics():
    (capture,) = [c for c in REFERENCE if c.name == "text-legacy-no-sequence-number"]
    assert all("sequence_number" not in e.payload for e in parse_all(capture.events))
    acc = run(capture)
    assert acc.diagnostics == [] and acc.complete
    assert acc.final()["output"][0]["content"][0]["text"] == "The capital of France is Paris."


@needs_reference
def test_the_recorded_error_then_failed_stream():
    (capture,) = [c for c in REFERENCE if c.name == "error-insufficient-quota-failed"]
    acc = run(capture)
    assert codes(acc) == ["in_band_error"]
    diag = acc.diagnostics[0]
    assert diag.extra["shape"] == "nested" and diag.extra["error_code"] == "insufficient_quota"
    assert "exceeded your current quota" in diag.message
    final = acc.final()
    assert final["status"] == "failed" and final["error"]["code"] == "insufficient_quota"
    assert not acc.complete and acc.terminal == "failed"
    assert run_sdk(capture).error is not None


@needs_reference
def test_recorded_sequence_numbers_broken_on_purpose():
    (capture,) = [c for c in REFERENCE if c.name == "reasoning-function-call"]
    events = parse_all(capture.events)
    dropped = events[:6] + events[7:]
    repeated = events[:6] + [events[5]] + events[6:]
    swapped = events[:5] + [events[6], events[5]] + events[7:]
    for broken, expected in ((dropped, "sequence_gap"), (repeated, "sequence_duplicate"),
                             (swapped, "sequence_out_of_order")):
        acc = ResponsesAccumulator()
        for e in broken:
            acc.feed(e)
        acc.finish()
        assert expected in codes(acc)
        # the done events restate the arguments: the final object is still the server's
        assert acc.final()["output"][1]["arguments"] == '{"result":6666}'
    assert codes(acc).count("server_object_differs") == 1      # swapped deltas: said once


@needs_reference
def test_recorded_stream_resumed_mid_way():
    (capture,) = [c for c in REFERENCE if c.name == "web-search-annotations"]
    events = parse_all(capture.events)
    first_delta = next(i for i, e in enumerate(events) if e.type == "response.output_text.delta")
    acc = ResponsesAccumulator()
    for e in events[first_delta:]:
        acc.feed(e)
    acc.finish()
    assert codes(acc)[0] == "event_before_start"
    final = acc.final()
    server = terminal_of(capture)[1]
    # the message was assumed, then the done events and the terminal filled it in
    assert final["output"][-1]["content"] == server["output"][-1]["content"]
    assert acc.complete


@settings(max_examples=examples(300), deadline=None, derandomize=True, database=None,
          suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(_plausible, max_size=16))
def test_the_changes_of_any_plausible_stream_fold_into_its_slots_and_calls(payloads):
    from lesson_lib.accumulate.fold import Fold
    acc = ResponsesAccumulator()
    fold = Fold(WIRE)

    def same(where):
        slot = lambda s: (s.address, s.kind, s.label, s.content, s.state, s.name,  # noqa: E731
                          s.call_id, s.raw_input, s.input)
        call = lambda v: (v.name, v.call_id, v.state, v.raw, v.value)  # noqa: E731
        assert [slot(s) for s in fold.slots()] == [slot(s) for s in acc.slots()], where
        assert [call(v) for v in fold.tool_calls()] == [call(v) for v in acc.tool_calls()], where

    for i, p in enumerate(payloads):
        fold.add(acc.feed(ev(p, i)))
        same(f"after event {i}")
    fold.add(acc.finish())
    same("after finish")


# -- the server restating what the stream said --------------------------------------


def _restating_stream(terminal_id: str, fingerprint: str) -> list[dict]:
    item = {"type": "message", "id": "msg_stream", "status": "in_progress", "role": "assistant",
            "content": []}
    done = {**item, "status": "completed", "fingerprint": "fp_a",
            "content": [{"type": "output_text", "text": "Hi", "annotations": []}]}
    resp = {"id": "resp_1", "object": "response", "status": "in_progress", "model": "m",
            "output": []}
    return [
        {"type": "response.created", "response": resp, "sequence_number": 0},
        {"type": "response.output_item.added", "output_index": 0, "item": item,
         "sequence_number": 1},
        {"type": "response.content_part.added", "output_index": 0, "content_index": 0,
         "item_id": "msg_stream", "part": {"type": "output_text", "text": "",
                                           "annotations": []}, "sequence_number": 2},
        {"type": "response.output_text.delta", "output_index": 0, "content_index": 0,
         "item_id": "msg_stream", "delta": "Hi", "sequence_number": 3},
        {"type": "response.output_item.done", "output_index": 0, "item": done,
         "sequence_number": 4},
        {"type": "response.completed", "sequence_number": 5, "response": {
            **resp, "status": "completed",
            "output": [{**done, "id": terminal_id, "fingerprint": fingerprint}]}},
        "[DONE]"]


def _feed_all(payloads: list) -> ResponsesAccumulator:
    acc = ResponsesAccumulator()
    for i, p in enumerate(payloads):
        data = p if isinstance(p, str) else json.dumps(p)
        acc.feed(parse_payload(ServerSentEvent(None if isinstance(p, str) else p["type"],
                                               data), i))
    acc.finish()
    return acc


def test_an_id_and_a_fingerprint_restated_by_the_terminal_are_followed_with_a_warning():
    acc = _feed_all(_restating_stream("msg_server", "fp_b"))
    assert acc.complete
    final = acc.final()["output"][0]
    assert (final["id"], final["fingerprint"]) == ("msg_server", "fp_b")
    restated = [d for d in acc.diagnostics if d.code == "server_restated"]
    assert sorted(d.extra["path"] for d in restated) == ["output[0].fingerprint",
                                                         "output[0].id"]
    assert all(d.severity == "warning" for d in restated)
    assert "server_object_differs" not in codes(acc)
    assert acc.items.by_id["msg_stream"].index == 0      # the stream's id still addresses it
    # The [DONE] after the terminal passes through: no warning, no error.
    (marker,) = [d for d in acc.diagnostics if d.code == "marker_after_terminal"]
    assert marker.severity == "info" and acc.passed_through


def test_a_terminal_that_restates_nothing_gives_no_note():
    acc = _feed_all(_restating_stream("msg_stream", "fp_a"))
    assert acc.complete and "server_restated" not in codes(acc)
