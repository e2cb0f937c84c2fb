"""The learner's own folder: seeded when missing, never overwritten, untouched by
`make notebooks` and `make test`; progress works from a fresh kernel and is kept only there."""

from __future__ import annotations

import json
import re
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest

from lesson_lib.course import learner, plan

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "scripts"))
import build_notebooks  # noqa: E402

CHECK = ROOT / "lesson_lib" / "exercises"
LESSONS_WITH_EXERCISES = sorted(p.stem.removeprefix("lesson") for p in CHECK.glob("lesson[0-9][0-9]*.py")
                                if p.stem.removeprefix("lesson").isalnum())


def fake_course(tmp_path: Path) -> Path:
    root = tmp_path / "course"
    (root / "lesson_lib").mkdir(parents=True)
    (root / "notebooks" / "learner").mkdir(parents=True)
    for name in ("00-start-here.ipynb", "01-raw-events.ipynb"):
        (root / "notebooks" / "learner" / name).write_text(f"learner copy of {name}")
    return root


def test_seed_copies_every_missing_lesson_and_never_overwrites(tmp_path):
    root = fake_course(tmp_path)
    first = learner.seed(root)
    assert first.copied == ("00-start-here.ipynb", "01-raw-events.ipynb")
    mine = root / "my-work" / "01-raw-events.ipynb"
    mine.write_text("my answers")
    (root / "notebooks" / "learner" / "02-next.ipynb").write_text("a new lesson")
    second = learner.seed(root)
    assert second.copied == ("02-next.ipynb",)
    assert mine.read_text() == "my answers"
    assert learner.seed(root).copied == ()


def test_rebuilding_the_learner_copies_leaves_my_work_alone(tmp_path, monkeypatch):
    root = fake_course(tmp_path)
    source = next((ROOT / "notebooks").glob("01-*.ipynb"))
    (root / "notebooks" / source.name).write_text(source.read_text(encoding="utf-8"))
    learner.seed(root)
    mine = root / "my-work" / "01-raw-events.ipynb"
    mine.write_text("my answers")
    monkeypatch.setattr(build_notebooks, "NOTEBOOKS", root / "notebooks")
    monkeypatch.setattr(build_notebooks, "LEARNER", root / "notebooks" / "learner")
    assert build_notebooks.main(["--learner-only", str(root / "notebooks" / source.name)]) == 0
    assert (root / "notebooks" / "learner" / source.name).read_text().startswith("{")
    assert mine.read_text() == "my answers"


def test_make_test_and_make_notebooks_never_reach_my_work():
    makefile = (ROOT / "Makefile").read_text()
    for target in ("test", "notebooks", "learner-copy"):
        recipe = re.search(rf"^{target}:.*\n((?:\t.*\n)+)", makefile, re.M)
        assert recipe, target
        assert learner.FOLDER not in recipe[1], target
    testpaths = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["pytest"]["ini_options"]["testpaths"]
    assert not any(learner.FOLDER in p for p in testpaths)
    assert learner.FOLDER not in (ROOT / "scripts" / "build_notebooks.py").read_text()
    ignored = subprocess.run(["git", "check-ignore", "-q", f"{learner.FOLDER}/01-raw-events.ipynb"],
                             cwd=ROOT, check=False)
    assert ignored.returncode == 0, "my-work/ must be git-ignored"


def run_fresh(code: str, cwd: Path) -> str:
    done = subprocess.run([sys.executable, "-c", code], cwd=cwd, capture_output=True, text=True,
                          timeout=120, check=False)
    assert done.returncode == 0, done.stderr[-3000:]
    return done.stdout


@pytest.mark.parametrize("lesson", LESSONS_WITH_EXERCISES)
def test_progress_works_from_a_fresh_kernel_for_every_lesson(lesson, tmp_path):
    out = run_fresh(f"import lesson_lib; print(lesson_lib.exercises.progress({lesson!r}))", tmp_path)
    exercises = re.findall(r"^  Exercise \d+ \(.+\): not checked yet$", out, re.M)
    assert exercises, out


def test_every_lesson_that_calls_progress_has_exercises():
    for path in sorted((ROOT / "notebooks").glob(plan.LESSON_GLOB)):
        for called in re.findall(r'progress\(\\"(\d\d[a-z]?)\\"\)', path.read_text(encoding="utf-8")):
            assert called in LESSONS_WITH_EXERCISES, (path.name, called)


CHECK_ONE = ("from lesson_lib.exercises import lesson01 as c\n"
             "from lesson_lib.solutions import lesson01 as s\n"
             "c.check_split_events(s.split_events)\n"
             "c.check_first_text_ms(lambda table: 0.0)\n")


def test_progress_outlives_the_kernel_in_the_learners_folder(tmp_path):
    folder = tmp_path / "course" / learner.FOLDER
    folder.mkdir(parents=True)
    run_fresh(CHECK_ONE, folder)
    stored = json.loads((folder / learner.PROGRESS_FILE).read_text())
    assert stored == {"01": {"1": "passed", "2": "failed"}}
    out = run_fresh("import lesson_lib; print(lesson_lib.exercises.progress('01'))", folder)
    assert "Exercise 1 (Split a stream into events): passed" in out
    assert "Exercise 2 (Time to the first text fragment): failed" in out
    assert "Exercise 3 (Where did the response die?): not checked yet" in out


def test_progress_is_never_read_or_written_outside_the_learners_folder(tmp_path):
    lessons = tmp_path / "notebooks"
    lessons.mkdir()
    (tmp_path / learner.PROGRESS_FILE).write_text('{"01": {"3": "passed"}}')
    (lessons / learner.PROGRESS_FILE).write_text('{"01": {"3": "passed"}}')
    run_fresh(CHECK_ONE, lessons)
    out = run_fresh("import lesson_lib; print(lesson_lib.exercises.progress('01'))", lessons)
    assert "Exercise 3 (Where did the response die?): not checked yet" in out
    assert (lessons / learner.PROGRESS_FILE).read_text() == '{"01": {"3": "passed"}}'
    assert sorted(p.name for p in lessons.iterdir()) == [learner.PROGRESS_FILE]


def test_a_damaged_progress_file_is_ignored(tmp_path):
    folder = tmp_path / learner.FOLDER
    folder.mkdir()
    (folder / learner.PROGRESS_FILE).write_text("{not json")
    out = run_fresh("import lesson_lib; print(lesson_lib.exercises.progress('01'))", folder)
    assert out.count("not checked yet") == 3
