"""The learner's progress file: never a crash, never a lost result, never through a link."""

from __future__ import annotations

import contextlib
import json
import os
import stat
import threading

import pytest

from lesson_lib import exercises
from lesson_lib.course import learner
from lesson_lib.exercises import lesson01 as checks
from lesson_lib.exercises import progress_file
from lesson_lib.solutions import lesson01 as solutions


@pytest.fixture
def my_work(tmp_path, monkeypatch, fresh_progress):
    folder = tmp_path / learner.FOLDER
    folder.mkdir()
    monkeypatch.chdir(folder)
    return folder


def check_one() -> None:
    checks.check_split_events(solutions.split_events)


def test_a_deeply_nested_file_breaks_neither_progress_nor_a_checker(my_work, capsys):
    (my_work / learner.PROGRESS_FILE).write_text("[" * 100_000 + "]" * 100_000)
    assert "not checked yet" in repr(exercises.progress("01"))
    check_one()
    assert json.loads((my_work / learner.PROGRESS_FILE).read_text()) == {"01": {"1": "passed"}}
    assert (my_work / f"{learner.PROGRESS_FILE}.bad-1").stat().st_size == 200_000


def test_a_truncated_file_is_moved_aside_said_once_and_its_results_kept(my_work, capsys):
    whole = json.dumps({"02": {"1": "passed"}, "03": {"2": "failed"}})
    (my_work / learner.PROGRESS_FILE).write_text(whole[:-5])
    check_one()
    check_one()
    said = capsys.readouterr().err
    assert said.count("could not be read") == 1 and ".bad-1" in said
    assert (my_work / f"{learner.PROGRESS_FILE}.bad-1").read_text() == whole[:-5]
    assert json.loads((my_work / learner.PROGRESS_FILE).read_text()) == {"01": {"1": "passed"}}


def test_a_second_damaged_file_gets_the_next_number(my_work):
    (my_work / f"{learner.PROGRESS_FILE}.bad-1").write_text("old")
    (my_work / learner.PROGRESS_FILE).write_text("{")
    check_one()
    assert (my_work / f"{learner.PROGRESS_FILE}.bad-2").read_text() == "{"


def test_a_symlinked_file_is_never_written_through(my_work, tmp_path):
    outside = tmp_path / "outside.json"
    outside.write_text('{"01": {"1": "failed"}}')
    (my_work / learner.PROGRESS_FILE).symlink_to(outside)
    check_one()
    assert outside.read_text() == '{"01": {"1": "failed"}}'
    stored = my_work / learner.PROGRESS_FILE
    assert not stored.is_symlink() and json.loads(stored.read_text()) == {"01": {"1": "passed"}}


def test_a_write_is_whole_or_not_at_all(my_work, monkeypatch):
    (my_work / learner.PROGRESS_FILE).write_text('{"02": {"1": "passed"}}')

    def killed(*args):
        raise OSError("the kernel died")
    monkeypatch.setattr(progress_file.os, "replace", killed)
    check_one()                         # the checker is not affected
    assert (my_work / learner.PROGRESS_FILE).read_text() == '{"02": {"1": "passed"}}'
    assert sorted(p.name for p in my_work.iterdir()) == [learner.PROGRESS_FILE]


def test_an_oversized_file_is_moved_aside(my_work):
    (my_work / learner.PROGRESS_FILE).write_text(" " * (progress_file.MAX_BYTES + 1) + "{}")
    assert progress_file.read(my_work) == {}
    assert (my_work / f"{learner.PROGRESS_FILE}.bad-1").exists()


@pytest.mark.parametrize("lesson", ["1.5", "x", "", "-1", "100"])
def test_an_unknown_lesson_gets_a_clear_message(lesson):
    text = repr(exercises.progress(lesson))
    assert "no lesson" in text or "no exercises" in text


def _within(seconds: float, job) -> None:
    """Run `job` on a thread; fail (instead of hanging the suite) if it has not returned."""
    done = threading.Event()
    failure: list[BaseException] = []

    def run() -> None:
        try:
            job()
        except BaseException as exc:   # noqa: BLE001 - handed back to the test
            failure.append(exc)
        finally:
            done.set()

    threading.Thread(target=run, daemon=True).start()
    if not done.wait(seconds):
        pytest.fail(f"did not return within {seconds} s")
    if failure:
        raise failure[0]


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="needs os.mkfifo")
def test_a_fifo_in_place_of_the_file_hangs_neither_progress_nor_a_checker(my_work, capsys):
    fifo = my_work / learner.PROGRESS_FILE
    os.mkfifo(fifo)
    try:
        _within(10, lambda: exercises.progress("01"))
        _within(10, check_one)
    finally:
        # Release a reader still blocked in open(): a writer's open lets it return.
        for name in (learner.PROGRESS_FILE, f"{learner.PROGRESS_FILE}.bad-1"):
            with contextlib.suppress(OSError):
                if stat.S_ISFIFO(os.lstat(my_work / name).st_mode):
                    os.close(os.open(my_work / name, os.O_WRONLY | os.O_NONBLOCK))
    assert "not a regular file" in capsys.readouterr().err
    assert stat.S_ISFIFO(os.lstat(my_work / f"{learner.PROGRESS_FILE}.bad-1").st_mode)
    assert json.loads(fifo.read_text()) == {"01": {"1": "passed"}}
