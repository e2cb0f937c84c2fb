"""What every constructed corpus must satisfy, shared by the Chat, Responses and Gemini tests.

A corpus module has ``build(root)``, which writes one ``<wire>/<name>.sse``
and ``<name>.json`` sidecar per capture below `root`. The tests build it into
a temporary folder and hold the committed captures, the sidecars and the
official SDK's replay to what was built.
"""

from __future__ import annotations

from pathlib import Path
from types import ModuleType

from lesson_lib.capture import captures, replay
from lesson_lib.cli.validate import sdk_claim_problems
from lesson_lib.wires.wire_events import WireEvent, parse_all


def build_corpus(corpus: ModuleType, root: Path, wire: str) -> dict[str, captures.Capture]:
    """Build `corpus` into `root`: the captures by name."""
    paths = corpus.build(root)
    assert all(p.parent == root / wire for p in paths)
    return {p.stem: captures.load(p) for p in paths}


def events(cap: captures.Capture) -> list[WireEvent]:
    return parse_all(cap.events)


def assert_rebuilt_identically(corpus: ModuleType, built: dict[str, captures.Capture],
                               root: Path, wire: str) -> None:
    """Building again into `root` gives the same bytes, captures and sidecars."""
    corpus.build(root)
    for name, cap in built.items():
        again = root / wire / f"{name}.sse"
        assert again.read_bytes() == cap.body, name
        assert again.with_suffix(".json").read_bytes() == cap.path.with_suffix(".json").read_bytes()


def assert_committed_as_built(built: dict[str, captures.Capture], names: set[str],
                              wire: str) -> None:
    """The committed captures are exactly the named ones, byte for byte as built."""
    folder = captures.CAPTURES_DIR / wire
    assert {p.stem for p in folder.glob("*.sse")} == names, "run the builder into captures/"
    for name, cap in built.items():
        assert (folder / f"{name}.sse").read_bytes() == cap.body, f"{name}.sse is stale"
        assert ((folder / f"{name}.json").read_bytes()
                == cap.path.with_suffix(".json").read_bytes()), f"{name}.json is stale"


class CorpusAsFiles:
    """The corpus as files, for every constructed corpus: a test module subclasses this as
    ``TestCorpusAsFiles``, sets `corpus`, `names` and `wire`, and provides a ``built``
    fixture (`build_corpus` into a temporary folder)."""

    corpus: ModuleType
    names: set[str]
    wire: str

    def test_the_builder_writes_exactly_the_named_captures(self, built):
        assert set(built) == self.names

    def test_rebuilding_gives_identical_bytes(self, built, tmp_path):
        assert_rebuilt_identically(self.corpus, built, tmp_path, self.wire)

    def test_committed_captures_are_what_the_builder_writes(self, built):
        assert_committed_as_built(built, self.names, self.wire)


def assert_sidecar_request(cap: captures.Capture, wire: str) -> None:
    """The sidecar names the wire, says what it demonstrates, and had a streaming request."""
    side = cap.sidecar
    assert side["wire"] == wire and cap.wire == wire
    assert side["demonstrates"] and "\n" not in side["demonstrates"]
    assert side["request"]["model"] and side["request"]["stream"] is True


def assert_sidecar_provenance(cap: captures.Capture, helper: str) -> None:
    """Constructed with synthetic timing, chunk ends and times in order, the SDK helper named."""
    side = cap.sidecar
    assert side["provenance"]["kind"] == "constructed"
    assert side["provenance"]["timing"] == "synthetic" and side["provenance"]["based_on"]
    ends, times = side["chunks"]["ends"], side["chunks"]["t_ms"]
    assert len(ends) == len(times) and ends[-1] == len(cap.body)
    assert all(a < b for a, b in zip(ends, ends[1:], strict=False))
    assert all(a <= b for a, b in zip(times, times[1:], strict=False))
    assert side["sdk"]["helper"] == helper
    assert side["sdk"]["note"]


def assert_sdk_does_what_the_sidecar_says(cap: captures.Capture) -> None:
    assert sdk_claim_problems(cap.sidecar["sdk"], replay.run_sdk(cap)) == []


def assert_sdk_outcome_independent_of_chunking(cap: captures.Capture, chunk_size: int) -> None:
    recorded, tiny = replay.run_sdk(cap), replay.run_sdk(cap, chunk_size=chunk_size)
    assert (recorded.raised, recorded.text) == (tiny.raised, tiny.text)
