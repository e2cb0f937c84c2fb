"""Lessons 0 to 6, station capture (the source): a response exactly as it came off the wire.

Every lesson starts from a capture: the body's bytes verbatim, the network
chunks they arrived in (with their times) and a sidecar that says what the
capture shows. Upstream of every station but `diagnostics`; the decoding stations
start here.

- `captures`: `Capture`, `load`, `corpus`, `from_bytes`, `reference_dir`;
- `capture_writer`: writing a capture (the body verbatim, its sidecar, nothing secret);
- `record`: one live streamed request through the official SDK, kept as a capture;
- `redact`: no key on disk, cleared and then checked;
- `replay`, `bedrock_replay`: the official SDKs put back in front of a capture, offline;
- `json_text`: JSON text that is always valid and printable (the CLI, the turn
  summary and the views share it).
"""
