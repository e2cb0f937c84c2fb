"""The Gemini accumulator: records in, one ``GenerateContentResponse`` out, changes between.

Held to independent oracles: what google-genai yields for the same bytes
(assembled here by a reader of the SDK's objects that sets argument paths
directly, not through JSON text), lesson 3's parser for settled paths, and the
fold contract every accumulator keeps.
"""

from __future__ import annotations

import copy
import json

import pytest
import test_accumulate_fold as fold_contract
from examples import examples
from hypothesis import given, settings
from hypothesis import strategies as st

from lesson_lib.accumulate import accumulate, accumulator_for
from lesson_lib.accumulate import changes as ch
from lesson_lib.accumulate.path_arguments import PathArguments, PathError, parse_path
from lesson_lib.capture.captures import corpus, from_bytes, reference_corpus
from lesson_lib.capture.replay import run_sdk
from lesson_lib.partial_json import PartialJSON
from lesson_lib.turn.adapters.gemini_sdk import sdk_record
from lesson_lib.wires.wire_events import parse_all

WIRE = "google-gemini"
RECORDINGS = [c for c in reference_corpus() if c.wire == WIRE]
CAPTURES = [c for c in RECORDINGS + corpus() if c.wire == WIRE and c.status < 300]
IDS = [c.key for c in CAPTURES]
# Fields the SDK's types do not know, so its objects never carry them.
SDK_UNSEEN = {"createTime"}
SDK_UNSEEN_USAGE = {"serviceTier"}


def gemini(body: bytes):
    return from_bytes(body, sidecar={"wire": WIRE})


def rec(*parts, finish=None, index=None, **extra) -> bytes:
    cand: dict = {"content": {"parts": list(parts), "role": "model"}}
    if finish:
        cand["finishReason"] = finish
    if index is not None:
        cand["index"] = index
    return b"data: " + json.dumps({"candidates": [cand], **extra}).encode() + b"\r\n\r\n"


def by_name(name):
    found = [c for c in RECORDINGS if c.name == name]
    if not found:
        pytest.skip("reference captures not present")
    return found[0]


# -- the recordings' final objects -------------------------------------------------------------


def test_consecutive_text_merges_per_kind_and_the_signature_stays():
    final = accumulate(by_name("thinking-thought-parts")).final
    parts = final["candidates"][0]["content"]["parts"]
    assert [("thought" in p, "thoughtSignature" in p) for p in parts] == [(True, False),
                                                                        (False, True)]
    assert parts[0]["text"].startswith("**Clarifying User Goals**")
    assert parts[0]["text"].count("**") == 8           # four thought records, one text
    assert parts[1]["text"].endswith("Always assume a driver might not see you.")
    assert final["candidates"][0]["finishReason"] == "STOP"


def test_a_signature_on_an_empty_last_part_joins_the_text_it_continues():
    final = accumulate(by_name("file-search-toolcall-toolresponse")).final
    parts = final["candidates"][0]["content"]["parts"]
    assert [next(iter(set(p) - {"thoughtSignature"})) for p in parts] == [
        "toolCall", "toolResponse", "text"]
    assert parts[2]["thoughtSignature"].startswith("EusBCugB")
    grounding = final["candidates"][0]["groundingMetadata"]
    assert grounding["groundingChunks"]                    # the last, non-empty one


def test_streamed_partial_args_become_whole_args():
    final = accumulate(by_name("parallel-calls-partial-args")).final
    calls = [p["functionCall"] for p in final["candidates"][0]["content"]["parts"]
             if "functionCall" in p]
    assert calls == [{"name": "read_theme"}, {"name": "read_screen", "args": {"id": "A"}},
                     {"name": "read_screen", "args": {"id": "B"}},
                     {"name": "read_screen", "args": {"id": "C"}}]
    first = accumulate(by_name("function-call-partial-args")).final
    part = first["candidates"][0]["content"]["parts"][0]
    assert part["functionCall"] == {"name": "getWeather", "args": {"location": "Boston"}}
    assert part["thoughtSignature"].startswith("CiMBjz1r")


def test_code_execution_keeps_every_part_and_the_last_finish():
    final = accumulate(by_name("code-execution-stop-mid-stream")).final
    cand = final["candidates"][0]
    kinds = [next(k for k in p if k != "thought") for p in cand["content"]["parts"]]
    assert kinds == ["executableCode", "codeExecutionResult", "executableCode",
                     "codeExecutionResult", "text"]
    assert cand["content"]["parts"][-1]["text"] == "The result is -428,330,955.97745."
    assert cand["finishReason"] == "STOP"
    assert final["usageMetadata"]["candidatesTokenCount"] == 132


@pytest.mark.parametrize("capture", CAPTURES, ids=IDS)
def test_the_final_object_does_not_depend_on_the_chunking(capture):
    whole = accumulate(capture)
    for size in (1, 2, 3, 7, 64, 1000):
        again = accumulate(capture, chunk_size=size)
        assert again.final == whole.final, size
        assert again.complete == whole.complete
        assert [d.code for d in again.diagnostics] == [d.code for d in whole.diagnostics]


@pytest.mark.parametrize("capture", CAPTURES, ids=IDS)
def test_folding_the_changes_gives_the_slots_and_calls(capture):
    fold_contract.test_folding_the_changes_gives_the_slots_and_calls_at_every_index(capture)
    fold_contract.test_every_note_is_a_change(capture)


# -- the final object equals what the SDK's objects assemble to -----------------------------------


def _set_path(args: dict, path: str, value, append: bool) -> None:
    steps = parse_path(path)
    holder = args
    for step, nxt in zip(steps, steps[1:], strict=False):
        if isinstance(holder, list):
            while len(holder) <= step:
                holder.append(None)
            if holder[step] is None:
                holder[step] = [] if isinstance(nxt, int) else {}
            holder = holder[step]
        else:
            holder = holder.setdefault(step, [] if isinstance(nxt, int) else {})
    last = steps[-1]
    if isinstance(holder, list):
        while len(holder) <= last:
            holder.append(None)
        holder[last] = (holder[last] or "") + value if append else value
    else:
        holder[last] = (holder.get(last) or "") + value if append else value


def assemble_from_sdk(responses) -> dict:
    """A ``GenerateContentResponse`` built from the SDK's objects (first candidate), by
    setting each streamed argument at its path: an oracle that shares no code with the
    accumulator's JSON-text route."""
    parts: list[dict] = []
    streaming: dict | None = None
    finish = usage = None
    head: dict = {}
    for response in responses:
        data = sdk_record(response)
        head.update({k: v for k, v in data.items() if k not in ("candidates", "usageMetadata")})
        usage = data.get("usageMetadata", usage)
        for cand in data.get("candidates", [])[:1]:
            for part in cand.get("content", {}).get("parts", []):
                call = part.get("functionCall")
                if call is not None and streaming is not None and "name" not in call:
                    for entry in call.get("partialArgs", []):
                        key = next(k for k in entry if k.endswith("Value"))
                        _set_path(streaming["functionCall"]["args"], entry["jsonPath"],
                                  None if key == "nullValue" else entry[key],
                                  append=key == "stringValue")
                    if part.get("thoughtSignature"):
                        streaming["thoughtSignature"] = part["thoughtSignature"]
                    if not call.get("willContinue"):
                        parts.append(streaming)
                        streaming = None
                elif call is not None and call.get("willContinue"):
                    streaming = {**part, "functionCall": {"name": call["name"], "args": {}}}
                elif "text" in part:
                    last = parts[-1] if parts else None
                    same = (last is not None and "text" in last
                            and bool(last.get("thought")) == bool(part.get("thought"))
                            and not (part.get("thoughtSignature") and last.get("thoughtSignature")))
                    if same:
                        last["text"] += part["text"]
                        if part.get("thoughtSignature"):
                            last["thoughtSignature"] = part["thoughtSignature"]
                    elif part["text"] or len(part) > 1:
                        parts.append(dict(part))
                else:
                    parts.append(copy.deepcopy(part))
            finish = cand.get("finishReason", finish)
    return {"parts": parts, "finishReason": finish, "usageMetadata": usage, **head}


@pytest.mark.parametrize("capture", CAPTURES, ids=IDS)
def test_final_equals_what_the_sdks_objects_assemble_to(capture):
    check_against_the_sdks_objects(capture, accumulate(capture))


def check_against_the_sdks_objects(capture, ours) -> None:
    """Our final object equals what google-genai's objects for the same bytes assemble to
    (`assemble_from_sdk`), but for what its types drop; where the SDK raises (a record cut
    in the middle, an error record), ours is not complete either."""
    sdk = run_sdk(capture)
    ours = copy.deepcopy(ours)
    if sdk.error is not None:
        # The SDK raises on a record cut in the middle (or an error record): ours is
        # not complete there either.
        assert not ours.complete
        return
    expected = assemble_from_sdk(sdk.events)
    cand = ours.final["candidates"][0]
    for part in cand["content"]["parts"]:
        part["functionCall"] = {k: v for k, v in part.get("functionCall", {}).items()
                                if k != "willContinue"} or part.pop("functionCall", None)
        if part.get("functionCall") is None:
            part.pop("functionCall", None)
    assert cand["content"]["parts"] == expected["parts"]
    assert cand.get("finishReason") == expected["finishReason"]
    usage = {k: v for k, v in (ours.final.get("usageMetadata") or {}).items()
             if k not in SDK_UNSEEN_USAGE}
    assert usage == (expected["usageMetadata"] or {})
    for key in ("modelVersion", "responseId"):
        assert ours.final.get(key) == expected.get(key)
    assert not SDK_UNSEEN & set(expected)


def test_the_sdk_cannot_see_what_its_types_do_not_know():
    cap = by_name("file-search-toolcall-toolresponse")
    records = [sdk_record(r) for r in run_sdk(cap).events]
    raw = [e.payload for e in parse_all(cap.events)]
    assert all("serviceTier" in r["usageMetadata"] for r in raw)
    assert not any("serviceTier" in r["usageMetadata"] for r in records)
    vertex = by_name("function-call-partial-args")
    assert all("createTime" in e.payload for e in parse_all(vertex.events))
    assert not any("createTime" in sdk_record(r) for r in run_sdk(vertex).events)


# -- partialArgs: the vendor's settled paths are lesson 3's -------------------------------------

_scalars = st.one_of(st.text(max_size=12), st.integers(-10**6, 10**6), st.booleans(), st.none(),
                     st.floats(allow_nan=False, allow_infinity=False, width=32))
_values = st.recursive(_scalars, lambda inner: st.one_of(
    st.lists(inner, min_size=1, max_size=3),
    st.dictionaries(st.text(min_size=1, max_size=6), inner, min_size=1, max_size=3)),
    max_leaves=12)
_arguments = st.dictionaries(st.text(min_size=1, max_size=6), _values, max_size=4)


def _json_path(path: tuple) -> str:
    return "$" + "".join(f"[{s}]" if isinstance(s, int) else f"[{json.dumps(s)}]"
                         for s in path)


def partial_args(value, cuts, path=()):
    """The ``partialArgs`` entries a server could send for `value`: strings in pieces
    (cut at `cuts`) with ``willContinue`` and an empty terminator, other scalars whole."""
    if isinstance(value, dict):
        for key, inner in value.items():
            yield from partial_args(inner, cuts, (*path, key))
    elif isinstance(value, list):
        for i, inner in enumerate(value):
            yield from partial_args(inner, cuts, (*path, i))
    elif isinstance(value, str):
        at = sorted({c % (len(value) + 1) for c in cuts})
        pieces = [value[a:b] for a, b in zip([0, *at], [*at, len(value)], strict=True)]
        for piece in pieces:
            yield {"jsonPath": _json_path(path), "stringValue": piece, "willContinue": True}
        yield {"jsonPath": _json_path(path), "stringValue": ""}
    elif value is None:
        yield {"jsonPath": _json_path(path), "nullValue": None}
    elif isinstance(value, bool):
        yield {"jsonPath": _json_path(path), "boolValue": value}
    else:
        yield {"jsonPath": _json_path(path), "numberValue": value}


def _has_empty_container(value) -> bool:
    if isinstance(value, dict | list):
        items = value.values() if isinstance(value, dict) else value
        return not value or any(_has_empty_container(v) for v in items)
    return False


@settings(max_examples=examples(150), deadline=None)
@given(_arguments, st.lists(st.integers(0, 40), max_size=3))
def test_the_vendors_settled_paths_are_lesson_3s(value, cuts):
    args = PathArguments()
    text = ""
    parser = PartialJSON()
    for entry in partial_args(value, cuts):
        piece = args.add(entry)
        text += piece
        parser.feed(piece)
        # What lesson 3 settled is settled for the vendor too (the vendor says a number
        # is whole as it arrives; the parser waits for the delimiter after it).
        assert set(parser.settled) <= set(args.settled)
    closing = args.close()
    text += closing
    if not value:
        assert text == ""              # a tool with no arguments: no text at all
        return
    parser.feed(closing)
    parser.finish()
    assert json.loads(text) == value
    assert set(parser.settled) == set(args.settled)
    whole = PartialJSON()
    whole.feed(json.dumps(value, ensure_ascii=False, separators=(",", ":")))
    whole.finish()
    assert set(args.settled) == set(whole.settled)
    assert len(args.settled) == len(set(args.settled))      # each path settles once
    assert text == json.dumps(value, ensure_ascii=False, separators=(",", ":"))


@pytest.mark.parametrize("capture", CAPTURES, ids=IDS)
def test_every_streamed_call_settles_what_lesson_3_settles(capture):
    acc = accumulator_for(WIRE)
    for event in parse_all(capture.events):
        acc.feed(event)
    acc.finish(capture.sse_diagnostics)
    for cand in acc.candidates.values():
        for part in cand.parts:
            if part.args is None or part.call.state != "complete":
                continue
            whole = PartialJSON()
            whole.feed(json.dumps(part.call.value))
            whole.finish()
            assert set(part.args.settled) == set(whole.settled)


def test_paths_that_go_back_or_skip_are_refused_and_the_text_is_unchanged():
    args = PathArguments()
    assert args.add({"jsonPath": "$.a", "stringValue": "x"}) == '{"a":"x"'
    assert args.add({"jsonPath": "$.b[0]", "numberValue": 1}) == ',"b":[1'
    for bad, why in [({"jsonPath": "$.a", "stringValue": "y"}, "already written"),
                     ({"jsonPath": "$.b[0]", "numberValue": 2}, "goes back"),
                     ({"jsonPath": "$.b[3]", "numberValue": 2}, "skips ahead"),
                     ({"jsonPath": "$.b.c", "numberValue": 2}, "inside an array"),
                     ({"jsonPath": "a.b", "numberValue": 2}, "root"),
                     ({"jsonPath": "$.c", "numberValue": 2, "boolValue": True}, "exactly one"),
                     ({"jsonPath": "$.c", "numberValue": "2"}, "not a number"),
                     ({"jsonPath": "$..c", "numberValue": 2}, "cannot be read")]:
        with pytest.raises(PathError, match=why):
            args.add(bad)
    assert args.add({"jsonPath": "$.b[1]", "nullValue": None}) == ",null"
    assert args.close() == "]}"
    assert json.loads('{"a":"x","b":[1,null]}') == {"a": "x", "b": [1, None]}


# -- bad input: typed diagnostics, never a traceback ----------------------------------------


def _codes(body: bytes):
    result = accumulate(gemini(body))
    return result, [(d.code, d.severity) for d in result.diagnostics]


@pytest.mark.parametrize("data", [b"[1, 2]", b'"text"', b"42", b"null", b"{not json"])
def test_a_record_that_is_not_an_object_is_a_diagnostic(data):
    body = rec({"text": "Hi"}) + b"data: " + data + b"\r\n\r\n" + rec({"text": "!"}, finish="STOP")
    result, codes = _codes(body)
    assert ("unparseable_json", "error") in codes
    assert result.final["candidates"][0]["content"]["parts"] == [{"text": "Hi!"}]


def test_a_path_that_jumps_back_is_kept_in_its_diagnostic_and_not_applied():
    body = (rec({"functionCall": {"name": "f", "willContinue": True}})
            + rec({"functionCall": {"partialArgs": [
                {"jsonPath": "$.a", "numberValue": 1},
                {"jsonPath": "$.b", "stringValue": "x"},
                {"jsonPath": "$.a", "numberValue": 2}], "willContinue": True}})
            + rec({"functionCall": {}}, finish="STOP"))
    result, codes = _codes(body)
    assert ("partial_args_out_of_order", "error") in codes
    diag = next(d for d in result.diagnostics if d.code == "partial_args_out_of_order")
    assert json.loads(diag.extra["orphan_text"]) == {"jsonPath": "$.a", "numberValue": 2}
    part = result.final["candidates"][0]["content"]["parts"][0]
    assert part["functionCall"] == {"name": "f", "args": {"a": 1, "b": "x"}}


def test_two_candidates_are_each_accumulated_with_a_warning():
    two = {"candidates": [
        {"index": 0, "content": {"parts": [{"text": "a"}]}},
        {"index": 1, "content": {"parts": [{"text": "b"}]}}]}
    end = {"candidates": [{"index": 0, "content": {"parts": [{"text": "!"}]},
                           "finishReason": "STOP"},
                          {"index": 1, "content": {"parts": []}, "finishReason": "MAX_TOKENS"}]}
    body = b"".join(b"data: " + json.dumps(p).encode() + b"\n\n" for p in (two, end))
    result, codes = _codes(body)
    assert codes == [("several_candidates", "warning")]
    cands = result.final["candidates"]
    assert [(c["index"], c["content"]["parts"], c["finishReason"]) for c in cands] == [
        (0, [{"text": "a!"}], "STOP"), (1, [{"text": "b"}], "MAX_TOKENS")]
    assert result.complete


def test_a_continuation_without_a_call_and_an_unknown_part_are_diagnostics():
    body = rec({"functionCall": {"partialArgs": [{"jsonPath": "$.a", "numberValue": 1}]}},
               {"somethingNew": {"x": 1}}, finish="STOP")
    result, codes = _codes(body)
    assert ("unknown_slot", "error") in codes and ("unknown_part", "warning") in codes
    assert result.final["candidates"][0]["content"]["parts"] == [{"somethingNew": {"x": 1}}]


def test_a_call_cut_while_streaming_keeps_its_partial_arguments():
    body = (rec({"functionCall": {"name": "get_weather", "willContinue": True}})
            + rec({"functionCall": {"partialArgs": [
                {"jsonPath": "$.city", "stringValue": "Par", "willContinue": True}],
                "willContinue": True}}))
    result, codes = _codes(body)
    assert not result.complete
    assert ("block_never_stopped", "error") in codes and ("cut_tool_input", "error") in codes
    call = result.final["candidates"][0]["content"]["parts"][0]["functionCall"]
    assert call == {"name": "get_weather", "args": {"city": "Par"}}


def test_changes_name_the_minted_slots():
    body = rec({"text": "Let me", "thought": True}) + rec({"text": " think", "thought": True}) \
        + rec({"text": "Answer", "thoughtSignature": "c2ln"}) + rec({"text": "."}, finish="STOP")
    acc = accumulator_for(WIRE)
    seen = []
    for event in parse_all(gemini(body).events):
        seen += acc.feed(event)
    opened = [(c.address, c.slot_kind) for c in seen if isinstance(c, ch.SlotOpened)]
    assert opened == [((0, 0), "thought"), ((0, 1), "text")]
    texts = [(c.address, c.channel, c.fragment) for c in seen if isinstance(c, ch.TextAppended)]
    assert texts == [((0, 0), "reasoning", " think"), ((0, 1), "text", ".")]
    assert [c.signature for c in seen if isinstance(c, ch.SlotSigned)] == ["c2ln"]
    closed = [(c.address, c.how) for c in seen if isinstance(c, ch.SlotClosed)]
    assert closed == [((0, 0), "stop"), ((0, 1), "finish_reason")]
