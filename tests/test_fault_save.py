"""Saving a faulted capture as a capture of its own: the bytes and the verdicts survive the
round trip on every wire; nothing is written over, bad names are diagnosed, and outside the
learner's folder nothing lands outside a temporary folder."""

from __future__ import annotations

import contextlib
import dataclasses
import io
import json

import pytest
from examples import examples
from hypothesis import given, settings
from hypothesis import strategies as st

from lesson_lib import wires
from lesson_lib.accumulate import accumulate
from lesson_lib.breaks import faults
from lesson_lib.breaks import save as fault_save
from lesson_lib.capture.captures import load
from lesson_lib.capture.json_text import dumps
from lesson_lib.cli import commands as cli
from lesson_lib.course import learner
from lesson_lib.turn.run import turn_state
from lesson_lib.views.fault_lab import FaultLab, _content_event_at

GOOD = ("anthropic-messages/text-then-tool", "openai-responses/function-call",
        "openai-chat/tool-call", "aws-bedrock-converse/converse-get-weather")


def _broken(key: str, fault: str):
    source = load(key)
    if fault == "cut_at":
        return source, faults.cut_at(source, len(source.body) * 2 // 3)
    if fault == "inject_error":
        return source, faults.inject_error(source, len(source.events) // 2)
    return source, faults.corrupt_json(source, _content_event_at(source, 50))


def _cli(command: str, path) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        code = cli.main([command, str(path), "--json"])
    return code, out.getvalue(), err.getvalue()


@pytest.mark.parametrize("fault", ["cut_at", "inject_error", "corrupt_json"])
@pytest.mark.parametrize("key", GOOD)
def test_a_saved_fault_loads_back_with_the_same_bytes_and_the_same_verdicts(tmp_path, key, fault):
    source, broken = _broken(key, fault)
    saved = fault_save.save(source, broken, folder=tmp_path)
    assert saved.ok, saved
    # The body file takes the wire's own suffix (Bedrock's binary frames: ``.eventstream``).
    suffix = wires.entry_for(source.wire).suffix
    assert saved.path == tmp_path / source.wire / f"{saved.name}{suffix}"
    again = load(saved.path)
    assert again.body == broken.body and again.body != source.body
    assert again.wire == source.wire
    assert again.chunk_ends == broken.chunk_ends and again.chunk_times == broken.chunk_times
    # The same turn and the same final object, from the library and from the CLI.
    state = turn_state(broken, route="auto")
    assert state.outcome != "completed"
    assert turn_state(again, route="auto").as_dict() == state.as_dict()
    assert accumulate(again).final == accumulate(broken).final
    code, out, _ = _cli("turn", saved.path)
    assert code == cli.NOT_PROPER and json.loads(out) == json.loads(dumps(state.as_dict()))
    code, out, _ = _cli("final", saved.path)
    assert code == cli.NOT_PROPER
    assert json.loads(out) == json.loads(dumps(accumulate(broken).final))
    code, out, _ = _cli("events", saved.path)
    assert code == cli.NOT_PROPER and len(json.loads(out)) == len(broken.events)


def test_the_sidecar_says_it_was_constructed_by_a_fault_and_from_what(tmp_path):
    source, broken = _broken("anthropic-messages/text-then-tool", "inject_error")
    saved = fault_save.save(source, broken, name="my-error", folder=tmp_path)
    sidecar = json.loads(saved.path.with_suffix(".json").read_text(encoding="utf-8"))
    assert sidecar["provenance"]["kind"] == "constructed"
    assert sidecar["provenance"]["by"] == "fault"
    assert sidecar["provenance"]["based_on"] == source.key
    assert sidecar["provenance"]["fault"] == broken.sidecar["fault"] == sidecar["fault"]
    assert sidecar["provenance"]["source_provenance"] == source.sidecar["provenance"]["kind"]
    assert sidecar["demonstrates"] == broken.demonstrates
    assert sidecar["request"] == source.request
    assert "sdk" not in sidecar             # the SDK's verdict was on the good bytes
    assert load(saved.path).name == "my-error"


def test_an_existing_capture_is_not_written_over_unless_told(tmp_path):
    source = load("openai-chat/text-usage")
    first = faults.cut_at(source, 300)
    second = faults.cut_at(source, 900)
    assert fault_save.save(source, first, name="cut", folder=tmp_path).ok
    refused = fault_save.save(source, second, name="cut", folder=tmp_path)
    assert not refused.ok and refused.path is None
    assert [d.code for d in refused.diagnostics] == ["capture_exists"]
    assert "overwrite" in refused.diagnostics[0].message and "not saved" in repr(refused)
    assert load(tmp_path / "openai-chat" / "cut.sse").body == first.body
    replaced = fault_save.save(source, second, name="cut", folder=tmp_path, overwrite=True)
    assert replaced.ok and load(replaced.path).body == second.body


@pytest.mark.parametrize("name", ["", "../escape", "a/b", "back\\slash", ".hidden", "two words",
                                  "x" * 101, "ends.sse", "ends.JSON", "dots..inside", "é-accent"])
def test_a_bad_name_is_a_typed_diagnostic_and_writes_nothing(tmp_path, name):
    source = load("anthropic-messages/hello")
    saved = fault_save.save(source, faults.cut_at(source, 500), name=name, folder=tmp_path)
    assert not saved.ok
    assert [d.code for d in saved.diagnostics] == ["bad_capture_name"]
    assert list(tmp_path.rglob("*")) == []
    assert fault_save.check_name(name) is not None


@settings(max_examples=examples(300), deadline=None, derandomize=True, database=None)
@given(st.text(max_size=120))
def test_any_name_is_either_a_plain_file_name_or_a_diagnostic_never_an_exception(name):
    source = load("anthropic-messages/hello")
    planned = fault_save.plan(source, faults.cut_at(source, 500), name)
    if planned.ok:
        assert planned.name == name and "/" not in name and "\\" not in name
        assert ".." not in name and not name.startswith(".") and name.isascii()
    else:
        assert [d.code for d in planned.diagnostics] == ["bad_capture_name"]


@pytest.mark.parametrize("name", ["hello.cut-at-500", "A_1", "x" * 100, "9lives"])
def test_a_good_name_passes(name):
    assert fault_save.check_name(name) is None


def test_a_folder_that_cannot_be_written_is_a_diagnostic(tmp_path):
    source = load("anthropic-messages/hello")
    blocked = tmp_path / "a-file"
    blocked.write_text("not a folder")
    saved = fault_save.save(source, faults.cut_at(source, 500), folder=blocked)
    assert [d.code for d in saved.diagnostics] == ["cannot_write"] and saved.path is None


def test_an_unbroken_capture_is_not_saved_as_a_fault(tmp_path):
    source = load("anthropic-messages/hello")
    saved = fault_save.save(source, source, folder=tmp_path)
    assert [d.code for d in saved.diagnostics] == ["nothing_to_save"]
    assert list(tmp_path.rglob("*")) == []


def test_the_default_name_says_the_fault_and_where():
    source = load("anthropic-messages/hello")
    assert fault_save.default_name(faults.cut_at(source, 700)) == "hello.cut-at-700"
    dropped = faults.drop_terminal(source)
    assert fault_save.default_name(dropped) == f"hello.drop-terminal-{dropped.sidecar['fault']['at']}"


def test_outside_the_learners_folder_the_default_is_a_temporary_folder(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)            # like nbval and the tests: not in my-work/
    folder, temporary = fault_save.default_folder()
    assert temporary and tmp_path not in folder.parents
    source = load("anthropic-messages/hello")
    saved = fault_save.save(source, faults.cut_at(source, 400))
    assert saved.ok and saved.temporary and folder in saved.path.parents
    assert "temporary folder" in repr(saved) and str(folder) not in repr(saved)
    refused = fault_save.save(source, faults.cut_at(source, 400))
    assert "in the temporary folder already exists" in repr(refused)
    assert learner.FOLDER not in repr(refused)
    assert list(tmp_path.rglob("*")) == []


def test_in_the_learners_folder_the_default_is_my_work_captures(tmp_path, monkeypatch):
    mine = tmp_path / learner.FOLDER
    mine.mkdir()
    monkeypatch.chdir(mine)
    assert fault_save.default_folder() == (mine / "captures", False)
    source = load("openai-responses/text")
    saved = fault_save.save(source, faults.inject_error(source, 6))
    assert saved.path == mine / "captures" / "openai-responses" / f"{saved.name}.sse"
    assert repr(saved) == f"saved my-work/captures/openai-responses/{saved.name}.sse (+ .json)"


def test_the_labs_button_saves_what_the_lab_shows(tmp_path):
    lab = FaultLab([load("anthropic-messages/hello")], fault="cut_at", percent=40,
                   folder=tmp_path)
    lab.save_button.click()
    saved = list((tmp_path / "anthropic-messages").glob("*.sse"))
    assert len(saved) == 1 and "✔ saved" in lab.saved.value
    broken = lab.state()
    assert turn_state(load(saved[0]), route="auto").as_dict() == broken.as_dict()
    lab.save_button.click()                # the same name again: refused, and said so
    assert "capture_exists" in lab.saved.value and "✖" in lab.saved.value
    lab.overwrite.value = True
    lab.save_button.click()
    assert "✔ saved" in lab.saved.value
    lab.name.value = "../nope"
    lab.save_button.click()
    assert "bad_capture_name" in lab.saved.value
    assert lab.save_button.description == "Save as capture"


# -- links and wires ------------------------------------------------------------------------


def cut_hello():
    source = load("anthropic-messages/hello")
    return source, faults.cut_at(source, 200)


@pytest.mark.parametrize("overwrite", [False, True])
def test_a_dangling_link_is_never_written_through(tmp_path, overwrite):
    source, faulted = cut_hello()
    folder = tmp_path / "mine" / "anthropic-messages"
    folder.mkdir(parents=True)
    outside = tmp_path / "outside.sse"
    (folder / "x.sse").symlink_to(outside)
    saved = fault_save.save(source, faulted, "x", folder=tmp_path / "mine", overwrite=overwrite)
    assert saved.path is None and saved.diagnostics[0].code == "link_in_the_way"
    assert not outside.exists()


def test_a_live_links_target_is_never_overwritten(tmp_path):
    source, faulted = cut_hello()
    folder = tmp_path / "mine" / "anthropic-messages"
    folder.mkdir(parents=True)
    outside = tmp_path / "outside.json"
    outside.write_text("precious")
    (folder / "x.json").symlink_to(outside)
    saved = fault_save.save(source, faulted, "x", folder=tmp_path / "mine", overwrite=True)
    assert saved.path is None and saved.diagnostics[0].code == "link_in_the_way"
    assert outside.read_text() == "precious"


def test_a_linked_wire_folder_is_never_followed(tmp_path):
    source, faulted = cut_hello()
    (tmp_path / "mine").mkdir()
    (tmp_path / "elsewhere").mkdir()
    (tmp_path / "mine" / "anthropic-messages").symlink_to(tmp_path / "elsewhere")
    saved = fault_save.save(source, faulted, "x", folder=tmp_path / "mine")
    assert saved.path is None and list((tmp_path / "elsewhere").iterdir()) == []


@pytest.mark.parametrize("wire", ["../../escape", "/etc", "", "nonsense", 5])
def test_a_hand_made_capture_must_name_a_known_wire(tmp_path, wire):
    from lesson_lib.capture.captures import from_bytes
    source, faulted = cut_hello()
    sidecar = dict(faulted.sidecar, wire=wire)
    made = from_bytes(faulted.body, name="made", sidecar=sidecar)
    saved = fault_save.save(source, made, "x", folder=tmp_path / "mine")
    assert saved.path is None and "unknown_wire" in [d.code for d in saved.diagnostics]
    assert not (tmp_path / "mine").exists() or not any((tmp_path / "mine").rglob("*.sse"))


def _nested(depth: int) -> dict:
    value: dict = {}
    for _ in range(depth):
        value = {"a": value}
    return value


def test_a_sidecar_nested_600_deep_is_saved_and_loads_back(tmp_path):
    source, broken = _broken("anthropic-messages/hello", "cut_at")
    broken.sidecar["deep"] = _nested(600)
    saved = fault_save.save(source, broken, folder=tmp_path)
    assert saved.ok, saved
    assert load(saved.path).sidecar["deep"] == _nested(600)


def test_a_sidecar_too_deep_for_the_json_writer_is_a_diagnostic_and_writes_nothing(tmp_path):
    source, broken = _broken("anthropic-messages/hello", "cut_at")
    broken.sidecar["deep"] = _nested(100_000)     # past the JSON writer on every Python
    saved = fault_save.save(source, broken, folder=tmp_path)
    assert [d.code for d in saved.diagnostics] == ["sidecar_not_json"] and saved.path is None
    assert "nests deeper" in str(saved)
    assert list(tmp_path.rglob("*")) == []


@pytest.mark.parametrize("odd", [{1, 2}, b"bytes", float("nan"), "half \ud83d", object()])
def test_a_value_json_cannot_hold_in_the_sidecar_is_a_diagnostic_and_writes_nothing(
        tmp_path, odd):
    source, broken = _broken("anthropic-messages/hello", "cut_at")
    broken.sidecar["note"] = {"odd": [odd]}
    saved = fault_save.save(source, broken, folder=tmp_path)
    assert [d.code for d in saved.diagnostics] == ["sidecar_not_json"] and saved.path is None
    assert list(tmp_path.rglob("*")) == []


def test_a_sidecar_that_holds_itself_is_a_diagnostic(tmp_path):
    source, broken = _broken("anthropic-messages/hello", "cut_at")
    broken.sidecar["me"] = broken.sidecar
    saved = fault_save.save(source, broken, folder=tmp_path)
    assert [d.code for d in saved.diagnostics] == ["sidecar_not_json"]


def test_a_fault_or_provenance_of_the_wrong_type_is_a_diagnostic_or_a_save(tmp_path):
    source, broken = _broken("anthropic-messages/hello", "cut_at")
    odd_source = dataclasses.replace(source, sidecar={**source.sidecar, "provenance": "x"})
    assert fault_save.save(odd_source, broken, folder=tmp_path).ok
    odd = dataclasses.replace(broken, sidecar={**broken.sidecar, "fault": "x"})
    assert fault_save.default_name(odd) == odd.name
    assert [d.code for d in fault_save.save(source, odd, folder=tmp_path).diagnostics] == [
        "nothing_to_save"]


_ANY = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats() | st.text(max_size=8)
    | st.binary(max_size=4) | st.sets(st.integers(), max_size=2),
    lambda inner: st.lists(inner, max_size=3) | st.tuples(inner)
    | st.dictionaries(st.text(max_size=4) | st.integers() | st.none(), inner, max_size=3),
    max_leaves=12)


@settings(max_examples=examples(150), deadline=None, derandomize=True, database=None)
@given(_ANY)
def test_any_value_in_the_sidecar_is_saved_and_read_back_or_a_diagnostic(tmp_path_factory, odd):
    folder = tmp_path_factory.mktemp("saved")
    source, broken = _broken("anthropic-messages/hello", "cut_at")
    broken.sidecar["note"] = odd
    saved = fault_save.save(source, broken, folder=folder)
    if saved.ok:
        assert load(saved.path).sidecar["note"] == json.loads(json.dumps(odd))
    else:
        assert [d.code for d in saved.diagnostics] == ["sidecar_not_json"]
        assert list(folder.rglob("*")) == []
