"""The Gemini Interactions accumulator against google-genai, offline, on the five reference
recordings, and on streams that break the wire's order.

google-genai parses each recording through its own streaming decoder (its
client over an HTTP transport that answers with the bytes, as
`lesson_lib.capture.replay` does for the other wires). Its ``interaction.completed``
carries the interaction without the steps the stream said: the accumulator's
final object equals that interaction, plus the steps the stream built, each
equal to what the SDK's own step events say, and the SDK reads it back as an
``Interaction`` without losing a field.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from examples import examples
from hypothesis import given, settings
from hypothesis import strategies as st

from lesson_lib.accumulate import accumulator_for
from lesson_lib.accumulate import changes as ch
from lesson_lib.accumulate.fold import Fold
from lesson_lib.accumulate.gemini_interactions import GeminiInteractionsAccumulator
from lesson_lib.capture import replay
from lesson_lib.capture.captures import from_bytes, reference_dir
from lesson_lib.sse.decoder import SSEDecoder
from lesson_lib.wires import gemini_interactions as gi
from lesson_lib.wires.wire_events import parse_all

pytest.importorskip("google.genai._gaos.types.interactions")
from google.genai._gaos.types.interactions import interaction as sdk_interaction  # noqa: E402
from google.genai._gaos.types.interactions import step as sdk_step  # noqa: E402

FOLDER = reference_dir() / gi.WIRE
RECORDINGS = sorted(FOLDER.glob("*.sse")) if FOLDER.is_dir() else []
needs_recordings = pytest.mark.skipif(not RECORDINGS,
                                      reason=f"reference captures not present ({FOLDER})")
IDS = [p.stem for p in RECORDINGS]


def run(body: bytes, chunk: int | None = None):
    """Decode `body` (in `chunk`-byte pieces), feed every event; the accumulator and all the
    changes it returned."""
    decoder = SSEDecoder()
    events = []
    pieces = [body] if not chunk else [body[i:i + chunk] for i in range(0, len(body), chunk)]
    for piece in pieces:
        events.extend(decoder.feed(piece))
    events.extend(decoder.finish())
    acc = accumulator_for(gi.WIRE)
    changes = []
    for event in parse_all(events):
        changes.extend(acc.feed(event))
    changes.extend(acc.finish(decoder.diagnostics))
    return acc, changes


def sdk_events(body: bytes) -> list:
    """What google-genai yields for `body`, read offline by its own streaming decoder."""
    client = replay.gemini_client(from_bytes(body, sidecar={"wire": gi.WIRE}))
    return list(client.interactions.create(model="gemini-2.5-flash", input="Hi", stream=True))


def dump(model) -> dict:
    return model.model_dump(mode="json", exclude_none=True)


# The fields google-genai derives for an ``Interaction`` from its steps (the last output).
SDKS_OWN = ("output_text", "output_image", "output_audio", "output_video", "continuation_ids")


def without_sdks_own(interaction: dict) -> dict:
    return {k: v for k, v in interaction.items() if k not in SDKS_OWN}


def sse(*payloads: dict) -> bytes:
    return b"".join(f"event: {p.get('event_type')}\ndata: {json.dumps(p)}\n\n".encode()
                    for p in payloads)


def payloads_of(path: Path) -> list[dict]:
    decoder = SSEDecoder()
    return [ev.payload for ev in parse_all(decoder.feed(path.read_bytes()) + decoder.finish())]


def codes(acc) -> list[str]:
    return [d.code for d in acc.diagnostics]


# -- the five recordings, against google-genai ---------------------------------------------

@needs_recordings
@pytest.mark.parametrize("path", RECORDINGS, ids=IDS)
def test_the_final_object_is_the_interaction_the_sdk_reports_at_completed(path):
    body = path.read_bytes()
    acc, _ = run(body)
    events = sdk_events(body)
    completed = [e for e in events if getattr(e, "event_type", None) in gi.TERMINALS]
    assert len(completed) == 1
    final = acc.final()
    reported = dump(completed[0].interaction)
    assert "steps" not in reported            # the SDK's event leaves the steps out
    assert {k: v for k, v in final.items() if k != "steps"} == reported
    assert acc.complete and not acc.diagnostics


@needs_recordings
@pytest.mark.parametrize("path", RECORDINGS, ids=IDS)
def test_each_step_is_what_the_sdks_step_events_say(path):
    body = path.read_bytes()
    check_steps(run(body)[0].final()["steps"], sdk_events(body))


def check_steps(steps: list[dict], events: list) -> None:
    """Each step is what google-genai's own step events (`events`) say of it: its start's
    fields, its text, its signature, its arguments."""
    starts, deltas = {}, {}
    for event in events:
        if isinstance(event, str):      # the data of an event cut short, handed over as text
            continue
        if event.event_type == gi.STEP_START:
            starts[event.index] = event.step
        elif event.event_type == gi.STEP_DELTA:
            deltas.setdefault(event.index, []).append(event.delta)
    assert sorted(starts) == list(range(len(steps)))
    for index, ours in enumerate(steps):
        start = dump(starts[index])
        said = deltas.get(index, [])
        assert ours["type"] == start["type"]
        for key, value in start.items():
            if key != gi.ARGUMENTS_KEY:
                assert ours[key] == value, key      # (a function call's "signature": "" too)
        texts = [d.text for d in said if d.type == gi.TEXT_DELTA]
        if texts:
            assert [c["text"] for c in ours[gi.CONTENT_FIELD]] == ["".join(texts)]
        signatures = [d.signature for d in said if d.type == gi.THOUGHT_SIGNATURE_DELTA]
        if signatures:
            assert ours[gi.SIGNATURE_KEY] == signatures[-1]
        arguments = [d.arguments for d in said if d.type == gi.ARGUMENTS_DELTA]
        if ours["type"] == gi.FUNCTION_CALL_STEP:
            assert ours[gi.ARGUMENTS_KEY] == json.loads("".join(arguments))
            assert arguments and ours[gi.ARGUMENTS_KEY] != start[gi.ARGUMENTS_KEY]


@needs_recordings
@pytest.mark.parametrize("path", RECORDINGS, ids=IDS)
def test_the_sdk_reads_the_final_object_back_as_an_interaction_losing_nothing(path):
    final = run(path.read_bytes())[0].final()
    read = sdk_interaction.Interaction.model_validate(final)
    assert read.steps and not any(getattr(s, "is_unknown", False) for s in read.steps)
    assert without_sdks_own(dump(read)) == final
    outputs = [s for s in final["steps"] if s["type"] == gi.MODEL_OUTPUT_STEP]
    assert read.output_text == (outputs[-1]["content"][0]["text"] if outputs else "")


@needs_recordings
def test_the_recordings_end_as_their_status_says():
    ends = {p.stem: gi.finish_reason(run(p.read_bytes())[0].status()) for p in RECORDINGS}
    assert ends["tool-call-step1"] == "tool_calls"
    assert {e for name, e in ends.items() if name != "tool-call-step1"} == {"stop"}


@needs_recordings
@pytest.mark.parametrize("path", RECORDINGS, ids=IDS)
def test_byte_by_byte_and_whole_give_the_same_object_changes_and_diagnostics(path):
    body = path.read_bytes()
    whole, whole_changes = run(body)
    bytewise, bytewise_changes = run(body, 1)
    assert bytewise.final() == whole.final()
    assert bytewise.complete == whole.complete
    assert codes(bytewise) == codes(whole)
    assert bytewise_changes == whole_changes


@needs_recordings
@pytest.mark.parametrize("path", RECORDINGS, ids=IDS)
def test_folding_the_changes_gives_the_slots_and_calls_at_every_index(path):
    decoder = SSEDecoder()
    events = parse_all(decoder.feed(path.read_bytes()) + decoder.finish())
    acc, fold = GeminiInteractionsAccumulator(), Fold(gi.WIRE)

    def same():
        slot = lambda s: (s.address, s.kind, s.label, s.content, s.state, s.name,  # noqa: E731
                          s.call_id, s.raw_input, s.input)
        call = lambda v: (v.name, v.call_id, v.state, v.raw, v.value)  # noqa: E731
        assert [slot(s) for s in fold.slots()] == [slot(s) for s in acc.slots()]
        assert [call(v) for v in fold.tool_calls()] == [call(v) for v in acc.tool_calls()]

    for event in events:
        fold.add(acc.feed(event))
        same()
    end = acc.finish()
    fold.add(end)
    same()
    assert isinstance(end[-1], ch.StreamEnded) and end[-1].properly


@needs_recordings
@settings(max_examples=examples(150), deadline=None)
@given(data=st.data())
def test_a_body_cut_anywhere_never_raises_and_never_claims_complete(data):
    path = data.draw(st.sampled_from(RECORDINGS))
    body = path.read_bytes()
    decoder = SSEDecoder()
    terminal_end = [ev.sse.end for ev in parse_all(decoder.feed(body) + decoder.finish())
                    if ev.type in gi.TERMINALS][-1]
    cut = data.draw(st.integers(0, len(body)))
    acc, changes = run(body[:cut], data.draw(st.sampled_from([None, 1, 7, 64])))
    json.dumps(acc.final())
    assert acc.complete is (cut >= terminal_end)
    assert changes[-1].properly is acc.complete
    if not acc.complete:
        assert "no_terminal" in codes(acc)
        open_steps = [s for s in acc.slots() if s.state == "never closed"]
        assert codes(acc).count("block_never_stopped") == len(open_steps)


@needs_recordings
def test_a_call_cut_inside_its_arguments_keeps_the_partial_value_and_says_so():
    payloads = payloads_of(FOLDER / "tool-call-step1.sse")
    at = next(i for i, p in enumerate(payloads) if p.get("event_type") == gi.STEP_START
              and p["step"]["type"] == gi.FUNCTION_CALL_STEP)
    index = payloads[at]["index"]
    part = {"index": index, "delta": {"type": gi.ARGUMENTS_DELTA,
                                      "arguments": '{"location":"San Fr'},
            "event_type": gi.STEP_DELTA}
    acc, _ = run(sse(*payloads[:at + 1], part))
    assert not acc.complete
    assert {"cut_tool_input", "block_never_stopped", "no_terminal"} <= set(codes(acc))
    (call,) = acc.tool_calls()
    assert call.raw == '{"location":"San Fr' and call.value == {"location": "San Fr"}
    assert acc.final()["steps"][-1][gi.ARGUMENTS_KEY] == {"location": "San Fr"}


# -- streams that break the order, and what the recordings do not show ------------------------

CREATED = {"interaction": {"id": "i1", "status": "in_progress", "model": "gemini-2.5-flash",
                           "object": "interaction"}, "event_type": gi.INTERACTION_CREATED}
USAGE = {"total_tokens": 5, "total_input_tokens": 2, "total_output_tokens": 3}


def completed(status="completed", **extra) -> dict:
    return {"interaction": {"id": "i1", "status": status, "usage": USAGE, **extra},
            "event_type": gi.INTERACTION_COMPLETED}


def start(index, **step) -> dict:
    return {"index": index, "step": step, "event_type": gi.STEP_START}


def delta(index, **d) -> dict:
    return {"index": index, "delta": d, "event_type": gi.STEP_DELTA}


def stop(index) -> dict:
    return {"index": index, "event_type": gi.STEP_STOP}


def text_step(index, *texts) -> list[dict]:
    return [start(index, type="model_output"),
            *(delta(index, type="text", text=t) for t in texts), stop(index)]


def test_a_delta_for_a_step_never_started_is_kept_in_its_diagnostic():
    acc, _ = run(sse(CREATED, delta(0, type="text", text="lost"), completed()))
    (diag,) = acc.diagnostics
    assert diag.code == "unknown_slot" and diag.extra["orphan_text"] == "lost"
    assert acc.final()["steps"] == []


def test_a_delta_after_its_stop_and_a_second_stop_or_start_are_errors():
    acc, _ = run(sse(CREATED, *text_step(0, "a"), delta(0, type="text", text="b"), stop(0),
                     start(0, type="thought"), completed()))
    assert codes(acc) == ["delta_after_stop", "duplicate_stop", "duplicate_start"]
    assert acc.final()["steps"] == [{"type": "model_output",
                                     "content": [{"type": "text", "text": "a"}]}]


def test_events_before_created_and_after_completed_are_errors_but_kept():
    acc, _ = run(sse(*text_step(0, "a"), CREATED, completed(), *text_step(1, "b")))
    assert codes(acc) == ["event_before_created"] + ["event_after_terminal"] * 3
    assert [s["content"][0]["text"] for s in acc.final()["steps"]] == ["a", "b"]


def test_unknown_events_deltas_and_steps_are_warnings_and_kept_as_raw_data():
    acc, changes = run(sse(CREATED, {"event_type": "interaction.pondering", "n": 1},
                           start(0, type="hologram", beam=1), delta(0, type="sparkle"),
                           stop(0), completed()))
    assert codes(acc) == ["unknown_event", "unknown_step", "unknown_delta"]
    assert all(d.severity == "warning" for d in acc.diagnostics)
    assert acc.complete and acc.final()["steps"] == [{"type": "hologram", "beam": 1}]
    assert any(isinstance(c, ch.UnknownEvent) for c in changes)


def test_a_delta_that_does_not_fit_its_step_is_not_applied():
    acc, _ = run(sse(CREATED, start(0, type="thought"), delta(0, type="text", text="x"),
                     delta(0, type="arguments_delta", arguments="{}"), stop(0), completed()))
    assert codes(acc) == ["delta_mismatch", "delta_mismatch"]
    assert acc.final()["steps"] == [{"type": "thought"}]


def test_an_error_event_leaves_the_interaction_incomplete():
    error = {"error": {"code": "UNAVAILABLE", "message": "overloaded"},
             "event_type": gi.ERROR}
    acc, changes = run(sse(CREATED, *text_step(0, "par"), error))
    assert not acc.complete and codes(acc) == ["in_band_error"]
    assert changes[-1].cause == "in_band_error"
    (err,) = [c for c in changes if isinstance(c, ch.InBandError)]
    assert err.error_type == "UNAVAILABLE"
    assert acc.final()["steps"][0]["content"][0]["text"] == "par"


def test_a_failed_interaction_is_never_complete():
    acc, changes = run(sse(CREATED, completed("failed", errors=[{"code": "INTERNAL",
                                                                   "message": "boom"}])))
    assert not acc.complete and codes(acc) == ["interaction_failed"]
    assert changes[-1].cause == "in_band_error"
    assert gi.finish_reason(acc.status()) == "error"


def test_a_stream_cut_before_completed_says_so():
    acc, changes = run(sse(CREATED, start(0, type="model_output"),
                           delta(0, type="text", text="half")))
    assert not acc.complete and codes(acc) == ["block_never_stopped", "no_terminal"]
    assert changes[-1].cause == "cut"


def test_the_payloads_event_type_wins_over_the_event_line():
    body = sse(CREATED, start(0, type="model_output")) + (
        b"event: step.stop\ndata: " + json.dumps(delta(0, type="text", text="x")).encode()
        + b"\n\n") + sse(stop(0), completed())
    acc, _ = run(body)
    assert codes(acc) == ["event_type_mismatch"]
    assert acc.final()["steps"][0]["content"] == [{"type": "text", "text": "x"}]


def test_status_updates_and_a_stops_usage_reach_the_interaction():
    update = {"interaction_id": "i1", "status": "requires_action", "usage": USAGE,
              "event_type": gi.INTERACTION_STATUS_UPDATE}
    acc, _ = run(sse(CREATED, update, start(0, type="thought"),
                     dict(stop(0), step_usage={"total_thought_tokens": 4})))
    assert acc.final()["status"] == "requires_action" and acc.final()["usage"] == USAGE
    assert acc.step_usage == {0: {"total_thought_tokens": 4}}


def test_what_the_recordings_do_not_show_the_sdk_reads_back_the_same():
    """Annotations, thought summaries, media, a server tool's whole steps, a step the
    completed interaction states: the final object is an SDK ``Interaction``, unchanged
    by a round trip through it."""
    citation = {"type": "url_citation", "url": "https://example.com", "start_index": 0,
                "end_index": 4}
    search = {"type": "google_search_call", "id": "s1", "arguments": {"queries": ["q"]}}
    found = {"type": "google_search_result", "call_id": "s1",
             "result": [{"title": "t", "url": "https://example.com"}]}
    stated = {"type": "model_output", "content": [{"type": "text", "text": "stated"}]}
    acc, _ = run(sse(
        CREATED,
        start(0, type="thought"),
        delta(0, type="thought_summary", content={"type": "text", "text": "Think"}),
        delta(0, type="thought_summary", content={"type": "text", "text": "ing."}),
        delta(0, type="thought_signature", signature="c2ln"), stop(0),
        start(1, **search), stop(1),
        start(2, type="google_search_result", call_id="s1"),
        delta(2, **{k: v for k, v in found.items() if k != "call_id"}), stop(2),
        start(3, type="model_output"), delta(3, type="text", text="Pa"),
        delta(3, type="text", text="ris"), delta(3, type="text_annotation_delta",
                                                 annotations=[citation]),
        delta(3, type="image", mime_type="image/png", data="AAAA"),
        delta(3, type="text", text="!"), stop(3),
        completed(steps=[{"type": "thought"}, search, found, {"type": "model_output"},
                         stated])))
    final = acc.final()
    assert codes(acc) == ["step_restated", "step_restated"]   # the thought, the output
    assert final["steps"] == [
        {"type": "thought", "signature": "c2ln",
         "summary": [{"type": "text", "text": "Thinking."}]},
        search, found,
        {"type": "model_output", "content": [
            {"type": "text", "text": "Paris", "annotations": [citation]},
            {"type": "image", "mime_type": "image/png", "data": "AAAA"},
            {"type": "text", "text": "!"}]},
        stated]
    assert [s.from_server for s in acc.slots()] == [False, False, True, False, False]
    read = sdk_interaction.Interaction.model_validate(final)
    assert not any(isinstance(s, sdk_step.UnknownStep) for s in read.steps)
    assert without_sdks_own(dump(read)) == final


def test_a_start_that_states_its_content_is_continued_by_the_deltas_and_nothing_is_lost():
    acc, _ = run(sse(CREATED,
                     start(0, type="model_output", content=[{"type": "text", "text": "Bon"}]),
                     delta(0, type="text", text="jour"), stop(0),
                     start(1, type="model_output", content="odd"), stop(1),
                     start(2, type="thought", summary=[{"type": "text", "text": "Hm"}]),
                     delta(2, type="thought_summary", content={"type": "text", "text": "m"}),
                     stop(2), completed()))
    assert not acc.diagnostics
    assert acc.final()["steps"] == [
        {"type": "model_output", "content": [{"type": "text", "text": "Bonjour"}]},
        {"type": "model_output", "content": "odd"},
        {"type": "thought", "summary": [{"type": "text", "text": "Hmm"}]}]
    assert [s.content for s in acc.slots()] == ["Bonjour", "", "Hmm"]


@needs_recordings
def test_a_done_line_the_sdk_stops_at_changes_nothing_and_ends_nothing():
    body = (FOLDER / "basic.sse").read_bytes()
    plain, _ = run(body)
    done, _ = run(body + b"data: [DONE]\n\n")
    assert done.final() == plain.final() and done.complete and not done.diagnostics
    assert [type(e).__name__ for e in sdk_events(body + b"data: [DONE]\n\n")][-1] \
        == "InteractionCompletedEvent"
    head = body[:body.index(b"event: interaction.completed")]
    cut, _ = run(head + b"data: [DONE]\n\n")
    assert not cut.complete and codes(cut) == ["no_terminal"]
