"""Lesson 1, station sse: bytes in network chunks become events.

Downstream of capture, upstream of the wires.

- `decoder`: the Server-Sent Events decoder (WHATWG), fed chunk by chunk;
- `framing`: which decoder cuts a wire's body into events;
- `eventstream`: AWS Bedrock's binary frames (the event-stream encoding);
- `bedrock_frames`: those frames read as events, for Bedrock's two APIs;
- `strict_json`: the strict JSON reading of a payload, shared by the wire events
  and by the Bedrock frames (an Invoke chunk is named by its inner event).
"""
