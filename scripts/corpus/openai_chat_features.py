"""Chat Completions captures of chunk fields no public recording shows: spoken audio, the
moderation chunk, and the legacy functions API.

Built from the openai SDK's types (3.57: ``ChoiceDeltaAudio``, ``ChatCompletionChunk.moderation``
and its ``Moderation`` results, ``ChoiceDeltaFunctionCall`` and the ``function_call`` finish
reason) and the vendor's documentation of each; the envelope is the one of the other Chat
captures. Each sidecar says why no recording exists.
"""

from __future__ import annotations

import base64
import math
import struct
from pathlib import Path

from .openai_chat_common import BASE, HELPER, STREAM_USAGE, WIRE, compact, ok, user
from .openai_chat_stream import ChatStream
from .openai_ids import hex_digits
from .openai_pacing import text_tokens
from .openai_sidecar import sdk_expectation, write

NO_RECORDING = ("No recording with a compatible licence exists, so the capture is constructed "
                "from the SDK's types and the vendor's documentation")


def _pcm16_fragments(rng, count: int, samples: int) -> list[str]:
    """Base64 fragments of 24 kHz mono PCM16 speech-like noise, each decodable alone (a
    multiple of 3 bytes) but the last, which ends in padding as a real last fragment can."""
    out = []
    phase = 0.0
    for n in range(count):
        size = samples if n < count - 1 else samples // 2 + 1
        frame = []
        for _ in range(size):
            phase += 2 * math.pi * rng.uniform(110, 240) / 24_000
            frame.append(int(6000 * math.sin(phase) + rng.randint(-900, 900)))
        raw = struct.pack(f"<{len(frame)}h", *frame)
        out.append(base64.b64encode(raw).decode())
    return out


def audio_output(root: Path) -> Path:
    """Spoken output: ``delta.audio`` carries an id, transcript pieces, base64 data, and a
    last update with only ``expires_at``; ``content`` stays null."""
    spoken = ("Bonjour! To order a coffee in Paris, just say: un café, s'il vous plaît. "
              "You'll get a small, strong espresso; ask for un crème if you want milk.")
    req = {"model": "gpt-4o-audio-preview", "modalities": ["text", "audio"],
           "audio": {"voice": "alloy", "format": "pcm16"},
           "messages": user("How do I order a coffee in Paris? Keep it short."),
           **STREAM_USAGE}
    s = ChatStream(231, model="gpt-4o-audio-preview-2025-06-03", created=1768305511)
    audio_id = "audio_" + hex_digits(s.rng, 32)
    s.opening(after_ms=s.pace.first_token(450, 800), content=None,
              audio={"id": audio_id, "transcript": ""})
    words = text_tokens(spoken, s.rng)
    sound = _pcm16_fragments(s.rng, 3 * len(words) // 2, 96)
    # The transcript runs ahead of the sound, as it does in audio streams: every word first,
    # then the sound it describes, in uneven bursts.
    said, tear = 0, True
    for i, fragment in enumerate(sound):
        while said < len(words) and said <= i * len(words) // len(sound) + 2:
            torn = tear and not words[said].isascii()    # a read ends inside "é"
            tear = tear and not torn
            s.say(0, {"audio": {"transcript": words[said]}}, after_ms=s.pace.token(),
                  torn=torn)
            s.completion_tokens += 1
            said += 1
        s.say(0, {"audio": {"data": fragment}}, after_ms=s.pace.token())
        s.completion_tokens += 1
    expires_at = s.created + 3600
    s.say(0, {"audio": {"expires_at": expires_at}}, after_ms=s.pace.instant())
    s.finish("stop")
    usage = s.usage(27)
    usage["completion_tokens_details"]["audio_tokens"] = len(sound) * 2
    usage["completion_tokens"] += len(sound)
    usage["total_tokens"] += len(sound)
    s.chunk([], after_ms=s.pace.instant(), usage=usage)
    s.done()
    transcript = "".join(words)
    data = "".join(sound)
    return write(root, WIRE, "audio-output", s.builder, request=req, response=ok(s),
                 demonstrates="spoken output: delta.audio carries the audio id, transcript "
                              "pieces and base64 PCM16 fragments, then a last update with only "
                              "expires_at; content stays null, so a reader of content sees "
                              "nothing",
                 based_on="the openai SDK's ChoiceDeltaAudio (id, data, transcript, "
                          "expires_at; 'the final audio update contains only its expiry "
                          "timestamp'), the chunk sequence reported in openai/openai-node#1206 "
                          "and openai/openai-python#2507, and " + BASE + ". " + NO_RECORDING
                          + ": audio output needs an audio model; the sound is synthetic",
                 sdk=sdk_expectation(HELPER, "the helper has no audio event: no content.delta, "
                                     "and the final message's audio is the fields "
                                     "concatenated (id, transcript, data) with expires_at",
                                     text="",
                                     final={"choices.0.message.content": None,
                                            "choices.0.message.audio.id": audio_id,
                                            "choices.0.message.audio.transcript": transcript,
                                            "choices.0.message.audio.data": data,
                                            "choices.0.message.audio.expires_at": expires_at,
                                            "choices.0.finish_reason": "stop"}))


def _scores(rng, flagged: str | None) -> tuple[dict, dict, dict]:
    """Moderation categories, their scores and input types; `flagged` is the one set."""
    names = ["harassment", "harassment/threatening", "hate", "hate/threatening", "illicit",
             "illicit/violent", "self-harm", "self-harm/instructions", "self-harm/intent",
             "sexual", "sexual/minors", "violence", "violence/graphic"]
    categories = {n: n == flagged for n in names}
    scores = {n: (round(rng.uniform(0.71, 0.93), 6) if n == flagged
                  else float(f"{rng.uniform(1e-7, 4e-4):.3e}")) for n in names}
    types = {n: ["text"] for n in names}
    return categories, scores, types


def moderation_chunk(root: Path) -> Path:
    """A moderated completion: the text streams first, then one chunk carries the
    moderation of the input and of the output (here the output is flagged)."""
    answer = ("“You thought the vault was safe?” Malvaux smiled. “Every lock in this city "
              "answers to me. By dawn your guards will be gone and your name forgotten; I "
              "will break what you love, one piece at a time, until you beg me to stop.”")
    req = {"model": "gpt-4.1", "messages": user("Write the villain's threat in my heist "
                                                "story, three sentences."),
           "moderation": {"model": "omni-moderation-latest"}, **STREAM_USAGE}
    s = ChatStream(232, model="gpt-4.1-2025-04-14", created=1768309920)
    s.opening(after_ms=s.pace.first_token(300, 500))
    s.text(answer, first_ms=s.pace.token(), tear=True)
    s.finish("stop")
    moderation = {}
    for side, flagged in (("input", None), ("output", "violence")):
        categories, scores, types = _scores(s.rng, flagged)
        moderation[side] = {"type": "moderation_results", "model": "omni-moderation-latest",
                            "results": [{"type": "moderation_result", "model":
                                         "omni-moderation-latest",
                                         "flagged": flagged is not None,
                                         "categories": categories,
                                         "category_scores": scores,
                                         "category_applied_input_types": types}]}
    # The moderation chunk comes after the text it judges: choices empty, usage null.
    s.chunk([], after_ms=s.pace.thinking(250, 600), usage=None,
            fields={"moderation": moderation})
    s.usage_chunk(23)
    s.done()
    return write(root, WIRE, "moderation-chunk", s.builder, request=req, response=ok(s),
                 demonstrates="a moderated completion: the text streams, then a chunk with "
                              "choices: [] carries the moderation of the input and of the "
                              "output; the output is flagged after every word was shown",
                 based_on="the openai SDK's ChatCompletionChunk.moderation ('present on the "
                          "moderation chunk when moderated completions are requested') and its "
                          "Moderation results (omni-moderation categories and scores), and "
                          + BASE + ". " + NO_RECORDING + ": the chunk comes only when a "
                          "request sets moderation, and no documented example shows one",
                 sdk=sdk_expectation(HELPER, "the helper has no moderation event; the final "
                                     "completion carries the moderation chunk's object, and the "
                                     "flagged text was already handed out",
                                     text=answer,
                                     final={"choices.0.message.content": answer,
                                            "moderation.output.results.0.flagged": True,
                                            "moderation.input.results.0.flagged": False}))


def legacy_function_call(root: Path) -> Path:
    """The functions API: ``delta.function_call`` (name first, then arguments) and
    ``finish_reason: "function_call"``; no tool call id."""
    functions = [{"name": "convert_currency",
                  "description": "Convert an amount between two currencies at today's rate.",
                  "parameters": {"type": "object", "properties": {
                      "amount": {"type": "number"}, "from": {"type": "string"},
                      "to": {"type": "string"}}, "required": ["amount", "from", "to"]}}]
    args = compact({"amount": 249.9, "from": "EUR", "to": "JPY"})
    req = {"model": "gpt-4o-mini", "messages": user("How much is 249,90 € in yen?"),
           "functions": functions, "function_call": "auto", **STREAM_USAGE}
    s = ChatStream(233, model="gpt-4o-mini-2024-07-18", created=1768311202)
    s.say(0, {"role": "assistant", "content": None,
              "function_call": {"name": "convert_currency", "arguments": ""},
              "refusal": None, "annotations": []}, after_ms=s.pace.first_token(350, 600))
    s.completion_tokens += 1
    for fragment, gap in s.argument_fragments(args):
        s.say(0, {"function_call": {"arguments": fragment}}, after_ms=gap)
        s.completion_tokens += 1
    s.finish("function_call")
    s.usage_chunk(71)
    s.done()
    return write(root, WIRE, "legacy-function-call", s.builder, request=req, response=ok(s),
                 demonstrates="the legacy functions API: delta.function_call names the "
                              "function, then streams its arguments; finish_reason "
                              "function_call; the call has no id",
                 based_on="the openai SDK's ChoiceDeltaFunctionCall ('deprecated and replaced "
                          "by tool_calls') and the function_call finish reason, in the envelope "
                          "of " + BASE + ". " + NO_RECORDING + ": the deprecated API is still "
                          "served but no recording of it was kept",
                 sdk=sdk_expectation(HELPER, "the helper has no function_call event; the final "
                                     "message carries function_call with the name and the "
                                     "arguments concatenated",
                                     text="",
                                     final={"choices.0.message.function_call.name":
                                                "convert_currency",
                                            "choices.0.message.function_call.arguments": args,
                                            "choices.0.finish_reason": "function_call"}))


def build(root: Path) -> list[Path]:
    """Write the three captures; return their paths."""
    return [audio_output(root), moderation_chunk(root), legacy_function_call(root)]
