"""The notebook build joins the kernel's arbitrary splits of printed text."""

import sys
from pathlib import Path

import nbformat

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "scripts"))
import build_notebooks  # noqa: E402


def stream(name: str, text: str):
    return nbformat.v4.new_output("stream", name=name, text=text)


def test_adjacent_outputs_of_one_stream_become_one():
    outputs = [stream("stdout", "--- event 8 ---"), stream("stdout", "\nevent: x\n"),
               stream("stderr", "warning\n"), stream("stdout", "after\n")]
    merged = build_notebooks.merge_streams(outputs)
    assert [(o["name"], o["text"]) for o in merged] == [
        ("stdout", "--- event 8 ---\nevent: x\n"), ("stderr", "warning\n"), ("stdout", "after\n")]


def test_other_outputs_are_never_merged():
    result = nbformat.v4.new_output("execute_result", data={"text/plain": "1"})
    outputs = [stream("stdout", "a"), result, stream("stdout", "b")]
    assert build_notebooks.merge_streams(outputs) == outputs
